//! A store with bad inputs: malformed JSON, an undetectable version, a missing plan, an end user
//! `../../etc/passwd`, an unsafe agent-memory output name, a symlink out of SRC, an unreadable
//! file, a V2-id conflict, a file named for another run and a run whose plan its own SDK cannot
//! load. Each is reported with its path and
//! class, the good runs still migrate, the exit code is 1, nothing is written outside DST and
//! SRC is unchanged.

use crate::migrate_support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use migrate_support::*;
use serde_json::{json, Value};

const R4_RUN: &str = "prun-e134da5d-ffce-49f3-90d1-4be7ee0e8dac";
const R4_MEMORY_RUN: &str = "prun-447d71b8-fabd-4484-b8bd-8bcf8d7b8c71";
const W1_RUN: &str = "wkfl-1c143f71-20ff-4870-a859-5f017b23e805";

fn id(n: char) -> String {
    let d = n.to_string();
    format!(
        "{}-{}-4{}-8{}-{}",
        d.repeat(8),
        d.repeat(4),
        d.repeat(3),
        d.repeat(3),
        d.repeat(12)
    )
}

/// A corpus run with its id replaced by `prun-<id(n)>` (and any other replacements).
fn variant(corpus: &Path, run: &str, n: char, also: &[(&str, &str)]) -> String {
    let mut text = std::fs::read_to_string(corpus.join(format!("{run}.json"))).unwrap();
    text = text.replace(run, &format!("prun-{}", id(n)));
    for (from, to) in also {
        assert!(text.contains(from), "{from}");
        text = text.replace(from, to);
    }
    text
}

#[test]
fn bad_inputs_are_reported_and_the_batch_finishes() {
    let stores = corpus_stores();
    let r4 = stores
        .iter()
        .find(|s| s.ends_with("R4/disk_storage"))
        .unwrap();
    let w1 = stores
        .iter()
        .find(|s| s.ends_with("W1/disk_storage"))
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    copy_dir(r4, &store);
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let put = |name: String, text: &str| std::fs::write(store.join(name), text).unwrap();

    put(
        format!("prun-{}.json", id('1')),
        "{\n    \"id\": \"prun-1\",\n    \"plan_id\": ",
    );
    put(format!("prun-{}.json", id('2')), "{\"hello\": \"world\"}");
    put(
        format!("prun-{}.json", id('3')),
        &variant(
            r4,
            R4_RUN,
            '3',
            &[(
                "plan-ae803ec3-17ec-470c-848e-817b00d50d95",
                &format!("plan-{}", id('3')),
            )],
        ),
    );
    put(
        format!("prun-{}.json", id('4')),
        &variant(
            r4,
            R4_RUN,
            '4',
            &[(
                "\"end_user_id\": \"user-123\"",
                "\"end_user_id\": \"../../etc/passwd\"",
            )],
        ),
    );
    put(
        format!("prun-{}.json", id('9')),
        &variant(
            r4,
            R4_MEMORY_RUN,
            '9',
            &[(
                "\"output_name\": \"$big_report\"",
                "\"output_name\": \"../../../evil\"",
            )],
        ),
    );
    let target = outside.join("secret.json");
    std::fs::write(&target, variant(r4, R4_RUN, '5', &[])).unwrap();
    std::os::unix::fs::symlink(&target, store.join(format!("prun-{}.json", id('5')))).unwrap();
    let locked = store.join(format!("prun-{}.json", id('6')));
    std::fs::write(&locked, variant(r4, R4_RUN, '6', &[])).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Root (or CAP_DAC_OVERRIDE) reads a mode-000 file anyway: the `io` assertion is skipped then.
    let unreadable = std::fs::read(&locked).is_err();
    put(
        format!("prun-{}.json", id('7')),
        &variant(r4, R4_RUN, '7', &[]),
    );
    put(
        format!("wkfl-{}.json", id('7')),
        &std::fs::read_to_string(w1.join(format!("{W1_RUN}.json")))
            .unwrap()
            .replace(W1_RUN, &format!("wkfl-{}", id('7'))),
    );
    put(
        format!("prun-{}.json", id('8')),
        &variant(r4, R4_RUN, '0', &[]),
    );
    // A plan that is a symlink, referenced by one run.
    std::fs::write(
        outside.join("plan.json"),
        std::fs::read(r4.join("plan-e4039782-67e5-43c9-ae73-35a01662e2ce.json")).unwrap(),
    )
    .unwrap();
    let linked_plan = format!("plan-{}", id('a'));
    std::os::unix::fs::symlink(
        outside.join("plan.json"),
        store.join(format!("{linked_plan}.json")),
    )
    .unwrap();
    let plan_of_r4 = std::fs::read_to_string(r4.join(format!("{R4_RUN}.json"))).unwrap();
    let old_plan = plan_of_r4
        .split("\"plan_id\": \"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    put(
        format!("prun-{}.json", id('a')),
        &variant(r4, R4_RUN, 'a', &[(&old_plan, &linked_plan)]),
    );
    // A v0.3.0 run whose plan has v0.3.4's plan_inputs: v0.3.0's Plan forbids the key, but a
    // later release saved the plan again (v0.3.0–v0.3.5's `run_plan` overwrites a plan file
    // its `get_plan` refuses; any caller may save a plan it loaded), so this pair is a store
    // with a history, not bad input: the run converts, its plan read as v0.3.4's.
    let later_plan = format!("plan-{}", id('b'));
    let plan_text = std::fs::read_to_string(r4.join(format!("{old_plan}.json")))
        .unwrap()
        .replace(&old_plan, &later_plan);
    let (body, _) = plan_text.trim_end().rsplit_once('}').unwrap();
    put(
        format!("{later_plan}.json"),
        &format!("{},\n    \"plan_inputs\": []\n}}\n", body.trim_end()),
    );
    put(
        format!("prun-{}.json", id('b')),
        &variant(r4, R4_RUN, 'b', &[(&old_plan, &later_plan)]),
    );

    let src_before = fingerprint(&store);
    let outside_before = fingerprint(&outside);
    let passwd_before = std::fs::metadata("/etc/passwd")
        .and_then(|m| m.modified())
        .ok();

    let dst = tmp.path().join("dst");
    let report_file = tmp.path().join("report.json");
    let output = run(args(&[
        &"migrate",
        &store,
        &"--out",
        &dst,
        &"--jobs",
        &"2",
        &"--report",
        &report_file,
    ]));
    assert_eq!(code(&output), 1, "{}", show(&output));
    let report = json(&report_file);
    assert_eq!(report, json(&dst.join(".planrun/report.json")));

    let failures: Vec<&Value> = report["failures"].as_array().unwrap().iter().collect();
    let failure = |n: char, prefix: &str| -> &Value {
        let path = store
            .canonicalize()
            .unwrap()
            .join(format!("{prefix}-{}.json", id(n)));
        failures
            .iter()
            .find(|f| f["path"] == path.to_str().unwrap())
            .unwrap_or_else(|| panic!("{} not reported: {report:#}", path.display()))
    };
    let expect = |n: char, prefix: &str, class: &str, kind: &str, says: &str| {
        let f = failure(n, prefix);
        assert_eq!(
            (f["class"].as_str(), f["kind"].as_str()),
            (Some(class), Some(kind)),
            "{f}"
        );
        assert!(f["message"].as_str().unwrap().contains(says), "{f}");
        f
    };
    let malformed = expect('1', "prun", "rejected", "syntax", "cut short");
    assert_eq!(
        (
            malformed["line"].as_u64(),
            malformed["column"].as_u64().map(|c| c > 0)
        ),
        (Some(3), Some(true)),
        "{malformed}"
    );
    assert!(malformed["pointer"].is_string());
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(&format!("prun-{}.json:3:", id('1'))),
        "line:column in the text report: {text}"
    );
    expect('2', "prun", "rejected", "unrecognised", "");
    // A run whose plan file was never saved (the SDK before v0.3.0 saved no hand-built plan,
    // and HEAD loads the run without it) converts, with a plan rebuilt from the run and marked.
    let rebuilt_path = dst.join(format!("prun-{}.json", id('3')));
    assert!(rebuilt_path.exists(), "{report:#}");
    let rebuilt = json(&rebuilt_path);
    assert_eq!(
        rebuilt["legacy"]["entries"]["/plan"],
        json!({"absent": true})
    );
    assert_eq!(rebuilt["plan"]["id"], format!("plan-{}", id('3')));
    expect('4', "prun", "rejected", "unsafe_name", "../../etc/passwd");
    expect('9', "prun", "rejected", "unsafe_name", "../../../evil");
    expect('5', "prun", "rejected", "symlink", "never followed");
    let plan_link = expect('a', "prun", "rejected", "symlink", "never followed");
    assert!(
        plan_link["file"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{linked_plan}.json")),
        "{plan_link}"
    );
    let later_path = dst.join(format!("prun-{}.json", id('b')));
    assert!(later_path.exists(), "{report:#}");
    let later = json(&later_path);
    assert_eq!(later["plan"]["id"], later_plan.as_str());
    assert!(failures
        .iter()
        .all(|f| !f["path"].as_str().unwrap().contains(&id('b'))
            && !f["path"].as_str().unwrap().contains(&id('3'))));
    expect('7', "wkfl", "rejected", "conflict", "sorts first");
    expect(
        '8',
        "prun",
        "rejected",
        "id_mismatch",
        &format!("prun-{}", id('0')),
    );
    let expected_failures = if unreadable {
        expect('6', "prun", "rejected", "io", "ermission denied");
        9
    } else {
        eprintln!(
            "running as root: a mode-000 file is readable, so its `io` rejection is not checked"
        );
        assert!(failures
            .iter()
            .all(|f| !f["path"].as_str().unwrap().contains(&id('6'))));
        8
    };
    assert_eq!(failures.len(), expected_failures, "{report:#}");
    assert_eq!(
        report["outcomes"]["rejected"].as_u64().unwrap()
            + report["outcomes"]["blocked"].as_u64().unwrap(),
        expected_failures as u64
    );

    // The good runs migrated, and DST holds nothing else.
    let converted: u64 = ["converted", "converted_with_loss", "already_current"]
        .iter()
        .map(|c| report["outcomes"][c].as_u64().unwrap())
        .sum();
    let outputs: Vec<String> = std::fs::read_dir(&dst)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    assert_eq!(outputs.len() as u64, converted, "{outputs:?}");
    assert!(
        outputs.contains(&format!("prun-{}.json", id('7'))),
        "the conflict's winner migrated"
    );
    assert!(temp_files(&dst).is_empty());
    for entry in std::fs::read_dir(&dst).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(name == ".planrun" || name.starts_with("prun-"), "{name}");
    }

    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    assert_eq!(fingerprint(&store), src_before, "SRC changed");
    assert_eq!(
        fingerprint(&outside),
        outside_before,
        "a file outside DST changed"
    );
    assert_eq!(
        std::fs::metadata("/etc/passwd")
            .and_then(|m| m.modified())
            .ok(),
        passwd_before
    );
    assert!(!tmp.path().join("evil.json").exists() && !Path::new("/evil.json").exists());

    // `convert` on a bad run says the same, with exit 1.
    let single = run(args(&[
        &"convert",
        &store.join(format!("prun-{}.json", id('4'))),
    ]));
    assert_eq!(code(&single), 1, "{}", show(&single));
    assert!(single.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&single.stderr).contains("unsafe_name"),
        "{}",
        show(&single)
    );
    let missing = run(args(&[&"convert", &store.join("prun-nothing.json")]));
    assert_eq!(code(&missing), 2, "{}", show(&missing));
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o600)).unwrap();
}

#[test]
fn a_resume_after_a_run_left_src_removes_its_output_and_says_so() {
    // SRC is alive: a run deleted there since the migration has its output removed from DST by
    // the next resume, which journals the removal and reports it, so that DST corresponds to
    // SRC as it is now and the verify pass holds.
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    copy_dir(&example_store(), &store);
    let dst = tmp.path().join("dst");
    let first = run(args(&[&"migrate", &store, &"--out", &dst, &"--quiet"]));
    assert_eq!(code(&first), 0, "{}", show(&first));
    let gone = run_files(&store)[1].clone();
    std::fs::remove_file(store.join(&gone)).unwrap();
    let again = run(args(&[
        &"migrate",
        &store,
        &"--out",
        &dst,
        &"--resume",
        &"--quiet",
    ]));
    assert_eq!(code(&again), 0, "{}", show(&again));
    let report = json(&dst.join(".planrun/report.json"));
    assert_eq!(report["catch_up"]["removed"], 1, "{report:#}");
    assert_eq!(
        report["catch_up"]["names"]["removed"],
        json!([gone]),
        "{report:#}"
    );
    let fresh = tmp.path().join("fresh");
    let direct = run(args(&[&"migrate", &store, &"--out", &fresh, &"--quiet"]));
    assert_eq!(code(&direct), 0, "{}", show(&direct));
    assert_eq!(tree(&dst, &[".planrun"]), tree(&fresh, &[".planrun"]));
}

/// `--quiet` prints only the failures, one line each on stderr, as the text summary words them.
#[test]
fn quiet_prints_each_failure_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    copy_dir(&example_store(), &store);
    let broken = "prun-00000000-0000-4000-8000-000000000001.json";
    std::fs::write(store.join(broken), "{\"id\": ").unwrap();
    let dst = tmp.path().join("dst");
    let quiet = run(args(&[&"migrate", &store, &"--out", &dst, &"--quiet"]));
    assert_eq!(code(&quiet), 1, "{}", show(&quiet));
    assert!(quiet.stdout.is_empty(), "{}", show(&quiet));
    let said = String::from_utf8(quiet.stderr.clone()).unwrap();
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(lines.len(), 1, "{said}");
    assert!(
        lines[0].contains(broken) && lines[0].contains(": rejected (syntax)"),
        "{said}"
    );
    let full = run(args(&[
        &"migrate",
        &store,
        &"--out",
        &tmp.path().join("full"),
    ]));
    let summary = String::from_utf8(full.stdout).unwrap();
    assert!(summary.lines().any(|l| l == lines[0]), "{summary}");
}

#[test]
fn a_src_with_no_run_file_is_a_usage_error_and_dst_is_not_created() {
    // A wrong SRC (a fresh directory, a store's parent) used to migrate "0 runs" and exit 0.
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let parent = tmp.path().join("parent");
    copy_dir(&example_store(), &parent.join("disk_storage"));
    std::fs::create_dir(parent.join("logs")).unwrap();
    std::fs::create_dir(parent.join("other")).unwrap();
    std::fs::write(parent.join("settings.json"), "{}").unwrap();
    let cases = [
        (
            &empty,
            "it holds 0 directories and 0 JSON files".to_owned(),
            None,
        ),
        (
            &parent,
            "it holds 3 directories and 1 JSON file".to_owned(),
            Some(parent.canonicalize().unwrap().join("disk_storage")),
        ),
    ];
    for (src, holds, hint) in cases {
        for dry in [false, true] {
            let dst = tmp.path().join("dst");
            let mut argv = args(&[&"migrate", src, &"--out", &dst]);
            if dry {
                argv.push("--dry-run".into());
            }
            let out = run(argv);
            assert_eq!(code(&out), 2, "{}", show(&out));
            let err = String::from_utf8_lossy(&out.stderr);
            let src = src.canonicalize().unwrap();
            assert!(
                err.contains(&format!(
                    "no run files (wkfl-*.json, pr-*.json, prun-*.json) in SRC {}; {holds}",
                    src.display()
                )),
                "{}",
                show(&out)
            );
            match &hint {
                Some(store) => assert!(
                    err.contains(&format!(": did you mean {}?", store.display())),
                    "{}",
                    show(&out)
                ),
                None => assert!(!err.contains("did you mean"), "{}", show(&out)),
            }
            assert!(!dst.exists(), "DST created: {}", show(&out));
        }
    }
}

#[test]
fn an_os_error_and_a_rejected_runs_path_are_each_said_once() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = run(args(&[
        &"migrate",
        &tmp.path().join("no-such-store"),
        &"--out",
        &tmp.path().join("dst"),
    ]));
    assert_eq!(code(&missing), 2, "{}", show(&missing));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(
        err.matches("No such file or directory").count(),
        1,
        "{}",
        show(&missing)
    );

    let store = tmp.path().join("store");
    copy_dir(&example_store(), &store);
    let bad = store.join(&run_files(&store)[0]);
    std::fs::write(&bad, "hello\n").unwrap();
    let out = run(args(&[
        &"migrate",
        &store,
        &"--out",
        &tmp.path().join("out"),
    ]));
    assert_eq!(code(&out), 1, "{}", show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let bad = bad.canonicalize().unwrap();
    let line = stdout
        .lines()
        .find(|l| l.contains("rejected (syntax)"))
        .unwrap_or_else(|| panic!("{}", show(&out)));
    assert_eq!(line.matches(&*bad.to_string_lossy()).count(), 1, "{line}");
    assert!(
        line.starts_with(&format!("{}:1:1: rejected (syntax) at", bad.display())),
        "{line}"
    );
}

/// A JSON file in SRC that is no Portia document (a stray `foo.json`, a file that is not JSON at
/// all) is listed under `ignored` with why, never passed over without a word; end users are not.
#[test]
fn json_files_that_are_no_portia_document_are_listed_as_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    copy_dir(&example_store(), &store);
    std::fs::write(store.join("foo.json"), br#"{"hello": "world"}"#).unwrap();
    std::fs::write(store.join("bar.json"), b"oops").unwrap();
    let dst = tmp.path().join("dst");
    let output = run(args(&[
        &"--format",
        &"json",
        &"migrate",
        &store,
        &"--out",
        &dst,
    ]));
    assert_eq!(code(&output), 0, "{}", show(&output));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let ignored = report["ignored"].as_array().unwrap();
    let reason = |name: &str| {
        ignored
            .iter()
            .find(|i| i["path"].as_str().unwrap().ends_with(name))
            .unwrap_or_else(|| panic!("{name} not listed: {report:#}"))["reason"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(reason("/foo.json").contains("not a legacy Portia document"));
    assert!(reason("/bar.json").contains("not JSON"));
    assert_eq!(ignored.len(), 2, "{report:#}");
}
