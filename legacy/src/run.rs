//! The run object (`Workflow` in W1, `PlanRun` after) in each of its eight wire versions (§2.2).
//! All are `forbid` in the SDK, and so here: an unknown key is an error.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::clarification::Clarification;
use crate::context::{
    ExecutionContextR0, ExecutionContextR3, ExecutionContextR4, ExecutionContextW1,
};
use crate::id::{PlanId, RunId};
use crate::output::{LocalDataValue, OldOutput, Output};
use crate::scalar::lax_int;
use crate::version::Version;

/// The run state; the same six values in every version.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
pub enum RunState {
    /// Created, not run.
    #[default]
    NOT_STARTED,
    /// Running.
    IN_PROGRESS,
    /// Waiting for the user.
    NEED_CLARIFICATION,
    /// The user answered; can resume.
    READY_TO_RESUME,
    /// Done.
    COMPLETE,
    /// Raised.
    FAILED,
}

/// The outputs container, generic over the output type of its era.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outputs<O> {
    /// Questions put to the user, in order.
    #[serde(default)]
    pub clarifications: Vec<Clarification>,
    /// Keyed by the plan step's `output` name, `$` included; insertion order kept.
    #[serde(default = "IndexMap::new")]
    pub step_outputs: IndexMap<String, O>,
    /// The run's final output.
    #[serde(default = "none")]
    pub final_output: Option<O>,
}

fn none<T>() -> Option<T> {
    None
}

impl<O> Default for Outputs<O> {
    fn default() -> Self {
        Outputs {
            clarifications: Vec::new(),
            step_outputs: IndexMap::new(),
            final_output: None,
        }
    }
}

macro_rules! run_struct {
    ($(#[$doc:meta])* $name:ident { ec: $ec:ty, output: $out:ty $(, end_user_id: $eu:ident)? $(, plan_run_inputs: $pri:ident)? $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            /// The run id; absent only in hand-made files (the SDK would generate one).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub id: Option<RunId>,
            /// The plan this run executes (`plan-<uuid>.json` in the same store).
            pub plan_id: PlanId,
            /// Index into the plan's steps; not bounded (`-1` occurs).
            #[serde(default, deserialize_with = "lax_int")]
            pub current_step_index: i64,
            /// Where the run is.
            #[serde(default)]
            pub state: RunState,
            /// Per-run context of its era.
            #[serde(default)]
            pub execution_context: $ec,
            $(
                /// The end user's `external_id` (`"local"` by default in the SDK).
                pub $eu: String,
            )?
            /// Clarifications and outputs.
            #[serde(default)]
            pub outputs: Outputs<$out>,
            $(
                /// Values of the plan's inputs, by input name.
                #[serde(default)]
                pub $pri: IndexMap<String, LocalDataValue>,
            )?
        }
    };
}

run_struct!(
    /// W1: `Workflow`, `wkfl-` ids.
    RunW1 { ec: ExecutionContextW1, output: OldOutput }
);
run_struct!(
    /// R0 (`pr-` ids) and R1 (`prun-` ids): renamed context keys, the old single `Output`.
    RunR1 { ec: ExecutionContextR0, output: OldOutput }
);
run_struct!(
    /// R2: outputs may be agent-memory references.
    RunR2 { ec: ExecutionContextR0, output: Output }
);
run_struct!(
    /// R3: the context loses its system-prompt extensions.
    RunR3 { ec: ExecutionContextR3, output: Output }
);
run_struct!(
    /// R4: the end user moves to a required top-level `end_user_id`.
    RunR4 { ec: ExecutionContextR4, output: Output, end_user_id: end_user_id }
);
run_struct!(
    /// R5: `plan_run_inputs` added.
    RunR5 { ec: ExecutionContextR4, output: Output, end_user_id: end_user_id, plan_run_inputs: plan_run_inputs }
);

/// R0 has the R1 shape with `pr-` ids.
pub type RunR0 = RunR1;

/// R6 (HEAD): no execution context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunR6 {
    /// The run id; absent only in hand-made files (the SDK would generate one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RunId>,
    /// The plan this run executes.
    pub plan_id: PlanId,
    /// Index into the plan's steps; not bounded (`-1` occurs).
    #[serde(default, deserialize_with = "lax_int")]
    pub current_step_index: i64,
    /// Where the run is.
    #[serde(default)]
    pub state: RunState,
    /// The end user's `external_id`.
    pub end_user_id: String,
    /// Clarifications and outputs.
    #[serde(default)]
    pub outputs: Outputs<Output>,
    /// Values of the plan's inputs, by input name.
    #[serde(default)]
    pub plan_run_inputs: IndexMap<String, LocalDataValue>,
}

/// A run in any legacy version.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum LegacyRun {
    /// W1.
    W1(RunW1),
    /// R0.
    R0(RunR0),
    /// R1.
    R1(RunR1),
    /// R2.
    R2(RunR2),
    /// R3.
    R3(RunR3),
    /// R4.
    R4(RunR4),
    /// R5.
    R5(RunR5),
    /// R6.
    R6(RunR6),
}

impl LegacyRun {
    /// The wire version this value is in.
    pub fn version(&self) -> Version {
        match self {
            LegacyRun::W1(_) => Version::W1,
            LegacyRun::R0(_) => Version::R0,
            LegacyRun::R1(_) => Version::R1,
            LegacyRun::R2(_) => Version::R2,
            LegacyRun::R3(_) => Version::R3,
            LegacyRun::R4(_) => Version::R4,
            LegacyRun::R5(_) => Version::R5,
            LegacyRun::R6(_) => Version::R6,
        }
    }

    /// The run id, if the file has one.
    pub fn id(&self) -> Option<RunId> {
        match self {
            LegacyRun::W1(r) => r.id,
            LegacyRun::R0(r) | LegacyRun::R1(r) => r.id,
            LegacyRun::R2(r) => r.id,
            LegacyRun::R3(r) => r.id,
            LegacyRun::R4(r) => r.id,
            LegacyRun::R5(r) => r.id,
            LegacyRun::R6(r) => r.id,
        }
    }

    /// The plan id.
    pub fn plan_id(&self) -> PlanId {
        match self {
            LegacyRun::W1(r) => r.plan_id,
            LegacyRun::R0(r) | LegacyRun::R1(r) => r.plan_id,
            LegacyRun::R2(r) => r.plan_id,
            LegacyRun::R3(r) => r.plan_id,
            LegacyRun::R4(r) => r.plan_id,
            LegacyRun::R5(r) => r.plan_id,
            LegacyRun::R6(r) => r.plan_id,
        }
    }
}
