//! `parse` reads a document through a light tree whose strings borrow from the text;
//! `parse_by_value` reads it through a `serde_json::Value`, the reference. The two must give the
//! same result (document, detection, step key, normalisations) or the same error, for every real
//! document, every hand-made case, generated documents of every version, and every single-edit
//! mutant of those, in the SDK's layout and compact.

use crate::common;

use std::path::Path;

use common::corpus::corpus_documents;
use common::props::config;
use planrun_legacy::strategies::{end_user, local, plan, run, tool_call, PlanEra};
use planrun_legacy::{detect, parse, parse_by_value, DocKind, Version};
use planrun_v2::agreement::mutants;
use planrun_wire::json::to_sdk_json;
use proptest::prelude::*;
use serde_json::Value;

fn same_reading(text: &[u8]) {
    assert_eq!(
        parse(text),
        parse_by_value(text),
        "the two readers disagree on {}",
        String::from_utf8_lossy(text)
    );
}

/// `doc` as the SDK lays it out and compact, and the same for each of its single-edit mutants.
fn same_reading_of_mutants(doc: &Value) {
    same_reading(to_sdk_json(doc).as_bytes());
    for mutant in mutants(doc) {
        same_reading(to_sdk_json(&mutant.doc).as_bytes());
        same_reading(serde_json::to_string(&mutant.doc).unwrap().as_bytes());
    }
}

fn files_in(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

#[test]
fn every_real_document_and_hand_made_case_reads_the_same() {
    let mut files: Vec<_> = corpus_documents().into_iter().map(|(_, p)| p).collect();
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    files.extend(files_in(&tests.join("cases")));
    files.extend(files_in(&tests.join("head_cases")));
    assert!(files.len() > 370, "only {} files", files.len());
    for path in files {
        same_reading(&std::fs::read(&path).unwrap());
    }
}

#[test]
fn every_single_edit_of_every_real_run_reads_the_same() {
    let mut seen = 0;
    for (_, path) in corpus_documents() {
        let bytes = std::fs::read(&path).unwrap();
        if detect(&bytes).is_ok_and(|d| d.kind == DocKind::Run) {
            same_reading_of_mutants(&serde_json::from_slice(&bytes).unwrap());
            seen += 1;
        }
    }
    assert!(seen >= 50, "only {seen} runs");
}

#[test]
fn hand_picked_texts_read_the_same() {
    let run = r#""id": "prun-1742945e-63bf-4a2f-be54-b73e18e0a25e", "plan_id": "plan-5ccec58f-0e70-4378-a129-7842bc337b8d", "end_user_id": "local", "plan_run_inputs": {}"#;
    let texts = [
        format!("{{{run}}}"),
        // A repeated key, at the top and inside a value the model keeps as JSON.
        format!(r#"{{{run}, "plan_id": "plan-5ccec58f-0e70-4378-a129-7842bc337b8d"}}"#),
        format!(
            r#"{{{run}, "outputs": {{"step_outputs": {{"$a": {{"value": {{"k": 1, "k": 2}}, "summary": null}}}}}}}}"#
        ),
        // Escapes in keys and values; numbers beyond 64 bits and with exponents.
        format!(
            r#"{{{run}, "outputs": {{"step_outputs": {{"$\u0061\n": {{"value": [18446744073709551616123, 1e400, -0.0, 1.5e-7], "summary": "\ud83d\ude00\""}}}}}}}}"#
        ),
        // The step-key dialect, both keys, and neither.
        format!(r#"{{{run}, "current_step_id": 2}}"#),
        format!(r#"{{{run}, "current_step_id": 2, "current_step_index": 2}}"#),
        // Not JSON, not UTF-8, not a document.
        format!(r#"{{{run}, "state": NaN}}"#),
        format!("{{{run}"),
        "[]".to_owned(),
        "[1, 2]".to_owned(),
        "{}".to_owned(),
        r#"{"a": 1, "a": 1}"#.to_owned(),
        format!("{{{run}}} trailing"),
        // An object with more keys than are compared one by one, one of them repeated.
        format!(
            r#"{{"external_id": "u", "additional_data": {{{}, "k3": "again"}}}}"#,
            (0..40)
                .map(|i| format!(r#""k{i}": "v""#))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        format!(
            r#"{{"external_id": "u", "additional_data": {{{}}}}}"#,
            (0..40)
                .map(|i| format!(r#""k{i}": "v""#))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ];
    for text in &texts {
        same_reading(text.as_bytes());
    }
    let mut bad = texts[0].clone().into_bytes();
    bad.insert(10, 0xff);
    same_reading(&bad);
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn generated_runs_of_every_version_and_their_mutants_read_the_same(
        doc in prop::sample::select(Version::ALL.to_vec()).prop_flat_map(run)
    ) {
        same_reading_of_mutants(&serde_json::to_value(&doc).unwrap());
    }

    #[test]
    fn generated_plans_end_users_outputs_and_tool_calls_read_the_same(
        plan in prop::sample::select(PlanEra::ALL.to_vec()).prop_flat_map(plan),
        user in end_user(Version::HEAD),
        value in local(),
        call in tool_call(Version::HEAD),
    ) {
        same_reading_of_mutants(&serde_json::to_value(&plan).unwrap());
        same_reading_of_mutants(&serde_json::to_value(&user).unwrap());
        same_reading_of_mutants(&serde_json::to_value(&value).unwrap());
        same_reading_of_mutants(&serde_json::to_value(&call).unwrap());
    }
}
