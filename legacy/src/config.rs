//! The SDK's `Config` (as HEAD writes it). No store holds one; users hand one to the converter. Secret
//! fields are typed so that they cannot be printed or serialised in clear, including the
//! `aws_secret_access_key` that the SDK itself leaks and passwords inside `llm_redis_cache_url`.
//! The secret types and the URL masking rule are `planrun_wire`'s, the same ones V2 writes with,
//! so what [`Config::clear_secrets`] reports is exactly what the V2 output masks.

use std::borrow::Cow;

use indexmap::IndexMap;
use planrun_wire::secret::string_schema;
use planrun_wire::{RedactedUrl as SecretUrl, Secret};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::scalar::{lax_present_bool, lax_present_int, LaxBool, LaxBoolValue, LaxInt};
use planrun_wire::serde_object;
use planrun_wire::strict::present;

/// Schema stand-in for [`Secret`]: the legacy schemas name it `Secret` and word its rule for
/// legacy input (any string is read), where the V2 schemas use the wire crate's wording.
struct SecretSchema;

impl JsonSchema for SecretSchema {
    fn schema_name() -> Cow<'static, str> {
        "Secret".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        string_schema("A secret (an API key). Any string is read; it is only ever written masked: \"**********\" when set, \"\" when empty.")
    }
}

/// Schema stand-in for [`SecretUrl`], under the legacy schemas' name `SecretUrl`.
struct SecretUrlSchema;

impl JsonSchema for SecretUrlSchema {
    fn schema_name() -> Cow<'static, str> {
        "SecretUrl".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        string_schema("A URL that may embed a password (`redis://user:password@host`). Any string is read; it is written with the password masked as \"**********\".")
    }
}

/// HEAD `Config`; every key is optional (a user's file names only what it sets) and kept in the
/// SDK's order; a key that is present holds a value of its type (`null` only where the SDK's
/// field is nullable). Unknown keys are ignored, as the SDK does. Secrets are never written in
/// clear.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self", default)]
#[schemars(rename = "Config")]
pub struct Config {
    /// The Portia cloud API (the SDK's default `https://api.portialabs.ai`).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub portia_api_endpoint: Option<String>,
    /// The Portia dashboard (the SDK's default `https://app.portialabs.ai`).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub portia_dashboard_url: Option<String>,
    /// The Portia API key, or null (a `SecretStr` in the SDK).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<SecretSchema>")]
    pub portia_api_key: Option<Option<Secret>>,
    /// The OpenRouter API key (a `SecretStr` in the SDK).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "SecretSchema")]
    pub openrouter_api_key: Option<Secret>,
    /// The Groq API key (a `SecretStr` in the SDK).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "SecretSchema")]
    pub groq_api_key: Option<Secret>,
    /// The OpenAI API key (a `SecretStr` in the SDK).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "SecretSchema")]
    pub openai_api_key: Option<Secret>,
    /// The Anthropic API key (a `SecretStr` in the SDK).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "SecretSchema")]
    pub anthropic_api_key: Option<Secret>,
    /// The Mistral AI API key (a `SecretStr` in the SDK).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "SecretSchema")]
    pub mistralai_api_key: Option<Secret>,
    /// The Google API key (a `SecretStr` in the SDK).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "SecretSchema")]
    pub google_api_key: Option<Secret>,
    /// The Azure OpenAI API key (a `SecretStr` in the SDK).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "SecretSchema")]
    pub azure_openai_api_key: Option<Secret>,
    /// The Azure OpenAI endpoint.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub azure_openai_endpoint: Option<String>,
    /// The Grok (xAI) API key (a `SecretStr` in the SDK).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "SecretSchema")]
    pub grok_api_key: Option<Secret>,
    /// The Ollama endpoint (the SDK's default `http://localhost:11434/v1`).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub ollama_base_url: Option<String>,
    /// The AWS access key id (plain text in the SDK too).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub aws_access_key_id: Option<String>,
    /// The AWS secret access key: a plain `str` in the SDK, which writes it in clear; a secret
    /// here, never written in clear.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "SecretSchema")]
    pub aws_secret_access_key: Option<Secret>,
    /// The AWS region.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub aws_default_region: Option<String>,
    /// The AWS credentials profile, or null.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub aws_credentials_profile_name: Option<Option<String>>,
    /// The LLM cache's Redis URL, or null; it may embed a password, which is never written in
    /// clear.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<SecretUrlSchema>")]
    pub llm_redis_cache_url: Option<Option<SecretUrl>>,
    /// One of the SDK's `LLMProvider` values (`openai`, `anthropic`, `mistralai`, `google`,
    /// `amazon`, `azure-openai`, `custom`, `ollama`, `openrouter`, `grok`, `groq`), or null.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub llm_provider: Option<Option<String>>,
    /// The models by role (`default_model`, `planning_model`, `execution_model`,
    /// `introspection_model`, `summarizer_model`): a model name, a model object or null each.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "IndexMap<String, Value>")]
    pub models: Option<IndexMap<String, Value>>,
    /// Feature flags by name (the SDK always sets `feature_flag_agent_memory_enabled`).
    #[serde(
        deserialize_with = "lax_present_bool_map",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "IndexMap<String, LaxBool>")]
    pub feature_flags: Option<IndexMap<String, bool>>,
    /// Whether the agents raise clarifications for missing arguments.
    #[serde(
        deserialize_with = "lax_present_bool",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "LaxBool")]
    pub argument_clarifications_enabled: Option<bool>,
    /// Where runs are stored: `MEMORY`, `DISK` or `CLOUD`.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub storage_class: Option<String>,
    /// The disk storage's directory, or null for `.portia`.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub storage_dir: Option<Option<String>>,
    /// The log level, `TRACE` to `CRITICAL`.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub default_log_level: Option<String>,
    /// Where logs go (the SDK's default `sys.stdout`).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub default_log_sink: Option<String>,
    /// Whether logs are written as JSON.
    #[serde(
        deserialize_with = "lax_present_bool",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "LaxBool")]
    pub json_log_serialize: Option<bool>,
    /// The execution agent: `ONE_SHOT` or `DEFAULT`.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub execution_agent_type: Option<String>,
    /// The planning agent: `DEFAULT`.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub planning_agent_type: Option<String>,
    /// The output size, in tokens, above which outputs go to agent memory.
    #[serde(
        deserialize_with = "lax_present_int",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "LaxInt")]
    pub large_output_threshold_tokens: Option<i64>,
}

serde_object!(Config);

/// Reads a map of lax booleans (feature flags) whose key, when present, holds an object.
fn lax_present_bool_map<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<IndexMap<String, bool>>, D::Error> {
    let map = IndexMap::<String, LaxBoolValue>::deserialize(deserializer)?;
    Ok(Some(map.into_iter().map(|(k, v)| (k, v.0)).collect()))
}

impl Config {
    /// Names of the fields that held a secret in clear in the input (all are masked on output).
    pub fn clear_secrets(&self) -> Vec<&'static str> {
        let secrets: [(&'static str, Option<&Secret>); 10] = [
            (
                "portia_api_key",
                self.portia_api_key.as_ref().and_then(Option::as_ref),
            ),
            ("openrouter_api_key", self.openrouter_api_key.as_ref()),
            ("groq_api_key", self.groq_api_key.as_ref()),
            ("openai_api_key", self.openai_api_key.as_ref()),
            ("anthropic_api_key", self.anthropic_api_key.as_ref()),
            ("mistralai_api_key", self.mistralai_api_key.as_ref()),
            ("google_api_key", self.google_api_key.as_ref()),
            ("azure_openai_api_key", self.azure_openai_api_key.as_ref()),
            ("grok_api_key", self.grok_api_key.as_ref()),
            ("aws_secret_access_key", self.aws_secret_access_key.as_ref()),
        ];
        let mut names: Vec<&'static str> = secrets
            .into_iter()
            .filter(|(_, s)| s.is_some_and(Secret::is_clear))
            .map(|(name, _)| name)
            .collect();
        if self
            .llm_redis_cache_url
            .as_ref()
            .and_then(Option::as_ref)
            .is_some_and(SecretUrl::has_password)
        {
            names.push("llm_redis_cache_url");
        }
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_show() {
        let config: Config = serde_json::from_str(
            r#"{"openai_api_key": "sk-live-123", "aws_secret_access_key": "AWS-PLAINTEXT-SECRET",
                "llm_redis_cache_url": "redis://user:hunter2@cache:6379/0", "groq_api_key": ""}"#,
        )
        .unwrap();
        let shown = format!(
            "{config:?} {} {}",
            serde_json::to_string(&config).unwrap(),
            config.openai_api_key.as_ref().unwrap()
        );
        for secret in ["sk-live-123", "AWS-PLAINTEXT-SECRET", "hunter2"] {
            assert!(!shown.contains(secret), "{secret} leaked: {shown}");
        }
        assert!(shown.contains("redis://user:**********@cache:6379/0"));
        assert!(shown.contains(r#""groq_api_key":"""#));
        assert_eq!(
            config.clear_secrets(),
            [
                "openai_api_key",
                "aws_secret_access_key",
                "llm_redis_cache_url"
            ]
        );
        assert_eq!(config.openai_api_key.unwrap().expose(), "sk-live-123");
    }

    /// The legacy side once masked only a `user:password` user-info, so a `?password=` query
    /// parameter or a lone user-info reached the V2 output masked (V2's rule) while the loss
    /// report, built from [`Config::clear_secrets`], said nothing of it. Both now use one rule.
    #[test]
    fn redis_urls_are_masked_and_reported_as_v2_masks_them() {
        for (url, written) in [
            (
                "redis://:pw@h:6379/0?password=x",
                "redis://:**********@h:6379/0?password=**********",
            ),
            ("redis://secret@h", "redis://**********@h"),
            ("redis://h/0?Password=x", "redis://h/0?Password=**********"),
        ] {
            let input = serde_json::json!({ "storage_class": "DISK", "llm_redis_cache_url": url });
            let input = input.to_string();
            let parsed = crate::parse(input.as_bytes()).unwrap();
            let crate::LegacyDocument::Config(config) = &parsed.document else {
                panic!("{url}: not read as a config");
            };
            let emitted = parsed.to_sdk_json();
            assert!(
                emitted.contains(&format!("\"{written}\"")),
                "{url}: {emitted}"
            );
            assert_eq!(
                planrun_v2::RedactedUrl::new(url).to_string(),
                written,
                "{url}"
            );
            assert_eq!(config.clear_secrets(), ["llm_redis_cache_url"], "{url}");
        }
    }

    /// An empty password (`redis://bob:@h`) is no secret: V2 keeps it, the legacy side used to
    /// write the mask in its place and report a redaction. An already masked URL reports nothing.
    #[test]
    fn urls_without_a_secret_in_clear_are_kept_and_not_reported() {
        for url in [
            "redis://bob:@h",
            "redis://h:6379/0",
            "redis://:**********@h?password=**********",
        ] {
            let config: Config =
                serde_json::from_value(serde_json::json!({ "llm_redis_cache_url": url })).unwrap();
            assert_eq!(
                serde_json::to_value(&config).unwrap()["llm_redis_cache_url"],
                url
            );
            assert!(config.clear_secrets().is_empty(), "{url}");
        }
    }
}
