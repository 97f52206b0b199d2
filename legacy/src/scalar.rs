//! Scalars read with pydantic's lax rules, so whatever the SDK itself loads is loaded here too;
//! the difference to what is written back shows up in the parse's normalisation list.
//!
//! pydantic's lax rules, narrowed where a JSON Schema could not say the same (so that the schemas accept exactly what the reader does): every form
//! read here is described exactly by [`LaxInt`] and [`LaxBool`], the schemas of these fields.
//!
//! * An integer is a JSON number whose exact value is a whole number within ±(2^53 − 1) (`1`,
//!   `1.0`, `1e2`; the range every JSON implementation reads exactly, RFC 7493), a string of an
//!   optional sign, at most 15 significant digits and an optional fraction of zeros (`"7"`,
//!   `"-007"`, `"1.0"`; no whitespace, underscores or exponent), or a boolean.
//! * A boolean is `true`/`false`, a number whose value is 0 or 1, or one of pydantic's strings
//!   `0 off f false n no 1 on t true y yes` in any ASCII case.

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer};
use serde::Deserialize;
use serde_json::Value;

use planrun_wire::number::whole_value;

use crate::json::{excerpt, to_python_json};

/// The largest magnitude of a lax integer: 2^53 − 1, the interoperable JSON integer range.
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// Schema pattern of an integer written as a string (at most 15 significant digits, so every
/// match is within [`MAX_SAFE_INTEGER`]).
pub const INT_STRING_PATTERN: &str = r"^[+-]?0*[0-9]{1,15}(?:\.0+)?$";

/// Schema pattern of a boolean written as a string: pydantic's words, in any ASCII case.
pub const BOOL_STRING_PATTERN: &str = "^(?:0|1|[fF]|[tT]|[nN]|[yY]|[nN][oO]|[oO][nN]|[oO][fF][fF]|[yY][eE][sS]|[tT][rR][uU][eE]|[fF][aA][lL][sS][eE])$";

/// pydantic's lax `int` (narrowed, see the module docs): an integral number, a numeric string or
/// a bool.
pub(crate) fn lax_int<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    int_from_value(&Value::deserialize(deserializer)?).map_err(de::Error::custom)
}

/// [`lax_int`] for a nullable field.
pub(crate) fn lax_opt_int<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<i64>, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::Null => Ok(None),
        other => int_from_value(&other).map(Some).map_err(de::Error::custom),
    }
}

/// pydantic's lax `bool`: a bool, a number equal to 0 or 1, or one of the strings pydantic
/// accepts (`"yes"`, `"off"`…).
pub(crate) fn lax_bool<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    bool_from_value(&Value::deserialize(deserializer)?).map_err(de::Error::custom)
}

/// [`lax_bool`] for a field whose key may be absent but, when present, holds a boolean.
pub(crate) fn lax_present_bool<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<bool>, D::Error> {
    lax_bool(deserializer).map(Some)
}

/// [`lax_int`] for a field whose key may be absent but, when present, holds an integer.
pub(crate) fn lax_present_int<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<i64>, D::Error> {
    lax_int(deserializer).map(Some)
}

/// A boolean read with [`lax_bool`], for maps and sequences of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub(crate) struct LaxBoolValue(#[serde(deserialize_with = "lax_bool")] pub bool);

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn int_from_value(value: &Value) -> Result<i64, String> {
    let out_of_range = |shown: String| {
        format!("expected an integer (a whole number within ±{MAX_SAFE_INTEGER}), got {shown}")
    };
    match value {
        Value::Bool(b) => Ok(i64::from(*b)),
        Value::Number(n) => {
            let text = n.to_string();
            whole_value(&text)
                .filter(|v| v.unsigned_abs() <= MAX_SAFE_INTEGER as u128)
                .map(|v| v as i64)
                .ok_or_else(|| out_of_range(shorten_number(&text)))
        }
        Value::String(s) => int_from_text(s).ok_or_else(|| {
            format!(
                "expected an integer; a string must be an optional sign, at most 15 significant digits and an optional fraction of zeros, got {}",
                excerpt(s)
            )
        }),
        other => Err(format!("expected an integer, got {}", type_name(other))),
    }
}

/// A number's text, shortened to 40 characters for messages.
fn shorten_number(text: &str) -> String {
    if text.len() <= 40 {
        text.to_owned()
    } else {
        format!("{}… ({} digits)", &text[..40], text.len())
    }
}

/// The value of an integer written as a string, by [`INT_STRING_PATTERN`].
fn int_from_text(text: &str) -> Option<i64> {
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (whole, fraction) = match unsigned.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (unsigned, None),
    };
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if fraction.is_some_and(|f| f.is_empty() || !f.bytes().all(|b| b == b'0')) {
        return None;
    }
    let significant = whole.trim_start_matches('0');
    if significant.len() > 15 {
        return None;
    }
    let value: i64 = if significant.is_empty() {
        0
    } else {
        significant.parse().ok()?
    };
    Some(if negative { -value } else { value })
}

pub(crate) fn bool_from_value(value: &Value) -> Result<bool, String> {
    match value {
        Value::Bool(b) => Ok(*b),
        Value::Number(n) => match whole_value(&n.to_string()) {
            Some(0) => Ok(false),
            Some(1) => Ok(true),
            _ => Err(format!("expected a boolean, got the number {n}")),
        },
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "0" | "off" | "f" | "false" | "n" | "no" => Ok(false),
            "1" | "on" | "t" | "true" | "y" | "yes" => Ok(true),
            _ => Err(format!("expected a boolean, got {}", excerpt(s))),
        },
        other => Err(format!("expected a boolean, got {}", type_name(other))),
    }
}

/// The schema of every lax integer field (`current_step_index`, `step`, `step_num`, …): the
/// spellings listed in its description, exactly those the reader accepts.
pub struct LaxInt;

impl JsonSchema for LaxInt {
    fn schema_name() -> Cow<'static, str> {
        "LaxInt".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "An integer, read as pydantic's lax mode reads one: a whole number within ±(2^53 − 1) in any JSON spelling (`1`, `1.0`, `1e2`), a string of an optional sign, at most 15 significant digits and an optional fraction of zeros (`\"1\"`, `\"1.0\"`), or a boolean (`true` is 1). Written back as a plain integer.",
            "anyOf": [
                {
                    "type": "integer",
                    "minimum": -MAX_SAFE_INTEGER,
                    "maximum": MAX_SAFE_INTEGER
                },
                {
                    "type": "string",
                    "pattern": INT_STRING_PATTERN
                },
                {
                    "type": "boolean"
                }
            ]
        })
    }
}

/// The schema of every lax boolean field (`resolved`, the config's flags): the spellings listed
/// in its description, exactly those the reader accepts.
pub struct LaxBool;

impl JsonSchema for LaxBool {
    fn schema_name() -> Cow<'static, str> {
        "LaxBool".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A boolean, read as pydantic's lax mode reads one: `true`/`false`, a number equal to 0 or 1, or one of the strings `0 off f false n no` / `1 on t true y yes` in any ASCII case. Written back as `true` or `false`.",
            "anyOf": [
                {
                    "type": "boolean"
                },
                {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 1
                },
                {
                    "type": "string",
                    "pattern": BOOL_STRING_PATTERN
                }
            ]
        })
    }
}

/// The SDK's output `value` serializer: every value becomes a string (`None` → `""`, numbers and
/// bools as `json.dumps` writes them, lists and dicts as Python JSON text).
pub(crate) fn stringified_value<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<String, D::Error> {
    Ok(stringify(Value::deserialize(deserializer)?))
}

/// Turns any JSON value into the string the SDK would have stored for it.
pub fn stringify(value: Value) -> String {
    match value {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => to_python_json(&other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Probe {
        #[serde(deserialize_with = "lax_int")]
        i: i64,
        #[serde(deserialize_with = "lax_bool")]
        b: bool,
        #[serde(deserialize_with = "stringified_value")]
        v: String,
    }

    fn probe(text: &str) -> Result<Probe, String> {
        let tree = crate::json::parse_value(text.as_bytes()).map_err(|e| e.to_string())?;
        serde_json::from_value::<Probe>(tree).map_err(|e| e.to_string())
    }

    #[test]
    fn lax_scalars_follow_pydantic() {
        for (text, i, b, v) in [
            (r#"{"i": 1, "b": true, "v": "x"}"#, 1, true, "x"),
            (r#"{"i": 1.0, "b": "yes", "v": null}"#, 1, true, ""),
            (r#"{"i": "7", "b": 0, "v": 42}"#, 7, false, "42"),
            (
                r#"{"i": true, "b": "OFF", "v": [1, {"k": 2.50}]}"#,
                1,
                false,
                "[1, {\"k\": 2.50}]",
            ),
            (r#"{"i": 1e2, "b": 1.0, "v": ""}"#, 100, true, ""),
            (r#"{"i": "-007.00", "b": "T", "v": ""}"#, -7, true, ""),
            (r#"{"i": 250e-1, "b": -0.0, "v": ""}"#, 25, false, ""),
            (
                r#"{"i": 9007199254740991, "b": 0, "v": ""}"#,
                MAX_SAFE_INTEGER,
                false,
                "",
            ),
            (
                r#"{"i": "+999999999999999", "b": 0, "v": ""}"#,
                999_999_999_999_999,
                false,
                "",
            ),
        ] {
            let p = probe(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!((p.i, p.b, p.v.as_str()), (i, b, v), "{text}");
        }
        for bad in [
            r#"{"i": 1.5, "b": true, "v": ""}"#,
            r#"{"i": 99999999999999999999, "b": true, "v": ""}"#,
            r#"{"i": 9007199254740992, "b": true, "v": ""}"#,
            r#"{"i": 1, "b": "maybe", "v": ""}"#,
            r#"{"i": 1, "b": 2, "v": ""}"#,
            r#"{"i": 1, "b": 1.00000000000000000001, "v": ""}"#,
            r#"{"i": null, "b": true, "v": ""}"#,
            r#"{"i": {"x": "3"}, "b": true, "v": ""}"#,
            r#"{"i": 1, "b": {"x": "1"}, "v": ""}"#,
        ] {
            assert!(probe(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn integer_strings_are_the_documented_set() {
        for (text, value) in [
            ("0", 0),
            ("-0", 0),
            ("+12", 12),
            ("000000000000000000000042", 42),
            ("999999999999999", 999_999_999_999_999),
            ("3.0", 3),
            ("3.000", 3),
        ] {
            assert_eq!(int_from_text(text), Some(value), "{text}");
        }
        for text in [
            "",
            "-",
            "+",
            " 1",
            "1 ",
            "1_000",
            "1e3",
            "1.",
            ".0",
            "1.5",
            "1.0.0",
            "0x10",
            "1000000000000000",
            "١",
            "--1",
        ] {
            assert_eq!(int_from_text(text), None, "{text:?}");
        }
    }
}
