//! Recognition: which Plan Builder step class each legacy step is the `to_legacy_step` of, and
//! the conditional and loop blocks the builder nested them in (rules: [`super::plan_from_legacy`]).

use indexmap::IndexMap;
use serde_json::Value;

use planrun_legacy::{Step, Variable};
use planrun_v2::{
    ArgValue, BlockClauseType, ConditionalBlock, LegacyVariable, LoopBlock, LoopStepType, LoopType,
    PlanV2, StepRef, StepV2, DEFAULT_TOOL_CALL_LIMIT,
};

use super::to_legacy::{
    block_part, dollar, legacy_steps, positional_output, render_condition, NO_LOOP_CONDITION,
};
use super::LLM_TOOL_ID;

/// What an `endif` clause says: `PlanBuilderV2.endif()` always gives it `condition=lambda: True`
/// and no args (as `else_()` does; only `if_` and `else_if_` take a condition and args).
const ENDIF_CONDITION: &str = "If result of <lambda> is true";

/// A converted step and why it has its type.
pub(super) struct Converted {
    pub(super) step: StepV2,
    /// `None` for a recognised builder step, else why it stayed `legacy`.
    pub(super) legacy_reason: Option<String>,
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

/// Every step kept verbatim as a `legacy` step, for `reason`.
pub(super) fn all_legacy(steps: &[Step], reason: &str) -> Vec<Converted> {
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

/// The V2 steps of a legacy plan's steps: builder steps where the plan is positional and each
/// step reproduces, `legacy` steps elsewhere.
pub(super) fn recognise(steps: &[Step]) -> Vec<Converted> {
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
                let (block, clause_kind) = if let Some((b, kind)) = role {
                    layout.drafts[b].clauses.push(index);
                    if kind == BlockClauseType::EndConditionBlock {
                        layout.open.pop();
                    }
                    (b, kind)
                } else {
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
            if let Kind::Conditional(_) = kind {
                let clause = clauses[i].as_ref().expect("every clause step has a place");
                debug_assert_eq!(in_block[i], Some(clause.block));
            }
            let placed = Placed {
                step_name,
                conditional_block,
                loop_block,
                clause: clauses[i].as_ref(),
                loop_step_type: loops[i].map(|(kind, _)| kind),
            };
            builder_step(step, kind, placed)
        })
        .collect()
}

/// Where a recognised step sits: its name, the blocks around it, its place among its block's
/// clauses and, for a loop clause, whether it starts or ends the loop.
struct Placed<'l> {
    step_name: String,
    conditional_block: Option<ConditionalBlock>,
    loop_block: Option<LoopBlock>,
    clause: Option<&'l Clause>,
    loop_step_type: Option<LoopStepType>,
}

/// The Plan Builder step a legacy step of `kind` is, placed as `placed`; a step of no builder
/// kind stays legacy, with why.
fn builder_step(step: &Step, kind: &Kind, placed: Placed<'_>) -> Converted {
    let Placed {
        step_name,
        conditional_block,
        loop_block,
        clause,
        loop_step_type,
    } = placed;
    let inputs = || step.inputs.iter().map(|v| reference(&v.name)).collect();
    let built = match kind {
        Kind::Unmatched(reason) => {
            return Converted {
                step: legacy_variant(step),
                legacy_reason: Some((*reason).to_owned()),
            }
        }
        Kind::Conditional(condition) => {
            let clause = clause.expect("every clause step has a place");
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
            loop_step_type: loop_step_type.unwrap_or(LoopStepType::Start),
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

#[cfg(test)]
mod tests {
    use super::*;

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
