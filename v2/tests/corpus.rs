//! The SDK's own EndUser and Config files are V2 documents as they stand.

use crate::common;

use common::{corpus, corpus_text, to_sdk_json};
use planrun_v2::{Config, EndUser, GenerativeModelsConfig, LlmProvider, Secret, REDACTED};

#[test]
fn sdk_end_user_files_read_and_write_back_byte_for_byte() {
    for file in [
        "R6/end_users/end_user_full.json",
        "R6/end_users/end_user_minimal.json",
        "R6/end_users/end_user_unicode_null_additional.json",
    ] {
        let text = corpus_text(file);
        let user: EndUser = serde_json::from_str(&text).unwrap();
        assert_eq!(to_sdk_json(&user), text, "{file}");
    }
}

#[test]
fn sdk_config_dumps_read_and_write_back_with_only_the_leaked_secret_masked() {
    for file in [
        "R6/config/config_model_dump_json.json",
        "R6/config/config_model_dump_python_json_mode.json",
        "R6/config/config_defaults_anthropic.json",
    ] {
        let text = corpus_text(file);
        let config: Config = serde_json::from_str(&text).unwrap();
        let expected = text.replace(
            "\"aws_secret_access_key\": \"AWS-PLAINTEXT-SECRET\"",
            &format!("\"aws_secret_access_key\": \"{REDACTED}\""),
        );
        assert_eq!(to_sdk_json(&config), expected, "{file}");
    }
}

#[test]
fn sdk_defaults_are_the_sdk_defaults_less_the_provider() {
    let with_anthropic = Config {
        anthropic_api_key: Secret::new("sk-ant-test"),
        llm_provider: Some(LlmProvider::Anthropic),
        models: GenerativeModelsConfig {
            default_model: Some("anthropic/claude-3-5-sonnet-latest".to_owned()),
            planning_model: Some("anthropic/claude-3-7-sonnet-latest".to_owned()),
            execution_model: None,
            introspection_model: Some("anthropic/claude-3-7-sonnet-latest".to_owned()),
            summarizer_model: None,
        },
        ..Config::sdk_defaults()
    };
    assert_eq!(
        serde_json::to_value(&with_anthropic).unwrap(),
        corpus("R6/config/config_defaults_anthropic.json")
    );

    let defaults = serde_json::to_value(Config::sdk_defaults()).unwrap();
    assert_eq!(defaults["llm_provider"], serde_json::Value::Null);
    assert!(defaults["models"]
        .as_object()
        .unwrap()
        .values()
        .all(serde_json::Value::is_null));
}

#[test]
fn a_bare_end_user_is_the_sdk_minimal_one() {
    let minimal: EndUser =
        serde_json::from_value(corpus("R6/end_users/end_user_minimal.json")).unwrap();
    assert_eq!(EndUser::bare("local"), minimal);
}
