//! `planrun versions` prints the version registry, the one list every crate reads.

use std::process::Command;

use planrun_legacy::{Version, REGISTRY};
use serde_json::Value;

fn planrun(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_planrun"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_json_listing_is_the_registry_oldest_first() {
    let listed: Value = serde_json::from_str(&planrun(&["versions", "--format", "json"])).unwrap();
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = Version::ALL.iter().map(|v| v.as_str()).collect();
    assert_eq!(names, expected);
    assert_eq!(listed[0]["run_prefix"], "wkfl");
    assert_eq!(listed[1]["run_prefix"], "pr");
    assert_eq!(listed[REGISTRY.len() - 1]["releases"], "v0.3.4 – HEAD");
}

#[test]
fn the_text_listing_marks_head_once() {
    let text = planrun(&["versions"]);
    let marked: Vec<&str> = text.lines().filter(|l| l.ends_with("(HEAD)")).collect();
    assert_eq!(marked.len(), 1, "{text}");
    assert!(marked[0].starts_with(Version::HEAD.as_str()), "{text}");
    assert_eq!(text.lines().count(), REGISTRY.len());
}

/// Every verb's `--help` ends with commands to start from and the exit codes, so a user need not
/// open the guides to learn what a non-zero exit means.
#[test]
fn every_verb_help_ends_with_examples_and_exit_codes() {
    let verbs = [
        "convert",
        "migrate",
        "report",
        "detect",
        "check",
        "downgrade",
        "versions",
        "renames",
        "diff",
        "schema",
        "validate",
        "gen",
    ];
    for verb in verbs {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_planrun"))
            .args([verb, "--help"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{verb}");
        let text = String::from_utf8(out.stdout).unwrap();
        let examples = text.find("\nExamples:\n  planrun ");
        let codes = text.find("\nExit codes:\n  0  ");
        assert!(
            matches!((examples, codes), (Some(e), Some(c)) if e < c),
            "{verb} --help:\n{text}"
        );
    }
}
