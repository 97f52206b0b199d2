//! Shared test helpers: the hand-made fixture documents, the schemas by file name, the SDK corpus.

#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::{json, Value};

/// The published schema with this file name.
pub(crate) fn schema(file: &str) -> Value {
    planrun_v2::schemas()
        .into_iter()
        .find(|(name, _)| *name == file)
        .unwrap_or_else(|| panic!("no schema named {file}"))
        .1
}

/// The hand-made PlanRunV2 fixture: every step type, output kind and clarification category.
pub(crate) fn fixture_run() -> Value {
    let text = include_str!("../fixtures/plan_run.json");
    serde_json::from_str(text).expect("the fixture is JSON")
}

/// A RunContext wrapping the fixture run.
pub(crate) fn fixture_run_context() -> Value {
    json!({
        "plan_run": fixture_run(),
        "storage": {"kind": "disk", "dir": "/var/portia"},
        "tool_registry": {"tool_ids": ["llm_tool", "search_tool", "weather_tool"]},
        "execution_hooks": {"hooks": ["clarify_on_tool_calls"]},
        "telemetry": {"enabled": false, "endpoint": null}
    })
}

/// The value at `pointer` in `doc`.
pub(crate) fn at(doc: &Value, pointer: &str) -> Value {
    doc.pointer(pointer)
        .unwrap_or_else(|| panic!("nothing at {pointer}"))
        .clone()
}

/// Every element of the array at `pointer`.
pub(crate) fn each(doc: &Value, pointer: &str) -> Vec<Value> {
    at(doc, pointer)
        .as_array()
        .unwrap_or_else(|| panic!("no array at {pointer}"))
        .clone()
}

/// A file of the SDK corpus (`shared/corpus/…`, beside the repository).
pub(crate) fn corpus(relative: &str) -> Value {
    let path = corpus_dir().join(relative);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("corpus files are JSON")
}

/// The raw text of a file of the SDK corpus.
pub(crate) fn corpus_text(relative: &str) -> String {
    let path = corpus_dir().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}

/// Writes `value` the way the SDK writes files: 4-space indent, no trailing newline.
pub(crate) fn to_sdk_json<T: serde::Serialize>(value: &T) -> String {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    value.serialize(&mut serializer).expect("serializable");
    String::from_utf8(out).expect("UTF-8")
}
