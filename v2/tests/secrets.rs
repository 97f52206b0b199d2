//! Secrets are never shown or written in clear, whatever the input held.

use crate::common;

use common::{corpus, corpus_text, fixture_run};
use planrun_v2::{redact_url, Config, PlanRunV2, RedactedUrl, Secret, REDACTED};

const KEY: &str = "sk-live-0123456789abcdef";
const PASSWORD: &str = "hunter2-Pa55";

fn config_full_of_secrets() -> Config {
    Config {
        portia_api_key: Some(Secret::new(KEY)),
        openrouter_api_key: Secret::new(KEY),
        groq_api_key: Secret::new(KEY),
        openai_api_key: Secret::new(KEY),
        anthropic_api_key: Secret::new(KEY),
        mistralai_api_key: Secret::new(KEY),
        google_api_key: Secret::new(KEY),
        azure_openai_api_key: Secret::new(KEY),
        grok_api_key: Secret::new(KEY),
        aws_secret_access_key: Secret::new(KEY),
        llm_redis_cache_url: Some(RedactedUrl::new(format!(
            "redis://default:{PASSWORD}@cache.internal:6379/0"
        ))),
        ..Config::sdk_defaults()
    }
}

#[test]
fn debug_display_and_serde_never_show_a_secret() {
    let secret = Secret::new(KEY);
    assert_eq!(format!("{secret}"), REDACTED);
    assert_eq!(format!("{secret:?}"), format!("Secret({REDACTED:?})"));
    assert_eq!(
        serde_json::to_string(&secret).unwrap(),
        format!("\"{REDACTED}\"")
    );
    assert_eq!(secret.expose(), KEY);

    let empty = Secret::default();
    assert_eq!(format!("{empty}"), "");
    assert_eq!(serde_json::to_string(&empty).unwrap(), "\"\"");
}

#[test]
fn a_config_never_leaks_its_secrets() {
    let config = config_full_of_secrets();
    let outputs = [
        serde_json::to_string(&config).unwrap(),
        serde_json::to_string_pretty(&config).unwrap(),
        format!("{config:?}"),
        format!("{config:#?}"),
    ];
    for output in &outputs {
        assert!(!output.contains(KEY), "key leaked:\n{output}");
        assert!(!output.contains(PASSWORD), "password leaked:\n{output}");
    }
    let written: serde_json::Value = serde_json::from_str(&outputs[0]).unwrap();
    for key in [
        "portia_api_key",
        "openrouter_api_key",
        "groq_api_key",
        "openai_api_key",
        "anthropic_api_key",
        "mistralai_api_key",
        "google_api_key",
        "azure_openai_api_key",
        "grok_api_key",
        "aws_secret_access_key",
    ] {
        assert_eq!(written[key], REDACTED, "{key}");
    }
    assert_eq!(
        written["llm_redis_cache_url"],
        format!("redis://default:{REDACTED}@cache.internal:6379/0")
    );
    assert_eq!(
        config.llm_redis_cache_url.as_ref().unwrap().expose(),
        format!("redis://default:{PASSWORD}@cache.internal:6379/0")
    );
}

#[test]
fn the_aws_secret_the_sdk_leaks_is_redacted_on_the_way_through() {
    let sdk_dump = corpus_text("R6/config/config_model_dump_json.json");
    assert!(
        sdk_dump.contains("AWS-PLAINTEXT-SECRET"),
        "the corpus file changed"
    );
    let config: Config = serde_json::from_str(&sdk_dump).unwrap();
    assert_eq!(
        config.aws_secret_access_key.expose(),
        "AWS-PLAINTEXT-SECRET"
    );
    let written = serde_json::to_string(&config).unwrap();
    assert!(!written.contains("AWS-PLAINTEXT-SECRET"), "{written}");
    assert!(!format!("{config:?}").contains("AWS-PLAINTEXT-SECRET"));
}

#[test]
fn a_run_written_with_a_config_holds_no_secret() {
    let mut run: PlanRunV2 = serde_json::from_value(fixture_run()).unwrap();
    run.config = config_full_of_secrets().into();
    let written = serde_json::to_string(&run).unwrap();
    assert!(
        !written.contains(KEY) && !written.contains(PASSWORD),
        "{written}"
    );
    assert!(!format!("{run:?}").contains(KEY));
}

#[test]
fn redis_urls_lose_their_password_and_nothing_else() {
    let url = RedactedUrl::new(format!(
        "rediss://:{PASSWORD}@cache:6380/2?ssl_cert_reqs=none"
    ));
    let expected = format!("rediss://:{REDACTED}@cache:6380/2?ssl_cert_reqs=none");
    assert_eq!(url.to_string(), expected);
    assert_eq!(format!("{url:?}"), format!("RedactedUrl({expected:?})"));
    assert_eq!(serde_json::to_value(&url).unwrap(), expected);
    assert_eq!(
        redact_url("redis://localhost:6379"),
        "redis://localhost:6379"
    );
    assert_eq!(
        redact_url(&format!("redis://cache/0?password={PASSWORD}")),
        format!("redis://cache/0?password={REDACTED}")
    );
}

#[test]
fn the_sdk_mask_reads_back_and_writes_the_same_bytes() {
    let sdk_dump = corpus("R6/config/config_defaults_anthropic.json");
    let config: Config = serde_json::from_value(sdk_dump.clone()).unwrap();
    assert_eq!(config.anthropic_api_key.expose(), REDACTED);
    assert_eq!(serde_json::to_value(&config).unwrap(), sdk_dump);
}
