//! The SDK corpus (`../shared/corpus`) and which of its files are legacy documents. Shared by the
//! legacy crate's corpus tests and, through `#[path]`, by the converter's schema tests, so that
//! every test reads the same selection.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The corpus directory, beside the project.
pub(crate) fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .canonicalize()
        .expect("the corpus lives in ../shared/corpus beside the project")
}

/// Files under the corpus that are not legacy documents, with the reason for each.
pub(crate) fn not_a_document(rel: &str) -> Option<&'static str> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    if name == "manifest.json" {
        Some("corpus metadata written by the corpus generator")
    } else if rel.contains("/schemas/") {
        Some("the SDK's own JSON Schemas, compared against ours by the schema tests")
    } else if rel.ends_with("cloud/requests_sent.json") {
        Some("a capture of HTTP requests, read by the converter's cloud-body tests")
    } else if rel.ends_with("cloud/synthetic_get_response.json") {
        Some("a hand-shaped cloud API response, read by the converter's cloud-body tests")
    } else if rel.contains("/plan_v2/") && !rel.ends_with(".to_legacy_plan.json") {
        Some("the SDK's lossy PlanV2 dump: not a legacy wire format (PlanV2 is defined by the v2 crate)")
    } else {
        None
    }
}

/// Every legacy document of the corpus as `(path relative to the corpus, absolute path)`, sorted.
pub(crate) fn corpus_documents() -> Vec<(String, PathBuf)> {
    let root = corpus_root();
    let mut out = Vec::new();
    collect(&root, &root, &mut out);
    out.sort();
    out
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if not_a_document(&rel).is_none() {
                out.push((rel, path));
            }
        }
    }
}
