//! Bad input yields a typed error with a JSON pointer and a line:column, never a panic.

use planrun_legacy::{parse, ErrorKind, ParseError};

const RUN: &str = r#"{
    "id": "prun-1742945e-63bf-4a2f-be54-b73e18e0a25e",
    "plan_id": "plan-5ccec58f-0e70-4378-a129-7842bc337b8d",
    "current_step_index": 0,
    "state": "NOT_STARTED",
    "end_user_id": "local",
    "outputs": {
        "clarifications": [],
        "step_outputs": {},
        "final_output": null
    },
    "plan_run_inputs": {}
}"#;

fn error(text: &str) -> ParseError {
    let err = parse(text.as_bytes()).expect_err("bad input must be rejected");
    assert!(!err.message.is_empty());
    err
}

fn at(err: &ParseError) -> (ErrorKind, &str, usize, usize) {
    (err.kind, err.pointer.as_str(), err.line, err.column)
}

#[test]
fn the_valid_base_document_parses() {
    assert!(parse(RUN.as_bytes()).unwrap().normalizations.is_empty());
}

#[test]
fn truncated_json_names_the_cut() {
    let err = error(&RUN[..RUN.find("\"state\"").unwrap() + 10]);
    assert_eq!(at(&err), (ErrorKind::Syntax, "/state", 5, 14));
    assert!(err.message.contains("cut short"), "{err}");
}

#[test]
fn wrong_types_point_at_the_value() {
    let err = error(&RUN.replace("\"current_step_index\": 0", "\"current_step_index\": []"));
    assert_eq!(at(&err), (ErrorKind::Data, "/current_step_index", 4, 27));
    let err = error(&RUN.replace("\"clarifications\": []", "\"clarifications\": {}"));
    assert_eq!(
        at(&err),
        (ErrorKind::Data, "/outputs/clarifications", 8, 27)
    );
    let err = error(&RUN.replace("\"NOT_STARTED\"", "\"PAUSED\""));
    assert_eq!(at(&err), (ErrorKind::Data, "/state", 5, 14));
    assert!(
        err.message.contains("NOT_STARTED"),
        "names what was expected: {err}"
    );
}

#[test]
fn unknown_keys_are_rejected_where_the_sdk_forbids_them() {
    let err = error(&RUN.replace(
        "\"final_output\": null",
        "\"final_output\": null, \"extra\": 1",
    ));
    assert_eq!(err.kind, ErrorKind::Data);
    assert!(err.pointer.starts_with("/outputs"), "{err}");
    assert!(err.message.contains("extra"), "{err}");
    assert!(err.line >= 7, "{err}");
}

#[test]
fn a_bad_id_prefix_is_named() {
    let err = error(&RUN.replace("\"plan-5ccec58f", "\"prun-5ccec58f"));
    assert_eq!(at(&err), (ErrorKind::Data, "/plan_id", 3, 16));
    assert!(
        err.message
            .contains("does not match the expected prefix \"plan\""),
        "{err}"
    );
}

#[test]
fn contradictory_versions_are_an_error_not_a_guess() {
    let err = error(&RUN.replace("\"prun-1742945e", "\"wkfl-1742945e"));
    assert_eq!(err.kind, ErrorKind::Unrecognised);
    assert!(err.message.contains("id prefix wkfl-"), "{err}");
}

#[test]
fn nan_is_rejected_where_only_numbers_or_json_are_allowed() {
    let err = error(&RUN.replace("\"current_step_index\": 0", "\"current_step_index\": NaN"));
    assert_eq!(
        at(&err),
        (ErrorKind::NonFiniteNumber, "/current_step_index", 4, 27)
    );
    let clar = r#"{"category": "Input", "user_guidance": "?", "response": -Infinity, "argument_name": "x"}"#;
    let err = error(&RUN.replace(
        "\"clarifications\": []",
        &format!("\"clarifications\": [{clar}]"),
    ));
    assert_eq!(err.kind, ErrorKind::NonFiniteNumber);
    assert_eq!(err.pointer, "/outputs/clarifications/0/response");
}

#[test]
fn duplicate_keys_are_rejected() {
    let err = error(&RUN.replace(
        "\"state\": \"NOT_STARTED\"",
        "\"state\": \"NOT_STARTED\", \"state\": \"COMPLETE\"",
    ));
    assert_eq!(err.kind, ErrorKind::DuplicateKey);
    assert_eq!(err.line, 5);
    assert!(err.message.contains("\"state\""), "{err}");
}

#[test]
fn duplicate_keys_say_what_the_sdk_would_have_done() {
    // Pins pydantic-core 2.27.2 (W1), 2.31.1 (R1) and 2.33.2 (HEAD) alike: a duplicate key in a
    // model or a dict keeps its last value, silently.
    let err = error(&RUN.replace(
        "\"state\": \"NOT_STARTED\"",
        "\"state\": \"NOT_STARTED\", \"state\": \"COMPLETE\"",
    ));
    assert!(err.message.contains("keep the last"), "{err}");
}

#[test]
fn an_empty_object_is_named_as_one() {
    let err = error("{}");
    assert_eq!(err.kind, ErrorKind::Unrecognised);
    assert!(err.message.contains("found an empty object;"), "{err}");
    assert!(!err.message.contains("keys ;"), "{err}");
}

#[test]
fn ten_thousand_levels_of_nesting_are_refused_without_overflow() {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let err = error(&RUN.replace("\"clarifications\": []", &format!("\"clarifications\": [{{\"category\": \"Custom\", \"user_guidance\": \"?\", \"response\": {deep}}}]")));
    assert_eq!(err.kind, ErrorKind::TooDeep);
    assert_eq!(err.line, 8);
    assert!(
        err.pointer
            .starts_with("/outputs/clarifications/0/response/0/0"),
        "{}",
        &err.pointer[..60]
    );
    assert!(
        err.to_string().len() < 400,
        "the pointer is shortened in messages"
    );
}

#[test]
fn a_100_mb_string_is_fine_as_a_value_and_excerpted_in_errors() {
    let huge = "x".repeat(100 << 20);
    let err = error(&RUN.replace("plan-5ccec58f-0e70-4378-a129-7842bc337b8d", &huge));
    assert_eq!(at(&err), (ErrorKind::Data, "/plan_id", 3, 16));
    assert!(
        err.to_string().len() < 400,
        "the value is excerpted: {} bytes",
        err.to_string().len()
    );
    let big_output = RUN.replace(
        "\"step_outputs\": {}",
        &format!("\"step_outputs\": {{\"$big\": {{\"value\": \"{huge}\", \"summary\": null}}}}"),
    );
    let parsed = parse(big_output.as_bytes()).unwrap();
    let Some(planrun_legacy::LegacyRun::R6(run)) = parsed.as_run() else {
        panic!("expected an R6 run");
    };
    match &run.outputs.step_outputs["$big"] {
        planrun_legacy::Output::Local(local) => assert_eq!(local.value.len(), 100 << 20),
        other @ planrun_legacy::Output::AgentMemory(_) => {
            panic!("expected a local output, got a {other:?}")
        }
    }
    let emitted = parsed.to_sdk_json();
    assert_eq!(parse(emitted.as_bytes()).unwrap().to_sdk_json(), emitted);
}

#[test]
fn errors_name_their_file_when_the_caller_gives_it() {
    let err = error("{").in_file("store/prun-x.json");
    assert!(err.to_string().starts_with("store/prun-x.json:1:"), "{err}");
}

#[test]
fn unsorted_tool_ids_do_not_contradict_later_plan_keys() {
    // Pins Plan.serialize_tool_ids (0.1.6 to HEAD): the SDK sorts tool_ids when it writes a plan
    // but reads them in any order. A plan with HEAD-era `plan_inputs` and unsorted tool_ids (what
    // downgrading a V2 plan with unsorted tool_ids wrote) is read, not refused as contradictory.
    let plan = r#"{
    "id": "plan-5ccec58f-0e70-4378-a129-7842bc337b8d",
    "plan_context": {
        "query": "q",
        "tool_ids": [
            "weather_tool",
            "llm_tool"
        ]
    },
    "steps": [],
    "plan_inputs": []
}"#;
    let parsed = parse(plan.as_bytes()).expect("read");
    assert_eq!(parsed.detection.versions.to_string(), "R6");
    // Alone, unsorted tool_ids still point at the releases before 0.1.6.
    let old = plan.replace(",\n    \"plan_inputs\": []", "");
    let parsed = parse(old.as_bytes()).expect("read");
    assert_eq!(parsed.detection.versions.to_string(), "W1–R1");
}

#[test]
fn a_file_that_is_not_json_says_so_in_words() {
    let where_a_document_starts = ", where a JSON document starts: {, [, a string in double quotes, a number, true, false or null";
    for (text, column, said) in [
        (
            "hello",
            1,
            format!("not JSON: found \"hello\" at line 1 column 1{where_a_document_starts}"),
        ),
        (
            "\n  hello world",
            3,
            format!("not JSON: found \"hello\" at line 2 column 3{where_a_document_starts}"),
        ),
        (
            "{x}",
            2,
            "not JSON: found \"x\" at line 1 column 2, where an object's first key in double quotes should be"
                .to_owned(),
        ),
        (
            "[oops]",
            2,
            "not JSON: found \"oops\" at line 1 column 2, where an array's first value should be"
                .to_owned(),
        ),
        ("", 1, "not JSON: the file is empty (cut short?)".to_owned()),
    ] {
        let err = error(text);
        assert_eq!(err.kind, ErrorKind::Syntax, "{text:?}: {err}");
        assert_eq!(err.column, column, "{text:?}: {err}");
        assert_eq!(err.message, said, "{text:?}: {err}");
        assert!(!err.message.contains("expected"), "{text:?}: {err}");
    }
    // A document that is JSON at its start keeps the parser's words for what breaks later on.
    let err = error("{\"a\": x}");
    assert!(!err.message.starts_with("not JSON"), "{err}");
}
