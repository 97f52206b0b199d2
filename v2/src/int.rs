//! Integer fields read the way JSON Schema counts integers.
//!
//! JSON Schema calls every number with a zero fractional part an integer (`3.0`, `1e2`), while
//! serde's `i64` accepts only integer literals. So that serde and the published schemas agree on
//! every document, each `i64` field is read through these functions: any JSON number whose exact
//! decimal value is a whole number within `i64` range is accepted; everything else is rejected.
//! Under `arbitrary_precision` the number text is exact, so the decision is made on that text.

use serde::de::{Deserializer, Error as _};
use serde::Deserialize;
use serde_json::Number;

/// Reads a required `i64` field.
pub(crate) fn exact<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    let number = Number::deserialize(deserializer)?;
    to_i64(&number).map_err(D::Error::custom)
}

/// Reads a required, nullable `i64` field (the key must be present; `null` means `None`).
pub(crate) fn nullable<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<i64>, D::Error> {
    Option::<Number>::deserialize(deserializer)?
        .map(|number| to_i64(&number).map_err(D::Error::custom))
        .transpose()
}

/// Reads a required list of `i64`.
pub(crate) fn list<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<i64>, D::Error> {
    Vec::<Number>::deserialize(deserializer)?
        .iter()
        .map(|number| to_i64(number).map_err(D::Error::custom))
        .collect()
}

/// Converts a JSON number to `i64` when its exact value is a whole number in range.
fn to_i64(number: &Number) -> Result<i64, String> {
    if let Some(value) = number.as_i64() {
        return Ok(value);
    }
    let text = number.to_string();
    whole_value(&text)
        .and_then(|value| i64::try_from(value).ok())
        .ok_or_else(|| format!("expected an integer in i64 range, found {text}"))
}

/// The exact value of a JSON number literal if it is a whole number that fits in `i128`.
fn whole_value(text: &str) -> Option<i128> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], parse_exponent(&unsigned[at + 1..])?),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: String = whole.chars().chain(fraction.chars()).collect();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let significant = digits.trim_start_matches('0');
    let trimmed = significant.trim_end_matches('0');
    if trimmed.is_empty() {
        return Some(0);
    }
    let scale = exponent - fraction.len() as i64 + (significant.len() - trimmed.len()) as i64;
    if scale < 0 || trimmed.len() as i64 + scale > 39 {
        return None;
    }
    let mut value: i128 = trimmed.parse().ok()?;
    for _ in 0..scale {
        value = value.checked_mul(10)?;
    }
    Some(if negative { -value } else { value })
}

/// Parses an exponent, clamping absurd magnitudes (they are out of range either way).
fn parse_exponent(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let magnitude = digits.trim_start_matches('0');
    let value = if magnitude.len() > 6 {
        1_000_000
    } else {
        magnitude.parse::<i64>().unwrap_or(0)
    };
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::whole_value;

    #[test]
    fn whole_numbers_in_any_notation_are_accepted() {
        for (text, expected) in [
            ("0", 0),
            ("-0", 0),
            ("-0.0", 0),
            ("3.0", 3),
            ("3.000", 3),
            ("1e2", 100),
            ("1E+2", 100),
            ("250e-1", 25),
            ("0.5e1", 5),
            ("-12.30e1", -123),
            ("0e999999999999", 0),
            ("9223372036854775807", i64::MAX as i128),
            ("-9223372036854775808", i64::MIN as i128),
        ] {
            assert_eq!(whole_value(text), Some(expected), "{text}");
        }
    }

    #[test]
    fn fractions_and_huge_values_are_rejected() {
        for text in [
            "1.5",
            "3.00000000000000000000001",
            "1e-1",
            "25e-2",
            "1e400",
            "1e-400",
            "1e999999999999",
            "1000000000000000000000000000000000000000",
        ] {
            assert_eq!(whole_value(text), None, "{text}");
        }
    }
}
