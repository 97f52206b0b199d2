//! The run checker against the reader it stands in for: `Checker::check` accepts exactly the
//! texts `serde_json::from_slice::<PlanRunV2>` accepts, with the same id, on the fixture and on
//! generated runs, on every single-edit mutant of them, on top-level edits (a repeated, unknown
//! or missing key, not an object, trailing bytes) and at serde_json's depth limit (also in the
//! step-output and run-input values it checks without building them, as on unpaired surrogate
//! escapes there); and a plan, end user or config it accepted once does not make it accept a
//! text whose own are wrong, whether the run is pretty printed (when an accepted plan or config
//! is cut out, not read) or not, nor when an accepted text stands where a pretty run's plan
//! would but is not its plan.

use proptest::prelude::*;
use serde_json::Value;

use planrun_v2::agreement::mutants;
use planrun_v2::check::Checker;
use planrun_v2::strategies::plan_run_v2;
use planrun_v2::PlanRunV2;

/// Both verdicts on `text`, which must be the same.
fn same_verdict(checker: &Checker, text: &str) -> bool {
    let whole = serde_json::from_slice::<PlanRunV2>(text.as_bytes());
    let checked = checker.check(text.as_bytes());
    match (&whole, &checked) {
        (Ok(run), Ok(id)) => assert_eq!(&run.id, id, "{text}"),
        (Err(_), Err(_)) => {}
        _ => panic!(
            "the checker says {:?}, the reader {:?}, on\n{text}",
            checked.as_ref().map(|_| ()).map_err(ToString::to_string),
            whole.as_ref().map(|_| ()).map_err(ToString::to_string)
        ),
    }
    whole.is_ok()
}

/// `doc` and all its mutants through one checker (so that what it remembers is in play),
/// written compact and pretty; how many were accepted.
fn every_mutant(checker: &Checker, doc: &Value) -> usize {
    let text = serde_json::to_string_pretty(doc).unwrap();
    assert!(same_verdict(checker, &text), "the run itself is refused");
    let mut accepted = 1;
    for mutant in mutants(doc) {
        let compact = serde_json::to_string(&mutant.doc).unwrap();
        let pretty = serde_json::to_string_pretty(&mutant.doc).unwrap();
        accepted += usize::from(same_verdict(checker, &compact));
        assert_eq!(
            same_verdict(checker, &compact),
            same_verdict(checker, &pretty)
        );
    }
    accepted
}

fn fixture() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/plan_run.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn the_fixture_and_its_mutants_get_the_readers_verdicts() {
    let checker = Checker::new();
    let accepted = every_mutant(&checker, &fixture());
    assert!(
        accepted > 10,
        "only {accepted} accepted: the mutants probe nothing"
    );
}

#[test]
fn top_level_edits_get_the_readers_verdicts() {
    let checker = Checker::new();
    let text = serde_json::to_string(&fixture()).unwrap();
    let body = text.strip_prefix('{').unwrap();
    let cases = [
        text.clone(),
        format!("{{\"id\": \"prun-00000000-0000-0000-0000-000000000000\", {body}"),
        format!("{{\"surprise\": 1, {body}"),
        format!("{text} x"),
        format!("{text}\n"),
        format!("[{text}]"),
        text.replacen("\"legacy\"", "\"legacy\": null, \"x\"", 1),
        "null".to_owned(),
        "{}".to_owned(),
    ];
    for case in cases {
        same_verdict(&checker, &case);
    }
    let mut without_legacy = fixture();
    without_legacy
        .as_object_mut()
        .unwrap()
        .shift_remove("legacy");
    assert!(same_verdict(
        &checker,
        &serde_json::to_string(&without_legacy).unwrap()
    ));
    let mut null_legacy = fixture();
    null_legacy["legacy"] = Value::Null;
    same_verdict(&checker, &serde_json::to_string(&null_legacy).unwrap());
}

/// The residue's entries are checked without being built (`wire::value_map`): the checker
/// must take exactly the objects `IndexMap<String, Value>` takes, a repeated key included.
#[test]
fn residue_entries_get_the_readers_verdicts() {
    let checker = Checker::new();
    let text = serde_json::to_string_pretty(&fixture()).unwrap();
    let at = text
        .find("\"entries\": ")
        .expect("the fixture has a residue")
        + "\"entries\": ".len();
    let end = at + text[at..].find("\n    }").expect("the entries end") + "\n    }".len();
    let mut verdicts = Vec::new();
    for entries in [
        "{}",
        r#"{"/run/a": 1, "/run/a": [true, null, {"b": -0.0}]}"#,
        r#"{"/run/a": 12345678901234567890123456789, "/run/b": "\u00e9\n"}"#,
        r#"{"/run/a": }"#,
        r#"{"/run/a" 1}"#,
        "{1: 1}",
        r#"[["/run/a", 1]]"#,
        "null",
        r#""entries""#,
        r#"{"/run/a": 1,}"#,
    ] {
        let case = format!("{}{entries}{}", &text[..at], &text[end..]);
        verdicts.push(same_verdict(&checker, &case));
    }
    assert_eq!(
        verdicts,
        [true, true, true, false, false, false, false, false, false, false]
    );
}

#[test]
fn bytes_that_are_not_utf8_get_the_readers_verdict() {
    let checker = Checker::new();
    let text = serde_json::to_string_pretty(&fixture()).unwrap();
    for (from, to) in [
        ("user_guidance\": \"", "user_guidance\": \"\u{ff}"),
        ("{", "{ "),
    ] {
        let mut bytes = text.replacen(from, to, 1).into_bytes();
        if let Some(at) = bytes.windows(2).position(|w| w == [0xc3, 0xbf]) {
            bytes.splice(at..at + 2, [0xff]);
        }
        let whole = serde_json::from_slice::<PlanRunV2>(&bytes).map(|run| run.id);
        let checked = checker.check(&bytes);
        assert_eq!(whole.is_ok(), checked.is_ok(), "{checked:?}");
        assert_eq!(whole.ok(), checked.ok());
    }
}

#[test]
fn values_nested_to_the_depth_limit_get_the_readers_verdicts() {
    let checker = Checker::new();
    let mut verdicts = Vec::new();
    for depth in 120..132 {
        let mut deep = Value::from(1);
        for _ in 0..depth {
            deep = Value::Array(vec![deep]);
        }
        // In a value read where it stands (the residue) and in one read on its own (the plan).
        let mut doc = fixture();
        doc["legacy"] =
            serde_json::json!({"source_version": "R1", "entries": {"/run/x": deep.clone()}});
        verdicts.push(same_verdict(
            &checker,
            &serde_json::to_string(&doc).unwrap(),
        ));
        let mut doc = fixture();
        doc["plan"]["plan_inputs"][0]["value"] = deep.clone();
        verdicts.push(same_verdict(
            &checker,
            &serde_json::to_string(&doc).unwrap(),
        ));
        // And in the values the checker checks without building them.
        let mut doc = fixture();
        doc["step_output_values"][0]["output"]["value"] = deep.clone();
        verdicts.push(same_verdict(
            &checker,
            &serde_json::to_string(&doc).unwrap(),
        ));
        let mut doc = fixture();
        doc["plan_run_inputs"]["destination"]["value"] = deep;
        verdicts.push(same_verdict(
            &checker,
            &serde_json::to_string(&doc).unwrap(),
        ));
    }
    assert!(
        verdicts.contains(&true) && verdicts.contains(&false),
        "{verdicts:?}"
    );
}

/// A `Value` refuses a string with an unpaired UTF-16 surrogate escape, which serde_json's own
/// skipping of a value lets through: the checker, which reads values without building them, must
/// refuse those too (in keys, in nested values) and accept paired ones and escaped backslashes.
#[test]
fn surrogate_escapes_in_values_get_the_readers_verdicts() {
    let checker = Checker::new();
    let text = serde_json::to_string_pretty(&fixture()).unwrap();
    for (value, read) in [
        (r#""\ud83d\ude00""#, true),
        (r#""\uD83D\uDE00 and \u00e9""#, true),
        (r#""\\ud800""#, true),
        (r#""\ud800""#, false),
        (r#""\uDBFF x""#, false),
        (r#""\udc00""#, false),
        (r#""\ude00\ud83d""#, false),
        (r#"["\\\ud800"]"#, false),
        (r#"{"k\ud800": 1}"#, false),
        (r#"{"k": ["\u0041", {"m": "\uDFFF"}]}"#, false),
    ] {
        for at in [
            "\"output\": {\n        \"kind\": \"local\",\n        \"value\": ",
            "\"destination\": {\n      \"value\": ",
        ] {
            let start = text.find(at).expect("the fixture has the field") + at.len();
            let end = start + text[start..].find(",\n").unwrap();
            let doc = [&text[..start], value, &text[end..]].concat();
            assert_eq!(same_verdict(&checker, &doc), read, "{value} at {at}");
        }
    }
}

#[test]
fn a_remembered_plan_does_not_hide_another_runs_bad_one() {
    let checker = Checker::new();
    let good = fixture();
    assert!(same_verdict(
        &checker,
        &serde_json::to_string(&good).unwrap()
    ));
    for key in ["plan", "end_user", "config"] {
        let mut bad = good.clone();
        bad[key]
            .as_object_mut()
            .unwrap()
            .insert("surprise".into(), Value::Bool(true));
        assert!(!same_verdict(
            &checker,
            &serde_json::to_string(&bad).unwrap()
        ));
        assert!(!same_verdict(
            &checker,
            &serde_json::to_string_pretty(&bad).unwrap()
        ));
    }
}

#[test]
fn a_pretty_run_whose_plan_and_config_were_accepted_is_read_without_them() {
    let checker = Checker::new();
    let mut run = fixture();
    let first = serde_json::to_string_pretty(&run).unwrap();
    assert!(same_verdict(&checker, &first));
    assert_eq!(checker.cut_reads(), 0, "nothing was accepted before");
    run["id"] = Value::from("prun-11111111-1111-1111-1111-111111111111");
    assert!(same_verdict(
        &checker,
        &serde_json::to_string_pretty(&run).unwrap()
    ));
    assert_eq!(checker.cut_reads(), 1);
    run["state"] = Value::from("NOT_A_STATE");
    assert!(!same_verdict(
        &checker,
        &serde_json::to_string_pretty(&run).unwrap()
    ));
    assert_eq!(checker.cut_reads(), 1);
}

#[test]
fn the_last_4096_plans_and_configs_are_cut_out_and_older_ones_read_again() {
    // A migration checks its runs by plan, so the runs of one plan come together: the checker
    // remembers 4,096 plans and configs, then forgets them all at once, so that its memory does
    // not grow with the store (it remembered 2^17 when the runs of a plan lay far apart).
    let checker = Checker::new();
    let run_numbered = |n: usize| {
        let mut run = fixture();
        run["plan"]["label"] = Value::from(format!("plan {n}"));
        run["config"]["portia_dashboard_url"] = Value::from(format!("https://app.example/{n}"));
        serde_json::to_string_pretty(&run).unwrap()
    };
    let first = run_numbered(0);
    assert!(same_verdict(&checker, &first));
    for n in 1..4096 {
        assert!(checker.check(run_numbered(n).as_bytes()).is_ok());
    }
    let before = checker.cut_reads();
    assert!(same_verdict(&checker, &first));
    assert_eq!(
        checker.cut_reads(),
        before + 1,
        "4,096 plans and configs, the first among them, are remembered"
    );
    assert!(checker.check(run_numbered(4096).as_bytes()).is_ok());
    let before = checker.cut_reads();
    assert!(same_verdict(&checker, &first));
    assert_eq!(
        checker.cut_reads(),
        before,
        "the 4,097th plan and config made it forget the first"
    );
}

#[test]
fn an_accepted_plan_text_away_from_the_runs_plan_is_not_taken_for_it() {
    let checker = Checker::new();
    let good = serde_json::to_string_pretty(&fixture()).unwrap();
    assert!(same_verdict(&checker, &good));
    let plan = serde_json::to_string_pretty(&[&fixture()["plan"]]).unwrap();
    let plan = &plan["[\n  ".len()..plan.len() - "\n]".len()];
    // Lines shaped like a pretty run's plan field, inside a step output that comes first; the
    // run's own plan is the accepted one, then a refused one.
    for own in [fixture()["plan"].clone(), Value::from("not a plan")] {
        let mut run = fixture();
        run["plan"] = own;
        run["step_output_values"][0]["output"]["value"] = Value::from("@@");
        let object = run.as_object_mut().unwrap();
        let outputs = object.shift_remove_entry("step_output_values").unwrap();
        object.shift_insert(0, outputs.0, outputs.1);
        let text = serde_json::to_string_pretty(&run)
            .unwrap()
            .replace("\"@@\"", &format!("{{\n  \"plan\": {plan},\n  \"x\": 1}}"));
        let before = checker.cut_reads();
        same_verdict(&checker, &text);
        assert_eq!(checker.cut_reads(), before, "{text}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn generated_runs_and_their_mutants_get_the_readers_verdicts(run in plan_run_v2()) {
        let checker = Checker::new();
        every_mutant(&checker, &serde_json::to_value(&run).unwrap());
    }
}
