//! Writing then reading gives the same value back, and writing is stable byte for byte.

use crate::common;

use common::{fixture_run, fixture_run_context};
use planrun_v2::{PlanRunV2, RunContext};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;

fn assert_round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(value: &T) {
    let text = serde_json::to_string(value).expect("serializable");
    let back: T = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("cannot read back what was written: {e}\n{text}"));
    assert_eq!(&back, value);
    assert_eq!(
        serde_json::to_string(&back).unwrap(),
        text,
        "second write differs"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn plan_runs_round_trip(run in any::<PlanRunV2>()) {
        assert_round_trip(&run);
    }

    #[test]
    fn run_contexts_round_trip(context in any::<RunContext>()) {
        assert_round_trip(&context);
    }
}

#[test]
fn the_fixtures_are_written_back_unchanged() {
    for doc in [fixture_run(), fixture_run_context()] {
        let written = if doc.get("plan_run").is_some() {
            serde_json::to_value(serde_json::from_value::<RunContext>(doc.clone()).unwrap())
        } else {
            serde_json::to_value(serde_json::from_value::<PlanRunV2>(doc.clone()).unwrap())
        };
        assert_eq!(written.unwrap(), doc);
    }
}

#[test]
fn legacy_is_omitted_when_absent_and_kept_when_present() {
    let mut run: PlanRunV2 = serde_json::from_value(fixture_run()).unwrap();
    assert!(serde_json::to_value(&run).unwrap().get("legacy").is_some());
    run.legacy = None;
    let written = serde_json::to_value(&run).unwrap();
    assert!(written.get("legacy").is_none(), "{written:#}");
    let keys: Vec<&str> = written
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "id",
            "state",
            "current_step_index",
            "plan",
            "end_user",
            "step_output_values",
            "final_output",
            "plan_run_inputs",
            "config",
            "clarifications"
        ]
    );
}

#[test]
fn null_and_empty_summaries_stay_distinct() {
    let run: PlanRunV2 = serde_json::from_value(fixture_run()).unwrap();
    let summaries: Vec<Option<&str>> = run
        .step_output_values
        .iter()
        .map(|value| match &value.output {
            planrun_v2::Output::Local { summary, .. } => summary.as_deref(),
            planrun_v2::Output::AgentMemory { summary, .. } => Some(summary.as_str()),
        })
        .collect();
    assert_eq!(summaries, [None, Some(""), Some("A long report")]);
    let written = serde_json::to_value(&run).unwrap();
    assert_eq!(
        written["step_output_values"][0]["output"]["summary"],
        serde_json::Value::Null
    );
    assert_eq!(written["step_output_values"][1]["output"]["summary"], "");
}

#[test]
fn exact_numbers_are_kept_digit_for_digit() {
    let mut doc = fixture_run();
    let exact: serde_json::Value =
        serde_json::from_str(r"[1.50, 1e400, -12345678901234567890123, 0.1]").unwrap();
    doc["plan"]["steps"][0]["args"]["limit"]["value"] = exact.clone();
    doc["clarifications"][4]["response"] = exact.clone();
    let text = doc.to_string();
    let run: PlanRunV2 = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::to_string(&run).unwrap(), text);
    // serde_json keeps the digits as read and spells the exponent with its sign.
    assert!(text.contains("[1.50,1e+400,-12345678901234567890123,0.1]"));
}
