//! The run object (`Workflow` in W1, `PlanRun` after) in each of its eight wire versions.
//! All are `forbid` in the SDK, and so here: an unknown key is an error.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::clarification::{Clarification, ClarificationRules, ClarificationsSeed};
use crate::context::{
    ExecutionContextR0, ExecutionContextR3, ExecutionContextR4, ExecutionContextW1,
};
use crate::id::{run_prefixes, PlanId, RunId, RunIdSeed};
use crate::output::{LocalDataValue, OldOutput, Output};
use crate::scalar::{lax_int, LaxInt};
use crate::version::Version;
use planrun_wire::{serde_object, serde_unit};

/// The run state; the same six values in every version.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self")]
#[schemars(rename = "RunState")]
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

serde_unit!(RunState);

/// The run's outputs: clarifications, step outputs and the final output.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Outputs")]
pub struct Outputs<O> {
    /// Questions put to the user, in order.
    #[serde(default)]
    pub clarifications: Vec<Clarification>,
    /// The step outputs, keyed by the plan step's `output` name (`$` included), in the order
    /// they were recorded.
    #[serde(default)]
    #[schemars(extend("default" = {}))]
    pub step_outputs: IndexMap<String, O>,
    /// The run's final output, or null.
    #[serde(default)]
    #[schemars(extend("default" = null))]
    pub final_output: Option<O>,
}

/// Reads a run's outputs as `version` writes them: its clarifications by that version's rules
/// ([`ClarificationRules`]), and no key but the three.
fn read_outputs<'de, D, O>(
    deserializer: D,
    rules: ClarificationRules,
) -> Result<Outputs<O>, D::Error>
where
    D: Deserializer<'de>,
    O: Deserialize<'de>,
{
    deserializer.deserialize_map(OutputsVisitor(rules, PhantomData))
}

struct OutputsVisitor<O>(ClarificationRules, PhantomData<O>);

const OUTPUTS_FIELDS: &[&str] = &["clarifications", "step_outputs", "final_output"];

impl<'de, O: Deserialize<'de>> Visitor<'de> for OutputsVisitor<O> {
    type Value = Outputs<O>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct Outputs")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Outputs<O>, A::Error> {
        let mut clarifications = None;
        let mut step_outputs = None;
        let mut final_output = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "clarifications" if clarifications.is_none() => {
                    clarifications = Some(map.next_value_seed(ClarificationsSeed(self.0))?);
                }
                "step_outputs" if step_outputs.is_none() => step_outputs = Some(map.next_value()?),
                "final_output" if final_output.is_none() => final_output = Some(map.next_value()?),
                "clarifications" | "step_outputs" | "final_output" => {
                    return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
                }
                other => return Err(de::Error::unknown_field(other, OUTPUTS_FIELDS)),
            }
        }
        Ok(Outputs {
            clarifications: clarifications.unwrap_or_default(),
            step_outputs: step_outputs.unwrap_or_default(),
            final_output: final_output.unwrap_or_default(),
        })
    }
}

/// The readers of a run struct's id and outputs by its version's rules, for their
/// `deserialize_with`.
macro_rules! version_readers {
    ($($id:ident, $outputs:ident => $version:ident);+ $(;)?) => {$(
        fn $id<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<RunId>, D::Error> {
            RunIdSeed(run_prefixes(Version::$version)).deserialize(deserializer).map(Some)
        }

        fn $outputs<'de, D, O>(deserializer: D) -> Result<Outputs<O>, D::Error>
        where
            D: Deserializer<'de>,
            O: Deserialize<'de>,
        {
            read_outputs(deserializer, ClarificationRules::of(Version::$version))
        }
    )+};
}

// R0 is read with R1's struct: the two versions' rules are the same (a test says so).
version_readers!(
    run_id_w1, outputs_w1 => W1;
    run_id_r1, outputs_r1 => R1;
    run_id_r2, outputs_r2 => R2;
    run_id_r3, outputs_r3 => R3;
    run_id_r4, outputs_r4 => R4;
    run_id_r5, outputs_r5 => R5;
    run_id_r6, outputs_r6 => R6;
);

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
    ($(#[$doc:meta])* $name:ident as $schema_name:literal { ec: $ec:ty, output: $out:ty, read_id: $read_id:literal, read_outputs: $read:literal $(, end_user_id: $eu:ident)? $(, plan_run_inputs: $pri:ident)? $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(remote = "Self", deny_unknown_fields)]
        #[schemars(rename = $schema_name)]
        pub struct $name {
            /// The run id; absent only in hand-made files (the SDK would generate one).
            #[serde(default, deserialize_with = $read_id, skip_serializing_if = "Option::is_none")]
            #[schemars(with = "RunId")]
            pub id: Option<RunId>,
            /// The plan this run executes (`plan-<uuid>.json` in the same store).
            pub plan_id: PlanId,
            /// Index into the plan's steps; not bounded (`-1` occurs).
            #[serde(default, deserialize_with = "lax_int")]
            #[schemars(with = "LaxInt")]
            pub current_step_index: i64,
            /// The run's state.
            #[serde(default)]
            pub state: RunState,
            /// The run's execution context, in the shape of its version.
            #[serde(default)]
            pub execution_context: $ec,
            $(
                /// The end user's `external_id` (`"local"` by default in the SDK).
                pub $eu: String,
            )?
            /// Clarifications, step outputs and the final output.
            #[serde(default, deserialize_with = $read)]
            pub outputs: Outputs<$out>,
            $(
                /// Values of the plan's inputs, by input name.
                #[serde(default)]
                pub $pri: IndexMap<String, LocalDataValue>,
            )?
        }

        serde_object!($name);
    };
}

run_struct!(
    /// A W1 run (0.0.1-alpha.50): the SDK's `Workflow`, with `wkfl-` ids, an execution context
    /// with `planner_`/`agent_system_context_extension`, and the single `Output`
    /// `{value, summary}`; clarifications name their run `workflow_id`.
    RunW1 as "RunW1" { ec: ExecutionContextW1, output: OldOutput, read_id: "run_id_w1", read_outputs: "outputs_w1" }
);
run_struct!(
    /// An R0 (0.1.0-alpha, `pr-` ids) or R1 (0.1.0 – 0.1.11, `prun-` ids) run: the SDK's
    /// `PlanRun`, with the execution context's extension keys renamed to
    /// `planning_agent_`/`execution_agent_system_context_extension`, the single `Output`
    /// `{value, summary}`, and clarifications naming their run `plan_run_id`.
    RunR1 as "RunR1" { ec: ExecutionContextR0, output: OldOutput, read_id: "run_id_r1", read_outputs: "outputs_r1" }
);
run_struct!(
    /// An R2 run (v0.1.12): as R1, but a step or final output may be an agent-memory reference
    /// `{output_name, plan_run_id, summary}`.
    RunR2 as "RunR2" { ec: ExecutionContextR0, output: Output, read_id: "run_id_r2", read_outputs: "outputs_r2" }
);
run_struct!(
    /// An R3 run (v0.2.0): as R2, but the execution context has lost its system-prompt
    /// extensions.
    RunR3 as "RunR3" { ec: ExecutionContextR3, output: Output, read_id: "run_id_r3", read_outputs: "outputs_r3" }
);
run_struct!(
    /// An R4 run (v0.3.0): the end user moves from the execution context to a required
    /// top-level `end_user_id`.
    RunR4 as "RunR4" { ec: ExecutionContextR4, output: Output, read_id: "run_id_r4", read_outputs: "outputs_r4", end_user_id: end_user_id }
);
run_struct!(
    /// An R5 run (v0.3.2): as R4, plus `plan_run_inputs`.
    RunR5 as "RunR5" { ec: ExecutionContextR4, output: Output, read_id: "run_id_r5", read_outputs: "outputs_r5", end_user_id: end_user_id, plan_run_inputs: plan_run_inputs }
);

/// R0 has the R1 shape with `pr-` ids.
pub type RunR0 = RunR1;

/// An R6 run (v0.3.4 to HEAD, v0.9): as R5 without the execution context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "RunR6")]
pub struct RunR6 {
    /// The run id; absent only in hand-made files (the SDK would generate one).
    #[serde(
        default,
        deserialize_with = "run_id_r6",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "RunId")]
    pub id: Option<RunId>,
    /// The plan this run executes (`plan-<uuid>.json` in the same store).
    pub plan_id: PlanId,
    /// Index into the plan's steps; not bounded (`-1` occurs).
    #[serde(default, deserialize_with = "lax_int")]
    #[schemars(with = "LaxInt")]
    pub current_step_index: i64,
    /// The run's state.
    #[serde(default)]
    pub state: RunState,
    /// The end user's `external_id`.
    pub end_user_id: String,
    /// Clarifications, step outputs and the final output.
    #[serde(default, deserialize_with = "outputs_r6")]
    pub outputs: Outputs<Output>,
    /// Values of the plan's inputs, by input name.
    #[serde(default)]
    pub plan_run_inputs: IndexMap<String, LocalDataValue>,
}

serde_object!(RunR6);

impl RunR6 {
    /// Reads the R6-shaped JSON tree the migration chain makes of a run of `source`: R6's rules,
    /// except that the clarifications keep the categories of `source` (see
    /// [`ClarificationRules::carried`]).
    pub fn from_chain_tree(
        mut tree: serde_json::Value,
        source: Version,
    ) -> Result<RunR6, serde_json::Error> {
        let outputs = tree.as_object_mut().and_then(|o| o.remove("outputs"));
        let mut run: RunR6 = serde_json::from_value(tree)?;
        if let Some(outputs) = outputs {
            run.outputs = read_outputs(outputs, ClarificationRules::carried(source, Version::R6))?;
        }
        Ok(run)
    }
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

    /// The run's clarifications.
    pub fn clarifications(&self) -> &[Clarification] {
        match self {
            LegacyRun::W1(r) => &r.outputs.clarifications,
            LegacyRun::R0(r) | LegacyRun::R1(r) => &r.outputs.clarifications,
            LegacyRun::R2(r) => &r.outputs.clarifications,
            LegacyRun::R3(r) => &r.outputs.clarifications,
            LegacyRun::R4(r) => &r.outputs.clarifications,
            LegacyRun::R5(r) => &r.outputs.clarifications,
            LegacyRun::R6(r) => &r.outputs.clarifications,
        }
    }
}
