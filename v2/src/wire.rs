//! The "every key is required" rule for nullable fields.
//!
//! V2 writes every key of every object, `null` included, and reads back only documents that do
//! the same (the one exception is `PlanRunV2.legacy`). serde would otherwise treat a missing
//! `Option` field as `None`, and schemars would leave it out of `required`; a field marked with
//! `#[serde(deserialize_with = "wire::nullable")]` and `#[schemars(with = "wire::Nullable<T>")]`
//! is required on both sides and still accepts `null`.

use std::borrow::Cow;
use std::marker::PhantomData;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer};

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
