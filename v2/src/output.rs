//! Output values: local values, agent-memory references, and the outputs of plan steps.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{self, PLAN_RUN_ID_PATTERN};
use crate::int;
use crate::wire::{self, Nullable};
use planrun_wire::{serde_object, serde_tagged};

/// The value of a step output or of the final output: held inline, or referenced in agent memory.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(
    remote = "Self",
    tag = "kind",
    rename_all = "snake_case",
    deny_unknown_fields
)]
#[schemars(rename = "Output")]
pub enum Output {
    /// A value held inline (the SDK's `LocalDataValue`).
    Local {
        /// The value. Legacy values are strings (the SDK stringified every value) and stay strings.
        value: serde_json::Value,
        /// The summary of the value; `null` and `""` are different values and both are kept.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        summary: Option<String>,
    },
    /// A value stored out of line in agent memory (the SDK's `AgentMemoryValue`), kept as a reference.
    AgentMemory {
        /// The name the value is stored under in agent memory, e.g. `$big_report`.
        output_name: String,
        /// The run whose agent memory holds the value.
        #[serde(deserialize_with = "ids::plan_run")]
        #[schemars(pattern(PLAN_RUN_ID_PATTERN))]
        plan_run_id: String,
        /// The summary stored beside the value (never null in the SDK).
        summary: String,
    },
}

/// A value with its summary, without a tag: the shape of a plan run input.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "LocalDataValue")]
pub struct LocalDataValue {
    /// The value. Legacy values are strings (the SDK stringified every value) and stay strings.
    pub value: serde_json::Value,
    /// The summary of the value; `null` and `""` are different values and both are kept.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<String>")]
    pub summary: Option<String>,
}

/// One output of a run, tied to the plan step that produced it where one does.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "StepOutputValue")]
pub struct StepOutputValue {
    /// Index of the producing step in `plan.steps`; `null` when no plan step produces this output.
    #[serde(deserialize_with = "int::nullable")]
    #[schemars(with = "Nullable<i64>")]
    pub step_num: Option<i64>,
    /// `step_name` of the producing step; `null` when no plan step produces this output.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<String>")]
    pub step_name: Option<String>,
    /// The legacy output key, e.g. `$flights` or `$step_2_output`; kept so a downgrade restores it.
    pub output_name: String,
    /// What the output is, as the SDK's `StepOutputValue.description` (`""` when unknown).
    pub description: String,
    /// The output itself.
    pub output: Output,
}

serde_object!(LocalDataValue, StepOutputValue);
serde_tagged!(Output => "kind");
