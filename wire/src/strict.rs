//! Reading only the JSON shapes the published schemas describe, for the legacy and V2 models
//! alike.
//!
//! serde's derives accept more than one shape: a struct or a tagged enum also reads from an array
//! of its field values, a tag also reads from its variant index (`"type": 0`), and a unit enum
//! also reads from `{"VARIANT": null}`. Neither pydantic nor the schemas accept any of these, so
//! every model derives its serde code with `#[serde(remote = "Self")]` (which makes the derives
//! inherent functions) and implements the serde traits with one of the macros below
//! ([`serde_object!`](crate::serde_object), [`serde_tagged!`](crate::serde_tagged),
//! [`serde_unit!`](crate::serde_unit)), which admit only the plain shape and then hand over to the
//! derived code.
//!
//! A side effect of `remote = "Self"`: each type has inherent `serialize`/`deserialize` functions,
//! the lenient derives. Read documents through the `serde::Deserialize` trait (as
//! `serde_json::from_str` does), never through `Type::deserialize`.

use serde::de::value::{Error as PlainError, StrDeserializer};
use serde::de::{Deserializer, Error as _, IgnoredAny, IntoDeserializer, MapAccess, Visitor};
use serde::{forward_to_deserialize_any, Deserialize};
use serde_json::de::StrRead;
use serde_json::Value;

use crate::protocol::raw_value_name;

/// A deserializer that reads structs (and anything else) only from JSON objects.
pub struct MapOnly<D>(pub D);

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

/// Reads an internally tagged enum: only from an object whose tag, if present, is a string.
///
/// From a serde_json reader the object is captured as raw JSON text (no tree is built); from
/// anything else (serde's own buffer, when this enum sits inside another tagged enum) it is
/// buffered as a `Value` and written out. Either way its tag is checked and the text handed to
/// the derived code: serde's tagged-enum buffer cannot hold the 128-bit integers a `Value` would
/// visit it with, while from text every number keeps its exact digits (`arbitrary_precision`).
pub fn tagged<'de, D, T>(
    deserializer: D,
    tag: &str,
    derived: impl FnOnce(&mut serde_json::Deserializer<StrRead<'_>>) -> Result<T, serde_json::Error>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    let text = deserializer.deserialize_newtype_struct(raw_value_name(), ObjectText)?;
    if !string_tag_first(&text, tag) {
        let mut reader = serde_json::Deserializer::from_str(&text);
        MapOnly(&mut reader)
            .deserialize_map(TagCheck(tag))
            .map_err(|error| D::Error::custom(without_position(&error)))?;
    }
    derived(&mut serde_json::Deserializer::from_str(&text))
        .map_err(|error| D::Error::custom(without_position(&error)))
}

/// Whether `text` is an object whose first key is `tag` (spelt without escapes) with a string
/// value: what serde writes, and all [`TagCheck`] would establish, since the derived code rejects
/// a second `tag` key as a duplicate field. Anything else is left to the full walk.
fn string_tag_first(text: &str, tag: &str) -> bool {
    let rest = text.trim_start();
    let Some(rest) = rest.strip_prefix('{') else {
        return false;
    };
    let Some(rest) = rest.trim_start().strip_prefix('"') else {
        return false;
    };
    let Some(rest) = rest.strip_prefix(tag) else {
        return false;
    };
    let Some(rest) = rest.strip_prefix('"') else {
        return false;
    };
    let Some(rest) = rest.trim_start().strip_prefix(':') else {
        return false;
    };
    rest.trim_start().starts_with('"')
}

/// The JSON text of the next value: its raw text where the deserializer offers it, else the
/// object, buffered and written out.
struct ObjectText;

impl<'de> Visitor<'de> for ObjectText {
    type Value = String;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a map")
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, inner: D) -> Result<String, D::Error> {
        Ok(Value::deserialize(MapOnly(inner))?.to_string())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<String, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Ok("{}".to_owned());
        };
        if first == raw_value_name() {
            return map.next_value::<String>();
        }
        let mut object = serde_json::Map::new();
        object.insert(first, map.next_value()?);
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            object.insert(key, value);
        }
        Ok(Value::Object(object).to_string())
    }
}

/// Walks an object without building it, checking that its `tag` key (if any) holds a string.
struct TagCheck<'a>(&'a str);

impl<'de> Visitor<'de> for TagCheck<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == self.0 {
                match map.next_value::<Value>()? {
                    Value::String(_) => {}
                    other => {
                        return Err(A::Error::custom(format!(
                            "`{}` must be a string, found {other}",
                            self.0
                        )))
                    }
                }
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// The message of an error from re-reading a buffered object, without its position in that
/// buffer (the caller's deserializer adds the position in the real document).
fn without_position(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    match message.strip_suffix(&position) {
        Some(bare) if error.line() > 0 => bare.to_owned(),
        _ => message,
    }
}

/// Reads a unit-only enum: only from a string.
pub fn unit<'de, D, T>(
    deserializer: D,
    derived: impl FnOnce(StrDeserializer<'_, PlainError>) -> Result<T, PlainError>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    let text = String::deserialize(deserializer)?;
    derived(text.as_str().into_deserializer()).map_err(D::Error::custom)
}

/// Reads an optional field whose value, when the key is present, must be a `T` (`null` only if
/// `T` itself is nullable): `#[serde(default, deserialize_with = "present")]` on an `Option<T>`.
/// serde alone would read `null` as an absent key; pydantic does not.
pub fn present<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

/// Implements the serde traits of structs derived with `#[serde(remote = "Self")]`, reading them
/// only from JSON objects.
#[macro_export]
macro_rules! serde_object {
    ($($ty:ty),+ $(,)?) => {$(
        $crate::__strict_impls!($ty, deserializer => {
            <$ty>::deserialize($crate::strict::MapOnly(deserializer))
        });
    )+};
}

/// Implements the serde traits of internally tagged enums derived with `#[serde(remote = "Self")]`,
/// reading them only from objects whose tag (the literal after `=>`) is a string.
#[macro_export]
macro_rules! serde_tagged {
    ($($ty:ty => $tag:literal),+ $(,)?) => {$(
        $crate::__strict_impls!($ty, deserializer => {
            $crate::strict::tagged(deserializer, $tag, |reader| <$ty>::deserialize(reader))
        });
    )+};
}

/// Implements the serde traits of unit-only enums derived with `#[serde(remote = "Self")]`,
/// reading them only from strings.
#[macro_export]
macro_rules! serde_unit {
    ($($ty:ty),+ $(,)?) => {$(
        $crate::__strict_impls!($ty, deserializer => {
            $crate::strict::unit(deserializer, |text| <$ty>::deserialize(text))
        });
    )+};
}

/// The trait impls behind the three macros above: `Serialize` hands over to the derived code
/// unchanged, `Deserialize` runs the given strict reader.
#[doc(hidden)]
#[macro_export]
macro_rules! __strict_impls {
    ($ty:ty, $deserializer:ident => $read:block) => {
        impl $crate::__private::serde::Serialize for $ty {
            fn serialize<S>(&self, serializer: S) -> ::core::result::Result<S::Ok, S::Error>
            where
                S: $crate::__private::serde::Serializer,
            {
                <$ty>::serialize(self, serializer)
            }
        }

        impl<'de> $crate::__private::serde::Deserialize<'de> for $ty {
            fn deserialize<D>($deserializer: D) -> ::core::result::Result<Self, D::Error>
            where
                D: $crate::__private::serde::Deserializer<'de>,
            {
                $read
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(remote = "Self")]
    struct Point {
        x: i64,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(remote = "Self", tag = "type")]
    enum Shape {
        Dot { x: i64 },
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(remote = "Self")]
    enum Colour {
        Red,
    }

    crate::serde_object!(Point);
    crate::serde_tagged!(Shape => "type");
    crate::serde_unit!(Colour);

    #[test]
    fn only_the_plain_shapes_are_read() {
        assert_eq!(
            serde_json::from_str::<Point>(r#"{"x": 1}"#).unwrap(),
            Point { x: 1 }
        );
        assert!(serde_json::from_str::<Point>("[1]").is_err());
        let dot = r#"{"type": "Dot", "x": 2}"#;
        assert_eq!(
            serde_json::from_str::<Shape>(dot).unwrap(),
            Shape::Dot { x: 2 }
        );
        assert!(serde_json::from_str::<Shape>(r#"{"type": 0, "x": 2}"#).is_err());
        assert!(serde_json::from_str::<Shape>(r#"["Dot", 2]"#).is_err());
        assert_eq!(
            serde_json::from_str::<Colour>(r#""Red""#).unwrap(),
            Colour::Red
        );
        assert!(serde_json::from_str::<Colour>(r#"{"Red": null}"#).is_err());
        assert_eq!(
            serde_json::to_string(&Shape::Dot { x: 2 }).unwrap(),
            r#"{"type":"Dot","x":2}"#
        );
    }
}
