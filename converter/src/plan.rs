//! The legacy `Plan` (every variant of §3) ↔ `PlanV2`, keeping law 2 exactly:
//! `plan_to_legacy(&c.plan, &c.residue) == original` for `c = plan_from_legacy(&original)`.
//!
//! # Direction V2 → legacy
//!
//! [`plan_to_legacy`] follows the SDK's own `PlanV2.to_legacy_plan` (HEAD a3528cd6, §3.1):
//! step N is written with output `$step_N_output`; tasks are `Use tool X with args: k=$ref, …`,
//! `Conditional clause: …`, `Loop clause: …`, `User verification: …`,
//! `User input (Multiple choice|Text input): …`, `Exit plan: …` / `Exit plan with error: …`,
//! `Run sub-plan: <label>`, or the step's own task; tool ids are the tool, `llm_tool`, or the
//! ReAct tools comma-joined; inputs are one variable per reference (`$step_K_output` for a step
//! output, the bare name for a plan input, description `""`); the condition is derived from the
//! enclosing conditional blocks (`If $step_2_output is true and $step_0_output is false`).
//! `plan_context` is `{query: label, tool_ids}` (open question 7) and the plan inputs are copied.
//! Then the residue is applied (see below). Three documented deviations from the SDK:
//! * the step position is the step's index, where the SDK looks the step up by `step_name`
//!   (the same index unless two steps share a name);
//! * a `StepOutput` naming no step becomes `$unknown_step_output_<hex>` with a hex derived from
//!   the name (the SDK uses a random uuid4 hex);
//! * `UserInput.options: []` writes `Multiple choice` (the SDK treats `[]` like `null`): in this
//!   format `[]` is what a recognised multiple-choice step gets, its choices not being in the
//!   legacy plan.
//!
//! # Direction legacy → V2: recognition (open question 6)
//!
//! [`plan_from_legacy`] recognises exactly what `to_legacy_plan` produces:
//! 1. Only a plan whose outputs are all positional (`steps[i].output == "$step_{i}_output"`)
//!    can be builder-made; in any other (planner-made) plan every step becomes `legacy`.
//! 2. Each step is mapped by pattern: with no tool id, the task prefixes `Conditional clause: `,
//!    `Loop clause: `, `User verification: `, `User input (Multiple choice): `,
//!    `User input (Text input): `, `Exit plan with error: `, `Exit plan: `; with a tool id,
//!    `Use tool <tool_id> with args: …` → `invoke_tool`, `llm_tool` → `llm`, a comma-joined or
//!    empty id → `react_agent`, any other id → `single_tool_agent`. `Run sub-plan: …` (the legacy
//!    form omits the sub-plan), `Run function …` (an older FunctionStep) and an unparsable
//!    `Use tool …` have no faithful V2 step and stay `legacy`.
//! 3. Conditional and loop blocks are rebuilt the way the builder nests them: a clause step
//!    continues the innermost open conditional block when its condition is the one an `else`
//!    (`$step_K_output is false …`) or an `endif` of that block gets (an `endif` also reads
//!    `Conditional clause: If result of <lambda> is true` without inputs, as `endif()` always
//!    writes it), and opens a new block otherwise; a loop clause that repeats the innermost open
//!    loop's start (the builder copies the start's condition and args into the end) closes it or
//!    opens a nested loop, whichever gives every step the condition it has and leaves no block
//!    open at the end (`build()` raises on an open block): a bounded search, closing first. Where
//!    both fit, two builder plans write the same legacy plan (nested for-each loops read like
//!    consecutive ones, and an `if_` with a lambda condition like an `endif`), and the one that
//!    closes first is taken. Any other loop clause opens a loop.
//! 4. The result is verified: `to_legacy` of every recognised step must give the input step back
//!    exactly. A clause step that does not reproduce means the block structure is wrong, and then
//!    every step becomes `legacy`; any other step that does not reproduce becomes `legacy` alone.
//!    Finally the whole plan is checked (law 2) and, should that ever fail, converted all-`legacy`.
//!
//! What the legacy form cannot tell, recognition fills with documented choices (each one a
//! `derived` or `defaulted` report entry): step names are the SDK's default `step_{i}` (a custom
//! `step_name` never reaches the legacy plan); references to steps are by index; invoke-tool
//! argument values that are not references stay strings (open question 3); conditional and loop
//! arguments are keyed by their variable name; a conditional's `condition` is the clause text
//! after `Conditional clause: ` (for a callable, the SDK's `If result of <name> is true`); a loop
//! with a condition is a `WHILE` loop (a do-while writes the same legacy steps), one without
//! (`If result of None is true`) a `FOR_EACH` loop whose `over` is unknown (`null`); output
//! schemas, models and system prompts are `null`, ReAct limits the builder's defaults.
//!
//! A `legacy` step keeps task, inputs (name, description), tool id, output and condition verbatim;
//! its `step_name` is its output name without the leading `$` (so `$flights` → `flights`; two steps
//! that share an output under different conditions share the name, as their outputs do).
//!
//! # Residue
//!
//! What V2 cannot hold is returned as residue, keyed by pointers into the virtual legacy document
//! (`/plan/…`); the run converter stores it under `/legacy/entries`:
//! * `/plan/steps/<i>/inputs/<j>/value`: a pre-0.1.12 `Variable.value` (any JSON, `null` included);
//! * `/plan/steps/<i>/<key>`: an unknown step key (`extra="allow"`, 0.1.7+), in source order;
//! * `/plan/steps/<i>/condition` = [`absent`]: the step had no `condition` key (before 0.1.8);
//! * `/plan/id` = [`absent`]: the plan had no id (V2 gets a derived one, see [`derived_plan_id`]);
//! * `/plan/plan_inputs` = [`absent`]: the plan had neither `inputs` nor `plan_inputs` (before v0.3.2);
//! * `/plan/inputs` = [`renamed_to_plan_inputs`]: the v0.3.2 spelling (the list itself is in
//!   `PlanV2.plan_inputs`); or, when a plan has both keys, the `inputs` list itself.
//!
//! A marker is an object, which no condition, id or input list can be, so it is never mistaken for
//! a kept value. [`plan_to_legacy`] ignores entries outside `/plan/`, so a run's whole residue can
//! be passed in.

use indexmap::IndexMap;
use serde_json::{json, Value};

use planrun_legacy::json::escape_pointer_token;
use planrun_legacy::{
    Plan, PlanContext, PlanId, PlanInput as LegacyPlanInput, PlanInputV032, Prefix, PrefixedId,
    Step, Variable,
};
use planrun_v2::{
    ArgValue, BlockClauseType, ConditionalBlock, LegacyVariable, LoopBlock, LoopStepType, LoopType,
    PlanInput, PlanV2, StepRef, StepV2, DEFAULT_TOOL_CALL_LIMIT,
};

use crate::renames;
use crate::report::{EntryKind, LossReport};

/// The SDK's `LLMTool.LLM_TOOL_ID`: the tool id of every LLM step.
pub const LLM_TOOL_ID: &str = "llm_tool";

/// What a for-each loop's clause says: the SDK renders its `None` condition as a callable's name.
const NO_LOOP_CONDITION: &str = "If result of None is true";

/// What an `endif` clause says: `PlanBuilderV2.endif()` always gives it `condition=lambda: True`
/// and no args (as `else_()` does; only `if_` and `else_if_` take a condition and args).
const ENDIF_CONDITION: &str = "If result of <lambda> is true";

/// A legacy plan converted to V2, with what V2 cannot hold and what the conversion did.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanConversion {
    /// The plan, steps 1:1 with the legacy steps.
    pub plan: PlanV2,
    /// Values and key absences V2 has no field for, keyed by `/plan/…` source pointers.
    pub residue: IndexMap<String, Value>,
    /// One entry per datum renamed, moved, derived, defaulted or coerced.
    pub report: LossReport,
}

/// The residue marker of a key the legacy plan did not have: `{"absent": true}`.
pub fn absent() -> Value {
    json!({"absent": true})
}

/// The residue marker of a v0.3.2 plan's `inputs` key, whose list V2 holds as `plan_inputs`.
pub fn renamed_to_plan_inputs() -> Value {
    json!({"renamed_to": "/plan/plan_inputs"})
}

/// The id V2 gives a legacy plan without one: `plan-` + the UUIDv5 of the plan's compact JSON
/// under the namespace UUIDv5(URL, `urn:planrun-migrate:plan`). Deterministic, so converting the
/// same plan twice gives the same id.
pub fn derived_plan_id(plan: &Plan) -> String {
    let bytes = serde_json::to_vec(plan).expect("a legacy plan serialises to JSON");
    PrefixedId::new(Prefix::Plan, uuid5(plan_namespace(), &bytes)).to_string()
}

/// Converts a legacy plan to V2; see the module docs for the rules.
pub fn plan_from_legacy(plan: &Plan) -> PlanConversion {
    let conversion = assemble(plan, recognise(&plan.steps));
    if plan_to_legacy(&conversion.plan, &conversion.residue) == *plan {
        return conversion;
    }
    // Unreachable for plans the legacy parser produces; it keeps law 2 a guarantee.
    let reason = "the recognised plan did not round-trip; every step is kept verbatim";
    assemble(plan, all_legacy(&plan.steps, reason))
}

/// Writes a V2 plan as the SDK's `to_legacy_plan` does, then re-applies the `/plan/…` residue
/// entries; see the module docs.
pub fn plan_to_legacy(plan: &PlanV2, residue: &IndexMap<String, Value>) -> Plan {
    let mut legacy = Plan {
        id: PrefixedId::parse(&plan.id, PlanId::PREFIXES)
            .ok()
            .map(PlanId),
        plan_context: PlanContext {
            query: plan.label.clone(),
            tool_ids: plan.tool_ids.clone(),
        },
        steps: legacy_steps(plan),
        inputs: None,
        plan_inputs: Some(
            plan.plan_inputs
                .iter()
                .map(|input| LegacyPlanInput {
                    name: input.name.clone(),
                    description: input.description.clone(),
                    value: input.value.clone(),
                })
                .collect(),
        ),
    };
    for (key, value) in residue {
        if let Some(rest) = key.strip_prefix("/plan/") {
            let tokens: Vec<String> = rest.split('/').map(unescape).collect();
            restore(&mut legacy, plan, &tokens, value);
        }
    }
    legacy
}

/// Applies one residue entry; entries that do not fit the plan (an index out of range, a list
/// that is not a v0.3.2 input list) are skipped.
fn restore(legacy: &mut Plan, plan: &PlanV2, tokens: &[String], value: &Value) {
    let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
    match tokens.as_slice() {
        ["id"] if *value == absent() => legacy.id = None,
        ["plan_inputs"] if *value == absent() => legacy.plan_inputs = None,
        ["inputs"] if *value == renamed_to_plan_inputs() => {
            legacy.inputs = Some(
                plan.plan_inputs
                    .iter()
                    .map(|input| PlanInputV032 {
                        name: input.name.clone(),
                        description: input.description.clone().unwrap_or_default(),
                    })
                    .collect(),
            );
            legacy.plan_inputs = None;
        }
        ["inputs"] => {
            if let Ok(inputs) = serde_json::from_value(value.clone()) {
                legacy.inputs = Some(inputs);
            }
        }
        ["steps", i, "condition"] if *value == absent() => {
            if let Some(step) = step_at(legacy, i) {
                step.condition = None;
            }
        }
        ["steps", i, "inputs", j, "value"] => {
            let variable = step_at(legacy, i)
                .and_then(|step| j.parse::<usize>().ok().and_then(|j| step.inputs.get_mut(j)));
            if let Some(variable) = variable {
                variable.value = Some(value.clone());
            }
        }
        ["steps", i, key] if !DECLARED_STEP_KEYS.contains(key) => {
            if let Some(step) = step_at(legacy, i) {
                step.extra.insert((*key).to_owned(), value.clone());
            }
        }
        _ => {}
    }
}

/// The keys of a legacy step the SDK declares (never extras).
const DECLARED_STEP_KEYS: [&str; 6] = [
    "task",
    "inputs",
    "tool_id",
    "output",
    "condition",
    "structured_output_schema",
];

fn step_at<'a>(legacy: &'a mut Plan, index: &str) -> Option<&'a mut Step> {
    index
        .parse::<usize>()
        .ok()
        .and_then(|i| legacy.steps.get_mut(i))
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

// ---------------------------------------------------------------------------------------------
// V2 → legacy steps (the SDK's `to_legacy_step` of each step class)
// ---------------------------------------------------------------------------------------------

/// Every step of `plan` as `to_legacy_plan` writes it, before any residue.
fn legacy_steps(plan: &PlanV2) -> Vec<Step> {
    plan.steps
        .iter()
        .enumerate()
        .map(|(i, step)| legacy_step(plan, i, step))
        .collect()
}

fn legacy_step(plan: &PlanV2, index: usize, step: &StepV2) -> Step {
    if let StepV2::Legacy {
        task,
        inputs,
        tool_id,
        output,
        condition,
        ..
    } = step
    {
        return Step {
            task: task.clone(),
            inputs: inputs
                .iter()
                .map(|v| Variable {
                    name: v.name.clone(),
                    value: None,
                    description: v.description.clone(),
                })
                .collect(),
            tool_id: tool_id.clone(),
            output: output.clone(),
            condition: Some(condition.clone()),
            extra: IndexMap::new(),
        };
    }
    let steps = &plan.steps;
    let (task, inputs) = match step {
        StepV2::InvokeTool { tool, args, .. } => {
            let shown: Vec<String> = args
                .iter()
                .map(|(k, v)| format!("{k}={}", display_arg(steps, v)))
                .collect();
            (
                format!("Use tool {tool} with args: {}", shown.join(", ")),
                variables(steps, args.values()),
            )
        }
        StepV2::Llm { task, inputs, .. }
        | StepV2::SingleToolAgent { task, inputs, .. }
        | StepV2::ReactAgent { task, inputs, .. } => (task.clone(), variables(steps, inputs)),
        StepV2::Conditional {
            condition, args, ..
        } => (
            format!("Conditional clause: {condition}"),
            variables(steps, args.values()),
        ),
        StepV2::Loop {
            condition, args, ..
        } => (
            format!(
                "Loop clause: {}",
                condition.as_deref().unwrap_or(NO_LOOP_CONDITION)
            ),
            variables(steps, args.values()),
        ),
        StepV2::UserInput {
            message, options, ..
        } => {
            let kind = if options.is_some() {
                "Multiple choice"
            } else {
                "Text input"
            };
            (format!("User input ({kind}): {message}"), Vec::new())
        }
        StepV2::UserVerify { message, .. } => (format!("User verification: {message}"), Vec::new()),
        StepV2::Exit { message, error, .. } => {
            let task = if *error {
                format!("Exit plan with error: {message}")
            } else {
                format!("Exit plan: {message}")
            };
            (task, Vec::new())
        }
        StepV2::SubPlan { plan: sub, .. } => (
            format!("Run sub-plan: {}", sub.label),
            sub.plan_inputs
                .iter()
                .map(|input| variable(input.name.clone()))
                .collect(),
        ),
        StepV2::Legacy { .. } => unreachable!("legacy steps are written verbatim above"),
    };
    Step {
        task,
        inputs,
        tool_id: legacy_tool_id(step),
        output: positional_output(index),
        condition: Some(legacy_condition(step.conditional_block(), index as i64)),
        extra: IndexMap::new(),
    }
}

/// The `tool_id` the SDK writes for a step.
fn legacy_tool_id(step: &StepV2) -> Option<String> {
    match step {
        StepV2::InvokeTool { tool, .. } | StepV2::SingleToolAgent { tool, .. } => {
            Some(tool.clone())
        }
        StepV2::Llm { .. } => Some(LLM_TOOL_ID.to_owned()),
        StepV2::ReactAgent { tools, .. } => Some(tools.join(",")),
        StepV2::SubPlan { plan, .. } => Some(
            plan.steps
                .iter()
                .filter_map(legacy_tool_id)
                .collect::<Vec<_>>()
                .join(","),
        ),
        StepV2::Legacy { tool_id, .. } => tool_id.clone(),
        StepV2::Conditional { .. }
        | StepV2::Loop { .. }
        | StepV2::UserInput { .. }
        | StepV2::UserVerify { .. }
        | StepV2::Exit { .. } => None,
    }
}

fn positional_output(index: usize) -> String {
    format!("$step_{index}_output")
}

fn variable(name: String) -> Variable {
    Variable {
        name,
        value: None,
        description: String::new(),
    }
}

/// One variable per reference, as `_inputs_to_legacy_plan_variables` (literals are skipped).
fn variables<'a>(steps: &[StepV2], args: impl IntoIterator<Item = &'a ArgValue>) -> Vec<Variable> {
    args.into_iter()
        .filter_map(|arg| legacy_name(steps, arg))
        .map(variable)
        .collect()
}

/// A reference's `get_legacy_name`; `None` for a literal.
fn legacy_name(steps: &[StepV2], arg: &ArgValue) -> Option<String> {
    match arg {
        ArgValue::Literal { .. } => None,
        ArgValue::StepOutput {
            step: StepRef::Index { index },
            ..
        } => Some(format!("$step_{index}_output")),
        ArgValue::StepOutput {
            step: StepRef::Name { name },
            ..
        } => Some(match steps.iter().position(|s| s.step_name() == name) {
            Some(index) => positional_output(index),
            None => format!(
                "$unknown_step_output_{:032x}",
                uuid5(plan_namespace(), name.as_bytes())
            ),
        }),
        ArgValue::Input { name, .. } => Some(name.clone()),
    }
}

/// An argument as `_resolve_input_names_for_printing` shows it inside an invoke-tool task.
fn display_arg(steps: &[StepV2], arg: &ArgValue) -> String {
    match (legacy_name(steps, arg), arg) {
        (Some(name), _) => dollar(&name),
        (None, ArgValue::Literal { value }) => py_str(value),
        (None, _) => unreachable!("only literals have no legacy name"),
    }
}

fn dollar(name: &str) -> String {
    if name.starts_with('$') {
        name.to_owned()
    } else {
        format!("${name}")
    }
}

/// The SDK's `_get_legacy_condition`: one part per enclosing block, innermost first.
fn legacy_condition(block: Option<&ConditionalBlock>, index: i64) -> Option<String> {
    let mut parts = Vec::new();
    let mut current = block;
    while let Some(block) = current {
        parts.extend(block_part(&block.clause_step_indexes, index));
        current = block.parent_conditional_block.as_deref();
    }
    render_condition(parts)
}

fn render_condition(parts: Vec<String>) -> Option<String> {
    (!parts.is_empty()).then(|| format!("If {}", parts.join(" and ")))
}

/// The condition one block contributes for the step at `index`: none for its `if` and `endif`
/// clauses (and, where the SDK would raise, for a step before the block's first clause); the
/// earlier clauses being false; and, for a step inside a clause, that clause being true.
fn block_part(clauses: &[i64], index: i64) -> Option<String> {
    let active = *clauses.iter().rev().find(|&&c| c <= index)?;
    if clauses.first() == Some(&index) || clauses.last() == Some(&index) {
        return None;
    }
    let earlier: Vec<String> = clauses
        .iter()
        .filter(|&&c| c != active)
        .take_while(|&&c| c < index)
        .map(|c| format!("$step_{c}_output is false"))
        .collect();
    let mut part = earlier.join(" and ");
    if !clauses.contains(&index) {
        let active = format!("$step_{active}_output is true");
        part = if part.is_empty() {
            active
        } else {
            format!("{active} and {part}")
        };
    }
    Some(part)
}

// ---------------------------------------------------------------------------------------------
// Legacy → V2: recognition
// ---------------------------------------------------------------------------------------------

/// A converted step and why it has its type.
struct Converted {
    step: StepV2,
    /// `None` for a recognised builder step, else why it stayed `legacy`.
    legacy_reason: Option<String>,
}

/// What a legacy step looks like, before blocks and verification.
enum Kind {
    Conditional(String),
    Loop(Option<String>),
    UserVerify(String),
    UserInput {
        message: String,
        multiple: bool,
    },
    Exit {
        message: String,
        error: bool,
    },
    InvokeTool {
        tool: String,
        args: IndexMap<String, ArgValue>,
    },
    Llm,
    SingleToolAgent(String),
    ReactAgent(Vec<String>),
    Unmatched(&'static str),
}

impl Kind {
    fn is_clause(&self) -> bool {
        matches!(self, Kind::Conditional(_) | Kind::Loop(_))
    }
}

const PLANNER_MADE: &str = "planner-made plan: its outputs are not all positional \
    `$step_N_output` names, so none of its steps can be a Plan Builder step";
const BLOCKS_DO_NOT_REPRODUCE: &str = "the plan's conditional and loop clauses do not rebuild \
    into blocks that reproduce it exactly, so every step is kept verbatim";

fn all_legacy(steps: &[Step], reason: &str) -> Vec<Converted> {
    steps
        .iter()
        .map(|step| Converted {
            step: legacy_variant(step),
            legacy_reason: Some(reason.to_owned()),
        })
        .collect()
}

/// The `legacy` step keeping a legacy step verbatim.
fn legacy_variant(step: &Step) -> StepV2 {
    StepV2::Legacy {
        step_name: step
            .output
            .strip_prefix('$')
            .unwrap_or(&step.output)
            .to_owned(),
        conditional_block: None,
        loop_block: None,
        task: step.task.clone(),
        inputs: step
            .inputs
            .iter()
            .map(|v| LegacyVariable {
                name: v.name.clone(),
                description: v.description.clone(),
            })
            .collect(),
        tool_id: step.tool_id.clone(),
        output: step.output.clone(),
        condition: step.condition.clone().flatten(),
    }
}

fn recognise(steps: &[Step]) -> Vec<Converted> {
    let positional = steps
        .iter()
        .enumerate()
        .all(|(i, step)| step.output == positional_output(i));
    if !positional {
        return all_legacy(steps, PLANNER_MADE);
    }
    let kinds: Vec<Kind> = steps.iter().map(classify).collect();
    let candidate = build(steps, &kinds);
    // Verify: the candidate plan, written back, must give every recognised step exactly.
    let probe = PlanV2 {
        id: String::new(),
        label: String::new(),
        tool_ids: Vec::new(),
        steps: candidate.iter().map(|c| c.step.clone()).collect(),
        plan_inputs: Vec::new(),
        summarize: false,
        final_output_schema: None,
    };
    let written = legacy_steps(&probe);
    let mut converted = candidate;
    for (i, (step, kind)) in steps.iter().zip(&kinds).enumerate() {
        if converted[i].legacy_reason.is_some() || written[i] == *step {
            continue;
        }
        if kind.is_clause() {
            return all_legacy(steps, BLOCKS_DO_NOT_REPRODUCE);
        }
        let tag = converted[i].step.type_tag();
        converted[i] = Converted {
            step: legacy_variant(step),
            legacy_reason: Some(format!(
                "the step looks like a `{tag}` step, but to_legacy_plan of that step does not \
                 give it back exactly (a description, value, extra key or condition the builder \
                 never writes)"
            )),
        };
    }
    converted
}

/// Maps a legacy step to the builder step class whose `to_legacy_step` writes its shape.
fn classify(step: &Step) -> Kind {
    let task = step.task.as_str();
    let Some(tool) = &step.tool_id else {
        let prefixed = |prefix: &str| task.strip_prefix(prefix).map(str::to_owned);
        return if let Some(rest) = prefixed("Conditional clause: ") {
            Kind::Conditional(rest)
        } else if let Some(rest) = prefixed("Loop clause: ") {
            Kind::Loop((rest != NO_LOOP_CONDITION).then_some(rest))
        } else if let Some(message) = prefixed("User verification: ") {
            Kind::UserVerify(message)
        } else if let Some(message) = prefixed("User input (Multiple choice): ") {
            Kind::UserInput {
                message,
                multiple: true,
            }
        } else if let Some(message) = prefixed("User input (Text input): ") {
            Kind::UserInput {
                message,
                multiple: false,
            }
        } else if let Some(message) = prefixed("Exit plan with error: ") {
            Kind::Exit {
                message,
                error: true,
            }
        } else if let Some(message) = prefixed("Exit plan: ") {
            Kind::Exit {
                message,
                error: false,
            }
        } else {
            Kind::Unmatched("no Plan Builder pattern matches a step without a tool id")
        };
    };
    if task.starts_with("Run sub-plan: ") {
        return Kind::Unmatched(
            "a SubPlanStep: its legacy step omits the sub-plan, so no faithful sub_plan step \
             can be rebuilt",
        );
    }
    if task.starts_with("Run function ") {
        return Kind::Unmatched("an older FunctionStep: V2 has no function step");
    }
    if let Some(rest) = task.strip_prefix("Use tool ") {
        let args = rest
            .strip_prefix(tool.as_str())
            .and_then(|rest| rest.strip_prefix(" with args: "))
            .and_then(|desc| parse_invoke_args(desc, &step.inputs));
        return match args {
            Some(args) => Kind::InvokeTool {
                tool: tool.clone(),
                args,
            },
            None => Kind::Unmatched(
                "a `Use tool …` task that is not `Use tool <tool_id> with args: …` as the \
                 current SDK writes it",
            ),
        };
    }
    if tool == LLM_TOOL_ID {
        Kind::Llm
    } else if tool.is_empty() {
        Kind::ReactAgent(Vec::new())
    } else if tool.contains(',') {
        Kind::ReactAgent(tool.split(',').map(str::to_owned).collect())
    } else {
        Kind::SingleToolAgent(tool.clone())
    }
}

/// Parses `k=v, k=v` as an invoke-tool task shows its args. A piece starting `<word>=` starts an
/// argument, any other piece continues the previous value; a value equal to how the next input
/// variable is shown (`$name`) is that reference, anything else a string literal.
fn parse_invoke_args(desc: &str, inputs: &[Variable]) -> Option<IndexMap<String, ArgValue>> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    if !desc.is_empty() {
        for piece in desc.split(", ") {
            let key_value = piece.split_once('=').filter(|(key, _)| {
                !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || c == '_')
            });
            match (key_value, pairs.last_mut()) {
                (Some((key, value)), _) => pairs.push((key.to_owned(), value.to_owned())),
                (None, Some((_, value))) => {
                    value.push_str(", ");
                    value.push_str(piece);
                }
                (None, None) => return None,
            }
        }
    }
    let mut next = 0;
    let mut args = IndexMap::new();
    for (key, value) in pairs {
        let arg = match inputs.get(next) {
            Some(input) if dollar(&input.name) == value => {
                next += 1;
                reference(&input.name)
            }
            _ => ArgValue::Literal {
                value: Value::String(value),
            },
        };
        if args.insert(key, arg).is_some() {
            return None;
        }
    }
    (next == inputs.len()).then_some(args)
}

/// The reference a legacy variable name stands for: `$step_K_output` → step K, else an input.
fn reference(name: &str) -> ArgValue {
    match positional_index(name) {
        Some(index) => ArgValue::StepOutput {
            step: StepRef::Index { index },
            path: None,
            full: false,
        },
        None => ArgValue::Input {
            name: name.to_owned(),
            path: None,
        },
    }
}

/// K of a canonical `$step_K_output` (no sign, no leading zero).
fn positional_index(name: &str) -> Option<i64> {
    let digits = name.strip_prefix("$step_")?.strip_suffix("_output")?;
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    canonical.then(|| digits.parse().ok()).flatten()
}

/// References keyed by variable name (the legacy plan does not keep argument names).
fn keyed_args(inputs: &[Variable]) -> IndexMap<String, ArgValue> {
    let mut args = IndexMap::new();
    for input in inputs {
        let mut key = input.name.clone();
        while args.contains_key(&key) {
            key.push('_');
        }
        args.insert(key, reference(&input.name));
    }
    args
}

/// A conditional block while it is being rebuilt: its clause steps so far and its parent.
#[derive(Clone)]
struct Draft {
    clauses: Vec<i64>,
    parent: Option<usize>,
}

/// An open block on the builder's block stack.
#[derive(Clone)]
enum Open {
    Conditional(usize),
    Loop(usize),
}

/// Where a clause step sits in its block.
#[derive(Clone)]
struct Clause {
    block: usize,
    index_in_block: i64,
    kind: BlockClauseType,
}

/// The block structure of a plan, as the builder's block stack would have made it.
#[derive(Clone)]
struct Layout {
    drafts: Vec<Draft>,
    open: Vec<Open>,
    /// The conditional block each step carries.
    in_block: Vec<Option<usize>>,
    clauses: Vec<Option<Clause>>,
    /// For loop clause steps: start or end, and the loop's start step.
    loops: Vec<Option<(LoopStepType, usize)>>,
    /// For a loop's start step: its end step.
    loop_end: Vec<Option<usize>>,
}

/// How many steps the layout search may visit before it settles for what it has found.
const SEARCH_BUDGET: usize = 10_000;

/// The state of the strict layout search.
struct Strict {
    /// Steps the search may still visit.
    budget: usize,
    /// The first layout that gave every step its condition but left a block open.
    open_ended: Option<Layout>,
}

/// Finds the block structure. A loop clause that repeats the innermost open loop's start may
/// close that loop or open a nested one (nested for-each loops all read `Loop clause: If result of
/// None is true`); the search tries closing first and keeps the first layout under which every
/// step's condition is the one the SDK derives and every block is closed at the end, as
/// `PlanBuilderV2.build()` requires (it raises on an open block). A layout that only fits by
/// leaving blocks open is not what the builder made whenever a closed one exists: an endif read
/// as a new `if` inside a wrongly nested loop writes the same legacy step (the `condition` of
/// both is the enclosing blocks' only), so an open-ended layout is kept only when no closed one is
/// found (a plan that is not entirely builder-made). When there is none either, loops are paired
/// greedily and verification sorts out the steps.
fn layout(steps: &[Step], kinds: &[Kind]) -> Layout {
    let n = steps.len();
    let empty = Layout {
        drafts: Vec::new(),
        open: Vec::new(),
        in_block: vec![None; n],
        clauses: vec![None; n],
        loops: vec![None; n],
        loop_end: vec![None; n],
    };
    let mut state = Strict {
        budget: SEARCH_BUDGET,
        open_ended: None,
    };
    search(steps, kinds, empty.clone(), 0, Some(&mut state))
        .or(state.open_ended)
        .or_else(|| search(steps, kinds, empty, 0, None))
        .expect("the greedy layout always exists")
}

/// Lays out steps `from..` onto `layout`. Strict (with a search state), a step whose condition
/// differs from the derived one ends the branch, and so does a block left open at the end (the
/// first such layout is kept in the state); otherwise every choice is greedy and none fails.
fn search(
    steps: &[Step],
    kinds: &[Kind],
    mut layout: Layout,
    from: usize,
    mut state: Option<&mut Strict>,
) -> Option<Layout> {
    for (i, (step, kind)) in steps.iter().zip(kinds).enumerate().skip(from) {
        if let Some(state) = state.as_deref_mut() {
            state.budget = state.budget.checked_sub(1)?;
        }
        let strict = state.is_some();
        let index = i as i64;
        let condition = step.condition.clone().flatten();
        let top_block = match layout.open.last() {
            Some(Open::Conditional(b)) => Some(*b),
            _ => None,
        };
        match kind {
            Kind::Conditional(text) => {
                let drafts = &layout.drafts;
                let role = top_block.and_then(|b| {
                    let outer = chain_parts(drafts, drafts[b].parent, index);
                    let earlier: Vec<String> = drafts[b]
                        .clauses
                        .iter()
                        .map(|c| format!("$step_{c}_output is false"))
                        .collect();
                    let alternate = render_condition(
                        std::iter::once(earlier.join(" and "))
                            .chain(outer.iter().cloned())
                            .collect(),
                    );
                    if condition == alternate {
                        Some((b, BlockClauseType::AlternateClause))
                    } else if condition == render_condition(outer)
                        && text == ENDIF_CONDITION
                        && step.inputs.is_empty()
                    {
                        Some((b, BlockClauseType::EndConditionBlock))
                    } else {
                        None
                    }
                });
                let (block, clause_kind) = match role {
                    Some((b, kind)) => {
                        layout.drafts[b].clauses.push(index);
                        if kind == BlockClauseType::EndConditionBlock {
                            layout.open.pop();
                        }
                        (b, kind)
                    }
                    None => {
                        let opening = render_condition(chain_parts(drafts, top_block, index));
                        if strict && condition != opening {
                            return None;
                        }
                        layout.drafts.push(Draft {
                            clauses: vec![index],
                            parent: top_block,
                        });
                        layout.open.push(Open::Conditional(layout.drafts.len() - 1));
                        (
                            layout.drafts.len() - 1,
                            BlockClauseType::NewConditionalBlock,
                        )
                    }
                };
                layout.in_block[i] = Some(block);
                layout.clauses[i] = Some(Clause {
                    block,
                    index_in_block: layout.drafts[block].clauses.len() as i64 - 1,
                    kind: clause_kind,
                });
            }
            Kind::Loop(_) => {
                if strict && condition.is_some() {
                    return None;
                }
                let repeats = match layout.open.last() {
                    Some(Open::Loop(start))
                        if steps[*start].task == step.task
                            && steps[*start].inputs == step.inputs =>
                    {
                        Some(*start)
                    }
                    _ => None,
                };
                if let Some(start) = repeats {
                    let mut closed = layout.clone();
                    closed.loops[i] = Some((LoopStepType::End, start));
                    closed.loop_end[start] = Some(i);
                    closed.open.pop();
                    let found = search(steps, kinds, closed, i + 1, state.as_deref_mut());
                    if found.is_some() || !strict {
                        return found;
                    }
                }
                layout.loops[i] = Some((LoopStepType::Start, i));
                layout.open.push(Open::Loop(i));
            }
            Kind::Unmatched(_) => {}
            _ => {
                let derived = render_condition(chain_parts(&layout.drafts, top_block, index));
                if strict && condition != derived {
                    return None;
                }
                layout.in_block[i] = top_block;
            }
        }
    }
    if let Some(state) = state {
        if !layout.open.is_empty() {
            state.open_ended.get_or_insert(layout);
            return None;
        }
    }
    Some(layout)
}

/// Builds the candidate V2 steps: step types from `kinds`, blocks nested as the builder nests them.
fn build(steps: &[Step], kinds: &[Kind]) -> Vec<Converted> {
    let Layout {
        drafts,
        in_block,
        clauses,
        loops,
        loop_end,
        ..
    } = layout(steps, kinds);
    let blocks: Vec<ConditionalBlock> =
        (0..drafts.len()).map(|b| materialise(&drafts, b)).collect();
    steps
        .iter()
        .zip(kinds)
        .enumerate()
        .map(|(i, (step, kind))| {
            let step_name = format!("step_{i}");
            let conditional_block = in_block[i].map(|b| blocks[b].clone());
            let loop_block = loops[i].map(|(_, start)| LoopBlock {
                start_step_index: start as i64,
                end_step_index: loop_end[start].map(|end| end as i64),
            });
            let inputs = || step.inputs.iter().map(|v| reference(&v.name)).collect();
            let built = match kind {
                Kind::Unmatched(reason) => {
                    return Converted {
                        step: legacy_variant(step),
                        legacy_reason: Some((*reason).to_owned()),
                    }
                }
                Kind::Conditional(condition) => {
                    let clause = clauses[i].as_ref().expect("every clause step has a place");
                    debug_assert_eq!(in_block[i], Some(clause.block));
                    StepV2::Conditional {
                        step_name,
                        conditional_block,
                        loop_block,
                        condition: condition.clone(),
                        args: keyed_args(&step.inputs),
                        clause_index_in_block: clause.index_in_block,
                        block_clause_type: clause.kind,
                    }
                }
                Kind::Loop(condition) => StepV2::Loop {
                    step_name,
                    conditional_block,
                    loop_block,
                    condition: condition.clone(),
                    over: None,
                    loop_type: if condition.is_some() {
                        LoopType::While
                    } else {
                        LoopType::ForEach
                    },
                    index: 0,
                    args: keyed_args(&step.inputs),
                    loop_step_type: loops[i].map_or(LoopStepType::Start, |(kind, _)| kind),
                },
                Kind::UserVerify(message) => StepV2::UserVerify {
                    step_name,
                    conditional_block,
                    loop_block,
                    message: message.clone(),
                },
                Kind::UserInput { message, multiple } => StepV2::UserInput {
                    step_name,
                    conditional_block,
                    loop_block,
                    message: message.clone(),
                    options: multiple.then(Vec::new),
                },
                Kind::Exit { message, error } => StepV2::Exit {
                    step_name,
                    conditional_block,
                    loop_block,
                    message: message.clone(),
                    error: *error,
                },
                Kind::InvokeTool { tool, args } => StepV2::InvokeTool {
                    step_name,
                    conditional_block,
                    loop_block,
                    tool: tool.clone(),
                    args: args.clone(),
                    output_schema: None,
                },
                Kind::Llm => StepV2::Llm {
                    step_name,
                    conditional_block,
                    loop_block,
                    task: step.task.clone(),
                    inputs: inputs(),
                    output_schema: None,
                    system_prompt: None,
                    model: None,
                },
                Kind::SingleToolAgent(tool) => StepV2::SingleToolAgent {
                    step_name,
                    conditional_block,
                    loop_block,
                    task: step.task.clone(),
                    tool: tool.clone(),
                    inputs: inputs(),
                    output_schema: None,
                    model: None,
                },
                Kind::ReactAgent(tools) => StepV2::ReactAgent {
                    step_name,
                    conditional_block,
                    loop_block,
                    task: step.task.clone(),
                    tools: tools.clone(),
                    inputs: inputs(),
                    output_schema: None,
                    tool_call_limit: DEFAULT_TOOL_CALL_LIMIT,
                    allow_agent_clarifications: false,
                    model: None,
                },
            };
            Converted {
                step: built,
                legacy_reason: None,
            }
        })
        .collect()
}

/// The parts the blocks from `block` outwards contribute for a step inside them at `index`.
fn chain_parts(drafts: &[Draft], mut block: Option<usize>, index: i64) -> Vec<String> {
    let mut parts = Vec::new();
    while let Some(b) = block {
        parts.extend(block_part(&drafts[b].clauses, index));
        block = drafts[b].parent;
    }
    parts
}

fn materialise(drafts: &[Draft], b: usize) -> ConditionalBlock {
    ConditionalBlock {
        clause_step_indexes: drafts[b].clauses.clone(),
        parent_conditional_block: drafts[b].parent.map(|p| Box::new(materialise(drafts, p))),
    }
}

// ---------------------------------------------------------------------------------------------
// Legacy → V2: the plan, its residue and its report
// ---------------------------------------------------------------------------------------------

fn assemble(plan: &Plan, steps: Vec<Converted>) -> PlanConversion {
    let mut residue = IndexMap::new();
    let mut report = LossReport::default();
    let mut keep = |report: &mut LossReport, key: String, value: Value, note: &str| {
        let to = format!("/legacy/entries/{}", escape_pointer_token(&key));
        report.push(EntryKind::Moved, Some(key.clone()), Some(to), note, None);
        residue.insert(key, value);
    };

    let id = match &plan.id {
        Some(id) => id.to_string(),
        None => {
            let id = derived_plan_id(plan);
            report.push(
                EntryKind::Defaulted,
                None,
                Some("/plan/id".into()),
                "the legacy plan has no id; V2 requires one: UUIDv5 of the plan's JSON",
                Some(Value::String(id.clone())),
            );
            keep(
                &mut report,
                "/plan/id".into(),
                absent(),
                "the plan had no id; a downgrade leaves it out again",
            );
            id
        }
    };
    report.push(
        EntryKind::Renamed,
        Some("/plan/plan_context/query".into()),
        Some("/plan/label".into()),
        row_note("plan.query"),
        None,
    );
    report.push(
        EntryKind::Renamed,
        Some("/plan/plan_context/tool_ids".into()),
        Some("/plan/tool_ids".into()),
        row_note("plan.tool_ids"),
        None,
    );

    let plan_inputs = match (&plan.plan_inputs, &plan.inputs) {
        (Some(inputs), v032) => {
            if let Some(v032) = v032 {
                keep(
                    &mut report,
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
            report.push(
                EntryKind::Renamed,
                Some("/plan/inputs".into()),
                Some("/plan/plan_inputs".into()),
                row_note("plan.inputs"),
                None,
            );
            for j in 0..v032.len() {
                report.push(
                    EntryKind::Defaulted,
                    None,
                    Some(format!("/plan/plan_inputs/{j}/value")),
                    "v0.3.2 plan inputs have no default value",
                    Some(Value::Null),
                );
            }
            keep(
                &mut report,
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
            report.push(
                EntryKind::Defaulted,
                None,
                Some("/plan/plan_inputs".into()),
                "plans before v0.3.2 have no inputs",
                Some(json!([])),
            );
            keep(
                &mut report,
                "/plan/plan_inputs".into(),
                absent(),
                "the plan had no `plan_inputs` key (before v0.3.2); a downgrade leaves it out",
            );
            Vec::new()
        }
    };

    report.push(
        EntryKind::Derived,
        Some("/plan/steps".into()),
        Some("/plan/steps".into()),
        row_note("plan.steps"),
        None,
    );
    for (i, (converted, source)) in steps.iter().zip(&plan.steps).enumerate() {
        match &converted.legacy_reason {
            None => report_builder_step(&mut report, i, &converted.step),
            Some(reason) => {
                let at = format!("/plan/steps/{i}");
                report.push(
                    EntryKind::Derived,
                    Some(at.clone()),
                    Some(format!("{at}/type")),
                    format!("kept verbatim as a legacy step: {reason}"),
                    Some(json!("legacy")),
                );
                report.push(
                    EntryKind::Derived,
                    Some(format!("{at}/output")),
                    Some(format!("{at}/step_name")),
                    "a legacy step is named after its output, without the `$`",
                    Some(Value::String(converted.step.step_name().to_owned())),
                );
                if source.condition.is_none() {
                    keep(
                        &mut report,
                        format!("{at}/condition"),
                        absent(),
                        "the step had no `condition` key (before 0.1.8); V2 writes null, a \
                         downgrade leaves the key out",
                    );
                }
                for (j, input) in source.inputs.iter().enumerate() {
                    if let Some(value) = &input.value {
                        keep(
                            &mut report,
                            format!("{at}/inputs/{j}/value"),
                            value.clone(),
                            "a constant `Variable.value` (removed in v0.1.12); V2 has no slot",
                        );
                    }
                }
                for (key, value) in &source.extra {
                    keep(
                        &mut report,
                        format!("{at}/{}", escape_pointer_token(key)),
                        value.clone(),
                        "an unknown step key (Step is extra=\"allow\" from 0.1.7); V2 has no slot",
                    );
                }
            }
        }
    }

    report.push(
        EntryKind::Defaulted,
        None,
        Some("/plan/summarize".into()),
        "legacy plans do not summarise their final output (the builder's default)",
        Some(Value::Bool(false)),
    );
    report.push(
        EntryKind::Defaulted,
        None,
        Some("/plan/final_output_schema".into()),
        "a legacy plan's structured_output_schema is never written by the SDK",
        Some(Value::Null),
    );

    PlanConversion {
        plan: PlanV2 {
            id,
            label: plan.plan_context.query.clone(),
            tool_ids: plan.plan_context.tool_ids.clone(),
            steps: steps.into_iter().map(|c| c.step).collect(),
            plan_inputs,
            summarize: false,
            final_output_schema: None,
        },
        residue,
        report,
    }
}

fn row_note(id: &str) -> String {
    let row = renames::row(id);
    format!("{} {}: {}", row.step(), row.id, row.note)
}

/// The entries of a recognised builder step: its type, name and blocks, and each field.
fn report_builder_step(report: &mut LossReport, i: usize, step: &StepV2) {
    let at = format!("/plan/steps/{i}");
    let from = |field: &str| Some(format!("{at}/{field}"));
    let tag = step.type_tag();
    let derived = |report: &mut LossReport, source: &str, field: &str, note: &str| {
        report.push(EntryKind::Derived, from(source), from(field), note, None);
    };
    let defaulted = |report: &mut LossReport, field: &str, value: Value, note: &str| {
        report.push(EntryKind::Defaulted, None, from(field), note, Some(value));
    };
    report.push(
        EntryKind::Derived,
        Some(at.clone()),
        from("type"),
        format!(
            "recognised as a Plan Builder step by its task prefix and tool id; to_legacy_plan \
             of the `{tag}` step gives the legacy step back exactly (open question 6)"
        ),
        Some(json!(tag)),
    );
    report.push(
        EntryKind::Derived,
        from("output"),
        from("step_name"),
        "the output is the positional `$step_N_output`; the name is the SDK's default \
         `step_N` (a custom step_name never reaches the legacy plan)",
        Some(Value::String(step.step_name().to_owned())),
    );
    derived(
        report,
        "condition",
        "conditional_block",
        "the conditional block is rebuilt from the clause steps; the legacy condition is derived \
         from it",
    );
    if step.loop_block().is_none() {
        defaulted(
            report,
            "loop_block",
            Value::Null,
            "the builder sets a loop block on loop clause steps only",
        );
    }
    let refs = "variable names become references: `$step_N_output` a step output by index, any \
                other name a plan input";
    match step {
        StepV2::InvokeTool { .. } => {
            report.push(
                EntryKind::Renamed,
                from("tool_id"),
                from("tool"),
                "the invoked tool",
                None,
            );
            derived(
                report,
                "task",
                "args",
                "parsed from `Use tool X with args: k=v, …`; a value shown as the next input \
                 variable is that reference, any other value stays a string (open question 3)",
            );
            derived(report, "inputs", "args", refs);
            defaulted(
                report,
                "output_schema",
                Value::Null,
                "not in the legacy plan",
            );
        }
        StepV2::Llm { .. } => {
            derived(
                report,
                "tool_id",
                "type",
                "`llm_tool` is the LLM step's tool id",
            );
            derived(report, "inputs", "inputs", refs);
            for field in ["output_schema", "system_prompt", "model"] {
                defaulted(report, field, Value::Null, "not in the legacy plan");
            }
        }
        StepV2::SingleToolAgent { .. } => {
            report.push(
                EntryKind::Renamed,
                from("tool_id"),
                from("tool"),
                "the agent's one tool",
                None,
            );
            derived(report, "inputs", "inputs", refs);
            for field in ["output_schema", "model"] {
                defaulted(report, field, Value::Null, "not in the legacy plan");
            }
        }
        StepV2::ReactAgent { .. } => {
            derived(
                report,
                "tool_id",
                "tools",
                "the ReAct agent's tool ids, comma-joined in the legacy step",
            );
            derived(report, "inputs", "inputs", refs);
            for field in ["output_schema", "model"] {
                defaulted(report, field, Value::Null, "not in the legacy plan");
            }
            defaulted(
                report,
                "tool_call_limit",
                json!(DEFAULT_TOOL_CALL_LIMIT),
                "not in the legacy plan; the builder's default",
            );
            defaulted(
                report,
                "allow_agent_clarifications",
                Value::Bool(false),
                "not in the legacy plan; the builder's default",
            );
        }
        StepV2::Conditional { .. } => {
            derived(
                report,
                "task",
                "condition",
                "the text after `Conditional clause: ` (a callable shows as `If result of <name> \
                 is true`)",
            );
            derived(
                report,
                "inputs",
                "args",
                "argument names are not in the legacy plan; each reference is keyed by its \
                 variable name",
            );
            derived(
                report,
                "task",
                "clause_index_in_block",
                "the clause's position among its block's clause steps",
            );
            derived(
                report,
                "condition",
                "block_clause_type",
                "if, else-if/else or endif, told apart by the condition the SDK derives for each",
            );
        }
        StepV2::Loop { condition, .. } => {
            derived(
                report,
                "task",
                "condition",
                "the text after `Loop clause: `; `If result of None is true` is a loop without \
                 a condition",
            );
            derived(
                report,
                "task",
                "loop_type",
                if condition.is_some() {
                    "while and do-while loops write the same legacy steps; WHILE is assumed"
                } else {
                    "a loop without a condition is a for-each loop"
                },
            );
            derived(
                report,
                "task",
                "loop_step_type",
                "an end clause repeats its start clause (the builder copies it)",
            );
            derived(
                report,
                "task",
                "loop_block",
                "the start and end clause steps of the loop",
            );
            derived(
                report,
                "inputs",
                "args",
                "argument names are not in the legacy plan; each reference is keyed by its \
                 variable name",
            );
            defaulted(
                report,
                "over",
                Value::Null,
                "what a for-each loop iterates over is not in the legacy plan",
            );
            defaulted(report, "index", json!(0), "the SDK's default");
        }
        StepV2::UserInput { options, .. } => {
            derived(
                report,
                "task",
                "message",
                "the text after `User input (…): `",
            );
            let note = if options.is_some() {
                "a multiple-choice question whose choices are not in the legacy plan: `[]`"
            } else {
                "a free-text question"
            };
            defaulted(report, "options", json!(options), note);
        }
        StepV2::UserVerify { .. } => {
            derived(
                report,
                "task",
                "message",
                "the text after `User verification: `",
            );
        }
        StepV2::Exit { .. } => {
            derived(
                report,
                "task",
                "message",
                "the text after `Exit plan: ` / `Exit plan with error: `",
            );
            derived(
                report,
                "task",
                "error",
                "`Exit plan with error: ` marks an error exit",
            );
        }
        StepV2::SubPlan { .. } | StepV2::Legacy { .. } => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Python's str()/repr() of a JSON literal, for invoke-tool tasks
// ---------------------------------------------------------------------------------------------

/// `str(value)` as an f-string shows a literal: a string as itself, anything else as `repr`.
fn py_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// Python's `repr` of the value `json.loads` would give.
fn py_repr(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => py_number(&n.to_string()),
        Value::String(s) => py_quote(s),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(py_repr).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", py_quote(k), py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A JSON number as Python shows it: integers exactly, floats with `repr`'s shortest digits.
fn py_number(text: &str) -> String {
    if !text.contains(['.', 'e', 'E']) {
        let zero = text.trim_start_matches('-').bytes().all(|b| b == b'0');
        return if zero { "0".into() } else { text.into() };
    }
    match text.parse::<f64>() {
        Ok(f) => py_float(f),
        Err(_) => text.into(),
    }
}

/// Python's `repr(float)`: positional for exponents −4..16, else `d.ddde±XX`.
fn py_float(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    let scientific = format!("{f:e}");
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` always writes an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` writes a decimal exponent");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|&c| c != '.').collect();
    let body = if (-4..16).contains(&exponent) {
        if exponent >= 0 {
            let point = exponent as usize + 1;
            if digits.len() <= point {
                format!("{digits}{}.0", "0".repeat(point - digits.len()))
            } else {
                format!("{}.{}", &digits[..point], &digits[point..])
            }
        } else {
            format!("0.{}{digits}", "0".repeat((-exponent - 1) as usize))
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let mantissa = if rest.is_empty() {
            first.to_owned()
        } else {
            format!("{first}.{rest}")
        };
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    };
    format!("{sign}{body}")
}

/// Python's `repr(str)`: single quotes unless the text has `'` and no `"`; backslash escapes for
/// the quote, `\\`, `\t`, `\n`, `\r` and non-printable characters (control, format and separator
/// characters; an approximation of `str.isprintable` for the rarest code points).
fn py_quote(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !py_printable(c) => {
                let code = c as u32;
                if code < 0x100 {
                    out.push_str(&format!("\\x{code:02x}"));
                } else if code < 0x10000 {
                    out.push_str(&format!("\\u{code:04x}"));
                } else {
                    out.push_str(&format!("\\U{code:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

fn py_printable(c: char) -> bool {
    !(c.is_control()
        || matches!(
            c,
            '\u{a0}'
                | '\u{ad}'
                | '\u{1680}'
                | '\u{2000}'..='\u{200f}'
                | '\u{2028}'..='\u{202f}'
                | '\u{205f}'..='\u{2064}'
                | '\u{3000}'
                | '\u{feff}'
                | '\u{e000}'..='\u{f8ff}'
        ))
}

// ---------------------------------------------------------------------------------------------
// UUIDv5 (SHA-1), for derived plan ids
// ---------------------------------------------------------------------------------------------

/// RFC 4122's URL namespace.
const NAMESPACE_URL: u128 = 0x6ba7b811_9dad_11d1_80b4_00c04fd430c8;

fn plan_namespace() -> u128 {
    uuid5(NAMESPACE_URL, b"urn:planrun-migrate:plan")
}

/// RFC 4122 UUID version 5: SHA-1 of namespace and name, with version and variant bits set.
fn uuid5(namespace: u128, name: &[u8]) -> u128 {
    let mut data = namespace.to_be_bytes().to_vec();
    data.extend_from_slice(name);
    let hash = sha1(&data);
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&hash[..16]);
    bytes[6] = (bytes[6] & 0x0f) | 0x50;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    u128::from_be_bytes(bytes)
}

/// SHA-1 (FIPS 180-4); used only to name things, never for security.
fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [
        0x6745_2301,
        0xefcd_ab89,
        0x98ba_dcfe,
        0x1032_5476,
        0xc3d2_e1f0,
    ];
    let mut message = data.to_vec();
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&((data.len() as u64).wrapping_mul(8)).to_be_bytes());
    for chunk in message.chunks_exact(64) {
        let mut w = [0u32; 80];
        for (t, word) in chunk.chunks_exact(4).enumerate() {
            w[t] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for t in 16..80 {
            w[t] = (w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (t, word) in w.iter().enumerate() {
            let (f, k) = match t {
                0..=19 => ((b & c) | (!b & d), 0x5a82_7999),
                20..=39 => (b ^ c ^ d, 0x6ed9_eba1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8f1b_bcdc),
                _ => (b ^ c ^ d, 0xca62_c1d6),
            };
            let next = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*word);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = next;
        }
        for (state, value) in h.iter_mut().zip([a, b, c, d, e]) {
            *state = state.wrapping_add(value);
        }
    }
    let mut out = [0u8; 20];
    for (bytes, word) in out.chunks_exact_mut(4).zip(h) {
        bytes.copy_from_slice(&word.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_and_uuid5_match_their_standards() {
        let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
        assert_eq!(
            hex(&sha1(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(hex(&sha1(b"")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        let long = [b'a'; 1000];
        assert_eq!(
            hex(&sha1(&long)),
            "291e9a6c66994949b57ba5e650361e98fc36b1ba"
        );
        // Python: uuid.uuid5(uuid.NAMESPACE_DNS, "python.org")
        let dns = 0x6ba7b810_9dad_11d1_80b4_00c04fd430c8;
        assert_eq!(
            uuid5(dns, b"python.org"),
            0x886313e1_3b8a_5372_9b90_0c9aee199e5d
        );
    }

    #[test]
    fn python_reprs() {
        for (text, shown) in [
            ("5", "5"),
            ("-0", "0"),
            (
                "123456789012345678901234567890",
                "123456789012345678901234567890",
            ),
            ("4.5", "4.5"),
            ("1.0", "1.0"),
            ("100.0", "100.0"),
            ("1e16", "1e+16"),
            ("1.5e-7", "1.5e-07"),
            ("0.0001", "0.0001"),
            ("-0.0", "-0.0"),
            ("1E300", "1e+300"),
            ("123456789.125", "123456789.125"),
        ] {
            assert_eq!(py_number(text), shown, "{text}");
        }
        let value = json!([null, true, "it's", "a\"b'c", "tab\there", {"k": [1, 2.5]}]);
        assert_eq!(
            py_repr(&value),
            r#"[None, True, "it's", 'a"b\'c', 'tab\there', {'k': [1, 2.5]}]"#
        );
        assert_eq!(py_str(&json!("plain")), "plain");
    }

    #[test]
    fn conditions_follow_the_sdk() {
        let clauses = [0, 2, 4, 6];
        let part = |i| block_part(&clauses, i);
        assert_eq!(part(0), None);
        assert_eq!(part(1).as_deref(), Some("$step_0_output is true"));
        assert_eq!(part(2).as_deref(), Some("$step_0_output is false"));
        assert_eq!(
            part(3).as_deref(),
            Some("$step_2_output is true and $step_0_output is false")
        );
        assert_eq!(
            part(5).as_deref(),
            Some("$step_4_output is true and $step_0_output is false and $step_2_output is false")
        );
        assert_eq!(part(6), None);
        assert_eq!(block_part(&[3, 5], 1), None, "a step before the block");
    }

    #[test]
    fn positional_names_are_canonical() {
        assert_eq!(positional_index("$step_0_output"), Some(0));
        assert_eq!(positional_index("$step_12_output"), Some(12));
        for name in [
            "$step_01_output",
            "$step__output",
            "$step_-1_output",
            "step_1_output",
        ] {
            assert_eq!(positional_index(name), None, "{name}");
        }
    }
}
