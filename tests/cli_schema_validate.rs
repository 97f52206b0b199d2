//! The `schema export` and `validate` verbs end to end: files written, violations reported with
//! file and pointer, and the documented exit codes (0 valid, 1 invalid, 2 usage or I/O error).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use planrun_schemas as schemas;
use serde_json::Value;

fn planrun(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_planrun"))
        .args(args)
        .output()
        .expect("the planrun binary runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(rel)
}

#[test]
fn schema_export_writes_every_schema() {
    let dir = tempfile::tempdir().unwrap();
    let out = planrun(&["schema", "export", "--out", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(stdout(&out).starts_with(&format!("wrote {} schemas", schemas::all().len())));
    for (name, schema) in schemas::all() {
        let text = std::fs::read_to_string(dir.path().join(&name)).unwrap();
        assert_eq!(text, schemas::file_text(&schema), "{name}");
    }
}

#[test]
fn valid_documents_exit_0_and_name_their_schema() {
    let run = corpus("R6/plan_runs/run_clarifications_resolved.json");
    let w1 = corpus("W1/workflows/run_defaults.json");
    let v2 = Path::new(env!("CARGO_MANIFEST_DIR")).join("../v2/tests/fixtures/plan_run.json");
    let out = planrun(&[
        "validate",
        run.to_str().unwrap(),
        w1.to_str().unwrap(),
        v2.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("valid (legacy/run.R6.schema.json)"), "{text}");
    assert!(text.contains("valid (legacy/run.W1.schema.json)"), "{text}");
    assert!(text.contains("valid (v2/PlanRunV2.schema.json)"), "{text}");
    assert!(
        text.contains("3  valid") && text.contains("0  invalid"),
        "{text}"
    );
}

#[test]
fn every_violation_is_reported_with_file_and_pointer_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc: Value = serde_json::from_slice(
        &std::fs::read(corpus("R6/plan_runs/run_clarifications_resolved.json")).unwrap(),
    )
    .unwrap();
    doc["state"] = "PAUSED".into();
    doc["outputs"]["clarifications"][0]["resolved"] = "maybe".into();
    doc["colour"] = "blue".into();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let not_json = dir.path().join("not_json.json");
    std::fs::write(&not_json, "{\"plan_id\": ").unwrap();
    let unknown = dir.path().join("unknown.json");
    std::fs::write(&unknown, "{\"hello\": 1}").unwrap();

    let out = planrun(&["validate", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = stdout(&out);
    let bad_name = bad.display().to_string();
    for pointer in [
        "/state",
        "/outputs/clarifications/0/resolved",
        "(document root)",
    ] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&bad_name) && l.contains(&format!("at {pointer}:"))),
            "{pointer} not reported:\n{text}"
        );
    }
    assert!(text.contains("colour"), "{text}");
    assert!(text.contains("not a JSON document"), "{text}");
    assert!(text.contains("cannot tell which schema applies"), "{text}");
    assert!(text.contains("3  invalid"), "{text}");

    let out = planrun(&["validate", "--format", "json", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let report: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(report["valid"], false);
    assert_eq!(report["schema"], "legacy/run.R6.schema.json");
    let pointers: Vec<&str> = report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["pointer"].as_str().unwrap())
        .collect();
    assert!(pointers.contains(&"/state"), "{report}");
    assert!(pointers.contains(&""), "{report}");
}

#[test]
fn an_explicit_schema_is_used_as_given() {
    let user = corpus("R6/end_users/end_user_full.json");
    let out = planrun(&[
        "validate",
        "--schema",
        "legacy/end_user.schema.json",
        user.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = planrun(&[
        "validate",
        "--schema",
        "legacy/run.R6.schema.json",
        user.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(stdout(&out).contains("plan_id"), "{}", stdout(&out));
}

#[test]
fn usage_and_io_errors_exit_2() {
    let user = corpus("R6/end_users/end_user_full.json");
    let out = planrun(&[
        "validate",
        "--schema",
        "legacy/nope.json",
        user.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("legacy/run.R4.schema.json"));
    let out = planrun(&["validate", "/nonexistent/planrun.json"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let out = planrun(&["validate"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}
