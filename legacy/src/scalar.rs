//! Scalars read with pydantic's lax rules, so whatever the SDK itself loads is loaded here too;
//! the difference to what is written back shows up in the parse's normalisation list.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use crate::error::excerpt;
use crate::json::to_python_json;

/// pydantic's lax `int`: an integer, an integral float (`1.0`), a numeric string (`"1"`) or a bool.
pub fn lax_int<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    deserializer.deserialize_any(LaxInt)
}

/// [`lax_int`] for a nullable field.
pub fn lax_opt_int<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::Null => Ok(None),
        other => lax_int(other).map(Some).map_err(de::Error::custom),
    }
}

/// pydantic's lax `bool`: a bool, `0`/`1`, or one of the strings pydantic accepts (`"yes"`, `"off"`…).
pub fn lax_bool<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    deserializer.deserialize_any(LaxBool)
}

struct LaxInt;

fn int_from_text<E: de::Error>(text: &str) -> Result<i64, E> {
    let trimmed = text.trim();
    if let Ok(i) = trimmed.parse::<i64>() {
        return Ok(i);
    }
    match trimmed.parse::<f64>() {
        Ok(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(f as i64),
        _ => Err(E::custom(format!(
            "expected an integer (within 64 bits), got {}",
            excerpt(text)
        ))),
    }
}

impl<'de> Visitor<'de> for LaxInt {
    type Value = i64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an integer")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
        Ok(v)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
        i64::try_from(v).map_err(|_| E::custom(format!("integer {v} does not fit in 64 bits")))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<i64, E> {
        int_from_text(&v.to_string())
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<i64, E> {
        Ok(i64::from(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<i64, E> {
        int_from_text(v)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<i64, A::Error> {
        // serde_json's arbitrary_precision hands numbers over as a one-entry map.
        match map.next_key::<String>()? {
            Some(_) => {
                let text: String = map.next_value()?;
                int_from_text(&text)
            }
            None => Err(de::Error::invalid_type(de::Unexpected::Map, &self)),
        }
    }
}

struct LaxBool;

impl<'de> Visitor<'de> for LaxBool {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a boolean")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<bool, E> {
        Ok(v)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<bool, E> {
        match v {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(E::custom(format!("expected a boolean, got {v}"))),
        }
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<bool, E> {
        self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<bool, E> {
        match v {
            0.0 => Ok(false),
            1.0 => Ok(true),
            _ => Err(E::custom(format!("expected a boolean, got {v}"))),
        }
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        match v.to_ascii_lowercase().as_str() {
            "0" | "off" | "f" | "false" | "n" | "no" => Ok(false),
            "1" | "on" | "t" | "true" | "y" | "yes" => Ok(true),
            _ => Err(E::custom(format!("expected a boolean, got {}", excerpt(v)))),
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        match map.next_key::<String>()? {
            Some(_) => {
                let text: String = map.next_value()?;
                match text.as_str() {
                    "0" | "0.0" => Ok(false),
                    "1" | "1.0" => Ok(true),
                    _ => Err(de::Error::custom(format!("expected a boolean, got {text}"))),
                }
            }
            None => Err(de::Error::invalid_type(de::Unexpected::Map, &self)),
        }
    }
}

/// The SDK's output `value` serializer: every value becomes a string (`None` → `""`, numbers and
/// bools as `json.dumps` writes them, lists and dicts as Python JSON text).
pub fn stringified_value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
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
        ] {
            let p = probe(text).unwrap();
            assert_eq!((p.i, p.b, p.v.as_str()), (i, b, v), "{text}");
        }
        assert!(probe(r#"{"i": 1.5, "b": true, "v": ""}"#).is_err());
        assert!(probe(r#"{"i": 99999999999999999999, "b": true, "v": ""}"#).is_err());
        assert!(probe(r#"{"i": 1, "b": "maybe", "v": ""}"#).is_err());
    }
}
