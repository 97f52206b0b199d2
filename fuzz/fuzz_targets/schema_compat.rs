//! Schema compatibility on any two JSON documents (NUL-separated), read as schemas. Laws: a
//! schema compared with itself has no findings; swapping OLD and NEW mirrors the verdict
//! (BACKWARD one way is FORWARD the other; FULL and BREAKING stay).
#![no_main]

use libfuzzer_sys::fuzz_target;
use planrun_fuzz::split;
use planrun_schemas::compat::{compare, Compatibility};
use serde_json::Value;

fn mirror(verdict: Compatibility) -> Compatibility {
    match verdict {
        Compatibility::Backward => Compatibility::Forward,
        Compatibility::Forward => Compatibility::Backward,
        same => same,
    }
}

fuzz_target!(|data: &[u8]| {
    let parts = split(data);
    let (Some(old), Some(new)) = (parts.first(), parts.get(1)) else {
        return;
    };
    let (Ok(old), Ok(new)) = (
        serde_json::from_slice::<Value>(old),
        serde_json::from_slice::<Value>(new),
    ) else {
        return;
    };
    for schema in [&old, &new] {
        let findings = compare(schema, schema);
        assert!(
            findings.is_empty(),
            "a schema differs from itself: {findings:?}"
        );
    }
    let forward = compare(&old, &new);
    let backward = compare(&new, &old);
    let (there, back) = (Compatibility::of(&forward), Compatibility::of(&backward));
    assert_eq!(
        mirror(there),
        back,
        "OLD→NEW is {there} but NEW→OLD is {back}:\n{forward:#?}\n{backward:#?}"
    );
});
