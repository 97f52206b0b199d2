//! The "every key is required" rule for nullable fields.
//!
//! V2 writes every key of every object, `null` included, and reads back only documents that do
//! the same (the one exception is `PlanRunV2.legacy`). serde would otherwise treat a missing
//! `Option` field as `None`, and schemars would leave it out of `required`; a field marked with
//! `#[serde(deserialize_with = "wire::nullable")]` and `#[schemars(with = "wire::Nullable<T>")]`
//! is required on both sides and still accepts `null`.

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;

use indexmap::IndexMap;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// Reads a nullable field whose key must be present.
pub(crate) fn nullable<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer)
}

/// Schema stand-in for a required key whose value is `T` or `null`.
pub(crate) struct Nullable<T>(PhantomData<T>);

impl<T: JsonSchema> JsonSchema for Nullable<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        <Option<T>>::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        <Option<T>>::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        <Option<T>>::json_schema(generator)
    }
}

/// Reads an object key as its index in `keys`, for the readers that go through an object key by
/// key; any other key is an unknown field, reported with `expected` as the keys allowed.
pub(crate) fn key_index<'de, D: Deserializer<'de>>(
    deserializer: D,
    keys: &'static [&'static str],
    expected: &'static [&'static str],
) -> Result<usize, D::Error> {
    struct KeyVisitor {
        keys: &'static [&'static str],
        expected: &'static [&'static str],
    }
    impl Visitor<'_> for KeyVisitor {
        type Value = usize;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object key")
        }
        fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<usize, E> {
            self.keys
                .iter()
                .position(|k| *k == key)
                .ok_or_else(|| E::unknown_field(key, self.expected))
        }
    }
    deserializer.deserialize_identifier(KeyVisitor { keys, expected })
}

thread_local! {
    /// Whether [`value`] only checks the values it reads (see [`checking_values`]).
    static CHECKING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `read` with every free-form value (a step output's, a run input's) checked but not
/// built: it accepts exactly the JSON a `Value` accepts, to the same nesting limit, and reads as
/// `null`. For readers that keep nothing they read, like the verify pass's run check.
pub(crate) fn checking_values<T>(read: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            CHECKING.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CHECKING.with(|c| c.replace(true)));
    read()
}

/// Reads a free-form JSON value (`#[serde(deserialize_with = "wire::value")]`): a `Value`, or
/// `null` after checking it inside [`checking_values`].
pub(crate) fn value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
    if CHECKING.with(Cell::get) {
        deserializer.deserialize_any(Checked).map(|()| Value::Null)
    } else {
        Value::deserialize(deserializer)
    }
}

/// Reads an object of free-form values keyed by strings (`#[serde(deserialize_with =
/// "wire::value_map")]`): the map, or an empty one after checking it inside [`checking_values`].
pub(crate) fn value_map<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<IndexMap<String, Value>, D::Error> {
    if CHECKING.with(Cell::get) {
        deserializer
            .deserialize_map(CheckedMap)
            .map(|()| IndexMap::new())
    } else {
        IndexMap::deserialize(deserializer)
    }
}

/// Visits an object as `IndexMap<String, Value>`'s visitor does (string keys, any values; a
/// repeated key is accepted, the map keeping the last), keeping nothing.
struct CheckedMap;

impl<'de> Visitor<'de> for CheckedMap {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(Key)?.is_some() {
            map.next_value_seed(Checked)?;
        }
        Ok(())
    }
}

/// Visits any JSON value as `Value`'s visitor does (through `deserialize_any`, so nesting counts
/// against the reader's limit the same way), keeping nothing.
#[derive(Clone, Copy)]
struct Checked;

impl<'de> DeserializeSeed<'de> for Checked {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Checked {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_i128<E>(self, _: i128) -> Result<(), E> {
        Ok(())
    }
    fn visit_u128<E>(self, _: u128) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        // `Value` keeps only finite floats.
        serde_json::Number::from_f64(v)
            .map(|_| ())
            .ok_or_else(|| E::custom("not a JSON number"))
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // With `arbitrary_precision` a number arrives as a one-entry map holding its digits;
        // `Value` parses the text serde_json itself produced, which always succeeds.
        while map.next_key_seed(Key)?.is_some() {
            map.next_value_seed(self)?;
        }
        Ok(())
    }
}

/// A map key of a checked value: a string, not kept.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(Checked)
    }
}
