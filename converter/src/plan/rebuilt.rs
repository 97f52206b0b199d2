//! The plan of a run whose plan file was never saved. Before v0.3.0 the SDK saved the run of a
//! hand-built or PlanBuilder plan but not the plan, so such a run's `plan_id` names no file; the
//! SDK still loads and lists the run. A V2 run embeds its plan, so one is rebuilt from what the
//! run holds, and the V2 document marks it as rebuilt so that nothing takes it for the original
//! (and a HEAD store made from it writes no plan file, as the SDK wrote none).

use indexmap::IndexMap;
use serde_json::Value;

use planrun_legacy::{Plan, PlanContext, PlanInput, RunR6, Step};
use planrun_wire::join;
use planrun_wire::json::escape_pointer_token;

use super::absent;
use crate::report::{EntryKind, LossReport};

/// The key of a V2 document's `legacy.entries` that marks its plan as rebuilt: the source had
/// no plan, so `/plan` holds the [`absent`] marker.
pub const REBUILT_PLAN_KEY: &str = "/plan";

/// Whether a V2 document's residue marks its plan as rebuilt (see [`REBUILT_PLAN_KEY`]).
pub fn is_rebuilt(residue: &IndexMap<String, Value>) -> bool {
    residue.get(REBUILT_PLAN_KEY) == Some(&absent())
}

/// A legacy plan for `run`, made from what the run holds: the run's `plan_id`, an empty query and
/// no tools; one step per step output in the run's order (the order the SDK stored them, which
/// is the order the steps ran), each with an empty task, no inputs, no tool, a `null` condition
/// and the output's name; one plan input per run input, with no description and no default.
pub fn rebuilt_plan(run: &RunR6) -> Plan {
    Plan {
        id: Some(run.plan_id),
        plan_context: PlanContext {
            query: String::new(),
            tool_ids: Vec::new(),
        },
        steps: run
            .outputs
            .step_outputs
            .keys()
            .map(|output| Step {
                task: String::new(),
                inputs: Vec::new(),
                tool_id: None,
                output: output.clone(),
                condition: Some(None),
                extra: IndexMap::new(),
            })
            .collect(),
        inputs: None,
        plan_inputs: Some(
            run.plan_run_inputs
                .keys()
                .map(|name| PlanInput {
                    name: name.clone(),
                    description: None,
                    value: Value::Null,
                })
                .collect(),
        ),
    }
}

/// The report entries of a rebuilt plan: where each part came from, and what it lacks.
pub fn rebuilt_plan_entries(run: &RunR6, report: &mut LossReport) {
    report.push(
        EntryKind::Derived,
        Some("/run/plan_id".into()),
        Some("/plan".into()),
        format!(
            "the plan file {}.json was never saved (before v0.3.0 the SDK saved the run of a \
             hand-built plan, not the plan): this plan is rebuilt from the run and is not the \
             original; legacy.entries[\"/plan\"] marks it",
            run.plan_id
        ),
        None,
    );
    report.defaulted(
        "/plan/label",
        "a rebuilt plan's query is unknown",
        Value::String(String::new()),
    );
    report.defaulted(
        "/plan/tool_ids",
        "a rebuilt plan's tools are unknown",
        Value::Array(Vec::new()),
    );
    for (i, output) in run.outputs.step_outputs.keys().enumerate() {
        report.push(
            EntryKind::Derived,
            Some(join!(
                "/run/outputs/step_outputs/",
                escape_pointer_token(output)
            )),
            Some(join!("/plan/steps/", i)),
            "a rebuilt step, one per step output in the run's order: its output name is the \
             output's; its task, tool and inputs are unknown (empty)",
            None,
        );
    }
    for (i, name) in run.plan_run_inputs.keys().enumerate() {
        report.push(
            EntryKind::Derived,
            Some(join!("/run/plan_run_inputs/", escape_pointer_token(name))),
            Some(join!("/plan/plan_inputs/", i)),
            "a rebuilt plan input, one per run input: its description and default are unknown",
            None,
        );
    }
}
