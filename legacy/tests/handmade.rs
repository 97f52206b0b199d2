//! Versions with no public corpus (R0, R2, R5, the `current_step_id` dialect, v0.3.2 plans) are
//! proven on hand-made files written from the spec: detection and byte-identical re-emission.

use std::path::Path;

use planrun_legacy::{parse, DocKind, LegacyDocument, LegacyRun, StepKey};

fn case(name: &str) -> (Vec<u8>, planrun_legacy::Parsed) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cases")
        .join(name);
    let bytes = std::fs::read(&path).unwrap();
    let parsed = parse(&bytes).unwrap_or_else(|e| panic!("{}", e.in_file(&path)));
    assert!(
        parsed.normalizations.is_empty(),
        "{name}: {:?}",
        parsed.normalizations
    );
    assert_eq!(
        parsed.to_sdk_json().as_bytes(),
        bytes.as_slice(),
        "{name}: re-emission differs"
    );
    (bytes, parsed)
}

#[test]
fn every_hand_made_case_is_detected_as_written() {
    for (name, kind, versions) in [
        ("run_R0_clarifications.json", DocKind::Run, "R0"),
        ("run_R2_agent_memory.json", DocKind::Run, "R2"),
        ("run_R5_plan_run_inputs.json", DocKind::Run, "R5"),
        ("run_R6_current_step_id.json", DocKind::Run, "R6"),
        ("run_W1_current_step_id.json", DocKind::Run, "W1"),
        ("plan_v032_inputs.json", DocKind::Plan, "R5"),
        ("tool_call_R0.json", DocKind::ToolCall, "R0"),
        ("run_context_snapshot.json", DocKind::RunContext, "R6"),
    ] {
        let (_, parsed) = case(name);
        assert_eq!(parsed.detection.kind, kind, "{name}");
        assert_eq!(
            parsed.detection.versions.to_string(),
            versions,
            "{name}: {}",
            parsed.detection
        );
    }
}

#[test]
fn the_current_step_id_dialect_is_read_as_the_step_index_and_written_back_as_read() {
    let (_, parsed) = case("run_R6_current_step_id.json");
    assert_eq!(parsed.step_key, StepKey::Id);
    match parsed.as_run() {
        Some(LegacyRun::R6(run)) => assert_eq!(run.current_step_index, 2),
        other => panic!("expected an R6 run, got {other:?}"),
    }
    let both = br#"{"plan_id": "plan-3e4f5061-7283-494a-b5c6-d7e8f90a1b2c", "current_step_id": 1, "current_step_index": 1, "end_user_id": "local"}"#;
    let err = parse(both).unwrap_err();
    assert_eq!(err.pointer, "/current_step_id");
}

#[test]
fn r0_keeps_its_pr_prefix_and_the_argument_category() {
    let (_, parsed) = case("run_R0_clarifications.json");
    let Some(LegacyRun::R0(run)) = parsed.as_run() else {
        panic!("expected R0, got {:?}", parsed.document);
    };
    assert_eq!(
        run.id.unwrap().to_string(),
        "pr-5a7c1e0b-3f4d-4c8e-9a1b-2c3d4e5f6a7b"
    );
    assert_eq!(
        run.outputs.clarifications[0].category,
        planrun_legacy::Category::Argument
    );
}

#[test]
fn the_v032_plan_keeps_inputs_under_their_first_name() {
    let (_, parsed) = case("plan_v032_inputs.json");
    let LegacyDocument::Plan(plan) = &parsed.document else {
        panic!("not a plan");
    };
    assert_eq!(plan.inputs.as_ref().map(Vec::len), Some(1));
    assert!(plan.plan_inputs.is_none());
}

#[test]
fn loose_sdk_input_is_accepted_and_every_change_reported() {
    let loose = br#"{"id": {"uuid": "8D0F4B3E6C704FB18D4E5F6A7B8C9D0E"}, "plan_id": "PLAN-3e4f5061-7283-494a-b5c6-d7e8f90a1b2c", "end_user_id": "local"}"#;
    assert!(
        parse(loose).is_err(),
        "the SDK compares prefixes case-sensitively"
    );
    let loose = br#"{"id": {"uuid": "8D0F4B3E6C704FB18D4E5F6A7B8C9D0E"}, "plan_id": "plan-{3E4F5061-7283-494A-B5C6-D7E8F90A1B2C}", "current_step_index": "2", "end_user_id": "local", "outputs": {"clarifications": [{"category": "Input", "user_guidance": "?", "resolved": "yes", "argument_name": "x", "colour": "blue"}]}}"#;
    let parsed = parse(loose).unwrap();
    let text = parsed.to_sdk_json();
    assert!(
        text.contains("\"id\": \"prun-8d0f4b3e-6c70-4fb1-8d4e-5f6a7b8c9d0e\""),
        "{text}"
    );
    assert!(text.contains("\"current_step_index\": 2,"), "{text}");
    assert!(text.contains("\"resolved\": true,"), "{text}");
    assert!(
        text.contains("\"colour\": \"blue\""),
        "unknown clarification keys are kept: {text}"
    );
    let shown = format!("{:?}", parsed.normalizations);
    for pointer in [
        "\"/id\"",
        "\"/plan_id\"",
        "\"/current_step_index\"",
        "\"/outputs/clarifications/0/resolved\"",
        "\"/state\"",
    ] {
        assert!(shown.contains(pointer), "{pointer} not reported in {shown}");
    }
}

#[test]
fn a_run_context_snapshot_never_holds_a_secret_in_clear() {
    let (bytes, parsed) = case("run_context_snapshot.json");
    let mut clear: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    clear["config"]["anthropic_api_key"] = "sk-ant-live".into();
    let reparsed = parse(serde_json::to_string(&clear).unwrap().as_bytes()).unwrap();
    assert!(!reparsed.to_sdk_json().contains("sk-ant-live"));
    let LegacyDocument::RunContext(snapshot) = &parsed.document else {
        panic!("not a RunContext");
    };
    assert_eq!(snapshot.step_output_values[0].step_name, "greet");
}
