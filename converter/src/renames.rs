//! The rename table: every rename, move, default and prefix rewrite between consecutive legacy
//! versions, and the mapping of the last legacy version onto `PlanRunV2`. The chain interprets the
//! legacy rows; the final step and the plan conversion cite theirs by their constants (a typo
//! does not compile); `planrun renames` and docs/formats.md print them all from here.

use serde::Serialize;

use planrun_legacy::Version;

/// One operation on a run document. Paths are JSON pointers into the run; `*` stands for every
/// element of an array (or every value of an object) at that level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// Renames key `from` to `to` in the object(s) at `at`, keeping its position.
    RenameKey {
        /// Where the object is.
        at: &'static str,
        /// Old key.
        from: &'static str,
        /// New key.
        to: &'static str,
    },
    /// Rewrites the prefix of the id string(s) at `at`.
    RewritePrefix {
        /// Where the id is.
        at: &'static str,
        /// Old prefix, without `-`.
        from: &'static str,
        /// New prefix, without `-`.
        to: &'static str,
    },
    /// Moves the value at `from` to `to` (a key of an existing object, added last);
    /// a `null` or missing value becomes `default` (JSON text).
    Move {
        /// Old place.
        from: &'static str,
        /// New place.
        to: &'static str,
        /// Used when the old value is null or absent.
        default: &'static str,
    },
    /// Adds key `key` with `value` (JSON text) to the object at `at` when it is absent.
    Default {
        /// Where the object is.
        at: &'static str,
        /// The key.
        key: &'static str,
        /// Its default, as JSON text.
        value: &'static str,
    },
    /// Removes the value at `at`; the V2 document keeps it in its `legacy` residue.
    ToResidue {
        /// Where the value is.
        at: &'static str,
    },
    /// A mapping done by code (the final step to V2, the plan conversion); listed for the record.
    Mapping {
        /// Source, in the virtual legacy document (`/run/…`, `/plan/…`, `/end_user/…`).
        from: &'static str,
        /// Target in the V2 document.
        to: &'static str,
    },
}

/// A row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Row {
    /// A stable id, cited in loss reports.
    pub id: &'static str,
    /// The version the row applies to (it takes a document of this version to the next one);
    /// `None` for the final step to V2.
    #[serde(serialize_with = "serialize_from")]
    pub from: Option<Version>,
    /// What it does.
    #[serde(flatten)]
    pub op: Op,
    /// Why, in words.
    pub note: &'static str,
}

#[allow(
    clippy::trivially_copy_pass_by_ref,
    clippy::ref_option,
    reason = "serde's serialize_with hands over a reference"
)]
fn serialize_from<S: serde::Serializer>(v: &Option<Version>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.serialize_str(v.as_str()),
        None => s.serialize_str("R6→V2"),
    }
}

use Op::*;
use Version::*;

/// Declares each row as a constant named after its id (which cites it in code), then [`TABLE`]:
/// the rows in the order given, the chain's.
macro_rules! rows {
    ($($name:ident = $id:literal, $from:expr, $op:expr, $note:literal;)*) => {
        $(
            #[doc = concat!("The row `", $id, "`.")]
            pub static $name: Row = Row { id: $id, from: $from, op: $op, note: $note };
        )*
        /// The whole table, in chain order.
        pub static TABLE: &[&Row] = &[$(&$name),*];
    };
}

rows! {
    W1_PLANNER_EXT = "w1.planner_ext", Some(W1),
        RenameKey { at: "/execution_context", from: "planner_system_context_extension", to: "planning_agent_system_context_extension" },
        "renamed with Workflow → PlanRun in 0.1.0-alpha: the planner became the planning agent";

    W1_AGENT_EXT = "w1.agent_ext", Some(W1),
        RenameKey { at: "/execution_context", from: "agent_system_context_extension", to: "execution_agent_system_context_extension" },
        "renamed with Workflow → PlanRun in 0.1.0-alpha: the agent became the execution agent";

    W1_WORKFLOW_ID = "w1.workflow_id", Some(W1),
        RenameKey { at: "/outputs/clarifications/*", from: "workflow_id", to: "plan_run_id" },
        "clarifications name their run plan_run_id from 0.1.0-alpha on";

    W1_ID_PREFIX = "w1.id_prefix", Some(W1),
        RewritePrefix { at: "/id", from: "wkfl", to: "pr" },
        "Workflow ids become PlanRun ids in 0.1.0-alpha";

    W1_CLAR_PREFIX = "w1.clar_prefix", Some(W1),
        RewritePrefix { at: "/outputs/clarifications/*/plan_run_id", from: "wkfl", to: "pr" },
        "a clarification points at its run, whose id was rewritten, so its reference is rewritten too";

    R0_ID_PREFIX = "r0.id_prefix", Some(R0),
        RewritePrefix { at: "/id", from: "pr", to: "prun" },
        "run ids are prefixed prun- from 0.1.0 on";

    R0_CLAR_PREFIX = "r0.clar_prefix", Some(R0),
        RewritePrefix { at: "/outputs/clarifications/*/plan_run_id", from: "pr", to: "prun" },
        "a clarification points at its run, whose id was rewritten, so its reference is rewritten too";

    R2_PLANNING_EXT = "r2.planning_ext", Some(R2),
        ToResidue { at: "/execution_context/planning_agent_system_context_extension" },
        "system-context extensions were removed in v0.2.0; V2 has no slot, so the value is kept in the residue";

    R2_EXECUTION_EXT = "r2.execution_ext", Some(R2),
        ToResidue { at: "/execution_context/execution_agent_system_context_extension" },
        "system-context extensions were removed in v0.2.0; V2 has no slot, so the value is kept in the residue";

    R3_END_USER_ID = "r3.end_user_id", Some(R3),
        Move { from: "/execution_context/end_user_id", to: "/end_user_id", default: "\"portia:default_user\"" },
        "the end user moved to a required top-level key in v0.3.0; an unset end user (null before v0.3.0) becomes the SDK's default end user \"portia:default_user\" (Portia.initialize_end_user, v0.3.0 to HEAD)";

    R4_PLAN_RUN_INPUTS = "r4.plan_run_inputs", Some(R4),
        Default { at: "", key: "plan_run_inputs", value: "{}" },
        "run inputs arrived in v0.3.2; older runs had none";

    R5_EXECUTION_CONTEXT = "r5.execution_context", Some(R5),
        ToResidue { at: "/execution_context" },
        "execution_context was removed in v0.3.4; it is kept in the residue, and its additional_data is also merged into the end user";

    V2_CURRENT_STEP_ID = "v2.current_step_id", None,
        Mapping { from: "/run/current_step_id", to: "/current_step_index" },
        "the dialect of the original design names the step position current_step_id";

    V2_PLAN_ID = "v2.plan_id", None,
        Mapping { from: "/run/plan_id", to: "/plan" },
        "the run embeds its plan, converted to PlanV2";

    V2_END_USER_ID = "v2.end_user_id", None,
        Mapping { from: "/run/end_user_id", to: "/end_user" },
        "the run embeds its end user (the store's <external_id>.json, else a default EndUser)";

    V2_ADDITIONAL_DATA = "v2.additional_data", None,
        Mapping { from: "/run/execution_context/additional_data", to: "/end_user/additional_data" },
        "context data is merged under the end user's own; on a conflict the stored EndUser wins and the context's value stays in the residue";

    V2_STEP_OUTPUTS = "v2.step_outputs", None,
        Mapping { from: "/run/outputs/step_outputs", to: "/step_output_values" },
        "step outputs become StepOutputValues, matched to plan steps by output name, then by $step_N_output; an unmatched one keeps its key as output_name";

    V2_FINAL_OUTPUT = "v2.final_output", None,
        Mapping { from: "/run/outputs/final_output", to: "/final_output" },
        "the outputs container is flattened";

    V2_CLARIFICATIONS = "v2.clarifications", None,
        Mapping { from: "/run/outputs/clarifications", to: "/clarifications" },
        "kept (the original V2 design dropped them)";

    V2_PLAN_RUN_INPUTS = "v2.plan_run_inputs", None,
        Mapping { from: "/run/plan_run_inputs", to: "/plan_run_inputs" },
        "values kept as the strings the SDK stored; nothing is decoded";

    V2_CONFIG = "v2.config", None,
        Mapping { from: "/config", to: "/config" },
        "the --config file laid over the SDK's defaults; secrets are always written masked";

    PLAN_INPUTS = "plan.inputs", None,
        Mapping { from: "/plan/inputs", to: "/plan/plan_inputs" },
        "v0.3.2 plan inputs were renamed plan_inputs in v0.3.4";

    PLAN_QUERY = "plan.query", None,
        Mapping { from: "/plan/plan_context/query", to: "/plan/label" },
        "PlanV2 has no plan context: the legacy query becomes its label";

    PLAN_TOOL_IDS = "plan.tool_ids", None,
        Mapping { from: "/plan/plan_context/tool_ids", to: "/plan/tool_ids" },
        "the planner's tool list, out of the plan context";

    PLAN_STEPS = "plan.steps", None,
        Mapping { from: "/plan/steps", to: "/plan/steps" },
        "steps stay 1:1; a step that is exactly what the SDK's to_legacy_plan writes for a Plan Builder step gets that PlanV2 type, any other the legacy type, verbatim";
}

/// The rows that take a document of `version` to the next version.
pub fn rows_from(version: Version) -> impl Iterator<Item = &'static Row> {
    TABLE
        .iter()
        .copied()
        .filter(move |row| row.from == Some(version))
}

impl Row {
    /// `W1→R0`, or `R6→V2` for the final mapping.
    pub fn step(&self) -> String {
        match self.from {
            Some(v) => {
                let next = Version::ALL[(v as usize + 1).min(Version::ALL.len() - 1)];
                format!("{v}→{next}")
            }
            None => "R6→V2".to_owned(),
        }
    }

    /// The operation in words, e.g. `rename /execution_context/planner_… → …`.
    pub fn describe(&self) -> String {
        match self.op {
            RenameKey { at, from, to } => format!("rename {at}/{from} → {at}/{to}"),
            RewritePrefix { at, from, to } => format!("prefix {at}: {from}- → {to}-"),
            Move { from, to, default } => format!("move {from} → {to} (null → {default})"),
            Default { at, key, value } => format!("default {at}/{key} = {value}"),
            ToResidue { at } => format!("keep {at} in /legacy"),
            Mapping { from, to } => format!("map {from} → {to}"),
        }
    }
}

/// The table as Markdown, as docs/formats.md shows it.
pub fn markdown() -> String {
    let mut out = String::from("| id | step | operation | why |\n|---|---|---|---|\n");
    for row in TABLE {
        out.push_str(&format!(
            "| `{}` | {} | `{}` | {} |\n",
            row.id,
            row.step(),
            row.describe(),
            row.note
        ));
    }
    out
}

/// The table as aligned text.
pub fn text() -> String {
    TABLE
        .iter()
        .map(|row| {
            format!(
                "{:<20} {:<6} {}  ({})\n",
                row.id,
                row.step(),
                row.describe(),
                row.note
            )
        })
        .collect()
}
