//! The legacy reader and detector on any bytes. Laws: neither panics; `detect` accepts what
//! `parse` accepts, with the same detection; an accepted document re-emits to a fixpoint (law 2
//! on read); it validates against the schema of its detected kind and version, and a document
//! that detection places but the reader refuses does not (law 4).
#![no_main]

use libfuzzer_sys::fuzz_target;
use planrun_fuzz::{assert_fixpoint, strict_tree};
use planrun_schemas::validate::{schema_for, validate};

fuzz_target!(|data: &[u8]| {
    let detected = planrun_legacy::detect(data);
    match planrun_legacy::parse(data) {
        Ok(parsed) => {
            let detection = detected.expect("detect refuses what parse accepts");
            assert_eq!(detection, parsed.detection, "detect and parse disagree");
            assert_fixpoint(&parsed, "accepted document");
            let tree = strict_tree(data).expect("parse accepted text the JSON reader refuses");
            let schema = schema_for(&parsed.detection);
            let violations = validate(&tree, &schema).expect("a published schema");
            assert!(
                violations.is_empty(),
                "accepted as {}, but {schema} refuses it: {violations:?}",
                parsed.detection
            );
        }
        Err(error) => {
            assert!(!error.message.is_empty(), "an error without a message");
            if let (Ok(detection), Some(tree)) = (detected, strict_tree(data)) {
                let schema = schema_for(&detection);
                let violations = validate(&tree, &schema).expect("a published schema");
                assert!(
                    !violations.is_empty(),
                    "refused ({error}), but {schema} accepts it"
                );
            }
        }
    }
});
