//! A legacy RunContext snapshot becomes a V2 RunContext whose run carries the native step values.

use std::path::Path;

use planrun_converter::run_context::run_context_from_legacy;
use planrun_legacy::{parse, LegacyDocument};

#[test]
fn the_snapshot_converts_with_native_values_and_descriptors() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../legacy/tests/cases/run_context_snapshot.json");
    let parsed = parse(&std::fs::read(path).unwrap()).unwrap();
    let LegacyDocument::RunContext(snapshot) = &parsed.document else {
        panic!("not a RunContext")
    };
    let (context, report) = run_context_from_legacy(snapshot).unwrap();
    let text = serde_json::to_string_pretty(&context).unwrap();
    let back: planrun_v2::RunContext = serde_json::from_str(&text).unwrap();
    assert_eq!(back, context);
    assert_eq!(context.tool_registry.tool_ids, ["llm_tool"]);
    assert!(
        matches!(&context.storage, planrun_v2::StorageDescriptor::Disk { dir } if dir.as_deref() == Some(".portia"))
    );
    let greet = context
        .plan_run
        .step_output_values
        .iter()
        .find(|v| v.step_name.as_deref() == Some("greet"))
        .unwrap();
    assert!(
        matches!(&greet.output, planrun_v2::Output::Local { value, .. } if value["times"] == 3),
        "{greet:?}"
    );
    assert!(!text.contains("sk-"), "no secret in clear");
    assert!(report.to_string().contains("native value"), "{report}");
}
