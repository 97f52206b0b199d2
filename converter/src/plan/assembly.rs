//! Assembly: the `PlanV2` of recognised steps, with the plan-level fields, the residue of what V2
//! cannot hold, and a report entry for every datum.

use std::sync::Arc;

use indexmap::IndexMap;
use planrun_wire::join;
use serde_json::{json, Value};

use planrun_legacy::{Plan, Step};
use planrun_v2::{PlanInput, PlanV2, StepV2, DEFAULT_TOOL_CALL_LIMIT};
use planrun_wire::json::escape_pointer_token;

use super::recognition::Converted;
use super::{absent, derived_plan_id, renamed_to_plan_inputs, PlanConversion};
use crate::renames;
use crate::report::{EntryKind, LossReport};

/// What a plan's conversion reports, and what it keeps in the residue for V2 cannot hold it.
struct PlanEntries {
    report: LossReport,
    residue: IndexMap<String, Value>,
}

impl PlanEntries {
    /// Keeps `value`, the legacy plan's at pointer `key`, in the residue, and reports the move.
    fn keep(&mut self, key: String, value: Value, note: &'static str) {
        let to = join!("/legacy/entries/", escape_pointer_token(&key));
        self.report
            .push(EntryKind::Moved, Some(key.clone()), Some(to), note, None);
        self.residue.insert(key, value);
    }

    /// Reports what a mapping row of the rename table says of the plan, citing the row.
    fn cite(&mut self, kind: EntryKind, row: &'static renames::Row) {
        self.report
            .push_mapping(kind, row, "", crate::chain::note(row));
    }
}

/// The conversion of `plan` whose steps are `steps` (1:1 with the legacy steps).
pub(super) fn assemble(plan: &Plan, steps: Vec<Converted>) -> PlanConversion {
    let mut e = PlanEntries {
        report: LossReport::default(),
        residue: IndexMap::new(),
    };
    let id = plan_id(plan, &mut e);
    e.cite(EntryKind::Renamed, &renames::PLAN_QUERY);
    e.cite(EntryKind::Renamed, &renames::PLAN_TOOL_IDS);
    let plan_inputs = plan_inputs(plan, &mut e);
    e.cite(EntryKind::Derived, &renames::PLAN_STEPS);
    for (i, (converted, source)) in steps.iter().zip(&plan.steps).enumerate() {
        match &converted.legacy_reason {
            None => report_builder_step(&mut e.report, i, &converted.step),
            Some(reason) => report_legacy_step(&mut e, i, converted, source, reason),
        }
    }
    e.report.defaulted(
        "/plan/summarize",
        "legacy plans do not summarise their final output (the builder's default)",
        Value::Bool(false),
    );
    e.report.defaulted(
        "/plan/final_output_schema",
        "a legacy plan's structured_output_schema is never written by the SDK",
        Value::Null,
    );
    PlanConversion {
        plan: Arc::new(PlanV2 {
            id,
            label: plan.plan_context.query.clone(),
            tool_ids: plan.plan_context.tool_ids.clone(),
            steps: steps.into_iter().map(|c| c.step).collect(),
            plan_inputs,
            summarize: false,
            final_output_schema: None,
        }),
        residue: e.residue,
        report: e.report,
    }
}

/// The plan's id; a plan without one gets the UUIDv5 of its JSON, and the residue says it had
/// none.
fn plan_id(plan: &Plan, e: &mut PlanEntries) -> String {
    if let Some(id) = &plan.id {
        return id.to_string();
    }
    let id = derived_plan_id(plan);
    e.report.defaulted(
        "/plan/id",
        "the legacy plan has no id; V2 requires one: UUIDv5 of the plan's JSON",
        Value::String(id.clone()),
    );
    e.keep(
        "/plan/id".into(),
        absent(),
        "the plan had no id; a downgrade leaves it out again",
    );
    id
}

/// The plan's inputs: its `plan_inputs`, v0.3.2's `inputs` under their later name, or none
/// before v0.3.2.
fn plan_inputs(plan: &Plan, e: &mut PlanEntries) -> Vec<PlanInput> {
    match (&plan.plan_inputs, &plan.inputs) {
        (Some(inputs), v032) => {
            if let Some(v032) = v032 {
                e.keep(
                    "/plan/inputs".into(),
                    serde_json::to_value(v032).expect("plan inputs serialise to JSON"),
                    "the plan has both `inputs` (v0.3.2) and `plan_inputs`; V2 holds one list",
                );
            }
            inputs
                .iter()
                .map(|input| PlanInput {
                    name: input.name.clone(),
                    description: input.description.clone(),
                    value: input.value.clone(),
                })
                .collect()
        }
        (None, Some(v032)) => {
            e.cite(EntryKind::Renamed, &renames::PLAN_INPUTS);
            for j in 0..v032.len() {
                e.report.defaulted(
                    join!("/plan/plan_inputs/", j, "/value"),
                    "v0.3.2 plan inputs have no default value",
                    Value::Null,
                );
            }
            e.keep(
                "/plan/inputs".into(),
                renamed_to_plan_inputs(),
                "the v0.3.2 spelling `inputs`; a downgrade writes it again",
            );
            v032.iter()
                .map(|input| PlanInput {
                    name: input.name.clone(),
                    description: Some(input.description.clone()),
                    value: Value::Null,
                })
                .collect()
        }
        (None, None) => {
            e.report.defaulted(
                "/plan/plan_inputs",
                "plans before v0.3.2 have no inputs",
                json!([]),
            );
            e.keep(
                "/plan/plan_inputs".into(),
                absent(),
                "the plan had no `plan_inputs` key (before v0.3.2); a downgrade leaves it out",
            );
            Vec::new()
        }
    }
}

/// The entries of a step kept verbatim as a legacy step, and what its V2 form cannot hold.
fn report_legacy_step(
    e: &mut PlanEntries,
    i: usize,
    converted: &Converted,
    source: &Step,
    reason: &str,
) {
    let at = join!("/plan/steps/", i);
    e.report.push(
        EntryKind::Derived,
        Some(at.clone()),
        Some(join!(at, "/type")),
        join!("kept verbatim as a legacy step: ", reason),
        Some(json!("legacy")),
    );
    e.report.push(
        EntryKind::Derived,
        Some(join!(at, "/output")),
        Some(join!(at, "/step_name")),
        "a legacy step is named after its output, without the `$`",
        Some(Value::String(converted.step.step_name().to_owned())),
    );
    if source.condition.is_none() {
        e.keep(
            join!(at, "/condition"),
            absent(),
            "the step had no `condition` key (before 0.1.8); V2 writes null, a downgrade leaves \
             the key out",
        );
    }
    for (j, input) in source.inputs.iter().enumerate() {
        if let Some(value) = &input.value {
            e.keep(
                join!(at, "/inputs/", j, "/value"),
                value.clone(),
                "a constant `Variable.value` (removed in v0.1.12); V2 has no slot",
            );
        }
    }
    for (key, value) in &source.extra {
        e.keep(
            join!(at, "/", escape_pointer_token(key)),
            value.clone(),
            "an unknown step key (Step is extra=\"allow\" from 0.1.7); V2 has no slot",
        );
    }
}

/// The entries of one recognised builder step, at `/plan/steps/<i>`.
struct StepEntries<'r> {
    report: &'r mut LossReport,
    /// The step's JSON pointer.
    pointer: String,
}

impl StepEntries<'_> {
    /// The pointer to `field` of the step.
    fn at(&self, field: &str) -> String {
        join!(self.pointer, "/", field)
    }

    fn derived(&mut self, source: &str, field: &str, note: &'static str) {
        let (from, to) = (self.at(source), self.at(field));
        self.report
            .push(EntryKind::Derived, Some(from), Some(to), note, None);
    }

    fn defaulted(&mut self, field: &str, value: Value, note: &'static str) {
        let to = self.at(field);
        self.report.defaulted(to, note, value);
    }

    fn renamed(&mut self, source: &str, field: &str, note: &'static str) {
        let (from, to) = (self.at(source), self.at(field));
        self.report
            .push(EntryKind::Renamed, Some(from), Some(to), note, None);
    }

    /// A ReAct agent step's tools and the fields the legacy plan lacks.
    fn react_agent(&mut self, refs: &'static str) {
        self.derived(
            "tool_id",
            "tools",
            "the ReAct agent's tool ids, comma-joined in the legacy step",
        );
        self.derived("inputs", "inputs", refs);
        for field in ["output_schema", "model"] {
            self.defaulted(field, Value::Null, "not in the legacy plan");
        }
        self.defaulted(
            "tool_call_limit",
            json!(DEFAULT_TOOL_CALL_LIMIT),
            "not in the legacy plan; the builder's default",
        );
        self.defaulted(
            "allow_agent_clarifications",
            Value::Bool(false),
            "not in the legacy plan; the builder's default",
        );
    }

    /// A conditional clause step: its condition, arguments and place in its block.
    fn conditional_clause(&mut self) {
        self.derived(
            "task",
            "condition",
            "the text after `Conditional clause: ` (a callable shows as `If result of <name> \
             is true`)",
        );
        self.derived(
            "inputs",
            "args",
            "argument names are not in the legacy plan; each reference is keyed by its \
             variable name",
        );
        self.derived(
            "task",
            "clause_index_in_block",
            "the clause's position among its block's clause steps",
        );
        self.derived(
            "condition",
            "block_clause_type",
            "if, else-if/else or endif, told apart by the condition the SDK derives for each",
        );
    }

    /// A loop clause step: its condition, kind and block.
    fn loop_clause(&mut self, has_condition: bool) {
        self.derived(
            "task",
            "condition",
            "the text after `Loop clause: `; `If result of None is true` is a loop without \
             a condition",
        );
        self.derived(
            "task",
            "loop_type",
            if has_condition {
                "while and do-while loops write the same legacy steps; WHILE is assumed"
            } else {
                "a loop without a condition is a for-each loop"
            },
        );
        self.derived(
            "task",
            "loop_step_type",
            "an end clause repeats its start clause (the builder copies it)",
        );
        self.derived(
            "task",
            "loop_block",
            "the start and end clause steps of the loop",
        );
        self.derived(
            "inputs",
            "args",
            "argument names are not in the legacy plan; each reference is keyed by its \
             variable name",
        );
        self.defaulted(
            "over",
            Value::Null,
            "what a for-each loop iterates over is not in the legacy plan",
        );
        self.defaulted("index", json!(0), "the SDK's default");
    }
}

/// The entries of a recognised builder step: its type, name and blocks, and each field.
fn report_builder_step(report: &mut LossReport, i: usize, step: &StepV2) {
    let mut e = StepEntries {
        pointer: join!("/plan/steps/", i),
        report,
    };
    let tag = step.type_tag();
    e.report.push(
        EntryKind::Derived,
        Some(e.pointer.clone()),
        Some(e.at("type")),
        format!(
            "recognised as a Plan Builder step by its task prefix and tool id; to_legacy_plan \
             of the `{tag}` step gives the legacy step back exactly"
        ),
        Some(json!(tag)),
    );
    e.report.push(
        EntryKind::Derived,
        Some(e.at("output")),
        Some(e.at("step_name")),
        "the output is the positional `$step_N_output`; the name is the SDK's default \
         `step_N` (a custom step_name never reaches the legacy plan)",
        Some(Value::String(step.step_name().to_owned())),
    );
    e.derived(
        "condition",
        "conditional_block",
        "the conditional block is rebuilt from the clause steps; the legacy condition is derived \
         from it",
    );
    if step.loop_block().is_none() {
        e.defaulted(
            "loop_block",
            Value::Null,
            "the builder sets a loop block on loop clause steps only",
        );
    }
    let refs = "variable names become references: `$step_N_output` a step output by index, any \
                other name a plan input";
    match step {
        StepV2::InvokeTool { .. } => {
            e.renamed("tool_id", "tool", "the invoked tool");
            e.derived(
                "task",
                "args",
                "parsed from `Use tool X with args: k=v, …`; a value shown as the next input \
                 variable is that reference, any other value stays the string shown (nothing is \
                 decoded)",
            );
            e.derived("inputs", "args", refs);
            e.defaulted("output_schema", Value::Null, "not in the legacy plan");
        }
        StepV2::Llm { .. } => {
            e.derived("tool_id", "type", "`llm_tool` is the LLM step's tool id");
            e.derived("inputs", "inputs", refs);
            for field in ["output_schema", "system_prompt", "model"] {
                e.defaulted(field, Value::Null, "not in the legacy plan");
            }
        }
        StepV2::SingleToolAgent { .. } => {
            e.renamed("tool_id", "tool", "the agent's one tool");
            e.derived("inputs", "inputs", refs);
            for field in ["output_schema", "model"] {
                e.defaulted(field, Value::Null, "not in the legacy plan");
            }
        }
        StepV2::ReactAgent { .. } => e.react_agent(refs),
        StepV2::Conditional { .. } => e.conditional_clause(),
        StepV2::Loop { condition, .. } => e.loop_clause(condition.is_some()),
        StepV2::UserInput { options, .. } => {
            e.derived("task", "message", "the text after `User input (…): `");
            let note = if options.is_some() {
                "a multiple-choice question whose choices are not in the legacy plan: `[]`"
            } else {
                "a free-text question"
            };
            e.defaulted("options", json!(options), note);
        }
        StepV2::UserVerify { .. } => {
            e.derived("task", "message", "the text after `User verification: `");
        }
        StepV2::Exit { .. } => {
            e.derived(
                "task",
                "message",
                "the text after `Exit plan: ` / `Exit plan with error: `",
            );
            e.derived(
                "task",
                "error",
                "`Exit plan with error: ` marks an error exit",
            );
        }
        StepV2::SubPlan { .. } | StepV2::Legacy { .. } => {}
    }
}
