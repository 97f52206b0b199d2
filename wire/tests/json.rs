//! `json::Format` against serde_json's own formatters, byte for byte, in each layout (pretty with
//! two and four spaces, and one line with Python's separators): on any JSON value (strings of
//! any characters and lengths, numbers kept as arbitrary-precision text, nested arrays and
//! objects) and on typed values that use every kind of serde shape (options, newtype, tuple and
//! struct variants, raw JSON text, `Display` strings, integer map keys); `json::matches` accepts
//! exactly those bytes. And the vendored serde_json's escaping (sixteen bytes at a time, see
//! vendor/README.md) against an escaper written one character at a time from RFC 8259.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use planrun_wire::json::{self, Layout, Numbers};

/// A JSON string as serde_json writes it, escaped one character at a time (RFC 8259, section
/// 7): `"` and `\` with a backslash, the control characters `\b \t \n \f \r` by name and the
/// other ones below U+0020 as `\u00xx`, everything else (DEL and non-ASCII included) as it is.
fn reference_escape(text: &str) -> String {
    let mut out = String::from('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Holds serde_json's escape of `text` to the reference's; `case` names it in a failure.
fn escapes_as_reference(text: &str, case: &str) {
    assert_eq!(
        serde_json::to_string(text).unwrap(),
        reference_escape(text),
        "{case}"
    );
}

/// serde_json's text of `value` with `formatter`.
fn serde_json_text<T: Serialize, F: serde_json::ser::Formatter>(value: &T, formatter: F) -> String {
    let mut out = Vec::new();
    value
        .serialize(&mut serde_json::Serializer::with_formatter(
            &mut out, formatter,
        ))
        .unwrap();
    String::from_utf8(out).unwrap()
}

/// The separators of Python's `json.dumps`: `, ` and `: `.
struct PythonFormatter;

/// `, ` before every element but the first.
fn python_separator<W: ?Sized + std::io::Write>(
    writer: &mut W,
    first: bool,
) -> std::io::Result<()> {
    if first {
        Ok(())
    } else {
        writer.write_all(b", ")
    }
}

impl serde_json::ser::Formatter for PythonFormatter {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        python_separator(writer, first)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        python_separator(writer, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

fn same_bytes<T: Serialize>(value: &T) {
    let pretty = serde_json::to_string_pretty(value).unwrap();
    same_layout(value, Layout::Pretty(b"  "), &pretty);
    let mut out = Vec::new();
    json::to_vec_pretty(&mut out, value).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), pretty);
    let wide = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    same_layout(
        value,
        Layout::Pretty(b"    "),
        &serde_json_text(value, wide),
    );
    same_layout(
        value,
        Layout::Python,
        &serde_json_text(value, PythonFormatter),
    );
}

/// `Format` with `layout` writes `expected`, and `matches` accepts exactly that.
fn same_layout<T: Serialize>(value: &T, layout: Layout, expected: &str) {
    let mut ours = Vec::new();
    json::append(&mut ours, value, layout, Numbers::AsKept).unwrap();
    assert_eq!(String::from_utf8(ours).unwrap(), expected, "{layout:?}");
    assert!(json::matches(
        expected.as_bytes(),
        value,
        layout,
        Numbers::AsKept
    ));
    let mut longer = expected.as_bytes().to_vec();
    longer.push(b' ');
    assert!(
        !json::matches(&longer, value, layout, Numbers::AsKept),
        "a byte left over is seen"
    );
    for at in [0, expected.len() / 2, expected.len() - 1] {
        let mut changed = expected.as_bytes().to_vec();
        changed[at] ^= 0x01;
        assert!(
            !json::matches(&changed, value, layout, Numbers::AsKept),
            "byte {at} changed is seen"
        );
    }
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
    float: f64,
    single: f32,
    wide: u128,
    negative: i128,
    unit: (),
    nothing: Option<u8>,
    empty: Vec<String>,
    empty_map: BTreeMap<u32, String>,
    numbered: BTreeMap<u32, String>,
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
    fn any_string_is_escaped_as_the_reference_escapes_it(text in any_text()) {
        prop_assert_eq!(serde_json::to_string(&text).unwrap(), reference_escape(&text));
    }

    #[test]
    fn typed_values_of_every_shape_are_written_as_serde_json_writes_them(
        texts in prop::collection::vec(any_text(), 8),
        raw in any_value(),
        number in any::<i32>(),
        character in any::<char>(),
        float in any::<f64>(),
        single in any::<f32>(),
        wide in any::<u128>(),
        negative in any::<i128>(),
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
            float,
            single,
            wide,
            negative,
            unit: (),
            nothing: None,
            empty: Vec::new(),
            empty_map: BTreeMap::new(),
            numbered: BTreeMap::from([(7, texts[3].clone()), (11, texts[4].clone())]),
        };
        same_bytes(&typed);
    }
}

#[test]
fn every_byte_is_escaped_as_the_reference_escapes_it() {
    for byte in 0..=0x7fu8 {
        let text: String = std::iter::repeat_n(char::from(byte), 3)
            .chain("abcdefghijklmnopqrstuvwxyz".chars())
            .chain([char::from(byte)])
            .collect();
        escapes_as_reference(&text, &format!("byte {byte:#x}"));
    }
}

#[test]
fn runs_of_every_length_between_escapes_are_escaped_as_the_reference_escapes_them() {
    // Runs shorter than, as long as and longer than sixteen bytes, ending anywhere near the end.
    for gap in 0..=33 {
        for len in 0..=48 {
            let text: String = (0..len)
                .map(|i| if i % (gap + 1) == gap { '"' } else { 'x' })
                .collect();
            escapes_as_reference(&text, &format!("gap {gap}, length {len}"));
        }
    }
}

#[test]
fn deep_nesting_is_indented_as_serde_json_indents_it() {
    let mut value = serde_json::json!({"leaf": [1, {}, []]});
    for depth in 0..80 {
        value = if depth % 2 == 0 {
            serde_json::json!([value, "x"])
        } else {
            serde_json::json!({"k": value})
        };
    }
    same_bytes(&value);
}

#[test]
fn the_sdk_number_style_drops_only_a_positive_exponent_plus() {
    let value: Value = serde_json::from_str("[1e+16, 2.5E+3, 1e-7, 12, -0.5e+2]").unwrap();
    let mut out = Vec::new();
    json::append(
        &mut out,
        &value,
        Layout::Pretty(b"    "),
        Numbers::NoExponentPlus,
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "[\n    1e16,\n    2.5e3,\n    1e-7,\n    12,\n    -0.5e2\n]"
    );
    let mut out = Vec::new();
    json::to_vec_pretty(&mut out, &value).unwrap();
    assert_eq!(out, serde_json::to_vec_pretty(&value).unwrap());
}

/// A map with keys of every kind serde_json writes as strings.
struct AnyKeys(f64, f32, bool, char, i64);

impl Serialize for AnyKeys {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry(&self.0, "float")?;
        map.serialize_entry(&self.1, "single")?;
        map.serialize_entry(&self.2, "bool")?;
        map.serialize_entry(&self.3, "char")?;
        map.serialize_entry(&self.4, "integer")?;
        map.end()
    }
}

proptest! {
    #[test]
    fn keys_of_every_kind_are_written_as_serde_json_writes_them(
        float in any::<f64>().prop_filter("finite", |f| f.is_finite()),
        single in any::<f32>().prop_filter("finite", |f| f.is_finite()),
        flag in any::<bool>(),
        character in any::<char>(),
        integer in any::<i64>(),
    ) {
        same_bytes(&AnyKeys(float, single, flag, character, integer));
    }
}

#[test]
fn a_key_serde_json_refuses_is_refused() {
    let mut out = Vec::new();
    let written = json::append(
        &mut out,
        &AnyKeys(f64::NAN, 0.5, true, 'a', 1),
        Layout::Pretty(b"  "),
        Numbers::AsKept,
    );
    assert!(written.is_err());
    assert!(serde_json::to_string(&AnyKeys(f64::NAN, 0.5, true, 'a', 1)).is_err());
    let single_nan = AnyKeys(0.5, f32::NAN, true, 'a', 1);
    assert!(json::to_vec_pretty(&mut Vec::new(), &single_nan).is_err());
    assert!(serde_json::to_string(&single_nan).is_err());
    let unit_key: BTreeMap<(), u8> = BTreeMap::from([((), 1)]);
    assert!(json::to_vec_pretty(&mut Vec::new(), &unit_key).is_err());
    assert!(serde_json::to_string(&unit_key).is_err());
}
