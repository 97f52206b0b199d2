//! PlanRunV2: one self-contained document per run.

use std::sync::Arc;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::clarification::Clarification;
use crate::config::Config;
use crate::end_user::EndUser;
use crate::ids::{self, PLAN_RUN_ID_PATTERN};
use crate::int;
use crate::output::{LocalDataValue, Output, StepOutputValue};
use crate::plan::PlanV2;
use crate::wire::{self, Nullable};
use planrun_wire::{serde_object, serde_unit};

/// The keys of a [`PlanRunV2`](crate::PlanRunV2), in its order; all but `legacy` required.
pub(crate) const FIELDS: [&str; 11] = [
    "id",
    "state",
    "current_step_index",
    "plan",
    "end_user",
    "step_output_values",
    "final_output",
    "plan_run_inputs",
    "config",
    "clarifications",
    "legacy",
];

/// A plan run with everything needed to read, resume or downgrade it: its plan, end user,
/// outputs, inputs, config and clarifications.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "PlanRunV2")]
pub struct PlanRunV2 {
    /// The run id, `prun-<uuid>`.
    #[serde(deserialize_with = "ids::plan_run")]
    #[schemars(pattern(PLAN_RUN_ID_PATTERN))]
    pub id: String,
    /// Where the run is in its life cycle.
    pub state: PlanRunState,
    /// Index into `plan.steps` of the step to run next (not bounded: the SDK accepts -1).
    #[serde(deserialize_with = "int::exact")]
    pub current_step_index: i64,
    // Held behind an `Arc`, as is the config: the runs of a store share them in memory.
    /// The plan the run executes.
    pub plan: Arc<PlanV2>,
    /// The end user the run executes for.
    pub end_user: EndUser,
    /// The outputs produced so far, in the order they were recorded.
    pub step_output_values: Vec<StepOutputValue>,
    /// The final output; `null` until the run has one.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<Output>")]
    pub final_output: Option<Output>,
    /// The values the run was started with, by plan input name.
    pub plan_run_inputs: IndexMap<String, LocalDataValue>,
    /// The configuration the run executes with (secrets redacted on output).
    pub config: Arc<Config>,
    /// The clarifications the run raised, in order.
    pub clarifications: Vec<Clarification>,
    /// Legacy data V2 has no field for, kept so a downgrade can restore it; absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy: Option<LegacyResidue>,
}

/// The life-cycle state of a run (the same six values in every SDK version).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(remote = "Self", rename_all = "SCREAMING_SNAKE_CASE")]
#[schemars(rename = "PlanRunState")]
pub enum PlanRunState {
    /// Created, no step run yet.
    NotStarted,
    /// Running.
    InProgress,
    /// Waiting for the user to resolve a clarification.
    NeedClarification,
    /// Clarifications resolved; the run can resume.
    ReadyToResume,
    /// Finished.
    Complete,
    /// Failed.
    Failed,
}

/// Data from the legacy source that V2 cannot hold, kept for a downgrade to read back.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "LegacyResidue")]
pub struct LegacyResidue {
    /// The legacy wire version the run was converted from, e.g. `R4` or `W1`.
    pub source_version: String,
    /// The kept values, keyed by JSON pointer into the legacy source document.
    #[serde(deserialize_with = "crate::wire::value_map")]
    pub entries: IndexMap<String, serde_json::Value>,
}

serde_object!(PlanRunV2, LegacyResidue);

impl PlanRunV2 {
    /// The agent-memory values the run's outputs point at, as `(run id, output name)`, step
    /// outputs first, then the final output: a store keeps each as
    /// `<run id>/<output name>.json`.
    pub fn agent_memory(&self) -> impl Iterator<Item = (&str, &str)> {
        self.step_output_values
            .iter()
            .map(|v| &v.output)
            .chain(self.final_output.as_ref())
            .filter_map(|output| match output {
                crate::Output::AgentMemory {
                    output_name,
                    plan_run_id,
                    ..
                } => Some((plan_run_id.as_str(), output_name.as_str())),
                crate::Output::Local { .. } => None,
            })
    }
}
serde_unit!(PlanRunState);
