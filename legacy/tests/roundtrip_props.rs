//! Law 2 (emission is a fixpoint), proven on generated documents of every wire version: for a run
//! of each version W1, R0–R6, a plan of each era, an end user, a stored output and a tool call,
//! built as typed values and written with `json::to_sdk_json`, `parse` accepts the text, detects it
//! as the kind and a version that wrote it, reports no normalisation, reads back the same typed
//! value, and `to_sdk_json` writes the same bytes again (emit → parse → emit is the identity).
//!
//! The generators live in `planrun_legacy::strategies` (feature `testkit`), shared with the schema
//! agreement tests; what they write, per version, is described there. The last two tests check
//! that they cover what they claim.

use crate::common;

use common::props::config;
use planrun_legacy::strategies::{
    categories, end_user, local, memory, plan, run, run_id, tool_call, PlanEra, STEP_EXTRA_KEYS,
};
use planrun_legacy::{
    parse, Category, DocKind, LegacyDocument, LegacyRun, Output, Parsed, Plan, ToolCallRecord,
    Version, VersionSet,
};
use planrun_wire::json::to_sdk_json;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde::Serialize;
use serde_json::Value;
use Version::*;

// ---------------------------------------------------------------------------------------------
// The law
// ---------------------------------------------------------------------------------------------

/// Emits `doc`, parses the text back and checks the law; returns the parse for further checks.
fn emit_parse_emit<T: Serialize>(
    doc: &T,
    kind: DocKind,
    written_by: &[Version],
) -> Result<(String, Parsed), TestCaseError> {
    let emitted = to_sdk_json(doc);
    let parsed = parse(emitted.as_bytes())
        .map_err(|e| TestCaseError::fail(format!("parse failed: {e}\n{emitted}")))?;
    prop_assert_eq!(
        parsed.detection.kind,
        kind,
        "{}\n{}",
        parsed.detection,
        emitted
    );
    for version in written_by {
        prop_assert!(
            parsed.detection.versions.contains(*version),
            "a {} document detected as {}:\n{}",
            version,
            parsed.detection,
            emitted
        );
    }
    prop_assert!(
        parsed.normalizations.is_empty(),
        "normalisations {:?}\n{}",
        parsed.normalizations,
        emitted
    );
    let again = parsed.to_sdk_json();
    prop_assert!(
        again == emitted,
        "re-emission differs:\n{}\n---- first emission ----\n{}",
        again,
        emitted
    );
    Ok((emitted, parsed))
}

fn check_run(version: Version, run: LegacyRun) -> Result<(), TestCaseError> {
    prop_assert_eq!(run.version(), version);
    let (emitted, parsed) = emit_parse_emit(&run, DocKind::Run, &[version])?;
    // Detection is not only right but as sharp as the file allows: R1 and R2 files differ only
    // when a clarification is "Argument" (R1) or an output is in agent memory (R2).
    let sharpest = match version {
        R1 | R2 => VersionSet::range(R1, R2),
        other => VersionSet::only(other),
    };
    let detected = parsed.detection.versions;
    prop_assert!(
        detected.intersect(sharpest) == detected,
        "a {} run detected as {}:\n{}",
        version,
        parsed.detection,
        emitted
    );
    let read = parsed.as_run().expect("detected as a run");
    if read.version() == version {
        prop_assert!(
            parsed.document == LegacyDocument::Run(run),
            "read back a different run:\n{:?}\n{}",
            parsed.document,
            emitted
        );
    }
    Ok(())
}

macro_rules! run_laws {
    ($($name:ident => $version:expr,)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(doc in run($version)) {
                    check_run($version, doc)?;
                }
            )*
        }
    };
}

run_laws! {
    w1_workflows_round_trip => W1,
    r0_pr_runs_round_trip => R0,
    r1_runs_round_trip => R1,
    r2_runs_with_agent_memory_round_trip => R2,
    r3_runs_round_trip => R3,
    r4_runs_with_end_user_id_round_trip => R4,
    r5_runs_with_plan_run_inputs_round_trip => R5,
    r6_runs_round_trip => R6,
}

fn check_plan(era: PlanEra, plan: Plan) -> Result<(), TestCaseError> {
    let (emitted, parsed) = emit_parse_emit(&plan, DocKind::Plan, era.versions())?;
    prop_assert!(
        parsed.document == LegacyDocument::Plan(plan),
        "read back a different plan:\n{:?}\n{}",
        parsed.document,
        emitted
    );
    Ok(())
}

macro_rules! plan_laws {
    ($($name:ident => $era:expr,)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(doc in plan($era)) {
                    check_plan($era, doc)?;
                }
            )*
        }
    };
}

plan_laws! {
    alpha_plans_with_variable_values_round_trip => PlanEra::Alpha,
    v017_plans_with_step_extras_round_trip => PlanEra::V017,
    v018_plans_with_conditions_and_values_round_trip => PlanEra::V018,
    v0112_plans_without_variable_values_round_trip => PlanEra::V0112,
    v032_plans_with_inputs_round_trip => PlanEra::V032,
    v034_plans_with_native_plan_inputs_round_trip => PlanEra::V034,
}

fn check_tool_call(version: Version, call: ToolCallRecord) -> Result<(), TestCaseError> {
    let (emitted, parsed) = emit_parse_emit(&call, DocKind::ToolCall, &[version])?;
    prop_assert!(
        parsed.document == LegacyDocument::ToolCall(call),
        "read back a different tool call:\n{:?}\n{}",
        parsed.document,
        emitted
    );
    Ok(())
}

macro_rules! tool_call_laws {
    ($($name:ident => $version:expr,)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(doc in tool_call($version)) {
                    check_tool_call($version, doc)?;
                }
            )*
        }
    };
}

tool_call_laws! {
    w1_tool_calls_round_trip => W1,
    r0_tool_calls_round_trip => R0,
    r1_tool_calls_round_trip => R1,
    r2_tool_calls_round_trip => R2,
    r3_tool_calls_round_trip => R3,
    r4_tool_calls_round_trip => R4,
    r5_tool_calls_round_trip => R5,
    r6_tool_calls_without_additional_data_round_trip => R6,
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn r4_end_users_round_trip(user in end_user(R4)) {
        let (_, parsed) = emit_parse_emit(&user, DocKind::EndUser, &[R4, R5, R6])?;
        prop_assert_eq!(parsed.document, LegacyDocument::EndUser(user));
    }

    #[test]
    fn r6_end_users_with_null_data_round_trip(user in end_user(R6)) {
        let (_, parsed) = emit_parse_emit(&user, DocKind::EndUser, &[R6])?;
        prop_assert_eq!(parsed.document, LegacyDocument::EndUser(user));
    }

    #[test]
    fn stored_local_outputs_round_trip_in_every_version(value in local()) {
        let (_, parsed) = emit_parse_emit(&value, DocKind::Output, &Version::ALL)?;
        prop_assert_eq!(parsed.document, LegacyDocument::Output(Output::Local(value)));
    }

    #[test]
    fn agent_memory_references_round_trip_from_r2(
        value in any::<u128>().prop_flat_map(|u| memory(run_id(R6, u)))
    ) {
        let (_, parsed) = emit_parse_emit(&value, DocKind::Output, &[R2, R3, R4, R5, R6])?;
        prop_assert_eq!(parsed.document, LegacyDocument::Output(Output::AgentMemory(value)));
    }
}

// ---------------------------------------------------------------------------------------------
// The generators cover what they claim
// ---------------------------------------------------------------------------------------------

fn sample<S: Strategy>(strategy: &S, runner: &mut TestRunner) -> S::Value {
    strategy
        .new_tree(runner)
        .expect("strategies here never reject outright")
        .current()
}

/// What a run's emitted text holds, for the coverage check.
#[derive(Default)]
struct Seen {
    categories: Vec<Category>,
    agent_memory: bool,
    summary_null: bool,
    summary_empty: bool,
    source_present: bool,
    source_absent: bool,
    null_run_ref: bool,
    big_int: bool,
    unicode: bool,
    control: bool,
    extra_keys: bool,
}

#[test]
fn generated_runs_cover_every_category_and_output_kind_of_their_version() {
    let mut runner = TestRunner::deterministic();
    for version in Version::ALL {
        let strategy = run(version);
        let mut seen = Seen::default();
        for _ in 0..300 {
            let doc = sample(&strategy, &mut runner);
            let tree = serde_json::to_value(&doc).unwrap();
            let text = to_sdk_json(&doc);
            let outputs = &tree["outputs"];
            for clar in outputs["clarifications"].as_array().unwrap() {
                let category: Category = serde_json::from_value(clar["category"].clone()).unwrap();
                if !seen.categories.contains(&category) {
                    seen.categories.push(category);
                }
                let obj = clar.as_object().unwrap();
                seen.source_present |= obj.contains_key("source");
                seen.source_absent |= !obj.contains_key("source");
                seen.null_run_ref |= obj.get("plan_run_id") == Some(&Value::Null);
                seen.extra_keys |= obj
                    .keys()
                    .any(|k| ["trace_id", "ui_hint", "ñandú"].contains(&k.as_str()));
                let run_ref = if version == W1 {
                    "workflow_id"
                } else {
                    "plan_run_id"
                };
                assert!(obj.contains_key(run_ref), "{version}: {clar}");
                let has_confirmation = obj.contains_key("require_confirmation");
                if category == Category::Action {
                    assert_eq!(has_confirmation, version >= R4, "{version}: {clar}");
                }
            }
            let step_outputs = outputs["step_outputs"].as_object().unwrap().values();
            for out in step_outputs.chain(Some(&outputs["final_output"]).filter(|o| !o.is_null())) {
                seen.agent_memory |= out.get("output_name").is_some();
                seen.summary_null |= out.get("value").is_some() && out["summary"].is_null();
                seen.summary_empty |= out["summary"] == "";
            }
            seen.big_int |= has_digit_run(&text, 21);
            seen.unicode |= !text.is_ascii();
            seen.control |= text.contains("\\u0000") || text.contains("\\n");
            let obj = tree.as_object().unwrap();
            assert_eq!(
                obj.contains_key("execution_context"),
                version != R6,
                "{version}"
            );
            assert_eq!(obj.contains_key("end_user_id"), version >= R4, "{version}");
            assert_eq!(
                obj.contains_key("plan_run_inputs"),
                version >= R5,
                "{version}"
            );
        }
        let mut want = categories(version);
        want.sort_by_key(|c| c.as_str());
        seen.categories.sort_by_key(|c| c.as_str());
        assert_eq!(seen.categories, want, "{version}: categories generated");
        assert_eq!(
            seen.agent_memory,
            version >= R2,
            "{version}: agent-memory outputs"
        );
        assert!(
            seen.summary_null && seen.summary_empty,
            "{version}: summary null and \"\""
        );
        assert_eq!(
            seen.source_present,
            version == R6,
            "{version}: clarification source"
        );
        assert!(
            seen.source_absent,
            "{version}: clarifications without source"
        );
        assert_eq!(
            seen.null_run_ref,
            version == R6,
            "{version}: null plan_run_id"
        );
        assert!(
            seen.big_int && seen.unicode && seen.control,
            "{version}: tricky values"
        );
        assert!(
            seen.extra_keys,
            "{version}: clarification keys the SDK drops"
        );
    }
}

#[test]
fn generated_plans_have_the_shape_of_their_era() {
    let mut runner = TestRunner::deterministic();
    for era in PlanEra::ALL {
        let strategy = plan(era);
        let (mut values, mut conditions, mut extras, mut unsorted, mut inputs) = (0, 0, 0, 0, 0);
        for _ in 0..200 {
            let tree = serde_json::to_value(sample(&strategy, &mut runner)).unwrap();
            for step in tree["steps"].as_array().unwrap() {
                let step = step.as_object().unwrap();
                conditions += usize::from(step.contains_key("condition"));
                extras += usize::from(step.keys().any(|k| STEP_EXTRA_KEYS.contains(&k.as_str())));
                for var in step["inputs"].as_array().unwrap() {
                    values += usize::from(var.get("value").is_some());
                }
            }
            let tools: Vec<&str> = tree["plan_context"]["tool_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap())
                .collect();
            unsorted += usize::from(tools.windows(2).any(|w| w[0] > w[1]));
            let key = match era {
                PlanEra::V032 => "inputs",
                _ => "plan_inputs",
            };
            if let Some(list) = tree.get(key) {
                inputs += list.as_array().unwrap().len().max(1);
            }
            assert_eq!(
                tree.get("inputs").is_some(),
                era == PlanEra::V032,
                "{era:?}"
            );
            assert_eq!(
                tree.get("plan_inputs").is_some(),
                era == PlanEra::V034,
                "{era:?}"
            );
        }
        assert_eq!(values > 0, era.has_value(), "{era:?}: Variable.value");
        assert_eq!(
            conditions > 0,
            era.has_condition(),
            "{era:?}: Step.condition"
        );
        assert_eq!(extras > 0, era.keeps_extras(), "{era:?}: step extras");
        assert_eq!(
            unsorted > 0,
            era == PlanEra::Alpha,
            "{era:?}: unsorted tool_ids"
        );
        assert_eq!(
            inputs > 0,
            matches!(era, PlanEra::V032 | PlanEra::V034),
            "{era:?}: plan inputs"
        );
    }
}

/// Whether `text` holds a run of at least `n` decimal digits (an integer beyond 64 bits).
fn has_digit_run(text: &str, n: usize) -> bool {
    let mut run = 0;
    text.bytes().any(|b| {
        run = if b.is_ascii_digit() { run + 1 } else { 0 };
        run >= n
    })
}
