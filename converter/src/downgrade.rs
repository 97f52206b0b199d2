//! `PlanRunV2` back to the current legacy format: an R6 run, its Plan and its EndUser. Residue
//! that R6 cannot hold (an old execution context, say) is refused unless the caller allows the
//! loss, and then each dropped value is reported.

use std::collections::HashMap;

use indexmap::IndexMap;
use serde_json::{Map, Value};

use planrun_legacy::{
    Clarification, LocalDataValue, Normalization, Output, Outputs, PlanId, RunId, RunR6, Version,
    MAX_SAFE_INTEGER,
};
use planrun_v2::PlanRunV2;
use planrun_wire::json::escape_pointer_token;

use crate::plan::{is_rebuilt, plan_to_legacy};
use crate::report::{EntryKind, LossReport};
use crate::upgrade::legacy_state;

/// A downgraded run.
#[derive(Debug, Clone, PartialEq)]
pub struct Downgraded {
    /// The R6 run.
    pub run: RunR6,
    /// Its legacy plan (`plan-<id>.json`); `None` when the V2 plan was rebuilt because the
    /// SDK never saved one, so a store gets no plan file, as the SDK left it.
    pub plan: Option<planrun_legacy::Plan>,
    /// Its end user (`<external_id>.json`).
    pub end_user: planrun_legacy::EndUser,
    /// What could not be written back, and what was rewritten.
    pub report: LossReport,
    /// What bringing the run and plan to HEAD's form changed ([`downgrade_to_head`]; empty
    /// after [`downgrade`]), so that a residue can undo it.
    pub undo: Undo,
}

/// The changes [`downgrade_to_head`] made to a run and its plan, with pointers into each file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Undo {
    /// Into the run file.
    pub run: Vec<Normalization>,
    /// Into the plan file.
    pub plan: Vec<Normalization>,
}

/// Why a V2 document was not downgraded.
#[derive(Debug, thiserror::Error)]
pub enum DowngradeError {
    /// The R6 format cannot hold these values; pass `allow_loss` to drop them (reported).
    #[error("downgrading would drop {} value(s) R6 cannot hold: {}; pass --allow-loss to drop them (each is reported)", .0.len(), .0.join(", "))]
    WouldDrop(Vec<String>),
    /// A value of the V2 document has no legacy form.
    #[error("cannot downgrade: {0}")]
    Invalid(String),
}

/// [`downgrade`], then each document brought to the form the SDK at HEAD writes
/// ([`planrun_legacy::head`]), so a store of these files loads at HEAD and saves back byte for
/// byte. What that changes is reported; a key HEAD cannot hold (it would ignore it) is refused
/// unless the caller allows the loss, like the residue [`downgrade`] cannot place.
pub fn downgrade_to_head(v2: &PlanRunV2, allow_loss: bool) -> Result<Downgraded, DowngradeError> {
    let mut down = downgrade(v2, allow_loss)?;
    let plan = down.plan.as_ref().map(planrun_legacy::head::plan);
    let plan_changes = plan.as_ref().map_or(&[][..], |p| &p.changes);
    let run = planrun_legacy::head::run(&down.run);
    let changes = [("/plan", plan_changes), ("/run", &run.changes[..])];
    let dropped: Vec<String> = changes
        .iter()
        .flat_map(|(doc, list)| {
            list.iter().filter_map(move |c| match c {
                Normalization::Dropped { pointer, .. } => Some(format!("{doc}{pointer}")),
                _ => None,
            })
        })
        .collect();
    if !dropped.is_empty() && !allow_loss {
        return Err(DowngradeError::WouldDrop(dropped));
    }
    for (doc, list) in changes {
        for change in list {
            match change {
                Normalization::Defaulted { pointer, value } => down.report.defaulted(
                    format!("{doc}{pointer}"),
                    "written as the SDK at HEAD writes it",
                    value.clone(),
                ),
                Normalization::Coerced { pointer, from, .. } => down.report.push(
                    EntryKind::Coerced,
                    Some(format!("{doc}{pointer}")),
                    Some(format!("{doc}{pointer}")),
                    head_note(pointer),
                    Some(from.clone()),
                ),
                Normalization::Dropped { pointer, value } => down.report.dropped(
                    format!("{doc}{pointer}"),
                    "the SDK at HEAD ignores this key, so a HEAD store cannot hold it",
                    value.clone(),
                ),
                Normalization::Reformatted => {}
            }
        }
    }
    down.undo = Undo {
        run: run.changes.clone(),
        plan: plan_changes.to_vec(),
    };
    down.plan = plan.map(|p| p.document);
    down.run = run.document;
    Ok(down)
}

/// Why a value was rewritten for HEAD.
fn head_note(pointer: &str) -> &'static str {
    if pointer == "/inputs" {
        "v0.3.2's plan inputs, under their v0.3.4 name plan_inputs: HEAD cannot load `inputs`"
    } else if pointer.ends_with("/output") {
        "an output an earlier step repeats, renamed: HEAD's Plan validator refuses a repeat \
         (0.1.6 on), and in the run the later step's output replaced the earlier one's"
    } else if pointer.ends_with("/category") {
        "a W1 Argument clarification, as the Input category HEAD loads (its base keys only)"
    } else {
        "rewritten into the form the SDK at HEAD loads"
    }
}

/// Converts a V2 document back to an R6 run, a legacy plan and an end user. The run is the R6
/// the migration chain gives: a W1 `Argument` clarification keeps its category, which no SDK
/// that writes R6 loads; [`downgrade_to_head`] makes the files a store holds.
pub fn downgrade(v2: &PlanRunV2, allow_loss: bool) -> Result<Downgraded, DowngradeError> {
    let mut report = LossReport::default();
    let empty = IndexMap::new();
    let residue = v2.legacy.as_ref().map_or(&empty, |r| &r.entries);
    let (plan_residue, run_residue): (IndexMap<_, _>, IndexMap<_, _>) = residue
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .partition(|(k, _)| k.starts_with("/plan"));
    // Legacy step outputs are keyed by name, as the SDK's dict is: a later output of the same
    // name (a loop's next pass, say) replaces an earlier one in its place.
    let mut last_at: HashMap<&str, usize> = HashMap::new();
    let replaced: Vec<usize> = (v2.step_output_values.iter().enumerate())
        .filter_map(|(i, value)| last_at.insert(&value.output_name, i))
        .collect();
    if !allow_loss && (!run_residue.is_empty() || !replaced.is_empty()) {
        let mut pointers: Vec<String> = run_residue.keys().cloned().collect();
        pointers.extend(replaced.iter().map(|i| format!("/step_output_values/{i}")));
        return Err(DowngradeError::WouldDrop(pointers));
    }
    for (pointer, value) in run_residue {
        report.dropped(
            format!("/legacy/entries/{}", escape_pointer_token(&pointer)),
            format!("{pointer} has no place in an R6 run"),
            value,
        );
    }
    // The legacy reader takes integers within ±(2^53 - 1) only, as its schemas say; V2 takes any
    // i64, so a larger step index has no legacy file this toolkit would read back.
    if v2.current_step_index.unsigned_abs() > MAX_SAFE_INTEGER.unsigned_abs() {
        return Err(DowngradeError::Invalid(format!(
            "/current_step_index: {} is beyond ±{MAX_SAFE_INTEGER}, the range of a legacy run's integers",
            v2.current_step_index
        )));
    }
    let plan = legacy_plan(v2, &plan_residue)?;
    let id: RunId = serde_json::from_value(Value::String(v2.id.clone()))
        .map_err(|e| DowngradeError::Invalid(format!("/id: {e}")))?;
    let plan_id: PlanId = serde_json::from_value(Value::String(v2.plan.id.clone()))
        .map_err(|e| DowngradeError::Invalid(format!("/plan/id: {e}")))?;
    let mut step_outputs = IndexMap::new();
    for (i, value) in v2.step_output_values.iter().enumerate() {
        let output = legacy_output(
            &value.output,
            &format!("/step_output_values/{i}/output"),
            &mut report,
        )?;
        step_outputs.insert(value.output_name.clone(), output);
    }
    for i in replaced {
        let value = &v2.step_output_values[i];
        report.dropped(
            format!("/step_output_values/{i}"),
            format!(
                "a later output named {:?} replaces it: legacy step outputs are keyed by name",
                value.output_name
            ),
            serde_json::to_value(value).expect("V2 documents are JSON"),
        );
    }
    let final_output = v2
        .final_output
        .as_ref()
        .map(|o| legacy_output(o, "/final_output", &mut report))
        .transpose()?;
    let clarifications = v2
        .clarifications
        .iter()
        .enumerate()
        .map(|(i, c)| legacy_clarification(i, c))
        .collect::<Result<Vec<_>, _>>()?;
    let plan_run_inputs = legacy_run_inputs(v2, &mut report);
    let run = RunR6 {
        id: Some(id),
        plan_id,
        current_step_index: v2.current_step_index,
        state: legacy_state(v2.state),
        end_user_id: v2.end_user.external_id.clone(),
        outputs: Outputs {
            clarifications,
            step_outputs,
            final_output,
        },
        plan_run_inputs,
    };
    Ok(Downgraded {
        run,
        plan,
        end_user: legacy_end_user(&v2.end_user),
        report,
        undo: Undo::default(),
    })
}

/// The run's plan as the SDK saved it, checked with HEAD's validators and the legacy reader;
/// `None` for a plan rebuilt from a run whose plan was never saved.
fn legacy_plan(
    v2: &PlanRunV2,
    plan_residue: &IndexMap<String, Value>,
) -> Result<Option<planrun_legacy::Plan>, DowngradeError> {
    if is_rebuilt(plan_residue) {
        return Ok(None);
    }
    let plan = plan_to_legacy(&v2.plan, plan_residue);
    // The validators first: their verdict is on the V2 plan's own steps, which the reader
    // (below) would blame on the residue. A repeated output HEAD's form renames passes.
    if !planrun_legacy::head::plan_validator_fails(&plan).is_empty() {
        validators_pass(&planrun_legacy::head::plan(&plan).document)?;
    }
    readable(&plan)?;
    Ok(Some(plan))
}

/// The run's inputs as the legacy run holds them.
fn legacy_run_inputs(v2: &PlanRunV2, report: &mut LossReport) -> IndexMap<String, LocalDataValue> {
    v2.plan_run_inputs
        .iter()
        .enumerate()
        .map(|(i, (name, value))| {
            let legacy = legacy_value(&value.value, &format!("/plan_run_inputs/{i}/value"), report);
            (
                name.clone(),
                LocalDataValue {
                    value: legacy,
                    summary: value.summary.clone(),
                },
            )
        })
        .collect()
}

/// The end user as the SDK's `EndUser` holds it.
fn legacy_end_user(user: &planrun_v2::EndUser) -> planrun_legacy::EndUser {
    planrun_legacy::EndUser {
        external_id: user.external_id.clone(),
        name: user.name.clone(),
        email: user.email.clone(),
        phone_number: user.phone_number.clone(),
        additional_data: user.additional_data.clone(),
    }
}

/// Refuses a plan in HEAD's form that the SDK's `Plan` validators refuse (in every R6 release):
/// HEAD's form renames an output a pre-0.1.8 plan repeats, but two plan inputs of one name, or
/// a repeated output + condition, have no such form.
fn validators_pass(plan: &planrun_legacy::Plan) -> Result<(), DowngradeError> {
    let fails = planrun_legacy::head::plan_validator_fails(plan);
    if fails.is_empty() {
        return Ok(());
    }
    Err(DowngradeError::Invalid(format!(
        "the SDK cannot load the plan this run would be written with (its validators are in every R6 release): /plan{}",
        fails.join("; /plan")
    )))
}

/// Refuses a plan that the legacy reader would refuse. The plan's keys come from the V2
/// document's residue, which the V2 reader takes as it is: a residue that mixes keys of plans of
/// different SDK versions (edited by hand, say, or without the marker of a key its plan lacked)
/// makes a plan that no SDK version wrote, which is refused here rather than written.
fn readable(plan: &planrun_legacy::Plan) -> Result<(), DowngradeError> {
    let text = planrun_wire::json::to_sdk_json(plan);
    planrun_legacy::parse(text.as_bytes())
        .map(drop)
        .map_err(|e| {
            DowngradeError::Invalid(format!(
                "/legacy: the plan its residue makes is one no SDK version wrote: at /plan{}: {}",
                e.pointer, e.message
            ))
        })
}

/// Legacy output values are strings; a V2 value of another JSON type is stringified as the SDK
/// would, and reported.
fn legacy_value(value: &Value, pointer: &str, report: &mut LossReport) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => {
            report.push(
                EntryKind::Coerced,
                Some(pointer.to_owned()),
                None,
                "legacy output values are strings: stringified as the SDK does",
                Some(other.clone()),
            );
            planrun_legacy::stringify(other.clone())
        }
    }
}

fn legacy_output(
    output: &planrun_v2::Output,
    pointer: &str,
    report: &mut LossReport,
) -> Result<Output, DowngradeError> {
    Ok(match output {
        planrun_v2::Output::Local { value, summary } => Output::Local(LocalDataValue {
            value: legacy_value(value, &format!("{pointer}/value"), report),
            summary: summary.clone(),
        }),
        planrun_v2::Output::AgentMemory {
            output_name,
            plan_run_id,
            summary,
        } => Output::AgentMemory(planrun_legacy::AgentMemoryValue {
            output_name: output_name.clone(),
            plan_run_id: serde_json::from_value(Value::String(plan_run_id.clone()))
                .map_err(|e| DowngradeError::Invalid(format!("{pointer}/plan_run_id: {e}")))?,
            summary: summary.clone(),
        }),
    })
}

/// A V2 clarification in the current SDK's key order: base keys, category keys, unknown keys.
fn legacy_clarification(
    index: usize,
    clar: &planrun_v2::Clarification,
) -> Result<Clarification, DowngradeError> {
    let Value::Object(v2) = serde_json::to_value(clar).expect("clarifications are JSON") else {
        unreachable!("a clarification serialises as an object")
    };
    let mut obj = Map::new();
    for key in [
        "id",
        "plan_run_id",
        "category",
        "response",
        "step",
        "user_guidance",
        "resolved",
        "source",
    ] {
        if let Some(value) = v2.get(key) {
            obj.insert(key.to_owned(), value.clone());
        }
    }
    // A null category field stands for a key the source release did not write (legacy files never
    // hold null there), so it is left out again.
    for (key, value) in &v2 {
        if !obj.contains_key(key) && key != "extra" && !value.is_null() {
            obj.insert(key.clone(), value.clone());
        }
    }
    if let Some(Value::Object(extra)) = v2.get("extra") {
        for (key, value) in extra {
            obj.insert(key.clone(), value.clone());
        }
    }
    let clarification: Clarification = serde_json::from_value(Value::Object(obj))
        .map_err(|e| DowngradeError::Invalid(format!("/clarifications/{index}: {e}")))?;
    if let Some((_, Some(run))) = &clarification.run_ref {
        if !planrun_legacy::run_prefixes(Version::R6).contains(&run.0.prefix()) {
            return Err(DowngradeError::Invalid(format!(
                "/clarifications/{index}/plan_run_id: {run} is not a prun- id, which every SDK that writes R6 requires of a clarification's run"
            )));
        }
    }
    Ok(clarification)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_option_that_allows_the_loss() {
        let refusal = DowngradeError::WouldDrop(vec!["/legacy/x".to_owned()]).to_string();
        assert!(refusal.contains("--allow-loss"), "{refusal}");
        assert!(refusal.contains("/legacy/x"), "{refusal}");
    }
}
