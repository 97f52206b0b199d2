//! `planrun check --sdk VERSION` on any bytes: the verdict of the SDK of each version on a store
//! file. Laws: it never panics; a failure names its reason, a file never read says why, and a
//! file that fails or is not read has no changes; and at HEAD the form that
//! `--to r6` writes for a run or a plan is one HEAD loads and saves back unchanged, so `check` and
//! the HEAD-store writer agree (a plan HEAD's validators refuse, which `--to r6` leaves behind,
//! has no such form, and neither has a run, clarification or plan without an id, which HEAD
//! would give a new one on save: `migrate` rejects a run without one, derives a clarification's,
//! and names a plan by its id).
//! The first byte says whether the file sits in a run's agent-memory directory.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planrun_fuzz::assert_exact_legacy;
use planrun_legacy::{head, sdk, LegacyDocument, LegacyRun, StepKey, Version};
use planrun_wire::json::to_sdk_json;

fuzz_target!(|data: &[u8]| {
    let Some((&place, doc)) = data.split_first() else {
        return;
    };
    for version in Version::ALL {
        let verdict = sdk::check(doc, place % 2 == 1, version);
        assert!(
            verdict.fails.iter().all(|f| !f.is_empty()),
            "a failure without a reason at {version}"
        );
        assert!(
            verdict
                .unread
                .as_ref()
                .is_none_or(|why| !why.is_empty() && verdict.fails.is_empty()),
            "{version}: {verdict:?}"
        );
        assert!(
            verdict.changes.is_empty() || (verdict.fails.is_empty() && verdict.unread.is_none()),
            "{version}: changes to a file it does not load: {verdict:?}"
        );
    }
    let Ok(parsed) = planrun_legacy::parse(doc) else {
        return;
    };
    let written = match &parsed.document {
        LegacyDocument::Run(LegacyRun::R6(run))
            if parsed.step_key == StepKey::Index
                && run.id.is_some()
                && run.outputs.clarifications.iter().all(|c| c.id.is_some()) =>
        {
            to_sdk_json(&head::run(run).document)
        }
        LegacyDocument::Plan(plan)
            if head::plan_validator_fails(plan).is_empty() && plan.id.is_some() =>
        {
            to_sdk_json(&head::plan(plan).document)
        }
        _ => return,
    };
    let again = assert_exact_legacy(written.as_bytes(), "HEAD's form");
    let at_head = sdk::check(written.as_bytes(), false, Version::HEAD);
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
