//! PlanV2 as a wire format (the SDK never persisted one; this crate defines it).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{self, PLAN_ID_PATTERN};
use crate::step::StepV2;
use crate::wire::{self, Nullable};
use planrun_wire::serde_object;

/// An embedded JSON Schema document (an object), as used for output schemas.
pub type JsonSchemaObject = serde_json::Map<String, serde_json::Value>;

/// A plan built with the SDK's Plan Builder, or converted from a legacy plan.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "PlanV2")]
pub struct PlanV2 {
    /// The plan id, `plan-<uuid>`; the same id as the legacy plan it came from.
    #[serde(deserialize_with = "ids::plan")]
    #[schemars(pattern(PLAN_ID_PATTERN))]
    pub id: String,
    /// The plan's label; a converted legacy plan keeps its `plan_context.query` here.
    pub label: String,
    /// The legacy `plan_context.tool_ids` (the tools the planner could use), in their order.
    pub tool_ids: Vec<String>,
    /// The steps, in order; their indexes are the run's `current_step_index` space.
    pub steps: Vec<StepV2>,
    /// The inputs the plan expects.
    pub plan_inputs: Vec<PlanInput>,
    /// Whether the run summarises its final output.
    pub summarize: bool,
    /// JSON Schema of the structured final output, if the plan asks for one.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<JsonSchemaObject>")]
    pub final_output_schema: Option<JsonSchemaObject>,
}

/// An input the plan expects from its caller.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "PlanInput")]
pub struct PlanInput {
    /// The input name, as the plan spells it (with or without a leading `$`).
    pub name: String,
    /// What the input is for.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<String>")]
    pub description: Option<String>,
    /// The default value (native JSON, not stringified); `null` when none.
    pub value: serde_json::Value,
}

serde_object!(PlanV2, PlanInput);
