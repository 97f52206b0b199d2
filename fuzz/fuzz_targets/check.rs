//! `planrun check --sdk HEAD` on any bytes: the verdict of the SDK at HEAD on a store file. Laws:
//! it never panics; a failure or change names where (a pointer or a reason); and the form that
//! `--to r6` writes for a run or a plan is one HEAD loads and saves back unchanged, so `check` and
//! the HEAD-store writer agree (a plan HEAD's validators refuse, which `--to r6` leaves behind,
//! has no such form).
//! The first byte says whether the file sits in a run's agent-memory directory.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planrun_fuzz::assert_exact_legacy;
use planrun_legacy::json::to_sdk_json;
use planrun_legacy::{head, LegacyDocument, LegacyRun, StepKey};

fuzz_target!(|data: &[u8]| {
    let Some((&place, doc)) = data.split_first() else {
        return;
    };
    let Ok(parsed) = planrun_legacy::parse(doc) else {
        return;
    };
    let verdict = head::check(&parsed, place % 2 == 1);
    assert!(
        verdict.fails.iter().all(|f| !f.is_empty()),
        "a failure without a reason"
    );
    let written = match &parsed.document {
        LegacyDocument::Run(LegacyRun::R6(run)) if parsed.step_key == StepKey::Index => {
            to_sdk_json(&head::run(run).document)
        }
        LegacyDocument::Plan(plan) if head::plan_validator_fails(plan).is_empty() => {
            to_sdk_json(&head::plan(plan).document)
        }
        _ => return,
    };
    let again = assert_exact_legacy(written.as_bytes(), "HEAD's form");
    let at_head = head::check(&again, false);
    assert!(
        at_head.changes.is_empty(),
        "HEAD's form is rewritten at HEAD: {:?}",
        at_head.changes
    );
    if matches!(again.document, LegacyDocument::Run(_)) {
        assert!(
            at_head.fails.is_empty(),
            "HEAD fails to load a run in its own form: {:?}",
            at_head.fails
        );
    }
});
