//! `text::serialize` against serde_json's own writer, byte for byte: on any JSON value (strings
//! of any characters and lengths, numbers kept as arbitrary-precision text, nested arrays and
//! objects), compact and pretty, and on typed values that use every kind of serde shape
//! (options, newtype, tuple and struct variants, raw JSON text, `Display` strings).

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use planrun_wire::text;

fn compact<T: Serialize>(value: &T) -> Vec<u8> {
    let mut out = Vec::new();
    text::serialize(value, &mut serde_json::Serializer::new(&mut out)).unwrap();
    out
}

fn pretty<T: Serialize>(value: &T) -> Vec<u8> {
    let mut out = Vec::new();
    text::to_writer_pretty(&mut out, value).unwrap();
    out
}

fn same_bytes<T: Serialize>(value: &T) {
    assert_eq!(
        String::from_utf8(compact(value)).unwrap(),
        serde_json::to_string(value).unwrap()
    );
    assert_eq!(
        String::from_utf8(pretty(value)).unwrap(),
        serde_json::to_string_pretty(value).unwrap()
    );
}

/// Strings mixing plain runs, every character that needs escaping, DEL and non-ASCII.
fn any_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z ]{0,40}",
        (0u8..0x20).prop_map(|b| char::from(b).to_string()),
        Just("\"".to_owned()),
        Just("\\".to_owned()),
        Just("\u{7f}".to_owned()),
        "[é日本語🦀]{1,3}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "-?(0|[1-9][0-9]{0,39})(\\.[0-9]{1,20})?(e[+-]?[0-9]{1,3})?"
            .prop_map(|n| serde_json::from_str::<Value>(&n).unwrap()),
        any_text().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((any_text(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

#[derive(Serialize)]
enum Shape {
    Unit,
    Newtype(String),
    Tuple(String, i32),
    Struct {
        text: String,
        inner: Option<Box<Shape>>,
    },
}

#[derive(Serialize)]
struct Typed {
    text: String,
    maybe: Option<String>,
    shapes: Vec<Shape>,
    map: BTreeMap<String, String>,
    tuple: (String, u8),
    raw: Box<RawValue>,
    shown: Shown,
    bytes: Vec<u8>,
    character: char,
}

/// A value written through `collect_str`.
struct Shown(String);

impl Serialize for Shown {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_json_value_is_written_as_serde_json_writes_it(value in any_value()) {
        same_bytes(&value);
    }

    #[test]
    fn any_string_is_escaped_as_serde_json_escapes_it(text in any_text()) {
        let mut ours = String::new();
        text::escape_into(&mut ours, &text);
        prop_assert_eq!(ours, serde_json::to_string(&text).unwrap());
    }

    #[test]
    fn typed_values_of_every_shape_are_written_as_serde_json_writes_them(
        texts in prop::collection::vec(any_text(), 8),
        raw in any_value(),
        number in any::<i32>(),
        character in any::<char>(),
    ) {
        let typed = Typed {
            text: texts[0].clone(),
            maybe: Some(texts[1].clone()),
            shapes: vec![
                Shape::Unit,
                Shape::Newtype(texts[2].clone()),
                Shape::Tuple(texts[3].clone(), number),
                Shape::Struct {
                    text: texts[4].clone(),
                    inner: Some(Box::new(Shape::Newtype(texts[5].clone()))),
                },
            ],
            map: BTreeMap::from([(texts[6].clone(), texts[7].clone())]),
            tuple: (texts[0].clone(), 7),
            raw: serde_json::value::to_raw_value(&raw).unwrap(),
            shown: Shown(texts[1].clone()),
            bytes: texts[2].as_bytes().to_vec(),
            character,
        };
        same_bytes(&typed);
    }
}
