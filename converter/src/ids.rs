//! Deterministic ids for documents that lack one: the same input always gets the same id, so a
//! batch and a resumed batch write the same bytes.

/// `<prefix>-<uuid>` from a 128-bit FNV-1a hash of `content`, with the UUID version 8 and variant
/// bits set (RFC 9562 "custom").
pub(crate) fn stable_id(prefix: &str, content: &str) -> String {
    let mut hash: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    for byte in prefix.bytes().chain([0]).chain(content.bytes()) {
        hash ^= u128::from(byte);
        hash = hash.wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013b);
    }
    let uuid = (hash & !(0xf << 76) & !(0x3 << 62)) | (0x8 << 76) | (0x2 << 62);
    format!("{prefix}-{}", uuid::Uuid::from_u128(uuid).hyphenated())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_ids_are_canonical_and_deterministic() {
        let a = stable_id("prun", "x");
        assert_eq!(a, stable_id("prun", "x"));
        assert_ne!(a, stable_id("prun", "y"));
        assert_ne!(a, stable_id("clar", "x"));
        assert!(planrun_v2::is_canonical("prun", &a), "{a}");
        assert_eq!(&a[19..20], "8", "version 8: {a}");
    }
}
