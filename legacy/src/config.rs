//! The SDK's `Config` (HEAD, §5). No store holds one; users hand one to the converter. Secret
//! fields are typed so that they cannot be printed or serialised in clear, including the
//! `aws_secret_access_key` that the SDK itself leaks and passwords inside `llm_redis_cache_url`.

use std::fmt;

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// What every secret is written as: the SDK's own `SecretStr` mask.
pub const MASK: &str = "**********";

/// A secret string: Debug, Display and Serialize show only the mask (`""` stays `""`).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The secret in clear, for code that must use it; never for output.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the input held a real secret (not empty, not already masked).
    pub fn is_clear(&self) -> bool {
        !self.0.is_empty() && self.0 != MASK
    }

    fn masked(&self) -> &'static str {
        if self.0.is_empty() {
            ""
        } else {
            MASK
        }
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({:?})", self.masked())
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.masked())
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.masked())
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Secret)
    }
}

/// A URL that may embed a password (`redis://user:pw@host`); shown with the password masked.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretUrl(String);

impl SecretUrl {
    /// Wraps a URL.
    pub fn new(value: impl Into<String>) -> Self {
        SecretUrl(value.into())
    }

    /// The URL in clear, for code that must connect with it; never for output.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the URL carries a password in clear.
    pub fn has_password(&self) -> bool {
        self.password_range().is_some_and(|r| &self.0[r] != MASK)
    }

    fn password_range(&self) -> Option<std::ops::Range<usize>> {
        let authority_start = self.0.find("://")? + 3;
        let authority_end = self.0[authority_start..]
            .find(['/', '?', '#'])
            .map_or(self.0.len(), |i| authority_start + i);
        let at = self.0[authority_start..authority_end].rfind('@')? + authority_start;
        let colon = self.0[authority_start..at].find(':')? + authority_start;
        Some(colon + 1..at)
    }

    /// The URL with its password replaced by the mask.
    pub fn redacted(&self) -> String {
        match self.password_range() {
            Some(range) => format!("{}{MASK}{}", &self.0[..range.start], &self.0[range.end..]),
            None => self.0.clone(),
        }
    }
}

impl fmt::Debug for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretUrl({:?})", self.redacted())
    }
}

impl Serialize for SecretUrl {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.redacted())
    }
}

impl<'de> Deserialize<'de> for SecretUrl {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(SecretUrl)
    }
}

fn present<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

macro_rules! config_struct {
    ($($(#[$doc:meta])* $field:ident: $ty:ty,)*) => {
        /// HEAD `Config`; every key is optional (a user's file names only what it sets) and kept in
        /// the SDK's order. Unknown keys are ignored, as the SDK does.
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
        pub struct Config {
            $(
                $(#[$doc])*
                #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
                pub $field: Option<$ty>,
            )*
        }
    };
}

config_struct! {
    /// Portia cloud API.
    portia_api_endpoint: String,
    /// Portia dashboard.
    portia_dashboard_url: String,
    /// Nullable `SecretStr`.
    portia_api_key: Option<Secret>,
    /// `SecretStr`.
    openrouter_api_key: Secret,
    /// `SecretStr`.
    groq_api_key: Secret,
    /// `SecretStr`.
    openai_api_key: Secret,
    /// `SecretStr`.
    anthropic_api_key: Secret,
    /// `SecretStr`.
    mistralai_api_key: Secret,
    /// `SecretStr`.
    google_api_key: Secret,
    /// `SecretStr`.
    azure_openai_api_key: Secret,
    /// Azure endpoint.
    azure_openai_endpoint: String,
    /// `SecretStr`.
    grok_api_key: Secret,
    /// Ollama endpoint.
    ollama_base_url: String,
    /// Plain in the SDK.
    aws_access_key_id: String,
    /// A plain `str` in the SDK, which dumps it in clear; a secret here.
    aws_secret_access_key: Secret,
    /// AWS region.
    aws_default_region: String,
    /// AWS profile.
    aws_credentials_profile_name: Option<String>,
    /// May embed a password.
    llm_redis_cache_url: Option<SecretUrl>,
    /// One of the SDK's `LLMProvider` values, or null.
    llm_provider: Option<String>,
    /// `default_model`, `planning_model`, …: a string, a model object or null each.
    models: IndexMap<String, Value>,
    /// Feature flags by name.
    feature_flags: IndexMap<String, bool>,
    /// Whether argument clarifications are on.
    argument_clarifications_enabled: bool,
    /// `MEMORY`, `DISK` or `CLOUD`.
    storage_class: String,
    /// Directory of disk storage.
    storage_dir: Option<String>,
    /// `TRACE` … `CRITICAL`.
    default_log_level: String,
    /// Log sink.
    default_log_sink: String,
    /// JSON logs.
    json_log_serialize: bool,
    /// `ONE_SHOT` or `DEFAULT`.
    execution_agent_type: String,
    /// `DEFAULT`.
    planning_agent_type: String,
    /// Output size above which outputs go to agent memory.
    large_output_threshold_tokens: i64,
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
}
