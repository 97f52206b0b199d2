//! Law 4: for every document, serde accepts it if and only if the published schema does.

use crate::common;

use common::{at, corpus, each, fixture_run, fixture_run_context, schema};
use planrun_v2::agreement::{assert_agreement, assert_agreement_for, mutants, Agreement};
use planrun_v2::strategies;
use planrun_v2::{
    Clarification, Config, EndUser, Output, PlanRunV2, PlanV2, RunContext, StepOutputValue, StepV2,
};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use std::panic::AssertUnwindSafe;

/// A published schema, compiled, with the serde type it describes.
struct Typed {
    file: &'static str,
    agreement: Agreement,
    check: fn(&Agreement, &Value) -> bool,
}

impl Typed {
    fn of<T: DeserializeOwned>(file: &'static str) -> Self {
        Typed {
            file,
            agreement: Agreement::new(&schema(file)),
            check: |agreement, doc| agreement.assert_for::<T>(doc),
        }
    }

    /// Asserts agreement and returns the common verdict.
    fn check(&self, doc: &Value) -> bool {
        (self.check)(&self.agreement, doc)
    }

    fn accepted(&self, doc: &Value) {
        assert!(self.check(doc), "{} should accept:\n{doc:#}", self.file);
    }

    fn rejected(&self, why: &str, doc: &Value) {
        assert!(
            !self.check(doc),
            "{}: {why}: should reject:\n{doc:#}",
            self.file
        );
    }
}

fn plan_run() -> Typed {
    Typed::of::<PlanRunV2>("PlanRunV2.schema.json")
}
fn plan() -> Typed {
    Typed::of::<PlanV2>("PlanV2.schema.json")
}
fn step() -> Typed {
    Typed::of::<StepV2>("StepV2.schema.json")
}
fn step_output_value() -> Typed {
    Typed::of::<StepOutputValue>("StepOutputValue.schema.json")
}
fn output() -> Typed {
    Typed::of::<Output>("Output.schema.json")
}
fn end_user() -> Typed {
    Typed::of::<EndUser>("EndUser.schema.json")
}
fn config() -> Typed {
    Typed::of::<Config>("Config.schema.json")
}
fn clarification() -> Typed {
    Typed::of::<Clarification>("Clarification.schema.json")
}
fn run_context() -> Typed {
    Typed::of::<RunContext>("RunContext.schema.json")
}

/// `doc` with `edit` applied.
fn edited(doc: &Value, edit: impl FnOnce(&mut Value)) -> Value {
    let mut doc = doc.clone();
    edit(&mut doc);
    doc
}

fn object<'a>(doc: &'a mut Value, pointer: &str) -> &'a mut serde_json::Map<String, Value> {
    doc.pointer_mut(pointer)
        .and_then(Value::as_object_mut)
        .unwrap_or_else(|| panic!("no object at {pointer}"))
}

/// The hand-made valid documents, by schema.
fn hand_made() -> Vec<(Typed, Vec<Value>)> {
    let run = fixture_run();
    let run_without_legacy = edited(&run, |d| {
        object(d, "").shift_remove("legacy");
    });
    let finished = edited(&run_without_legacy, |d| {
        d["state"] = json!("COMPLETE");
        d["final_output"] =
            json!({"kind": "local", "value": "{\"summary\": \"ok\"}", "summary": "done"});
    });
    let sdk_defaults = serde_json::to_value(Config::sdk_defaults()).unwrap();
    let context = fixture_run_context();
    vec![
        (plan_run(), vec![run.clone(), run_without_legacy, finished]),
        (
            plan(),
            vec![at(&run, "/plan"), at(&run, "/plan/steps/11/plan")],
        ),
        (step(), each(&run, "/plan/steps")),
        (step_output_value(), each(&run, "/step_output_values")),
        (
            output(),
            each(&run, "/step_output_values")
                .iter()
                .map(|s| s["output"].clone())
                .chain([json!({"kind": "local", "value": null, "summary": null})])
                .collect(),
        ),
        (
            end_user(),
            vec![
                at(&run, "/end_user"),
                corpus("R6/end_users/end_user_full.json"),
                corpus("R6/end_users/end_user_minimal.json"),
                corpus("R6/end_users/end_user_unicode_null_additional.json"),
            ],
        ),
        (
            config(),
            vec![
                at(&run, "/config"),
                sdk_defaults,
                corpus("R6/config/config_defaults_anthropic.json"),
                corpus("R6/config/config_model_dump_json.json"),
                corpus("R6/config/config_model_dump_python_json_mode.json"),
            ],
        ),
        (clarification(), each(&run, "/clarifications")),
        (
            run_context(),
            vec![
                context.clone(),
                edited(&context, |d| d["storage"] = json!({"kind": "memory"})),
                edited(&context, |d| {
                    d["storage"] = json!({"kind": "cloud", "endpoint": null});
                }),
            ],
        ),
    ]
}

#[test]
fn hand_made_valid_documents_are_accepted_by_serde_and_schema() {
    let mut count = 0;
    for (typed, docs) in hand_made() {
        for doc in &docs {
            typed.accepted(doc);
            count += 1;
        }
    }
    assert!(count >= 40, "only {count} hand-made documents");
}

#[test]
fn every_single_edit_of_the_hand_made_documents_gets_the_same_verdict() {
    let mut checked = 0;
    let mut rejected = 0;
    for (typed, docs) in hand_made() {
        for doc in &docs {
            for mutant in mutants(doc) {
                let accepted =
                    std::panic::catch_unwind(AssertUnwindSafe(|| typed.check(&mutant.doc)))
                        .unwrap_or_else(|_| {
                            panic!("{}: disagreement after `{}`", typed.file, mutant.edit)
                        });
                checked += 1;
                rejected += usize::from(!accepted);
            }
        }
    }
    // Most edits break a document; a healthy share must not (free-form values, nullable fields).
    assert!(checked > 10_000, "only {checked} mutants");
    assert!(
        rejected > checked / 2 && rejected < checked,
        "{rejected} of {checked} rejected"
    );
}

#[test]
fn plan_run_invalid_documents_are_rejected_by_both() {
    let t = plan_run();
    let run = fixture_run();
    t.rejected(
        "missing clarifications",
        &edited(&run, |d| {
            object(d, "").shift_remove("clarifications");
        }),
    );
    t.rejected(
        "missing nullable final_output",
        &edited(&run, |d| {
            object(d, "").shift_remove("final_output");
        }),
    );
    t.rejected(
        "unknown key",
        &edited(&run, |d| d["plan_id"] = at(&run, "/plan/id")),
    );
    t.rejected(
        "wrong state",
        &edited(&run, |d| d["state"] = json!("RUNNING")),
    );
    t.rejected(
        "wrong step tag",
        &edited(&run, |d| d["plan"]["steps"][0]["type"] = json!("tool_call")),
    );
    t.rejected(
        "R0 run id prefix",
        &edited(&run, |d| {
            d["id"] = json!("pr-0609767c-dbb5-4157-8400-faf98abf4451");
        }),
    );
    t.rejected(
        "uppercase uuid",
        &edited(&run, |d| {
            d["id"] = json!("prun-0609767C-DBB5-4157-8400-FAF98ABF4451");
        }),
    );
    t.rejected(
        "fractional step index",
        &edited(&run, |d| d["current_step_index"] = json!(1.5)),
    );
    t.rejected(
        "step index as text",
        &edited(&run, |d| d["current_step_index"] = json!("1")),
    );
    t.rejected(
        "unknown key in legacy",
        &edited(&run, |d| d["legacy"]["note"] = json!("x")),
    );
}

#[test]
fn plan_invalid_documents_are_rejected_by_both() {
    let t = plan();
    let doc = at(&fixture_run(), "/plan");
    t.rejected(
        "missing tool_ids",
        &edited(&doc, |d| {
            object(d, "").shift_remove("tool_ids");
        }),
    );
    t.rejected(
        "unknown key",
        &edited(&doc, |d| d["query"] = json!("Book a flight")),
    );
    t.rejected(
        "wrong clause type",
        &edited(&doc, |d| d["steps"][2]["block_clause_type"] = json!("ELSE")),
    );
    t.rejected(
        "Rust-cased tag",
        &edited(&doc, |d| d["steps"][0]["type"] = json!("InvokeTool")),
    );
    t.rejected("bad id", &edited(&doc, |d| d["id"] = json!("plan-xyz")));
    t.rejected(
        "schema not an object",
        &edited(&doc, |d| d["final_output_schema"] = json!(true)),
    );
}

#[test]
fn step_invalid_documents_are_rejected_by_both() {
    let t = step();
    let steps = each(&fixture_run(), "/plan/steps");
    t.rejected(
        "missing step_name",
        &edited(&steps[1], |d| {
            object(d, "").shift_remove("step_name");
        }),
    );
    t.rejected(
        "missing nullable block",
        &edited(&steps[1], |d| {
            object(d, "").shift_remove("conditional_block");
        }),
    );
    t.rejected(
        "missing tag",
        &edited(&steps[1], |d| {
            object(d, "").shift_remove("type");
        }),
    );
    t.rejected(
        "legacy key on an llm step",
        &edited(&steps[1], |d| d["output"] = json!("$x")),
    );
    t.rejected(
        "another variant's field",
        &edited(&steps[1], |d| d["tool"] = json!("llm_tool")),
    );
    t.rejected(
        "wrong loop type",
        &edited(&steps[7], |d| d["loop_type"] = json!("UNTIL")),
    );
    t.rejected(
        "wrong step tag",
        &edited(&steps[1], |d| d["type"] = json!("llm_step")),
    );
    t.rejected(
        "wrong argument tag",
        &edited(&steps[0], |d| {
            d["args"]["limit"] = json!({"kind": "reference", "value": 5});
        }),
    );
    t.rejected(
        "step ref with index and name",
        &edited(&steps[1], |d| {
            d["inputs"][0]["step"] = json!({"by": "index", "index": 0, "name": "search"});
        }),
    );
    t.rejected(
        "untagged step ref",
        &edited(&steps[1], |d| d["inputs"][0]["step"] = json!(0)),
    );
    t.rejected(
        "limit as text",
        &edited(&steps[6], |d| d["tool_call_limit"] = json!("25")),
    );
    t.rejected(
        "unknown key in a nested plan",
        &edited(&steps[11], |d| d["plan"]["query"] = json!("q")),
    );
    t.rejected(
        "unknown key in a block",
        &edited(&steps[3], |d| {
            d["conditional_block"]["parent_conditional_block"]["depth"] = json!(1);
        }),
    );
}

#[test]
fn output_invalid_documents_are_rejected_by_both() {
    let t = output();
    let outputs: Vec<Value> = each(&fixture_run(), "/step_output_values")
        .iter()
        .map(|s| s["output"].clone())
        .collect();
    t.rejected(
        "missing nullable summary",
        &edited(&outputs[0], |d| {
            object(d, "").shift_remove("summary");
        }),
    );
    t.rejected(
        "missing tag",
        &edited(&outputs[0], |d| {
            object(d, "").shift_remove("kind");
        }),
    );
    t.rejected(
        "agent-memory key on a local value",
        &edited(&outputs[0], |d| d["output_name"] = json!("$x")),
    );
    t.rejected(
        "capitalised tag",
        &edited(&outputs[0], |d| d["kind"] = json!("Local")),
    );
    t.rejected(
        "null agent-memory summary",
        &edited(&outputs[2], |d| d["summary"] = json!(null)),
    );
    t.rejected(
        "R0 run id",
        &edited(&outputs[2], |d| {
            d["plan_run_id"] = json!("pr-0609767c-dbb5-4157-8400-faf98abf4451");
        }),
    );
    t.rejected(
        "legacy untagged local value",
        &json!({"value": "42", "summary": null}),
    );
}

#[test]
fn step_output_value_invalid_documents_are_rejected_by_both() {
    let t = step_output_value();
    let doc = at(&fixture_run(), "/step_output_values/0");
    t.rejected(
        "missing nullable step_num",
        &edited(&doc, |d| {
            object(d, "").shift_remove("step_num");
        }),
    );
    t.rejected(
        "unknown key",
        &edited(&doc, |d| d["value"] = json!("3 flights")),
    );
    t.rejected(
        "wrong output tag",
        &edited(&doc, |d| d["output"]["kind"] = json!("remote")),
    );
    t.rejected(
        "negative zero point five",
        &edited(&doc, |d| d["step_num"] = json!(-0.5)),
    );
}

#[test]
fn end_user_invalid_documents_are_rejected_by_both() {
    let t = end_user();
    let doc = corpus("R6/end_users/end_user_full.json");
    t.rejected(
        "missing email",
        &edited(&doc, |d| {
            object(d, "").shift_remove("email");
        }),
    );
    t.rejected(
        "unknown key",
        &edited(&doc, |d| d["id"] = json!("user-123")),
    );
    t.rejected(
        "non-string additional data",
        &edited(&doc, |d| d["additional_data"]["n"] = json!(5)),
    );
}

#[test]
fn config_invalid_documents_are_rejected_by_both() {
    let t = config();
    let doc = corpus("R6/config/config_model_dump_json.json");
    t.rejected(
        "missing threshold",
        &edited(&doc, |d| {
            object(d, "").shift_remove("large_output_threshold_tokens");
        }),
    );
    t.rejected(
        "missing nullable api key",
        &edited(&doc, |d| {
            object(d, "").shift_remove("portia_api_key");
        }),
    );
    t.rejected(
        "unknown key",
        &edited(&doc, |d| d["llm_model_name"] = json!("gpt-4o")),
    );
    t.rejected(
        "wrong provider case",
        &edited(&doc, |d| d["llm_provider"] = json!("OPENAI")),
    );
    t.rejected(
        "wrong storage class",
        &edited(&doc, |d| d["storage_class"] = json!("memory")),
    );
    t.rejected(
        "log level outside the SDK enum",
        &edited(&doc, |d| d["default_log_level"] = json!("SUCCESS")),
    );
    t.rejected(
        "unknown model key",
        &edited(&doc, |d| d["models"]["vision_model"] = json!(null)),
    );
    t.rejected(
        "secret not a string",
        &edited(&doc, |d| d["openai_api_key"] = json!({"secret": "x"})),
    );
    t.rejected(
        "flag not a bool",
        &edited(&doc, |d| d["feature_flags"]["x"] = json!("true")),
    );
}

#[test]
fn clarification_invalid_documents_are_rejected_by_both() {
    let t = clarification();
    let clarifications = each(&fixture_run(), "/clarifications");
    t.rejected(
        "missing user_guidance",
        &edited(&clarifications[2], |d| {
            object(d, "").shift_remove("user_guidance");
        }),
    );
    t.rejected(
        "missing extra",
        &edited(&clarifications[2], |d| {
            object(d, "").shift_remove("extra");
        }),
    );
    t.rejected(
        "missing category",
        &edited(&clarifications[2], |d| {
            object(d, "").shift_remove("category");
        }),
    );
    t.rejected(
        "unknown key outside extra",
        &edited(&clarifications[2], |d| d["workflow_id"] = json!("x")),
    );
    t.rejected(
        "category spelled differently",
        &edited(&clarifications[3], |d| {
            d["category"] = json!("Multiple choice");
        }),
    );
    t.rejected(
        "field of another category",
        &edited(&clarifications[0], |d| d["options"] = json!([])),
    );
    t.rejected(
        "user verification with argument_name",
        &edited(&clarifications[5], |d| d["argument_name"] = json!(null)),
    );
    t.rejected(
        "bad id",
        &edited(&clarifications[1], |d| d["id"] = json!("clar-1")),
    );
    t.rejected(
        "resolved as text",
        &edited(&clarifications[1], |d| d["resolved"] = json!("yes")),
    );
}

#[test]
fn run_context_invalid_documents_are_rejected_by_both() {
    let t = run_context();
    let doc = fixture_run_context();
    t.rejected(
        "missing telemetry",
        &edited(&doc, |d| {
            object(d, "").shift_remove("telemetry");
        }),
    );
    t.rejected("unknown key", &edited(&doc, |d| d["config"] = json!({})));
    t.rejected(
        "unknown storage kind",
        &edited(&doc, |d| d["storage"] = json!({"kind": "s3"})),
    );
    t.rejected(
        "memory storage with a dir",
        &edited(&doc, |d| {
            d["storage"] = json!({"kind": "memory", "dir": null});
        }),
    );
    t.rejected(
        "a live object's repr",
        &edited(&doc, |d| {
            d["tool_registry"] = json!("<ToolRegistry at 0x7f>");
        }),
    );
}

#[test]
fn integers_are_read_in_any_notation_that_json_schema_calls_an_integer() {
    let t = plan_run();
    let run = fixture_run();
    for (text, expected) in [
        ("3.0", Some(3)),
        ("1e2", Some(100)),
        ("-0.0", Some(0)),
        ("2.5", None),
    ] {
        let number: Value = serde_json::from_str(text).unwrap();
        let doc = edited(&run, |d| d["current_step_index"] = number);
        assert_eq!(t.check(&doc), expected.is_some(), "{text}");
        if let Some(expected) = expected {
            let read: PlanRunV2 = serde_json::from_value(doc).unwrap();
            assert_eq!(read.current_step_index, expected, "{text}");
        }
    }
    for text in ["9223372036854775808", "-9223372036854775809", "1e19"] {
        let number: Value = serde_json::from_str(text).unwrap();
        t.rejected(text, &edited(&run, |d| d["current_step_index"] = number));
    }
}

fn assert_generated_are_accepted<T: serde::Serialize>(typed: &Typed, value: &T) {
    let doc = serde_json::to_value(value).expect("serializable");
    typed.accepted(&doc);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn generated_plan_runs_are_accepted_by_both(value in strategies::plan_run_v2()) {
        assert_generated_are_accepted(&plan_run(), &value);
    }

    #[test]
    fn generated_plans_are_accepted_by_both(value in strategies::plan_v2()) {
        assert_generated_are_accepted(&plan(), &value);
    }

    #[test]
    fn generated_steps_and_their_edits_agree(value in strategies::step_v2()) {
        let typed = step();
        assert_generated_are_accepted(&typed, &value);
        for mutant in mutants(&serde_json::to_value(&value).unwrap()).into_iter().take(400) {
            typed.check(&mutant.doc);
        }
    }

    #[test]
    fn generated_step_output_values_and_their_edits_agree(value in strategies::step_output_value()) {
        let typed = step_output_value();
        assert_generated_are_accepted(&typed, &value);
        for mutant in mutants(&serde_json::to_value(&value).unwrap()) {
            typed.check(&mutant.doc);
        }
    }

    #[test]
    fn generated_outputs_and_their_edits_agree(value in strategies::output()) {
        let typed = output();
        assert_generated_are_accepted(&typed, &value);
        for mutant in mutants(&serde_json::to_value(&value).unwrap()) {
            typed.check(&mutant.doc);
        }
    }

    #[test]
    fn generated_end_users_and_their_edits_agree(value in strategies::end_user()) {
        let typed = end_user();
        assert_generated_are_accepted(&typed, &value);
        for mutant in mutants(&serde_json::to_value(&value).unwrap()) {
            typed.check(&mutant.doc);
        }
    }

    #[test]
    fn generated_configs_are_accepted_by_both(value in strategies::config()) {
        assert_generated_are_accepted(&config(), &value);
    }

    #[test]
    fn generated_clarifications_and_their_edits_agree(value in strategies::clarification()) {
        let typed = clarification();
        assert_generated_are_accepted(&typed, &value);
        for mutant in mutants(&serde_json::to_value(&value).unwrap()) {
            typed.check(&mutant.doc);
        }
    }

    #[test]
    fn generated_run_contexts_are_accepted_by_both(value in strategies::run_context()) {
        assert_generated_are_accepted(&run_context(), &value);
    }
}

#[test]
fn reading_from_a_value_gives_the_same_verdict_as_reading_from_text() {
    let mut differ = Vec::new();
    for mutant in mutants(&fixture_run()) {
        let from_text = serde_json::from_str::<PlanRunV2>(&mutant.doc.to_string()).is_ok();
        let from_value = serde_json::from_value::<PlanRunV2>(mutant.doc.clone()).is_ok();
        if from_text != from_value {
            differ.push(mutant.edit);
        }
    }
    assert!(differ.is_empty(), "verdicts differ after: {differ:?}");
}

#[test]
fn the_helper_passes_when_serde_and_schema_agree() {
    let schema = json!({"type": "object", "required": ["a"]});
    assert_agreement(&schema, &json!({"a": 1}), true);
    assert_agreement(&schema, &json!([1]), false);
    assert!(!assert_agreement_for::<EndUser>(&schema, &json!({"b": 1})));
}

#[test]
#[should_panic(expected = "serde and the schema disagree: serde accepts, schema rejects")]
fn the_helper_fails_when_the_schema_is_stricter_than_serde() {
    assert_agreement(&json!({"type": "string"}), &json!(5), true);
}

#[test]
#[should_panic(expected = "serde and the schema disagree: serde rejects, schema accepts")]
fn the_helper_fails_when_the_schema_is_looser_than_serde() {
    // A schema that forgot `required` and `additionalProperties`: serde rejects `{}`.
    assert_agreement_for::<EndUser>(&json!({"type": "object"}), &json!({}));
}
