//! The migration chain W1 → R0 → … → R6, one small pure step per version. The rename table's
//! rows are its specification: [`reference`] interprets them on the run's JSON tree, and
//! [`to_r6`] applies each version's rows as a typed function on the run's structs, with the
//! pointers, defaults and notes of its report taken from the table. The two are tested to give
//! the same run, residue and report; a row the typed steps do not know (not in [`TYPED_ROWS`])
//! sends every run it applies to through the reference instead.

pub mod reference;

use std::sync::OnceLock;

use indexmap::IndexMap;
use planrun_wire::join;
use serde::de::DeserializeOwned;
use serde_json::Value;

use planrun_legacy::{
    ExecutionContextR3, ExecutionContextR4, LegacyRun, Outputs, Prefix, RunId, RunR1, RunR2, RunR3,
    RunR4, RunR5, RunR6, RunRefKey, RunW1, Version,
};
use planrun_wire::json::escape_pointer_token;

use crate::renames::{self, rows_from, Op, Row, TABLE};
use crate::report::{EntryKind, LossReport};

/// A run brought to R6, with what the chain moved out of it and what it did.
#[derive(Debug, Clone, PartialEq)]
pub struct AtR6 {
    /// The run in the R6 shape.
    pub run: RunR6,
    /// Values R6 cannot hold, by their pointer in the virtual legacy document (`/run/…`).
    pub residue: IndexMap<String, Value>,
    /// One entry per datum the chain touched.
    pub report: LossReport,
    /// The version the chain started from.
    pub source_version: Version,
}

/// Why the chain could not finish; a bug in the table or the models, never bad input (bad input
/// is rejected by the legacy parser before the chain runs).
#[derive(Debug, thiserror::Error)]
#[error("the chain produced an invalid R6 run: {0}")]
pub struct ChainError(#[from] serde_json::Error);

/// The legacy rows the typed steps implement, in table order.
pub const TYPED_ROWS: &[&str] = &[
    renames::W1_PLANNER_EXT.id,
    renames::W1_AGENT_EXT.id,
    renames::W1_WORKFLOW_ID.id,
    renames::W1_ID_PREFIX.id,
    renames::W1_CLAR_PREFIX.id,
    renames::R0_ID_PREFIX.id,
    renames::R0_CLAR_PREFIX.id,
    renames::R2_PLANNING_EXT.id,
    renames::R2_EXECUTION_EXT.id,
    renames::R3_END_USER_ID.id,
    renames::R4_PLAN_RUN_INPUTS.id,
    renames::R5_EXECUTION_CONTEXT.id,
];

/// Brings a run of any version to R6 with the typed steps, or with the [`reference`] when a row
/// that applies to it is not one of [`TYPED_ROWS`].
pub fn to_r6(run: &LegacyRun) -> Result<AtR6, ChainError> {
    let source_version = run.version();
    if !typed_from(source_version) {
        return reference::to_r6(run);
    }
    let mut chain = Typed::default();
    let mut at = run.clone();
    let r6 = loop {
        at = match at {
            LegacyRun::W1(r) => LegacyRun::R0(chain.w1(r)),
            LegacyRun::R0(r) => LegacyRun::R1(chain.r0(r)),
            LegacyRun::R1(r) => LegacyRun::R2(chain.r1(r)),
            LegacyRun::R2(r) => LegacyRun::R3(chain.r2(r)),
            LegacyRun::R3(r) => LegacyRun::R4(chain.r3(r)),
            LegacyRun::R4(r) => LegacyRun::R5(chain.r4(r)),
            LegacyRun::R5(r) => LegacyRun::R6(chain.r5(r)),
            LegacyRun::R6(r) => break r,
        };
    };
    Ok(AtR6 {
        run: r6,
        residue: chain.residue,
        report: chain.report,
        source_version,
    })
}

/// Whether every row from `version` on is one of [`TYPED_ROWS`].
fn typed_from(version: Version) -> bool {
    static TYPED: OnceLock<Vec<bool>> = OnceLock::new();
    TYPED.get_or_init(|| {
        Version::ALL
            .into_iter()
            .map(|from| {
                Version::ALL
                    .into_iter()
                    .filter(|v| *v >= from)
                    .flat_map(rows_from)
                    .all(|row| TYPED_ROWS.contains(&row.id))
            })
            .collect()
    })[version as usize]
}

/// `W1→R0 w1.id: why`, as every entry of a row cites it; written once per row of the table.
pub(crate) fn note(row: &'static Row) -> &'static str {
    static NOTES: OnceLock<Vec<String>> = OnceLock::new();
    let notes = NOTES.get_or_init(|| {
        TABLE
            .iter()
            .map(|row| format!("{} {}: {}", row.step(), row.id, row.note))
            .collect()
    });
    let index = TABLE
        .iter()
        .position(|r| std::ptr::eq(*r, row))
        .expect("a row of the table");
    &notes[index]
}

/// What the typed steps collect on the way.
#[derive(Default)]
struct Typed {
    residue: IndexMap<String, Value>,
    report: LossReport,
}

/// The run-id prefix rows' old and new prefixes.
fn prefixes(row: &'static Row) -> (Prefix, Prefix, &'static str) {
    let Op::RewritePrefix { at, from, to } = row.op else {
        panic!("{} is not a prefix rewrite", row.id)
    };
    let parse = |text: &str| {
        [Prefix::Wkfl, Prefix::Pr, Prefix::Prun]
            .into_iter()
            .find(|p| p.as_str() == text)
            .unwrap_or_else(|| panic!("{}: {text} is not a run prefix", row.id))
    };
    (parse(from), parse(to), at)
}

/// A default of the table, as the type it fills.
fn default_of<T: DeserializeOwned>(row: &'static Row, text: &str) -> T {
    serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("{}: the default {text} does not fit: {e}", row.id))
}

impl Typed {
    fn renamed(&mut self, row: &'static Row, at: &str) {
        let Op::RenameKey { from, to, .. } = row.op else {
            panic!("{} is not a rename", row.id)
        };
        self.report.push(
            EntryKind::Renamed,
            Some(join!("/run", at, "/", escape_pointer_token(from))),
            Some(join!("/run", at, "/", escape_pointer_token(to))),
            note(row),
            None,
        );
    }

    fn coerced(&mut self, row: &'static Row, place: String) {
        self.report.push(
            EntryKind::Coerced,
            Some(place.clone()),
            Some(place),
            note(row),
            None,
        );
    }

    fn keep_in_residue(&mut self, row: &'static Row, value: Value) {
        let Op::ToResidue { at } = row.op else {
            panic!("{} does not keep a value in the residue", row.id)
        };
        let key = join!("/run", at);
        self.report.push(
            EntryKind::Moved,
            Some(key.clone()),
            Some(join!("/legacy/entries/", escape_pointer_token(&key))),
            note(row),
            None,
        );
        self.residue.insert(key, value);
    }

    /// A run-id prefix row on the run's id and on its clarifications' run references.
    fn rewrite_prefixes(
        &mut self,
        id: &mut Option<RunId>,
        clarifications: &mut [planrun_legacy::Clarification],
        id_row: &'static Row,
        clar_row: &'static Row,
    ) {
        let (from, to, at) = prefixes(id_row);
        if let Some(run_id) = id.as_mut().filter(|i| i.0.prefix() == from) {
            *run_id = RunId(run_id.0.with_prefix(to));
            self.coerced(id_row, join!("/run", at));
        }
        let (from, to, at) = prefixes(clar_row);
        let (list, field) = at
            .split_once("/*/")
            .filter(|(_, field)| *field == RunRefKey::PlanRunId.as_str())
            .unwrap_or_else(|| panic!("{}: not a clarification's plan_run_id", clar_row.id));
        for (i, clar) in clarifications.iter_mut().enumerate() {
            if let Some((RunRefKey::PlanRunId, Some(run_id))) = clar.run_ref.as_mut() {
                if run_id.0.prefix() == from {
                    *run_id = RunId(run_id.0.with_prefix(to));
                    self.coerced(clar_row, join!("/run", list, "/", i, "/", field));
                }
            }
        }
    }

    fn w1(&mut self, run: RunW1) -> RunR1 {
        let ec = run.execution_context;
        let (planner, agent) = (&renames::W1_PLANNER_EXT, &renames::W1_AGENT_EXT);
        self.renamed(planner, "/execution_context");
        self.renamed(agent, "/execution_context");
        let mut outputs = run.outputs;
        let workflow_id = &renames::W1_WORKFLOW_ID;
        let Op::RenameKey { at, .. } = workflow_id.op else {
            unreachable!()
        };
        for (i, clar) in outputs.clarifications.iter_mut().enumerate() {
            if let Some((key @ RunRefKey::WorkflowId, _)) = clar.run_ref.as_mut() {
                *key = RunRefKey::PlanRunId;
                self.renamed(workflow_id, &at.replace('*', &i.to_string()));
            }
        }
        let mut id = run.id;
        self.rewrite_prefixes(
            &mut id,
            &mut outputs.clarifications,
            &renames::W1_ID_PREFIX,
            &renames::W1_CLAR_PREFIX,
        );
        RunR1 {
            id,
            plan_id: run.plan_id,
            current_step_index: run.current_step_index,
            state: run.state,
            execution_context: planrun_legacy::ExecutionContextR0 {
                end_user_id: ec.end_user_id,
                additional_data: ec.additional_data,
                planning_agent_system_context_extension: ec.planner_system_context_extension,
                execution_agent_system_context_extension: ec.agent_system_context_extension,
            },
            outputs,
        }
    }

    fn r0(&mut self, mut run: RunR1) -> RunR1 {
        self.rewrite_prefixes(
            &mut run.id,
            &mut run.outputs.clarifications,
            &renames::R0_ID_PREFIX,
            &renames::R0_CLAR_PREFIX,
        );
        run
    }

    #[allow(clippy::unused_self, reason = "every step has the same shape")]
    fn r1(&mut self, run: RunR1) -> RunR2 {
        RunR2 {
            id: run.id,
            plan_id: run.plan_id,
            current_step_index: run.current_step_index,
            state: run.state,
            execution_context: run.execution_context,
            outputs: Outputs {
                clarifications: run.outputs.clarifications,
                step_outputs: run
                    .outputs
                    .step_outputs
                    .into_iter()
                    .map(|(k, v)| (k, v.into()))
                    .collect(),
                final_output: run.outputs.final_output.map(Into::into),
            },
        }
    }

    fn r2(&mut self, run: RunR2) -> RunR3 {
        let ec = run.execution_context;
        let value = |ext: Option<Vec<String>>| serde_json::to_value(ext).expect("strings are JSON");
        self.keep_in_residue(
            &renames::R2_PLANNING_EXT,
            value(ec.planning_agent_system_context_extension),
        );
        self.keep_in_residue(
            &renames::R2_EXECUTION_EXT,
            value(ec.execution_agent_system_context_extension),
        );
        RunR3 {
            id: run.id,
            plan_id: run.plan_id,
            current_step_index: run.current_step_index,
            state: run.state,
            execution_context: ExecutionContextR3 {
                end_user_id: ec.end_user_id,
                additional_data: ec.additional_data,
            },
            outputs: run.outputs,
        }
    }

    fn r3(&mut self, run: RunR3) -> RunR4 {
        let row = &renames::R3_END_USER_ID;
        let Op::Move { from, to, default } = row.op else {
            panic!("{} is not a move", row.id)
        };
        let end_user_id = if let Some(id) = run.execution_context.end_user_id {
            self.report.push(
                EntryKind::Moved,
                Some(join!("/run", from)),
                Some(join!("/run", to)),
                note(row),
                None,
            );
            id
        } else {
            let id: String = default_of(row, default);
            self.report
                .defaulted(join!("/run", to), note(row), Value::String(id.clone()));
            id
        };
        RunR4 {
            id: run.id,
            plan_id: run.plan_id,
            current_step_index: run.current_step_index,
            state: run.state,
            execution_context: ExecutionContextR4 {
                additional_data: run.execution_context.additional_data,
            },
            end_user_id,
            outputs: run.outputs,
        }
    }

    fn r4(&mut self, run: RunR4) -> RunR5 {
        let row = &renames::R4_PLAN_RUN_INPUTS;
        let Op::Default { at, key, value } = row.op else {
            panic!("{} is not a default", row.id)
        };
        let recorded: Value = default_of(row, value);
        let plan_run_inputs = default_of(row, value);
        self.report.defaulted(
            join!("/run", at, "/", escape_pointer_token(key)),
            note(row),
            recorded,
        );
        RunR5 {
            id: run.id,
            plan_id: run.plan_id,
            current_step_index: run.current_step_index,
            state: run.state,
            execution_context: run.execution_context,
            end_user_id: run.end_user_id,
            outputs: run.outputs,
            plan_run_inputs,
        }
    }

    fn r5(&mut self, run: RunR5) -> RunR6 {
        let context = serde_json::to_value(&run.execution_context).expect("contexts are JSON");
        self.keep_in_residue(&renames::R5_EXECUTION_CONTEXT, context);
        RunR6 {
            id: run.id,
            plan_id: run.plan_id,
            current_step_index: run.current_step_index,
            state: run.state,
            end_user_id: run.end_user_id,
            outputs: run.outputs,
            plan_run_inputs: run.plan_run_inputs,
        }
    }
}
