//! The published schemas against real SDK data.
//!
//! 1. Every corpus document (and every hand-made case of the legacy crate) is valid against the
//!    generated schema of its detected kind and version.
//! 2. Every corpus document is also checked against the SDK's own JSON Schema of its version
//!    (`corpus/<V>/schemas/*`, the validation-mode ones where pydantic wrote two). Where the SDK's
//!    schema and ours disagree about a real document, one of the [`RULES`] below must explain it
//!    (a patch to the SDK's schema that makes it agree, with the verdict on which side is right
//!    and why), and each rule must explain exactly the documents it says it does. A new
//!    disagreement, or a rule that no longer explains what it claims, fails the test.

#[path = "../legacy/tests/common/corpus.rs"]
mod corpus;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use planrun_legacy::{detect, DocKind, Version};
use planrun_schemas::validate::{schema_for, validate};
use planrun_wire::json::parse_value;
use serde_json::{json, Value};

/// A document with its detected schema.
struct Doc {
    rel: String,
    /// The corpus version directory it comes from (`W1`, `R1`, …), `None` for hand-made cases.
    corpus_version: Option<Version>,
    kind: DocKind,
    schema: String,
    tree: Value,
}

fn documents() -> Vec<Doc> {
    let mut files: Vec<(String, PathBuf)> = corpus::corpus_documents();
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("../legacy/tests/cases");
    for entry in std::fs::read_dir(&cases).unwrap() {
        let path = entry.unwrap().path();
        files.push((
            format!("cases/{}", path.file_name().unwrap().to_string_lossy()),
            path,
        ));
    }
    files
        .into_iter()
        .map(|(rel, path)| {
            let bytes = std::fs::read(&path).unwrap();
            let detection = detect(&bytes).unwrap_or_else(|e| panic!("{rel}: {e}"));
            let mut tree = parse_value(&bytes).unwrap();
            // The `current_step_id` dialect is read as `current_step_index`; the schemas describe
            // the SDK's wire names, so it is renamed as the reader renames it.
            if let Some(obj) = tree.as_object_mut() {
                if let Some(index) = obj.shift_remove("current_step_id") {
                    obj.insert("current_step_index".to_owned(), index);
                }
            }
            Doc {
                corpus_version: rel.split('/').next().and_then(Version::parse),
                kind: detection.kind,
                schema: schema_for(&detection),
                rel,
                tree,
            }
        })
        .collect()
}

#[test]
fn every_real_document_is_valid_against_the_schema_of_its_detected_version() {
    let docs = documents();
    assert!(docs.len() > 360, "only {} documents", docs.len());
    let mut per_schema: BTreeMap<&str, usize> = BTreeMap::new();
    for doc in &docs {
        let violations = validate(&doc.tree, &doc.schema).unwrap();
        assert!(
            violations.is_empty(),
            "{} is invalid against {}:\n{}",
            doc.rel,
            doc.schema,
            violations
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        );
        *per_schema.entry(doc.schema.as_str()).or_default() += 1;
    }
    // Every legacy schema sees real data, except R1's (a corpus R1 run is indistinguishable from
    // an R2 one, so it is read as R2).
    for name in planrun_schemas::names() {
        if name.starts_with("legacy/") {
            assert_eq!(
                per_schema.contains_key(name.as_str()),
                name != "legacy/run.R1.schema.json",
                "{name}: {per_schema:?}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The SDK's own schemas
// ---------------------------------------------------------------------------------------------

/// The SDK schema (file under `corpus/<V>/schemas/`) for a document of `kind` from corpus `version`.
fn sdk_schema_file(kind: DocKind, version: Version) -> &'static str {
    match kind {
        DocKind::Run if version == Version::W1 => "Workflow.validation.schema.json",
        DocKind::Run => "PlanRun.validation.schema.json",
        DocKind::Plan => "Plan.validation.schema.json",
        DocKind::Output => "Output.validation.schema.json",
        DocKind::EndUser => "EndUser.schema.json",
        DocKind::ToolCall => "ToolCallRecord.schema.json",
        DocKind::Config => "Config.schema.json",
        DocKind::StepOutputValue | DocKind::StepOutputValues => "StepOutputValue.schema.json",
        DocKind::RunContext => panic!("the SDK has no schema of a RunContext"),
    }
}

/// The SDK's schema for a document, as pydantic wrote it (a list of step output values is checked
/// item by item, as `list[StepOutputValue]`).
fn sdk_schema(doc: &Doc) -> Value {
    let version = doc.corpus_version.expect("a corpus document");
    let path = corpus::corpus_root()
        .join(version.as_str())
        .join("schemas")
        .join(sdk_schema_file(doc.kind, version));
    let mut schema: Value = serde_json::from_slice(&std::fs::read(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if doc.kind == DocKind::StepOutputValues {
        let defs = schema
            .as_object_mut()
            .unwrap()
            .shift_remove("$defs")
            .unwrap_or_else(|| json!({}));
        let mut defs = defs.as_object().unwrap().clone();
        defs.insert("StepOutputValue".to_owned(), schema);
        schema =
            json!({"type": "array", "items": {"$ref": "#/$defs/StepOutputValue"}, "$defs": defs});
    }
    schema
}

/// One known way the SDK's schemas and ours disagree about real documents: a patch that brings
/// the SDK's schema in line, and the verdict.
struct Rule {
    name: &'static str,
    /// Which side is right, and why.
    verdict: &'static str,
    /// Makes the SDK's schema agree with the wire on this point.
    patch: fn(&mut Value),
    /// The documents the rule explains: exactly these disagree because of it.
    explains: fn(&Doc) -> bool,
    /// How many corpus documents that is (the corpus is fixed; a change means new data).
    count: usize,
}

const RULES: &[Rule] = &[Rule {
    name: "prefixed ids typed as {uuid} objects",
    verdict: "OURS is right. The SDK's validation-mode schemas describe PlanUUID, PlanRunUUID, \
              ClarificationUUID and WorkflowUUID as an object `{\"uuid\": <uuid>}`, the pydantic \
              model behind the id. But the SDK serialises every id as the prefixed string \
              `\"prun-<uuid>\"` (its own serialization-mode schemas say `type: string`), and its \
              loader reads that string back (every corpus file is `reload_ok` in its manifest). \
              The object form is only a second input the validator also takes. Our schemas \
              accept both: the string, with its prefix checked, and the object.",
    patch: ids_are_strings,
    explains: has_prefixed_id,
    count: 205,
}];

/// Replaces every `…UUID` definition of an SDK schema by what its serialization-mode schema says:
/// a string.
fn ids_are_strings(schema: &mut Value) {
    if let Some(defs) = schema.get_mut("$defs").and_then(Value::as_object_mut) {
        for (name, def) in defs.iter_mut() {
            if name.ends_with("UUID") {
                *def = json!({"type": "string"});
            }
        }
    }
}

/// Whether a document holds a prefixed id anywhere the SDK types one: a run's or plan's `id` and
/// `plan_id`, a clarification's `id` and run reference, a tool call's or agent-memory value's run.
fn has_prefixed_id(doc: &Doc) -> bool {
    fn any_id(value: &Value) -> bool {
        match value {
            Value::Object(map) => map.iter().any(|(key, v)| {
                let is_id = matches!(
                    key.as_str(),
                    "id" | "plan_id" | "plan_run_id" | "workflow_id"
                ) && v.as_str().is_some_and(|s| {
                    ["plan-", "prun-", "pr-", "wkfl-", "clar-"]
                        .iter()
                        .any(|p| s.starts_with(p))
                });
                // Native JSON (responses, custom data, tool input and output, values) is typed
                // "any" by the SDK, whatever ids it holds.
                let native = matches!(
                    key.as_str(),
                    "response" | "data" | "options" | "input" | "output" | "value" | "models"
                );
                is_id || (!native && any_id(v))
            }),
            Value::Array(items) => items.iter().any(any_id),
            _ => false,
        }
    }
    any_id(&doc.tree)
}

fn sdk_accepts(schema: &Value, doc: &Value) -> bool {
    jsonschema::draft202012::new(schema)
        .unwrap_or_else(|e| panic!("an SDK schema does not compile: {e}"))
        .is_valid(doc)
}

fn sdk_errors(schema: &Value, doc: &Value) -> Vec<String> {
    let validator = jsonschema::draft202012::new(schema).unwrap();
    validator
        .iter_errors(doc)
        .take(5)
        .map(|e| format!("at {}: {}", e.instance_path(), e.masked()))
        .collect()
}

#[test]
fn the_sdks_own_schemas_disagree_with_ours_only_as_written_down() {
    let docs: Vec<Doc> = documents()
        .into_iter()
        .filter(|d| d.corpus_version.is_some())
        .collect();
    let mut explained: Vec<Vec<&str>> = vec![Vec::new(); RULES.len()];
    let mut unexplained = Vec::new();
    let mut checked = 0;
    for doc in &docs {
        let ours = validate(&doc.tree, &doc.schema).unwrap().is_empty();
        let sdk = sdk_schema(doc);
        checked += 1;
        if sdk_accepts(&sdk, &doc.tree) == ours {
            for rule in RULES {
                assert!(
                    !(rule.explains)(doc),
                    "{}: rule {:?} says the SDK's schema rejects it, but it agrees with ours",
                    doc.rel,
                    rule.name
                );
            }
            continue;
        }
        assert!(
            ours,
            "{}: the SDK's schema accepts a real document ours rejects",
            doc.rel
        );
        // The SDK rejects a document ours accepts: with every rule's patch it must accept, and
        // every rule must say whether it is needed.
        let mut patched = sdk.clone();
        for rule in RULES {
            (rule.patch)(&mut patched);
        }
        if !sdk_accepts(&patched, &doc.tree) {
            unexplained.push(format!(
                "{} ({}): {}",
                doc.rel,
                sdk_schema_file(doc.kind, doc.corpus_version.unwrap()),
                sdk_errors(&patched, &doc.tree).join("; ")
            ));
            continue;
        }
        for (i, rule) in RULES.iter().enumerate() {
            let mut without = sdk.clone();
            RULES
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .for_each(|(_, other)| (other.patch)(&mut without));
            let needed = !sdk_accepts(&without, &doc.tree);
            assert_eq!(
                needed,
                (rule.explains)(doc),
                "{}: rule {:?} explains it: {needed}; the rule says: {}",
                doc.rel,
                rule.name,
                (rule.explains)(doc)
            );
            if needed {
                explained[i].push(&doc.rel);
            }
        }
    }
    assert!(checked > 350, "only {checked} documents compared");
    assert!(
        unexplained.is_empty(),
        "new disagreements between the SDK's schemas and ours (decide which side is right and \
         write the rule down in RULES):\n{}",
        unexplained.join("\n")
    );
    for (rule, docs) in RULES.iter().zip(&explained) {
        assert!(!rule.verdict.is_empty());
        assert_eq!(
            docs.len(),
            rule.count,
            "rule {:?} explains {} documents, not {}",
            rule.name,
            docs.len(),
            rule.count
        );
    }
}

#[test]
fn every_sdk_schema_of_the_corpus_is_compared() {
    // The validation-mode schemas of every version, and the ones pydantic wrote once, are all
    // used by the comparison above, except those of types no standalone corpus file holds.
    let docs = documents();
    let mut used: Vec<String> = docs
        .iter()
        .filter_map(|d| {
            let version = d.corpus_version?;
            Some(format!(
                "{version}/schemas/{}",
                sdk_schema_file(d.kind, version)
            ))
        })
        .collect();
    used.sort();
    used.dedup();
    let mut present = Vec::new();
    for version in ["W1", "R1", "R3", "R4", "R6"] {
        let dir = corpus::corpus_root().join(version).join("schemas");
        for entry in std::fs::read_dir(dir).unwrap() {
            present.push(format!(
                "{version}/schemas/{}",
                entry.unwrap().file_name().to_string_lossy()
            ));
        }
    }
    present.sort();
    let unused: Vec<&String> = present.iter().filter(|p| !used.contains(p)).collect();
    let why = |name: &str| {
        if name.contains(".serialization.") {
            Some("serialization mode: what pydantic writes, not what it reads; the validation-mode twin is compared")
        } else if name.ends_with("ClarificationList.schema.json")
            || name.ends_with("ExecutionContext.schema.json")
        {
            Some("no standalone file of the type: its documents are compared inside the runs")
        } else if name.ends_with("PlanV2.schema.json") {
            Some("PlanV2 is not a legacy wire format (the v2 crate defines its own)")
        } else {
            None
        }
    };
    for name in unused {
        assert!(why(name).is_some(), "{name} is not compared with anything");
    }
}
