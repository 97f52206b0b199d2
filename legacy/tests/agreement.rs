//! Law 4 for the legacy formats: for every document, serde accepts it if and only if the
//! published schema does. serde's verdict is the toolkit's own reading of a file: the document's
//! JSON text through `json::parse_value`, then `json::from_tree` into the typed model. Each
//! verdict is also held to `json::from_text`'s, the lighter reader a migration uses: it must read
//! the same typed value, or fail with the same error.
//!
//! Proven over every corpus document (and the hand-made cases), every single-edit mutant of
//! them, hand-made invalid and lax documents per type, and generated documents (the shared
//! `planrun_legacy::strategies`), their lax spellings and their mutants.

use crate::common;

use std::fmt::Debug;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::OnceLock;

use common::corpus::corpus_documents;
use common::props::config as proptest_config;
use planrun_legacy::strategies::{self, PlanEra};
use planrun_legacy::{
    detect, run_prefixes, schema_file, schemas, Category, ClarificationRules, Config, EndUser,
    Output, Plan, Prefix, RunContextSnapshot, RunR1, RunR2, RunR3, RunR4, RunR5, RunR6, RunW1,
    StepOutputValue, ToolCallRecord, Version,
};
use planrun_v2::agreement::{mutants, Agreement};
use planrun_wire::json::{from_text, from_tree, parse_value, to_sdk_json};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use Version::*;

/// A published schema, compiled, with the serde model it describes.
struct Model {
    file: &'static str,
    agreement: Agreement,
    read: fn(&[u8], &Value) -> Result<(), String>,
}

fn read<T: DeserializeOwned + PartialEq + Debug>(src: &[u8], tree: &Value) -> Result<(), String> {
    let by_tree = from_tree::<T>(src, tree);
    assert_eq!(
        from_text::<T>(src),
        by_tree,
        "from_text and from_tree disagree on {}",
        String::from_utf8_lossy(src)
    );
    by_tree.map(drop).map_err(|e| e.to_string())
}

impl Model {
    fn of<T: DeserializeOwned + PartialEq + Debug>(file: &'static str) -> Self {
        let schema = schemas()
            .into_iter()
            .find(|(name, _)| *name == file)
            .unwrap_or_else(|| panic!("no schema {file}"))
            .1;
        Model {
            file,
            agreement: Agreement::new(&schema),
            read: read::<T>,
        }
    }

    /// serde's verdict, as the toolkit reads a file: JSON text → `parse_value` → `from_tree`.
    fn serde(&self, doc: &Value) -> Result<(), String> {
        let text = serde_json::to_string(doc).expect("a JSON value");
        let tree = parse_value(text.as_bytes()).map_err(|e| e.to_string())?;
        (self.read)(text.as_bytes(), &tree)
    }

    /// Asserts that serde and the schema agree on `doc` (the v2 test kit's check) and returns
    /// the common verdict.
    fn check(&self, doc: &Value) -> bool {
        let serde = self.serde(doc);
        if serde.is_ok() != self.agreement.schema_accepts(doc) {
            eprintln!("{}: serde says {serde:?}", self.file);
        }
        self.agreement.assert(doc, serde.is_ok());
        serde.is_ok()
    }

    fn accepted(&self, why: &str, doc: &Value) {
        assert!(
            self.check(doc),
            "{}: {why}: should accept: {}",
            self.file,
            self.serde(doc).unwrap_err()
        );
    }

    fn rejected(&self, why: &str, doc: &Value) {
        assert!(
            !self.check(doc),
            "{}: {why}: should reject:\n{doc:#}",
            self.file
        );
    }
}

/// Every published legacy schema with its serde model.
fn models() -> &'static [Model] {
    static MODELS: OnceLock<Vec<Model>> = OnceLock::new();
    MODELS.get_or_init(|| {
        vec![
            Model::of::<RunW1>("run.W1.schema.json"),
            Model::of::<RunR1>("run.R0.schema.json"),
            Model::of::<RunR1>("run.R1.schema.json"),
            Model::of::<RunR2>("run.R2.schema.json"),
            Model::of::<RunR3>("run.R3.schema.json"),
            Model::of::<RunR4>("run.R4.schema.json"),
            Model::of::<RunR5>("run.R5.schema.json"),
            Model::of::<RunR6>("run.R6.schema.json"),
            Model::of::<Plan>("plan.schema.json"),
            Model::of::<EndUser>("end_user.schema.json"),
            Model::of::<Output>("output.schema.json"),
            Model::of::<ToolCallRecord>("tool_call.schema.json"),
            Model::of::<Config>("config.schema.json"),
            Model::of::<StepOutputValue>("step_output_value.schema.json"),
            Model::of::<Vec<StepOutputValue>>("step_output_values.schema.json"),
            Model::of::<RunContextSnapshot>("run_context.schema.json"),
        ]
    })
}

fn model(file: &str) -> &'static Model {
    models()
        .iter()
        .find(|m| m.file == file)
        .unwrap_or_else(|| panic!("no model for {file}"))
}

fn run_model(version: Version) -> &'static Model {
    model(schema_file(planrun_legacy::DocKind::Run, version))
}

#[test]
fn every_published_schema_has_its_serde_model() {
    let published: Vec<&str> = schemas().into_iter().map(|(name, _)| name).collect();
    let tested: Vec<&str> = models().iter().map(|m| m.file).collect();
    assert_eq!(published, tested);
}

/// Every real document (and hand-made case) with the model of its detected kind and version.
fn documents() -> Vec<(String, &'static Model, Value)> {
    let mut out = Vec::new();
    for (rel, path) in corpus_documents() {
        out.push(document(rel, &path));
    }
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut names: Vec<_> = std::fs::read_dir(&cases)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for path in names {
        let rel = format!("cases/{}", path.file_name().unwrap().to_string_lossy());
        out.push(document(rel, &path));
    }
    out
}

fn document(rel: String, path: &Path) -> (String, &'static Model, Value) {
    let bytes = std::fs::read(path).unwrap();
    let detection = detect(&bytes).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let file = schema_file(detection.kind, detection.version());
    let mut doc = parse_value(&bytes).unwrap();
    // The `current_step_id` dialect is renamed before the typed model reads it (the schemas
    // describe the SDK's wire names).
    if let Some(obj) = doc.as_object_mut() {
        if let Some(index) = obj.shift_remove("current_step_id") {
            obj.insert("current_step_index".to_owned(), index);
        }
    }
    (rel, model(file), doc)
}

#[test]
fn every_real_document_is_accepted_by_its_model_and_schema() {
    let docs = documents();
    assert!(docs.len() > 360, "only {} documents", docs.len());
    let mut per_model = std::collections::BTreeMap::new();
    for (rel, model, doc) in &docs {
        model.accepted(rel, doc);
        *per_model.entry(model.file).or_insert(0) += 1;
    }
    // Every model is exercised by real data, except R1's: an R1 file has the shape of an R2 one
    // unless a clarification is "Argument" (gone before the R1 corpus's 0.1.10), so detection
    // reads it as the newest of R1–R2. Generated R1 runs cover that model.
    for file in models().iter().map(|m| m.file) {
        assert_eq!(
            per_model.contains_key(file),
            file != "run.R1.schema.json",
            "documents for {file}"
        );
    }
}

#[test]
fn every_single_edit_of_every_real_document_gets_the_same_verdict() {
    let docs = documents();
    let results: Vec<(usize, usize)> = std::thread::scope(|scope| {
        let chunks: Vec<_> = docs.chunks(docs.len().div_ceil(2)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                scope.spawn(move || {
                    let (mut checked, mut rejected) = (0, 0);
                    for (rel, model, doc) in chunk {
                        for mutant in mutants(doc) {
                            let accepted = std::panic::catch_unwind(AssertUnwindSafe(|| {
                                model.check(&mutant.doc)
                            }))
                            .unwrap_or_else(|_| {
                                panic!("{rel}: disagreement after `{}`", mutant.edit)
                            });
                            checked += 1;
                            rejected += usize::from(!accepted);
                        }
                    }
                    (checked, rejected)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let checked: usize = results.iter().map(|r| r.0).sum();
    let rejected: usize = results.iter().map(|r| r.1).sum();
    assert!(checked > 40_000, "only {checked} mutants");
    // Most edits break a document; a healthy share must not (free-form values, lax scalars).
    assert!(
        rejected > checked / 3 && rejected < checked,
        "{rejected} of {checked} rejected"
    );
}

// ---------------------------------------------------------------------------------------------
// Hand-made documents: invalid ones per type, and the lax spellings serde accepts
// ---------------------------------------------------------------------------------------------

fn corpus(rel: &str) -> Value {
    let path = common::corpus::corpus_root().join(rel);
    parse_value(&std::fs::read(&path).unwrap()).unwrap()
}

fn case(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cases")
        .join(name);
    parse_value(&std::fs::read(path).unwrap()).unwrap()
}

/// `doc` with `edit` applied.
fn edited(doc: &Value, edit: impl FnOnce(&mut Value)) -> Value {
    let mut doc = doc.clone();
    edit(&mut doc);
    doc
}

fn remove(doc: &Value, pointer: &str) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    edited(doc, |d| {
        d.pointer_mut(parent)
            .and_then(Value::as_object_mut)
            .unwrap_or_else(|| panic!("no object at {parent}"))
            .shift_remove(key)
            .unwrap_or_else(|| panic!("nothing at {pointer}"));
    })
}

fn set(doc: &Value, pointer: &str, value: Value) -> Value {
    edited(doc, |d| {
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        d.pointer_mut(parent)
            .and_then(Value::as_object_mut)
            .unwrap_or_else(|| panic!("no object at {parent}"))
            .insert(key.to_owned(), value);
    })
}

/// A run of each version with at least one clarification.
fn base_run(version: Version) -> Value {
    let mut run = match version {
        W1 => corpus("W1/workflows/run_clarifications_resolved.json"),
        R0 => case("run_R0_clarifications.json"),
        R1 => corpus("R1/plan_runs/run_clarifications_resolved.json"),
        R2 => case("run_R2_agent_memory.json"),
        R3 => corpus("R3/plan_runs/run_clarifications_resolved.json"),
        R4 => corpus("R4/plan_runs/run_clarifications_resolved.json"),
        R5 => case("run_R5_plan_run_inputs.json"),
        R6 => corpus("R6/plan_runs/run_clarifications_resolved.json"),
    };
    let run_id = run["id"].clone();
    let clarifications = run["outputs"]["clarifications"].as_array_mut().unwrap();
    if clarifications.is_empty() {
        clarifications.push(json!({
            "id": format!("clar-{UUID}"),
            "plan_run_id": run_id,
            "category": "Input",
            "response": null,
            "step": 0,
            "user_guidance": "Which city?",
            "resolved": false,
            "argument_name": "city"
        }));
    }
    run
}

const UUID: &str = "1742945e-63bf-4a2f-be54-b73e18e0a25e";

#[test]
fn invalid_runs_are_rejected_by_both_in_every_version() {
    for version in Version::ALL {
        let m = run_model(version);
        let run = base_run(version);
        m.accepted("the base document", &run);
        m.rejected("missing plan_id", &remove(&run, "/plan_id"));
        m.rejected("unknown key", &set(&run, "/colour", json!("blue")));
        m.rejected(
            "unknown key in outputs",
            &set(&run, "/outputs/colour", json!(1)),
        );
        m.rejected("wrong state", &set(&run, "/state", json!("PAUSED")));
        m.rejected(
            "state in serde's enum-map form",
            &set(&run, "/state", json!({"COMPLETE": null})),
        );
        m.rejected(
            "plan_id with a run prefix",
            &set(&run, "/plan_id", json!(format!("prun-{UUID}"))),
        );
        m.rejected(
            "run id with a clarification prefix",
            &set(&run, "/id", json!(format!("clar-{UUID}"))),
        );
        m.rejected(
            "run id with an uppercase prefix",
            &set(&run, "/id", json!(format!("PRUN-{UUID}"))),
        );
        m.rejected("null run id", &set(&run, "/id", Value::Null));
        m.rejected(
            "uuid with hyphens in odd places",
            &set(
                &run,
                "/plan_id",
                json!("plan-1742945e63bf-4a2f-be54-b73e18e0a25e"),
            ),
        );
        m.rejected(
            "id object with a second key",
            &set(&run, "/plan_id", json!({"uuid": UUID, "prefix": "plan"})),
        );
        for bad in [
            json!(1.5),
            json!("1e3"),
            json!(" 1"),
            json!(null),
            json!([]),
        ] {
            m.rejected(
                "non-integer step index",
                &set(&run, "/current_step_index", bad),
            );
        }
        m.rejected(
            "step index beyond 2^53 - 1",
            &set(
                &run,
                "/current_step_index",
                json!(9_007_199_254_740_992_i64),
            ),
        );
        m.rejected(
            "outputs as the array of its values",
            &edited(&run, |d| {
                let values: Vec<Value> = d["outputs"]
                    .as_object()
                    .unwrap()
                    .values()
                    .cloned()
                    .collect();
                d["outputs"] = Value::Array(values);
            }),
        );
        m.rejected(
            "clarification without user_guidance",
            &remove(&run, "/outputs/clarifications/0/user_guidance"),
        );
        m.rejected(
            "clarification without category",
            &remove(&run, "/outputs/clarifications/0/category"),
        );
        m.rejected(
            "unknown clarification category",
            &set(
                &run,
                "/outputs/clarifications/0/category",
                json!("Question"),
            ),
        );
        m.rejected(
            "clarification naming its run twice",
            &edited(&run, |d| {
                let clar = d["outputs"]["clarifications"][0].as_object_mut().unwrap();
                let other = if clar.contains_key("workflow_id") {
                    "plan_run_id"
                } else {
                    "workflow_id"
                };
                clar.insert(other.to_owned(), json!(format!("prun-{UUID}")));
            }),
        );
        m.rejected(
            "clarification resolved \"maybe\"",
            &set(&run, "/outputs/clarifications/0/resolved", json!("maybe")),
        );
        m.rejected(
            "Input clarification with a numeric argument_name",
            &edited(&run, |d| {
                let clar = &mut d["outputs"]["clarifications"][0];
                clar["category"] = json!("Input");
                clar["argument_name"] = json!(5);
            }),
        );
        m.rejected(
            "Custom clarification whose data is a list",
            &edited(&run, |d| {
                let clar = &mut d["outputs"]["clarifications"][0];
                clar["category"] = json!("Custom");
                clar["name"] = json!("x");
                clar["data"] = json!([1]);
            }),
        );
        // The lax spellings pydantic reads are accepted by both.
        for lax in [
            json!("2"),
            json!("-002.000"),
            json!(2.0),
            json!(2e0),
            json!(true),
            json!(-1),
        ] {
            m.accepted("a lax step index", &set(&run, "/current_step_index", lax));
        }
        for spelling in [
            format!("plan-{}", UUID.to_uppercase()),
            format!("plan-{}", UUID.replace('-', "")),
            format!("plan-{{{UUID}}}"),
            format!("plan-urn:uuid:{UUID}"),
        ] {
            m.accepted("a lax plan id", &set(&run, "/plan_id", json!(spelling)));
        }
        m.accepted(
            "an id object",
            &set(&run, "/plan_id", json!({ "uuid": UUID })),
        );
        m.accepted("no run id", &remove(&run, "/id"));
        m.accepted(
            "resolved as \"Yes\"",
            &set(&run, "/outputs/clarifications/0/resolved", json!("Yes")),
        );
        m.accepted(
            "an unknown clarification key (kept)",
            &set(&run, "/outputs/clarifications/0/colour", json!("blue")),
        );
        m.accepted(
            "an Input's key on a Custom clarification (kept as an unknown key)",
            &edited(&run, |d| {
                let clar = &mut d["outputs"]["clarifications"][0];
                clar["category"] = json!("Custom");
                clar["name"] = json!("x");
                clar["argument_name"] = json!(5);
            }),
        );
        // The keys of other versions are unknown keys.
        if version >= R4 {
            m.rejected("missing end_user_id", &remove(&run, "/end_user_id"));
        } else {
            m.rejected(
                "a top-level end_user_id before R4",
                &set(&run, "/end_user_id", json!("local")),
            );
        }
        if version == R6 {
            m.rejected(
                "an execution context in R6",
                &set(&run, "/execution_context", json!({})),
            );
        } else {
            m.rejected(
                "a null execution context",
                &set(&run, "/execution_context", Value::Null),
            );
        }
        if version < R5 {
            m.rejected(
                "plan_run_inputs before R5",
                &set(&run, "/plan_run_inputs", json!({})),
            );
        }
    }
}

/// Each version's SDK has its own clarification categories and run reference, and a run is
/// judged by the rules of the version it is read as. Pins: `ClarificationCategory` has
/// "Argument" until the 0.1.0 release (0.1.2-alpha loads one, 0.1.10 and v0.1.12 refuse it) and
/// "User Verification" from v0.4.0; `Clarification.plan_run_id` (`workflow_id` in W1) is
/// required and not `null` until v0.7.0 (v0.6.2 refuses a clarification without it, v0.7.0
/// loads one without it or with `null`).
#[test]
fn clarifications_follow_the_rules_of_their_version() {
    for version in Version::ALL {
        let m = run_model(version);
        let run = base_run(version);
        let rules = ClarificationRules::of(version);
        for category in Category::ALL {
            let doc = edited(&run, |d| {
                let clar = &mut d["outputs"]["clarifications"][0];
                clar["category"] = json!(category.as_str());
                if category == Category::Action {
                    clar["action_url"] = json!("https://example.com/");
                }
            });
            let has = rules.categories().any(|c| c == category);
            assert_eq!(m.check(&doc), has, "{version}: {}", category.as_str());
            if !has {
                let err = m.serde(&doc).unwrap_err();
                assert!(
                    err.contains("/outputs/clarifications/0/category")
                        && err.contains("is not a clarification category of"),
                    "{version}: {err}"
                );
            }
        }
        // Pins the SDK's typed run ids (WorkflowUUID in W1, PlanRunUUID after), which check the
        // prefix: "Prefix pr does not match expected prefix prun" at v0.1.12, v0.2.0 and v0.3.0.
        // R0 and R1 share one struct, so each takes the other's prefix.
        let key = rules.run_ref.as_str();
        let pointer = format!("/outputs/clarifications/0/{key}");
        for prefix in [Prefix::Wkfl, Prefix::Pr, Prefix::Prun] {
            let other = json!(format!("{}-{UUID}", prefix.as_str()));
            let reads = run_prefixes(version).contains(&prefix);
            assert_eq!(
                m.check(&set(&run, "/id", other.clone())),
                reads,
                "{version}: run id {other}"
            );
            assert_eq!(
                m.check(&set(&run, &pointer, other.clone())),
                reads,
                "{version}: {key} {other}"
            );
        }
        let optional = version == R6;
        assert_eq!(rules.run_ref_optional, optional);
        assert_eq!(
            m.check(&remove(&run, &pointer)),
            optional,
            "{version}: no {key}"
        );
        assert_eq!(
            m.check(&set(&run, &pointer, Value::Null)),
            optional,
            "{version}: {key} null"
        );
        m.rejected(
            "the run named by another version's key",
            &edited(&run, |d| {
                let clar = d["outputs"]["clarifications"][0].as_object_mut().unwrap();
                let id = clar.shift_remove(key).unwrap();
                let other = if key == "workflow_id" {
                    "plan_run_id"
                } else {
                    "workflow_id"
                };
                clar.insert(other.to_owned(), id);
            }),
        );
    }
    // R0 is read with R1's struct, so the two versions' rules must not differ.
    let (r0, r1) = (ClarificationRules::of(R0), ClarificationRules::of(R1));
    assert_eq!(
        (r0.run_ref, r0.run_ref_optional),
        (r1.run_ref, r1.run_ref_optional)
    );
    assert!(r0.categories().eq(r1.categories()));
}

/// A JSON value from its literal text (numbers keep their digits).
fn lit(text: &str) -> Value {
    parse_value(text.as_bytes()).unwrap()
}

#[test]
fn lax_scalars_agree_at_their_boundaries() {
    let m = run_model(R6);
    let run = base_run(R6);
    let index = |v: Value| set(&run, "/current_step_index", v);
    for text in [
        r#""999999999999999""#,
        r#""-999999999999999""#,
        r#""+0000000000000000000001""#,
        r#""1.000""#,
        "9007199254740991",
        "-9007199254740991",
        "9007199254740991.0",
        "9.007199254740991e15",
        "-0.0",
        "0e400",
        "false",
    ] {
        m.accepted(text, &index(lit(text)));
    }
    for text in [
        r#""1000000000000000""#,
        r#""1.""#,
        r#""1.01""#,
        r#"".5""#,
        r#""0x1""#,
        r#""1_0""#,
        r#""+-1""#,
        r#""1e3""#,
        r#"" 1""#,
        r#""""#,
        "9007199254740992",
        "-9007199254740992",
        "9.007199254740992e15",
        "9223372036854775807",
        "9223372036854775807.0",
        "1e400",
        "1.00000000000000000001",
        "{}",
    ] {
        m.rejected(text, &index(lit(text)));
    }
    let resolved = |v: Value| set(&run, "/outputs/clarifications/0/resolved", v);
    for text in [
        "1.0", "0e5", "-0.0", "1", r#""OFF""#, r#""yEs""#, r#""0""#, r#""T""#, "true",
    ] {
        m.accepted(text, &resolved(lit(text)));
    }
    for text in [
        "2",
        "0.5",
        "-1",
        "1.0000000000000000000001",
        r#""""#,
        r#""yess""#,
        r#"" yes""#,
        r#""1.0""#,
        r#""tru""#,
        "null",
        "[]",
    ] {
        m.rejected(text, &resolved(lit(text)));
    }
    let id = |v: Value| set(&run, "/id", v);
    for spelling in [
        format!("prun-{UUID}"),
        format!("prun-{}", UUID.to_uppercase()),
        format!("prun-{}", UUID.replace('-', "").to_uppercase()),
        format!("prun-{{{UUID}}}"),
        format!("prun-urn:uuid:{UUID}"),
        format!("prun-urn:uuid:{{{}}}", UUID.replace('-', "")),
    ] {
        m.accepted(&spelling, &id(json!(spelling)));
    }
    // Another version's run prefix: the SDK's PlanRunUUID says "Prefix pr does not match
    // expected prefix prun" (v0.9.0).
    for spelling in [
        format!("pr-{UUID}"),
        format!("wkfl-{UUID}"),
        format!("prun-{}", &UUID[1..]),
        format!("prun-{UUID}0"),
        format!("prun-{}", UUID.replacen('-', "", 1)),
        format!("prun--{UUID}"),
        format!("prun-{{{UUID}"),
        format!("prun-{UUID}}}"),
        format!("prun-uuid:{UUID}"),
        format!("prun-URN:UUID:{UUID}"),
        format!("prun-{{urn:uuid:{UUID}}}"),
        format!("prun-{UUID} "),
        format!("prun-{}", UUID.replace('e', "g")),
        format!("plan-{UUID}"),
        format!("Prun-{UUID}"),
        UUID.to_owned(),
    ] {
        m.rejected(&spelling, &id(json!(spelling)));
    }
    m.accepted("an id object", &id(json!({"uuid": UUID.to_uppercase()})));
    m.rejected(
        "an id object with a prefix",
        &id(json!({"uuid": format!("prun-{UUID}")})),
    );
    m.rejected("an empty id object", &id(json!({})));
    m.rejected("an id object with a number", &id(json!({"uuid": 5})));
}

#[test]
fn outputs_follow_their_era() {
    let memory =
        json!({"output_name": "$r", "plan_run_id": format!("prun-{UUID}"), "summary": "s"});
    for version in Version::ALL {
        let m = run_model(version);
        let run = set(&base_run(version), "/outputs/final_output", memory.clone());
        if version >= R2 {
            m.accepted("an agent-memory final output", &run);
        } else {
            m.rejected("an agent-memory output before R2", &run);
        }
    }
    let o = model("output.schema.json");
    o.accepted("an empty LocalDataValue", &json!({}));
    o.accepted(
        "a native value (stringified on output)",
        &json!({"value": [1, {"k": 2.5}], "summary": null}),
    );
    o.accepted("an agent-memory value", &memory);
    o.accepted(
        "an agent-memory value owned by an id object",
        &set(&memory, "/plan_run_id", json!({ "uuid": UUID })),
    );
    o.rejected("unknown key", &json!({"value": "x", "colour": "blue"}));
    o.rejected("both shapes at once", &set(&memory, "/value", json!("x")));
    o.rejected("memory without summary", &remove(&memory, "/summary"));
    o.rejected(
        "memory with a null summary",
        &set(&memory, "/summary", Value::Null),
    );
    o.rejected("memory without name", &remove(&memory, "/output_name"));
    o.rejected(
        "memory owned by a W1 run",
        &set(&memory, "/plan_run_id", json!(format!("wkfl-{UUID}"))),
    );
    o.rejected(
        "memory owned by an R0 run",
        &set(&memory, "/plan_run_id", json!(format!("pr-{UUID}"))),
    );
    o.rejected("a numeric summary", &json!({"value": "x", "summary": 5}));
    o.rejected("an array", &json!(["x", null]));
}

#[test]
fn invalid_plans_are_rejected_by_both() {
    let m = model("plan.schema.json");
    let plan = corpus("R6/plans/plan_with_plan_inputs.json");
    let old = corpus("W1/plans/plan_variable_constant_values.json");
    m.accepted("a HEAD plan", &plan);
    m.accepted("an alpha plan", &old);
    m.accepted("a v0.3.2 plan", &case("plan_v032_inputs.json"));
    m.rejected("missing steps", &remove(&plan, "/steps"));
    m.rejected("missing plan_context", &remove(&plan, "/plan_context"));
    m.rejected("unknown key", &set(&plan, "/colour", json!(1)));
    m.rejected(
        "unknown plan_context key",
        &set(&plan, "/plan_context/colour", json!(1)),
    );
    m.rejected(
        "tool_ids not a list",
        &set(&plan, "/plan_context/tool_ids", json!("llm_tool")),
    );
    m.rejected("step without task", &remove(&plan, "/steps/0/task"));
    m.rejected("step without output", &remove(&plan, "/steps/0/output"));
    m.rejected(
        "a structured_output_schema on a step",
        &set(&plan, "/steps/0/structured_output_schema", json!({})),
    );
    m.rejected(
        "variable without name",
        &remove(&plan, "/steps/0/inputs/0/name"),
    );
    m.rejected(
        "plan id with a run prefix",
        &set(&plan, "/id", json!(format!("prun-{UUID}"))),
    );
    m.rejected("null plan_inputs", &set(&plan, "/plan_inputs", Value::Null));
    m.rejected(
        "plan input without a name",
        &remove(&plan, "/plan_inputs/0/name"),
    );
    m.rejected(
        "v0.3.2 input without description",
        &set(&plan, "/inputs", json!([{"name": "$x"}])),
    );
    m.rejected(
        "a step as the array of its values",
        &edited(&plan, |d| {
            let values: Vec<Value> = d["steps"][0]
                .as_object()
                .unwrap()
                .values()
                .cloned()
                .collect();
            d["steps"][0] = Value::Array(values);
        }),
    );
    m.accepted(
        "an unknown step key (kept)",
        &set(&plan, "/steps/0/priority", json!(1)),
    );
    m.accepted(
        "an unknown variable key (ignored)",
        &set(&plan, "/steps/0/inputs/0/colour", json!(1)),
    );
    m.accepted("no plan id", &remove(&plan, "/id"));
    m.accepted(
        "a variable without description (v0.7.0+)",
        &remove(&plan, "/steps/0/inputs/0/description"),
    );
}

#[test]
fn invalid_end_users_tool_calls_and_step_outputs_are_rejected_by_both() {
    let m = model("end_user.schema.json");
    let user = corpus("R6/end_users/end_user_full.json");
    m.accepted("a full end user", &user);
    m.rejected("missing external_id", &remove(&user, "/external_id"));
    m.rejected("null name", &set(&user, "/name", Value::Null));
    m.rejected(
        "a numeric additional_data value",
        &set(&user, "/additional_data/n", json!(5)),
    );
    m.accepted("an unknown key (ignored)", &set(&user, "/colour", json!(1)));

    let m = model("tool_call.schema.json");
    let call = corpus("R6/tool_calls/tool_call_SUCCESS.json");
    let w1 = corpus("W1/tool_calls/tool_call_SUCCESS.json");
    m.accepted("an R6 tool call", &call);
    m.accepted("a W1 tool call", &w1);
    m.rejected("missing status", &remove(&call, "/status"));
    m.rejected("missing step", &remove(&call, "/step"));
    m.rejected("missing input", &remove(&call, "/input"));
    m.rejected("unknown key", &set(&call, "/colour", json!(1)));
    m.rejected("wrong status", &set(&call, "/status", json!("DONE")));
    m.rejected(
        "run id with a plan prefix",
        &set(&call, "/plan_run_id", json!(format!("plan-{UUID}"))),
    );
    m.rejected(
        "null additional_data",
        &set(&call, "/additional_data", Value::Null),
    );
    m.rejected(
        "latency as text",
        &set(&call, "/latency_seconds", json!("0.5")),
    );
    m.rejected("step as a word", &set(&call, "/step", json!("one")));
    m.accepted("step as text", &set(&call, "/step", json!("3")));
    m.accepted("no end_user_id", &remove(&call, "/end_user_id"));

    let m = model("step_output_value.schema.json");
    let value = corpus("R6/run_context/step_output_value_0.json");
    m.accepted("a step output value", &value);
    m.rejected("missing value", &remove(&value, "/value"));
    m.rejected("missing step_name", &remove(&value, "/step_name"));
    m.rejected("fractional step_num", &set(&value, "/step_num", json!(1.5)));
    m.accepted("a null value", &set(&value, "/value", Value::Null));
    m.accepted("no description", &remove(&value, "/description"));
    m.accepted(
        "an unknown key (ignored)",
        &set(&value, "/colour", json!(1)),
    );

    let m = model("step_output_values.schema.json");
    m.accepted(
        "the corpus list",
        &corpus("R6/run_context/step_output_values_list.json"),
    );
    m.accepted("an empty list", &json!([]));
    m.rejected("an object", &value);
    m.rejected("an entry without value", &json!([remove(&value, "/value")]));
}

#[test]
fn invalid_configs_and_snapshots_are_rejected_by_both() {
    let m = model("config.schema.json");
    let config = corpus("R6/config/config_model_dump_json.json");
    m.accepted("the SDK's dump", &config);
    m.accepted("an empty config", &json!({}));
    m.accepted(
        "an unknown key (ignored)",
        &set(&config, "/colour", json!(1)),
    );
    m.accepted(
        "lax booleans and integers",
        &json!({"json_log_serialize": "yes", "argument_clarifications_enabled": 0,
                "feature_flags": {"x": "off"}, "large_output_threshold_tokens": "2000"}),
    );
    m.accepted("a null portia_api_key", &json!({"portia_api_key": null}));
    m.rejected("a null endpoint", &json!({"portia_api_endpoint": null}));
    m.rejected("a null secret", &json!({"openai_api_key": null}));
    m.rejected(
        "a word for a boolean",
        &json!({"json_log_serialize": "maybe"}),
    );
    m.rejected(
        "a fractional threshold",
        &json!({"large_output_threshold_tokens": 1.5}),
    );
    m.rejected(
        "a feature flag word",
        &json!({"feature_flags": {"x": "perhaps"}}),
    );
    m.rejected("models as a list", &json!({"models": []}));
    m.rejected("a numeric storage_dir", &json!({"storage_dir": 5}));
    m.rejected("an array", &json!([]));

    let m = model("run_context.schema.json");
    let snapshot = case("run_context_snapshot.json");
    m.accepted("the hand-made snapshot", &snapshot);
    m.rejected("missing config", &remove(&snapshot, "/config"));
    m.rejected("unknown key", &set(&snapshot, "/plan", json!({})));
    m.rejected(
        "an R5 run inside",
        &set(&snapshot, "/plan_run/execution_context", json!({})),
    );
    m.accepted(
        "no step output values",
        &remove(&snapshot, "/step_output_values"),
    );
}

// ---------------------------------------------------------------------------------------------
// Generated documents
// ---------------------------------------------------------------------------------------------

/// The document as the toolkit writes it, read back as a tree (numbers keep their text).
fn tree<T: Serialize>(typed: &T) -> Value {
    parse_value(to_sdk_json(typed).as_bytes()).expect("the toolkit writes JSON")
}

const LAX_INTS: &[&str] = &[
    "current_step_index",
    "step",
    "step_num",
    "large_output_threshold_tokens",
];
const LAX_BOOLS: &[&str] = &[
    "resolved",
    "argument_clarifications_enabled",
    "json_log_serialize",
];
const IDS: &[&str] = &["id", "plan_id", "plan_run_id", "workflow_id"];

/// `doc` with the lax-read scalars (integers, booleans, ids) respelled, each in the way `seed`
/// picks: the spellings pydantic also reads, which serde and the schema must both accept.
fn loosen(doc: &Value, seed: &mut u64) -> Value {
    let mut next = || {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (*seed >> 33) as usize
    };
    fn walk(value: &mut Value, key: Option<&str>, next: &mut dyn FnMut() -> usize) {
        match value {
            Value::Object(map) => {
                let flags = key == Some("feature_flags");
                for (k, v) in map.iter_mut() {
                    if flags {
                        walk(v, Some("resolved"), next);
                    } else {
                        walk(v, Some(k), next);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, None, next)),
            Value::Number(n) if key.is_some_and(|k| LAX_INTS.contains(&k)) => {
                if let Some(i) = n.as_i64().filter(|i| i.abs() < 1_000_000_000_000_000) {
                    let spellings = [
                        json!(i.to_string()),
                        json!(format!("{i}.0")),
                        serde_json::from_str(&format!("{i}.0")).unwrap(),
                        serde_json::from_str(&format!("{i}e0")).unwrap(),
                    ];
                    *value = spellings[next() % spellings.len()].clone();
                    if (0..=1).contains(&i) && next() % 3 == 0 {
                        *value = json!(i == 1);
                    }
                }
            }
            Value::Bool(b) if key.is_some_and(|k| LAX_BOOLS.contains(&k)) => {
                let b = *b;
                let spellings = [
                    json!(if b { "yes" } else { "no" }),
                    json!(if b { "TRUE" } else { "Off" }),
                    json!(i32::from(b)),
                    json!(if b { "t" } else { "F" }),
                ];
                *value = spellings[next() % spellings.len()].clone();
            }
            Value::String(s) if key.is_some_and(|k| IDS.contains(&k)) => {
                if let Some((prefix, uuid)) = s.split_once('-') {
                    if uuid.len() == 36 {
                        let spellings = [
                            format!("{prefix}-{}", uuid.to_uppercase()),
                            format!("{prefix}-{}", uuid.replace('-', "")),
                            format!("{prefix}-{{{uuid}}}"),
                            format!("{prefix}-urn:uuid:{uuid}"),
                        ];
                        *value = json!(spellings[next() % spellings.len()]);
                    }
                }
            }
            _ => {}
        }
    }
    let mut doc = doc.clone();
    walk(&mut doc, None, &mut next);
    doc
}

/// Checks a generated document: accepted by both as written, in lax spellings, and agreed on
/// after one edit.
fn check_generated(model: &Model, doc: &Value, seed: u64, pick: prop::sample::Index) {
    model.accepted("a generated document", doc);
    let mut seed = seed;
    model.accepted(
        "a generated document in lax spellings",
        &loosen(doc, &mut seed),
    );
    let all = mutants(doc);
    let mutant = &all[pick.index(all.len())];
    std::panic::catch_unwind(AssertUnwindSafe(|| model.check(&mutant.doc)))
        .unwrap_or_else(|_| panic!("{}: disagreement after `{}`", model.file, mutant.edit));
}

macro_rules! generated_laws {
    ($($name:ident: $strategy:expr => $file:expr,)*) => {
        proptest! {
            #![proptest_config(proptest_config())]
            $(
                #[test]
                fn $name(typed in $strategy, seed in any::<u64>(), pick in any::<prop::sample::Index>()) {
                    check_generated(model($file), &tree(&typed), seed, pick);
                }
            )*
        }
    };
}

generated_laws! {
    generated_w1_runs_agree: strategies::run(W1) => "run.W1.schema.json",
    generated_r0_runs_agree: strategies::run(R0) => "run.R0.schema.json",
    generated_r1_runs_agree: strategies::run(R1) => "run.R1.schema.json",
    generated_r2_runs_agree: strategies::run(R2) => "run.R2.schema.json",
    generated_r3_runs_agree: strategies::run(R3) => "run.R3.schema.json",
    generated_r4_runs_agree: strategies::run(R4) => "run.R4.schema.json",
    generated_r5_runs_agree: strategies::run(R5) => "run.R5.schema.json",
    generated_r6_runs_agree: strategies::run(R6) => "run.R6.schema.json",
    generated_alpha_plans_agree: strategies::plan(PlanEra::Alpha) => "plan.schema.json",
    generated_v018_plans_agree: strategies::plan(PlanEra::V018) => "plan.schema.json",
    generated_v032_plans_agree: strategies::plan(PlanEra::V032) => "plan.schema.json",
    generated_v034_plans_agree: strategies::plan(PlanEra::V034) => "plan.schema.json",
    generated_end_users_agree: strategies::end_user(R6) => "end_user.schema.json",
    generated_outputs_agree: strategies::output(strategies::run_id(R6, 7)) => "output.schema.json",
    generated_w1_tool_calls_agree: strategies::tool_call(W1) => "tool_call.schema.json",
    generated_r6_tool_calls_agree: strategies::tool_call(R6) => "tool_call.schema.json",
    generated_configs_agree: strategies::config() => "config.schema.json",
    generated_step_output_values_agree: strategies::step_output_value() => "step_output_value.schema.json",
    generated_step_output_value_lists_agree: proptest::collection::vec(strategies::step_output_value(), 0..4) => "step_output_values.schema.json",
    generated_run_context_snapshots_agree: strategies::run_context_snapshot() => "run_context.schema.json",
}

proptest! {
    #![proptest_config(proptest_config())]

    /// Arbitrary JSON (mostly not a document at all) gets the same verdict from every model.
    #[test]
    fn arbitrary_json_gets_the_same_verdict_from_every_model(doc in strategies::json()) {
        for model in models() {
            model.check(&doc);
        }
    }
}
