//! What each durability mode of `planrun migrate` promises. `--no-sync` writes the tree the
//! default writes, and a `--no-sync` migration whose writes an OS crash lost in part (outputs
//! gone, empty or cut short although the journal calls them completed, a journal line zeroed,
//! the journal's last lines gone) resumes to the bytes of an uninterrupted migration. Under
//! `strace`, the default syncs the file system, `--durable` fsyncs every output, and `--no-sync`
//! makes no sync call.

use crate::migrate_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use migrate_support::*;
use serde_json::Value;

/// The system calls that make written data durable.
const SYNC_CALLS: [&str; 6] = [
    "sync",
    "syncfs",
    "fsync",
    "fdatasync",
    "sync_file_range",
    "msync",
];

fn generate(dir: &Path, runs: &str) -> std::path::PathBuf {
    let store = dir.join("store");
    let generated = run(args(&[
        &"gen", &"--runs", &runs, &"--seed", &"9", &"--out", &store,
    ]));
    assert_eq!(code(&generated), 0, "{}", show(&generated));
    store
}

/// `migrate STORE --out DST --jobs 2` and `extra`, as arguments of `planrun`.
fn migrate_args(store: &Path, dst: &Path, extra: &[&str]) -> Vec<std::ffi::OsString> {
    let mut argv = args(&[&"migrate", &store, &"--out", &dst, &"--jobs", &"2"]);
    argv.extend(extra.iter().map(Into::into));
    argv
}

/// Runs [`migrate_args`], which must exit 0; its output.
fn migrate(store: &Path, dst: &Path, extra: &[&str]) -> std::process::Output {
    let output = run(migrate_args(store, dst, extra));
    assert_eq!(code(&output), 0, "{extra:?}: {}", show(&output));
    output
}

#[test]
fn no_sync_writes_the_same_tree_and_a_resume_redoes_what_an_os_crash_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let store = generate(tmp.path(), "600");
    let reference_dst = tmp.path().join("reference");
    migrate(&store, &reference_dst, &[]);
    let reference = tree(&reference_dst, &[".planrun"]);
    let reference_report = json(&reference_dst.join(".planrun/report.json"));

    let dst = tmp.path().join("unsynced");
    migrate(&store, &dst, &["--no-sync", "--chunk-size", "16"]);
    assert!(
        tree(&dst, &[".planrun"]) == reference,
        "{}",
        first_difference(&reference, &tree(&dst, &[".planrun"]))
    );
    let report = json(&dst.join(".planrun/report.json"));
    assert_eq!(outcomes(&report), outcomes(&reference_report));
    assert_eq!(report["entries"], reference_report["entries"]);
    assert_eq!(report["verified"], 600);

    // An OS crash loses any write that had not reached the disk, in any order: here the
    // journal's last 40 lines; a line in its middle, left as zeros (as a file system may show
    // a block whose data never arrived); and three outputs whose `completed` lines survive.
    // Everything from the damaged line on counts as torn: those runs are redone.
    let journal_path = dst.join(".planrun/journal.jsonl");
    let journal = std::fs::read_to_string(&journal_path).unwrap();
    let mut lines: Vec<String> = journal.lines().map(str::to_owned).collect();
    lines.truncate(lines.len() - 40);
    let damaged = lines.len() / 2;
    lines[damaged] = "\0".repeat(lines[damaged].len());
    std::fs::write(&journal_path, lines.join("\n") + "\n").unwrap();
    let mut last: BTreeMap<String, Value> = BTreeMap::new();
    for line in &lines[..damaged] {
        let line: Value = serde_json::from_str(line).unwrap();
        if matches!(line["event"].as_str(), Some("completed" | "failed")) {
            last.insert(line["run"].as_str().unwrap().to_owned(), line);
        }
    }
    let completed: Vec<&Value> = last
        .values()
        .filter(|l| l["event"] == "completed")
        .collect();
    assert!(
        completed.len() > 100,
        "{} completed runs survive",
        completed.len()
    );
    let output = |line: &Value| dst.join(format!("{}.json", line["id"].as_str().unwrap()));
    std::fs::remove_file(output(completed[0])).unwrap();
    std::fs::File::create(output(completed[1])).unwrap();
    let cut = output(completed[2]);
    let bytes = std::fs::read(&cut).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let done = completed.len() - 3;

    let resumed = migrate(&store, &dst, &["--resume", "--no-sync"]);
    let said = String::from_utf8_lossy(&resumed.stdout);
    assert!(
        said.contains(&format!("resumed: {done} runs up to date"))
            && said.contains("a torn journal line cut off"),
        "{}",
        show(&resumed)
    );
    let got = tree(&dst, &[".planrun"]);
    assert!(got == reference, "{}", first_difference(&reference, &got));
    let report = json(&dst.join(".planrun/report.json"));
    assert_eq!(outcomes(&report), outcomes(&reference_report));
    assert_eq!(report["verified"], 600);
}

#[test]
fn durable_and_no_sync_cannot_be_combined() {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("dst");
    let output = run(migrate_args(
        &example_store(),
        &dst,
        &["--durable", "--no-sync"],
    ));
    assert_eq!(code(&output), 2, "{}", show(&output));
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("--no-sync") && said.contains("--durable"),
        "{said}"
    );
    assert!(!dst.exists());
}

/// How often each of [`SYNC_CALLS`] was made by `planrun migrate` with `extra`, under strace.
fn sync_calls(store: &Path, dst: &Path, extra: &[&str]) -> BTreeMap<&'static str, usize> {
    let log = dst.with_extension("strace");
    let mut cmd = std::process::Command::new("strace");
    cmd.args(["-f", "-qq", "-e"])
        .arg(format!("trace={}", SYNC_CALLS.join(",")))
        .arg("-o")
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_planrun"))
        .args(migrate_args(store, dst, extra));
    let output = match cmd.output() {
        Ok(output) => output,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            panic!("strace is not installed (apt-get install strace)")
        }
        Err(err) => panic!("strace: {err}"),
    };
    assert_eq!(code(&output), 0, "{extra:?}: {}", show(&output));
    let log = std::fs::read_to_string(log).unwrap();
    let mut counts: BTreeMap<&str, usize> = SYNC_CALLS.iter().map(|c| (*c, 0)).collect();
    for line in log.lines() {
        // `1234  syncfs(5) = 0`, or `1234  fsync(7 <unfinished ...>` when threads interleave.
        let call = line
            .split_once(char::is_whitespace)
            .map_or(line, |(_, rest)| rest.trim_start());
        if let Some((name, _)) = call.split_once('(') {
            if let Some(count) = counts.get_mut(name) {
                *count += 1;
            }
        }
    }
    counts
}

#[test]
#[ignore = "needs strace (apt-get install strace); .ci/run installs it and runs this test"]
fn each_mode_makes_the_sync_calls_it_promises() {
    let tmp = tempfile::tempdir().unwrap();
    let store = generate(tmp.path(), "200");
    let default = sync_calls(&store, &tmp.path().join("default"), &[]);
    let durable = sync_calls(&store, &tmp.path().join("durable"), &["--durable"]);
    let unsynced = sync_calls(&store, &tmp.path().join("unsynced"), &["--no-sync"]);
    let outputs = tree(&tmp.path().join("default"), &[".planrun"]).len();

    let only = |counts: &BTreeMap<&str, usize>, calls: &[&str]| -> BTreeSet<String> {
        counts
            .iter()
            .filter(|(name, n)| **n > 0 && !calls.contains(name))
            .map(|(name, n)| format!("{name} x{n}"))
            .collect()
    };
    // The default: one syncfs per group of chunks and one at the end, nothing per file.
    assert!(default["syncfs"] >= 2, "{default:?}");
    assert_eq!(only(&default, &["syncfs"]), BTreeSet::new());
    // --durable: every output (and directory) fsynced, the journal fdatasync'd, no syncfs.
    assert!(
        durable["fsync"] >= outputs,
        "{durable:?}, {outputs} outputs"
    );
    assert!(durable["fdatasync"] >= 1, "{durable:?}");
    assert_eq!(only(&durable, &["fsync", "fdatasync"]), BTreeSet::new());
    // --no-sync: none at all.
    assert_eq!(only(&unsynced, &[]), BTreeSet::new());
    for dst in ["durable", "unsynced"] {
        assert!(
            tree(&tmp.path().join(dst), &[".planrun"])
                == tree(&tmp.path().join("default"), &[".planrun"])
        );
    }
}
