//! Downgrade of any V2 run the strict reader and the schema accept. Laws: a downgrade that
//! succeeds yields a run, a plan and an end user that the legacy reader takes exactly as written,
//! the run as an R6 run (`downgrade`'s run may keep a W1 "Argument" clarification, as the
//! migration chain's R6 does: it reads back as the chain's R6); `downgrade_to_head`'s files are
//! also files the SDK at HEAD loads and writes back unchanged; allowing loss never changes a
//! downgrade that succeeded without it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planrun_converter::downgrade::{downgrade, downgrade_to_head, DowngradeError, Downgraded};
use planrun_fuzz::{assert_drops_recorded, assert_exact_legacy};
use planrun_legacy::{sdk, Category, LegacyDocument, RunR6, Version};
use planrun_schemas::validate::validate;
use planrun_v2::PlanRunV2;
use planrun_wire::json::{from_tree, parse_value, to_sdk_json};

/// Checks the files of a successful downgrade; `at_head` also checks HEAD's verdict.
fn check_files(down: &Downgraded, at_head: bool) {
    let text = to_sdk_json(&down.run);
    let carried = down
        .run
        .outputs
        .clarifications
        .iter()
        .any(|c| c.category == Category::Argument);
    let run = if carried {
        assert!(!at_head, "HEAD's form kept an Argument clarification");
        let tree = parse_value(text.as_bytes()).expect("JSON");
        let back = RunR6::from_chain_tree(tree, Version::W1).expect("the chain's R6 reads back");
        assert_eq!(back, down.run, "the chain's R6 re-read to another run");
        None
    } else {
        let run = assert_exact_legacy(text.as_bytes(), "downgraded run");
        assert!(
            matches!(run.document, LegacyDocument::Run(_))
                && run.detection.versions.contains(Version::R6),
            "the downgraded run is not read as an R6 run: {}",
            run.detection
        );
        Some(run)
    };
    // A plan V2 marks as rebuilt (the SDK never saved one) gets no file.
    if let Some(plan) = &down.plan {
        let plan = assert_exact_legacy(to_sdk_json(plan).as_bytes(), "downgraded plan");
        assert!(
            matches!(plan.document, LegacyDocument::Plan(_)),
            "the plan is read as {}",
            plan.detection
        );
    }
    let user = assert_exact_legacy(
        to_sdk_json(&down.end_user).as_bytes(),
        "downgraded end user",
    );
    assert!(
        matches!(user.document, LegacyDocument::EndUser(_)),
        "the end user is read as {}",
        user.detection
    );
    assert_drops_recorded(&down.report.entries, "downgrade");
    if let (true, Some(_)) = (at_head, &run) {
        let mut files = vec![("run", text), ("end user", to_sdk_json(&down.end_user))];
        if let Some(plan) = &down.plan {
            files.push(("plan", to_sdk_json(plan)));
        }
        for (what, bytes) in files {
            let verdict = sdk::check(bytes.as_bytes(), false, Version::HEAD);
            assert!(
                verdict.fails.is_empty(),
                "HEAD fails to load the {what}: {:?}",
                verdict.fails
            );
            assert!(
                verdict.changes.is_empty(),
                "HEAD rewrites the {what}: {:?}",
                verdict.changes
            );
        }
    }
}

/// `downgrade` or `downgrade_to_head`.
type Way = fn(&PlanRunV2, bool) -> Result<Downgraded, DowngradeError>;

fuzz_target!(|data: &[u8]| {
    let Ok(tree) = parse_value(data) else {
        return;
    };
    let Ok(v2) = from_tree::<PlanRunV2>(data, &tree) else {
        return;
    };
    if !validate(&tree, "v2/PlanRunV2.schema.json")
        .expect("a published schema")
        .is_empty()
    {
        return;
    }
    for (way, at_head) in [(downgrade as Way, false), (downgrade_to_head, true)] {
        let strict = way(&v2, false).ok();
        let lossy = way(&v2, true).ok();
        if let Some(strict) = &strict {
            assert_eq!(
                Some(strict),
                lossy.as_ref(),
                "allowing loss changed a lossless downgrade"
            );
        }
        if let Some(lossy) = &lossy {
            check_files(lossy, at_head);
        }
    }
});
