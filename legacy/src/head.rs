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
use crate::{LegacyDocument, LegacyRun, Normalization, Output, Parsed, StepKey};

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
/// * `plan_context.tool_ids` is sorted, as HEAD's serializer writes it (so it was before 0.1.6).
pub fn plan(plan: &Plan) -> AtHead<Plan> {
    let mut head = plan.clone();
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

/// An R6 run in HEAD's form; only its clarifications can differ:
/// * a W1 `Argument` clarification (a category HEAD's enum lacks, so the whole run fails to load)
///   becomes an `Input` one with the base class's keys, which HEAD loads as its base
///   `Clarification`;
/// * an absent `source` is written `null`, and an action's absent `require_confirmation` `false`;
/// * keys HEAD's clarification classes ignore are left out.
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
    clarification.source.get_or_insert(None);
    if clarification.category == Category::Action
        && !clarification.fields.contains_key("require_confirmation")
    {
        clarification
            .fields
            .insert("require_confirmation".to_owned(), Value::Bool(false));
    }
    clarification.extra.clear();
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

/// What the SDK at HEAD would do with a file of a store: fail to load it, or load it and write
/// it back changed on its next save.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verdict {
    /// Why HEAD fails to load the file; empty when it loads.
    pub fails: Vec<String>,
    /// What HEAD changes when it saves the file back (pointers into the file): lenient
    /// spellings written canonically, defaults filled in, ignored keys left out.
    pub changes: Vec<Normalization>,
}

/// The keys of a run at HEAD; its model forbids every other.
const RUN_KEYS: [&str; 7] = [
    "id",
    "plan_id",
    "current_step_index",
    "state",
    "end_user_id",
    "outputs",
    "plan_run_inputs",
];

/// Judges a parsed store file as the SDK at HEAD would load it: a run with its `PlanRun` model
/// (which forbids unknown keys, so any older version fails), a plan with its `Plan` model and
/// validators, an end user, and an agent-memory file (which `DiskFileStorage` reads as a
/// `LocalDataValue`). `in_run_dir` says the file is `<run id>/<output name>.json`.
pub fn check(parsed: &Parsed, in_run_dir: bool) -> Verdict {
    let mut verdict = Verdict {
        changes: parsed.normalizations.clone(),
        ..Verdict::default()
    };
    verdict
        .changes
        .retain(|c| !matches!(c, Normalization::Reformatted));
    match &parsed.document {
        LegacyDocument::Run(LegacyRun::R6(run)) if parsed.step_key == StepKey::Index => {
            // The reader refuses an R6 run with a W1 "Argument" clarification (no SDK that
            // writes R6 loads one), so only HEAD's defaults and dropped keys are left to find.
            verdict.changes.extend(self::run(run).changes);
        }
        LegacyDocument::Run(run) => {
            let tree = serde_json::to_value(&parsed.document).expect("legacy documents are JSON");
            let keys: Vec<&str> = tree
                .as_object()
                .map(|o| o.keys().map(String::as_str).collect())
                .unwrap_or_default();
            let forbidden: Vec<&str> = keys
                .iter()
                .copied()
                .filter(|k| !RUN_KEYS.contains(k))
                .collect();
            let versions = parsed.detection.versions;
            let releases = versions.releases();
            let mut clauses = Vec::new();
            if parsed.step_key == StepKey::Id {
                clauses.push(
                    "forbids current_step_id (it names the step current_step_index)".to_owned(),
                );
            }
            if !forbidden.is_empty() {
                clauses.push(format!("forbids {}", forbidden.join(", ")));
            }
            if !keys.contains(&"end_user_id") {
                clauses.push("requires end_user_id".to_owned());
            }
            let mut why = format!(
                "written as {versions} (SDK {releases}): HEAD's PlanRun {}",
                clauses.join(" and ")
            );
            if run.version().run_prefix() != crate::Prefix::Prun {
                why.push_str(&format!(
                    "; its id prefix {}- is not prun-, so get_plan_runs() does not even list it",
                    run.version().run_prefix().as_str()
                ));
            }
            verdict.fails.push(why);
            verdict.changes.clear();
        }
        LegacyDocument::Plan(plan) => {
            if plan.inputs.is_some() {
                verdict.fails.push(
                    "/inputs: HEAD's Plan forbids this key (v0.3.2's plan inputs, named plan_inputs from v0.3.4)"
                        .to_owned(),
                );
            }
            verdict.fails.extend(plan_validator_fails(plan));
            let at = self::plan(plan);
            verdict.changes.extend(at.changes.into_iter().filter(
                |c| !matches!(c, Normalization::Coerced { pointer, .. } if pointer == "/inputs"),
            ));
        }
        LegacyDocument::Output(Output::AgentMemory(_)) if in_run_dir => verdict.fails.push(
            "an agent-memory file must hold the value (a LocalDataValue), not another reference"
                .to_owned(),
        ),
        _ => {}
    }
    verdict
}
