//! Law 1 over the real corpus: every document the SDK wrote is detected as what its manifest says
//! and re-emitted byte for byte, and `read` (which skips that check) reads it as `parse` does.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

use common::corpus::{corpus_documents, corpus_root, not_a_document};

use planrun_legacy::{parse, read, DocKind, LegacyDocument, Version, MASK};
use serde_json::Value;

/// What the manifest (or, for whole stores, the file name) says the file is.
fn expected_kind(version_dir: &Path, rel_in_version: &str) -> DocKind {
    if let Some(name) = rel_in_version.strip_prefix("disk_storage/") {
        return if name.contains('/') {
            DocKind::Output
        } else if name.starts_with("plan-") {
            DocKind::Plan
        } else if name.starts_with("wkfl-") || name.starts_with("pr-") || name.starts_with("prun-")
        {
            DocKind::Run
        } else {
            DocKind::EndUser
        };
    }
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(version_dir.join("manifest.json")).unwrap()).unwrap();
    let entry = &manifest["files"][rel_in_version];
    let produced_by = entry["produced_by"].as_str().unwrap_or_default();
    match entry["model"].as_str() {
        Some("Workflow" | "PlanRun") => DocKind::Run,
        Some("Plan") => DocKind::Plan,
        Some("EndUser") => DocKind::EndUser,
        Some("ToolCallRecord") => DocKind::ToolCall,
        Some("StepOutputValue") => DocKind::StepOutputValue,
        Some(
            "Output" | "LocalOutput" | "LocalDataValue" | "AgentMemoryOutput" | "AgentMemoryValue",
        ) => DocKind::Output,
        _ if rel_in_version.starts_with("config/") => DocKind::Config,
        _ if produced_by.contains("list[StepOutputValue]") => DocKind::StepOutputValues,
        other => panic!("{rel_in_version}: manifest model {other:?} is not mapped"),
    }
}

#[test]
fn every_corpus_document_is_detected_and_reemitted_exactly() {
    let root = corpus_root();
    let table = Mutex::new(BTreeMap::new());
    insta::glob!("../../../shared/corpus", "**/*.json", |path| {
        let rel = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if not_a_document(&rel).is_some() {
            return;
        }
        let (version_name, rel_in_version) = rel.split_once('/').unwrap();
        let version = Version::parse(version_name).unwrap();
        let bytes = std::fs::read(path).unwrap();
        let parsed = parse(&bytes).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let (detection, document) = read(&bytes).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(
            (&detection, &document),
            (&parsed.detection, &parsed.document),
            "{rel}: `read` differs from `parse`"
        );
        let detection = &parsed.detection;
        assert_eq!(
            detection.kind,
            expected_kind(&root.join(version_name), rel_in_version),
            "{rel}"
        );
        assert!(
            detection.versions.contains(version),
            "{rel}: detected {detection}, corpus says {version}"
        );
        let emitted = parsed.to_sdk_json();
        if detection.kind == DocKind::Config {
            assert_config_reemitted_with_secrets_masked(&rel, &bytes, &emitted);
        } else {
            assert!(
                parsed.normalizations.is_empty(),
                "{rel}: {:?}",
                parsed.normalizations
            );
            assert_eq!(
                emitted.as_bytes(),
                bytes.as_slice(),
                "{rel}: re-emission differs"
            );
        }
        table.lock().unwrap().insert(
            rel,
            format!("{} {}", detection.kind.as_str(), detection.versions),
        );
    });
    let table = table.into_inner().unwrap();
    let shared: Vec<String> = corpus_documents().into_iter().map(|(rel, _)| rel).collect();
    assert_eq!(
        table.keys().cloned().collect::<Vec<_>>(),
        shared,
        "the shared corpus selection (tests/common/corpus.rs) differs from this walk"
    );
    assert!(
        table.len() > 350,
        "only {} corpus documents found",
        table.len()
    );
    let text: String = table
        .iter()
        .map(|(file, what)| format!("{file:<75} {what}\n"))
        .collect();
    insta::with_settings!({snapshot_path => "../../snapshots/legacy", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("corpus_detection", text);
    });
}

/// Config is the one documented exception to byte identity: the SDK writes
/// `aws_secret_access_key` in clear, this toolkit never does. Everything else is identical.
fn assert_config_reemitted_with_secrets_masked(rel: &str, input: &[u8], emitted: &str) {
    let mut expected: Value = serde_json::from_slice(input).unwrap();
    let secret = expected["aws_secret_access_key"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if !secret.is_empty() {
        expected["aws_secret_access_key"] = Value::String(MASK.to_owned());
        assert!(!emitted.contains(&secret), "{rel}: secret written in clear");
    }
    assert_eq!(
        emitted,
        planrun_wire::json::to_sdk_json(&expected),
        "{rel}: config re-emission differs beyond the masked secret"
    );
}

#[test]
fn evidence_names_the_facts_behind_a_version() {
    let root = corpus_root();
    let read = |rel: &str| parse(&std::fs::read(root.join(rel)).unwrap()).unwrap();
    let w1 = read("W1/workflows/run_defaults.json");
    assert_eq!(w1.detection.versions.to_string(), "W1");
    let shown = w1.detection.to_string();
    assert!(shown.contains("id prefix wkfl-"), "{shown}");
    assert!(
        shown.contains("planner_system_context_extension"),
        "{shown}"
    );
    let r1 = read("R1/plan_runs/run_defaults.json");
    assert_eq!(
        r1.detection.versions.to_string(),
        "R1–R2",
        "{}",
        r1.detection
    );
    let r6 = read("R6/plan_runs/run_clarifications_resolved.json");
    assert_eq!(r6.detection.versions.to_string(), "R6");
    match &r6.document {
        LegacyDocument::Run(run) => assert_eq!(run.version(), Version::R6),
        other => panic!("not a run: {other:?}"),
    }
}
