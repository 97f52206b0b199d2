//! proptest strategies generating every legacy document as the SDK of its version writes it
//! (feature `testkit`): runs of W1 and R0–R6, plans of each era, end users, stored outputs, tool
//! calls, step output values, configs and RunContext snapshots. Shared by this crate's round-trip
//! properties and the schema agreement tests.
//!
//! The generators write what the SDK of each version writes: the
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
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Number, Value};

use crate::json::parse_value;
use crate::version::Version::{self, *};
use crate::{
    stringify, AgentMemoryValue, Category, Clarification, ClarificationId, Config, EndUser,
    ExecutionContextR0, ExecutionContextR3, ExecutionContextR4, ExecutionContextW1, LegacyRun,
    LocalDataValue, Output, Outputs, Plan, PlanContext, PlanId, PlanInput, PlanInputV032, Prefix,
    PrefixedId, RunContextSnapshot, RunId, RunR1, RunR2, RunR3, RunR4, RunR5, RunR6, RunRefKey,
    RunState, RunW1, Secret, SecretUrl, Step, StepOutputValue, ToolCallRecord, ToolCallStatus,
    Variable, MAX_SAFE_INTEGER,
};

// ---------------------------------------------------------------------------------------------
// Scalars and native JSON
// ---------------------------------------------------------------------------------------------

/// Strings that have tripped JSON writers before: empty, unicode (astral too), escapes, control
/// characters, the line separators JavaScript chokes on, and strings that look like JSON.
pub const TRICKY: &[&str] = &[
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

/// Any string, weighted towards the tricky ones.
pub fn text() -> impl Strategy<Value = String> + Clone {
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
pub fn key() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        3 => "[a-z_]{1,10}",
        2 => "\\$[a-z_]{1,10}",
        1 => text(),
        1 => select(&["a/b", "~0", "~1/~", "$ñandú", "", "📎"][..]).prop_map(str::to_owned),
    ]
}

/// The JSON number written `text`, its digits kept exactly.
pub fn number(text: &str) -> Value {
    parse_value(text.as_bytes()).expect("number text is JSON")
}

/// Integers beyond 64 bits, built from their text (the only way to get one into a `Number`).
pub fn big_int() -> impl Strategy<Value = Value> + Clone {
    "-?[1-9][0-9]{19,40}".prop_map(|t| number(&t))
}

/// Floats as pydantic writes them (shortest round-trip text, `e16` not `e+16`).
pub fn float() -> impl Strategy<Value = Value> + Clone {
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

/// A JSON scalar of any type, integers beyond 64 bits and tricky strings included.
pub fn json_leaf() -> impl Strategy<Value = Value> + Clone {
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
pub fn json() -> impl Strategy<Value = Value> + Clone {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            vec((key(), inner), 0..4).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A JSON object of up to four entries.
pub fn json_object() -> impl Strategy<Value = Map<String, Value>> + Clone {
    vec((key(), json()), 0..4).prop_map(|kv| kv.into_iter().collect())
}

/// A map of strings (`additional_data`).
pub fn string_map() -> impl Strategy<Value = IndexMap<String, String>> + Clone {
    vec((key(), text()), 0..3).prop_map(|kv| kv.into_iter().collect())
}

/// A step index: usually small, sometimes anywhere in the lax-integer range (±(2^53 − 1)).
pub fn step_index() -> impl Strategy<Value = i64> + Clone {
    prop_oneof![3 => -1i64..12, 1 => -MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER]
}

/// A run state.
pub fn state() -> impl Strategy<Value = RunState> + Clone {
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

/// An end user's external id.
pub fn end_user_id() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        select(&["local", "user-123", "ada@example.com"][..]).prop_map(str::to_owned),
        text()
    ]
}

/// The id of a run of `version` (its prefix) with `uuid`.
pub fn run_id(version: Version, uuid: u128) -> RunId {
    RunId(PrefixedId::new(version.run_prefix(), uuid))
}

/// A plan id with `uuid`.
pub fn plan_id(uuid: u128) -> PlanId {
    PlanId(PrefixedId::new(Prefix::Plan, uuid))
}

// ---------------------------------------------------------------------------------------------
// Outputs
// ---------------------------------------------------------------------------------------------

/// A stringified `value` as the SDK stores it: plain strings, `""` (what `None` becomes), and the
/// `json.dumps` text of native values (which is indistinguishable from a JSON-looking string).
pub fn stored_value() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        2 => text(),
        1 => Just(String::new()),
        2 => json().prop_map(stringify),
    ]
}

/// `null` and `""` are different summaries and must stay different.
pub fn summary() -> impl Strategy<Value = Option<String>> + Clone {
    prop_oneof![Just(None), Just(Some(String::new())), text().prop_map(Some)]
}

/// A LocalDataValue (the W1–R1 `Output`).
pub fn local() -> impl Strategy<Value = LocalDataValue> + Clone {
    (stored_value(), summary()).prop_map(|(value, summary)| LocalDataValue { value, summary })
}

/// An agent-memory reference owned by `run` or by another `prun-` run.
pub fn memory(run: RunId) -> impl Strategy<Value = AgentMemoryValue> + Clone {
    (key(), prop::option::of(any::<u128>()), text()).prop_map(
        move |(output_name, owner, summary)| AgentMemoryValue {
            output_name,
            plan_run_id: owner.map_or(run, |u| run_id(R6, u)),
            summary,
        },
    )
}

/// An R2+ output: inline or in agent memory.
pub fn output(run: RunId) -> impl Strategy<Value = Output> + Clone {
    prop_oneof![
        3 => local().prop_map(Output::Local),
        1 => memory(run).prop_map(Output::AgentMemory),
    ]
}

// ---------------------------------------------------------------------------------------------
// Clarifications
// ---------------------------------------------------------------------------------------------

/// The categories a version's SDK can write.
pub fn categories(version: Version) -> Vec<Category> {
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
pub const CLARIFICATION_EXTRA_KEYS: &[&str] = &[
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
pub struct ClarificationParts {
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

/// The parts of a clarification of `version`; [`clarification`] assembles them.
pub fn clarification_parts(version: Version) -> impl Strategy<Value = ClarificationParts> + Clone {
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
        (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).prop_map(Some)
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
pub fn clarification(version: Version, run: RunId, p: ClarificationParts) -> Clarification {
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

/// The outputs container of a run of `version` whose outputs are drawn from `out`.
pub fn outputs<O, S>(version: Version, run: RunId, out: S) -> impl Strategy<Value = Outputs<O>>
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

/// An execution context's system-prompt extension.
pub fn extension() -> impl Strategy<Value = Option<Vec<String>>> + Clone {
    prop::option::of(vec(text(), 0..3))
}

/// An execution context's end user id.
pub fn ec_end_user() -> impl Strategy<Value = Option<String>> + Clone {
    prop::option::of(end_user_id())
}

/// A run's `plan_run_inputs`.
pub fn plan_run_inputs() -> impl Strategy<Value = IndexMap<String, LocalDataValue>> + Clone {
    vec((key(), local()), 0..3).prop_map(|kv| kv.into_iter().collect())
}

/// A run as the SDK of `version` writes it.
pub fn run(version: Version) -> BoxedStrategy<LegacyRun> {
    match version {
        W1 => run_w1(),
        R0 | R1 => run_r0_r1(version),
        R2 => run_r2(),
        R3 => run_r3(),
        R4 => run_r4(),
        R5 => run_r5(),
        R6 => run_r6(),
    }
}

/// A run as the SDK of W1 writes it.
fn run_w1() -> BoxedStrategy<LegacyRun> {
    (
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
        .boxed()
}

/// A run as the SDK of R0 or R1 writes it.
fn run_r0_r1(version: Version) -> BoxedStrategy<LegacyRun> {
    (
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
        .boxed()
}

/// A run as the SDK of R2 writes it.
fn run_r2() -> BoxedStrategy<LegacyRun> {
    (
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
        .boxed()
}

/// A run as the SDK of R3 writes it.
fn run_r3() -> BoxedStrategy<LegacyRun> {
    (head(R3), ec_end_user(), string_map())
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
        .boxed()
}

/// A run as the SDK of R4 writes it.
fn run_r4() -> BoxedStrategy<LegacyRun> {
    (head(R4), string_map(), end_user_id())
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
        .boxed()
}

/// A run as the SDK of R5 writes it.
fn run_r5() -> BoxedStrategy<LegacyRun> {
    (head(R5), string_map(), end_user_id(), plan_run_inputs())
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
        .boxed()
}

/// A run as the SDK of R6 writes it.
fn run_r6() -> BoxedStrategy<LegacyRun> {
    (head(R6), end_user_id(), plan_run_inputs())
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
        .boxed()
}

// ---------------------------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------------------------

/// The plan shapes, by the release that wrote them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanEra {
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
    /// Every era, oldest first.
    pub const ALL: [PlanEra; 6] = [
        PlanEra::Alpha,
        PlanEra::V017,
        PlanEra::V018,
        PlanEra::V0112,
        PlanEra::V032,
        PlanEra::V034,
    ];

    /// Run versions whose SDK writes plans of this era.
    pub fn versions(self) -> &'static [Version] {
        match self {
            PlanEra::Alpha => &[W1, R0],
            PlanEra::V017 | PlanEra::V018 => &[R1],
            PlanEra::V0112 => &[R2, R3, R4],
            PlanEra::V032 => &[R5],
            PlanEra::V034 => &[R6],
        }
    }
    /// Whether plans of this era write `Variable.value`.
    pub fn has_value(self) -> bool {
        matches!(self, PlanEra::Alpha | PlanEra::V017 | PlanEra::V018)
    }
    /// Whether plans of this era write `Step.condition`.
    pub fn has_condition(self) -> bool {
        !matches!(self, PlanEra::Alpha | PlanEra::V017)
    }
    /// Whether steps of this era keep keys the model does not declare.
    pub fn keeps_extras(self) -> bool {
        self != PlanEra::Alpha
    }
}

/// Undeclared keys that generated steps may carry, to prove they are kept.
pub const STEP_EXTRA_KEYS: &[&str] = &["custom_key", "nested_extra", "priority", "ñ_meta"];

/// A variable's name, value and description.
pub type VariableParts = (String, Value, String);
/// A step's task, inputs, tool, output, condition and extra keys.
pub type StepParts = (
    String,
    Vec<VariableParts>,
    Option<String>,
    String,
    Option<String>,
    Vec<(String, Value)>,
);

/// A tool id.
pub fn tool_id() -> impl Strategy<Value = String> + Clone {
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

/// The parts of a plan step; [`plan`] assembles them.
pub fn step_parts() -> impl Strategy<Value = StepParts> + Clone {
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

/// A plan as the SDK of `era` writes it.
pub fn plan(era: PlanEra) -> impl Strategy<Value = Plan> {
    // Input names are unique per plan, as the SDK enforces from v0.3.2.
    let v032_inputs = vec((key(), text()), 0..3).prop_map(|v| unique_by_name(v, |i| &i.0));
    let v034_inputs = vec((key(), prop::option::of(text()), json()), 0..3)
        .prop_map(|v| unique_by_name(v, |i| &i.0));
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

/// `items` without those whose name an earlier item already has.
fn unique_by_name<T>(items: Vec<T>, name: impl Fn(&T) -> &String) -> Vec<T> {
    let mut seen = std::collections::HashSet::new();
    items
        .into_iter()
        .filter(|item| seen.insert(name(item).clone()))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// End users, tool calls
// ---------------------------------------------------------------------------------------------

/// An end user; `null` additional data only from v0.3.5 (R6).
pub fn end_user(version: Version) -> impl Strategy<Value = EndUser> {
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

/// A tool call record as the SDK of `version` posts it.
pub fn tool_call(version: Version) -> impl Strategy<Value = ToolCallRecord> {
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
// RunContext (HEAD): step output values, config, snapshots
// ---------------------------------------------------------------------------------------------

/// A HEAD `StepOutputValue`: native JSON value, description, step name and number.
pub fn step_output_value() -> impl Strategy<Value = StepOutputValue> + Clone {
    (json(), text(), "[a-z_]{1,12}", 0i64..40).prop_map(
        |(value, description, step_name, step_num)| StepOutputValue {
            value,
            description,
            step_name,
            step_num,
        },
    )
}

/// A secret as a user's config holds it: empty, the SDK's mask, or a key in clear.
fn secret() -> impl Strategy<Value = Secret> + Clone {
    prop_oneof![
        Just(Secret::new("")),
        Just(Secret::new(crate::MASK)),
        "sk-[A-Za-z0-9]{8,24}".prop_map(Secret::new),
    ]
}

/// A HEAD `Config` naming any subset of its keys (secrets in clear or masked).
pub fn config() -> impl Strategy<Value = Config> {
    let model = prop_oneof![
        Just(Value::Null),
        select(
            &[
                "openai/gpt-4.1",
                "anthropic/claude-3-5-sonnet-latest",
                "openai/o4-mini"
            ][..]
        )
        .prop_map(Value::from),
        json_object().prop_map(Value::Object),
    ];
    let models = vec(
        (
            select(
                &[
                    "default_model",
                    "planning_model",
                    "execution_model",
                    "introspection_model",
                    "summarizer_model",
                ][..],
            )
            .prop_map(str::to_owned),
            model,
        ),
        0..5,
    )
    .prop_map(|kv| kv.into_iter().collect::<IndexMap<String, Value>>());
    let url = prop_oneof![
        Just("redis://localhost:6379/0".to_owned()),
        "redis://[a-z]{1,6}:[a-z0-9]{1,10}@cache:6379/0",
    ];
    (
        (
            prop::option::of(Just("https://api.portialabs.ai".to_owned())),
            prop::option::of(prop::option::of(secret())),
            prop::option::of(secret()),
            prop::option::of(secret()),
            prop::option::of(secret()),
            prop::option::of(text()),
        ),
        (
            prop::option::of(secret()),
            prop::option::of(prop::option::of(url.prop_map(SecretUrl::new))),
            prop::option::of(prop::option::of(
                select(&["openai", "anthropic", "azure-openai", "ollama"][..])
                    .prop_map(str::to_owned),
            )),
            prop::option::of(models),
            prop::option::of(
                vec(("[a-z_]{1,20}", any::<bool>()), 0..3)
                    .prop_map(|kv| kv.into_iter().collect::<IndexMap<String, bool>>()),
            ),
            prop::option::of(any::<bool>()),
        ),
        (
            prop::option::of(select(&["MEMORY", "DISK", "CLOUD"][..]).prop_map(str::to_owned)),
            prop::option::of(prop::option::of(text())),
            prop::option::of(any::<bool>()),
            prop::option::of(0i64..100_000),
            prop::option::of(select(&["ONE_SHOT", "DEFAULT"][..]).prop_map(str::to_owned)),
        ),
    )
        .prop_map(
            |(
                (endpoint, portia_key, openai, anthropic, google, region),
                (aws_secret, redis, provider, models, flags, clarifications),
                (storage_class, storage_dir, json_logs, threshold, agent_type),
            )| Config {
                portia_api_endpoint: endpoint,
                portia_api_key: portia_key,
                openai_api_key: openai,
                anthropic_api_key: anthropic,
                google_api_key: google,
                aws_secret_access_key: aws_secret,
                aws_default_region: region,
                llm_redis_cache_url: redis,
                llm_provider: provider,
                models,
                feature_flags: flags,
                argument_clarifications_enabled: clarifications,
                storage_class,
                storage_dir,
                json_log_serialize: json_logs,
                large_output_threshold_tokens: threshold,
                execution_agent_type: agent_type,
                ..Config::default()
            },
        )
}

/// A RunContext snapshot: an R6 run, its plan, end user, step output values and config.
pub fn run_context_snapshot() -> impl Strategy<Value = RunContextSnapshot> {
    (
        run(R6),
        plan(PlanEra::V034),
        end_user(R6),
        vec(step_output_value(), 0..4),
        config(),
    )
        .prop_map(|(run, legacy_plan, end_user, step_output_values, config)| {
            let LegacyRun::R6(plan_run) = run else {
                unreachable!("run(R6) makes R6 runs")
            };
            RunContextSnapshot {
                legacy_plan,
                plan_run,
                end_user,
                step_output_values,
                config,
            }
        })
}
