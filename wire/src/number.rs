//! Exact whole values of JSON number literals.
//!
//! JSON Schema calls every number with a zero fractional part an integer (`3.0`, `1e2`), and
//! pydantic reads such numbers as integers too, while serde's integer types accept only integer
//! literals. Under serde_json's `arbitrary_precision` the number text is exact, so both crates
//! decide on that text, with [`whole_value`], instead of going through a lossy `f64`.

/// The exact value of a JSON number literal if it is a whole number that fits in `i128`
/// (`3.0`, `1e2`, `250e-1` are whole; `1.5`, `1e-1` are not); callers narrow it to their range.
pub fn whole_value(text: &str) -> Option<i128> {
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
    // `i128::MIN` has 39 digits, so a longer value cannot fit; a 39-digit one is checked below.
    if scale < 0 || trimmed.len() as i64 + scale > 39 {
        return None;
    }
    let mut magnitude: u128 = trimmed.parse().ok()?;
    for _ in 0..scale {
        magnitude = magnitude.checked_mul(10)?;
    }
    if negative {
        // Wraps only for 2^127 itself, whose negation is `i128::MIN`.
        (magnitude <= i128::MIN.unsigned_abs()).then(|| (magnitude as i128).wrapping_neg())
    } else {
        i128::try_from(magnitude).ok()
    }
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
            ("9223372036854775807", i128::from(i64::MAX)),
            ("-9223372036854775808", i128::from(i64::MIN)),
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
            "-",
            "",
            "1e",
            ".",
        ] {
            assert_eq!(whole_value(text), None, "{text}");
        }
    }

    /// The bound is `i128` itself: 39-digit values up to `i128::MAX` (and down to `i128::MIN`)
    /// are whole values; the legacy copy of this reader stopped at 38 digits and refused them.
    #[test]
    fn the_edge_is_the_range_of_i128() {
        let ten_to_38 = 10_i128.pow(38);
        for (text, expected) in [
            ("1e38", Some(ten_to_38)),
            ("-1e38", Some(-ten_to_38)),
            (
                "99999999999999999999999999999999999999",
                Some(ten_to_38 - 1),
            ),
            ("170141183460469231731687303715884105727", Some(i128::MAX)),
            (
                "1.70141183460469231731687303715884105727e38",
                Some(i128::MAX),
            ),
            ("-170141183460469231731687303715884105728", Some(i128::MIN)),
            (
                "-1701411834604692317316873037158841057280e-1",
                Some(i128::MIN),
            ),
            ("170141183460469231731687303715884105728", None),
            ("-170141183460469231731687303715884105729", None),
            ("1e39", None),
            ("-1e39", None),
            ("340282366920938463463374607431768211456", None),
        ] {
            assert_eq!(whole_value(text), expected, "{text}");
        }
    }
}
