//! The form the SDK at HEAD writes: what its `model_dump_json(indent=4)` gives for a document it
//! loads. A file written in this form loads at HEAD and saves back byte for byte, so this is
//! the form of every file planrun writes into a HEAD store.
//!
//! Bringing a document to HEAD's form fills in what HEAD writes by default, rewrites what HEAD
//! cannot load into the nearest form it can, and leaves out what HEAD ignores; every such change
//! is listed, so that a caller can report it or keep the value elsewhere.

use serde_json::Value;

use crate::clarification::{Category, Clarification, RunRefKey};
use crate::document::normalizations;
use crate::plan::{first_repeated, validator_key, Plan, PlanInput};
use crate::run::RunR6;
use crate::sdk::clarification_as_saved;
use crate::{Normalization, Version};

/// A document in HEAD's form, with what bringing it there changed (pointers into the document).
#[derive(Debug, Clone, PartialEq)]
pub struct AtHead<T> {
    /// The document as HEAD writes it.
    pub document: T,
    /// What changed: keys HEAD writes by default (`defaulted`), values rewritten into a form HEAD
    /// loads (`coerced`) and keys HEAD ignores on load and so never writes (`dropped`).
    pub changes: Vec<Normalization>,
}

/// A plan in HEAD's form:
/// * v0.3.2's `inputs` become `plan_inputs` (their v0.3.4 name: HEAD's `Plan` forbids `inputs`,
///   so such a plan fails to load), each with its description and no default value;
/// * an absent `plan_inputs` is written `[]` and an absent `condition` `null`, as HEAD writes them;
/// * `Variable.value` (before v0.1.12), which HEAD's `Variable` ignores, is left out;
/// * `plan_context.tool_ids` is sorted, as HEAD's serializer writes it (so it was before 0.1.6);
/// * in a plan of 0.0.1-alpha.50 – 0.1.5 (no step has `condition`), an output that a later step
///   repeats is renamed (see [`unique_outputs`]): HEAD's `Plan` validator refuses a repeat.
pub fn plan(plan: &Plan) -> AtHead<Plan> {
    let mut head = plan.clone();
    if head.steps.iter().all(|step| step.condition.is_none()) {
        unique_outputs(&mut head);
    }
    head.plan_context.tool_ids.sort();
    if let Some(inputs) = head.inputs.take() {
        let renamed: Vec<PlanInput> = inputs
            .into_iter()
            .map(|input| PlanInput {
                name: input.name,
                description: Some(input.description),
                value: Value::Null,
            })
            .collect();
        head.plan_inputs = Some(renamed);
    }
    head.plan_inputs.get_or_insert_with(Vec::new);
    for step in &mut head.steps {
        step.condition.get_or_insert(None);
        for variable in &mut step.inputs {
            variable.value = None;
        }
    }
    let mut at = at_head(plan, head);
    if let (Some(from), Some(to)) = (&plan.inputs, &at.document.plan_inputs) {
        // One rename, not a drop and a default: the inputs are all there under their new name.
        at.changes
            .retain(|c| !matches!(c, Normalization::Dropped { pointer, .. } | Normalization::Defaulted { pointer, .. } if pointer == "/inputs" || pointer == "/plan_inputs"));
        at.changes.insert(
            0,
            Normalization::Coerced {
                pointer: "/inputs".to_owned(),
                from: serde_json::to_value(from).expect("plan inputs are JSON"),
                to: serde_json::to_value(to).expect("plan inputs are JSON"),
            },
        );
    }
    at
}

/// Renames each output that a later step of the plan repeats to `<output>_step_<i>` (`i` its
/// step's index; more `_` while that name is taken), so every output is unique. In a run of such
/// a plan the later step's output replaced the earlier one's under the shared name, so the run's
/// step outputs keep their names and meaning; only the earlier step's output name changes.
fn unique_outputs(plan: &mut Plan) {
    let mut taken: std::collections::HashSet<String> =
        plan.steps.iter().map(|step| step.output.clone()).collect();
    for i in 0..plan.steps.len() {
        let output = &plan.steps[i].output;
        if !plan.steps[i + 1..]
            .iter()
            .any(|later| later.output == *output)
        {
            continue;
        }
        let mut renamed = format!("{output}_step_{i}");
        while taken.contains(&renamed) {
            renamed.push('_');
        }
        taken.insert(renamed.clone());
        plan.steps[i].output = renamed;
    }
}

/// An R6 run in HEAD's form; only its clarifications can differ:
/// * a W1 `Argument` clarification (a category HEAD's enum lacks, so the whole run fails to load)
///   becomes an `Input` one with the base class's keys, which HEAD loads as its base
///   `Clarification`;
/// * each is written as the class of HEAD's clarification union that loads it (which its keys
///   decide, not its category), with that class's keys and defaults (an action's absent
///   `require_confirmation` `false`), and `source` and an absent run reference `null`; keys
///   that class does not have are left out.
pub fn run(run: &RunR6) -> AtHead<RunR6> {
    let mut head = run.clone();
    for clarification in &mut head.outputs.clarifications {
        to_head(clarification);
    }
    at_head(run, head)
}

fn to_head(clarification: &mut Clarification) {
    if clarification.category == Category::Argument {
        clarification.category = Category::Input;
        clarification.fields.clear();
    }
    if let Some((key, _)) = &mut clarification.run_ref {
        *key = RunRefKey::PlanRunId;
    }
    // With a category HEAD has, some class of its union (the base one at least) loads it.
    *clarification = clarification_as_saved(clarification, Version::HEAD)
        .expect("HEAD's base Clarification loads any clarification of a HEAD category");
}

fn at_head<T: serde::Serialize>(before: &T, document: T) -> AtHead<T> {
    let from = serde_json::to_value(before).expect("legacy documents are JSON");
    let to = serde_json::to_value(&document).expect("legacy documents are JSON");
    AtHead {
        changes: normalizations(&from, &to),
        document,
    }
}

/// Why the `Plan` validators of the SDK from v0.1.8 to HEAD refuse a plan: two steps whose
/// `output + (condition or "")` is the same, or two plan inputs of one name. Pointers are into
/// the plan; empty when they accept it.
pub fn plan_validator_fails(plan: &Plan) -> Vec<String> {
    let mut fails = Vec::new();
    let keys = plan.steps.iter().map(|s| {
        let condition = s.condition.as_ref().and_then(Option::as_deref);
        Some(validator_key(&s.output, condition))
    });
    if let Some((i, key)) = first_repeated(keys) {
        fails.push(format!(
            "/steps/{i}: HEAD's Plan validator refuses a repeated output + condition ({key:?})"
        ));
    }
    let names = plan
        .plan_inputs
        .iter()
        .flatten()
        .map(|input| Some(input.name.as_str()));
    if let Some((i, name)) = first_repeated(names) {
        fails.push(format!(
            "/plan_inputs/{i}: HEAD's Plan validator refuses a repeated input name ({name:?})"
        ));
    }
    fails
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::PlanContext;

    fn plan_with(outputs: &[&str]) -> Plan {
        Plan {
            id: None,
            plan_context: PlanContext {
                query: "q".to_owned(),
                tool_ids: Vec::new(),
            },
            steps: outputs
                .iter()
                .map(|o| crate::Step {
                    task: "t".to_owned(),
                    inputs: Vec::new(),
                    tool_id: None,
                    output: (*o).to_owned(),
                    condition: None,
                    extra: indexmap::IndexMap::new(),
                })
                .collect(),
            inputs: None,
            plan_inputs: None,
        }
    }

    /// 0.0.1-alpha.50 – 0.1.5 wrote plans that repeat an output; HEAD's validator refuses them,
    /// so HEAD's form renames every earlier repeat (the run keeps the last step's value under
    /// the name), never onto a name the plan already has, and each rename is a listed change.
    #[test]
    fn an_output_a_later_step_repeats_is_renamed_to_a_free_name() {
        let at = plan(&plan_with(&["$a", "$b", "$a_step_0", "$a", "$b"]));
        let outputs: Vec<&str> = at
            .document
            .steps
            .iter()
            .map(|s| s.output.as_str())
            .collect();
        assert_eq!(
            outputs,
            ["$a_step_0_", "$b_step_1", "$a_step_0", "$a", "$b"]
        );
        assert!(plan_validator_fails(&at.document).is_empty());
        let renamed: Vec<&str> = at
            .changes
            .iter()
            .filter_map(|c| match c {
                Normalization::Coerced { pointer, .. } => Some(pointer.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(renamed, ["/steps/0/output", "/steps/1/output"]);
    }

    /// A plan whose steps have `condition` (0.1.8 on) never repeats an output + condition (the
    /// reader refuses one), so HEAD's form leaves its outputs alone.
    #[test]
    fn outputs_of_a_plan_with_conditions_are_left_alone() {
        let mut conditioned = plan_with(&["$a", "$a"]);
        conditioned.steps[0].condition = Some(Some("If x".to_owned()));
        conditioned.steps[1].condition = Some(None);
        let at = plan(&conditioned);
        assert_eq!(at.document.steps[0].output, "$a");
        assert_eq!(at.document.steps[1].output, "$a");
    }
}
