//! proptest strategies that generate valid values of every V2 type.
//!
//! Every generated value survives a write/read round trip unchanged: secrets are generated in
//! their redacted forms only (writing redacts, so a clear secret cannot come back).

use indexmap::IndexMap;
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use serde_json::{Map, Value};

use crate::{
    ArgValue, BlockClauseType, Clarification, ConditionalBlock, Config, EndUser,
    ExecutionAgentType, GenerativeModelsConfig, HooksDescriptor, LegacyResidue, LegacyVariable,
    LlmProvider, LocalDataValue, LogLevel, LoopBlock, LoopStepType, LoopType, Output, PlanInput,
    PlanRunState, PlanRunV2, PlanV2, PlanningAgentType, RedactedUrl, RunContext, Secret,
    StepOutputValue, StepRef, StepV2, StorageClass, StorageDescriptor, TelemetryDescriptor,
    ToolRegistryDescriptor, REDACTED,
};

/// Short strings over all of Unicode, control characters included.
pub fn text() -> impl Strategy<Value = String> {
    vec(any::<char>(), 0..8).prop_map(String::from_iter)
}

/// A lowercase, hyphenated uuid.
pub fn uuid() -> impl Strategy<Value = String> {
    any::<u128>().prop_map(uuid_text)
}

/// The lowercase, hyphenated text of the uuid `n` (its bytes big-endian, as the SDK writes them).
pub fn uuid_text(n: u128) -> String {
    let hex = format!("{n:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// A `prun-` id.
pub fn plan_run_id() -> impl Strategy<Value = String> {
    uuid().prop_map(|u| format!("prun-{u}"))
}

/// A `plan-` id.
pub fn plan_id() -> impl Strategy<Value = String> {
    uuid().prop_map(|u| format!("plan-{u}"))
}

/// A `clar-` id.
pub fn clarification_id() -> impl Strategy<Value = String> {
    uuid().prop_map(|u| format!("clar-{u}"))
}

/// Any JSON value, numbers included in exact (arbitrary-precision) spellings.
pub fn json_value() -> impl Strategy<Value = Value> {
    let exact_numbers = prop::sample::select(vec![
        "1.50",
        "-0",
        "1e400",
        "12345678901234567890123",
        "0.1",
    ])
    .prop_map(|text| serde_json::from_str::<Value>(text).expect("a JSON number literal"));
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        exact_numbers,
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            vec((text(), inner), 0..4).prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

/// A JSON object, standing in for an embedded JSON Schema.
pub fn json_object() -> impl Strategy<Value = Map<String, Value>> {
    vec((text(), json_value()), 0..3).prop_map(|pairs| pairs.into_iter().collect())
}

fn index_map<V: std::fmt::Debug>(
    values: impl Strategy<Value = V>,
    max: usize,
) -> impl Strategy<Value = IndexMap<String, V>> {
    vec((text(), values), 0..max).prop_map(|pairs| pairs.into_iter().collect())
}

/// A secret in a form that writing leaves unchanged: empty or already masked.
pub fn secret() -> impl Strategy<Value = Secret> {
    prop_oneof![Just(Secret::default()), Just(Secret::new(REDACTED))]
}

/// A Redis URL in a form that writing leaves unchanged (no password, or a masked one).
pub fn redacted_url() -> impl Strategy<Value = RedactedUrl> {
    let user = prop::sample::select(vec!["", ":**********@", "bob:**********@", "bob:@"]);
    let host = "[a-z]{1,8}(:[0-9]{2,5})?";
    let tail = prop::sample::select(vec!["", "/0", "/1?ssl=true", "/0?password=**********"]);
    (user, host, tail)
        .prop_map(|(user, host, tail)| RedactedUrl::new(format!("redis://{user}{host}{tail}")))
}

/// Any output.
pub fn output() -> impl Strategy<Value = Output> {
    prop_oneof![
        (json_value(), option::of(text()))
            .prop_map(|(value, summary)| Output::Local { value, summary }),
        (text(), plan_run_id(), text()).prop_map(|(output_name, plan_run_id, summary)| {
            Output::AgentMemory {
                output_name,
                plan_run_id,
                summary,
            }
        }),
    ]
}

/// Any local data value.
pub fn local_data_value() -> impl Strategy<Value = LocalDataValue> {
    (json_value(), option::of(text()))
        .prop_map(|(value, summary)| LocalDataValue { value, summary })
}

/// Any step output value.
pub fn step_output_value() -> impl Strategy<Value = StepOutputValue> {
    (
        option::of(any::<i64>()),
        option::of(text()),
        text(),
        text(),
        output(),
    )
        .prop_map(
            |(step_num, step_name, output_name, description, output)| StepOutputValue {
                step_num,
                step_name,
                output_name,
                description,
                output,
            },
        )
}

/// Any end user.
pub fn end_user() -> impl Strategy<Value = EndUser> {
    (
        text(),
        text(),
        text(),
        text(),
        index_map(option::of(text()), 3),
    )
        .prop_map(
            |(external_id, name, email, phone_number, additional_data)| EndUser {
                external_id,
                name,
                email,
                phone_number,
                additional_data,
            },
        )
}

/// Any clarification, of any category.
pub fn clarification() -> impl Strategy<Value = Clarification> {
    let common = (
        clarification_id(),
        option::of(plan_run_id()),
        json_value(),
        option::of(any::<i64>()),
        text(),
        any::<bool>(),
        option::of(text()),
        index_map(json_value(), 2),
    );
    let specific = (
        0..7u8,
        option::of(text()),
        option::of(text()),
        option::of(any::<bool>()),
        option::of(vec(json_value(), 0..3)),
        option::of(index_map(json_value(), 3)),
    );
    (common, specific).prop_map(|(common, specific)| {
        let (id, plan_run_id, response, step, user_guidance, resolved, source, extra) = common;
        let (category, name, url, confirm, options, data) = specific;
        match category {
            0 => Clarification::Argument {
                id,
                plan_run_id,
                response,
                step,
                user_guidance,
                resolved,
                source,
                argument_name: name,
                extra,
            },
            1 => Clarification::Action {
                id,
                plan_run_id,
                response,
                step,
                user_guidance,
                resolved,
                source,
                action_url: url,
                require_confirmation: confirm,
                extra,
            },
            2 => Clarification::Input {
                id,
                plan_run_id,
                response,
                step,
                user_guidance,
                resolved,
                source,
                argument_name: name,
                extra,
            },
            3 => Clarification::MultipleChoice {
                id,
                plan_run_id,
                response,
                step,
                user_guidance,
                resolved,
                source,
                argument_name: name,
                options,
                extra,
            },
            4 => Clarification::ValueConfirmation {
                id,
                plan_run_id,
                response,
                step,
                user_guidance,
                resolved,
                source,
                argument_name: name,
                extra,
            },
            5 => Clarification::UserVerification {
                id,
                plan_run_id,
                response,
                step,
                user_guidance,
                resolved,
                source,
                extra,
            },
            _ => Clarification::Custom {
                id,
                plan_run_id,
                response,
                step,
                user_guidance,
                resolved,
                source,
                name,
                data,
                extra,
            },
        }
    })
}

/// Any config (secrets in their redacted forms).
pub fn config() -> impl Strategy<Value = Config> {
    let endpoints = (
        text(),
        text(),
        option::of(secret()),
        text(),
        text(),
        text(),
        text(),
    );
    let keys = (
        secret(),
        secret(),
        secret(),
        secret(),
        secret(),
        secret(),
        secret(),
        secret(),
        secret(),
    );
    let optional = (
        option::of(text()),
        option::of(redacted_url()),
        option::of(llm_provider()),
        option::of(text()),
    );
    let models = vec(option::of(text()), 5).prop_map(|m| GenerativeModelsConfig {
        default_model: m[0].clone(),
        planning_model: m[1].clone(),
        execution_model: m[2].clone(),
        introspection_model: m[3].clone(),
        summarizer_model: m[4].clone(),
    });
    let rest = (
        models,
        index_map(any::<bool>(), 3),
        any::<bool>(),
        prop_oneof![
            Just(StorageClass::Memory),
            Just(StorageClass::Disk),
            Just(StorageClass::Cloud)
        ],
        log_level(),
        text(),
        any::<bool>(),
        prop_oneof![
            Just(ExecutionAgentType::OneShot),
            Just(ExecutionAgentType::Default)
        ],
        any::<i64>(),
    );
    (endpoints, keys, optional, rest).prop_map(|(endpoints, keys, optional, rest)| {
        let (
            portia_api_endpoint,
            portia_dashboard_url,
            portia_api_key,
            azure_openai_endpoint,
            ollama_base_url,
            aws_access_key_id,
            aws_default_region,
        ) = endpoints;
        let (openrouter, groq, openai, anthropic, mistralai, google, azure, grok, aws_secret) =
            keys;
        let (aws_credentials_profile_name, llm_redis_cache_url, llm_provider, storage_dir) =
            optional;
        let (
            models,
            feature_flags,
            argument_clarifications_enabled,
            storage_class,
            default_log_level,
            default_log_sink,
            json_log_serialize,
            execution_agent_type,
            large_output_threshold_tokens,
        ) = rest;
        Config {
            portia_api_endpoint,
            portia_dashboard_url,
            portia_api_key,
            openrouter_api_key: openrouter,
            groq_api_key: groq,
            openai_api_key: openai,
            anthropic_api_key: anthropic,
            mistralai_api_key: mistralai,
            google_api_key: google,
            azure_openai_api_key: azure,
            azure_openai_endpoint,
            grok_api_key: grok,
            ollama_base_url,
            aws_access_key_id,
            aws_secret_access_key: aws_secret,
            aws_default_region,
            aws_credentials_profile_name,
            llm_redis_cache_url,
            llm_provider,
            models,
            feature_flags,
            argument_clarifications_enabled,
            storage_class,
            storage_dir,
            default_log_level,
            default_log_sink,
            json_log_serialize,
            execution_agent_type,
            planning_agent_type: PlanningAgentType::Default,
            large_output_threshold_tokens,
        }
    })
}

fn llm_provider() -> impl Strategy<Value = LlmProvider> {
    prop::sample::select(vec![
        LlmProvider::Openai,
        LlmProvider::Anthropic,
        LlmProvider::Mistralai,
        LlmProvider::Google,
        LlmProvider::Amazon,
        LlmProvider::AzureOpenai,
        LlmProvider::Custom,
        LlmProvider::Ollama,
        LlmProvider::Openrouter,
        LlmProvider::Grok,
        LlmProvider::Groq,
    ])
}

fn log_level() -> impl Strategy<Value = LogLevel> {
    prop::sample::select(vec![
        LogLevel::Trace,
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
    ])
}

/// Any step argument: a literal or a reference.
pub fn arg_value() -> impl Strategy<Value = ArgValue> {
    let step_ref = prop_oneof![
        any::<i64>().prop_map(|index| StepRef::Index { index }),
        text().prop_map(|name| StepRef::Name { name }),
    ];
    prop_oneof![
        json_value().prop_map(|value| ArgValue::Literal { value }),
        (step_ref, option::of(text()), any::<bool>())
            .prop_map(|(step, path, full)| ArgValue::StepOutput { step, path, full }),
        (text(), option::of(text())).prop_map(|(name, path)| ArgValue::Input { name, path }),
    ]
}

/// Any conditional block, nested up to three levels.
pub fn conditional_block() -> impl Strategy<Value = ConditionalBlock> {
    let leaf = vec(any::<i64>(), 0..4).prop_map(|clause_step_indexes| ConditionalBlock {
        clause_step_indexes,
        parent_conditional_block: None,
    });
    leaf.prop_recursive(2, 3, 1, |parent| {
        (vec(any::<i64>(), 0..4), parent).prop_map(|(clause_step_indexes, parent)| {
            ConditionalBlock {
                clause_step_indexes,
                parent_conditional_block: Some(Box::new(parent)),
            }
        })
    })
}

/// Any loop block.
pub fn loop_block() -> impl Strategy<Value = LoopBlock> {
    (any::<i64>(), option::of(any::<i64>())).prop_map(|(start_step_index, end_step_index)| {
        LoopBlock {
            start_step_index,
            end_step_index,
        }
    })
}

/// The fields every step has: `step_name`, `conditional_block`, `loop_block`.
type Base = (String, Option<ConditionalBlock>, Option<LoopBlock>);

fn base() -> impl Strategy<Value = Base> {
    (
        text(),
        option::of(conditional_block()),
        option::of(loop_block()),
    )
}

fn output_schema() -> impl Strategy<Value = Option<Map<String, Value>>> {
    option::of(json_object())
}

fn inputs() -> impl Strategy<Value = Vec<ArgValue>> {
    vec(arg_value(), 0..3)
}

fn args() -> impl Strategy<Value = IndexMap<String, ArgValue>> {
    index_map(arg_value(), 3)
}

/// Any step except `sub_plan` (which [`plan_v2`] adds, to bound the nesting).
pub fn flat_step() -> impl Strategy<Value = StepV2> {
    prop_oneof![
        invoke_tool_step(),
        llm_step(),
        single_tool_agent_step(),
        react_agent_step(),
        conditional_step(),
        loop_step(),
        user_input_step(),
        user_verify_step(),
        exit_step(),
        legacy_step(),
    ]
}

fn invoke_tool_step() -> impl Strategy<Value = StepV2> {
    (base(), text(), args(), output_schema()).prop_map(|(base, tool, args, output_schema)| {
        let (step_name, conditional_block, loop_block) = base;
        StepV2::InvokeTool {
            step_name,
            conditional_block,
            loop_block,
            tool,
            args,
            output_schema,
        }
    })
}

fn llm_step() -> impl Strategy<Value = StepV2> {
    let prompts = (option::of(text()), option::of(text()));
    (base(), text(), inputs(), output_schema(), prompts).prop_map(
        |(base, task, inputs, output_schema, (system_prompt, model))| {
            let (step_name, conditional_block, loop_block) = base;
            StepV2::Llm {
                step_name,
                conditional_block,
                loop_block,
                task,
                inputs,
                output_schema,
                system_prompt,
                model,
            }
        },
    )
}

fn single_tool_agent_step() -> impl Strategy<Value = StepV2> {
    let tool_and_model = (text(), option::of(text()));
    (base(), text(), inputs(), output_schema(), tool_and_model).prop_map(
        |(base, task, inputs, output_schema, (tool, model))| {
            let (step_name, conditional_block, loop_block) = base;
            StepV2::SingleToolAgent {
                step_name,
                conditional_block,
                loop_block,
                task,
                tool,
                inputs,
                output_schema,
                model,
            }
        },
    )
}

fn react_agent_step() -> impl Strategy<Value = StepV2> {
    let agent = (
        vec(text(), 0..3),
        any::<i64>(),
        any::<bool>(),
        option::of(text()),
    );
    (base(), text(), inputs(), output_schema(), agent).prop_map(
        |(base, task, inputs, output_schema, agent)| {
            let (step_name, conditional_block, loop_block) = base;
            let (tools, tool_call_limit, allow_agent_clarifications, model) = agent;
            StepV2::ReactAgent {
                step_name,
                conditional_block,
                loop_block,
                task,
                tools,
                inputs,
                output_schema,
                tool_call_limit,
                allow_agent_clarifications,
                model,
            }
        },
    )
}

fn conditional_step() -> impl Strategy<Value = StepV2> {
    let clause_type = prop::sample::select(vec![
        BlockClauseType::NewConditionalBlock,
        BlockClauseType::AlternateClause,
        BlockClauseType::EndConditionBlock,
    ]);
    (base(), text(), args(), any::<i64>(), clause_type).prop_map(
        |(base, condition, args, clause_index_in_block, block_clause_type)| {
            let (step_name, conditional_block, loop_block) = base;
            StepV2::Conditional {
                step_name,
                conditional_block,
                loop_block,
                condition,
                args,
                clause_index_in_block,
                block_clause_type,
            }
        },
    )
}

fn loop_step() -> impl Strategy<Value = StepV2> {
    let kinds = (
        prop::sample::select(vec![LoopType::While, LoopType::DoWhile, LoopType::ForEach]),
        prop::sample::select(vec![LoopStepType::Start, LoopStepType::End]),
    );
    let iteration = (option::of(text()), option::of(arg_value()), any::<i64>());
    (base(), iteration, args(), kinds).prop_map(
        |(base, (condition, over, index), args, (loop_type, loop_step_type))| {
            let (step_name, conditional_block, loop_block) = base;
            StepV2::Loop {
                step_name,
                conditional_block,
                loop_block,
                condition,
                over,
                loop_type,
                index,
                args,
                loop_step_type,
            }
        },
    )
}

fn user_input_step() -> impl Strategy<Value = StepV2> {
    (base(), text(), option::of(vec(json_value(), 0..3))).prop_map(|(base, message, options)| {
        let (step_name, conditional_block, loop_block) = base;
        StepV2::UserInput {
            step_name,
            conditional_block,
            loop_block,
            message,
            options,
        }
    })
}

fn user_verify_step() -> impl Strategy<Value = StepV2> {
    (base(), text()).prop_map(|(base, message)| {
        let (step_name, conditional_block, loop_block) = base;
        StepV2::UserVerify {
            step_name,
            conditional_block,
            loop_block,
            message,
        }
    })
}

fn exit_step() -> impl Strategy<Value = StepV2> {
    (base(), text(), any::<bool>()).prop_map(|(base, message, error)| {
        let (step_name, conditional_block, loop_block) = base;
        StepV2::Exit {
            step_name,
            conditional_block,
            loop_block,
            message,
            error,
        }
    })
}

fn legacy_step() -> impl Strategy<Value = StepV2> {
    let variable =
        (text(), text()).prop_map(|(name, description)| LegacyVariable { name, description });
    let legacy = (
        text(),
        vec(variable, 0..3),
        option::of(text()),
        text(),
        option::of(text()),
    );
    (base(), legacy).prop_map(|(base, (task, inputs, tool_id, output, condition))| {
        let (step_name, conditional_block, loop_block) = base;
        StepV2::Legacy {
            step_name,
            conditional_block,
            loop_block,
            task,
            inputs,
            tool_id,
            output,
            condition,
        }
    })
}

fn sub_plan_step(plan: impl Strategy<Value = PlanV2>) -> impl Strategy<Value = StepV2> {
    (base(), plan).prop_map(|(base, plan)| {
        let (step_name, conditional_block, loop_block) = base;
        StepV2::SubPlan {
            step_name,
            conditional_block,
            loop_block,
            plan: Box::new(plan),
        }
    })
}

fn plan_with(steps: impl Strategy<Value = Vec<StepV2>>) -> impl Strategy<Value = PlanV2> {
    let plan_input =
        (text(), option::of(text()), json_value()).prop_map(|(name, description, value)| {
            PlanInput {
                name,
                description,
                value,
            }
        });
    (
        plan_id(),
        text(),
        vec(text(), 0..3),
        steps,
        vec(plan_input, 0..3),
        any::<bool>(),
        option::of(json_object()),
    )
        .prop_map(
            |(id, label, tool_ids, steps, plan_inputs, summarize, final_output_schema)| PlanV2 {
                id,
                label,
                tool_ids,
                steps,
                plan_inputs,
                summarize,
                final_output_schema,
            },
        )
}

/// Any plan, with sub-plans nested up to two levels.
pub fn plan_v2() -> impl Strategy<Value = PlanV2> {
    plan_with(vec(flat_step(), 0..4)).prop_recursive(2, 4, 2, |inner| {
        plan_with(vec(
            prop_oneof![3 => flat_step(), 1 => sub_plan_step(inner)],
            0..4,
        ))
    })
}

/// Any step, `sub_plan` included.
pub fn step_v2() -> impl Strategy<Value = StepV2> {
    prop_oneof![3 => flat_step(), 1 => sub_plan_step(plan_v2())]
}

fn plan_run_state() -> impl Strategy<Value = PlanRunState> {
    prop::sample::select(vec![
        PlanRunState::NotStarted,
        PlanRunState::InProgress,
        PlanRunState::NeedClarification,
        PlanRunState::ReadyToResume,
        PlanRunState::Complete,
        PlanRunState::Failed,
    ])
}

/// Any legacy residue.
pub fn legacy_residue() -> impl Strategy<Value = LegacyResidue> {
    (text(), index_map(json_value(), 3)).prop_map(|(source_version, entries)| LegacyResidue {
        source_version,
        entries,
    })
}

/// Any plan run.
pub fn plan_run_v2() -> impl Strategy<Value = PlanRunV2> {
    let head = (
        plan_run_id(),
        plan_run_state(),
        any::<i64>(),
        plan_v2(),
        end_user(),
    );
    let body = (
        vec(step_output_value(), 0..3),
        option::of(output()),
        index_map(local_data_value(), 3),
        config(),
        vec(clarification(), 0..3),
        option::of(legacy_residue()),
    );
    (head, body).prop_map(|(head, body)| {
        let (id, state, current_step_index, plan, end_user) = head;
        let (step_output_values, final_output, plan_run_inputs, config, clarifications, legacy) =
            body;
        PlanRunV2 {
            id,
            state,
            current_step_index,
            plan: plan.into(),
            end_user,
            step_output_values,
            final_output,
            plan_run_inputs,
            config: config.into(),
            clarifications,
            legacy,
        }
    })
}

/// Any run context.
pub fn run_context() -> impl Strategy<Value = RunContext> {
    let storage = prop_oneof![
        Just(StorageDescriptor::Memory {}),
        option::of(text()).prop_map(|dir| StorageDescriptor::Disk { dir }),
        option::of(text()).prop_map(|endpoint| StorageDescriptor::Cloud { endpoint }),
    ];
    (
        plan_run_v2(),
        storage,
        vec(text(), 0..3),
        vec(text(), 0..3),
        any::<bool>(),
        option::of(text()),
    )
        .prop_map(
            |(plan_run, storage, tool_ids, hooks, enabled, endpoint)| RunContext {
                plan_run,
                storage,
                tool_registry: ToolRegistryDescriptor { tool_ids },
                execution_hooks: HooksDescriptor { hooks },
                telemetry: TelemetryDescriptor { enabled, endpoint },
            },
        )
}

/// Makes `proptest::prelude::any::<T>()` use the strategies above.
macro_rules! arbitrary_via {
    ($($ty:ty => $strategy:expr),+ $(,)?) => {$(
        impl Arbitrary for $ty {
            type Parameters = ();
            type Strategy = BoxedStrategy<$ty>;

            fn arbitrary_with((): ()) -> Self::Strategy {
                $strategy.boxed()
            }
        }
    )+};
}

arbitrary_via!(
    PlanRunV2 => plan_run_v2(),
    PlanV2 => plan_v2(),
    StepV2 => step_v2(),
    ArgValue => arg_value(),
    StepOutputValue => step_output_value(),
    Output => output(),
    LocalDataValue => local_data_value(),
    EndUser => end_user(),
    Config => config(),
    Clarification => clarification(),
    LegacyResidue => legacy_residue(),
    RunContext => run_context(),
);
