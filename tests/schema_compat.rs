//! The published schemas stay at least BACKWARD compatible with the last release's (consumers
//! reading with today's schemas can read everything written under the release's), and the
//! `schema compat` verb end to end: verdicts, rules, `--format json` and its exit codes
//! (0 requirement met, 1 not met, 2 usage error).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use planrun_schemas::compat::{compare_paths, compare_sets, Compatibility, Requirement};
use planrun_schemas::export::Source;
use serde_json::{json, Value};

/// The release the current schemas must stay compatible with. When a release is cut (see
/// "Evolving the V2 format" in docs/schemas.md), copy `schemas/v2` and `schemas/legacy` to
/// `schemas/releases/<version>/` and point this at it.
const BASELINE: &str = "releases/0.2.0";

fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas")
}

fn planrun(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_planrun"))
        .args(args)
        .output()
        .expect("the planrun binary runs")
}

#[track_caller]
fn assert_backward(report: &planrun_schemas::compat::Report, what: &str) {
    assert!(
        report.verdict.satisfies(Requirement::Backward),
        "{what} is {} against schemas/{BASELINE}, not BACKWARD compatible: consumers using the \
         new schemas could not read documents written under the release. The rules that fired:\n{}\n\
         Either restore compatibility (undo what these rules name: put back a removed key, enum \
         value or branch, drop a new required key, loosen what was narrowed), or, for a \
         deliberate change of the V2 format, cut a new release baseline as docs/schemas.md's \
         \"Evolving the V2 format\" says: add or raise `format_version`, regenerate schemas/, \
         copy schemas/v2 and schemas/legacy to schemas/releases/<version>/ and point BASELINE \
         in tests/schema_compat.rs at it.",
        report.verdict,
        report
            .findings()
            .filter(|(_, f)| f.breaks_backward)
            .map(|(file, f)| format!("  {file}: {f}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn committed_schemas_are_backward_compatible_with_the_last_release() {
    let dir = schemas_dir();
    let report = compare_paths(&dir.join(BASELINE), &dir).unwrap();
    assert!(
        report
            .files
            .iter()
            .any(|f| f.file == "v2/PlanRunV2.schema.json"),
        "{}",
        report.to_text()
    );
    assert!(
        report
            .files
            .iter()
            .all(|f| !f.file.starts_with("releases/")),
        "{}",
        report.to_text()
    );
    assert_backward(&report, "schemas/");
}

#[test]
fn generated_schemas_are_backward_compatible_with_the_last_release() {
    let baseline = Source::Dir(schemas_dir().join(BASELINE)).load().unwrap();
    let report = compare_sets(&baseline, &planrun_schemas::all());
    assert_backward(&report, "the schemas this build generates");
}

/// Release 0.2.0 narrowed the run schemas to what each version's SDK loads (its run-id prefix;
/// its clarification categories; the run named by its own key, required and not `null` before
/// v0.7.0) and changed nothing else: the V2 format is still the one 0.1.0 published. A changed
/// id pattern counts as breaking both ways (patterns are not compared as languages), so the run
/// files are BREAKING; every finding is at a run id or inside a clarification.
#[test]
fn release_0_2_0_narrowed_only_run_ids_and_clarifications_of_legacy_runs() {
    let dir = schemas_dir().join("releases");
    let report = compare_paths(&dir.join("0.1.0"), &dir.join("0.2.0")).unwrap();
    assert_eq!(report.files.len(), 25, "{}", report.to_text());
    for file in &report.files {
        if !file.file.starts_with("legacy/run") {
            assert_eq!(file.verdict, Compatibility::Full, "{}", report.to_text());
            continue;
        }
        assert!(!file.findings.is_empty(), "{}", file.file);
        for finding in &file.findings {
            let at_id = finding.path == "/id" || finding.path == "/plan_run/id";
            let in_clarification = finding.path.starts_with("/outputs/clarifications/*/")
                || finding
                    .path
                    .starts_with("/plan_run/outputs/clarifications/*/");
            assert!(
                at_id || (in_clarification && finding.breaks_backward),
                "{}: {finding}",
                file.file
            );
        }
    }
}

#[test]
fn the_verb_reports_full_for_the_release_against_itself() {
    let baseline = schemas_dir().join(BASELINE);
    let base = baseline.to_str().unwrap();
    let out = planrun(&["schema", "compat", base, base, "--require", "full"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("v2/PlanRunV2.schema.json: FULL (no change)"),
        "{text}"
    );
    assert!(
        text.contains("verdict: FULL\nrequired: full (met)"),
        "{text}"
    );
}

fn write(dir: &Path, name: &str, schema: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, serde_json::to_string_pretty(schema).unwrap()).unwrap();
    path
}

#[test]
fn the_verb_exits_by_the_requirement_and_lists_rules_as_json() {
    let tmp = tempfile::tempdir().unwrap();
    let old = json!({
        "type": "object", "additionalProperties": false, "required": ["id"],
        "properties": {"id": {"type": "string"}, "state": {"enum": ["A", "B"]}}
    });
    let mut new = old.clone();
    new["properties"]["state"] = json!({"enum": ["A", "B", "C"]});
    let old_path = write(tmp.path(), "old/run.schema.json", &old);
    let new_path = write(tmp.path(), "new/run.schema.json", &new);
    let (o, n) = (old_path.to_str().unwrap(), new_path.to_str().unwrap());

    // An added enum value: BACKWARD. Meets the default requirement, not `forward`.
    let out = planrun(&["schema", "compat", o, n]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("run.schema.json: BACKWARD"), "{text}");
    assert!(
        text.contains("enum-value-added at /state (breaks forward)"),
        "{text}"
    );
    let out = planrun(&["schema", "compat", o, n, "--require", "forward"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");

    // Swapped: a removed enum value, FORWARD; JSON output names the rule and pointers.
    let out = planrun(&["schema", "compat", n, o, "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["verdict"], "FORWARD");
    assert_eq!(report["met"], false);
    let finding = &report["files"][0]["findings"][0];
    assert_eq!(finding["rule"], "enum-value-removed");
    assert_eq!(finding["path"], "/state");
    assert_eq!(finding["old"], "/properties/state");
    assert_eq!(finding["breaks_backward"], true);

    // Directories are matched by relative file name.
    let (od, nd) = (tmp.path().join("old"), tmp.path().join("new"));
    let out = planrun(&[
        "schema",
        "compat",
        od.to_str().unwrap(),
        nd.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    // Usage errors: a file against a directory, a missing path, a bad flag.
    let out = planrun(&["schema", "compat", o, nd.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("both be files or both be directories"));
    let missing = tmp.path().join("missing.json");
    let out = planrun(&["schema", "compat", o, missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let out = planrun(&["schema", "compat", o, n, "--require", "sideways"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn a_breaking_change_to_a_published_schema_is_breaking() {
    let tmp = tempfile::tempdir().unwrap();
    let baseline = schemas_dir()
        .join(BASELINE)
        .join("v2/PlanRunV2.schema.json");
    let mut schema: Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline).unwrap()).unwrap();
    schema["properties"]["id"]["pattern"] = json!("^run-[0-9a-f]{32}$");
    let new = write(tmp.path(), "PlanRunV2.schema.json", &schema);
    let out = planrun(&[
        "schema",
        "compat",
        baseline.to_str().unwrap(),
        new.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("PlanRunV2.schema.json: BREAKING"), "{text}");
    assert!(
        text.contains("pattern-changed at /id (breaks both)")
            && text.contains("[old #/properties/id/pattern, new #/properties/id/pattern]"),
        "{text}"
    );
    assert_eq!(
        compare_paths(&baseline, &new).unwrap().verdict,
        Compatibility::Breaking
    );
}
