//! Law 2 for plans: `plan_to_legacy(plan_from_legacy(p)) == p` over every legacy plan of the
//! corpus, the hand-made v0.3.2 plan and generated plans of every variant; recognition of what the
//! SDK's `to_legacy_plan` writes (the real R6 probes and generated builder plans); V2 validity
//! through serde; and a snapshot of the PlanV2 of every corpus plan.

use std::fs;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use proptest::prelude::*;
use serde_json::{json, Value};

use planrun_converter::plan::{
    absent, derived_plan_id, plan_from_legacy, plan_to_legacy, renamed_to_plan_inputs,
    PlanConversion,
};
use planrun_converter::EntryKind;
use planrun_legacy::{
    LegacyDocument, Plan, PlanContext, PlanId, PlanInput as LegacyPlanInput, PlanInputV032, Prefix,
    PrefixedId, Step, Variable,
};
use planrun_v2::{
    ArgValue, BlockClauseType, ConditionalBlock, LoopBlock, LoopStepType, LoopType, PlanInput,
    PlanV2, StepRef, StepV2,
};
use planrun_wire::json::{escape_pointer_token, to_sdk_json};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .canonicalize()
        .expect("the corpus lives in ../shared/corpus beside the project")
}

fn files_in(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .map(|e| e.expect("a readable directory entry").path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&keep))
        .collect()
}

/// `*/plans/*.json`, `*/disk_storage/plan-*.json` and `R6/plan_v2/*.to_legacy_plan.json`.
fn corpus_plan_files() -> Vec<PathBuf> {
    let root = corpus();
    let mut files = Vec::new();
    for version in files_in(&root, |_| true).into_iter().filter(|p| p.is_dir()) {
        files.extend(files_in(&version.join("plans"), |n| n.ends_with(".json")));
        files.extend(files_in(&version.join("disk_storage"), |n| {
            n.starts_with("plan-") && n.ends_with(".json")
        }));
    }
    files.extend(files_in(&root.join("R6/plan_v2"), |n| {
        n.ends_with(".to_legacy_plan.json")
    }));
    files.sort();
    files
}

fn read_plan(path: &Path) -> (Vec<u8>, Plan) {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let parsed =
        planrun_legacy::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match parsed.document {
        LegacyDocument::Plan(plan) => (bytes, plan),
        other => panic!("{} is not a plan: {other:?}", path.display()),
    }
}

fn name(path: &Path) -> String {
    path.strip_prefix(corpus()).unwrap().display().to_string()
}

/// The exact round trip back to the legacy plan (law 2), V2 validity through serde, and the
/// report/residue bookkeeping.
fn check(plan: &Plan, what: &str) -> PlanConversion {
    let conversion = plan_from_legacy(plan);
    assert_eq!(
        plan_to_legacy(&conversion.plan, &conversion.residue),
        *plan,
        "{what} does not come back exactly (law 2)"
    );
    assert_eq!(
        plan_from_legacy(plan),
        conversion,
        "{what}: not deterministic"
    );
    let text = serde_json::to_string(&conversion.plan).unwrap();
    let back: PlanV2 = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{what}: the V2 plan does not read back: {e}\n{text}"));
    assert_eq!(back, *conversion.plan, "{what}: serde round trip");
    assert_eq!(
        conversion.plan.steps.len(),
        plan.steps.len(),
        "{what}: steps stay 1:1"
    );
    for key in conversion.residue.keys() {
        assert!(key.starts_with("/plan/"), "{what}: residue key {key}");
        let to = format!("/legacy/entries/{}", escape_pointer_token(key));
        let moved = conversion
            .report
            .entries
            .iter()
            .filter(|e| e.kind == EntryKind::Moved && e.from.as_deref() == Some(key))
            .collect::<Vec<_>>();
        assert_eq!(moved.len(), 1, "{what}: one `moved` entry for {key}");
        assert_eq!(moved[0].to.as_deref(), Some(to.as_str()), "{what}: {key}");
    }
    assert!(!conversion.report.has_loss(), "{what}: nothing is dropped");
    conversion
}

fn types(conversion: &PlanConversion) -> Vec<&'static str> {
    conversion.plan.steps.iter().map(StepV2::type_tag).collect()
}

#[test]
fn law_2_holds_for_every_corpus_plan() {
    let files = corpus_plan_files();
    assert_eq!(files.len(), 45, "{files:#?}");
    for path in &files {
        let (bytes, plan) = read_plan(path);
        let conversion = check(&plan, &name(path));
        // Byte for byte as well (law 1): the downgraded plan, written out, is the file.
        let emitted = to_sdk_json(&plan_to_legacy(&conversion.plan, &conversion.residue));
        assert_eq!(emitted.as_bytes(), bytes, "{}", name(path));
    }
}

#[test]
fn law_2_holds_for_the_hand_made_v032_plan() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../legacy/tests/cases/plan_v032_inputs.json");
    let (bytes, plan) = read_plan(&path);
    assert!(plan.inputs.is_some() && plan.plan_inputs.is_none());
    let conversion = check(&plan, "plan_v032_inputs.json");
    assert_eq!(
        conversion.plan.plan_inputs,
        [PlanInput {
            name: "$name".into(),
            description: Some("Who to greet".into()),
            value: Value::Null,
        }]
    );
    assert_eq!(
        conversion.residue.get("/plan/inputs"),
        Some(&renamed_to_plan_inputs())
    );
    assert_eq!(conversion.residue.len(), 1);
    assert!(conversion
        .report
        .entries
        .iter()
        .any(|e| e.kind == EntryKind::Renamed
            && e.from.as_deref() == Some("/plan/inputs")
            && e.to.as_deref() == Some("/plan/plan_inputs")));
    let emitted = to_sdk_json(&plan_to_legacy(&conversion.plan, &conversion.residue));
    assert_eq!(emitted.as_bytes(), bytes);
}

fn probe(name: &str) -> PlanConversion {
    let (_, plan) = read_plan(&corpus().join(format!("R6/plan_v2/{name}.to_legacy_plan.json")));
    check(&plan, name)
}

#[test]
fn builder_probes_are_recognised() {
    let linear = probe("linear_all_step_types");
    assert_eq!(
        types(&linear),
        [
            "invoke_tool",
            "llm",
            "single_tool_agent",
            "react_agent",
            "user_verify",
            "user_input",
            "exit"
        ]
    );
    let names: Vec<&str> = linear.plan.steps.iter().map(StepV2::step_name).collect();
    assert_eq!(
        names,
        ["step_0", "step_1", "step_2", "step_3", "step_4", "step_5", "step_6"]
    );
    let input = |name: &str| ArgValue::Input {
        name: name.into(),
        path: None,
    };
    match &linear.plan.steps[0] {
        StepV2::InvokeTool { tool, args, .. } => {
            assert_eq!(tool, "search_tool");
            let expected: IndexMap<String, ArgValue> = [
                ("query".to_owned(), input("destination")),
                ("limit".to_owned(), ArgValue::Literal { value: json!("5") }),
            ]
            .into_iter()
            .collect();
            assert_eq!(*args, expected);
        }
        other => panic!("{other:?}"),
    }
    match &linear.plan.steps[1] {
        StepV2::Llm { task, inputs, .. } => {
            assert_eq!(task, "Pick the cheapest flight under {{ Input(budget) }}");
            let step0 = ArgValue::StepOutput {
                step: StepRef::Index { index: 0 },
                path: None,
                full: false,
            };
            assert_eq!(*inputs, [step0, input("budget")]);
        }
        other => panic!("{other:?}"),
    }
    match &linear.plan.steps[3] {
        StepV2::ReactAgent {
            tools,
            tool_call_limit,
            ..
        } => {
            assert_eq!(*tools, ["search_tool", "llm_tool"]);
            assert_eq!(*tool_call_limit, 25);
        }
        other => panic!("{other:?}"),
    }
    match &linear.plan.steps[5] {
        StepV2::UserInput {
            message, options, ..
        } => {
            assert_eq!(message, "Seat preference?");
            assert_eq!(
                *options,
                Some(Vec::new()),
                "multiple choice, choices unknown"
            );
        }
        other => panic!("{other:?}"),
    }
    match &linear.plan.steps[6] {
        StepV2::Exit { message, error, .. } => {
            assert_eq!((message.as_str(), *error), ("done", false));
        }
        other => panic!("{other:?}"),
    }
    assert!(linear.residue.is_empty());
    assert_eq!(linear.plan.label, "Find a flight and report the weather");
    assert_eq!(
        linear.plan.tool_ids,
        ["llm_tool", "search_tool", "weather_tool"]
    );

    let branching = probe("conditionals_and_loop");
    assert_eq!(
        types(&branching),
        [
            "conditional",
            "llm",
            "conditional",
            "llm",
            "conditional",
            "llm",
            "conditional",
            "loop",
            "llm",
            "loop"
        ]
    );
    let block = ConditionalBlock {
        clause_step_indexes: vec![0, 2, 4, 6],
        parent_conditional_block: None,
    };
    for (i, step) in branching.plan.steps.iter().enumerate().take(7) {
        assert_eq!(step.conditional_block(), Some(&block), "step {i}");
    }
    let clause_types: Vec<(i64, BlockClauseType)> = branching
        .plan
        .steps
        .iter()
        .filter_map(|s| match s {
            StepV2::Conditional {
                clause_index_in_block,
                block_clause_type,
                ..
            } => Some((*clause_index_in_block, *block_clause_type)),
            _ => None,
        })
        .collect();
    assert_eq!(
        clause_types,
        [
            (0, BlockClauseType::NewConditionalBlock),
            (1, BlockClauseType::AlternateClause),
            (2, BlockClauseType::AlternateClause),
            (3, BlockClauseType::EndConditionBlock)
        ]
    );
    let loop_block = LoopBlock {
        start_step_index: 7,
        end_step_index: Some(9),
    };
    for (i, kind) in [(7, LoopStepType::Start), (9, LoopStepType::End)] {
        match &branching.plan.steps[i] {
            StepV2::Loop {
                condition,
                loop_type,
                loop_step_type,
                loop_block: Some(found),
                ..
            } => {
                assert_eq!(*condition, None);
                assert_eq!(*loop_type, LoopType::ForEach);
                assert_eq!(*loop_step_type, kind);
                assert_eq!(*found, loop_block);
            }
            other => panic!("{other:?}"),
        }
    }
    // The SDK gives the step inside the loop no loop block, and so does the conversion.
    assert_eq!(branching.plan.steps[8].loop_block(), None);
    match &branching.plan.steps[2] {
        StepV2::Conditional {
            condition, args, ..
        } => {
            assert_eq!(condition, "If result of <lambda> is true");
            assert_eq!(args.keys().collect::<Vec<_>>(), ["n"]);
        }
        other => panic!("{other:?}"),
    }

    assert_eq!(types(&probe("minimal_llm_only")), ["llm"]);
    // A SubPlanStep's legacy step omits the sub-plan: it is kept verbatim.
    let sub = probe("sub_plan");
    assert_eq!(types(&sub), ["legacy"]);
    assert_eq!(sub.plan.steps[0].step_name(), "step_0_output");
}

#[test]
fn planner_made_corpus_plans_become_legacy_steps() {
    let mut steps = 0;
    for path in corpus_plan_files() {
        if name(&path).starts_with("R6/plan_v2") {
            continue;
        }
        let (_, plan) = read_plan(&path);
        let conversion = plan_from_legacy(&plan);
        for (step, source) in conversion.plan.steps.iter().zip(&plan.steps) {
            steps += 1;
            match step {
                StepV2::Legacy {
                    step_name,
                    task,
                    output,
                    conditional_block: None,
                    loop_block: None,
                    ..
                } => {
                    assert_eq!(*task, source.task);
                    assert_eq!(*output, source.output);
                    assert_eq!(step_name, source.output.trim_start_matches('$'));
                }
                other => panic!("{}: {other:?}", name(&path)),
            }
        }
        assert_eq!(conversion.plan.label, plan.plan_context.query);
        assert_eq!(conversion.plan.tool_ids, plan.plan_context.tool_ids);
    }
    assert!(steps > 20, "{steps}");
}

#[test]
fn residue_keeps_what_v2_cannot_hold() {
    let plan = |file: &str| read_plan(&corpus().join(file)).1;

    let w1 = plan_from_legacy(&plan("W1/plans/plan_multi_step.json"));
    assert_eq!(w1.residue.get("/plan/steps/0/condition"), Some(&absent()));
    assert_eq!(
        w1.residue.get("/plan/steps/2/inputs/1/value"),
        Some(&Value::Null)
    );
    assert_eq!(w1.residue.get("/plan/plan_inputs"), Some(&absent()));
    assert_eq!(w1.plan.plan_inputs, []);

    let constants = plan_from_legacy(&plan("R1/plans/plan_variable_constant_values.json"));
    let values: Vec<String> = constants.residue.values().map(Value::to_string).collect();
    assert_eq!(values, [r#"{"absent":true}"#, "3", "4.5", "null"]);

    let extra = plan_from_legacy(&plan("R1/plans/plan_step_extra_fields.json"));
    assert_eq!(
        extra.residue.get("/plan/steps/0/custom_key"),
        Some(&json!("kept"))
    );
    assert_eq!(
        extra.residue.get("/plan/steps/0/nested_extra"),
        Some(&json!({"a": 1}))
    );

    let head = plan_from_legacy(&plan("R6/plans/plan_with_plan_inputs.json"));
    assert!(head.residue.is_empty());
    assert_eq!(
        head.plan.plan_inputs[2].value,
        json!({"a": [1, 2], "b": null})
    );
}

#[test]
fn a_plan_without_id_gets_a_deterministic_one_back_out() {
    let (_, mut plan) = read_plan(&corpus().join("R6/plans/plan_minimal.json"));
    plan.id = None;
    let conversion = check(&plan, "plan_minimal without id");
    assert_eq!(conversion.plan.id, derived_plan_id(&plan));
    assert!(planrun_v2::is_canonical("plan", &conversion.plan.id));
    assert_eq!(conversion.residue.get("/plan/id"), Some(&absent()));
    assert!(conversion
        .report
        .entries
        .iter()
        .any(|e| e.kind == EntryKind::Defaulted && e.to.as_deref() == Some("/plan/id")));
    plan.plan_context.query.push('!');
    assert_ne!(derived_plan_id(&plan), conversion.plan.id);
}

#[test]
fn snapshots_of_every_corpus_plan() {
    insta::glob!(
        "../../../shared/corpus",
        "{*/plans/*.json,*/disk_storage/plan-*.json,R6/plan_v2/*.to_legacy_plan.json}",
        |path| {
            let (_, plan) = read_plan(path);
            let conversion = plan_from_legacy(&plan);
            let text = serde_json::to_string_pretty(&conversion.plan).unwrap();
            insta::with_settings!({snapshot_path => "../../snapshots/converter/plans", prepend_module_to_snapshot => false}, {
                insta::assert_snapshot!("plan", text);
            });
        }
    );
}

// ---------------------------------------------------------------------------------------------
// Generated legacy plans of every variant
// ---------------------------------------------------------------------------------------------

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        (-1e6f64..1e6).prop_map(|f| json!(f)),
        "\\PC{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec(("[a-z]{1,3}", inner), 0..3)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Task texts, often shaped like what the builder writes.
fn task() -> impl Strategy<Value = String> {
    let prefix = prop::sample::select(vec![
        "",
        "Conditional clause: ",
        "Loop clause: ",
        "Loop clause: If result of None is true",
        "User verification: ",
        "User input (Multiple choice): ",
        "User input (Text input): ",
        "Exit plan: ",
        "Exit plan with error: ",
        "Use tool t with args: ",
        "Use tool t with args: q=$x, n=5",
        "Run sub-plan: ",
        "Run function f with args: ",
    ]);
    (prefix, "\\PC{0,8}").prop_map(|(p, s)| format!("{p}{s}"))
}

fn tool_id() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        Just(Some("llm_tool".to_owned())),
        Just(Some("t".to_owned())),
        Just(Some("a,b".to_owned())),
        Just(Some(String::new())),
        "\\PC{0,6}".prop_map(Some),
    ]
}

fn variable() -> impl Strategy<Value = Variable> {
    let name = prop_oneof![
        "\\$[a-z]{1,4}",
        "[a-z]{1,4}",
        (0..4u8).prop_map(|i| format!("$step_{i}_output"))
    ];
    let description = prop_oneof![Just(String::new()), "\\PC{0,6}"];
    let value = prop_oneof![3 => Just(None), 1 => json_value().prop_map(Some)];
    (name, value, description).prop_map(|(name, value, description)| Variable {
        name,
        value,
        description,
    })
}

fn condition() -> impl Strategy<Value = Option<Option<String>>> {
    prop_oneof![
        1 => Just(None),
        3 => Just(Some(None)),
        1 => "\\PC{0,8}".prop_map(|c| Some(Some(c))),
        1 => (0..3u8).prop_map(|i| Some(Some(format!("If $step_{i}_output is true")))),
        1 => (0..3u8).prop_map(|i| Some(Some(format!("If $step_{i}_output is false")))),
    ]
}

/// Unknown step keys (never a declared one, as the parser guarantees).
fn extra() -> impl Strategy<Value = IndexMap<String, Value>> {
    prop_oneof![
        3 => Just(IndexMap::new()),
        1 => prop::collection::vec(("x[a-z/~_]{0,5}", json_value()), 1..3)
            .prop_map(|kv| kv.into_iter().collect()),
    ]
}

fn step_parts() -> impl Strategy<Value = (Step, String)> {
    (
        task(),
        prop::collection::vec(variable(), 0..3),
        tool_id(),
        condition(),
        extra(),
        "\\$[a-z]{1,5}",
    )
        .prop_map(|(task, inputs, tool_id, condition, extra, output)| {
            let step = Step {
                task,
                inputs,
                tool_id,
                output: String::new(),
                condition,
                extra,
            };
            (step, output)
        })
}

fn legacy_plan() -> impl Strategy<Value = Plan> {
    let inputs = prop::option::of(prop::collection::vec(
        ("\\$?[a-z]{1,4}", "\\PC{0,6}")
            .prop_map(|(name, description)| PlanInputV032 { name, description }),
        0..3,
    ));
    let plan_inputs = prop::option::of(prop::collection::vec(
        (
            "\\$?[a-z]{1,4}",
            prop::option::of("\\PC{0,6}"),
            json_value(),
        )
            .prop_map(|(name, description, value)| LegacyPlanInput {
                name,
                description,
                value,
            }),
        0..3,
    ));
    (
        prop::option::of(any::<u128>()),
        "\\PC{0,10}",
        prop::collection::vec("[a-z_:]{1,8}", 0..4),
        any::<bool>(),
        prop::collection::vec(step_parts(), 0..7),
        inputs,
        plan_inputs,
    )
        .prop_map(
            |(id, query, tool_ids, positional, steps, inputs, plan_inputs)| Plan {
                id: id.map(|u| PlanId(PrefixedId::new(Prefix::Plan, u))),
                plan_context: PlanContext { query, tool_ids },
                steps: steps
                    .into_iter()
                    .enumerate()
                    .map(|(i, (mut step, output))| {
                        step.output = if positional {
                            format!("$step_{i}_output")
                        } else {
                            output
                        };
                        step
                    })
                    .collect(),
                inputs,
                plan_inputs,
            },
        )
}

// ---------------------------------------------------------------------------------------------
// Generated Plan Builder plans
// ---------------------------------------------------------------------------------------------

/// A reference generator: to an earlier step (by index or by name) or to a plan input.
#[derive(Debug, Clone)]
enum Ref {
    Step(usize, bool),
    Input(usize),
    Literal(String),
}

/// One Plan Builder call.
#[derive(Debug, Clone)]
enum Op {
    Llm(String, Vec<Ref>),
    Invoke(String, Vec<(String, Ref)>),
    Single(String, String, Vec<Ref>),
    React(String, Vec<String>, Vec<Ref>),
    Verify(String),
    Input(String, Option<Vec<Value>>),
    Exit(String, bool),
    If(String, Vec<Ref>),
    ElseIf(String, Vec<Ref>),
    Else,
    EndIf,
    Loop(Option<String>, Vec<Ref>),
    EndLoop,
    /// Only in replays: the call that makes this non-clause step again (as `llm_step(…)` and the
    /// like do: the step gets the builder's current conditional block and no loop block).
    Step(StepV2),
}

fn reference() -> impl Strategy<Value = Ref> {
    prop_oneof![
        (0..8usize, any::<bool>()).prop_map(|(i, by_name)| Ref::Step(i, by_name)),
        (0..3usize).prop_map(Ref::Input),
        "[a-z0-9 ]{0,5}".prop_map(Ref::Literal),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let text = || "[A-Za-z0-9 ?{}()]{0,10}";
    let refs = || prop::collection::vec(reference(), 0..3);
    let condition = || {
        prop_oneof![
            text().prop_map(String::from),
            Just("If result of <lambda> is true".to_owned())
        ]
    };
    prop_oneof![
        1 => (text(), refs()).prop_map(|(t, r)| Op::Llm(t, r)),
        1 => ("[a-z_]{1,6}", prop::collection::vec(("[a-z]{1,4}", reference()), 0..3))
            .prop_map(|(tool, args)| Op::Invoke(tool, args)),
        1 => (text(), "[a-z_]{1,6}", refs()).prop_map(|(t, tool, r)| Op::Single(t, tool, r)),
        1 => (text(), prop::collection::vec("[a-z_]{1,6}", 2..4), refs())
            .prop_map(|(t, tools, r)| Op::React(t, tools, r)),
        1 => text().prop_map(Op::Verify),
        1 => (text(), prop::option::of(prop::collection::vec(json_value(), 1..3)))
            .prop_map(|(m, o)| Op::Input(m, o)),
        1 => (text(), any::<bool>()).prop_map(|(m, e)| Op::Exit(m, e)),
        2 => (condition(), refs()).prop_map(|(c, r)| Op::If(c, r)),
        1 => (condition(), refs()).prop_map(|(c, r)| Op::ElseIf(c, r)),
        1 => Just(Op::Else),
        2 => Just(Op::EndIf),
        2 => (prop::option::of(text().prop_filter("not the for-each text", |t| t != "If result of None is true")), refs())
            .prop_map(|(c, r)| Op::Loop(c, r)),
        2 => Just(Op::EndLoop),
    ]
}

/// What the SDK's PlanBuilderV2 builds from `ops` (calls invalid at their point are skipped,
/// open blocks are closed at the end), as the builder nests blocks.
fn build_plan(ops: Vec<Op>, inputs: &[String]) -> PlanV2 {
    enum Open {
        Cond(usize),
        Loop(usize),
    }
    let mut steps: Vec<StepV2> = Vec::new();
    let mut blocks: Vec<(Vec<i64>, Option<usize>)> = Vec::new();
    let mut block_of: Vec<Option<usize>> = Vec::new();
    let mut loop_of: Vec<Option<usize>> = Vec::new();
    let mut loop_end: IndexMap<usize, usize> = IndexMap::new();
    let mut open: Vec<Open> = Vec::new();
    let cond_top = |open: &Vec<Open>| match open.last() {
        Some(Open::Cond(b)) => Some(*b),
        _ => None,
    };
    let arg = |r: &Ref, n: usize, steps: &[StepV2]| -> ArgValue {
        match r {
            Ref::Step(i, by_name) if n > 0 => {
                let i = i % n;
                if *by_name {
                    ArgValue::StepOutput {
                        step: StepRef::Name {
                            name: steps[i].step_name().to_owned(),
                        },
                        path: Some("a.b".into()),
                        full: false,
                    }
                } else {
                    ArgValue::StepOutput {
                        step: StepRef::Index { index: i as i64 },
                        path: None,
                        full: true,
                    }
                }
            }
            Ref::Input(j) if !inputs.is_empty() => ArgValue::Input {
                name: inputs[j % inputs.len()].clone(),
                path: None,
            },
            Ref::Literal(text) => ArgValue::Literal { value: json!(text) },
            _ => ArgValue::Literal { value: json!(42) },
        }
    };
    let close = |open: &mut Vec<Open>| open.pop();
    // Ops invalid at their point are skipped; whatever is still open is closed at the end.
    let mut queue = std::collections::VecDeque::from(ops);
    loop {
        let op = match queue.pop_front() {
            Some(op) => op,
            None => match open.last() {
                Some(Open::Cond(_)) => Op::EndIf,
                Some(Open::Loop(_)) => Op::EndLoop,
                None => break,
            },
        };
        let n = steps.len();
        let name = format!("s{n}");
        let base = |conditional: Option<usize>| (name.clone(), conditional);
        let refs =
            |rs: &[Ref], steps: &[StepV2]| rs.iter().map(|r| arg(r, n, steps)).collect::<Vec<_>>();
        let keyed = |rs: &[Ref], steps: &[StepV2]| {
            rs.iter()
                .enumerate()
                .map(|(k, r)| (format!("a{k}"), arg(r, n, steps)))
                .collect::<IndexMap<_, _>>()
        };
        let (step, block, looped) = match op {
            Op::Llm(task, rs) => {
                let (step_name, block) = base(cond_top(&open));
                (
                    StepV2::Llm {
                        step_name,
                        conditional_block: None,
                        loop_block: None,
                        task,
                        inputs: refs(&rs, &steps),
                        output_schema: None,
                        system_prompt: Some("sp".into()),
                        model: None,
                    },
                    block,
                    None,
                )
            }
            Op::Invoke(tool, args) => {
                let (step_name, block) = base(cond_top(&open));
                let args = args
                    .iter()
                    .map(|(k, r)| (k.clone(), arg(r, n, &steps)))
                    .collect();
                (
                    StepV2::InvokeTool {
                        step_name,
                        conditional_block: None,
                        loop_block: None,
                        tool,
                        args,
                        output_schema: None,
                    },
                    block,
                    None,
                )
            }
            Op::Single(task, tool, rs) => {
                let (step_name, block) = base(cond_top(&open));
                (
                    StepV2::SingleToolAgent {
                        step_name,
                        conditional_block: None,
                        loop_block: None,
                        task,
                        tool,
                        inputs: refs(&rs, &steps),
                        output_schema: None,
                        model: Some("m".into()),
                    },
                    block,
                    None,
                )
            }
            Op::React(task, tools, rs) => {
                let (step_name, block) = base(cond_top(&open));
                (
                    StepV2::ReactAgent {
                        step_name,
                        conditional_block: None,
                        loop_block: None,
                        task,
                        tools,
                        inputs: refs(&rs, &steps),
                        output_schema: None,
                        tool_call_limit: 3,
                        allow_agent_clarifications: true,
                        model: None,
                    },
                    block,
                    None,
                )
            }
            Op::Verify(message) => {
                let (step_name, block) = base(cond_top(&open));
                (
                    StepV2::UserVerify {
                        step_name,
                        conditional_block: None,
                        loop_block: None,
                        message,
                    },
                    block,
                    None,
                )
            }
            Op::Input(message, options) => {
                let (step_name, block) = base(cond_top(&open));
                (
                    StepV2::UserInput {
                        step_name,
                        conditional_block: None,
                        loop_block: None,
                        message,
                        options,
                    },
                    block,
                    None,
                )
            }
            Op::Exit(message, error) => {
                let (step_name, block) = base(cond_top(&open));
                (
                    StepV2::Exit {
                        step_name,
                        conditional_block: None,
                        loop_block: None,
                        message,
                        error,
                    },
                    block,
                    None,
                )
            }
            Op::Step(step) => (step, cond_top(&open), None),
            Op::If(condition, rs) => {
                blocks.push((vec![n as i64], cond_top(&open)));
                let b = blocks.len() - 1;
                open.push(Open::Cond(b));
                (
                    StepV2::Conditional {
                        step_name: name,
                        conditional_block: None,
                        loop_block: None,
                        condition,
                        args: keyed(&rs, &steps),
                        clause_index_in_block: 0,
                        block_clause_type: BlockClauseType::NewConditionalBlock,
                    },
                    Some(b),
                    None,
                )
            }
            Op::ElseIf(_, _) | Op::Else | Op::EndIf => {
                let Some(b) = cond_top(&open) else { continue };
                blocks[b].0.push(n as i64);
                let index = blocks[b].0.len() as i64 - 1;
                let (condition, args, kind) = match op {
                    Op::ElseIf(c, rs) => (c, keyed(&rs, &steps), BlockClauseType::AlternateClause),
                    Op::Else => (
                        "If result of <lambda> is true".to_owned(),
                        IndexMap::new(),
                        BlockClauseType::AlternateClause,
                    ),
                    _ => {
                        close(&mut open);
                        (
                            "If result of <lambda> is true".to_owned(),
                            IndexMap::new(),
                            BlockClauseType::EndConditionBlock,
                        )
                    }
                };
                (
                    StepV2::Conditional {
                        step_name: name,
                        conditional_block: None,
                        loop_block: None,
                        condition,
                        args,
                        clause_index_in_block: index,
                        block_clause_type: kind,
                    },
                    Some(b),
                    None,
                )
            }
            Op::Loop(condition, rs) => {
                open.push(Open::Loop(n));
                let loop_type = if condition.is_some() {
                    LoopType::DoWhile
                } else {
                    LoopType::ForEach
                };
                (
                    StepV2::Loop {
                        step_name: name,
                        conditional_block: None,
                        loop_block: None,
                        condition,
                        over: None,
                        loop_type,
                        index: 0,
                        args: keyed(&rs, &steps),
                        loop_step_type: LoopStepType::Start,
                    },
                    None,
                    Some(n),
                )
            }
            Op::EndLoop => {
                let Some(Open::Loop(start)) = open.last() else {
                    continue;
                };
                let start = *start;
                close(&mut open);
                loop_end.insert(start, n);
                let StepV2::Loop {
                    condition,
                    loop_type,
                    args,
                    ..
                } = steps[start].clone()
                else {
                    unreachable!()
                };
                (
                    StepV2::Loop {
                        step_name: name,
                        conditional_block: None,
                        loop_block: None,
                        condition,
                        over: None,
                        loop_type,
                        index: 0,
                        args,
                        loop_step_type: LoopStepType::End,
                    },
                    None,
                    Some(start),
                )
            }
        };
        steps.push(step);
        block_of.push(block);
        loop_of.push(looped);
    }
    fn materialise(blocks: &[(Vec<i64>, Option<usize>)], b: usize) -> ConditionalBlock {
        ConditionalBlock {
            clause_step_indexes: blocks[b].0.clone(),
            parent_conditional_block: blocks[b].1.map(|p| Box::new(materialise(blocks, p))),
        }
    }
    for (i, step) in steps.iter_mut().enumerate() {
        #[allow(
            clippy::manual_let_else,
            reason = "nine variants read better as one match"
        )]
        let (conditional, looped) = match step {
            StepV2::Llm {
                conditional_block,
                loop_block,
                ..
            }
            | StepV2::InvokeTool {
                conditional_block,
                loop_block,
                ..
            }
            | StepV2::SingleToolAgent {
                conditional_block,
                loop_block,
                ..
            }
            | StepV2::ReactAgent {
                conditional_block,
                loop_block,
                ..
            }
            | StepV2::UserVerify {
                conditional_block,
                loop_block,
                ..
            }
            | StepV2::UserInput {
                conditional_block,
                loop_block,
                ..
            }
            | StepV2::Exit {
                conditional_block,
                loop_block,
                ..
            }
            | StepV2::Conditional {
                conditional_block,
                loop_block,
                ..
            }
            | StepV2::Loop {
                conditional_block,
                loop_block,
                ..
            } => (conditional_block, loop_block),
            _ => unreachable!(),
        };
        *conditional = block_of[i].map(|b| materialise(&blocks, b));
        *looped = loop_of[i].map(|start| LoopBlock {
            start_step_index: start as i64,
            end_step_index: loop_end.get(&start).map(|e| *e as i64),
        });
    }
    PlanV2 {
        id: "plan-0f7fd09f-e263-4adc-bdaa-fddb8632d47b".into(),
        label: "built".into(),
        tool_ids: vec!["llm_tool".into(), "t".into()],
        steps,
        plan_inputs: inputs
            .iter()
            .map(|name| PlanInput {
                name: name.clone(),
                description: None,
                value: Value::Null,
            })
            .collect(),
        summarize: false,
        final_output_schema: None,
    }
}

/// Whether each loop clause step, in step order, ends a loop (else it starts one).
fn loop_ends(plan: &PlanV2) -> Vec<bool> {
    plan.steps
        .iter()
        .filter_map(|step| match step {
            StepV2::Loop { loop_step_type, .. } => Some(*loop_step_type == LoopStepType::End),
            _ => None,
        })
        .collect()
}

/// The builder calls that make `plan` again: each clause step as its `if_`, `else_if_`, `endif`,
/// `loop` or `end_loop` call (references back as the [`Ref`]s that make them), any other step as
/// itself.
fn replay(plan: &PlanV2, inputs: &[String]) -> Vec<Op> {
    let to_ref = |arg: &ArgValue| match arg {
        ArgValue::StepOutput {
            step: StepRef::Index { index },
            ..
        } => Ref::Step(*index as usize, false),
        ArgValue::Input { name, .. } => Ref::Input(
            inputs
                .iter()
                .position(|input| input == name)
                .expect("a recognised input reference names a plan input"),
        ),
        ArgValue::Literal { value } => Ref::Literal(value.as_str().unwrap_or_default().into()),
        other @ ArgValue::StepOutput { .. } => panic!("recognition makes no {other:?}"),
    };
    let refs = |args: &IndexMap<String, ArgValue>| args.values().map(to_ref).collect::<Vec<_>>();
    plan.steps
        .iter()
        .map(|step| match step {
            StepV2::Conditional {
                condition,
                args,
                block_clause_type,
                ..
            } => match block_clause_type {
                BlockClauseType::NewConditionalBlock => Op::If(condition.clone(), refs(args)),
                BlockClauseType::AlternateClause => Op::ElseIf(condition.clone(), refs(args)),
                BlockClauseType::EndConditionBlock => Op::EndIf,
            },
            StepV2::Loop {
                condition,
                args,
                loop_step_type: LoopStepType::Start,
                ..
            } => Op::Loop(condition.clone(), refs(args)),
            StepV2::Loop { .. } => Op::EndLoop,
            other => Op::Step(other.clone()),
        })
        .collect()
}

/// The minimal input the property once failed on: an `if` around loops, closed only at the end.
/// Reading the fourth loop clause as a nested loop (never closed), the final endif as a new `if`
/// (never closed) gave every step its condition too, but the builder raises on an open block.
#[test]
fn a_builder_plan_closes_every_block() {
    let ops = vec![
        Op::If(String::new(), vec![]),
        Op::Loop(None, vec![]),
        Op::Loop(None, vec![]),
        Op::Loop(Some(String::new()), vec![]),
        Op::EndLoop,
        Op::Llm(String::new(), vec![]),
    ];
    let built = build_plan(ops, &[]);
    let legacy = plan_to_legacy(&built, &IndexMap::new());
    let conversion = check(&legacy, "an if around nested loops");
    for (found, built) in conversion.plan.steps.iter().zip(&built.steps) {
        assert_eq!(found.conditional_block(), built.conditional_block());
        assert_eq!(found.loop_block(), built.loop_block());
    }
    assert_eq!(
        built.steps[0]
            .conditional_block()
            .unwrap()
            .clause_step_indexes,
        [0, 8]
    );
}

/// `endif()` writes `Conditional clause: If result of <lambda> is true` without inputs: a clause
/// with another text is never an endif, even where its condition is an endif's.
#[test]
fn an_endif_is_the_builders_lambda() {
    let ops = vec![
        Op::If(String::new(), vec![]),
        Op::Loop(None, vec![]),
        Op::Loop(None, vec![]),
        Op::If(String::new(), vec![]),
    ];
    let built = build_plan(ops, &[]);
    let legacy = plan_to_legacy(&built, &IndexMap::new());
    let conversion = check(&legacy, "an if inside nested loops inside an if");
    for (found, built) in conversion.plan.steps.iter().zip(&built.steps) {
        assert_eq!(found.conditional_block(), built.conditional_block());
        assert_eq!(found.loop_block(), built.loop_block());
    }
}

/// Two builder plans that write the same legacy plan: an `if` whose condition is a lambda reads
/// like an endif, and nested for-each loops like consecutive ones. No recognition can give both
/// back; it gives the reading that closes loops first.
#[test]
fn the_legacy_form_cannot_tell_some_loop_nestings_apart() {
    let lambda = || "If result of <lambda> is true".to_owned();
    let consecutive = vec![
        Op::If("x".into(), vec![]),
        Op::Loop(None, vec![]),
        Op::EndLoop,
        Op::EndIf,
        Op::If(lambda(), vec![]),
        Op::Loop(None, vec![]),
        Op::EndLoop,
        Op::EndIf,
    ];
    let nested = vec![
        Op::If("x".into(), vec![]),
        Op::Loop(None, vec![]),
        Op::Loop(None, vec![]),
        Op::If(lambda(), vec![]),
        Op::EndIf,
        Op::EndLoop,
        Op::EndLoop,
        Op::EndIf,
    ];
    let (consecutive, nested) = (build_plan(consecutive, &[]), build_plan(nested, &[]));
    let legacy = plan_to_legacy(&consecutive, &IndexMap::new());
    assert_eq!(plan_to_legacy(&nested, &IndexMap::new()), legacy);
    assert_ne!(
        consecutive.steps[0].conditional_block(),
        nested.steps[0].conditional_block()
    );
    let conversion = check(&legacy, "consecutive or nested loops");
    for (found, built) in conversion.plan.steps.iter().zip(&consecutive.steps) {
        assert_eq!(found.conditional_block(), built.conditional_block());
        assert_eq!(found.loop_block(), built.loop_block());
    }
}

/// The type recognition gives a builder step, where the legacy form is ambiguous.
fn recognised_type(step: &StepV2) -> &'static str {
    match step {
        StepV2::SingleToolAgent { tool, .. } if tool == "llm_tool" => "llm",
        StepV2::ReactAgent { tools, .. } if tools.len() == 1 && tools[0] == "llm_tool" => "llm",
        StepV2::ReactAgent { tools, .. } if tools.len() == 1 => "single_tool_agent",
        other => other.type_tag(),
    }
}

/// 512 cases, or `PROPTEST_CASES` when set (`with_cases` alone would override the variable).
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(512)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn law_2_holds_for_generated_legacy_plans(plan in legacy_plan()) {
        check(&plan, "a generated plan");
    }

    #[test]
    fn builder_plans_are_recognised_exactly(
        ops in prop::collection::vec(op(), 0..14),
        inputs in prop::sample::select(vec![vec![], vec!["n".to_owned()], vec!["x".to_owned(), "$y".to_owned()]]),
    ) {
        let built = build_plan(ops, &inputs);
        let legacy = plan_to_legacy(&built, &IndexMap::new());
        let conversion = check(&legacy, "a builder plan");
        let expected: Vec<&str> = built.steps.iter().map(recognised_type).collect();
        let found: Vec<&str> = conversion.plan.steps.iter().map(StepV2::type_tag).collect();
        prop_assert_eq!(found, expected, "{:#?}", legacy);
        prop_assert!(conversion.residue.is_empty());
        // The recognised plan writes the same legacy plan as the one it came from.
        prop_assert_eq!(plan_to_legacy(&conversion.plan, &IndexMap::new()), legacy.clone());
        // It is a plan the builder makes: replaying its steps as builder calls makes it again
        // (every block closed, every endif the builder's), blocks and legacy plan alike.
        let replayed = build_plan(replay(&conversion.plan, &inputs), &inputs);
        prop_assert_eq!(plan_to_legacy(&replayed, &IndexMap::new()), legacy.clone());
        for (found, again) in conversion.plan.steps.iter().zip(&replayed.steps) {
            prop_assert_eq!(found.conditional_block(), again.conditional_block());
            prop_assert_eq!(found.loop_block(), again.loop_block());
        }
        // And it is the builder's plan, blocks and all, wherever the legacy plan has one builder
        // reading. Some have two: the only choice the legacy form leaves open is whether a loop
        // clause repeating the innermost open loop's start (`end_loop` copies it) closes that
        // loop or opens a nested one; given those choices every conditional clause's role and
        // every block follow. Mostly the readings differ in loop pairing alone, but an `if_`
        // with a lambda condition and no args reads like an `endif`, so the conditional blocks
        // can differ too (`the_legacy_form_cannot_tell_some_loop_nestings_apart`: two builder
        // plans, one legacy plan), and no recognition can give back both. This property once
        // asked for the builder's conditional blocks unconditionally, which no recognition can
        // satisfy. Recognition takes the reading that closes loops first, so where the builder
        // made another one, at the first loop clause where the two differ recognition closes and
        // the builder nested; with the same loop pairing, the blocks must be the builder's.
        let (found_ends, built_ends) = (loop_ends(&conversion.plan), loop_ends(&built));
        match found_ends.iter().zip(&built_ends).position(|(f, b)| f != b) {
            None => {
                for (found, built) in conversion.plan.steps.iter().zip(&built.steps) {
                    prop_assert_eq!(found.conditional_block(), built.conditional_block());
                    prop_assert_eq!(found.loop_block(), built.loop_block());
                }
            }
            Some(k) => prop_assert!(
                found_ends[k] && !built_ends[k],
                "loop clause {} is read as a {} where closing is preferred: {:#?}",
                k,
                if found_ends[k] { "end" } else { "start" },
                legacy
            ),
        }
    }
}
