//! `sdk::check`, the verdict of one version's SDK on a store file, on generated documents:
//! * every document a version's SDK writes loads at that version (0.1.10, as R1 is judged,
//!   has no W1 "Argument" category, which 0.1.2-alpha still wrote);
//! * the save it predicts is a fixed point: the file with those changes made loads and saves
//!   back unchanged, as a file the SDK saved does;
//! * at HEAD it predicts exactly the changes that bringing the document to HEAD's form makes
//!   (`head::run`, `head::plan`: the form every file of a HEAD store is written in);
//! * at every version it never panics and a failure or an unread file says why.

use crate::common;

use common::props::config;
use planrun_legacy::sdk::{check, Verdict};
use planrun_legacy::strategies::{end_user, plan, run, PlanEra};
use planrun_legacy::{head, parse, Category, LegacyDocument, LegacyRun, Normalization, Version};
use planrun_wire::json::to_sdk_json;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::Value;
use Version::*;

/// `(kind, pointer)` of each change, sorted: what a verdict and a HEAD form are compared by.
fn pointers(changes: &[Normalization]) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = changes
        .iter()
        .filter_map(|c| match c {
            Normalization::Defaulted { pointer, .. } => Some(("defaulted", pointer)),
            Normalization::Dropped { pointer, .. } => Some(("dropped", pointer)),
            Normalization::Coerced { pointer, .. } => Some(("coerced", pointer)),
            Normalization::Reformatted => None,
        })
        .map(|(k, p)| (k.to_owned(), p.clone()))
        .collect();
    all.sort();
    all
}

/// The document with the changes of a verdict made: what the SDK's save writes.
fn saved(text: &str, changes: &[Normalization]) -> Value {
    let mut tree: Value = serde_json::from_str(text).unwrap();
    for change in changes {
        match change {
            Normalization::Defaulted { pointer, value } => set(&mut tree, pointer, value.clone()),
            Normalization::Coerced { pointer, to, .. } => set(&mut tree, pointer, to.clone()),
            Normalization::Dropped { pointer, .. } => {
                let (parent, key) = pointer.rsplit_once('/').unwrap();
                tree.pointer_mut(parent)
                    .and_then(Value::as_object_mut)
                    .unwrap()
                    .shift_remove(&key.replace("~1", "/").replace("~0", "~"));
            }
            Normalization::Reformatted => {}
        }
    }
    tree
}

fn set(tree: &mut Value, pointer: &str, value: Value) {
    if let Some(slot) = tree.pointer_mut(pointer) {
        *slot = value;
        return;
    }
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    tree.pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .unwrap()
        .insert(key.replace("~1", "/").replace("~0", "~"), value);
}

/// The laws for a document the SDK of `version` wrote.
fn loads_and_saves_to_a_fixed_point(text: &str, version: Version) -> Result<(), TestCaseError> {
    let verdict = check(text.as_bytes(), false, version);
    prop_assert!(
        verdict.fails.is_empty() && verdict.unread.is_none(),
        "{version} fails to load what it wrote: {verdict:?}\n{text}"
    );
    let generated = verdict.changes.iter().any(|c| {
        matches!(c, Normalization::Defaulted { value: Value::String(s), .. } if s.contains("<a new uuid>"))
    });
    if !generated {
        let again = to_sdk_json(&saved(text, &verdict.changes));
        let resaved = check(again.as_bytes(), false, version);
        prop_assert_eq!(
            &resaved,
            &Verdict::default(),
            "{} saves its own save differently:\n{}",
            version,
            again
        );
    }
    for other in Version::ALL {
        let verdict = check(text.as_bytes(), false, other);
        prop_assert!(verdict.fails.iter().all(|f| !f.is_empty()));
        prop_assert!(verdict.changes.is_empty() || verdict.fails.is_empty());
    }
    Ok(())
}

/// Whether 0.1.10 lacks a category the run has (R1 is judged as 0.1.10).
fn has_argument(run: &LegacyRun) -> bool {
    run.clarifications()
        .iter()
        .any(|c| c.category == Category::Argument)
}

macro_rules! run_laws {
    ($($name:ident: $version:expr;)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(doc in run($version)) {
                    let text = to_sdk_json(&doc);
                    if $version == R1 && has_argument(&doc) {
                        let verdict = check(text.as_bytes(), false, R1);
                        prop_assert!(verdict.fails[0].contains("\"Argument\" is not one of 0.1.10's"));
                    } else {
                        loads_and_saves_to_a_fixed_point(&text, $version)?;
                    }
                }
            )*
        }
    };
}

run_laws! {
    w1_runs_load_at_w1: W1;
    r0_runs_load_at_r0: R0;
    r1_runs_load_at_r1: R1;
    r2_runs_load_at_r2: R2;
    r3_runs_load_at_r3: R3;
    r4_runs_load_at_r4: R4;
    r5_runs_load_at_r5: R5;
    r6_runs_load_at_r6: R6;
}

macro_rules! plan_laws {
    ($($name:ident: $era:expr;)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(doc in plan($era)) {
                    let text = to_sdk_json(&doc);
                    for version in $era.versions() {
                        loads_and_saves_to_a_fixed_point(&text, *version)?;
                    }
                }
            )*
        }
    };
}

plan_laws! {
    alpha_plans_load_where_written: PlanEra::Alpha;
    v017_plans_load_where_written: PlanEra::V017;
    v018_plans_load_where_written: PlanEra::V018;
    v0112_plans_load_where_written: PlanEra::V0112;
    v032_plans_load_where_written: PlanEra::V032;
    v034_plans_load_where_written: PlanEra::V034;
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn end_users_load_from_v030(doc in end_user(R6)) {
        let text = to_sdk_json(&doc);
        loads_and_saves_to_a_fixed_point(&text, R6)?;
        prop_assert!(check(text.as_bytes(), false, R3).unread.is_some());
    }

    /// At HEAD, `check` predicts the changes of HEAD's form, key for key.
    #[test]
    fn head_check_agrees_with_heads_form_of_a_run(doc in run(R6)) {
        let text = to_sdk_json(&doc);
        let LegacyDocument::Run(LegacyRun::R6(read)) = parse(text.as_bytes()).unwrap().document else {
            unreachable!("an R6 run is read as one")
        };
        let at = head::run(&read);
        prop_assert_eq!(pointers(&check(text.as_bytes(), false, R6).changes), pointers(&at.changes));
    }

    #[test]
    fn head_check_agrees_with_heads_form_of_a_plan(
        doc in prop_oneof![plan(PlanEra::Alpha), plan(PlanEra::V018), plan(PlanEra::V0112), plan(PlanEra::V034)],
    ) {
        let text = to_sdk_json(&doc);
        let verdict = check(text.as_bytes(), false, R6);
        let fails = head::plan_validator_fails(&doc);
        prop_assert_eq!(verdict.fails.is_empty(), fails.is_empty(), "{:?} {:?}", verdict, fails);
        if fails.is_empty() {
            prop_assert_eq!(pointers(&verdict.changes), pointers(&head::plan(&doc).changes));
        }
    }
}
