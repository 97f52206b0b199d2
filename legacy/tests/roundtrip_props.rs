//! Law 2 (emission is a fixpoint), proven on generated documents of every wire version: for a run
//! of each version W1, R0–R6, a plan of each era, an end user, a stored output and a tool call,
//! built as typed values and written with `json::to_sdk_json`, `parse` accepts the text, detects it
//! as the kind and a version that wrote it, reports no normalisation, reads back the same typed
//! value, and `to_sdk_json` writes the same bytes again (emit → parse → emit is the identity).
//!
//! The generators write what the SDK of each version writes (§1–§3 of the wire-format spec): the
//! version's id prefix and `execution_context` keys, only the clarification categories and keys
//! that version has (`workflow_id` in W1, `plan_run_id` after; `require_confirmation` from R4;
//! `source` and "User Verification" only in R6), agent-memory outputs only from R2, top-level
//! `end_user_id` only from R4, `plan_run_inputs` only in R5/R6. Native JSON (clarification
//! responses, custom data, plan input values, tool call input/output) includes nested values,
//! integers beyond 64 bits, floats, unicode and control characters; stringified output values
//! include unicode, empty and JSON-looking strings. Clarifications sometimes carry keys the SDK
//! would drop: this toolkit keeps them, so they must survive the round trip too.

use std::fmt::Debug;

use indexmap::IndexMap;
use planrun_legacy::json::{parse_value, to_sdk_json};
use planrun_legacy::{
    parse, stringify, AgentMemoryValue, Category, Clarification, ClarificationId, DocKind, EndUser,
    ExecutionContextR0, ExecutionContextR3, ExecutionContextR4, ExecutionContextW1, LegacyDocument,
    LegacyRun, LocalDataValue, Output, Outputs, Parsed, Plan, PlanContext, PlanId, PlanInput,
    PlanInputV032, Prefix, PrefixedId, RunId, RunR1, RunR2, RunR3, RunR4, RunR5, RunR6, RunRefKey,
    RunState, RunW1, Step, ToolCallRecord, ToolCallStatus, Variable, Version, VersionSet,
};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::ValueTree;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde::Serialize;
use serde_json::{Map, Number, Value};
use Version::*;

/// 64 cases per property by default; `PROPTEST_CASES=10000` searches harder.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(64);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Scalars and native JSON
// ---------------------------------------------------------------------------------------------

/// Strings that have tripped JSON writers before: empty, unicode (astral too), escapes, control
/// characters, the line separators JavaScript chokes on, and strings that look like JSON.
const TRICKY: &[&str] = &[
    "",
    " ",
    "Lisbon",
    "Lisboa — 東京 🚀",
    "𝄞 astral plane",
    "line\nbreak\ttab\rreturn",
    "\u{0}\u{1}\u{8}\u{b}\u{c}\u{1f}\u{7f}",
    "\"quoted\" and \\back\\slash/",
    "\u{2028}\u{2029}\u{feff}\u{200b}",
    "{\"city\": \"Lisbon\", \"n\": 3}",
    "[1, \"two\", 3.0, null, true, {\"k\": \"v\"}]",
    "{\"flight_no\":\"TP123\",\"price\":99.5}",
    "null",
    "42",
    "NaN",
    "9223372036854775819",
    "2025-05-06T14:30:00+00:00",
];

fn text() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        3 => select(TRICKY).prop_map(str::to_owned),
        3 => "[a-zA-Z0-9 _$.,-]{0,16}",
        2 => "\\PC{0,10}",
        1 => vec(
            prop_oneof![any::<char>(), (0u32..0x20).prop_map(|c| char::from_u32(c).unwrap())],
            0..8
        )
        .prop_map(String::from_iter),
    ]
}

/// Object keys and output names: identifiers, `$names`, and anything else (`/` and `~` included,
/// which JSON pointers must escape).
fn key() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        3 => "[a-z_]{1,10}",
        2 => "\\$[a-z_]{1,10}",
        1 => text(),
        1 => select(&["a/b", "~0", "~1/~", "$ñandú", "", "📎"][..]).prop_map(str::to_owned),
    ]
}

fn number(text: &str) -> Value {
    parse_value(text.as_bytes()).expect("number text is JSON")
}

/// Integers beyond 64 bits, built from their text (the only way to get one into a `Number`).
fn big_int() -> impl Strategy<Value = Value> + Clone {
    "-?[1-9][0-9]{19,40}".prop_map(|t| number(&t))
}

/// Floats as pydantic writes them (shortest round-trip text, `e16` not `e+16`).
fn float() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        any::<f64>()
            .prop_filter("JSON has no NaN or Infinity", |f| f.is_finite())
            .prop_map(Value::from),
        select(
            &[
                "1.0",
                "-0.0",
                "0.42",
                "99.5",
                "3.14159",
                "1e16",
                "2.5e-7",
                "1.7976931348623157e308",
                "5e-324"
            ][..]
        )
        .prop_map(number),
    ]
}

fn json_leaf() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-5i64..200).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        big_int(),
        float(),
        text().prop_map(Value::String),
    ]
}

/// Any native JSON value, nested up to three levels.
fn json() -> impl Strategy<Value = Value> + Clone {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            vec((key(), inner), 0..4).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Map<String, Value>> + Clone {
    vec((key(), json()), 0..4).prop_map(|kv| kv.into_iter().collect())
}

fn string_map() -> impl Strategy<Value = IndexMap<String, String>> + Clone {
    vec((key(), text()), 0..3).prop_map(|kv| kv.into_iter().collect())
}

fn step_index() -> impl Strategy<Value = i64> + Clone {
    prop_oneof![3 => -1i64..12, 1 => any::<i64>()]
}

fn state() -> impl Strategy<Value = RunState> + Clone {
    select(
        &[
            RunState::NOT_STARTED,
            RunState::IN_PROGRESS,
            RunState::NEED_CLARIFICATION,
            RunState::READY_TO_RESUME,
            RunState::COMPLETE,
            RunState::FAILED,
        ][..],
    )
}

fn end_user_id() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        select(&["local", "user-123", "ada@example.com"][..]).prop_map(str::to_owned),
        text()
    ]
}

fn run_id(version: Version, uuid: u128) -> RunId {
    RunId(PrefixedId::new(version.run_prefix(), uuid))
}

fn plan_id(uuid: u128) -> PlanId {
    PlanId(PrefixedId::new(Prefix::Plan, uuid))
}

// ---------------------------------------------------------------------------------------------
// Outputs
// ---------------------------------------------------------------------------------------------

/// A stringified `value` as the SDK stores it: plain strings, `""` (what `None` becomes), and the
/// `json.dumps` text of native values (which is indistinguishable from a JSON-looking string).
fn stored_value() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        2 => text(),
        1 => Just(String::new()),
        2 => json().prop_map(stringify),
    ]
}

/// `null` and `""` are different summaries and must stay different.
fn summary() -> impl Strategy<Value = Option<String>> + Clone {
    prop_oneof![Just(None), Just(Some(String::new())), text().prop_map(Some)]
}

fn local() -> impl Strategy<Value = LocalDataValue> + Clone {
    (stored_value(), summary()).prop_map(|(value, summary)| LocalDataValue { value, summary })
}

/// An agent-memory reference owned by `run` or by another `prun-` run.
fn memory(run: RunId) -> impl Strategy<Value = AgentMemoryValue> + Clone {
    (key(), prop::option::of(any::<u128>()), text()).prop_map(
        move |(output_name, owner, summary)| AgentMemoryValue {
            output_name,
            plan_run_id: owner.map_or(run, |u| run_id(R6, u)),
            summary,
        },
    )
}

/// An R2+ output: inline or in agent memory.
fn output(run: RunId) -> impl Strategy<Value = Output> + Clone {
    prop_oneof![
        3 => local().prop_map(Output::Local),
        1 => memory(run).prop_map(Output::AgentMemory),
    ]
}

// ---------------------------------------------------------------------------------------------
// Clarifications
// ---------------------------------------------------------------------------------------------

/// The categories a version's SDK can write.
fn categories(version: Version) -> Vec<Category> {
    let mut all = vec![
        Category::Action,
        Category::Input,
        Category::MultipleChoice,
        Category::ValueConfirmation,
        Category::Custom,
    ];
    if version <= R1 {
        all.push(Category::Argument);
    }
    if version == R6 {
        all.push(Category::UserVerification);
    }
    all
}

/// Keys a clarification may carry beyond its class's: the SDK drops them, this toolkit keeps them.
/// Subtype keys of other categories are among them (an `argument_name` put back on a W1
/// "Argument", an `options` list on an "Input").
const CLARIFICATION_EXTRA_KEYS: &[&str] = &[
    "trace_id",
    "ui_hint",
    "ñandú",
    "argument_name",
    "options",
    "name",
    "data",
    "action_url",
];

/// Everything a clarification of any category could hold; [`clarification`] keeps what the
/// category and version write.
#[derive(Debug, Clone)]
struct ClarificationParts {
    category: Category,
    uuid: u128,
    other_run: Option<u128>,
    null_run: bool,
    response: Value,
    step: Option<i64>,
    user_guidance: String,
    resolved: bool,
    source: Option<Option<String>>,
    argument_name: String,
    action_url: String,
    require_confirmation: bool,
    options: Vec<Value>,
    pick: usize,
    custom_name: String,
    data: Map<String, Value>,
    verified: Option<bool>,
    extra: Vec<(String, Value)>,
}

fn clarification_parts(version: Version) -> impl Strategy<Value = ClarificationParts> + Clone {
    let action_url = prop_oneof![
        select(
            &[
                "https://auth.example.com/oauth?client=portia&state=a%20b",
                "https://example.com/",
                "https://accounts.google.com/o/oauth2/auth?scope=gmail.send"
            ][..]
        )
        .prop_map(str::to_owned),
        "https://[a-z]{1,10}\\.example\\.com/[a-z0-9/]{0,12}",
    ];
    let source = prop_oneof![
        Just(None),
        Just(Some(None)),
        select(
            &[
                "default_execution_agent",
                "planner",
                "execution_hooks",
                "portia:google:gmail:send_email"
            ][..]
        )
        .prop_map(|s| Some(Some(s.to_owned()))),
        text().prop_map(|s| Some(Some(s))),
    ];
    let step = prop_oneof![
        Just(None),
        (-1i64..10).prop_map(Some),
        any::<i64>().prop_map(Some)
    ];
    let extra = prop_oneof![
        4 => Just(Vec::new()),
        1 => vec((select(CLARIFICATION_EXTRA_KEYS).prop_map(str::to_owned), json()), 1..3),
    ];
    (
        (
            select(categories(version)),
            any::<u128>(),
            prop::option::of(any::<u128>()),
            prop::bool::weighted(0.2),
            json(),
            step,
        ),
        (
            text(),
            any::<bool>(),
            source,
            key(),
            action_url,
            any::<bool>(),
        ),
        (
            vec(json(), 0..4),
            any::<usize>(),
            key(),
            json_object(),
            prop::option::of(any::<bool>()),
            extra,
        ),
    )
        .prop_map(
            |(
                (category, uuid, other_run, null_run, response, step),
                (user_guidance, resolved, source, argument_name, action_url, require_confirmation),
                (options, pick, custom_name, data, verified, extra),
            )| ClarificationParts {
                category,
                uuid,
                other_run,
                null_run,
                response,
                step,
                user_guidance,
                resolved,
                source,
                argument_name,
                action_url,
                require_confirmation,
                options,
                pick,
                custom_name,
                data,
                verified,
                extra,
            },
        )
}

/// Assembles the clarification the SDK of `version` writes for `run` (its run reference names
/// `run` or another run of the same version; null only from v0.7.0, so only in R6).
fn clarification(version: Version, run: RunId, p: ClarificationParts) -> Clarification {
    let run_ref = if version == W1 {
        (
            RunRefKey::WorkflowId,
            Some(p.other_run.map_or(run, |u| run_id(W1, u))),
        )
    } else if version == R6 && p.null_run {
        (RunRefKey::PlanRunId, None)
    } else {
        (
            RunRefKey::PlanRunId,
            Some(p.other_run.map_or(run, |u| run_id(version, u))),
        )
    };
    let mut fields: IndexMap<String, Value> = IndexMap::new();
    let mut response = p.response;
    match p.category {
        Category::Argument => {}
        Category::Input | Category::ValueConfirmation => {
            fields.insert("argument_name".into(), Value::String(p.argument_name));
        }
        Category::MultipleChoice => {
            // The SDK's validator: a resolved choice is one of the options.
            if p.resolved && !p.options.is_empty() {
                response = p.options[p.pick % p.options.len()].clone();
            }
            fields.insert("argument_name".into(), Value::String(p.argument_name));
            fields.insert("options".into(), Value::Array(p.options));
        }
        Category::Action => {
            fields.insert("action_url".into(), Value::String(p.action_url));
            if version >= R4 {
                fields.insert(
                    "require_confirmation".into(),
                    Value::Bool(p.require_confirmation),
                );
            }
        }
        Category::UserVerification => response = p.verified.map_or(Value::Null, Value::Bool),
        Category::Custom => {
            fields.insert("name".into(), Value::String(p.custom_name));
            fields.insert("data".into(), Value::Object(p.data));
        }
    }
    let mut extra = IndexMap::new();
    for (k, v) in p.extra {
        if !p.category.subtype_keys().contains(&k.as_str()) {
            extra.insert(k, v);
        }
    }
    Clarification {
        id: Some(ClarificationId(PrefixedId::new(Prefix::Clar, p.uuid))),
        run_ref: Some(run_ref),
        category: p.category,
        response,
        step: p.step,
        user_guidance: p.user_guidance,
        resolved: p.resolved,
        source: if version == R6 { p.source } else { None },
        fields,
        extra,
    }
}

fn outputs<O, S>(version: Version, run: RunId, out: S) -> impl Strategy<Value = Outputs<O>>
where
    O: Debug + Clone,
    S: Strategy<Value = O> + Clone,
{
    (
        vec(clarification_parts(version), 0..4),
        vec((key(), out.clone()), 0..4),
        prop::option::of(out),
    )
        .prop_map(
            move |(clarifications, step_outputs, final_output)| Outputs {
                clarifications: clarifications
                    .into_iter()
                    .map(|p| clarification(version, run, p))
                    .collect(),
                step_outputs: step_outputs.into_iter().collect(),
                final_output,
            },
        )
}

// ---------------------------------------------------------------------------------------------
// Runs
// ---------------------------------------------------------------------------------------------

/// The keys every run version has before its execution context.
#[derive(Debug, Clone)]
struct Head {
    id: RunId,
    plan_id: PlanId,
    current_step_index: i64,
    state: RunState,
}

fn head(version: Version) -> impl Strategy<Value = Head> {
    (any::<u128>(), any::<u128>(), step_index(), state()).prop_map(
        move |(run, plan, index, state)| Head {
            id: run_id(version, run),
            plan_id: plan_id(plan),
            current_step_index: index,
            state,
        },
    )
}

fn extension() -> impl Strategy<Value = Option<Vec<String>>> + Clone {
    prop::option::of(vec(text(), 0..3))
}

fn ec_end_user() -> impl Strategy<Value = Option<String>> + Clone {
    prop::option::of(end_user_id())
}

fn plan_run_inputs() -> impl Strategy<Value = IndexMap<String, LocalDataValue>> + Clone {
    vec((key(), local()), 0..3).prop_map(|kv| kv.into_iter().collect())
}

/// A run as the SDK of `version` writes it.
fn run(version: Version) -> BoxedStrategy<LegacyRun> {
    match version {
        W1 => (
            head(W1),
            ec_end_user(),
            string_map(),
            extension(),
            extension(),
        )
            .prop_flat_map(|(h, end_user_id, additional_data, planner, agent)| {
                let ec = ExecutionContextW1 {
                    end_user_id,
                    additional_data,
                    planner_system_context_extension: planner,
                    agent_system_context_extension: agent,
                };
                outputs(W1, h.id, local()).prop_map(move |outputs| {
                    LegacyRun::W1(RunW1 {
                        id: Some(h.id),
                        plan_id: h.plan_id,
                        current_step_index: h.current_step_index,
                        state: h.state,
                        execution_context: ec.clone(),
                        outputs,
                    })
                })
            })
            .boxed(),
        R0 | R1 => (
            head(version),
            ec_end_user(),
            string_map(),
            extension(),
            extension(),
        )
            .prop_flat_map(
                move |(h, end_user_id, additional_data, planning, execution)| {
                    let ec = ExecutionContextR0 {
                        end_user_id,
                        additional_data,
                        planning_agent_system_context_extension: planning,
                        execution_agent_system_context_extension: execution,
                    };
                    outputs(version, h.id, local()).prop_map(move |outputs| {
                        let run = RunR1 {
                            id: Some(h.id),
                            plan_id: h.plan_id,
                            current_step_index: h.current_step_index,
                            state: h.state,
                            execution_context: ec.clone(),
                            outputs,
                        };
                        if version == R0 {
                            LegacyRun::R0(run)
                        } else {
                            LegacyRun::R1(run)
                        }
                    })
                },
            )
            .boxed(),
        R2 => (
            head(R2),
            ec_end_user(),
            string_map(),
            extension(),
            extension(),
        )
            .prop_flat_map(|(h, end_user_id, additional_data, planning, execution)| {
                let ec = ExecutionContextR0 {
                    end_user_id,
                    additional_data,
                    planning_agent_system_context_extension: planning,
                    execution_agent_system_context_extension: execution,
                };
                outputs(R2, h.id, output(h.id)).prop_map(move |outputs| {
                    LegacyRun::R2(RunR2 {
                        id: Some(h.id),
                        plan_id: h.plan_id,
                        current_step_index: h.current_step_index,
                        state: h.state,
                        execution_context: ec.clone(),
                        outputs,
                    })
                })
            })
            .boxed(),
        R3 => (head(R3), ec_end_user(), string_map())
            .prop_flat_map(|(h, end_user_id, additional_data)| {
                let ec = ExecutionContextR3 {
                    end_user_id,
                    additional_data,
                };
                outputs(R3, h.id, output(h.id)).prop_map(move |outputs| {
                    LegacyRun::R3(RunR3 {
                        id: Some(h.id),
                        plan_id: h.plan_id,
                        current_step_index: h.current_step_index,
                        state: h.state,
                        execution_context: ec.clone(),
                        outputs,
                    })
                })
            })
            .boxed(),
        R4 => (head(R4), string_map(), end_user_id())
            .prop_flat_map(|(h, additional_data, end_user_id)| {
                let ec = ExecutionContextR4 { additional_data };
                outputs(R4, h.id, output(h.id)).prop_map(move |outputs| {
                    LegacyRun::R4(RunR4 {
                        id: Some(h.id),
                        plan_id: h.plan_id,
                        current_step_index: h.current_step_index,
                        state: h.state,
                        execution_context: ec.clone(),
                        end_user_id: end_user_id.clone(),
                        outputs,
                    })
                })
            })
            .boxed(),
        R5 => (head(R5), string_map(), end_user_id(), plan_run_inputs())
            .prop_flat_map(|(h, additional_data, end_user_id, inputs)| {
                let ec = ExecutionContextR4 { additional_data };
                outputs(R5, h.id, output(h.id)).prop_map(move |outputs| {
                    LegacyRun::R5(RunR5 {
                        id: Some(h.id),
                        plan_id: h.plan_id,
                        current_step_index: h.current_step_index,
                        state: h.state,
                        execution_context: ec.clone(),
                        end_user_id: end_user_id.clone(),
                        outputs,
                        plan_run_inputs: inputs.clone(),
                    })
                })
            })
            .boxed(),
        R6 => (head(R6), end_user_id(), plan_run_inputs())
            .prop_flat_map(|(h, end_user_id, inputs)| {
                outputs(R6, h.id, output(h.id)).prop_map(move |outputs| {
                    LegacyRun::R6(RunR6 {
                        id: Some(h.id),
                        plan_id: h.plan_id,
                        current_step_index: h.current_step_index,
                        state: h.state,
                        end_user_id: end_user_id.clone(),
                        outputs,
                        plan_run_inputs: inputs.clone(),
                    })
                })
            })
            .boxed(),
    }
}

// ---------------------------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------------------------

/// The plan shapes of §3, by the release that wrote them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PlanEra {
    /// alpha.50 – 0.1.5: `Variable.value`, no `condition`, tool ids in any order, no step extras.
    Alpha,
    /// 0.1.7: tool ids sorted, step extras kept, still no `condition`.
    V017,
    /// 0.1.8 – 0.1.11: `Step.condition` and `Variable.value` both.
    V018,
    /// v0.1.12 – v0.3.1: `Variable.value` gone.
    V0112,
    /// v0.3.2 – v0.3.3: plan `inputs` (name, description).
    V032,
    /// v0.3.4+: `plan_inputs` with native JSON default values.
    V034,
}

impl PlanEra {
    /// Run versions whose SDK writes plans of this era.
    fn versions(self) -> &'static [Version] {
        match self {
            PlanEra::Alpha => &[W1, R0],
            PlanEra::V017 | PlanEra::V018 => &[R1],
            PlanEra::V0112 => &[R2, R3, R4],
            PlanEra::V032 => &[R5],
            PlanEra::V034 => &[R6],
        }
    }
    fn has_value(self) -> bool {
        matches!(self, PlanEra::Alpha | PlanEra::V017 | PlanEra::V018)
    }
    fn has_condition(self) -> bool {
        !matches!(self, PlanEra::Alpha | PlanEra::V017)
    }
    fn keeps_extras(self) -> bool {
        self != PlanEra::Alpha
    }
}

const STEP_EXTRA_KEYS: &[&str] = &["custom_key", "nested_extra", "priority", "ñ_meta"];

type VariableParts = (String, Value, String);
type StepParts = (
    String,
    Vec<VariableParts>,
    Option<String>,
    String,
    Option<String>,
    Vec<(String, Value)>,
);

fn tool_id() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        select(
            &[
                "llm_tool",
                "weather_tool",
                "calculator_tool",
                "portia:search",
                "portia:google:gmail:send_email"
            ][..]
        )
        .prop_map(str::to_owned),
        "[a-z][a-z_:]{0,15}",
    ]
}

fn step_parts() -> impl Strategy<Value = StepParts> + Clone {
    (
        text(),
        vec((key(), json(), text()), 0..3),
        prop::option::of(tool_id()),
        "[a-z_]{1,10}",
        prop::option::of(prop_oneof![
            select(&["if $weather is sunny", "$flights is not empty"][..]).prop_map(str::to_owned),
            text()
        ]),
        prop_oneof![
            3 => Just(Vec::new()),
            1 => vec((select(STEP_EXTRA_KEYS).prop_map(str::to_owned), json()), 1..3),
        ],
    )
}

fn plan(era: PlanEra) -> impl Strategy<Value = Plan> {
    let v032_inputs = vec((key(), text()), 0..3);
    let v034_inputs = vec((key(), prop::option::of(text()), json()), 0..3);
    (
        any::<u128>(),
        text(),
        vec(tool_id(), 0..5),
        vec(step_parts(), 0..4),
        v032_inputs,
        v034_inputs,
    )
        .prop_map(move |(uuid, query, mut tool_ids, steps, v032, v034)| {
            if era != PlanEra::Alpha {
                tool_ids.sort();
            }
            let steps = steps
                .into_iter()
                .enumerate()
                .map(
                    |(i, (task, inputs, tool_id, output, condition, extras))| Step {
                        task,
                        inputs: inputs
                            .into_iter()
                            .map(|(name, value, description)| Variable {
                                name,
                                value: era.has_value().then_some(value),
                                description,
                            })
                            .collect(),
                        tool_id,
                        // Unique per plan, as the SDK enforces from 0.1.6.
                        output: format!("${output}_{i}"),
                        condition: era.has_condition().then_some(condition),
                        extra: if era.keeps_extras() {
                            extras.into_iter().collect()
                        } else {
                            IndexMap::new()
                        },
                    },
                )
                .collect();
            Plan {
                id: Some(plan_id(uuid)),
                plan_context: PlanContext { query, tool_ids },
                steps,
                inputs: (era == PlanEra::V032).then(|| {
                    v032.into_iter()
                        .map(|(name, description)| PlanInputV032 { name, description })
                        .collect()
                }),
                plan_inputs: (era == PlanEra::V034).then(|| {
                    v034.into_iter()
                        .map(|(name, description, value)| PlanInput {
                            name,
                            description,
                            value,
                        })
                        .collect()
                }),
            }
        })
}

// ---------------------------------------------------------------------------------------------
// End users, tool calls
// ---------------------------------------------------------------------------------------------

/// An end user; `null` additional data only from v0.3.5 (R6).
fn end_user(version: Version) -> impl Strategy<Value = EndUser> {
    let nullable = version == R6;
    (
        end_user_id(),
        text(),
        text(),
        text(),
        vec((key(), prop::option::of(text())), 0..4),
    )
        .prop_map(
            move |(external_id, name, email, phone_number, data)| EndUser {
                external_id,
                name,
                email,
                phone_number,
                additional_data: data
                    .into_iter()
                    .map(|(k, v)| {
                        (
                            k,
                            if nullable {
                                v
                            } else {
                                Some(v.unwrap_or_default())
                            },
                        )
                    })
                    .collect(),
            },
        )
}

fn tool_call(version: Version) -> impl Strategy<Value = ToolCallRecord> {
    let status = select(
        &[
            ToolCallStatus::IN_PROGRESS,
            ToolCallStatus::SUCCESS,
            ToolCallStatus::NEED_CLARIFICATION,
            ToolCallStatus::FAILED,
        ][..],
    );
    let latency = prop_oneof![
        (0.0f64..100.0).prop_map(|f| Number::from_f64(f).unwrap()),
        select(&["0.42", "1e-5", "12.0", "0.0"][..]).prop_map(|t| match number(t) {
            Value::Number(n) => n,
            other => unreachable!("{other}"),
        }),
    ];
    (
        tool_id(),
        any::<u128>(),
        step_index(),
        prop::option::of(end_user_id()),
        string_map(),
        status,
        (json(), json(), latency),
    )
        .prop_map(
            move |(tool_name, run, step, end_user_id, data, status, (input, output, latency))| {
                let run = Some(run_id(version, run));
                ToolCallRecord {
                    tool_name,
                    workflow_id: if version == W1 { run } else { None },
                    plan_run_id: if version == W1 { None } else { run },
                    step,
                    end_user_id,
                    additional_data: (version != R6).then_some(data),
                    status,
                    input,
                    output,
                    latency_seconds: latency,
                }
            },
        )
}

// ---------------------------------------------------------------------------------------------
// The law
// ---------------------------------------------------------------------------------------------

/// Emits `doc`, parses the text back and checks the law; returns the parse for further checks.
fn emit_parse_emit<T: Serialize>(
    doc: &T,
    kind: DocKind,
    written_by: &[Version],
) -> Result<(String, Parsed), TestCaseError> {
    let emitted = to_sdk_json(doc);
    let parsed = parse(emitted.as_bytes())
        .map_err(|e| TestCaseError::fail(format!("parse failed: {e}\n{emitted}")))?;
    prop_assert_eq!(
        parsed.detection.kind,
        kind,
        "{}\n{}",
        parsed.detection,
        emitted
    );
    for version in written_by {
        prop_assert!(
            parsed.detection.versions.contains(*version),
            "a {} document detected as {}:\n{}",
            version,
            parsed.detection,
            emitted
        );
    }
    prop_assert!(
        parsed.normalizations.is_empty(),
        "normalisations {:?}\n{}",
        parsed.normalizations,
        emitted
    );
    let again = parsed.to_sdk_json();
    prop_assert!(
        again == emitted,
        "re-emission differs:\n{}\n---- first emission ----\n{}",
        again,
        emitted
    );
    Ok((emitted, parsed))
}

fn check_run(version: Version, run: LegacyRun) -> Result<(), TestCaseError> {
    prop_assert_eq!(run.version(), version);
    let (emitted, parsed) = emit_parse_emit(&run, DocKind::Run, &[version])?;
    // Detection is not only right but as sharp as the file allows: R1 and R2 files differ only
    // when a clarification is "Argument" (R1) or an output is in agent memory (R2).
    let sharpest = match version {
        R1 | R2 => VersionSet::range(R1, R2),
        other => VersionSet::only(other),
    };
    let detected = parsed.detection.versions;
    prop_assert!(
        detected.intersect(sharpest) == detected,
        "a {} run detected as {}:\n{}",
        version,
        parsed.detection,
        emitted
    );
    let read = parsed.as_run().expect("detected as a run");
    if read.version() == version {
        prop_assert!(
            parsed.document == LegacyDocument::Run(run),
            "read back a different run:\n{:?}\n{}",
            parsed.document,
            emitted
        );
    }
    Ok(())
}

macro_rules! run_laws {
    ($($name:ident => $version:expr,)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(doc in run($version)) {
                    check_run($version, doc)?;
                }
            )*
        }
    };
}

run_laws! {
    w1_workflows_round_trip => W1,
    r0_pr_runs_round_trip => R0,
    r1_runs_round_trip => R1,
    r2_runs_with_agent_memory_round_trip => R2,
    r3_runs_round_trip => R3,
    r4_runs_with_end_user_id_round_trip => R4,
    r5_runs_with_plan_run_inputs_round_trip => R5,
    r6_runs_round_trip => R6,
}

fn check_plan(era: PlanEra, plan: Plan) -> Result<(), TestCaseError> {
    let (emitted, parsed) = emit_parse_emit(&plan, DocKind::Plan, era.versions())?;
    prop_assert!(
        parsed.document == LegacyDocument::Plan(plan),
        "read back a different plan:\n{:?}\n{}",
        parsed.document,
        emitted
    );
    Ok(())
}

macro_rules! plan_laws {
    ($($name:ident => $era:expr,)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(doc in plan($era)) {
                    check_plan($era, doc)?;
                }
            )*
        }
    };
}

plan_laws! {
    alpha_plans_with_variable_values_round_trip => PlanEra::Alpha,
    v017_plans_with_step_extras_round_trip => PlanEra::V017,
    v018_plans_with_conditions_and_values_round_trip => PlanEra::V018,
    v0112_plans_without_variable_values_round_trip => PlanEra::V0112,
    v032_plans_with_inputs_round_trip => PlanEra::V032,
    v034_plans_with_native_plan_inputs_round_trip => PlanEra::V034,
}

fn check_tool_call(version: Version, call: ToolCallRecord) -> Result<(), TestCaseError> {
    let (emitted, parsed) = emit_parse_emit(&call, DocKind::ToolCall, &[version])?;
    prop_assert!(
        parsed.document == LegacyDocument::ToolCall(call),
        "read back a different tool call:\n{:?}\n{}",
        parsed.document,
        emitted
    );
    Ok(())
}

macro_rules! tool_call_laws {
    ($($name:ident => $version:expr,)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(doc in tool_call($version)) {
                    check_tool_call($version, doc)?;
                }
            )*
        }
    };
}

tool_call_laws! {
    w1_tool_calls_round_trip => W1,
    r0_tool_calls_round_trip => R0,
    r1_tool_calls_round_trip => R1,
    r2_tool_calls_round_trip => R2,
    r3_tool_calls_round_trip => R3,
    r4_tool_calls_round_trip => R4,
    r5_tool_calls_round_trip => R5,
    r6_tool_calls_without_additional_data_round_trip => R6,
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn r4_end_users_round_trip(user in end_user(R4)) {
        let (_, parsed) = emit_parse_emit(&user, DocKind::EndUser, &[R4, R5, R6])?;
        prop_assert_eq!(parsed.document, LegacyDocument::EndUser(user));
    }

    #[test]
    fn r6_end_users_with_null_data_round_trip(user in end_user(R6)) {
        let (_, parsed) = emit_parse_emit(&user, DocKind::EndUser, &[R6])?;
        prop_assert_eq!(parsed.document, LegacyDocument::EndUser(user));
    }

    #[test]
    fn stored_local_outputs_round_trip_in_every_version(value in local()) {
        let (_, parsed) = emit_parse_emit(&value, DocKind::Output, &Version::ALL)?;
        prop_assert_eq!(parsed.document, LegacyDocument::Output(Output::Local(value)));
    }

    #[test]
    fn agent_memory_references_round_trip_from_r2(
        value in any::<u128>().prop_flat_map(|u| memory(run_id(R6, u)))
    ) {
        let (_, parsed) = emit_parse_emit(&value, DocKind::Output, &[R2, R3, R4, R5, R6])?;
        prop_assert_eq!(parsed.document, LegacyDocument::Output(Output::AgentMemory(value)));
    }
}

// ---------------------------------------------------------------------------------------------
// The generators cover what they claim
// ---------------------------------------------------------------------------------------------

fn sample<S: Strategy>(strategy: &S, runner: &mut TestRunner) -> S::Value {
    strategy
        .new_tree(runner)
        .expect("strategies here never reject outright")
        .current()
}

/// What a run's emitted text holds, for the coverage check.
#[derive(Default)]
struct Seen {
    categories: Vec<Category>,
    agent_memory: bool,
    summary_null: bool,
    summary_empty: bool,
    source_present: bool,
    source_absent: bool,
    null_run_ref: bool,
    big_int: bool,
    unicode: bool,
    control: bool,
    extra_keys: bool,
}

#[test]
fn generated_runs_cover_every_category_and_output_kind_of_their_version() {
    let mut runner = TestRunner::deterministic();
    for version in Version::ALL {
        let strategy = run(version);
        let mut seen = Seen::default();
        for _ in 0..300 {
            let doc = sample(&strategy, &mut runner);
            let tree = serde_json::to_value(&doc).unwrap();
            let text = to_sdk_json(&doc);
            let outputs = &tree["outputs"];
            for clar in outputs["clarifications"].as_array().unwrap() {
                let category: Category = serde_json::from_value(clar["category"].clone()).unwrap();
                if !seen.categories.contains(&category) {
                    seen.categories.push(category);
                }
                let obj = clar.as_object().unwrap();
                seen.source_present |= obj.contains_key("source");
                seen.source_absent |= !obj.contains_key("source");
                seen.null_run_ref |= obj.get("plan_run_id") == Some(&Value::Null);
                seen.extra_keys |= obj
                    .keys()
                    .any(|k| ["trace_id", "ui_hint", "ñandú"].contains(&k.as_str()));
                let run_ref = if version == W1 {
                    "workflow_id"
                } else {
                    "plan_run_id"
                };
                assert!(obj.contains_key(run_ref), "{version}: {clar}");
                let has_confirmation = obj.contains_key("require_confirmation");
                if category == Category::Action {
                    assert_eq!(has_confirmation, version >= R4, "{version}: {clar}");
                }
            }
            let step_outputs = outputs["step_outputs"].as_object().unwrap().values();
            for out in step_outputs.chain(Some(&outputs["final_output"]).filter(|o| !o.is_null())) {
                seen.agent_memory |= out.get("output_name").is_some();
                seen.summary_null |= out.get("value").is_some() && out["summary"].is_null();
                seen.summary_empty |= out["summary"] == "";
            }
            seen.big_int |= has_digit_run(&text, 21);
            seen.unicode |= !text.is_ascii();
            seen.control |= text.contains("\\u0000") || text.contains("\\n");
            let obj = tree.as_object().unwrap();
            assert_eq!(
                obj.contains_key("execution_context"),
                version != R6,
                "{version}"
            );
            assert_eq!(obj.contains_key("end_user_id"), version >= R4, "{version}");
            assert_eq!(
                obj.contains_key("plan_run_inputs"),
                version >= R5,
                "{version}"
            );
        }
        let mut want = categories(version);
        want.sort_by_key(|c| c.as_str());
        seen.categories.sort_by_key(|c| c.as_str());
        assert_eq!(seen.categories, want, "{version}: categories generated");
        assert_eq!(
            seen.agent_memory,
            version >= R2,
            "{version}: agent-memory outputs"
        );
        assert!(
            seen.summary_null && seen.summary_empty,
            "{version}: summary null and \"\""
        );
        assert_eq!(
            seen.source_present,
            version == R6,
            "{version}: clarification source"
        );
        assert!(
            seen.source_absent,
            "{version}: clarifications without source"
        );
        assert_eq!(
            seen.null_run_ref,
            version == R6,
            "{version}: null plan_run_id"
        );
        assert!(
            seen.big_int && seen.unicode && seen.control,
            "{version}: tricky values"
        );
        assert!(
            seen.extra_keys,
            "{version}: clarification keys the SDK drops"
        );
    }
}

#[test]
fn generated_plans_have_the_shape_of_their_era() {
    let mut runner = TestRunner::deterministic();
    for era in [
        PlanEra::Alpha,
        PlanEra::V017,
        PlanEra::V018,
        PlanEra::V0112,
        PlanEra::V032,
        PlanEra::V034,
    ] {
        let strategy = plan(era);
        let (mut values, mut conditions, mut extras, mut unsorted, mut inputs) = (0, 0, 0, 0, 0);
        for _ in 0..200 {
            let tree = serde_json::to_value(sample(&strategy, &mut runner)).unwrap();
            for step in tree["steps"].as_array().unwrap() {
                let step = step.as_object().unwrap();
                conditions += usize::from(step.contains_key("condition"));
                extras += usize::from(step.keys().any(|k| STEP_EXTRA_KEYS.contains(&k.as_str())));
                for var in step["inputs"].as_array().unwrap() {
                    values += usize::from(var.get("value").is_some());
                }
            }
            let tools: Vec<&str> = tree["plan_context"]["tool_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap())
                .collect();
            unsorted += usize::from(tools.windows(2).any(|w| w[0] > w[1]));
            let key = match era {
                PlanEra::V032 => "inputs",
                _ => "plan_inputs",
            };
            if let Some(list) = tree.get(key) {
                inputs += list.as_array().unwrap().len().max(1);
            }
            assert_eq!(
                tree.get("inputs").is_some(),
                era == PlanEra::V032,
                "{era:?}"
            );
            assert_eq!(
                tree.get("plan_inputs").is_some(),
                era == PlanEra::V034,
                "{era:?}"
            );
        }
        assert_eq!(values > 0, era.has_value(), "{era:?}: Variable.value");
        assert_eq!(
            conditions > 0,
            era.has_condition(),
            "{era:?}: Step.condition"
        );
        assert_eq!(extras > 0, era.keeps_extras(), "{era:?}: step extras");
        assert_eq!(
            unsorted > 0,
            era == PlanEra::Alpha,
            "{era:?}: unsorted tool_ids"
        );
        assert_eq!(
            inputs > 0,
            matches!(era, PlanEra::V032 | PlanEra::V034),
            "{era:?}: plan inputs"
        );
    }
}

/// Whether `text` holds a run of at least `n` decimal digits (an integer beyond 64 bits).
fn has_digit_run(text: &str, n: usize) -> bool {
    let mut run = 0;
    text.bytes().any(|b| {
        run = if b.is_ascii_digit() { run + 1 } else { 0 };
        run >= n
    })
}
