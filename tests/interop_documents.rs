//! The documents of the cross-language interop check (`interop/run`, run by `.ci/run`): every
//! V2 document the converter produces from the SDK corpus, the hand-made V2 fixture (every step
//! type and clarification category), and documents generated from the V2 strategies; plus the
//! invalid documents of `interop/cases/rejected.json`, each one edit away from the fixture.
//!
//! This test checks the Rust side of the contract: every valid document reads back through serde
//! unchanged and is valid against `v2/PlanRunV2.schema.json`, and every invalid one is rejected by
//! both serde and the schema. When `PLANRUN_INTEROP_DIR` is set, it also writes the documents
//! there (`valid/*.json`, `run_context/*.json` (generated `RunContext` descriptors),
//! `rejected/*.json` and `rejected/cases.json`), for pydantic, Ajv and the TypeScript reader.

use crate::converter_common as common;

use std::path::{Path, PathBuf};

use planrun_converter::upgrade::{resolve_config, upgrade, PlanSource, Sources};
use planrun_schemas::validate::validate;
use planrun_v2::PlanRunV2;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Map, Value};

const SCHEMA: &str = "v2/PlanRunV2.schema.json";
/// How many documents the strategies generate (deterministically).
const GENERATED: usize = 48;
/// How many `RunContext` descriptors they generate (no corpus document is one).
const GENERATED_CONTEXTS: usize = 16;

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture() -> String {
    std::fs::read_to_string(manifest_dir().join("../v2/tests/fixtures/plan_run.json")).unwrap()
}

/// Every valid document as (name, text), the text as the Rust side writes it.
fn valid_documents() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let (config, _) = resolve_config(None).unwrap();
    let root = manifest_dir()
        .join("../../shared/corpus")
        .canonicalize()
        .unwrap();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let store = common::index(&dir);
        for (path, parsed) in &store.runs {
            let run = parsed.as_run().unwrap();
            let at_r6 = planrun_converter::chain::to_r6(run).unwrap();
            let sources = Sources {
                run: parsed,
                plan: PlanSource::looked_up(store.plans.get(&run.plan_id().to_string())),
                end_user: store.end_users.get(&at_r6.run.end_user_id),
                plan_read: &[],
                end_user_read: &[],
                config: &config,
                agent_memory: None,
            };
            let rel = path.strip_prefix(&root).unwrap().display().to_string();
            let converted = upgrade(&sources).unwrap_or_else(|e| panic!("{rel}: {e}"));
            let name = format!(
                "corpus__{}",
                rel.trim_end_matches(".json").replace('/', "__")
            );
            out.push((name, serde_json::to_string_pretty(&converted.run).unwrap()));
        }
    }
    let corpus = out.len();
    assert!(corpus > 120, "only {corpus} corpus runs converted");

    let fixture: PlanRunV2 = serde_json::from_str(&fixture()).unwrap();
    out.push((
        "fixture__plan_run".to_owned(),
        serde_json::to_string_pretty(&fixture).unwrap(),
    ));

    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let strategy = planrun_v2::strategies::plan_run_v2();
    for i in 0..GENERATED {
        let run = strategy.new_tree(&mut runner).unwrap().current();
        out.push((
            format!("generated__{i:02}"),
            serde_json::to_string_pretty(&run).unwrap(),
        ));
    }
    out
}

/// Generated `RunContext` descriptors as (name, text).
fn run_contexts() -> Vec<(String, String)> {
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let strategy = planrun_v2::strategies::run_context();
    (0..GENERATED_CONTEXTS)
        .map(|i| {
            let context = strategy.new_tree(&mut runner).unwrap().current();
            (
                format!("generated__{i:02}"),
                serde_json::to_string_pretty(&context).unwrap(),
            )
        })
        .collect()
}

/// One invalid document: an edit of the fixture.
struct Case {
    name: String,
    category: String,
    pydantic_strict_only: bool,
    doc: Value,
}

fn rejected_cases() -> Vec<Case> {
    let text =
        std::fs::read_to_string(manifest_dir().join("../interop/cases/rejected.json")).unwrap();
    let specs: Vec<Value> = serde_json::from_str(&text).unwrap();
    let base: Value = serde_json::from_str(&fixture()).unwrap();
    specs
        .into_iter()
        .map(|spec| {
            let field = |key: &str| {
                spec[key]
                    .as_str()
                    .unwrap_or_else(|| panic!("{spec}: no {key}"))
                    .to_owned()
            };
            let (name, op, path) = (field("name"), field("op"), field("path"));
            let mut doc = base.clone();
            let (parent, key) = path.rsplit_once('/').unwrap();
            let target = doc
                .pointer_mut(parent)
                .and_then(Value::as_object_mut)
                .unwrap_or_else(|| panic!("{name}: {parent} is not an object of the fixture"));
            match op.as_str() {
                "add" => {
                    assert!(!target.contains_key(key), "{name}: {path} already exists");
                    target.insert(key.to_owned(), spec["value"].clone());
                }
                "replace" => {
                    let slot = target
                        .get_mut(key)
                        .unwrap_or_else(|| panic!("{name}: no {path}"));
                    *slot = spec["value"].clone();
                }
                "remove" => {
                    target
                        .shift_remove(key)
                        .unwrap_or_else(|| panic!("{name}: no {path}"));
                }
                other => panic!("{name}: unknown op {other}"),
            }
            Case {
                category: field("category"),
                pydantic_strict_only: spec["pydantic_strict_only"].as_bool().unwrap_or(false),
                name,
                doc,
            }
        })
        .collect()
}

#[test]
fn interop_documents_agree_with_serde_and_the_schema() {
    let valid = valid_documents();
    for (name, text) in &valid {
        let read: PlanRunV2 = serde_json::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            &serde_json::to_string_pretty(&read).unwrap(),
            text,
            "{name}"
        );
        let doc: Value = serde_json::from_str(text).unwrap();
        let violations = validate(&doc, SCHEMA).unwrap();
        assert!(violations.is_empty(), "{name}: {violations:?}");
    }

    let contexts = run_contexts();
    for (name, text) in &contexts {
        let read: planrun_v2::RunContext =
            serde_json::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            &serde_json::to_string_pretty(&read).unwrap(),
            text,
            "{name}"
        );
        let doc: Value = serde_json::from_str(text).unwrap();
        let violations = validate(&doc, "v2/RunContext.schema.json").unwrap();
        assert!(violations.is_empty(), "{name}: {violations:?}");
    }

    let cases = rejected_cases();
    let categories: std::collections::BTreeSet<&str> =
        cases.iter().map(|c| c.category.as_str()).collect();
    for wanted in [
        "unknown key",
        "wrong tag",
        "missing required key",
        "bad id pattern",
        "wrong enum value",
    ] {
        assert!(
            categories.contains(wanted),
            "no rejected case of category {wanted}"
        );
    }
    for case in &cases {
        let text = serde_json::to_string_pretty(&case.doc).unwrap();
        assert!(
            serde_json::from_str::<PlanRunV2>(&text).is_err(),
            "{}: serde accepts it",
            case.name
        );
        assert!(
            !validate(&case.doc, SCHEMA).unwrap().is_empty(),
            "{}: the schema accepts it",
            case.name
        );
    }

    if let Some(dir) = std::env::var_os("PLANRUN_INTEROP_DIR") {
        write_all(Path::new(&dir), &valid, &contexts, &cases);
    }
}

fn write_all(
    dir: &Path,
    valid: &[(String, String)],
    contexts: &[(String, String)],
    cases: &[Case],
) {
    for sub in ["valid", "run_context", "rejected"] {
        let sub_dir = dir.join(sub);
        if sub_dir.exists() {
            std::fs::remove_dir_all(&sub_dir).unwrap();
        }
        std::fs::create_dir_all(&sub_dir).unwrap();
    }
    for (name, text) in valid {
        std::fs::write(dir.join("valid").join(format!("{name}.json")), text).unwrap();
    }
    for (name, text) in contexts {
        std::fs::write(dir.join("run_context").join(format!("{name}.json")), text).unwrap();
    }
    let mut manifest = Vec::new();
    for case in cases {
        let text = serde_json::to_string_pretty(&case.doc).unwrap();
        std::fs::write(
            dir.join("rejected").join(format!("{}.json", case.name)),
            text,
        )
        .unwrap();
        let mut entry = Map::new();
        entry.insert("name".to_owned(), case.name.clone().into());
        entry.insert("category".to_owned(), case.category.clone().into());
        entry.insert(
            "pydantic_strict_only".to_owned(),
            case.pydantic_strict_only.into(),
        );
        manifest.push(Value::Object(entry));
    }
    std::fs::write(
        dir.join("rejected/cases.json"),
        serde_json::to_string_pretty(&manifest).unwrap(),
    )
    .unwrap();
}
