//! JSON text in serde_json's pretty layout (or on one line with Python's `json.dumps`
//! separators), written straight into a buffer or compared with expected bytes, by a serializer
//! of its own.
//!
//! serde_json's serializer goes through a formatter and an `io::Write` call for every bracket,
//! comma, indentation level and key, and escapes keys and short strings one byte at a time;
//! much of what a migration writes and compares is such small pieces. [`Writer`] writes the
//! same bytes (tests hold it to serde_json's, on any JSON value and every serde shape) with one
//! append per piece, short strings checked byte by byte and long ones escaped sixteen bytes at
//! a time ([`escape_into`](crate::text::escape_into)). serde_json's own raw-text values
//! (`RawValue`, numbers with `arbitrary_precision`) are written as serde_json writes them.

use std::cell::RefCell;
use std::fmt::Display;

use serde::ser::{self, Serialize};
use serde_json::ser::{CompactFormatter, Formatter};
use serde_json::Error;

use crate::text::escape_into;

/// The struct name by which serde_json's serializers take a value's text as raw JSON.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";
/// The struct name by which an arbitrary-precision `Number` hands over its digits.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// Where [`Writer`] writes: a buffer, or a [`Compare`] with the bytes expected.
pub trait Out {
    /// Appends `bytes`, or fails if they are not what is expected next.
    fn put(&mut self, bytes: &[u8]) -> Result<(), Error>;
    /// Appends `before`, a line break and `width` spaces.
    fn put_line(&mut self, before: &[u8], width: usize) -> Result<(), Error>;
    /// Appends `text` as a JSON string, quotes included.
    fn put_escaped(&mut self, text: &str) -> Result<(), Error>;
    /// Appends `key` as a JSON string, then `colon`.
    #[inline]
    fn put_key(&mut self, key: &str, colon: &[u8]) -> Result<(), Error> {
        self.put_escaped(key)?;
        self.put(colon)
    }
}

/// Strings up to this long are checked for characters to escape one byte at a time, which
/// for them costs less than the word-at-a-time escaper's set-up.
const SHORT: usize = 32;

/// Whether `text` is short and has nothing to escape, so that it is written as it is.
#[inline]
fn plain(text: &str) -> bool {
    text.len() <= SHORT && text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\')
}

impl Out for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.extend_from_slice(bytes);
        Ok(())
    }

    #[inline]
    fn put_line(&mut self, before: &[u8], width: usize) -> Result<(), Error> {
        /// A line break and the most indentation copied in one piece.
        const BREAK: [u8; 129] = {
            let mut line = [b' '; 129];
            line[0] = b'\n';
            line
        };
        self.extend_from_slice(before);
        let first = width.min(BREAK.len() - 1);
        self.extend_from_slice(&BREAK[..=first]);
        let mut rest = width - first;
        while rest > 0 {
            let piece = rest.min(BREAK.len() - 1);
            self.extend_from_slice(&BREAK[1..=piece]);
            rest -= piece;
        }
        Ok(())
    }

    #[inline]
    fn put_escaped(&mut self, text: &str) -> Result<(), Error> {
        if plain(text) {
            self.reserve(text.len() + 2);
            self.push(b'"');
            self.extend_from_slice(text.as_bytes());
            self.push(b'"');
        } else {
            escape_into(self, text);
        }
        Ok(())
    }

    #[inline]
    fn put_key(&mut self, key: &str, colon: &[u8]) -> Result<(), Error> {
        if plain(key) {
            self.reserve(key.len() + 2 + colon.len());
            self.push(b'"');
            self.extend_from_slice(key.as_bytes());
            self.push(b'"');
        } else {
            escape_into(self, key);
        }
        self.extend_from_slice(colon);
        Ok(())
    }
}

/// A writer that accepts only the bytes it expects next, so that comparing a value's text with
/// expected bytes needs no buffer for the whole text and stops at the first difference.
#[derive(Debug)]
pub struct Compare<'a> {
    rest: &'a [u8],
}

impl<'a> Compare<'a> {
    /// Expects exactly `expected`.
    pub fn new(expected: &'a [u8]) -> Self {
        Compare { rest: expected }
    }

    /// Whether everything expected was written.
    pub fn is_done(&self) -> bool {
        self.rest.is_empty()
    }
}

impl Out for Compare<'_> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<(), Error> {
        match self.rest.strip_prefix(bytes) {
            Some(rest) => {
                self.rest = rest;
                Ok(())
            }
            None => Err(ser::Error::custom("not the expected bytes")),
        }
    }

    /// Compared a byte or a word at a time rather than by `memcmp`: these are the most
    /// frequent pieces, and a few bytes long.
    #[inline]
    fn put_line(&mut self, before: &[u8], width: usize) -> Result<(), Error> {
        const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);
        let end = before.len() + 1 + width;
        let matches = self.rest.len() >= end
            && before.iter().zip(self.rest).all(|(a, b)| a == b)
            && self.rest[before.len()] == b'\n'
            && {
                let mut words = self.rest[before.len() + 1..end].chunks_exact(8);
                words
                    .by_ref()
                    .all(|word| u64::from_ne_bytes(word.try_into().expect("eight bytes")) == SPACES)
                    && words.remainder().iter().all(|b| *b == b' ')
            };
        if !matches {
            return Err(ser::Error::custom("not the expected bytes"));
        }
        self.rest = &self.rest[end..];
        Ok(())
    }

    #[inline]
    fn put_escaped(&mut self, text: &str) -> Result<(), Error> {
        if plain(text) {
            return self.put_quoted(text, b"\"");
        }
        ESCAPED.with(|escaped| {
            let mut escaped = escaped.borrow_mut();
            escaped.clear();
            escape_into(&mut escaped, text);
            self.put(&escaped)
        })
    }

    #[inline]
    fn put_key(&mut self, key: &str, colon: &[u8]) -> Result<(), Error> {
        if plain(key) {
            self.put_quoted(key, b"\"")?;
        } else {
            self.put_escaped(key)?;
        }
        self.put(colon)
    }
}

impl Compare<'_> {
    /// Expects `"`, `text` and `end`.
    #[inline]
    fn put_quoted(&mut self, text: &str, end: &[u8]) -> Result<(), Error> {
        let n = text.len();
        let matches = self.rest.len() >= n + 1 + end.len()
            && self.rest[0] == b'"'
            && &self.rest[1..=n] == text.as_bytes()
            && &self.rest[n + 1..n + 1 + end.len()] == end;
        if !matches {
            return Err(ser::Error::custom("not the expected bytes"));
        }
        self.rest = &self.rest[n + 1 + end.len()..];
        Ok(())
    }
}

thread_local! {
    /// A long string's escaped text while [`Compare`] compares it, kept between strings and
    /// documents for its capacity.
    static ESCAPED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// How numbers kept as text (`arbitrary_precision`) are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numbers {
    /// As they are, as serde_json writes them.
    AsKept,
    /// With a positive exponent's `+` left out (`1e+16` as `1e16`), as pydantic writes them.
    NoExponentPlus,
}

/// What follows a key in every layout.
const COLON: &[u8] = b": ";

/// How a [`Writer`] lays out JSON text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// serde_json's pretty layout: each element on a line of its own, indented by this many
    /// spaces per nesting level, keys followed by `": "`.
    Pretty(&'static [u8]),
    /// Python's `json.dumps` with its default separators: `, ` and `: `, on one line.
    Python,
}

impl Layout {
    #[inline]
    fn comma(self) -> &'static [u8] {
        match self {
            Layout::Pretty(_) => b",",
            Layout::Python => b", ",
        }
    }
}

/// A serializer writing JSON text in a [`Layout`] into `O`.
#[derive(Debug)]
pub struct Writer<'o, O: Out> {
    out: &'o mut O,
    layout: Layout,
    numbers: Numbers,
    depth: usize,
}

impl<'o, O: Out> Writer<'o, O> {
    /// A serializer into `out`.
    pub fn new(out: &'o mut O, layout: Layout, numbers: Numbers) -> Self {
        Writer {
            out,
            layout,
            numbers,
            depth: 0,
        }
    }

    /// `before` (empty or a comma), then in the pretty layout a line break and the current
    /// level's indentation.
    fn line(&mut self, before: &[u8]) -> Result<(), Error> {
        match self.layout {
            Layout::Pretty(indent) => self.out.put_line(before, self.depth * indent.len()),
            Layout::Python => self.out.put(before),
        }
    }

    /// Begins a compound of `kind` with `len` elements, if known: its opening bracket, or both
    /// brackets at once when it is known to be empty.
    fn compound<'a>(
        &'a mut self,
        kind: Kind,
        len: Option<usize>,
    ) -> Result<Compound<'a, 'o, O>, Error> {
        let state = match kind.brackets() {
            None => State::First,
            Some(brackets) if len == Some(0) => {
                self.out.put(brackets)?;
                State::Empty
            }
            Some(brackets) => {
                self.out.put(&brackets[..1])?;
                self.depth += 1;
                State::First
            }
        };
        Ok(Compound {
            ser: self,
            kind,
            state,
        })
    }

    fn number(&mut self, text: &str) -> Result<(), Error> {
        match (self.numbers, text.split_once("e+")) {
            (Numbers::NoExponentPlus, Some((mantissa, exponent))) => {
                self.out.put(mantissa.as_bytes())?;
                self.out.put(b"e")?;
                self.out.put(exponent.as_bytes())
            }
            _ => self.out.put(text.as_bytes()),
        }
    }

    fn integer(&mut self, value: impl itoa::Integer) -> Result<(), Error> {
        self.out.put(itoa::Buffer::new().format(value).as_bytes())
    }

    /// `{"variant": ` of an enum variant written as an object with one key.
    fn variant_head(&mut self, variant: &str) -> Result<(), Error> {
        self.out.put(b"{")?;
        self.depth += 1;
        self.line(b"")?;
        self.out.put_key(variant, COLON)
    }

    /// The end of what [`Writer::variant_head`] began.
    fn variant_tail(&mut self) -> Result<(), Error> {
        self.depth -= 1;
        self.line(b"")?;
        self.out.put(b"}")
    }
}

/// Appends a finite float as serde_json spells it (its spelling has changed between releases, so
/// serde_json's own formatter writes it), between `quote`s: none for a value, `"` for a key.
fn put_float<O: Out>(
    out: &mut O,
    quote: &[u8],
    write: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>,
) -> Result<(), Error> {
    let mut text = Vec::with_capacity(26);
    text.extend_from_slice(quote);
    write(&mut text).map_err(Error::io)?;
    text.extend_from_slice(quote);
    out.put(&text)
}

/// Where a sequence, map or struct is: no element will come (written `[]` or `{}` already), no
/// element has come yet, or some have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Empty,
    First,
    Rest,
}

/// What a compound is writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Seq,
    Map,
    /// A tuple or struct variant: a sequence or map inside `{"variant": …}`.
    SeqVariant,
    MapVariant,
    /// serde_json's raw text or number digits.
    Raw,
    Number,
}

impl Kind {
    /// The brackets a compound of this kind is written between; none for raw text.
    fn brackets(self) -> Option<&'static [u8; 2]> {
        match self {
            Kind::Seq | Kind::SeqVariant => Some(b"[]"),
            Kind::Map | Kind::MapVariant => Some(b"{}"),
            Kind::Raw | Kind::Number => None,
        }
    }
}

/// A sequence, map or struct being written.
#[derive(Debug)]
pub struct Compound<'a, 'o, O: Out> {
    ser: &'a mut Writer<'o, O>,
    kind: Kind,
    state: State,
}

impl<O: Out> Compound<'_, '_, O> {
    /// Starts the next element (or key) on a line of its own.
    fn element(&mut self) -> Result<(), Error> {
        let before = if self.state == State::First {
            b""
        } else {
            self.ser.layout.comma()
        };
        self.state = State::Rest;
        self.ser.line(before)
    }

    /// Ends the compound: its closing bracket (unless it was written whole), on a line of its
    /// own after elements, then the end of a variant's object.
    fn finish(self) -> Result<(), Error> {
        let Some(brackets) = self.kind.brackets() else {
            return Ok(());
        };
        if self.state != State::Empty {
            self.ser.depth -= 1;
            if self.state == State::Rest {
                self.ser.line(b"")?;
            }
            self.ser.out.put(&brackets[1..])?;
        }
        if matches!(self.kind, Kind::SeqVariant | Kind::MapVariant) {
            self.ser.variant_tail()?;
        }
        Ok(())
    }
}

/// Serializer methods that write an integer in decimal.
macro_rules! integers {
    ($($method:ident($ty:ty);)*) => {$(
        fn $method(self, v: $ty) -> Result<(), Error> {
            self.integer(v)
        }
    )*};
}

impl<'a, 'o, O: Out> ser::Serializer for &'a mut Writer<'o, O> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a, 'o, O>;
    type SerializeTuple = Compound<'a, 'o, O>;
    type SerializeTupleStruct = Compound<'a, 'o, O>;
    type SerializeTupleVariant = Compound<'a, 'o, O>;
    type SerializeMap = Compound<'a, 'o, O>;
    type SerializeStruct = Compound<'a, 'o, O>;
    type SerializeStructVariant = Compound<'a, 'o, O>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out.put(if v { b"true" } else { b"false" })
    }
    integers! {
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_i128(i128);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_u128(u128);
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        if v.is_finite() {
            put_float(self.out, b"", |text| CompactFormatter.write_f32(text, v))
        } else {
            self.out.put(b"null")
        }
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        if v.is_finite() {
            put_float(self.out, b"", |text| CompactFormatter.write_f64(text, v))
        } else {
            self.out.put(b"null")
        }
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.out.put_escaped(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.out.put_escaped(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        let mut seq = ser::Serializer::serialize_seq(self, Some(v.len()))?;
        for byte in v {
            ser::SerializeSeq::serialize_element(&mut seq, byte)?;
        }
        ser::SerializeSeq::end(seq)
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.out.put(b"null")
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.out.put(b"null")
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.out.put(b"null")
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.out.put_escaped(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.variant_head(variant)?;
        value.serialize(&mut *self)?;
        self.variant_tail()
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'a, 'o, O>, Error> {
        self.compound(Kind::Seq, len)
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a, 'o, O>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        len: usize,
    ) -> Result<Compound<'a, 'o, O>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a, 'o, O>, Error> {
        self.variant_head(variant)?;
        self.compound(Kind::SeqVariant, Some(len))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a, 'o, O>, Error> {
        self.compound(Kind::Map, len)
    }
    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Compound<'a, 'o, O>, Error> {
        let kind = match name {
            RAW_VALUE_TOKEN => Kind::Raw,
            NUMBER_TOKEN => Kind::Number,
            _ => Kind::Map,
        };
        self.compound(kind, Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a, 'o, O>, Error> {
        self.variant_head(variant)?;
        self.compound(Kind::MapVariant, Some(len))
    }
    fn collect_str<T: Display + ?Sized>(self, value: &T) -> Result<(), Error> {
        self.out.put_escaped(&value.to_string())
    }
}

macro_rules! elements {
    ($($trait:ident::$method:ident;)*) => {$(
        impl<O: Out> ser::$trait for Compound<'_, '_, O> {
            type Ok = ();
            type Error = Error;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.element()?;
                value.serialize(&mut *self.ser)
            }

            fn end(self) -> Result<(), Error> {
                self.finish()
            }
        }
    )*};
}

elements! {
    SerializeSeq::serialize_element;
    SerializeTuple::serialize_element;
    SerializeTupleStruct::serialize_field;
    SerializeTupleVariant::serialize_field;
}

impl<O: Out> ser::SerializeMap for Compound<'_, '_, O> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.element()?;
        key.serialize(Key(&mut *self.ser.out))?;
        self.ser.out.put(COLON)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.ser)
    }

    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

impl<O: Out> ser::SerializeStruct for Compound<'_, '_, O> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        match self.kind {
            Kind::Raw if key == RAW_VALUE_TOKEN => value.serialize(RawText {
                ser: &mut *self.ser,
                number: false,
            }),
            Kind::Number if key == NUMBER_TOKEN => value.serialize(RawText {
                ser: &mut *self.ser,
                number: true,
            }),
            Kind::Raw | Kind::Number => Err(not_raw()),
            _ => {
                self.element()?;
                self.ser.out.put_key(key, COLON)?;
                value.serialize(&mut *self.ser)
            }
        }
    }

    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

impl<O: Out> ser::SerializeStructVariant for Compound<'_, '_, O> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }

    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

/// Writes a map key as serde_json does: a string as it is, a number or `bool` as its text in
/// quotes; any other key is an error.
struct Key<'a, O: Out>(&'a mut O);

fn key_must_be_a_string() -> Error {
    ser::Error::custom("key must be a string")
}

fn float_key_must_be_finite() -> Error {
    ser::Error::custom("float key must be finite")
}

macro_rules! quoted_keys {
    ($($method:ident($ty:ty);)*) => {$(
        fn $method(self, v: $ty) -> Result<(), Error> {
            self.0.put(b"\"")?;
            self.0.put(itoa::Buffer::new().format(v).as_bytes())?;
            self.0.put(b"\"")
        }
    )*};
}

/// Serializer methods that refuse what they are given with `$error`.
macro_rules! refuse {
    ($error:expr; $($method:ident($($arg:ty),*) -> $ok:ty;)*) => {$(
        fn $method(self $(, _: $arg)*) -> Result<$ok, Error> {
            Err($error)
        }
    )*};
}

/// The generic serializer methods that refuse what they are given with `$error`.
macro_rules! refuse_generic {
    ($error:expr; $ok:ty) => {
        fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<$ok, Error> {
            Err($error)
        }
        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<$ok, Error> {
            Err($error)
        }
    };
}

/// The compound serializer methods that refuse what they are given with `$error`.
macro_rules! refuse_compounds {
    ($error:expr) => {
        refuse! { $error;
            serialize_seq(Option<usize>) -> Self::SerializeSeq;
            serialize_tuple(usize) -> Self::SerializeTuple;
            serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
            serialize_tuple_variant(&'static str, u32, &'static str, usize)
                -> Self::SerializeTupleVariant;
            serialize_map(Option<usize>) -> Self::SerializeMap;
            serialize_struct(&'static str, usize) -> Self::SerializeStruct;
            serialize_struct_variant(&'static str, u32, &'static str, usize)
                -> Self::SerializeStructVariant;
        }
    };
}

impl<O: Out> ser::Serializer for Key<'_, O> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    quoted_keys! {
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_i128(i128);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_u128(u128);
    }

    refuse! { key_must_be_a_string();
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
    }
    refuse_generic!(key_must_be_a_string(); ());
    refuse_compounds!(key_must_be_a_string());

    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        if !v.is_finite() {
            return Err(float_key_must_be_finite());
        }
        put_float(self.0, b"\"", |text| CompactFormatter.write_f32(text, v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        if !v.is_finite() {
            return Err(float_key_must_be_finite());
        }
        put_float(self.0, b"\"", |text| CompactFormatter.write_f64(text, v))
    }
    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.0.put(if v { b"\"true\"" } else { b"\"false\"" })
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.0.put_escaped(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.0.put_escaped(v)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.0.put_escaped(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn collect_str<T: Display + ?Sized>(self, value: &T) -> Result<(), Error> {
        self.0.put_escaped(&value.to_string())
    }
}

/// Writes the one string a raw value (as it is) or a number (in the number style) hands over.
struct RawText<'a, 'o, O: Out> {
    ser: &'a mut Writer<'o, O>,
    number: bool,
}

impl<O: Out> ser::Serializer for RawText<'_, '_, O> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        if self.number {
            self.ser.number(v)
        } else {
            self.ser.out.put(v.as_bytes())
        }
    }

    refuse! { not_raw();
        serialize_bool(bool) -> ();
        serialize_i8(i8) -> ();
        serialize_i16(i16) -> ();
        serialize_i32(i32) -> ();
        serialize_i64(i64) -> ();
        serialize_u8(u8) -> ();
        serialize_u16(u16) -> ();
        serialize_u32(u32) -> ();
        serialize_u64(u64) -> ();
        serialize_f32(f32) -> ();
        serialize_f64(f64) -> ();
        serialize_char(char) -> ();
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
    }
    refuse_generic!(not_raw(); ());
    refuse_compounds!(not_raw());

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        Err(not_raw())
    }
}

fn not_raw() -> Error {
    ser::Error::custom("not a raw JSON value")
}

/// Appends `value` to `out` as `serde_json::to_writer_pretty` writes it (two spaces per level).
pub fn to_vec_pretty<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), Error> {
    value.serialize(&mut Writer::new(
        out,
        Layout::Pretty(b"  "),
        Numbers::AsKept,
    ))
}
