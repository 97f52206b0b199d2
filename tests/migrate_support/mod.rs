//! Helpers of the `migrate_*` end-to-end tests: the real `planrun` binary, directory trees as
//! maps, and the corpus stores.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The `planrun` binary under test.
pub(crate) fn planrun() -> Command {
    Command::new(env!("CARGO_BIN_EXE_planrun"))
}

/// Runs `planrun` with `args`; its output.
pub(crate) fn run<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    planrun().args(args).output().expect("planrun runs")
}

/// The exit code of a finished command.
pub(crate) fn code(output: &Output) -> i32 {
    output.status.code().expect("exited, not killed")
}

/// Output text for assertion messages.
pub(crate) fn show(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The corpus's DiskFileStorage stores, one per version.
pub(crate) fn corpus_stores() -> Vec<PathBuf> {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .canonicalize()
        .expect("the corpus is at ../shared/corpus");
    let mut stores: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path().join("disk_storage"))
        .filter(|p| p.is_dir())
        .collect();
    stores.sort();
    stores
}

/// The example store the README and the guides use.
pub(crate) fn example_store() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/store")
        .canonicalize()
        .unwrap()
}

/// A generated store with a history in `root/history-<seed>` (see `planrun gen --history`):
/// plans a later release saved again, runs before v0.3.0 whose plan was never saved, W1/R0
/// plans that repeat an output. Each case occurs, or the store would prove nothing.
pub(crate) fn history_store(root: &Path, runs: usize, seed: u64) -> PathBuf {
    let store = root.join(format!("history-{seed}"));
    let summary = planrun_gen::generate(
        &planrun_gen::GenOptions {
            runs,
            seed,
            history: true,
            ..planrun_gen::GenOptions::default()
        },
        &store,
    )
    .unwrap();
    assert!(
        summary.plans_saved_again > 0
            && summary.runs_without_plan_file > 0
            && summary.plans_repeating_an_output > 0,
        "seed {seed}: {summary:?}"
    );
    store
}

/// Every regular file under `dir` with its bytes, by relative path; symlinks are not followed
/// (recorded as `-> target`); directories named in `skip` are left out.
pub(crate) fn tree(dir: &Path, skip: &[&str]) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    walk(dir, dir, skip, &mut |rel, path, meta| {
        let content = if meta.file_type().is_symlink() {
            format!("-> {}", std::fs::read_link(path).unwrap().display()).into_bytes()
        } else if meta.is_file() {
            std::fs::read(path).unwrap_or_else(|e| format!("unreadable: {e}").into_bytes())
        } else {
            b"<dir>".to_vec()
        };
        out.insert(rel, content);
    });
    out
}

/// A fingerprint of everything under `dir`: names, types, modes, sizes, contents, link targets.
pub(crate) fn fingerprint(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(dir, dir, &[], &mut |rel, path, meta| {
        let mode = meta.permissions().mode();
        let what = if meta.file_type().is_symlink() {
            format!("link {}", std::fs::read_link(path).unwrap().display())
        } else if meta.is_file() {
            let content = std::fs::read(path)
                .map_or_else(|e| format!("unreadable {e}"), |b| format!("{:x?}", fnv(&b)));
            format!("file {} {content}", meta.len())
        } else {
            "dir".to_owned()
        };
        out.insert(rel, format!("{mode:o} {what} {:?}", meta.modified().ok()));
    });
    out
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h: u64, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn walk(
    root: &Path,
    dir: &Path,
    skip: &[&str],
    visit: &mut dyn FnMut(String, &Path, &std::fs::Metadata),
) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if skip.iter().any(|s| rel == *s) {
            continue;
        }
        let meta = std::fs::symlink_metadata(&path).unwrap();
        visit(rel, &path, &meta);
        if meta.is_dir() {
            walk(root, &path, skip, visit);
        }
    }
}

/// Every path under `dir` whose file name starts with `.tmp-`.
pub(crate) fn temp_files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    walk(dir, dir, &[], &mut |rel, path, _| {
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(".tmp-"))
        {
            found.push(rel);
        }
    });
    found
}

/// Copies a directory tree (regular files and directories).
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The names of the run files of a store, sorted.
pub(crate) fn run_files(store: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(store)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.ends_with(".json") && ["wkfl-", "pr-", "prun-"].iter().any(|p| n.starts_with(p))
        })
        .collect();
    names.sort();
    names
}

/// Reads a JSON file.
pub(crate) fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The outcome counts of a report.
pub(crate) fn outcomes(report: &Value) -> BTreeMap<String, u64> {
    report["outcomes"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect()
}

/// The first difference between two trees, for assertion messages.
pub(crate) fn first_difference(
    a: &BTreeMap<String, Vec<u8>>,
    b: &BTreeMap<String, Vec<u8>>,
) -> String {
    for (key, value) in a {
        match b.get(key) {
            None => return format!("{key} only in the first tree"),
            Some(other) if other != value => return format!("{key} differs"),
            Some(_) => {}
        }
    }
    for key in b.keys() {
        if !a.contains_key(key) {
            return format!("{key} only in the second tree");
        }
    }
    "no difference".to_owned()
}

/// Command-line arguments of mixed types (`&str`, paths).
pub(crate) fn args(items: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<std::ffi::OsString> {
    items.iter().map(|i| i.as_ref().to_owned()).collect()
}
