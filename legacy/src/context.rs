//! ExecutionContext (W1–R5), EndUser (R4+), ToolCallRecord and the in-memory StepOutputValue.
//! These SDK models ignore unknown keys; so do these, and the parse reports each dropped key.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use crate::id::RunId;
use crate::scalar::lax_int;

/// W1 ExecutionContext.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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

/// R0–R2 ExecutionContext: the extension keys renamed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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

/// R3 ExecutionContext: the extensions removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionContextR3 {
    /// The end user, if any.
    #[serde(default)]
    pub end_user_id: Option<String>,
    /// Free-form string data about the end user.
    #[serde(default)]
    pub additional_data: IndexMap<String, String>,
}

/// R4/R5 ExecutionContext: the end user moved to the run's top level.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionContextR4 {
    /// Free-form string data about the end user.
    #[serde(default)]
    pub additional_data: IndexMap<String, String>,
}

/// An end user, stored as `<external_id>.json` from v0.3.0 (R4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// String values; `null` from v0.3.5 (`remove_additional_data` sets null instead of deleting).
    #[serde(default)]
    pub additional_data: IndexMap<String, Option<String>>,
}

/// Status of a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// A tool call as the cloud storage posts it (never written by disk storage).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCallRecord {
    /// The tool's id.
    pub tool_name: String,
    /// W1 names the run `workflow_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<RunId>,
    /// R0+ names the run `plan_run_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_run_id: Option<RunId>,
    /// The plan step index.
    #[serde(deserialize_with = "lax_int")]
    pub step: i64,
    /// The end user, if any.
    pub end_user_id: Option<String>,
    /// W1–R5 only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_data: Option<IndexMap<String, String>>,
    /// Outcome.
    pub status: ToolCallStatus,
    /// Native JSON.
    pub input: Value,
    /// Native JSON.
    pub output: Value,
    /// A float, kept as written.
    pub latency_seconds: Number,
}

/// One entry of the HEAD `RunContext.step_output_values` (in memory only in the SDK); its value is
/// native JSON, unlike a stored output's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepOutputValue {
    /// The raw step result.
    pub value: Value,
    /// `"Output from step '<name>' …"` in the SDK.
    #[serde(default)]
    pub description: String,
    /// The PlanV2 step's name.
    pub step_name: String,
    /// The step's index.
    #[serde(deserialize_with = "lax_int")]
    pub step_num: i64,
}
