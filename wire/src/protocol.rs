//! The names by which serde_json's readers hand a generic visitor a number's exact text
//! (`arbitrary_precision`) and a value's raw text (`raw_value`).
//!
//! serde_json keeps both names private. A visitor that must tell such a number or raw value from
//! an ordinary one-key object needs them, so they are learnt here, once, from serde_json's own
//! `Serialize` impls of [`Number`] and [`RawValue`], which announce the same name as a struct name.
//! Nothing spells them, and a serde_json release that renames them changes them here too.

use std::fmt;
use std::sync::LazyLock;

use serde::ser::{Impossible, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Number;

/// The key of the one-entry map serde_json visits a number with, its value the number's text.
pub fn number_key() -> &'static str {
    static NAME: LazyLock<&'static str> = LazyLock::new(|| struct_name_of(&Number::from(0u8)));
    *NAME
}

/// The newtype name to ask serde_json's readers for a value's raw text by; the reader answers
/// with a one-entry map under the same key.
pub fn raw_value_name() -> &'static str {
    static NAME: LazyLock<&'static str> = LazyLock::new(|| {
        let raw = RawValue::from_string("0".to_owned()).expect("0 is JSON");
        struct_name_of(&raw)
    });
    *NAME
}

/// The struct name `value` serializes itself as.
fn struct_name_of<T: Serialize>(value: &T) -> &'static str {
    match value.serialize(StructName) {
        Err(Learnt(Some(name))) => name,
        _ => panic!("serde_json no longer serializes its protocol types as a struct"),
    }
}

/// A serializer that only accepts a struct, answering with its name (as the error, which is
/// the one value every `Serializer` method can return).
struct StructName;

/// What [`StructName`] learnt: a struct's name, or nothing when it was shown something else.
#[derive(Debug)]
struct Learnt(Option<&'static str>);

impl fmt::Display for Learnt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "struct name {:?}", self.0)
    }
}

impl std::error::Error for Learnt {}

impl serde::ser::Error for Learnt {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Learnt(None)
    }
}

/// Every method but `serialize_struct` declines.
macro_rules! decline {
    ($($name:ident($($arg:ty),*) -> $out:ty;)*) => {
        $(fn $name(self, $(_: $arg),*) -> Result<$out, Learnt> { Err(Learnt(None)) })*
    };
}

impl Serializer for StructName {
    type Ok = ();
    type Error = Learnt;
    type SerializeSeq = Impossible<(), Learnt>;
    type SerializeTuple = Impossible<(), Learnt>;
    type SerializeTupleStruct = Impossible<(), Learnt>;
    type SerializeTupleVariant = Impossible<(), Learnt>;
    type SerializeMap = Impossible<(), Learnt>;
    type SerializeStruct = Impossible<(), Learnt>;
    type SerializeStructVariant = Impossible<(), Learnt>;

    fn serialize_struct(
        self,
        name: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, Learnt> {
        Err(Learnt(Some(name)))
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Learnt> {
        Err(Learnt(None))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), Learnt> {
        Err(Learnt(None))
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Learnt> {
        Err(Learnt(None))
    }

    decline! {
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
        serialize_str(&str) -> ();
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }
}
