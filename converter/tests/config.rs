//! The config's loss report says each thing once: one entry for the config as a whole, one per
//! secret the file held in clear; snapshots of the report of every corpus config file.

use crate::common;

use std::path::Path;

use planrun_converter::upgrade::resolve_config;
use planrun_converter::EntryKind;

#[test]
fn a_config_file_is_one_entry_plus_one_per_redacted_secret() {
    let user: planrun_legacy::Config = serde_json::from_str(
        r#"{"llm_provider": "anthropic", "anthropic_api_key": "sk-ant-live", "openai_api_key": "**********", "storage_class": "DISK"}"#,
    )
    .unwrap();
    let (_, report) = resolve_config(Some(&user)).unwrap();
    let whole: Vec<_> = report
        .entries
        .iter()
        .filter(|e| e.from.as_deref() == Some("/config"))
        .collect();
    assert_eq!(whole.len(), 1, "{report}");
    assert_eq!(whole[0].kind, EntryKind::Derived);
    assert!(whole[0].note.contains("sets 4 of"), "{report}");
    let secrets: Vec<_> = report
        .entries
        .iter()
        .filter(|e| e.kind == EntryKind::Coerced)
        .map(|e| e.from.as_deref().unwrap())
        .collect();
    assert_eq!(secrets, ["/config/anthropic_api_key"], "{report}");
    assert_eq!(report.entries.len(), 2, "{report}");
}

#[test]
fn snapshots_of_every_corpus_config() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/R6/config");
    let mut files = Vec::new();
    common::json_files(&dir, &mut files);
    assert!(!files.is_empty(), "no config in {}", dir.display());
    for path in files {
        let user: planrun_legacy::Config =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let (_, report) = resolve_config(Some(&user)).unwrap();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        insta::with_settings!({snapshot_path => "../../snapshots/converter/config", prepend_module_to_snapshot => false, omit_expression => true}, {
            insta::assert_snapshot!(format!("{name}.report"), report.to_string());
        });
    }
}
