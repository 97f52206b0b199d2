//! Plan recognition, both ways. A legacy plan the reader accepts becomes a PlanV2 the strict V2
//! reader and schema accept, and comes back as the same legacy plan (law 2 for plans); a PlanV2
//! the V2 reader accepts becomes a legacy plan the legacy reader takes exactly as written, unless
//! the SDK's Plan validators refuse it (two steps with one output and condition, two plan inputs
//! of one name: V2 allows them, no SDK loads them, and `downgrade` refuses such a plan). The
//! first byte says which way.
#![no_main]

use indexmap::IndexMap;
use libfuzzer_sys::fuzz_target;
use planrun_converter::plan::{plan_from_legacy, plan_to_legacy};
use planrun_fuzz::assert_exact_legacy;
use planrun_legacy::{head, LegacyDocument};
use planrun_schemas::validate::validate;
use planrun_v2::PlanV2;
use planrun_wire::json::{from_tree, parse_value, to_sdk_json};

fuzz_target!(|data: &[u8]| {
    let Some((&way, doc)) = data.split_first() else {
        return;
    };
    if way % 2 == 0 {
        let Ok(parsed) = planrun_legacy::parse(doc) else {
            return;
        };
        let LegacyDocument::Plan(plan) = &parsed.document else {
            return;
        };
        let conversion = plan_from_legacy(plan);
        let text = serde_json::to_string_pretty(&conversion.plan).expect("V2 plans are JSON");
        let tree = parse_value(text.as_bytes()).expect("the V2 plan's text is JSON");
        from_tree::<PlanV2>(text.as_bytes(), &tree)
            .unwrap_or_else(|e| panic!("the V2 reader refuses the recognised plan: {e}\n{text}"));
        let violations = validate(&tree, "v2/PlanV2.schema.json").expect("a published schema");
        assert!(
            violations.is_empty(),
            "the V2 schema refuses the plan: {violations:?}\n{text}"
        );
        let back = plan_to_legacy(&conversion.plan, &conversion.residue);
        assert_eq!(&back, plan, "the plan did not come back from V2");
    } else {
        let Ok(tree) = parse_value(doc) else {
            return;
        };
        let Ok(plan) = from_tree::<PlanV2>(doc, &tree) else {
            return;
        };
        let legacy = plan_to_legacy(&plan, &IndexMap::new());
        if !head::plan_validator_fails(&legacy).is_empty() {
            return;
        }
        let parsed = assert_exact_legacy(to_sdk_json(&legacy).as_bytes(), "a V2 plan written back");
        assert!(
            matches!(parsed.document, LegacyDocument::Plan(_)),
            "a V2 plan written back is read as {}",
            parsed.detection
        );
    }
});
