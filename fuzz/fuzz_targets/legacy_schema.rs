//! Law 4 per legacy type: for any JSON document, the typed model of a type accepts it exactly
//! when that type's published schema does. The first byte picks the type, the rest is the
//! document.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planrun_legacy::{
    Config, EndUser, Output, Plan, RunContextSnapshot, RunR1, RunR2, RunR3, RunR4, RunR5, RunR6,
    RunW1, StepOutputValue, ToolCallRecord,
};
use planrun_schemas::validate::validate;
use planrun_wire::json::from_tree;
use serde_json::Value;

type Read = fn(&[u8], &Value) -> Result<(), String>;

fn read<T: serde::de::DeserializeOwned>(src: &[u8], tree: &Value) -> Result<(), String> {
    from_tree::<T>(src, tree)
        .map(drop)
        .map_err(|e| e.to_string())
}

const MODELS: [(&str, Read); 16] = [
    ("run.W1", read::<RunW1>),
    ("run.R0", read::<RunR1>),
    ("run.R1", read::<RunR1>),
    ("run.R2", read::<RunR2>),
    ("run.R3", read::<RunR3>),
    ("run.R4", read::<RunR4>),
    ("run.R5", read::<RunR5>),
    ("run.R6", read::<RunR6>),
    ("plan", read::<Plan>),
    ("end_user", read::<EndUser>),
    ("output", read::<Output>),
    ("tool_call", read::<ToolCallRecord>),
    ("config", read::<Config>),
    ("step_output_value", read::<StepOutputValue>),
    ("step_output_values", read::<Vec<StepOutputValue>>),
    ("run_context", read::<RunContextSnapshot>),
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, doc)) = data.split_first() else {
        return;
    };
    let (name, read) = MODELS[usize::from(pick) % MODELS.len()];
    let Ok(tree) = planrun_wire::json::parse_value(doc) else {
        return;
    };
    let serde = read(doc, &tree);
    let schema = format!("legacy/{name}.schema.json");
    let violations = validate(&tree, &schema).expect("a published schema");
    assert_eq!(
        serde.is_ok(),
        violations.is_empty(),
        "{name}: serde says {serde:?}, the schema says {violations:?}"
    );
});
