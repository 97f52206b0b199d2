//! The legacy `Plan` of every SDK release ↔ `PlanV2`, exact in both directions:
//! `plan_to_legacy(&c.plan, &c.residue) == original` for `c = plan_from_legacy(&original)`.

mod assembly;
mod rebuilt;
mod recognition;
mod to_legacy;
mod uuid5;

use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::{json, Value};

use planrun_legacy::{Plan, Prefix, PrefixedId};
use planrun_v2::PlanV2;

use crate::report::LossReport;

pub use rebuilt::{is_rebuilt, rebuilt_plan, rebuilt_plan_entries, REBUILT_PLAN_KEY};
pub use to_legacy::plan_to_legacy;

/// The SDK's `LLMTool.LLM_TOOL_ID`: the tool id of every LLM step.
pub const LLM_TOOL_ID: &str = "llm_tool";

/// A legacy plan converted to V2, with what V2 cannot hold and what the conversion did.
///
/// The residue is keyed by pointers into the virtual legacy document (`/plan/…`); the run
/// converter stores it under `/legacy/entries`:
/// * `/plan/steps/<i>/inputs/<j>/value`: a pre-0.1.12 `Variable.value` (any JSON, `null` included);
/// * `/plan/steps/<i>/<key>`: an unknown step key (`extra="allow"`, 0.1.7+), in source order;
/// * `/plan/steps/<i>/condition` = [`absent`]: the step had no `condition` key (before 0.1.8);
/// * `/plan/id` = [`absent`]: the plan had no id (V2 gets a derived one, see [`derived_plan_id`]);
/// * `/plan/plan_inputs` = [`absent`]: the plan had neither `inputs` nor `plan_inputs` (before v0.3.2);
/// * `/plan/inputs` = [`renamed_to_plan_inputs`]: the v0.3.2 spelling (the list itself is in
///   `PlanV2.plan_inputs`); or, when a plan has both keys, the `inputs` list itself.
///
/// A marker is an object, which no condition, id or input list can be, so it is never mistaken for
/// a kept value.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanConversion {
    /// The plan, steps 1:1 with the legacy steps; shared by the V2 runs that execute it.
    pub plan: Arc<PlanV2>,
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
    PrefixedId::new(Prefix::Plan, uuid5::plan_uuid(&bytes)).to_string()
}

/// Converts a legacy plan to V2: each step that the SDK's Plan Builder could have written becomes
/// that builder step, any other step the `legacy` step type, verbatim (the rules are those of
/// recognition, below). What the legacy form cannot tell is filled with documented choices, each
/// one a `derived` or `defaulted` report entry: step names are the SDK's default `step_{i}` (a
/// custom `step_name` never reaches the legacy plan); references to steps are by index;
/// invoke-tool argument values that are not references stay the strings the task shows (nothing
/// is decoded); conditional and loop arguments are keyed by their variable name; a
/// conditional's `condition` is the clause text after `Conditional clause: ` (for a callable, the
/// SDK's `If result of <name> is true`); a loop with a condition is a `WHILE` loop (a do-while
/// writes the same legacy steps), one without (`If result of None is true`) a `FOR_EACH` loop
/// whose `over` is unknown (`null`); output schemas, models and system prompts are `null`, ReAct
/// limits the builder's defaults.
///
/// A `legacy` step keeps task, inputs (name, description), tool id, output and condition verbatim;
/// its `step_name` is its output name without the leading `$` (so `$flights` → `flights`; two steps
/// that share an output under different conditions share the name, as their outputs do).
///
/// Recognition accepts exactly what the SDK's `to_legacy_plan` produces:
/// 1. Only a plan whose outputs are all positional (`steps[i].output == "$step_{i}_output"`)
///    can be builder-made; in any other (planner-made) plan every step becomes `legacy`.
/// 2. Each step is mapped by pattern: with no tool id, the task prefixes `Conditional clause: `,
///    `Loop clause: `, `User verification: `, `User input (Multiple choice): `,
///    `User input (Text input): `, `Exit plan with error: `, `Exit plan: `; with a tool id,
///    `Use tool <tool_id> with args: …` → `invoke_tool`, `llm_tool` → `llm`, a comma-joined or
///    empty id → `react_agent`, any other id → `single_tool_agent`. `Run sub-plan: …` (the legacy
///    form omits the sub-plan), `Run function …` (an older FunctionStep) and an unparsable
///    `Use tool …` have no faithful V2 step and stay `legacy`.
/// 3. Conditional and loop blocks are rebuilt the way the builder nests them: a clause step
///    continues the innermost open conditional block when its condition is the one an `else`
///    (`$step_K_output is false …`) or an `endif` of that block gets (an `endif` also reads
///    `Conditional clause: If result of <lambda> is true` without inputs, as `endif()` always
///    writes it), and opens a new block otherwise; a loop clause that repeats the innermost open
///    loop's start (the builder copies the start's condition and args into the end) closes it or
///    opens a nested loop, whichever gives every step the condition it has and leaves no block
///    open at the end (`build()` raises on an open block): a bounded search, closing first. Where
///    both fit, two builder plans write the same legacy plan (nested for-each loops read like
///    consecutive ones, and an `if_` with a lambda condition like an `endif`), and the one that
///    closes first is taken. Any other loop clause opens a loop.
/// 4. The result is verified: `to_legacy` of every recognised step must give the input step back
///    exactly. A clause step that does not reproduce means the block structure is wrong, and then
///    every step becomes `legacy`; any other step that does not reproduce becomes `legacy` alone.
///    Finally the whole plan is written back and compared with the input and, should that ever
///    differ, converted all-`legacy`.
pub fn plan_from_legacy(plan: &Plan) -> PlanConversion {
    let conversion = assembly::assemble(plan, recognition::recognise(&plan.steps));
    if plan_to_legacy(&conversion.plan, &conversion.residue) == *plan {
        return conversion;
    }
    // Unreachable for plans the legacy parser produces; it keeps the exact round trip a guarantee.
    let reason = "the recognised plan did not round-trip; every step is kept verbatim";
    assembly::assemble(plan, recognition::all_legacy(&plan.steps, reason))
}
