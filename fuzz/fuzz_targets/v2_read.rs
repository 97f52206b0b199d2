//! The strict V2 reader on any JSON document. Laws: the typed model of a V2 type accepts a
//! document exactly when its published schema does (law 4); an accepted document serialises to
//! text that reads back to the same value and serialises to the same text again (law 2); the
//! run checker of the verify pass accepts exactly the bytes the run reader accepts, with its id. The
//! first byte picks the type, the rest is the document.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planrun_schemas::validate::validate;
use planrun_v2::check::Checker;
use planrun_v2::{
    Clarification, Config, EndUser, Output, PlanRunV2, PlanV2, RunContext, StepOutputValue, StepV2,
};
use planrun_wire::json::{from_tree, parse_value};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

type Check = fn(&[u8], &Value) -> Result<(), String>;

/// Reads `doc` as `T`; when it is accepted, checks the write/read round trip: the written text
/// reads back, writes the same text again, and reads as the same value. (The first read may
/// differ from what it writes: a secret read in clear is written masked.)
fn check<T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug>(
    src: &[u8],
    tree: &Value,
) -> Result<(), String> {
    let value: T = from_tree(src, tree).map_err(|e| e.to_string())?;
    let text = serde_json::to_string_pretty(&value).expect("V2 values are JSON");
    let again = reread::<T>(&text);
    let text_again = serde_json::to_string_pretty(&again).expect("V2 values are JSON");
    assert_eq!(text_again, text, "the written text is not a fixpoint");
    assert_eq!(
        reread::<T>(&text_again),
        again,
        "the written text reads as another value"
    );
    Ok(())
}

fn reread<T: DeserializeOwned>(text: &str) -> T {
    let tree = parse_value(text.as_bytes())
        .unwrap_or_else(|e| panic!("the writer's text is refused by the JSON reader: {e}\n{text}"));
    from_tree(text.as_bytes(), &tree)
        .unwrap_or_else(|e| panic!("the writer's text is refused: {e}\n{text}"))
}

const TYPES: [(&str, Check); 9] = [
    ("PlanRunV2", check::<PlanRunV2>),
    ("PlanV2", check::<PlanV2>),
    ("RunContext", check::<RunContext>),
    ("Clarification", check::<Clarification>),
    ("Config", check::<Config>),
    ("EndUser", check::<EndUser>),
    ("Output", check::<Output>),
    ("StepOutputValue", check::<StepOutputValue>),
    ("StepV2", check::<StepV2>),
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, doc)) = data.split_first() else {
        return;
    };
    let (name, check) = TYPES[usize::from(pick) % TYPES.len()];
    if name == "PlanRunV2" {
        let whole = serde_json::from_slice::<PlanRunV2>(doc).map(|run| run.id);
        let checked = Checker::new().check(doc);
        assert_eq!(
            whole.as_ref().ok(),
            checked.as_ref().ok(),
            "the run checker and the reader disagree: {checked:?} and {whole:?}"
        );
    }
    let Ok(tree) = parse_value(doc) else {
        return;
    };
    let serde = check(doc, &tree);
    let violations =
        validate(&tree, &format!("v2/{name}.schema.json")).expect("a published schema");
    assert_eq!(
        serde.is_ok(),
        violations.is_empty(),
        "{name}: serde says {serde:?}, the schema says {violations:?}"
    );
});
