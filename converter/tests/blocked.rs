//! Unresolvable references give a `blocked` outcome naming the missing path, never a half-built
//! V2 document.

use std::path::Path;

use planrun_converter::upgrade::{
    resolve_config, upgrade, ConvertError, Missing, PlanSource, Sources,
};
use planrun_legacy::{parse, LegacyDocument};

fn store(name: &str) -> planrun_legacy::Parsed {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/store")
        .join(name);
    parse(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_missing_plan_blocks_the_run_and_names_the_file() {
    let run = store("prun-7f1c3b6e-8a9d-4eaf-8b1c-3d4e5f6a7b82.json");
    let (config, _) = resolve_config(None).unwrap();
    let sources = Sources {
        run: &run,
        plan: PlanSource::NotSearched,
        end_user: None,
        plan_read: &[],
        end_user_read: &[],
        config: &config,
        agent_memory: None,
    };
    match upgrade(&sources) {
        Err(ConvertError::Blocked { what, missing }) => {
            assert_eq!((what, what.to_string().as_str()), (Missing::Plan, "plan"));
            assert_eq!(missing, "plan-4e0d7052-6f81-4c23-9e4f-5a6b7c8d9ea4.json");
        }
        other => panic!("expected blocked, got {other:?}"),
    }
}

#[test]
fn a_missing_agent_memory_file_blocks_the_run_and_names_the_path() {
    let run = store("prun-5d9a1f4c-6e7b-4c8d-8f9a-1b2c3d4e5f60.json");
    let LegacyDocument::Plan(plan) =
        store("plan-2c8b5e30-4d6f-4a01-9c2d-3e4f5a6b7c82.json").document
    else {
        panic!("not a plan");
    };
    let (config, _) = resolve_config(None).unwrap();
    let nothing_exists = |_: &str, _: &str| false;
    let sources = Sources {
        run: &run,
        plan: PlanSource::Read(&plan),
        end_user: None,
        plan_read: &[],
        end_user_read: &[],
        config: &config,
        agent_memory: Some(&nothing_exists),
    };
    match upgrade(&sources) {
        Err(ConvertError::Blocked { what, missing }) => {
            assert_eq!(
                (what, what.to_string().as_str()),
                (Missing::AgentMemory, "agent-memory file")
            );
            assert_eq!(
                missing,
                "prun-5d9a1f4c-6e7b-4c8d-8f9a-1b2c3d4e5f60/$report.json"
            );
        }
        other => panic!("expected blocked, got {other:?}"),
    }
    let everything_exists = |_: &str, _: &str| true;
    let sources = Sources {
        agent_memory: Some(&everything_exists),
        ..sources
    };
    let converted = upgrade(&sources).unwrap();
    let memory = &converted.run.step_output_values[0].output;
    assert!(
        matches!(memory, planrun_v2::Output::AgentMemory { output_name, .. } if output_name == "$report"),
        "agent memory stays a reference to its file"
    );
}

#[test]
fn a_plan_for_another_run_is_rejected() {
    let run = store("prun-7f1c3b6e-8a9d-4eaf-8b1c-3d4e5f6a7b82.json");
    let LegacyDocument::Plan(plan) =
        store("plan-2c8b5e30-4d6f-4a01-9c2d-3e4f5a6b7c82.json").document
    else {
        panic!("not a plan");
    };
    let (config, _) = resolve_config(None).unwrap();
    let sources = Sources {
        run: &run,
        plan: PlanSource::Read(&plan),
        end_user: None,
        plan_read: &[],
        end_user_read: &[],
        config: &config,
        agent_memory: None,
    };
    assert!(
        matches!(upgrade(&sources), Err(ConvertError::Rejected(m)) if m.contains("plan-2c8b5e30"))
    );
}

#[test]
fn config_secrets_are_redacted_and_reported() {
    let user: planrun_legacy::Config = serde_json::from_str(
        r#"{"llm_provider": "anthropic", "anthropic_api_key": "sk-ant-live", "aws_secret_access_key": "AKIA-secret", "llm_redis_cache_url": "redis://u:pw@cache:6379"}"#,
    )
    .unwrap();
    let (config, report) = resolve_config(Some(&user)).unwrap();
    let text = serde_json::to_string(&config).unwrap();
    for secret in ["sk-ant-live", "AKIA-secret", ":pw@"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    assert_eq!(
        report.count(planrun_converter::EntryKind::Coerced),
        3,
        "{report}"
    );
}

#[test]
fn what_reading_the_file_changed_is_in_the_loss_report() {
    let loose = br#"{"id": "prun-7F1C3B6E-8A9D-4EAF-8B1C-3D4E5F6A7B82", "plan_id": "plan-4e0d7052-6f81-4c23-9e4f-5a6b7c8d9ea4", "current_step_index": "1", "end_user_id": "local"}"#;
    let run = parse(loose).unwrap();
    let LegacyDocument::Plan(plan) =
        store("plan-4e0d7052-6f81-4c23-9e4f-5a6b7c8d9ea4.json").document
    else {
        panic!("not a plan");
    };
    let (config, _) = resolve_config(None).unwrap();
    let sources = Sources {
        run: &run,
        plan: PlanSource::Read(&plan),
        end_user: None,
        plan_read: &[],
        end_user_read: &[],
        config: &config,
        agent_memory: None,
    };
    let converted = upgrade(&sources).unwrap();
    let text = converted.report.to_string();
    assert!(
        text.contains("coerced   /run/id -> /run/id (read leniently"),
        "{text}"
    );
    assert!(text.contains("coerced   /run/current_step_index"), "{text}");
    assert!(text.contains("defaulted -> /run/state"), "{text}");
    assert_eq!(
        converted.run.id,
        "prun-7f1c3b6e-8a9d-4eaf-8b1c-3d4e5f6a7b82"
    );
}

/// A run whose plan file was never saved (before v0.3.0 the SDK saved the run of a hand-built
/// plan, not the plan; the SDK at HEAD still lists and loads the run) is not blocked: it converts
/// with a plan rebuilt from what the run holds, one step per step output in the run's order,
/// marked in `legacy.entries["/plan"]`, every part of it reported; a HEAD downgrade writes no
/// plan file for it, as the SDK left it.
#[test]
fn a_plan_never_saved_is_rebuilt_from_the_run_and_marked() {
    let run = store("prun-5d9a1f4c-6e7b-4c8d-8f9a-1b2c3d4e5f60.json");
    let (config, _) = resolve_config(None).unwrap();
    let everything_exists = |_: &str, _: &str| true;
    let sources = Sources {
        run: &run,
        plan: PlanSource::NeverSaved,
        end_user: None,
        plan_read: &[],
        end_user_read: &[],
        config: &config,
        agent_memory: Some(&everything_exists),
    };
    let converted = upgrade(&sources).unwrap();
    let v2 = &converted.run;
    let legacy_run = run.as_run().unwrap();
    assert_eq!(v2.plan.id, legacy_run.plan_id().to_string());
    let outputs: Vec<&str> = v2
        .step_output_values
        .iter()
        .map(|v| v.output_name.as_str())
        .collect();
    let keys: Vec<String> = planrun_converter::chain::to_r6(legacy_run)
        .unwrap()
        .run
        .outputs
        .step_outputs
        .keys()
        .cloned()
        .collect();
    assert!(!keys.is_empty());
    assert_eq!(outputs, keys);
    assert_eq!(v2.plan.steps.len(), keys.len());
    for (i, value) in v2.step_output_values.iter().enumerate() {
        assert_eq!(value.step_num, Some(i as i64), "{value:?}");
    }
    let residue = &v2.legacy.as_ref().unwrap().entries;
    assert_eq!(residue["/plan"], serde_json::json!({"absent": true}));
    assert!(
        residue
            .keys()
            .all(|k| k == "/plan" || !k.starts_with("/plan")),
        "{residue:?}"
    );
    let text = converted.report.to_string();
    assert!(text.contains("was never saved"), "{text}");
    assert_eq!(
        converted
            .report
            .entries
            .iter()
            .filter(|e| e
                .to
                .as_deref()
                .is_some_and(|t| t.starts_with("/plan/steps/")))
            .count(),
        keys.len(),
        "{text}"
    );

    let down = planrun_converter::downgrade::downgrade_to_head(v2, true).unwrap();
    assert!(down.plan.is_none());
    assert_eq!(down.run.plan_id.to_string(), v2.plan.id);
}
