//! The upgrade chain with plan, end user and agent memory: the input is a run, its plan, its end
//! user and an agent-memory value, separated by NUL bytes, converted as a batch converts a run
//! of a store. Laws: an upgrade that succeeds yields V2 text the strict reader and the schema
//! accept and that it writes back byte for byte; every `dropped` report entry holds its value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planrun_fuzz::{assert_drops_recorded, read_v2, split, v2_text, MemStore};

fuzz_target!(|data: &[u8]| {
    let store = MemStore::of(&split(data));
    let result = store.convert();
    match result.outcome {
        Ok(out) => {
            let run = read_v2(&out.bytes, "the upgraded run");
            assert_eq!(
                v2_text(&run).as_bytes(),
                &out.bytes[..],
                "V2 text not in the writer's form"
            );
            assert_drops_recorded(&out.report.to_loss_report().entries, "upgrade");
        }
        Err(failure) => assert!(!failure.message.is_empty(), "a failure without a message"),
    }
});
