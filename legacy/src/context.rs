//! ExecutionContext (W1–R5), EndUser (R4+), ToolCallRecord and the in-memory StepOutputValue.
//! These SDK models ignore unknown keys; so do these, and the parse reports each dropped key.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use crate::id::RunId;
use crate::scalar::{lax_int, LaxInt};
use planrun_wire::strict::present;
use planrun_wire::{serde_object, serde_unit};

/// The W1 ExecutionContext. Unknown keys are ignored, as the SDK does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self")]
#[schemars(rename = "ExecutionContextW1")]
pub struct ExecutionContextW1 {
    /// The end user, if any.
    #[serde(default)]
    pub end_user_id: Option<String>,
    /// Free-form string data about the end user.
    #[serde(default)]
    pub additional_data: IndexMap<String, String>,
    /// Extra lines for the planner's system prompt.
    #[serde(default)]
    pub planner_system_context_extension: Option<Vec<String>>,
    /// Extra lines for the agent's system prompt.
    #[serde(default)]
    pub agent_system_context_extension: Option<Vec<String>>,
}

/// The R0–R2 ExecutionContext: the extension keys renamed. Unknown keys are ignored, as the SDK
/// does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self")]
#[schemars(rename = "ExecutionContextR0")]
pub struct ExecutionContextR0 {
    /// The end user, if any.
    #[serde(default)]
    pub end_user_id: Option<String>,
    /// Free-form string data about the end user.
    #[serde(default)]
    pub additional_data: IndexMap<String, String>,
    /// Was `planner_system_context_extension`.
    #[serde(default)]
    pub planning_agent_system_context_extension: Option<Vec<String>>,
    /// Was `agent_system_context_extension`.
    #[serde(default)]
    pub execution_agent_system_context_extension: Option<Vec<String>>,
}

/// The R3 ExecutionContext: the extensions removed. Unknown keys are ignored, as the SDK does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self")]
#[schemars(rename = "ExecutionContextR3")]
pub struct ExecutionContextR3 {
    /// The end user, if any.
    #[serde(default)]
    pub end_user_id: Option<String>,
    /// Free-form string data about the end user.
    #[serde(default)]
    pub additional_data: IndexMap<String, String>,
}

/// The R4/R5 ExecutionContext: the end user moved to the run's top level. Unknown keys are
/// ignored, as the SDK does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self")]
#[schemars(rename = "ExecutionContextR4")]
pub struct ExecutionContextR4 {
    /// Free-form string data about the end user.
    #[serde(default)]
    pub additional_data: IndexMap<String, String>,
}

/// An end user, stored as `<external_id>.json` from v0.3.0 (R4). Unknown keys are ignored, as
/// the SDK does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self")]
#[schemars(rename = "EndUser")]
pub struct EndUser {
    /// The id the application knows the user by; also the file name.
    pub external_id: String,
    /// Display name.
    #[serde(default)]
    pub name: String,
    /// E-mail address.
    #[serde(default)]
    pub email: String,
    /// Phone number.
    #[serde(default)]
    pub phone_number: String,
    /// Free-form data about the user: strings, and from v0.3.5 also `null`
    /// (`remove_additional_data` sets null instead of deleting).
    #[serde(default)]
    pub additional_data: IndexMap<String, Option<String>>,
}

impl EndUser {
    /// The external id `Portia.initialize_end_user` gives a run started without an end user
    /// (v0.3.0 to HEAD); releases before v0.3.0 left the context's `end_user_id` null.
    pub const SDK_DEFAULT_ID: &'static str = "portia:default_user";
}

/// Status of a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self")]
#[schemars(rename = "ToolCallStatus")]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
pub enum ToolCallStatus {
    /// Still running.
    IN_PROGRESS,
    /// Finished.
    SUCCESS,
    /// Waiting for a clarification.
    NEED_CLARIFICATION,
    /// Raised.
    FAILED,
}

/// A tool call record, as the cloud storage posts it (disk storage never writes one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "ToolCallRecord")]
pub struct ToolCallRecord {
    /// The id of the tool called.
    pub tool_name: String,
    /// W1: the run the call belongs to (`plan_run_id` from R0 on).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "RunId")]
    pub workflow_id: Option<RunId>,
    /// R0 on: the run the call belongs to (`workflow_id` in W1).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "RunId")]
    pub plan_run_id: Option<RunId>,
    /// The index of the plan step that made the call.
    #[serde(deserialize_with = "lax_int")]
    #[schemars(with = "LaxInt")]
    pub step: i64,
    /// The end user's id, if any.
    pub end_user_id: Option<String>,
    /// Free-form string data about the end user; W1–R5 only.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "IndexMap<String, String>")]
    pub additional_data: Option<IndexMap<String, String>>,
    /// The call's outcome.
    pub status: ToolCallStatus,
    /// The tool's input, native JSON.
    pub input: Value,
    /// The tool's output, native JSON.
    pub output: Value,
    /// How long the call took, in seconds; the number is kept exactly as written.
    pub latency_seconds: Number,
}

/// One entry of the HEAD `RunContext.step_output_values` (in memory only in the SDK); its value is
/// native JSON, unlike a stored output's. Unknown keys are ignored, as the SDK does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self")]
#[schemars(rename = "StepOutputValue")]
pub struct StepOutputValue {
    /// The raw step result, native JSON (required; may be `null`).
    pub value: Value,
    /// What the value is; the SDK writes `"Output from step '<name>' …"`.
    #[serde(default)]
    pub description: String,
    /// The PlanV2 step's name.
    pub step_name: String,
    /// The step's index.
    #[serde(deserialize_with = "lax_int")]
    #[schemars(with = "LaxInt")]
    pub step_num: i64,
}

serde_object!(
    ExecutionContextW1,
    ExecutionContextR0,
    ExecutionContextR3,
    ExecutionContextR4,
    EndUser,
    ToolCallRecord,
    StepOutputValue
);
serde_unit!(ToolCallStatus);
