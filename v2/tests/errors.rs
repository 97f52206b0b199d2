//! Rejections name the problem and point into the document that was read, and the extra shapes
//! serde's derives would accept (arrays for structs, variant indexes, `{"VALUE": null}`) are refused.

use planrun_v2::{Clarification, EndUser, PlanRunState, PlanRunV2, StepV2};

const FIXTURE: &str = include_str!("fixtures/plan_run.json");

/// The error from reading the fixture with one textual edit.
fn error_after(from: &str, to: &str) -> serde_json::Error {
    let edited = FIXTURE.replacen(from, to, 1);
    assert_ne!(edited, FIXTURE, "`{from}` is not in the fixture");
    serde_json::from_str::<PlanRunV2>(&edited).expect_err("the edit must be rejected")
}

#[test]
fn errors_inside_tagged_unions_name_the_problem_and_a_real_position() {
    let cases = [
        (
            "\"tool_call_limit\": 25",
            "\"tool_call_limit\": \"25\"",
            "invalid type: string \"25\"",
        ),
        (
            "\"step\": {\"by\": \"index\", \"index\": 0}",
            "\"step\": {\"by\": \"index\", \"index\": 0.5}",
            "expected an integer in i64 range, found 0.5",
        ),
        (
            "\"type\": \"exit\"",
            "\"type\": 3",
            "`type` must be a string, found 3",
        ),
        (
            "\"category\": \"Custom\"",
            "\"category\": \"custom\"",
            "unknown variant `custom`",
        ),
    ];
    for (from, to, message) in cases {
        let error = error_after(from, to);
        assert!(error.to_string().starts_with(message), "{error}");
        let edited_line = FIXTURE[..FIXTURE.find(from).unwrap()].lines().count();
        assert!(
            error.line() >= edited_line,
            "{error} is before line {edited_line}"
        );
    }
}

#[test]
fn structs_are_not_read_from_arrays() {
    let array = r#"["local", "", "", "", {}]"#;
    let error = serde_json::from_str::<EndUser>(array).unwrap_err();
    assert!(
        error.to_string().contains("invalid type: sequence"),
        "{error}"
    );
}

#[test]
fn tagged_unions_are_not_read_from_arrays_or_variant_indexes() {
    let array = r#"["user_verify", "confirm", null, null, "Book?"]"#;
    assert!(serde_json::from_str::<StepV2>(array).is_err());
    let by_index = r#"{"type": 7, "step_name": "confirm", "conditional_block": null,
                       "loop_block": null, "message": "Book?"}"#;
    assert!(serde_json::from_str::<StepV2>(by_index).is_err());
    let plain = by_index.replace('7', "\"user_verify\"");
    assert!(serde_json::from_str::<StepV2>(&plain).is_ok());
    // A string tag first does not let a variant index in later, nor a second string tag.
    for second in ["7", "\"user_verify\""] {
        let twice = plain.replace(r#""message""#, &format!(r#""type": {second}, "message""#));
        let error = serde_json::from_str::<StepV2>(&twice).unwrap_err();
        assert!(
            error.to_string().contains("duplicate field `type`"),
            "{error}"
        );
    }
    let spaced = plain.replace(r#"{"type": "#, "{ \n \"type\"\t:\r\n ");
    assert_ne!(spaced, plain);
    assert!(serde_json::from_str::<StepV2>(&spaced).is_ok(), "{spaced}");
}

#[test]
fn enum_values_are_read_only_from_strings() {
    assert_eq!(
        serde_json::from_str::<PlanRunState>(r#""COMPLETE""#).unwrap(),
        PlanRunState::Complete
    );
    for shape in [r#"{"COMPLETE": null}"#, "4", r#"["COMPLETE"]"#] {
        assert!(
            serde_json::from_str::<PlanRunState>(shape).is_err(),
            "{shape}"
        );
    }
}

#[test]
fn clarification_accessors_read_the_common_fields_of_every_category() {
    let run: PlanRunV2 = serde_json::from_str(FIXTURE).unwrap();
    let categories: Vec<&str> = run
        .clarifications
        .iter()
        .map(|c| c.category().as_str())
        .collect();
    assert_eq!(
        categories,
        [
            "Argument",
            "Action",
            "Input",
            "Multiple Choice",
            "Value Confirmation",
            "User Verification",
            "Custom"
        ]
    );
    let input: &Clarification = &run.clarifications[2];
    assert_eq!(input.id(), "clar-58aa0056-b879-4a7d-964d-4a8ba14e55fa");
    assert_eq!(input.plan_run_id(), None);
    assert_eq!(input.response(), "Lisbon");
    assert_eq!(input.step(), Some(1));
    assert_eq!(input.user_guidance(), "Which city do you mean?");
    assert!(input.resolved());
    assert_eq!(input.source(), Some("default_execution_agent"));
    assert_eq!(input.argument_name(), Some("city"));
    assert_eq!(input.extra()["workflow_note"], "kept from the legacy file");
    assert_eq!(run.clarifications[6].argument_name(), None);
}

#[test]
fn step_accessors_read_the_common_fields_of_every_step_type() {
    let run: PlanRunV2 = serde_json::from_str(FIXTURE).unwrap();
    let tags: Vec<&str> = run.plan.steps.iter().map(StepV2::type_tag).collect();
    assert_eq!(
        tags,
        [
            "invoke_tool",
            "llm",
            "conditional",
            "single_tool_agent",
            "conditional",
            "conditional",
            "react_agent",
            "loop",
            "user_input",
            "loop",
            "user_verify",
            "sub_plan",
            "legacy",
            "exit"
        ]
    );
    for (step, written) in run.plan.steps.iter().zip(
        serde_json::to_value(&run.plan.steps)
            .unwrap()
            .as_array()
            .unwrap(),
    ) {
        assert_eq!(written["type"], step.type_tag());
        assert_eq!(written["step_name"], step.step_name());
    }
    let weather = &run.plan.steps[3];
    let parent = weather
        .conditional_block()
        .unwrap()
        .parent_conditional_block
        .as_ref()
        .unwrap();
    assert_eq!(parent.clause_step_indexes, [2, 4, 5]);
    assert_eq!(
        run.plan.steps[8].loop_block().unwrap().end_step_index,
        Some(9)
    );
}
