//! The serde_json this project builds with finds the end of a plain run of a string's bytes its
//! own way (sixteen bytes at once; see vendor/README.md). Here it reads strings as a decoder
//! written plainly from RFC 8259 does: every escape, control character, quote and multi-byte
//! character placed at every offset of a sixteen-byte block, through each of the reader's paths
//! (text and bytes, a `String`, a skipped value, a raw value) and inside a larger document.

use proptest::prelude::*;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::Value;

/// JSON's whitespace.
const BLANKS: [char; 4] = [' ', '\n', '\t', '\r'];

/// The string a JSON text holding one string literal (and nothing but whitespace around it)
/// reads as, or `None` when it is not one: a byte-at-a-time decoder.
fn reference(text: &str) -> Option<String> {
    let text = text.trim_start_matches(BLANKS);
    let bytes = text.as_bytes();
    if bytes.first() != Some(&b'"') {
        return None;
    }
    let mut out = String::new();
    let mut at = 1;
    loop {
        match *bytes.get(at)? {
            b'"' => break,
            b'\\' => {
                let escaped = match *bytes.get(at + 1)? {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    b'u' => {
                        let code = u32::from_str_radix(text.get(at + 2..at + 6)?, 16).ok()?;
                        at += 4;
                        if (0xd800..0xdc00).contains(&code) {
                            let low = text.get(at + 2..at + 8)?.strip_prefix("\\u")?;
                            let low = u32::from_str_radix(low, 16).ok()?;
                            if !(0xdc00..0xe000).contains(&low) {
                                return None;
                            }
                            at += 6;
                            char::from_u32(0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00))?
                        } else {
                            char::from_u32(code)?
                        }
                    }
                    _ => return None,
                };
                out.push(escaped);
                at += 2;
            }
            0..=0x1f => return None,
            _ => {
                let c = text[at..].chars().next()?;
                out.push(c);
                at += c.len_utf8();
            }
        }
    }
    text[at + 1..]
        .trim_matches(BLANKS)
        .is_empty()
        .then_some(out)
}

/// Whether `text` has a `\u` escape of a UTF-16 surrogate (or what looks like one).
fn has_surrogate_escape(text: &str) -> bool {
    text.as_bytes().windows(4).any(|w| {
        w[0] == b'\\'
            && w[1] == b'u'
            && matches!(w[2], b'd' | b'D')
            && matches!(w[3], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
    })
}

/// A piece of a string literal's text: plain runs of every length up to two blocks, every
/// escape JSON has (surrogates only in pairs), multi-byte characters, and now and then a byte
/// that is not allowed there (a raw control character, an unknown or cut escape) or a quote that
/// ends the literal early.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "[a-zA-Z0-9 ,.:{}\\[\\]-]{0,40}",
        4 => prop::sample::select(vec![
            "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u00e9", "\\u0000",
            "\\u001F", "\\ud83d\\ude00", "\\uFFFF",
        ])
        .prop_map(str::to_owned),
        2 => prop::sample::select(vec!["é", "€", "😀", "\u{7f}", "\u{80}"]).prop_map(str::to_owned),
        1 => prop::sample::select(vec![
            "\u{0}", "\u{1f}", "\n", "\t", "\\x", "\\u12", "\\", "\"",
        ])
        .prop_map(str::to_owned),
    ]
}

/// Every reading of `text` agrees with [`reference`].
fn agrees(text: &str) {
    let expected = reference(text);
    let as_str = serde_json::from_str::<String>(text).ok();
    assert_eq!(as_str, expected, "from_str {text:?}");
    let as_bytes = serde_json::from_slice::<String>(text.as_bytes()).ok();
    assert_eq!(as_bytes, expected, "from_slice {text:?}");
    let as_value = serde_json::from_str::<Value>(text).ok();
    assert_eq!(
        as_value,
        expected.clone().map(Value::String),
        "Value {text:?}"
    );
    // A skipped string's `\u` escapes are not paired up (a `String` or `Value` pairs them), nor
    // are a raw value's.
    let skipped = serde_json::from_str::<IgnoredAny>(text).is_ok();
    let raw = serde_json::from_str::<Box<RawValue>>(text).ok();
    if expected.is_some() || !has_surrogate_escape(text) {
        assert_eq!(skipped, expected.is_some(), "IgnoredAny {text:?}");
        assert_eq!(
            raw.map(|raw| raw.get().to_owned()),
            expected
                .as_ref()
                .map(|_| text.trim_matches(BLANKS).to_owned()),
            "RawValue {text:?}"
        );
    }
    // Inside an object, after a key, so the literal starts anywhere in a block too.
    let nested = format!("{{\"k\": [{text}, 1]}}");
    let read = serde_json::from_str::<Value>(&nested).ok();
    let expected = expected.map(|s| serde_json::json!({"k": [s, 1]}));
    assert_eq!(read, expected, "nested {nested:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn strings_read_as_a_plain_decoder_reads_them(
        lead in 0usize..16,
        pieces in prop::collection::vec(piece(), 0..12),
    ) {
        // Led by blanks, so the literal starts anywhere in a block.
        agrees(&format!("{}\"{}\"", " ".repeat(lead), pieces.concat()));
    }
}

#[test]
fn each_special_byte_at_each_offset_of_two_blocks() {
    for special in [
        "\\\"", "\\\\", "\\n", "\\u0041", "\u{1}", "\u{1f}", "\"", "é", "\u{7f}",
    ] {
        for before in 0..40 {
            for after in [0, 1, 15, 16, 17, 33] {
                let text = format!("\"{}{special}{}\"", "a".repeat(before), "b".repeat(after));
                agrees(&text);
            }
        }
    }
}
