//! The random source: a seeded SplitMix64 stream, with the draws the builders need (ranges,
//! weighted picks, version-4 UUIDs, hex), so that the same seed gives the same store on every
//! platform.

use std::str::FromStr;

use serde_json::{Number, Value};

/// SplitMix64: small, fast, and the same on every platform.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub(crate) fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    pub(crate) fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64) * (1.0 / (1u64 << 53) as f64) < p
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub(crate) fn word(&mut self, words: &[&'static str]) -> &'static str {
        words[self.below(words.len())]
    }

    pub(crate) fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut x = self.below(total as usize) as u32;
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    }

    /// A random (version 4) UUID as the SDK's `uuid4()` makes them.
    pub(crate) fn uuid(&mut self) -> u128 {
        let raw = (u128::from(self.next_u64()) << 64) | u128::from(self.next_u64());
        (raw & !(0xF << 76) & !(0x3 << 62)) | (0x4 << 76) | (0x2 << 62)
    }

    pub(crate) fn hex(&mut self, digits: usize) -> String {
        let mut s = String::with_capacity(digits);
        while s.len() < digits {
            let word = format!("{:016x}", self.next_u64());
            s.push_str(&word[..(digits - s.len()).min(16)]);
        }
        s
    }

    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// A pydantic/Python float as number text (`150.0`, `149.99`): Rust's `{:?}` and Python's
/// `repr` agree for the magnitudes generated here.
pub(crate) fn float(x: f64) -> Value {
    Value::Number(Number::from_str(&format!("{x:?}")).expect("finite floats are JSON numbers"))
}

pub(crate) fn money(rng: &mut Rng, lo: usize, hi: usize) -> Value {
    float(rng.between(lo * 100, hi * 100) as f64 / 100.0)
}

#[cfg(test)]
mod tests {
    use planrun_legacy::{Prefix, PrefixedId};

    use super::*;

    #[test]
    fn uuids_are_version_4_and_text_is_canonical() {
        let mut rng = Rng::new(7);
        for _ in 0..100 {
            let id = PrefixedId::new(Prefix::Prun, rng.uuid()).to_string();
            let uuid = id.strip_prefix("prun-").unwrap();
            assert_eq!(uuid.len(), 36);
            assert_eq!(&uuid[14..15], "4", "{id}");
            assert!("89ab".contains(&uuid[19..20]), "{id}");
            assert_eq!(uuid, uuid.to_lowercase());
        }
    }
}
