//! `planrun migrate` end to end over real stores: every corpus DiskFileStorage (and the example
//! store) migrates; each V2 file is byte for byte what `planrun convert` writes for the same run
//! file (a batch gives the bytes of singles); SRC is unchanged (inputs are never written); `--jobs 1` and `--jobs 2` write the same tree; shards
//! together write what one migration writes, and their reports merge into its report.

use crate::migrate_support;

use std::path::Path;

use migrate_support::*;
use serde_json::Value;

/// Migrates `store` into `dst` with extra arguments; the output and the report.
fn migrate(store: &Path, dst: &Path, extra: &[&str]) -> (std::process::Output, Value) {
    let mut argv = args(&[&"migrate", &store, &"--out", &dst]);
    argv.extend(extra.iter().map(std::ffi::OsString::from));
    let output = run(argv);
    let report = match std::fs::read_dir(dst.join(".planrun")) {
        Ok(entries) => {
            let path = entries
                .map(|e| e.unwrap().path())
                .find(|p| {
                    p.file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with("report")
                })
                .unwrap_or_else(|| panic!("no report in {}: {}", dst.display(), show(&output)));
            json(&path)
        }
        Err(_) => Value::Null,
    };
    (output, report)
}

#[test]
fn every_corpus_store_migrates_to_what_convert_writes_run_by_run() {
    let mut stores = corpus_stores();
    assert!(stores.len() >= 5, "{stores:?}");
    stores.push(example_store());
    // Law 7: a store with a history converts completely too (plans saved again by a later
    // release, runs whose plan was never saved, W1/R0 plans that repeat an output).
    let generated = tempfile::tempdir().unwrap();
    stores.push(history_store(generated.path(), 160, 11));
    for store in stores {
        let before = fingerprint(&store);
        let tmp = tempfile::tempdir().unwrap();
        let dst = tmp.path().join("dst");
        let (output, report) = migrate(&store, &dst, &["--jobs", "2"]);
        let runs = run_files(&store);
        // No corpus run is blocked or rejected: every end user and agent-memory file the SDK
        // referenced is in its store, and a run whose plan was never saved converts with a
        // rebuilt one.
        assert_eq!(code(&output), 0, "{}: {}", store.display(), show(&output));
        assert_eq!(report["runs"], runs.len() as u64, "{report}");
        assert_eq!(report["failures"], Value::Array(vec![]), "{report}");
        assert_eq!(report["verified"], runs.len() as u64, "{report}");

        let mut expected_files = vec![];
        for name in &runs {
            let converted = run(args(&[&"convert", &store.join(name)]));
            assert_eq!(code(&converted), 0, "{name}: {}", show(&converted));
            let v2: Value = serde_json::from_slice(&converted.stdout).unwrap();
            let id = v2["id"].as_str().unwrap();
            let written = std::fs::read(dst.join(format!("{id}.json"))).unwrap();
            assert!(
                written == converted.stdout,
                "{}/{name}: migrate and convert differ",
                store.display()
            );
            assert!(written.ends_with(b"}\n"));
            expected_files.push(format!("{id}.json"));
        }
        // Agent memory is copied byte for byte, so DST is self-contained.
        for entry in std::fs::read_dir(&store).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                for file in std::fs::read_dir(entry.path()).unwrap() {
                    let file = file.unwrap().path();
                    let rel = file.strip_prefix(&store).unwrap();
                    assert_eq!(
                        std::fs::read(&file).unwrap(),
                        std::fs::read(dst.join(rel)).unwrap(),
                        "{}",
                        rel.display()
                    );
                    expected_files.push(rel.to_string_lossy().into_owned());
                }
            }
        }
        let mut written: Vec<String> = tree(&dst, &[".planrun"])
            .into_iter()
            .filter(|(_, v)| v != b"<dir>")
            .map(|(k, _)| k)
            .collect();
        written.sort();
        expected_files.sort();
        assert_eq!(written, expected_files, "{}", store.display());
        assert!(temp_files(&dst).is_empty());
        assert_eq!(
            fingerprint(&store),
            before,
            "SRC {} changed",
            store.display()
        );
    }
}

/// A store of generated runs of every version, a corpus R6 store and one run that is already a
/// PlanRunV2.
fn mixed_store(root: &Path) -> std::path::PathBuf {
    let store = root.join("store");
    let generated = run([
        "gen",
        "--runs",
        "300",
        "--seed",
        "11",
        "--out",
        store.to_str().unwrap(),
    ]);
    assert_eq!(code(&generated), 0, "{}", show(&generated));
    let r6 = corpus_stores()
        .into_iter()
        .find(|s| s.ends_with("R6/disk_storage"))
        .unwrap();
    for entry in std::fs::read_dir(&r6).unwrap() {
        let entry = entry.unwrap();
        let target = store.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else if !target.exists() {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
    // An R6 run converted on its own, renamed to a new id: already current.
    let first = &run_files(&r6)[0];
    let converted = run(args(&[&"convert", &r6.join(first)]));
    let old_id = first.trim_end_matches(".json");
    let new_id = "prun-00000000-0000-4000-8000-00000000c0de";
    let text = String::from_utf8(converted.stdout)
        .unwrap()
        .replace(old_id, new_id);
    std::fs::write(store.join(format!("{new_id}.json")), text).unwrap();
    store
}

/// A migration journals each distinct set of loss totals (a config's, a plan's, a run's own)
/// once, in an `entries` line before the first line naming its key; `completed` lines hold keys,
/// not totals. Most runs of a store have the own totals of some earlier run, so there are fewer
/// `entries` lines than runs.
fn journal_names_each_set_of_totals_once(journal: &Path) {
    let mut defined = std::collections::HashSet::new();
    let (mut completed, mut named) = (0, 0);
    for line in std::fs::read_to_string(journal).unwrap().lines() {
        let line: Value = serde_json::from_str(line).unwrap();
        match line["event"].as_str().unwrap() {
            "entries" => {
                let key = line["key"].as_str().unwrap().to_owned();
                assert!(line["entries"].is_array(), "{line}");
                assert!(defined.insert(key), "defined twice: {line}");
            }
            "completed" => {
                completed += 1;
                assert!(
                    line.get("entries").is_none(),
                    "totals in a run line: {line}"
                );
                for key in line["shared"].as_array().into_iter().flatten() {
                    named += 1;
                    let key = key.as_str().unwrap();
                    assert!(defined.contains(key), "{key} named before it is defined");
                }
            }
            _ => {}
        }
    }
    assert!(named > completed, "{named} keys named by {completed} runs");
    assert!(
        defined.len() < completed,
        "{} entries lines for {completed} runs",
        defined.len()
    );
}

#[test]
fn jobs_shards_dry_runs_and_resumes_give_the_same_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    let store = mixed_store(tmp.path());
    let before = fingerprint(&store);
    let runs = run_files(&store).len() as u64;

    let one = tmp.path().join("one");
    let (output, report) = migrate(&store, &one, &["--jobs", "1", "--chunk-size", "7"]);
    assert_eq!(code(&output), 0, "{}", show(&output));
    assert_eq!(report["runs"], runs);
    assert_eq!(report["outcomes"]["already_current"], 1, "{report}");
    let current =
        std::fs::read(store.join("prun-00000000-0000-4000-8000-00000000c0de.json")).unwrap();
    assert_eq!(
        std::fs::read(one.join("prun-00000000-0000-4000-8000-00000000c0de.json")).unwrap(),
        current,
        "copied as is"
    );
    journal_names_each_set_of_totals_once(&one.join(".planrun/journal.jsonl"));

    let two = tmp.path().join("two");
    let (output, _) = migrate(&store, &two, &["--jobs", "2"]);
    assert_eq!(code(&output), 0, "{}", show(&output));
    let reference = tree(&one, &[".planrun"]);
    let other = tree(&two, &[".planrun"]);
    assert!(
        reference == other,
        "--jobs 1 and --jobs 2 differ: {}",
        first_difference(&reference, &other)
    );

    // Three shards into one DST, each with its own journal and report; together, one migration.
    let sharded = tmp.path().join("sharded");
    let mut shard_reports = vec![];
    for i in 0..3 {
        let shard = format!("{i}/3");
        let output = run(args(&[
            &"migrate", &store, &"--out", &sharded, &"--shard", &shard, &"--jobs", &"2",
        ]));
        assert_eq!(code(&output), 0, "shard {shard}: {}", show(&output));
        let file = sharded.join(format!(".planrun/report-{i}-of-3.json"));
        assert!(sharded
            .join(format!(".planrun/journal-{i}-of-3.jsonl"))
            .is_file());
        shard_reports.push(file);
    }
    let together = tree(&sharded, &[".planrun"]);
    assert!(
        reference == together,
        "shards differ: {}",
        first_difference(&reference, &together)
    );
    let merged_file = tmp.path().join("merged.json");
    let mut argv = args(&[&"report", &"merge"]);
    argv.extend(shard_reports.iter().map(|p| p.clone().into_os_string()));
    argv.extend(args(&[&"--out", &merged_file]));
    let merged = run(argv);
    assert_eq!(code(&merged), 0, "{}", show(&merged));
    let merged = json(&merged_file);
    assert_eq!(merged["shards"], serde_json::json!([0, 1, 2]));
    for key in [
        "runs",
        "outcomes",
        "source_versions",
        "entries",
        "agent_memory_files",
        "verified",
        "failures",
    ] {
        assert_eq!(merged[key], report[key], "{key}");
    }
    let paths = |r: &Value| -> Vec<Value> {
        r["largest"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["path"].clone())
            .collect()
    };
    assert_eq!(
        paths(&merged),
        paths(&report),
        "the largest runs (timings differ)"
    );

    // A dry run writes nothing, not even DST, and reports the same.
    let dry = tmp.path().join("dry");
    let dry_report = tmp.path().join("dry.json");
    let output = run(args(&[
        &"migrate",
        &store,
        &"--out",
        &dry,
        &"--dry-run",
        &"--report",
        &dry_report,
    ]));
    assert_eq!(code(&output), 0, "{}", show(&output));
    assert!(!dry.exists());
    let dry_report = json(&dry_report);
    assert_eq!(dry_report["dry_run"], true);
    for key in [
        "runs",
        "outcomes",
        "source_versions",
        "entries",
        "agent_memory_files",
        "verified",
    ] {
        assert_eq!(dry_report[key], report[key], "{key}");
    }

    // A finished migration resumes to itself; without --resume it is refused.
    let again = run(args(&[&"migrate", &store, &"--out", &one]));
    assert_eq!(code(&again), 2, "{}", show(&again));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("--resume"),
        "{}",
        show(&again)
    );
    let resumed = run(args(&[&"migrate", &store, &"--out", &one, &"--resume"]));
    assert_eq!(code(&resumed), 0, "{}", show(&resumed));
    assert!(
        String::from_utf8_lossy(&resumed.stdout)
            .contains(&format!("resumed: {runs} runs up to date")),
        "{}",
        show(&resumed)
    );
    assert!(reference == tree(&one, &[".planrun"]));

    assert_eq!(fingerprint(&store), before, "SRC changed");
}

#[test]
fn json_lines_on_stdin_convert_like_files() {
    use std::io::Write;
    let store = corpus_stores()
        .into_iter()
        .find(|s| s.ends_with("R4/disk_storage"))
        .unwrap();
    let names = run_files(&store);
    let mut input = String::new();
    let mut expected = String::new();
    for name in &names {
        let doc: Value = json(&store.join(name));
        input.push_str(&serde_json::to_string(&doc).unwrap());
        input.push('\n');
        let converted = run(args(&[&"convert", &store.join(name)]));
        let v2: Value = serde_json::from_slice(&converted.stdout).unwrap();
        expected.push_str(&serde_json::to_string(&v2).unwrap());
        expected.push('\n');
    }
    input.push_str("{\"not\": \"a run\"}\n");
    let mut child = planrun()
        .args(["--format", "json", "convert", "-", "--store"])
        .arg(&store)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        code(&output),
        1,
        "the last line is rejected: {}",
        show(&output)
    );
    assert_eq!(String::from_utf8(output.stdout.clone()).unwrap(), expected);
    let reports: Vec<Value> = output
        .stderr
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(reports.len(), names.len() + 1);
    let last = reports.last().unwrap();
    assert_eq!(last["class"], "rejected");
    assert_eq!(last["line"], names.len() as u64 + 1);
    assert_eq!(last["error"]["kind"], "unrecognised", "{last}");
}

#[test]
fn a_non_empty_dst_or_one_inside_src_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    copy_dir(&example_store(), &store);
    let before = fingerprint(&store);
    let busy = tmp.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("notes.txt"), "mine").unwrap();
    for dst in [busy.clone(), store.join("out"), tmp.path().to_owned()] {
        for extra in [None, Some("--resume")] {
            let mut argv = args(&[&"migrate", &store, &"--out", &dst]);
            argv.extend(extra.map(std::ffi::OsString::from));
            let output = run(argv);
            assert_eq!(code(&output), 2, "{}: {}", dst.display(), show(&output));
            assert!(
                String::from_utf8_lossy(&output.stderr).starts_with("error: "),
                "{}",
                show(&output)
            );
        }
    }
    assert_eq!(std::fs::read_dir(&busy).unwrap().count(), 1);
    assert_eq!(fingerprint(&store), before, "SRC changed");
    // Another store's journal is not resumed.
    let dst = tmp.path().join("dst");
    assert_eq!(code(&run(args(&[&"migrate", &store, &"--out", &dst]))), 0);
    let other = corpus_stores().remove(0);
    let output = run(args(&[&"migrate", &other, &"--out", &dst, &"--resume"]));
    assert_eq!(code(&output), 2, "{}", show(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("another source store"),
        "{}",
        show(&output)
    );
}
