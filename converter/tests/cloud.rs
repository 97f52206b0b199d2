//! Cloud API bodies convert like stored documents: the SDK's own parse of a GET response is
//! reproduced byte for byte, and the captured PUT/POST bodies convert to V2 on their own.

use std::path::Path;

use planrun_converter::cloud::{id_from_url, plan_from_cloud, run_from_cloud};
use planrun_converter::upgrade::{resolve_config, upgrade, PlanSource, Sources};
use planrun_legacy::LegacyDocument;
use serde_json::Value;

fn read(version: &str, name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/corpus")
            .join(version)
            .join("cloud")
            .join(name),
    )
    .unwrap()
}

const VERSIONS: [&str; 5] = ["W1", "R1", "R3", "R4", "R6"];

#[test]
fn a_get_response_reads_as_the_sdk_itself_parsed_it() {
    for version in VERSIONS {
        let body: Value =
            serde_json::from_slice(&read(version, "synthetic_get_response.json")).unwrap();
        let parsed = run_from_cloud(&body, None).unwrap_or_else(|e| panic!("{version}: {e}"));
        assert_eq!(
            parsed.to_sdk_json().as_bytes(),
            read(version, "parsed_back_run.json").as_slice(),
            "{version}"
        );
    }
}

#[test]
fn captured_request_bodies_convert_to_v2() {
    let (config, _) = resolve_config(None).unwrap();
    for version in VERSIONS {
        let requests: Vec<Value> =
            serde_json::from_slice(&read(version, "requests_sent.json")).unwrap();
        let body = |method: &str, prefix: &str| {
            requests
                .iter()
                .find(|r| r["method"] == method && r["url"].as_str().unwrap().starts_with(prefix))
                .unwrap_or_else(|| panic!("{version}: no {method} {prefix}"))
        };
        let plan = plan_from_cloud(&body("POST", "/api/v0/plans/")["json"]).unwrap();
        let LegacyDocument::Plan(plan) = &plan.document else {
            panic!("{version}: not a plan")
        };
        let put = body(
            "PUT",
            if version == "W1" {
                "/api/v0/workflows/"
            } else {
                "/api/v0/plan-runs/"
            },
        );
        let id = id_from_url(put["url"].as_str().unwrap());
        let run = run_from_cloud(&put["json"], id).unwrap_or_else(|e| panic!("{version}: {e}"));
        assert!(
            run.detection
                .versions
                .contains(planrun_legacy::Version::parse(version).unwrap()),
            "{version}: {}",
            run.detection
        );
        let sources = Sources {
            run: &run,
            plan: PlanSource::Read(plan),
            end_user: None,
            plan_read: &[],
            end_user_read: &[],
            config: &config,
            agent_memory: None,
        };
        let converted = upgrade(&sources).unwrap_or_else(|e| panic!("{version}: {e}"));
        assert!(
            converted
                .run
                .id
                .ends_with(&id.unwrap()[id.unwrap().find('-').unwrap()..]),
            "{version}"
        );
    }
}

#[test]
fn a_body_without_an_id_needs_the_url() {
    let body: Value = serde_json::from_slice(&read("R6", "synthetic_get_response.json")).unwrap();
    let mut without = body.clone();
    without.as_object_mut().unwrap().remove("id");
    assert!(run_from_cloud(&without, None).is_err());
    let other = "prun-00000000-0000-4000-8000-000000000000";
    assert!(
        run_from_cloud(&body, Some(other)).is_err(),
        "a different id in the URL is an error"
    );
    assert_eq!(
        id_from_url("/api/v0/plan-runs/prun-45ae17f6-8f93-43ef-a333-9328603ae4e4/"),
        Some("prun-45ae17f6-8f93-43ef-a333-9328603ae4e4")
    );
    assert_eq!(id_from_url("/api/v0/tool-calls/"), None);
}
