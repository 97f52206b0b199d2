//! Reading only the JSON shapes the published schemas describe (law 4 of the design).
//!
//! serde's derives accept more than the plain JSON shape: a struct also reads from an array of
//! its field values, and a unit enum also reads from `{"VARIANT": null}`. Neither pydantic nor
//! the schemas accept those, so every derived legacy type derives its serde code with
//! `#[serde(remote = "Self")]` (which makes the derives inherent functions) and implements the
//! serde traits with the macros below, which admit only the plain shape and then hand over to
//! the derived code.
//!
//! A side effect of `remote = "Self"`: each type has inherent `serialize`/`deserialize`
//! functions, the lenient derives. Read documents through the `serde::Deserialize` trait (as
//! [`crate::json::from_tree`] and `serde_json` do), never through `Type::deserialize`.

use serde::de::value::{Error as PlainError, StrDeserializer};
use serde::de::{Deserializer, Error as _, IntoDeserializer, Visitor};
use serde::{forward_to_deserialize_any, Deserialize};

/// A deserializer that reads structs (and anything else) only from JSON objects.
pub(crate) struct MapOnly<D>(pub D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for MapOnly<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(visitor)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// Reads a unit-only enum: only from a string.
pub(crate) fn unit<'de, D, T>(
    deserializer: D,
    derived: impl FnOnce(StrDeserializer<'_, PlainError>) -> Result<T, PlainError>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    let text = String::deserialize(deserializer)?;
    derived(text.as_str().into_deserializer()).map_err(D::Error::custom)
}

/// Implements the serde traits of structs derived with `#[serde(remote = "Self")]`.
macro_rules! serde_object {
    ($($ty:ty),+ $(,)?) => {$(
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                <$ty>::serialize(self, serializer)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                <$ty>::deserialize($crate::strict::MapOnly(deserializer))
            }
        }
    )+};
}

/// Implements the serde traits of unit-only enums derived with `#[serde(remote = "Self")]`.
macro_rules! serde_unit {
    ($($ty:ty),+ $(,)?) => {$(
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                <$ty>::serialize(self, serializer)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::strict::unit(deserializer, |text| <$ty>::deserialize(text))
            }
        }
    )+};
}

pub(crate) use {serde_object, serde_unit};

/// Reads an optional field whose value, when the key is present, must be a `T` (`null` only if
/// `T` itself is nullable): `#[serde(default, deserialize_with = "present")]` on an `Option<T>`.
/// serde alone would read `null` as an absent key; pydantic does not.
pub(crate) fn present<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}
