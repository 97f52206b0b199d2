//! The HEAD-store writer of `migrate --to r6`: a run (legacy or V2), its plan, its end user and
//! an agent-memory value (NUL-separated) are converted to V2, written as the files of a HEAD store,
//! and those files converted back. Laws: every file written is one the legacy reader takes
//! exactly as written and that HEAD loads and writes back unchanged; and the HEAD files with their residue convert back to the
//! same V2 bytes (V2 → HEAD store → V2).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use planrun_converter::residue::residue_path;
use planrun_fuzz::{
    assert_drops_recorded, assert_exact_legacy, assert_same_text, config, read_v2, split, v2_text,
    MemStore,
};
use planrun_legacy::{sdk, LegacyDocument, Version};
use planrun_store::migrate::head::{check_document, outputs, PlanClaims};
use planrun_store::References;

fuzz_target!(|data: &[u8]| {
    let parts = split(data);
    let store = MemStore::of(&parts);
    let Ok(out) = store.convert().outcome else {
        return;
    };
    let claims = PlanClaims::default();
    let Ok(files) = outputs(
        &store,
        &References::default(),
        &claims,
        Path::new("mem/<run>"),
        &out,
    ) else {
        return;
    };
    assert_drops_recorded(&files.report.entries, "the HEAD store");
    check_document(&files.run, &out.id).unwrap_or_else(|e| panic!("the HEAD run: {e}"));
    assert_exact_legacy(&files.run, "the HEAD run");
    let verdict = sdk::check(&files.run, false, Version::HEAD);
    assert!(
        verdict.fails.is_empty() && verdict.changes.is_empty(),
        "HEAD and the run: {verdict:?}"
    );

    let mut back = MemStore {
        name: format!("{}.json", out.id),
        run: files.run.clone(),
        memory: std::collections::HashMap::new(),
        default_memory: store.default_memory.clone(),
        ..MemStore::default()
    };
    for (path, bytes) in &files.files {
        let name = path.to_str().expect("HEAD store names are UTF-8");
        if name == residue_path(&out.id) {
            back.residue = Some(bytes.clone());
            continue;
        }
        let parsed = assert_exact_legacy(bytes, name);
        let verdict = sdk::check(bytes, false, Version::HEAD);
        assert!(
            verdict.changes.is_empty(),
            "{name}: HEAD rewrites it: {:?}",
            verdict.changes
        );
        match parsed.document {
            LegacyDocument::Plan(_) => {
                assert!(
                    verdict.fails.is_empty(),
                    "{name}: HEAD fails to load a plan written for it: {:?}",
                    verdict.fails
                );
                back.plan = Some(bytes.clone());
            }
            LegacyDocument::EndUser(_) => {
                assert!(verdict.fails.is_empty(), "{name}: {:?}", verdict.fails);
                back.end_user = Some(bytes.clone());
            }
            _ => panic!("{name}: a {} in a HEAD store", parsed.detection),
        }
    }
    let again = back.convert();
    let again = again
        .outcome
        .unwrap_or_else(|f| panic!("the HEAD store does not convert back: {}", f.message));
    // A V2 run read as it is comes back with the config its conversion is given, as every run
    // converted from a HEAD store does.
    let mut want = read_v2(&out.bytes, "the V2 run");
    want.config = config().config().clone();
    assert_same_text(
        &again.bytes,
        v2_text(&want).as_bytes(),
        "V2 → HEAD store → V2",
    );
});
