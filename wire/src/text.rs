//! Writing JSON text faster than serde_json's own string escaping, with the same bytes.
//!
//! serde_json escapes a string one byte at a time, and most of the bytes a migration writes are
//! in long strings (step outputs, stringified values). [`serialize`] runs a value through
//! serde_json's serializer as usual, except that a string value of 24 bytes or more is
//! escaped here, a 64-bit word at a time, and handed to the writer as one raw fragment. Map
//! keys, short strings, numbers and everything else go through serde_json unchanged, and so does
//! any value that serialises itself as raw JSON text (`RawValue`, an arbitrary-precision number).

use std::cell::RefCell;
use std::fmt::Display;

use serde::ser::{
    Serialize, SerializeMap, SerializeSeq, SerializeStruct, SerializeStructVariant, SerializeTuple,
    SerializeTupleStruct, SerializeTupleVariant, Serializer,
};

/// The struct name by which serde_json's serializer takes a value's text as raw JSON.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// The prefix of the struct names serde_json gives its own raw-text values (`RawValue`, and a
/// number with `arbitrary_precision`); their fields are passed on untouched.
const PRIVATE_PREFIX: &str = "$serde_json::private::";

/// Strings shorter than this go through serde_json's escaping: for them the raw fragment's
/// set-up costs more than it saves.
const SHORT: usize = 24;

/// Serialises `value` into `serializer` exactly as `value.serialize(serializer)` does, with
/// its long string values escaped by [`escape_into`].
pub fn serialize<W, F, T>(
    value: &T,
    serializer: &mut serde_json::Serializer<W, F>,
) -> Result<(), serde_json::Error>
where
    W: std::io::Write,
    F: serde_json::ser::Formatter,
    T: Serialize + ?Sized,
{
    value.serialize(Strings(serializer))
}

/// `serde_json::to_writer_pretty`, with long string values escaped by [`escape_into`].
pub fn to_writer_pretty<W: std::io::Write, T: Serialize + ?Sized>(
    writer: W,
    value: &T,
) -> Result<(), serde_json::Error> {
    serialize(value, &mut serde_json::Serializer::pretty(writer))
}

/// Appends `text` to `out` as a JSON string, quotes included, as serde_json writes it: `"` and
/// `\` escaped with a backslash, the control characters `\b \t \n \f \r` by name and the other
/// ones below U+0020 as `\u00xx`, everything else (DEL and non-ASCII included) as it is.
pub fn escape_into(out: &mut String, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push('"');
    let mut plain = 0;
    let mut base = 0;
    while base < bytes.len() {
        let word = if let Some(word) = bytes.get(base..base + 8) {
            word.try_into().expect("eight bytes")
        } else {
            // The last few bytes, padded with spaces, which need no escape.
            let mut tail = [b' '; 8];
            tail[..bytes.len() - base].copy_from_slice(&bytes[base..]);
            tail
        };
        let mut mask = escapes(u64::from_le_bytes(word));
        while mask != 0 {
            let at = base + (mask.trailing_zeros() / 8) as usize;
            mask &= mask - 1;
            out.push_str(&text[plain..at]);
            push_escape(out, bytes[at]);
            plain = at + 1;
        }
        base += 8;
    }
    out.push_str(&text[plain..]);
    out.push('"');
}

/// Appends the escape of `byte`, one of the bytes [`escapes`] finds.
fn push_escape(out: &mut String, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match byte {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x09 => b't',
        0x0a => b'n',
        0x0c => b'f',
        0x0d => b'r',
        _ => {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xf)]));
            return;
        }
    };
    out.push('\\');
    out.push(char::from(short));
}

/// The high bit of each byte of `word` that is below 0x20, a `"` or a `\`, and no other bit.
/// Exact per byte: no sum carries into the next byte.
fn escapes(word: u64) -> u64 {
    const LOWS: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    // The high bit of `x + 0x7f` in a byte whose high bit is clear: whether the byte is not 0.
    let nonzero = |x: u64| ((x & LOWS) + LOWS) | x;
    let at_least_space = ((word & LOWS) + ONES * (0x80 - 0x20)) | word;
    let quote = nonzero(word ^ (ONES * u64::from(b'"')));
    let backslash = nonzero(word ^ (ONES * u64::from(b'\\')));
    !(at_least_space & quote & backslash) & HIGHS
}

thread_local! {
    /// The escaped text of the string being written, kept between strings for its capacity.
    static ESCAPED: RefCell<String> = const { RefCell::new(String::new()) };
}

/// A serializer that escapes string values itself and passes everything else to `S`, wrapping
/// the values inside sequences, maps and structs so that theirs are escaped too.
struct Strings<S>(S);

/// A value serialised through [`Strings`].
struct Wrap<'a, T: ?Sized>(&'a T);

impl<T: Serialize + ?Sized> Serialize for Wrap<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(Strings(serializer))
    }
}

/// A compound of `S`, wrapping each value it is given; `raw` for serde_json's own raw-text
/// structs, whose fields must reach it as they are.
struct Compound<C> {
    inner: C,
    raw: bool,
}

impl<C> Compound<C> {
    fn new(inner: C) -> Self {
        Compound { inner, raw: false }
    }
}

macro_rules! forward {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $name(self $(, $arg: $ty)*) -> Result<S::Ok, S::Error> {
            self.0.$name($($arg),*)
        }
    )*};
}

impl<S: Serializer> Serializer for Strings<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Compound<S::SerializeSeq>;
    type SerializeTuple = Compound<S::SerializeTuple>;
    type SerializeTupleStruct = Compound<S::SerializeTupleStruct>;
    type SerializeTupleVariant = Compound<S::SerializeTupleVariant>;
    type SerializeMap = Compound<S::SerializeMap>;
    type SerializeStruct = Compound<S::SerializeStruct>;
    type SerializeStructVariant = Compound<S::SerializeStructVariant>;

    forward! {
        serialize_bool(v: bool);
        serialize_i8(v: i8);
        serialize_i16(v: i16);
        serialize_i32(v: i32);
        serialize_i64(v: i64);
        serialize_i128(v: i128);
        serialize_u8(v: u8);
        serialize_u16(v: u16);
        serialize_u32(v: u32);
        serialize_u64(v: u64);
        serialize_u128(v: u128);
        serialize_f32(v: f32);
        serialize_f64(v: f64);
        serialize_char(v: char);
        serialize_bytes(v: &[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(name: &'static str);
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str);
    }

    fn serialize_str(self, v: &str) -> Result<S::Ok, S::Error> {
        if v.len() < SHORT {
            return self.0.serialize_str(v);
        }
        ESCAPED.with(|escaped| {
            let mut escaped = escaped.borrow_mut();
            escaped.clear();
            escape_into(&mut escaped, v);
            let mut raw = self.0.serialize_struct(RAW_VALUE_TOKEN, 1)?;
            raw.serialize_field(RAW_VALUE_TOKEN, escaped.as_str())?;
            raw.end()
        })
    }

    fn collect_str<T: Display + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.0.collect_str(value)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.0.serialize_some(&Wrap(value))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_newtype_struct(name, &Wrap(value))
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0
            .serialize_newtype_variant(name, index, variant, &Wrap(value))
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        self.0.serialize_seq(len).map(Compound::new)
    }

    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, S::Error> {
        self.0.serialize_tuple(len).map(Compound::new)
    }

    fn serialize_tuple_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        self.0.serialize_tuple_struct(name, len).map(Compound::new)
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        self.0
            .serialize_tuple_variant(name, index, variant, len)
            .map(Compound::new)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        self.0.serialize_map(len).map(Compound::new)
    }

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        let raw = name.starts_with(PRIVATE_PREFIX);
        let inner = self.0.serialize_struct(name, len)?;
        Ok(Compound { inner, raw })
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        self.0
            .serialize_struct_variant(name, index, variant, len)
            .map(Compound::new)
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

macro_rules! element {
    ($($trait:ident::$method:ident;)*) => {$(
        impl<C: $trait> $trait for Compound<C> {
            type Ok = C::Ok;
            type Error = C::Error;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
                self.inner.$method(&Wrap(value))
            }

            fn end(self) -> Result<C::Ok, C::Error> {
                self.inner.end()
            }
        }
    )*};
}

element! {
    SerializeSeq::serialize_element;
    SerializeTuple::serialize_element;
    SerializeTupleStruct::serialize_field;
    SerializeTupleVariant::serialize_field;
}

impl<C: SerializeMap> SerializeMap for Compound<C> {
    type Ok = C::Ok;
    type Error = C::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), C::Error> {
        self.inner.serialize_key(key)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
        self.inner.serialize_value(&Wrap(value))
    }

    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<(), C::Error> {
        self.inner.serialize_entry(key, &Wrap(value))
    }

    fn end(self) -> Result<C::Ok, C::Error> {
        self.inner.end()
    }
}

macro_rules! fields {
    ($($trait:ident;)*) => {$(
        impl<C: $trait> $trait for Compound<C> {
            type Ok = C::Ok;
            type Error = C::Error;

            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), C::Error> {
                if self.raw {
                    self.inner.serialize_field(key, value)
                } else {
                    self.inner.serialize_field(key, &Wrap(value))
                }
            }

            fn skip_field(&mut self, key: &'static str) -> Result<(), C::Error> {
                self.inner.skip_field(key)
            }

            fn end(self) -> Result<C::Ok, C::Error> {
                self.inner.end()
            }
        }
    )*};
}

fields! {
    SerializeStruct;
    SerializeStructVariant;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_is_escaped_as_serde_json_escapes_it() {
        for byte in 0..=0x7fu8 {
            let text: String = std::iter::repeat_n(char::from(byte), 3)
                .chain("abcdefghijklmnopqrstuvwxyz".chars())
                .chain([char::from(byte)])
                .collect();
            let mut ours = String::new();
            escape_into(&mut ours, &text);
            assert_eq!(
                ours,
                serde_json::to_string(&text).unwrap(),
                "byte {byte:#x}"
            );
        }
    }

    #[test]
    fn a_words_escapes_are_exactly_its_bytes_that_need_one() {
        let needs = |b: u8| b < 0x20 || b == b'"' || b == b'\\';
        for byte in 0..=0xffu8 {
            for other in [0u8, b'"', b'a', 0x1f, 0x20, 0x80, 0xff] {
                for at in 0..8 {
                    let mut word = [other; 8];
                    word[at] = byte;
                    let expected = word
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| needs(**b))
                        .fold(0u64, |mask, (i, _)| mask | 0x80 << (8 * i));
                    assert_eq!(
                        escapes(u64::from_le_bytes(word)),
                        expected,
                        "{byte:#x} at {at} among {other:#x}"
                    );
                }
            }
        }
    }
}
