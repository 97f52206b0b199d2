//! The published JSON Schemas (draft 2020-12) of the legacy wire formats.
//!
//! Each schema describes the legacy keys exactly as they are on the wire, and accepts exactly
//! what this crate's serde models accept (a document the models read is one the schema accepts, and no other), lax input included: integers and
//! booleans in pydantic's lax spellings ([`crate::scalar`]), ids in their documented spellings or
//! as `{"uuid": …}` objects ([`crate::id`]).

use planrun_wire::schema;
use schemars::JsonSchema;
use serde_json::Value;

use crate::clarification::restrict_clarifications;
use crate::context::{EndUser, StepOutputValue, ToolCallRecord};
use crate::detect::DocKind;
use crate::document::RunContextSnapshot;
use crate::id::restrict_run_ids;
use crate::output::Output;
use crate::plan::Plan;
use crate::run::{RunR1, RunR2, RunR3, RunR4, RunR5, RunR6, RunW1};
use crate::version::Version;
use crate::Config;

/// Base URL of every `$id` this crate publishes; a schema's `$id` is this plus its file name.
pub const SCHEMA_BASE_URL: &str = "https://planrun-migrate.dev/schemas/legacy/";

/// Every published schema as `(file name, schema)`, in a stable order: the run of each version
/// (`run.W1.schema.json` … `run.R6.schema.json`), then the plan, end user, output, tool call,
/// config, step output value(s) and RunContext snapshot.
///
/// Each schema is a draft 2020-12 document with `$schema`, `$id`, `title` and the types' doc
/// comments as descriptions.
pub fn schemas() -> Vec<(&'static str, Value)> {
    let r0 = {
        let (_, mut schema) = run_schema_for::<RunR1>(Version::R0);
        schema["title"] = "RunR0".into();
        ("run.R0.schema.json", schema)
    };
    let run_context = {
        let (file, mut schema) = schema_for::<RunContextSnapshot>("run_context.schema.json");
        restrict_clarifications(&mut schema, Version::R6);
        restrict_run_ids(&mut schema, Version::R6);
        (file, schema)
    };
    vec![
        run_schema_for::<RunW1>(Version::W1),
        r0,
        run_schema_for::<RunR1>(Version::R1),
        run_schema_for::<RunR2>(Version::R2),
        run_schema_for::<RunR3>(Version::R3),
        run_schema_for::<RunR4>(Version::R4),
        run_schema_for::<RunR5>(Version::R5),
        run_schema_for::<RunR6>(Version::R6),
        schema_for::<Plan>("plan.schema.json"),
        schema_for::<EndUser>("end_user.schema.json"),
        schema_for::<Output>("output.schema.json"),
        schema_for::<ToolCallRecord>("tool_call.schema.json"),
        schema_for::<Config>("config.schema.json"),
        schema_for::<StepOutputValue>("step_output_value.schema.json"),
        step_output_values(),
        run_context,
    ]
}

/// The file name of the schema of a document of `kind`, read as `version` (the version matters
/// only for runs).
pub fn schema_file(kind: DocKind, version: Version) -> &'static str {
    match kind {
        DocKind::Run => match version {
            Version::W1 => "run.W1.schema.json",
            Version::R0 => "run.R0.schema.json",
            Version::R1 => "run.R1.schema.json",
            Version::R2 => "run.R2.schema.json",
            Version::R3 => "run.R3.schema.json",
            Version::R4 => "run.R4.schema.json",
            Version::R5 => "run.R5.schema.json",
            Version::R6 => "run.R6.schema.json",
        },
        DocKind::Plan => "plan.schema.json",
        DocKind::EndUser => "end_user.schema.json",
        DocKind::Output => "output.schema.json",
        DocKind::ToolCall => "tool_call.schema.json",
        DocKind::Config => "config.schema.json",
        DocKind::StepOutputValue => "step_output_value.schema.json",
        DocKind::StepOutputValues => "step_output_values.schema.json",
        DocKind::RunContext => "run_context.schema.json",
    }
}

fn step_output_values() -> (&'static str, Value) {
    let file = "step_output_values.schema.json";
    let mut schema = schema::settings()
        .into_generator()
        .into_root_schema_for::<Vec<StepOutputValue>>();
    schema.insert("title".to_owned(), "StepOutputValues".into());
    schema.insert(
        "description".to_owned(),
        "A list of HEAD `RunContext.step_output_values` entries (in memory only in the SDK)."
            .into(),
    );
    (file, schema::with_header(schema, SCHEMA_BASE_URL, file))
}

/// Generates the schema of the run struct `T` of `version`: its run ids and clarifications are
/// held to that version's rules, as its reader holds them.
fn run_schema_for<T: JsonSchema>(version: Version) -> (&'static str, Value) {
    let file = schema_file(DocKind::Run, version);
    let (file, mut schema) = schema_for::<T>(file);
    restrict_clarifications(&mut schema, version);
    restrict_run_ids(&mut schema, version);
    (file, schema)
}

/// Generates the schema of `T`, published under `file`.
fn schema_for<T: JsonSchema>(file: &'static str) -> (&'static str, Value) {
    (
        file,
        schema::published::<T>(schema::settings(), SCHEMA_BASE_URL, file),
    )
}
