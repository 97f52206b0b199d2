//! The chain brings every corpus run (and every hand-made one) to R6: the result is a valid R6
//! document, and every key the chain renamed, moved or defaulted has a report entry.

use std::path::{Path, PathBuf};

use planrun_converter::chain::to_r6;
use planrun_converter::EntryKind;
use planrun_legacy::{head, parse, Category, DocKind, Version};
use planrun_wire::json::to_sdk_json;

fn runs() -> Vec<PathBuf> {
    let roots = [
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../legacy/tests/cases"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/store"),
    ];
    let mut out = Vec::new();
    for root in roots {
        walk(&root, &mut out);
    }
    out.retain(|p| {
        std::fs::read(p)
            .ok()
            .and_then(|b| parse(&b).ok())
            .is_some_and(|parsed| parsed.detection.kind == DocKind::Run)
    });
    assert!(out.len() > 120, "only {} runs found", out.len());
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

#[test]
fn every_run_reaches_r6_and_reads_back_as_r6() {
    for path in runs() {
        let parsed = parse(&std::fs::read(&path).unwrap()).unwrap();
        let run = parsed.as_run().unwrap();
        let at_r6 = to_r6(run).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut text = to_sdk_json(&at_r6.run);
        if at_r6
            .run
            .outputs
            .clarifications
            .iter()
            .any(|c| c.category == Category::Argument)
        {
            // The chain keeps a W1 "Argument" clarification for V2; no SDK that writes R6
            // loads one (its enum lacks the value), so only HEAD's form of the run is R6.
            let err = parse(text.as_bytes()).unwrap_err().to_string();
            assert!(err.contains("\"Argument\""), "{}: {err}", path.display());
            text = to_sdk_json(&head::run(&at_r6.run).document);
        }
        let back =
            parse(text.as_bytes()).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()));
        assert!(
            back.detection.versions.contains(Version::R6),
            "{}: {}",
            path.display(),
            back.detection
        );
        assert!(
            back.normalizations.is_empty(),
            "{}: {:?}",
            path.display(),
            back.normalizations
        );
        if run.version() < Version::R6 {
            assert!(
                !at_r6.report.entries.is_empty(),
                "{}: nothing reported",
                path.display()
            );
        } else {
            assert!(at_r6.report.entries.is_empty() && at_r6.residue.is_empty());
        }
    }
}

#[test]
fn a_w1_workflow_is_renamed_rewritten_and_its_context_kept() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/store/wkfl-3b7e9d2a-4c5f-4a6b-8d7e-9f0a1b2c3d4e.json");
    let parsed = parse(&std::fs::read(path).unwrap()).unwrap();
    let at_r6 = to_r6(parsed.as_run().unwrap()).unwrap();
    assert_eq!(
        at_r6.run.id.unwrap().to_string(),
        "prun-3b7e9d2a-4c5f-4a6b-8d7e-9f0a1b2c3d4e"
    );
    assert_eq!(at_r6.run.end_user_id, "ana@example.com");
    let clar = serde_json::to_value(&at_r6.run.outputs.clarifications[0]).unwrap();
    assert_eq!(
        clar["plan_run_id"],
        "prun-3b7e9d2a-4c5f-4a6b-8d7e-9f0a1b2c3d4e"
    );
    assert_eq!(
        at_r6.residue["/run/execution_context/planning_agent_system_context_extension"],
        serde_json::json!(null)
    );
    assert_eq!(
        at_r6.residue["/run/execution_context/execution_agent_system_context_extension"],
        serde_json::json!(["Sign emails as Portia."])
    );
    assert_eq!(
        at_r6.residue["/run/execution_context"],
        serde_json::json!({"additional_data": {"team": "ops"}})
    );
    let kinds: Vec<EntryKind> = at_r6.report.entries.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == EntryKind::Renamed).count(),
        3,
        "{}",
        at_r6.report
    );
    assert_eq!(
        kinds.iter().filter(|k| **k == EntryKind::Coerced).count(),
        4,
        "{}",
        at_r6.report
    );
    assert!(
        at_r6
            .report
            .to_string()
            .contains("moved     /run/execution_context/end_user_id -> /run/end_user_id"),
        "{}",
        at_r6.report
    );
}

#[test]
/// `Portia.initialize_end_user` names a run started without an end user `portia:default_user`
/// (v0.3.0 to HEAD); a W1–R3 run whose context has none gets that id.
fn a_null_end_user_becomes_the_sdk_default_and_says_so() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/store/prun-4c8f0e3b-5d6a-4b7c-9e8f-0a1b2c3d4e5f.json");
    let parsed = parse(&std::fs::read(path).unwrap()).unwrap();
    let at_r6 = to_r6(parsed.as_run().unwrap()).unwrap();
    assert_eq!(
        at_r6.run.end_user_id,
        planrun_legacy::EndUser::SDK_DEFAULT_ID
    );
    let entry = at_r6
        .report
        .entries
        .iter()
        .find(|e| e.to.as_deref() == Some("/run/end_user_id"))
        .unwrap();
    assert_eq!(entry.kind, EntryKind::Defaulted);
    assert_eq!(
        entry.value,
        Some(serde_json::json!(planrun_legacy::EndUser::SDK_DEFAULT_ID))
    );
}
