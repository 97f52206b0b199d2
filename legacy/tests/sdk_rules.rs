//! Reading agrees with the SDK of the version that wrote a file, rule by rule: a file is read as
//! the versions whose SDK loads it, and refused when none does. Each case says which SDK
//! behaviour it pins; each was loaded with that SDK's own models (pydantic 2.11.7) at the
//! releases named.

use planrun_legacy::{parse, ErrorKind, Parsed, Version};

const R1_RUN: &str = r#"{
    "id": "prun-e2f5b940-5952-48a3-a0e1-f3648e428faa",
    "plan_id": "plan-322b7d97-32b5-4bc3-9f81-475368d0ef1c",
    "current_step_index": 0,
    "state": "NEED_CLARIFICATION",
    "execution_context": {
        "end_user_id": null,
        "additional_data": {},
        "planning_agent_system_context_extension": null,
        "execution_agent_system_context_extension": null
    },
    "outputs": {
        "clarifications": [
            {
                "id": "clar-8d1e9c7f-9a3f-407a-999f-012530c2e298",
                "plan_run_id": "prun-e2f5b940-5952-48a3-a0e1-f3648e428faa",
                "category": "Input",
                "response": null,
                "step": 0,
                "user_guidance": "Which city?",
                "resolved": false,
                "argument_name": "city"
            }
        ],
        "step_outputs": {},
        "final_output": null
    }
}"#;

const R6_RUN: &str = r#"{
    "id": "prun-e2f5b940-5952-48a3-a0e1-f3648e428faa",
    "plan_id": "plan-322b7d97-32b5-4bc3-9f81-475368d0ef1c",
    "current_step_index": 0,
    "state": "NEED_CLARIFICATION",
    "end_user_id": "local",
    "outputs": {
        "clarifications": [
            {
                "id": "clar-8d1e9c7f-9a3f-407a-999f-012530c2e298",
                "plan_run_id": "prun-e2f5b940-5952-48a3-a0e1-f3648e428faa",
                "category": "Input",
                "response": null,
                "step": 0,
                "user_guidance": "Which city?",
                "resolved": false,
                "argument_name": "city",
                "source": null
            }
        ],
        "step_outputs": {},
        "final_output": null
    },
    "plan_run_inputs": {}
}"#;

fn read(text: &str) -> Parsed {
    parse(text.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn versions(text: &str) -> String {
    read(text).detection.versions.to_string()
}

/// The error, its pointer and its message.
fn refused(text: &str) -> (ErrorKind, String, String) {
    let err = parse(text.as_bytes()).expect_err("the SDK of no version loads this");
    (err.kind, err.pointer, err.message)
}

#[test]
fn an_argument_clarification_dates_a_run_before_0_1_0() {
    // Pins ClarificationCategory: "Argument" until 0.1.2-alpha (which loads this run), gone from
    // the 0.1.0 release (0.1.10 and v0.1.12 fail on it). The base R1 run has the shape of R1 and
    // R2; the category leaves R1 only.
    assert_eq!(versions(R1_RUN), "R1–R2");
    let argument = R1_RUN.replace("\"Input\"", "\"Argument\"");
    assert_eq!(versions(&argument), "R1");
    let parsed = read(&argument);
    assert_eq!(
        parsed.as_run().map(planrun_legacy::LegacyRun::version),
        Some(Version::R1)
    );
}

#[test]
fn an_argument_clarification_in_a_later_run_is_refused() {
    // Pins v0.3.4 to HEAD (v0.6.2, v0.9.0): "Input should be 'Action', 'Input', ... or
    // 'Custom'" for "Argument"; every other key of this run says R5 or later.
    let (kind, pointer, message) = refused(&R6_RUN.replace("\"Input\"", "\"Argument\""));
    assert_eq!(kind, ErrorKind::Unrecognised);
    assert_eq!(pointer, "/outputs/clarifications/0/category");
    assert!(
        message.contains("category \"Argument\" (removed in 0.1.0) says W1–R1"),
        "{message}"
    );
}

#[test]
fn user_verification_dates_a_run_v0_4_0_or_later() {
    // Pins ClarificationCategory: "User Verification" from v0.4.0; an R1 run with it is refused.
    let verification = R6_RUN
        .replace("\"Input\"", "\"User Verification\"")
        .replace("\"argument_name\": \"city\",\n", "");
    assert_eq!(versions(&verification), "R6");
    let (kind, pointer, _) = refused(&R1_RUN.replace("\"Input\"", "\"User Verification\""));
    assert_eq!(kind, ErrorKind::Unrecognised);
    assert_eq!(pointer, "/outputs/clarifications/0/category");
}

#[test]
fn a_clarification_without_its_run_is_read_only_from_v0_7_0() {
    // Pins Clarification.plan_run_id: required and not null until v0.6.2 ("Field required");
    // v0.7.0 made it `PlanRunUUID | None = None`, and loads a clarification without it or with
    // null. R6 (v0.3.4 to HEAD) holds v0.7.0 on, so an R6 run without it is read; an R1 run is
    // refused, naming the clarification.
    let line = "                \"plan_run_id\": \"prun-e2f5b940-5952-48a3-a0e1-f3648e428faa\",\n";
    assert_eq!(versions(&R6_RUN.replace(line, "")), "R6");
    let null = "                \"plan_run_id\": null,\n";
    assert_eq!(versions(&R6_RUN.replace(line, null)), "R6");
    let (kind, pointer, message) = refused(&R1_RUN.replace(line, ""));
    assert_eq!(kind, ErrorKind::Unrecognised);
    assert_eq!(pointer, "/outputs/clarifications/0");
    assert!(
        message.contains("clarification without its run reference (v0.7.0+)"),
        "{message}"
    );
    let (_, pointer, _) = refused(&R1_RUN.replace(line, null));
    assert_eq!(pointer, "/outputs/clarifications/0/plan_run_id");
}

const ALPHA_PLAN: &str = r#"{
    "id": "plan-7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
    "plan_context": {
        "query": "Twice the same output",
        "tool_ids": [
            "llm_tool"
        ]
    },
    "steps": [
        {
            "task": "Draft",
            "inputs": [],
            "tool_id": "llm_tool",
            "output": "$draft"
        },
        {
            "task": "Draft again",
            "inputs": [],
            "tool_id": "llm_tool",
            "output": "$draft"
        }
    ]
}"#;

#[test]
fn a_repeated_output_dates_a_plan_before_0_1_6() {
    // Pins Plan.validate_plan: 0.1.5 loads two steps with one output (and saves the plan back
    // unchanged); 0.1.6 made outputs unique, 0.1.8 made it `output + (condition or "")`, and
    // HEAD refuses the plan with "Outputs + conditions must be unique".
    let parsed = read(ALPHA_PLAN);
    assert_eq!(parsed.detection.versions.to_string(), "W1–R1");
    let fact = parsed
        .detection
        .evidence
        .iter()
        .find(|e| e.pointer == "/steps/1/output")
        .expect("the repeated output is a fact");
    assert!(
        fact.fact.contains("a repeated output \"$draft\""),
        "{fact:?}"
    );
    // Steps with `condition` were written from 0.1.8, after the validator came: a plan with
    // them that repeats an output + condition was written by no SDK, and is refused.
    let conditioned = ALPHA_PLAN.replace(
        "\"output\": \"$draft\"\n",
        "\"output\": \"$draft\",\n            \"condition\": null\n",
    );
    let (kind, pointer, message) = refused(&conditioned);
    assert_eq!(kind, ErrorKind::Data);
    assert_eq!(pointer, "/steps/1/output");
    assert!(message.contains("\"$draft\" is repeated"), "{message}");
    // One output under two conditions is unique, as the validator counts it.
    let two_conditions =
        conditioned.replacen("\"condition\": null", "\"condition\": \"if it rains\"", 1);
    // (R1–R4: with no plan inputs, it was written before v0.3.2.)
    assert_eq!(versions(&two_conditions), "R1–R4");
}

#[test]
fn a_repeated_plan_input_name_is_refused_in_every_version() {
    // Pins Plan.validate_plan from v0.3.2 (`inputs`) and v0.3.4 (`plan_inputs`) to HEAD: "Plan
    // input names must be unique". Plan inputs exist only since v0.3.2, so no SDK wrote or
    // loads such a plan.
    for key in ["inputs", "plan_inputs"] {
        let plan = format!(
            r#"{{
    "id": "plan-2d3e4f50-6172-4839-a4b5-c6d7e8f90a1b",
    "plan_context": {{
        "query": "Greet $name",
        "tool_ids": []
    }},
    "steps": [],
    "{key}": [
        {{
            "name": "$name",
            "description": "Who to greet"
        }},
        {{
            "name": "$name",
            "description": "Who else"
        }}
    ]
}}"#
        );
        let (kind, pointer, message) = refused(&plan);
        assert_eq!(kind, ErrorKind::Data, "{key}");
        assert_eq!(pointer, format!("/{key}/1/name"));
        assert!(message.contains("\"$name\" is repeated"), "{message}");
    }
}
