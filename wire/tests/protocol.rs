//! The protocol names learnt from serde_json are the ones its readers use: a number beyond 128
//! bits reaches a generic visitor as a one-entry map under `number_key()`, and a request for the
//! newtype `raw_value_name()` is answered with the value's text under that key.

use serde::de::{Deserializer, MapAccess, Visitor};
use std::fmt;

use planrun_wire::protocol::{number_key, raw_value_name};

/// The first key and its value's text, from whatever map the reader visits.
struct FirstEntry;

impl<'de> Visitor<'de> for FirstEntry {
    type Value = (String, String);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let key: String = map.next_key()?.expect("one entry");
        Ok((key, map.next_value()?))
    }
}

#[test]
fn an_exact_number_is_visited_under_the_number_key() {
    let digits = "123456789012345678901234567890123456789012";
    let mut reader = serde_json::Deserializer::from_str(digits);
    let (key, text) = reader.deserialize_any(FirstEntry).unwrap();
    assert_eq!((key.as_str(), text.as_str()), (number_key(), digits));
}

#[test]
fn raw_text_is_handed_out_under_the_raw_value_name() {
    let json = r#"{ "a" : [1, 2.50] }"#;
    let mut reader = serde_json::Deserializer::from_str(json);
    let (key, text) = reader
        .deserialize_newtype_struct(raw_value_name(), FirstEntry)
        .unwrap();
    assert_eq!((key.as_str(), text.as_str()), (raw_value_name(), json));
}
