//! The published JSON Schemas (draft 2020-12) of the V2 formats.

use planrun_wire::schema;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema};
use serde_json::Value;

use crate::{
    Clarification, Config, EndUser, Output, PlanRunV2, PlanV2, RunContext, StepOutputValue, StepV2,
};

/// Base URL of every `$id` this crate publishes; a schema's `$id` is this plus its file name.
pub const SCHEMA_BASE_URL: &str = "https://planrun-migrate.dev/schemas/v2/";

/// Every published schema as `(file name, schema)`, in a stable order.
///
/// Each schema is a draft 2020-12 document with `$schema`, `$id`, `title` and the types' doc
/// comments as descriptions. Integer fields carry `i64` bounds so that the schema accepts exactly
/// the numbers serde accepts.
pub fn schemas() -> Vec<(&'static str, Value)> {
    vec![
        schema_for::<PlanRunV2>("PlanRunV2.schema.json"),
        schema_for::<PlanV2>("PlanV2.schema.json"),
        schema_for::<StepV2>("StepV2.schema.json"),
        schema_for::<StepOutputValue>("StepOutputValue.schema.json"),
        schema_for::<Output>("Output.schema.json"),
        schema_for::<EndUser>("EndUser.schema.json"),
        schema_for::<Config>("Config.schema.json"),
        schema_for::<Clarification>("Clarification.schema.json"),
        schema_for::<RunContext>("RunContext.schema.json"),
    ]
}

/// Generates the schema of `T`, published under `file`.
fn schema_for<T: JsonSchema>(file: &'static str) -> (&'static str, Value) {
    let settings = schema::settings().with_transform(RecursiveTransform(bound_int64));
    (
        file,
        schema::published::<T>(settings, SCHEMA_BASE_URL, file),
    )
}

/// Gives `int64` schemas the range of `i64`, which serde enforces and JSON Schema would not.
fn bound_int64(schema: &mut Schema) {
    if schema.get("format").and_then(Value::as_str) == Some("int64") {
        schema.insert("minimum".to_owned(), i64::MIN.into());
        schema.insert("maximum".to_owned(), i64::MAX.into());
    }
}
