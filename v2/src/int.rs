//! Integer fields read the way JSON Schema counts integers.
//!
//! JSON Schema calls every number with a zero fractional part an integer (`3.0`, `1e2`), while
//! serde's `i64` accepts only integer literals. So that serde and the published schemas agree on
//! every document, each `i64` field is read through these functions: any JSON number whose exact
//! decimal value is a whole number within `i64` range is accepted; everything else is rejected.
//! Under `arbitrary_precision` the number text is exact, so the decision is made on that text,
//! by the reader the legacy crate uses too ([`planrun_wire::number::whole_value`]).

use planrun_wire::number::whole_value;
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
