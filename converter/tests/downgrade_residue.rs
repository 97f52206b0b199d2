//! A downgrade that succeeds writes a plan the legacy reader takes back and the SDK loads: the
//! plan's keys come from
//! the V2 residue, which the V2 reader accepts as it is, so a residue that mixes keys of plans of
//! different SDK versions is refused by the downgrade instead of written as a plan no SDK version
//! wrote. Regression of a fuzzer finding: a V2 run whose residue held a W1 plan's
//! `Variable.value` entries but had lost the marker that the plan had no `plan_inputs` was
//! downgraded to a plan the legacy reader calls contradictory.

use crate::common;

use std::path::Path;

use planrun_converter::downgrade::{downgrade, downgrade_to_head, DowngradeError};
use planrun_converter::plan::plan_from_legacy;
use planrun_converter::upgrade::resolve_config;
use planrun_legacy::{parse, LegacyDocument};
use planrun_v2::PlanRunV2;
use planrun_wire::json::to_sdk_json;

fn corpus(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(rel)
}

/// A W1 run of the corpus upgraded to V2, with the corpus plan whose variables hold constant
/// values (`Variable.value`, W1–R1) in place of its own, its residue included.
fn v2_with_valued_plan() -> PlanRunV2 {
    let (config, _) = resolve_config(None).unwrap();
    let store = common::index(&corpus("W1/disk_storage"));
    let (_, parsed) = &store.runs[0];
    let mut v2 = common::check_law3(&store, parsed, &config).unwrap().run;
    let bytes = std::fs::read(corpus("W1/plans/plan_variable_constant_values.json")).unwrap();
    let LegacyDocument::Plan(plan) = parse(&bytes).unwrap().document else {
        panic!("not a plan");
    };
    let conversion = plan_from_legacy(&plan);
    assert!(
        conversion.residue.keys().any(|k| k.ends_with("/value")),
        "the plan keeps Variable.value in the residue: {:?}",
        conversion.residue.keys()
    );
    let legacy = v2.legacy.as_mut().unwrap();
    legacy.entries.retain(|k, _| !k.starts_with("/plan"));
    legacy.entries.extend(conversion.residue);
    v2.plan = conversion.plan;
    v2
}

#[test]
fn a_residue_of_one_plan_version_downgrades_to_a_plan_the_reader_takes() {
    let v2 = v2_with_valued_plan();
    for down in [
        downgrade(&v2, true).unwrap(),
        downgrade_to_head(&v2, true).unwrap(),
    ] {
        let plan = parse(to_sdk_json(down.plan.as_ref().unwrap()).as_bytes()).unwrap();
        assert!(matches!(plan.document, LegacyDocument::Plan(_)));
    }
}

#[test]
fn a_residue_that_mixes_plan_versions_is_refused_not_written() {
    let mut v2 = v2_with_valued_plan();
    let legacy = v2.legacy.as_mut().unwrap();
    assert!(legacy.entries.shift_remove("/plan/plan_inputs").is_some());
    for result in [downgrade(&v2, true), downgrade_to_head(&v2, true)] {
        let Err(DowngradeError::Invalid(why)) = result else {
            panic!("downgraded: {result:?}");
        };
        assert!(
            why.starts_with(
                "/legacy: the plan its residue makes is one no SDK version wrote: at /plan"
            ),
            "{why}"
        );
        assert!(why.contains("contradictory plan"), "{why}");
    }
}

/// Regression of a fuzzer finding: the V2 reader takes a plan with two steps of one output (and
/// no condition), which the SDK's Plan validator refuses in every R6 release (from v0.1.8), so
/// the downgrade wrote a plan the SDK cannot load. It is refused now, naming the step.
#[test]
fn a_plan_the_sdks_validators_refuse_is_not_written() {
    let mut v2 = v2_with_valued_plan();
    let step = v2.plan.steps[0].clone();
    std::sync::Arc::make_mut(&mut v2.plan).steps.push(step);
    for result in [downgrade(&v2, true), downgrade_to_head(&v2, true)] {
        let Err(DowngradeError::Invalid(why)) = result else {
            panic!("downgraded: {result:?}");
        };
        let last = v2.plan.steps.len() - 1;
        assert!(
            why.contains(&format!(
                "/plan/steps/{last}: HEAD's Plan validator refuses a repeated output + condition"
            )),
            "{why}"
        );
    }
}

/// Found by the property test of V2 → HEAD store → V2: V2 takes any i64 as the step index, but
/// the legacy reader takes integers within ±(2^53 − 1) only (as its schemas say), so a larger
/// one was written into a run file this toolkit would not read back. It is refused now.
#[test]
fn a_step_index_beyond_the_legacy_range_is_refused() {
    let mut v2 = v2_with_valued_plan();
    v2.current_step_index = planrun_legacy::MAX_SAFE_INTEGER + 1;
    for result in [downgrade(&v2, true), downgrade_to_head(&v2, true)] {
        let Err(DowngradeError::Invalid(why)) = result else {
            panic!("downgraded: {result:?}");
        };
        assert!(
            why.starts_with("/current_step_index: 9007199254740992 is beyond"),
            "{why}"
        );
    }
    v2.current_step_index = planrun_legacy::MAX_SAFE_INTEGER;
    assert!(downgrade(&v2, true).is_ok());
}

/// V2 keeps a clarification's run reference as the legacy file named it, unchecked; every SDK
/// that writes R6 reads it as a PlanRunUUID, which refuses another prefix ("Prefix pr does not
/// match expected prefix prun", v0.9.0). So a `pr-` reference is refused by the downgrade, not
/// written into a run no SDK loads.
#[test]
fn a_clarification_naming_its_run_with_another_prefix_is_refused() {
    let (config, _) = resolve_config(None).unwrap();
    let store = common::index(&corpus("R4/disk_storage"));
    let v2 = store
        .runs
        .iter()
        .map(|(_, parsed)| common::check_law3(&store, parsed, &config).unwrap().run)
        .find(|v2| !v2.clarifications.is_empty())
        .expect("a corpus run with clarifications");
    let mut tree = serde_json::to_value(v2).unwrap();
    let clarifications = tree["clarifications"].as_array_mut().unwrap();
    let id = clarifications[0]["plan_run_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let uuid = id.strip_prefix("prun-").unwrap();
    clarifications[0]["plan_run_id"] = format!("pr-{uuid}").into();
    let v2: PlanRunV2 = serde_json::from_value(tree).unwrap();
    for result in [downgrade(&v2, true), downgrade_to_head(&v2, true)] {
        let Err(DowngradeError::Invalid(why)) = result else {
            panic!("downgraded: {result:?}");
        };
        assert!(
            why.starts_with("/clarifications/0/plan_run_id: pr-"),
            "{why}"
        );
    }
}
