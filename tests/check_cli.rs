//! `planrun check`: what the SDK at HEAD does with each file of a store. Each verdict below was
//! confirmed with the SDK at HEAD (v0.9.0, pydantic 2.11.7) loading the same files with its own
//! models; `check` agreed with HEAD on every file of the corpus stores, the example store and a
//! 2,000-run generated store as well (loads or fails; saves back the same or not).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn planrun(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_planrun"))
        .args(args)
        .output()
        .unwrap()
}

fn here(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
        .to_string_lossy()
        .into_owned()
}

/// File name (relative to the store) → (loads, first reason, changes on save).
fn verdicts(store: &str) -> (i32, BTreeMap<String, (bool, String, usize)>) {
    let root = here(store);
    let out = planrun(&["--format", "json", "check", &root]);
    let mut all = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let path = v["path"].as_str().unwrap();
        let name = path
            .strip_prefix(&root)
            .unwrap()
            .trim_start_matches('/')
            .to_owned();
        let first = v["fails"][0].as_str().unwrap_or("").to_owned();
        let changes = v["changes_on_save"].as_array().unwrap().len();
        all.insert(name, (v["loads"].as_bool().unwrap(), first, changes));
    }
    (out.status.code().unwrap(), all)
}

#[test]
fn each_rule_of_head_gives_its_verdict() {
    let (code, all) = verdicts("tests/check_store");
    assert_eq!(code, 1, "a file that would fail makes exit 1");
    let expect = [
        // HEAD's Plan forbids unknown keys: v0.3.2's `inputs` is one.
        (
            "plan-2d3e4f50-6172-4839-a4b5-c6d7e8f90a1b.json",
            "/inputs: HEAD's Plan forbids",
        ),
        // Plan.validate_plan: outputs + conditions unique (0.1.8+; outputs alone from 0.1.6).
        // 0.1.5 loads this plan and saves it back unchanged; HEAD refuses it.
        (
            "plan-7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d.json",
            "repeated output + condition",
        ),
        // Plan.validate_plan: input names unique, in every version with plan inputs (v0.3.2 on),
        // so no SDK ever loaded this plan and planrun does not read it either.
        (
            "plan-7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4e.json",
            "the plan input name \"$topic\" is repeated",
        ),
        // ClarificationCategory has no "Argument" from 0.1.0 on, so no SDK that writes an R6
        // run (v0.3.4 on, HEAD included) loads one that has it.
        (
            "prun-3120c2ea-e676-4e23-bd41-11b3aa2feaa4.json",
            "category \"Argument\" (removed in 0.1.0) says W1–R1",
        ),
        // DiskFileStorage.get_plan_run_output reads a LocalDataValue.
        (
            "prun-3120c2ea-e676-4e23-bd41-11b3aa2feaa5/$report.json",
            "must hold the value",
        ),
        // PlanRun forbids unknown keys: the design's current_step_id is one.
        (
            "prun-8d0f4b3e-6c70-4fb1-8d4e-5f6a7b8c9d0e.json",
            "forbids current_step_id",
        ),
    ];
    for (name, why) in expect {
        let (loads, first, _) = &all[name];
        assert!(!loads, "{name}");
        assert!(first.contains(why), "{name}: {first}");
    }
    // HEAD's own form of the run above loads and saves back unchanged.
    assert_eq!(
        all["prun-3120c2ea-e676-4e23-bd41-11b3aa2feaa5.json"],
        (true, String::new(), 0)
    );
    assert_eq!(all.len(), expect.len() + 1, "{all:?}");
}

#[test]
fn older_runs_fail_and_older_plans_change_when_saved() {
    let (code, all) = verdicts("examples/store");
    assert_eq!(code, 1);
    let (loads, first, _) = &all["wkfl-3b7e9d2a-4c5f-4a6b-8d7e-9f0a1b2c3d4e.json"];
    assert!(!loads);
    assert!(first.contains("forbids execution_context"), "{first}");
    assert!(
        first.contains("get_plan_runs() does not even list it"),
        "{first}"
    );
    // A W1-era plan loads, but HEAD sorts tool_ids, writes condition and plan_inputs, and
    // leaves Variable.value out on its next save.
    let (loads, _, changes) = &all["plan-0a6f3c1e-2b4d-4e8f-9a0b-1c2d3e4f5a60.json"];
    assert!(*loads);
    assert_eq!(*changes, 6);
}

#[test]
fn a_head_store_written_by_migrate_loads_as_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("head");
    let out = planrun(&[
        "-q",
        "migrate",
        &here("examples/store"),
        "--out",
        dst.to_str().unwrap(),
        "--to",
        "r6",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = planrun(&["check", dst.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("0 fail to load at HEAD, 0 load but change when saved"),
        "{text}"
    );
}

#[test]
fn only_head_is_known() {
    let out = planrun(&["check", "--sdk", "v0.3.0", &here("examples/store")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("only HEAD"));
}
