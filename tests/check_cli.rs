//! `planrun check`: what the SDK of one version does with each file of a store. Each verdict
//! below was confirmed with that version's SDK (0.0.1-alpha.50, 0.1.0-alpha, 0.1.10, v0.1.12,
//! v0.2.0, v0.3.0, v0.3.2 and HEAD v0.9.0, under pydantic 2.11.7) loading the same files with its
//! own models and saving them back; `check` agreed with every one of them on every file of the
//! corpus stores, the example store and generated stores as well (loads, fails or never reads
//! the file; and each change its save makes).

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

/// File name (relative to the store) → (loads, first reason, changes on save), at HEAD.
fn verdicts(store: &str) -> (i32, BTreeMap<String, (bool, String, usize)>) {
    let (code, all) = verdicts_at(store, "HEAD");
    let all = all
        .into_iter()
        .map(|(name, v)| (name, (v.state == "loads", v.first, v.changes.len())))
        .collect();
    (code, all)
}

/// One file's verdict: `loads`, `fails` or `unread`, the first reason, the changes on save as
/// `kind pointer`.
#[derive(Debug)]
struct Verdict {
    state: &'static str,
    first: String,
    changes: Vec<String>,
}

/// File name (relative to the store) → its verdict at `sdk`.
fn verdicts_at(store: &str, sdk: &str) -> (i32, BTreeMap<String, Verdict>) {
    let root = here(store);
    let out = planrun(&["--format", "json", "check", "--sdk", sdk, &root]);
    let mut all = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let path = v["path"].as_str().unwrap();
        let name = path
            .strip_prefix(&root)
            .unwrap()
            .trim_start_matches('/')
            .to_owned();
        let state = match v["loads"].as_bool() {
            Some(true) => "loads",
            Some(false) => "fails",
            None => {
                assert!(v["unread"].is_string(), "{v}");
                "unread"
            }
        };
        let first = v["fails"][0]
            .as_str()
            .or(v["unread"].as_str())
            .unwrap_or("")
            .to_owned();
        let changes = v["changes_on_save"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                format!(
                    "{} {}",
                    c["kind"].as_str().unwrap(),
                    c["pointer"].as_str().unwrap_or("")
                )
            })
            .collect();
        all.insert(
            name,
            Verdict {
                state,
                first,
                changes,
            },
        );
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
            "/inputs: HEAD's Plan refuses plan `inputs`",
        ),
        // Plan.validate_plan: outputs + conditions unique (0.1.8+; outputs alone from 0.1.6).
        // 0.1.5 loads this plan and saves it back unchanged; HEAD refuses it.
        (
            "plan-7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d.json",
            "/steps/1/output: HEAD's Plan refuses a repeated output",
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
            "its category \"Argument\" is not one of HEAD's ClarificationCategory",
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
fn an_sdk_planrun_does_not_know_is_a_usage_error() {
    let out = planrun(&["check", "--sdk", "0.4.0", &here("examples/store")]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("give HEAD, a wire version or its release"),
        "{err}"
    );
    assert!(err.contains("R3 (v0.2.0)"), "{err}");
    // A version is named by its wire name or by the release it is judged as, in any case.
    for (a, b) in [("r3", "v0.2.0"), ("R6", "head"), ("R1", "0.1.10")] {
        let one = planrun(&[
            "--format",
            "json",
            "check",
            "--sdk",
            a,
            &here("examples/store"),
        ]);
        let two = planrun(&[
            "--format",
            "json",
            "check",
            "--sdk",
            b,
            &here("examples/store"),
        ]);
        assert_eq!(one.stdout, two.stdout, "{a} and {b}");
    }
}

/// `tests/check_sdk/`, judged by the SDK of every version, W1 to R6: `u` never read, `f` fails
/// to load, a number: loads, and its next save makes that many changes.
#[test]
fn each_sdk_judges_by_its_own_rules() {
    let table = [
        // An end user (files from v0.3.0) with a null additional_data value (v0.3.5+).
        ("ana.json", "u u u u u f f 0"),
        // A W1-era plan whose step input has a key Variable does not declare: Variable forbids
        // unknown keys until 0.1.11 and ignores them from v0.1.12.
        (
            "plan-77777777-7777-4777-8777-777777777777.json",
            "f f f 6 6 6 7 7",
        ),
        // The same plan without it: written by 0.0.1-alpha.50, so nothing changes there; later
        // releases sort tool_ids, write `condition`, leave out Variable.value, write `inputs`
        // (v0.3.2) or `plan_inputs` (HEAD).
        (
            "plan-88888888-8888-4888-8888-888888888888.json",
            "0 0 4 5 5 5 6 6",
        ),
        // An R0 run: only 0.1.0-alpha reads `pr-` ids.
        (
            "pr-55555555-5555-4555-8555-555555555555.json",
            "f 0 f f f f f f",
        ),
        // An R2 run (v0.1.12): 0.1.10 loads it as it is; v0.2.0 loads it and drops the
        // execution context's system-context extensions; v0.3.0 on require end_user_id.
        (
            "prun-11111111-1111-4111-8111-111111111111.json",
            "f f 0 0 2 f f f",
        ),
        // An R6 run with a clarification `source`: v0.3.2 loads it, drops `source` and writes
        // an execution context; v0.3.0 forbids plan_run_inputs.
        (
            "prun-22222222-2222-4222-8222-222222222222.json",
            "f f f f f f 2 0",
        ),
        // Its agent memory: kept from v0.1.12, read as a LocalDataValue.
        (
            "prun-22222222-2222-4222-8222-222222222222/$weather.json",
            "u u u 0 0 0 0 0",
        ),
        // An R4 run whose Action clarification has no require_confirmation (v0.3.0+, False by
        // default); v0.3.2 writes plan_run_inputs too; HEAD forbids execution_context.
        (
            "prun-33333333-3333-4333-8333-333333333333.json",
            "f f f f f 1 2 f",
        ),
        // An R6 run whose clarifications do not fit their category: the SDK's union loads each
        // as the class its keys fit (see below).
        (
            "prun-44444444-4444-4444-8444-444444444444.json",
            "f f f f f f 8 3",
        ),
        // An R1 run with a W1 "Argument" clarification: not a category of 0.1.10 or later.
        (
            "prun-66666666-6666-4666-8666-666666666666.json",
            "f f f f f f f f",
        ),
    ];
    let sdks = ["W1", "R0", "R1", "R2", "R3", "R4", "R5", "R6"];
    let at: Vec<_> = sdks
        .iter()
        .map(|sdk| verdicts_at("tests/check_sdk", sdk))
        .collect();
    for (i, sdk) in sdks.iter().enumerate() {
        let fails = table
            .iter()
            .any(|(_, row)| row.split(' ').nth(i) == Some("f"));
        assert_eq!(at[i].0, i32::from(fails), "exit code at {sdk}");
        assert_eq!(at[i].1.len(), table.len(), "{sdk}: {:?}", at[i].1.keys());
    }
    for (name, row) in table {
        for (i, want) in row.split(' ').enumerate() {
            let got = &at[i].1[name];
            let state = match want {
                "u" => "unread",
                "f" => "fails",
                _ => "loads",
            };
            assert_eq!(got.state, state, "{name} at {}: {got:?}", sdks[i]);
            if state == "loads" {
                assert_eq!(
                    got.changes.len().to_string(),
                    want,
                    "{name} at {}: {got:?}",
                    sdks[i]
                );
            } else {
                assert!(
                    got.changes.is_empty() && !got.first.is_empty(),
                    "{name}: {got:?}"
                );
            }
        }
    }
    let verdict = |sdk: usize, name: &str| &at[sdk].1[name];
    // HEAD's union: an "Action" with Input's keys loads as an InputClarification and is saved
    // as it is; an Input whose argument_name is not a string loads as the base class, which
    // drops it; one with no category is an Input by its keys; a resolved Multiple Choice whose
    // response is not an option fails its validator and loads as an Input, without options.
    assert_eq!(
        verdict(7, "prun-44444444-4444-4444-8444-444444444444.json").changes,
        [
            "dropped /outputs/clarifications/1/argument_name",
            "defaulted /outputs/clarifications/2/category",
            "dropped /outputs/clarifications/3/options",
        ]
    );
    assert_eq!(
        verdict(4, "prun-11111111-1111-4111-8111-111111111111.json").changes,
        [
            "dropped /execution_context/planning_agent_system_context_extension",
            "dropped /execution_context/execution_agent_system_context_extension",
        ]
    );
    assert_eq!(
        verdict(6, "prun-22222222-2222-4222-8222-222222222222.json").changes,
        [
            "dropped /outputs/clarifications/0/source",
            "defaulted /execution_context",
        ]
    );
    assert_eq!(
        verdict(5, "prun-33333333-3333-4333-8333-333333333333.json").changes,
        ["defaulted /outputs/clarifications/0/require_confirmation"]
    );
    assert_eq!(
        verdict(3, "plan-77777777-7777-4777-8777-777777777777.json").changes,
        [
            "coerced /plan_context/tool_ids/0",
            "coerced /plan_context/tool_ids/1",
            "defaulted /steps/0/condition",
            "dropped /steps/1/inputs/0/value",
            "dropped /steps/1/inputs/0/hint",
            "defaulted /steps/1/condition",
        ]
    );
    let reasons = [
        (2, "plan-77777777-7777-4777-8777-777777777777.json", "/steps/1/inputs/0/hint: 0.1.10's Variable forbids this key"),
        (2, "pr-55555555-5555-4555-8555-555555555555.json", "0.1.10's PlanRun refuses /id: prefix \"pr\" does not match the expected prefix \"prun\""),
        (1, "prun-11111111-1111-4111-8111-111111111111.json", "0.1.0-alpha's PlanRun refuses /id: prefix \"prun\""),
        (2, "prun-66666666-6666-4666-8666-666666666666.json", "its category \"Argument\" is not one of 0.1.10's ClarificationCategory"),
        (5, "prun-22222222-2222-4222-8222-222222222222.json", "written as R6 (SDK v0.3.4 – HEAD): v0.3.0's PlanRun forbids plan_run_inputs"),
        (5, "ana.json", "/additional_data/team: v0.3.0's EndUser refuses null additional_data value"),
        (4, "ana.json", "v0.2.0 reads no end-user files"),
        (2, "prun-22222222-2222-4222-8222-222222222222/$weather.json", "0.1.10 keeps no agent memory"),
    ];
    for (sdk, name, why) in reasons {
        let got = verdict(sdk, name);
        assert!(got.first.contains(why), "{name} at {}: {got:?}", sdks[sdk]);
    }
}

#[test]
fn older_sdks_in_text() {
    let out = planrun(&["check", "--sdk", "R3", &here("tests/check_sdk")]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("unread   "), "{text}");
    assert!(
        text.ends_with("10 files: 5 fail to load at R3 (v0.2.0), 3 load but change when saved, 1 load as they are, 1 not read by v0.2.0\n"),
        "{text}"
    );
}
