//! Documents brought to the SDK's HEAD form: every `head_cases/<name>.input.json` becomes exactly
//! `head_cases/<name>.head.json`. Each expected file was checked against the SDK at HEAD (v0.9.0, commit
//! a3528cd6, pydantic 2.11.7): HEAD loads it with its own model and `model_dump_json(indent=4)`
//! writes it back byte for byte, while the input fails to load there or saves back different.

use std::path::Path;

use planrun_legacy::{head, parse, LegacyDocument, LegacyRun, Normalization};
use planrun_wire::json::to_sdk_json;

fn cases() -> Vec<(String, String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/head_cases");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".input.json").map(str::to_owned)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 3, "{names:?}");
    names
        .into_iter()
        .map(|name| {
            let input = std::fs::read_to_string(dir.join(format!("{name}.input.json"))).unwrap();
            let expected_path = dir.join(format!("{name}.head.json"));
            if std::env::var_os("PLANRUN_WRITE_HEAD_CASES").is_some() {
                // Writes a new expected file, to be checked against the SDK at HEAD and by eye.
                std::fs::write(&expected_path, at_head(&input).0).unwrap();
            }
            let expected = std::fs::read_to_string(&expected_path)
                .unwrap_or_else(|e| panic!("{name}.head.json: {e}"));
            (name, input, expected)
        })
        .collect()
}

fn at_head(input: &str) -> (String, Vec<Normalization>) {
    let parsed = parse(input.as_bytes()).unwrap();
    match &parsed.document {
        LegacyDocument::Plan(plan) => {
            let at = head::plan(plan);
            (to_sdk_json(&at.document), at.changes)
        }
        LegacyDocument::Run(LegacyRun::R6(run)) => {
            let at = head::run(run);
            (to_sdk_json(&at.document), at.changes)
        }
        other => panic!("no HEAD form for {other:?}"),
    }
}

#[test]
fn every_case_comes_out_as_head_writes_it() {
    for (name, input, expected) in cases() {
        let (text, changes) = at_head(&input);
        assert_eq!(text, expected, "{name}");
        assert!(
            !changes.is_empty(),
            "{name}: the input already was in HEAD's form"
        );
        let (again, none) = at_head(&text);
        assert_eq!(again, text, "{name}: HEAD's form is a fixed point");
        assert!(none.is_empty(), "{name}: {none:?}");
    }
}

#[test]
fn v032_inputs_are_renamed_not_dropped() {
    // Pins HEAD's Plan (extra="forbid"): a v0.3.2 plan with `inputs` fails to load at HEAD.
    let (_, input, _) = cases()
        .into_iter()
        .find(|(name, ..)| name == "plan_v032_inputs")
        .unwrap();
    let (_, changes) = at_head(&input);
    assert!(
        matches!(&changes[0], Normalization::Coerced { pointer, .. } if pointer == "/inputs"),
        "{changes:?}"
    );
    assert!(
        !changes
            .iter()
            .any(|c| matches!(c, Normalization::Dropped { .. })),
        "{changes:?}"
    );
}

#[test]
fn what_head_cannot_hold_is_listed_as_dropped() {
    // Pins HEAD's Variable (extra="ignore": `value` is not written) and its clarification
    // classes (an unknown key is not written).
    let dropped = |name: &str| -> Vec<String> {
        let (_, input, _) = cases().into_iter().find(|(n, ..)| n == name).unwrap();
        at_head(&input)
            .1
            .into_iter()
            .filter_map(|c| match c {
                Normalization::Dropped { pointer, .. } => Some(pointer),
                _ => None,
            })
            .collect()
    };
    assert_eq!(dropped("plan_w1_era"), ["/steps/1/inputs/0/value"]);
    assert_eq!(
        dropped("run_r6_old_clarifications"),
        ["/outputs/clarifications/0/ticket"]
    );
}
