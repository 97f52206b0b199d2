//! The SDK's `Config` at HEAD, every field required on the wire and secrets never in clear.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::int;
use crate::wire::{self, Nullable};
use planrun_wire::{serde_object, serde_unit};
use planrun_wire::{RedactedUrl, Secret};

/// The feature flag the SDK's validator always sets to `true`.
pub const AGENT_MEMORY_FEATURE_FLAG: &str = "feature_flag_agent_memory_enabled";

/// The configuration a run executes with (the SDK's `Config`, fields in the SDK's order).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "Config")]
pub struct Config {
    /// Base URL of the Portia Cloud API.
    pub portia_api_endpoint: String,
    /// URL of the Portia dashboard.
    pub portia_dashboard_url: String,
    /// Portia Cloud API key (redacted on output); `null` when none is configured.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<Secret>")]
    pub portia_api_key: Option<Secret>,
    /// OpenRouter API key (redacted on output).
    pub openrouter_api_key: Secret,
    /// Groq API key (redacted on output).
    pub groq_api_key: Secret,
    /// OpenAI API key (redacted on output).
    pub openai_api_key: Secret,
    /// Anthropic API key (redacted on output).
    pub anthropic_api_key: Secret,
    /// MistralAI API key (redacted on output).
    pub mistralai_api_key: Secret,
    /// Google Generative AI API key (redacted on output).
    pub google_api_key: Secret,
    /// Azure OpenAI API key (redacted on output).
    pub azure_openai_api_key: Secret,
    /// Azure OpenAI endpoint URL.
    pub azure_openai_endpoint: String,
    /// xAI Grok API key (redacted on output).
    pub grok_api_key: Secret,
    /// Base URL of an Ollama server.
    pub ollama_base_url: String,
    /// AWS access key id (an identifier, not a secret).
    pub aws_access_key_id: String,
    /// AWS secret access key (redacted on output, although the SDK writes it in clear).
    pub aws_secret_access_key: Secret,
    /// AWS region.
    pub aws_default_region: String,
    /// AWS credentials profile name, if one is used instead of keys.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<String>")]
    pub aws_credentials_profile_name: Option<String>,
    /// Redis URL of the LLM response cache (its password redacted on output), if any.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<RedactedUrl>")]
    pub llm_redis_cache_url: Option<RedactedUrl>,
    /// The LLM provider; `null` when none is known (custom models, or no configuration at all).
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<LlmProvider>")]
    pub llm_provider: Option<LlmProvider>,
    /// The model used by each agent.
    pub models: GenerativeModelsConfig,
    /// Feature flags by name.
    pub feature_flags: IndexMap<String, bool>,
    /// Whether the execution agent may raise argument clarifications.
    pub argument_clarifications_enabled: bool,
    /// Where plans and runs are stored.
    pub storage_class: StorageClass,
    /// Directory of disk storage, if set.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<String>")]
    pub storage_dir: Option<String>,
    /// The log level of the SDK's default logger.
    pub default_log_level: LogLevel,
    /// Where the default logger writes, e.g. `sys.stdout`.
    pub default_log_sink: String,
    /// Whether logs are written as JSON.
    pub json_log_serialize: bool,
    /// The execution agent used for steps.
    pub execution_agent_type: ExecutionAgentType,
    /// The planning agent used for planning.
    pub planning_agent_type: PlanningAgentType,
    /// Outputs above this many tokens go to agent memory instead of the run.
    #[serde(deserialize_with = "int::exact")]
    pub large_output_threshold_tokens: i64,
}

impl Config {
    /// The SDK's defaults (`shared/corpus/R6/config/`), without any provider.
    ///
    /// The SDK's validators pick a provider from whichever API key is present and then fill the
    /// default models of that provider. With no key known here, `llm_provider` and every model
    /// stay `null` rather than guessing a provider; secrets are empty (`portia_api_key` is `null`).
    pub fn sdk_defaults() -> Self {
        Config {
            portia_api_endpoint: "https://api.portialabs.ai".to_owned(),
            portia_dashboard_url: "https://app.portialabs.ai".to_owned(),
            portia_api_key: None,
            openrouter_api_key: Secret::default(),
            groq_api_key: Secret::default(),
            openai_api_key: Secret::default(),
            anthropic_api_key: Secret::default(),
            mistralai_api_key: Secret::default(),
            google_api_key: Secret::default(),
            azure_openai_api_key: Secret::default(),
            azure_openai_endpoint: String::new(),
            grok_api_key: Secret::default(),
            ollama_base_url: "http://localhost:11434/v1".to_owned(),
            aws_access_key_id: String::new(),
            aws_secret_access_key: Secret::default(),
            aws_default_region: String::new(),
            aws_credentials_profile_name: None,
            llm_redis_cache_url: None,
            llm_provider: None,
            models: GenerativeModelsConfig::default(),
            feature_flags: IndexMap::from([(AGENT_MEMORY_FEATURE_FLAG.to_owned(), true)]),
            argument_clarifications_enabled: false,
            storage_class: StorageClass::Memory,
            storage_dir: None,
            default_log_level: LogLevel::Info,
            default_log_sink: "sys.stdout".to_owned(),
            json_log_serialize: false,
            execution_agent_type: ExecutionAgentType::OneShot,
            planning_agent_type: PlanningAgentType::Default,
            large_output_threshold_tokens: 1000,
        }
    }
}

/// The model each agent uses, by model name (e.g. `anthropic/claude-3-5-sonnet-latest`).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "GenerativeModelsConfig")]
pub struct GenerativeModelsConfig {
    /// The fallback model for every agent and for SDK tools that need an LLM.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<String>")]
    pub default_model: Option<String>,
    /// The planning agent's model.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<String>")]
    pub planning_model: Option<String>,
    /// The execution agent's model.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<String>")]
    pub execution_model: Option<String>,
    /// The introspection agent's model.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<String>")]
    pub introspection_model: Option<String>,
    /// The summarizer agent's model.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<String>")]
    pub summarizer_model: Option<String>,
}

/// The LLM providers the SDK knows at HEAD.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(remote = "Self", rename_all = "kebab-case")]
#[schemars(rename = "LlmProvider")]
pub enum LlmProvider {
    /// OpenAI's API.
    Openai,
    /// Anthropic's API.
    Anthropic,
    /// Mistral AI's API.
    Mistralai,
    /// Google Generative AI (Gemini).
    Google,
    /// Amazon Bedrock.
    Amazon,
    /// Azure OpenAI Service.
    AzureOpenai,
    /// Models configured by name, without a provider's defaults.
    Custom,
    /// An Ollama server (`ollama_base_url`).
    Ollama,
    /// OpenRouter's API.
    Openrouter,
    /// xAI's Grok API.
    Grok,
    /// Groq's API.
    Groq,
}

/// Where the SDK stores plans and runs.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(remote = "Self", rename_all = "SCREAMING_SNAKE_CASE")]
#[schemars(rename = "StorageClass")]
pub enum StorageClass {
    /// In process memory.
    Memory,
    /// JSON files in a directory.
    Disk,
    /// Portia Cloud.
    Cloud,
}

/// The log levels of the SDK's default logger.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(remote = "Self", rename_all = "SCREAMING_SNAKE_CASE")]
#[schemars(rename = "LogLevel")]
pub enum LogLevel {
    /// Finest-grained tracing.
    Trace,
    /// Debugging detail.
    Debug,
    /// Normal operation (the SDK's default).
    Info,
    /// Something unexpected that was handled.
    Warning,
    /// An operation failed.
    Error,
    /// The SDK cannot go on.
    Critical,
}

/// The execution agent the SDK uses for steps.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(remote = "Self", rename_all = "SCREAMING_SNAKE_CASE")]
#[schemars(rename = "ExecutionAgentType")]
pub enum ExecutionAgentType {
    /// The one-shot agent (the SDK's default).
    OneShot,
    /// The default (multi-turn) agent.
    Default,
}

/// The planning agent the SDK uses.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(remote = "Self", rename_all = "SCREAMING_SNAKE_CASE")]
#[schemars(rename = "PlanningAgentType")]
pub enum PlanningAgentType {
    /// The default planning agent (the only one at HEAD).
    Default,
}

serde_object!(Config, GenerativeModelsConfig);
serde_unit!(
    LlmProvider,
    StorageClass,
    LogLevel,
    ExecutionAgentType,
    PlanningAgentType
);
