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

/// The row `w1.planner_ext`.
pub static W1_PLANNER_EXT: Row = Row {
    id: "w1.planner_ext",
    from: Some(W1),
    op: RenameKey {
        at: "/execution_context",
        from: "planner_system_context_extension",
        to: "planning_agent_system_context_extension",
    },
    note: "renamed with Workflow → PlanRun in 0.1.0-alpha: the planner became the planning agent",
};

/// The row `w1.agent_ext`.
pub static W1_AGENT_EXT: Row = Row {
    id: "w1.agent_ext",
    from: Some(W1),
    op: RenameKey {
        at: "/execution_context",
        from: "agent_system_context_extension",
        to: "execution_agent_system_context_extension",
    },
    note: "renamed with Workflow → PlanRun in 0.1.0-alpha: the agent became the execution agent",
};

/// The row `w1.workflow_id`.
pub static W1_WORKFLOW_ID: Row = Row {
    id: "w1.workflow_id",
    from: Some(W1),
    op: RenameKey {
        at: "/outputs/clarifications/*",
        from: "workflow_id",
        to: "plan_run_id",
    },
    note: "clarifications name their run plan_run_id from 0.1.0-alpha on",
};

/// The row `w1.id_prefix`.
pub static W1_ID_PREFIX: Row = Row {
    id: "w1.id_prefix",
    from: Some(W1),
    op: RewritePrefix {
        at: "/id",
        from: "wkfl",
        to: "pr",
    },
    note: "Workflow ids become PlanRun ids in 0.1.0-alpha",
};

/// The row `w1.clar_prefix`.
pub static W1_CLAR_PREFIX: Row = Row { id: "w1.clar_prefix", from: Some(W1), op: RewritePrefix { at: "/outputs/clarifications/*/plan_run_id", from: "wkfl", to: "pr" }, note: "a clarification points at its run, whose id was rewritten, so its reference is rewritten too" };

/// The row `r0.id_prefix`.
pub static R0_ID_PREFIX: Row = Row {
    id: "r0.id_prefix",
    from: Some(R0),
    op: RewritePrefix {
        at: "/id",
        from: "pr",
        to: "prun",
    },
    note: "run ids are prefixed prun- from 0.1.0 on",
};

/// The row `r0.clar_prefix`.
pub static R0_CLAR_PREFIX: Row = Row { id: "r0.clar_prefix", from: Some(R0), op: RewritePrefix { at: "/outputs/clarifications/*/plan_run_id", from: "pr", to: "prun" }, note: "a clarification points at its run, whose id was rewritten, so its reference is rewritten too" };

/// The row `r2.planning_ext`.
pub static R2_PLANNING_EXT: Row = Row { id: "r2.planning_ext", from: Some(R2), op: ToResidue { at: "/execution_context/planning_agent_system_context_extension" }, note: "system-context extensions were removed in v0.2.0; V2 has no slot, so the value is kept in the residue" };

/// The row `r2.execution_ext`.
pub static R2_EXECUTION_EXT: Row = Row { id: "r2.execution_ext", from: Some(R2), op: ToResidue { at: "/execution_context/execution_agent_system_context_extension" }, note: "system-context extensions were removed in v0.2.0; V2 has no slot, so the value is kept in the residue" };

/// The row `r3.end_user_id`.
pub static R3_END_USER_ID: Row = Row { id: "r3.end_user_id", from: Some(R3), op: Move { from: "/execution_context/end_user_id", to: "/end_user_id", default: "\"portia:default_user\"" }, note: "the end user moved to a required top-level key in v0.3.0; an unset end user (null before v0.3.0) becomes the SDK's default end user \"portia:default_user\" (Portia.initialize_end_user, v0.3.0 to HEAD)" };

/// The row `r4.plan_run_inputs`.
pub static R4_PLAN_RUN_INPUTS: Row = Row {
    id: "r4.plan_run_inputs",
    from: Some(R4),
    op: Default {
        at: "",
        key: "plan_run_inputs",
        value: "{}",
    },
    note: "run inputs arrived in v0.3.2; older runs had none",
};

/// The row `r5.execution_context`.
pub static R5_EXECUTION_CONTEXT: Row = Row { id: "r5.execution_context", from: Some(R5), op: ToResidue { at: "/execution_context" }, note: "execution_context was removed in v0.3.4; it is kept in the residue, and its additional_data is also merged into the end user" };

/// The row `v2.current_step_id`.
pub static V2_CURRENT_STEP_ID: Row = Row {
    id: "v2.current_step_id",
    from: None,
    op: Mapping {
        from: "/run/current_step_id",
        to: "/current_step_index",
    },
    note: "the dialect of the original design names the step position current_step_id",
};

/// The row `v2.plan_id`.
pub static V2_PLAN_ID: Row = Row {
    id: "v2.plan_id",
    from: None,
    op: Mapping {
        from: "/run/plan_id",
        to: "/plan",
    },
    note: "the run embeds its plan, converted to PlanV2",
};

/// The row `v2.end_user_id`.
pub static V2_END_USER_ID: Row = Row {
    id: "v2.end_user_id",
    from: None,
    op: Mapping {
        from: "/run/end_user_id",
        to: "/end_user",
    },
    note: "the run embeds its end user (the store's <external_id>.json, else a default EndUser)",
};

/// The row `v2.additional_data`.
pub static V2_ADDITIONAL_DATA: Row = Row { id: "v2.additional_data", from: None, op: Mapping { from: "/run/execution_context/additional_data", to: "/end_user/additional_data" }, note: "context data is merged under the end user's own; on a conflict the stored EndUser wins and the context's value stays in the residue" };

/// The row `v2.step_outputs`.
pub static V2_STEP_OUTPUTS: Row = Row { id: "v2.step_outputs", from: None, op: Mapping { from: "/run/outputs/step_outputs", to: "/step_output_values" }, note: "step outputs become StepOutputValues, matched to plan steps by output name, then by $step_N_output; an unmatched one keeps its key as output_name" };

/// The row `v2.final_output`.
pub static V2_FINAL_OUTPUT: Row = Row {
    id: "v2.final_output",
    from: None,
    op: Mapping {
        from: "/run/outputs/final_output",
        to: "/final_output",
    },
    note: "the outputs container is flattened",
};

/// The row `v2.clarifications`.
pub static V2_CLARIFICATIONS: Row = Row {
    id: "v2.clarifications",
    from: None,
    op: Mapping {
        from: "/run/outputs/clarifications",
        to: "/clarifications",
    },
    note: "kept (the original V2 design dropped them)",
};

/// The row `v2.plan_run_inputs`.
pub static V2_PLAN_RUN_INPUTS: Row = Row {
    id: "v2.plan_run_inputs",
    from: None,
    op: Mapping {
        from: "/run/plan_run_inputs",
        to: "/plan_run_inputs",
    },
    note: "values kept as the strings the SDK stored; nothing is decoded",
};

/// The row `v2.config`.
pub static V2_CONFIG: Row = Row {
    id: "v2.config",
    from: None,
    op: Mapping {
        from: "/config",
        to: "/config",
    },
    note: "the --config file laid over the SDK's defaults; secrets are always written masked",
};

/// The row `plan.inputs`.
pub static PLAN_INPUTS: Row = Row {
    id: "plan.inputs",
    from: None,
    op: Mapping {
        from: "/plan/inputs",
        to: "/plan/plan_inputs",
    },
    note: "v0.3.2 plan inputs were renamed plan_inputs in v0.3.4",
};

/// The row `plan.query`.
pub static PLAN_QUERY: Row = Row {
    id: "plan.query",
    from: None,
    op: Mapping {
        from: "/plan/plan_context/query",
        to: "/plan/label",
    },
    note: "PlanV2 has no plan context: the legacy query becomes its label",
};

/// The row `plan.tool_ids`.
pub static PLAN_TOOL_IDS: Row = Row {
    id: "plan.tool_ids",
    from: None,
    op: Mapping {
        from: "/plan/plan_context/tool_ids",
        to: "/plan/tool_ids",
    },
    note: "the planner's tool list, out of the plan context",
};

/// The row `plan.steps`.
pub static PLAN_STEPS: Row = Row { id: "plan.steps", from: None, op: Mapping { from: "/plan/steps", to: "/plan/steps" }, note: "steps stay 1:1; a step that is exactly what the SDK's to_legacy_plan writes for a Plan Builder step gets that PlanV2 type, any other the legacy type, verbatim" };

/// The whole table, in chain order.
pub static TABLE: &[&Row] = &[
    &W1_PLANNER_EXT,
    &W1_AGENT_EXT,
    &W1_WORKFLOW_ID,
    &W1_ID_PREFIX,
    &W1_CLAR_PREFIX,
    &R0_ID_PREFIX,
    &R0_CLAR_PREFIX,
    &R2_PLANNING_EXT,
    &R2_EXECUTION_EXT,
    &R3_END_USER_ID,
    &R4_PLAN_RUN_INPUTS,
    &R5_EXECUTION_CONTEXT,
    &V2_CURRENT_STEP_ID,
    &V2_PLAN_ID,
    &V2_END_USER_ID,
    &V2_ADDITIONAL_DATA,
    &V2_STEP_OUTPUTS,
    &V2_FINAL_OUTPUT,
    &V2_CLARIFICATIONS,
    &V2_PLAN_RUN_INPUTS,
    &V2_CONFIG,
    &PLAN_INPUTS,
    &PLAN_QUERY,
    &PLAN_TOOL_IDS,
    &PLAN_STEPS,
];

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
