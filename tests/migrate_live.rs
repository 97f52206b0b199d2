//! Law 8 (catch-up) on live stores: whatever changed in SRC between passes (runs saved again,
//! added or deleted; plans, end users and agent-memory files saved again), the last `--resume`
//! leaves DST byte-identical (outside `.planrun/`) to a fresh migration of SRC as it is then, for
//! `--to v2` and `--to r6`, sharded or not; an output someone else changed in DST is never
//! overwritten unless asked, and is reported; a run rewritten while it is read is never written
//! from a torn read.

use crate::migrate_support;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use migrate_support::*;
use serde_json::Value;

/// A generated store of `runs` runs of every version, with a history.
fn store(root: &Path, runs: usize, seed: u64) -> PathBuf {
    let store = root.join("src");
    planrun_gen::generate(
        &planrun_gen::GenOptions {
            runs,
            seed,
            history: true,
            large_every: 0,
            ..planrun_gen::GenOptions::default()
        },
        &store,
    )
    .unwrap();
    store
}

/// `planrun migrate SRC --out DST` with `extra`; its output, checked to have run (exit < 2).
fn migrate(src: &Path, dst: &Path, extra: &[&str]) -> std::process::Output {
    let mut argv = args(&[&"migrate", &src, &"--out", &dst, &"--jobs", &"2"]);
    argv.extend(extra.iter().map(std::ffi::OsString::from));
    let output = run(argv);
    assert!(code(&output) < 2, "{}", show(&output));
    output
}

/// DST's tree outside `.planrun/`, as a fresh migration of `src` would write it.
fn fresh(src: &Path, root: &Path, to: &str) -> std::collections::BTreeMap<String, Vec<u8>> {
    let dst = root.join(format!("fresh-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dst);
    migrate(src, &dst, &["--to", to]);
    let tree = tree(&dst, &[".planrun"]);
    std::fs::remove_dir_all(&dst).unwrap();
    tree
}

/// The JSON files of `dir` whose names start with `prefix`, sorted.
fn files(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.is_file()
                && p.extension().is_some_and(|e| e == "json")
                && p.file_name().unwrap().to_str().unwrap().starts_with(prefix)
        })
        .collect();
    found.sort();
    found
}

/// Rewrites `path` as the SDK saves: the JSON tree edited by `edit`, 4-space indent.
fn save(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut tree: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    edit(&mut tree);
    std::fs::write(path, planrun_wire::json::to_sdk_json(&tree)).unwrap();
}

/// One round of the changes a live store sees between passes, chosen by `seed`: runs saved
/// again with another state, a run deleted, a run saved again in a form no SDK loads, a run
/// saved again without its agent-memory values, a run added (a copy of another under a new
/// id), a plan, an end user and an agent-memory value saved again, a plan file and an end-user file
/// deleted (their runs now have none) and an agent-memory file deleted (its run is blocked).
fn change(src: &Path, seed: u64) {
    let mut pick = {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        }
    };
    let runs = files(src, "prun-");
    for _ in 0..3 {
        let run = &runs[pick(runs.len())];
        if run.exists() {
            save(run, |t| {
                let next = ["FAILED", "COMPLETE", "IN_PROGRESS"][pick(3)];
                t["state"] = Value::String(next.to_owned());
            });
        }
    }
    let gone = &runs[pick(runs.len())];
    let _ = std::fs::remove_file(gone);
    // A run saved again in a form no SDK loads: rejected, so DST keeps nothing of it.
    let broken = &runs[pick(runs.len())];
    if broken.exists() {
        save(broken, |t| t["state"] = Value::from(42));
    }
    // A run saved again without its agent-memory values: their copies in DST go.
    let by_memory = |run: &PathBuf| {
        std::fs::read_to_string(run).is_ok_and(|text| text.contains("\"output_name\""))
    };
    if let Some(run) = runs.iter().filter(|run| by_memory(run)).nth(pick(4)) {
        save(run, forget_agent_memory);
    }
    let model = &runs[pick(runs.len())];
    if model.exists() {
        let text = std::fs::read_to_string(model).unwrap();
        let id = model.file_stem().unwrap().to_str().unwrap();
        let new_id = format!(
            "prun-00000000-0000-4000-8000-{:012x}",
            seed & 0xffff_ffff_ffff
        );
        let text = text.replace(id, &new_id);
        // A copy keeps no agent memory of its own: drop the references it would dangle.
        let mut tree: Value = serde_json::from_str(&text).unwrap();
        forget_agent_memory(&mut tree);
        std::fs::write(
            src.join(format!("{new_id}.json")),
            planrun_wire::json::to_sdk_json(&tree),
        )
        .unwrap();
    }
    // A store of V2 runs has no plan files: its runs carry their plans.
    let plans = files(src, "plan-");
    if !plans.is_empty() {
        save(&plans[pick(plans.len())], |t| {
            let query = t["plan_context"]["query"].as_str().unwrap_or("").to_owned();
            t["plan_context"]["query"] = Value::String(format!("{query} (again)"));
        });
        let _ = std::fs::remove_file(&plans[pick(plans.len())]);
    }
    let users: Vec<PathBuf> = files(src, "")
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            !["prun-", "pr-", "wkfl-", "plan-"]
                .iter()
                .any(|x| name.starts_with(x))
        })
        .collect();
    if !users.is_empty() {
        save(&users[pick(users.len())], |t| {
            t["name"] = Value::String(format!("Renamed {seed}"));
        });
        let _ = std::fs::remove_file(&users[pick(users.len())]);
    }
    let memory: Vec<PathBuf> = std::fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .flat_map(|d| files(&d, ""))
        .collect();
    if !memory.is_empty() {
        save(&memory[pick(memory.len())], |t| {
            t["value"] = Value::String(format!("rewritten {seed}"));
        });
        // Its run is blocked now: DST keeps nothing of it.
        let _ = std::fs::remove_file(&memory[pick(memory.len())]);
    }
}

/// Drops a run's outputs that are agent-memory values (`output_name`).
fn forget_agent_memory(run: &mut Value) {
    if let Some(outputs) = run["outputs"]["step_outputs"].as_object_mut() {
        outputs.retain(|_, v| v.get("output_name").is_none());
    }
    if run["outputs"]["final_output"].get("output_name").is_some() {
        run["outputs"]["final_output"] = Value::Null;
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 2, ..Default::default() })]

    /// Law 8, for `--to v2` and `--to r6`, whole and in two shards: after each of several
    /// rounds of changes (drawn from `seed`), `--resume` leaves DST as a fresh migration of SRC
    /// would.
    #[test]
    fn each_resume_leaves_dst_as_a_fresh_migration_of_src_as_it_is(
        seed in proptest::prelude::any::<u64>(),
    ) {
        catches_up_after_rounds_of_changes(seed);
    }
}

/// Law 8 for a HEAD store made of a store of V2 runs (the way back to the SDK, after a V2
/// migration), whole and in two shards: its plan files are written from the runs. A resume
/// once took them for files whose SRC file had left and removed them all; then, in shards, a
/// shard whose last run of a plan left SRC removed that plan file though the other shard's
/// runs still used it.
#[test]
fn a_head_store_made_of_v2_runs_catches_up_after_rounds_of_changes() {
    for shards in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let legacy = store(tmp.path(), 120, 11);
        let src = tmp.path().join("v2");
        migrate(&legacy, &src, &[]);
        std::fs::remove_dir_all(src.join(".planrun")).unwrap();
        catch_up_rounds(&src, tmp.path(), "r6", shards, 23);
    }
}

/// See [`each_resume_leaves_dst_as_a_fresh_migration_of_src_as_it_is`].
fn catches_up_after_rounds_of_changes(seed: u64) {
    for (to, shards) in [("v2", false), ("r6", false), ("v2", true), ("r6", true)] {
        let tmp = tempfile::tempdir().unwrap();
        let src = store(tmp.path(), 120, 7);
        catch_up_rounds(&src, tmp.path(), to, shards, seed);
    }
}

/// Migrates `src` to `root/dst` (`--to to`, in two shards with `shards`), then for three rounds
/// changes `src` (drawn from `seed`; in the second round every run is saved again, so that
/// pass compacts the journal), resumes, and checks DST against a fresh migration.
fn catch_up_rounds(src: &Path, root: &Path, to: &str, shards: bool, seed: u64) {
    let dst = root.join("dst");
    let pass = |resume: bool| {
        let mut extra = vec!["--to", to];
        if resume {
            extra.push("--resume");
        }
        if shards {
            for shard in ["0/2", "1/2"] {
                let mut with = extra.clone();
                with.extend(["--shard", shard]);
                migrate(src, &dst, &with);
            }
        } else {
            migrate(src, &dst, &extra);
        }
    };
    pass(false);
    for round in 0..3u64 {
        eprintln!("seed {seed}, --to {to}, shards {shards}, round {round}");
        change(src, seed.wrapping_add(round * 31 + 5));
        if round == 1 {
            // Every run saved again: the pass converts each again and compacts its journal,
            // so the last round catches up from a compacted journal.
            for run in [files(src, "pr"), files(src, "wkfl-")].concat() {
                let bytes = std::fs::read(&run).unwrap();
                std::fs::write(&run, bytes).unwrap();
            }
        }
        pass(true);
        if round == 1 {
            assert_compacted(&dst);
        }
        let want = fresh(src, root, to);
        let got = tree(&dst, &[".planrun"]);
        assert!(
            got == want,
            "--to {to}, shards {shards}, round {round}: {}",
            first_difference(&want, &got)
        );
    }
}

/// A resume that has nothing to do says so: every run up to date, nothing converted again,
/// though the store was written just before the migration read it (its files racily clean,
/// compared by content).
#[test]
fn a_resume_with_nothing_to_do_converts_nothing_and_a_dry_run_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let src = store(tmp.path(), 60, 3);
    let dst = tmp.path().join("dst");
    migrate(&src, &dst, &[]);
    let output = migrate(&src, &dst, &["--resume", "--format", "json"]);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["catch_up"]["up_to_date"], 60, "{report:#}");
    assert_eq!(report["catch_up"]["changed"], 0, "{report:#}");

    change(&src, 11);
    let before = fingerprint(&dst);
    let output = migrate(&src, &dst, &["--resume", "--dry-run", "--format", "json"]);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(fingerprint(&dst), before, "a dry run wrote into DST");
    let catch_up = &report["catch_up"];
    assert_eq!(catch_up["removed"], 1, "{report:#}");
    assert_eq!(catch_up["new"], 1, "{report:#}");
    assert!(catch_up["changed"].as_u64().unwrap() >= 1, "{report:#}");
}

/// With `--to r6`, a resume writes again only the plans and end users that changed: a plan and
/// an end user no run uses, saved again in SRC, come out as a fresh migration writes them, one
/// deleted from DST is written again, and every other document is left as it was (the same
/// inode: not written again), while the report still counts every document DST holds.
#[test]
fn a_head_store_resume_copies_again_only_the_documents_that_changed() {
    use std::os::unix::fs::MetadataExt;
    let tmp = tempfile::tempdir().unwrap();
    let src = store(tmp.path(), 40, 5);
    let dst = tmp.path().join("dst");
    // A plan and an end user no run uses: copies of others under new ids.
    let lone_plan = "plan-00000000-0000-4000-8000-00000000000a";
    let model = files(&src, "plan-").remove(0);
    std::fs::copy(&model, src.join(format!("{lone_plan}.json"))).unwrap();
    save(&src.join(format!("{lone_plan}.json")), |t| {
        t["id"] = Value::String(lone_plan.to_owned());
    });
    std::fs::write(
        src.join("lone-user.json"),
        planrun_wire::json::to_sdk_json(&serde_json::json!({
            "external_id": "lone-user",
            "name": "Lone User",
            "email": "",
            "phone_number": "",
            "additional_data": {}
        })),
    )
    .unwrap();
    let documents = |dir: &Path| -> std::collections::BTreeMap<String, u64> {
        files(dir, "")
            .into_iter()
            .filter(|p| {
                !p.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with("prun-")
            })
            .map(|p| {
                let name = p.file_name().unwrap().to_str().unwrap().to_owned();
                (name, std::fs::metadata(&p).unwrap().ino())
            })
            .collect()
    };
    let carried = |output: &std::process::Output| {
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        report["documents_copied"].as_u64().unwrap()
    };
    let first = migrate(&src, &dst, &["--to", "r6", "--format", "json"]);
    let written = documents(&dst);
    assert!(written.contains_key("lone-user.json") && written.len() > 10);
    let again = migrate(&src, &dst, &["--to", "r6", "--resume", "--format", "json"]);
    assert_eq!(carried(&again), carried(&first));
    assert_eq!(
        documents(&dst),
        written,
        "a resume with nothing to do wrote documents"
    );

    save(&src.join(format!("{lone_plan}.json")), |t| {
        t["plan_context"]["query"] = Value::String("Asked again".to_owned());
    });
    save(&src.join("lone-user.json"), |t| {
        t["name"] = Value::String("Renamed".to_owned());
    });
    let deleted = written
        .keys()
        .find(|name| name.starts_with("plan-") && !name.contains(lone_plan))
        .unwrap()
        .clone();
    std::fs::remove_file(dst.join(&deleted)).unwrap();
    let caught_up = migrate(&src, &dst, &["--to", "r6", "--resume", "--format", "json"]);
    assert_eq!(carried(&caught_up), carried(&first));
    let want = fresh(&src, tmp.path(), "r6");
    let got = tree(&dst, &[".planrun"]);
    assert!(got == want, "{}", first_difference(&want, &got));
    let now = documents(&dst);
    for (name, inode) in &written {
        let redone = [
            format!("{lone_plan}.json"),
            "lone-user.json".to_owned(),
            deleted.clone(),
        ];
        assert_eq!(
            now[name] != *inode,
            redone.contains(name),
            "{name}: written again only if it changed"
        );
    }
}

/// The lines of the journal at `path` whose event is `event`.
fn journal_lines(path: &Path, event: &str) -> Vec<String> {
    let start = format!("{{\"event\":\"{event}\"");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| line.starts_with(&start))
        .map(str::to_owned)
        .collect()
}

/// A DST copied elsewhere (`cp -a`: the same bytes and modification times, new inodes and change
/// times) is found intact by reading its outputs, once: that resume journals their new stamps
/// (and, every run's line now superseded, compacts the journal back to one line a run), so the
/// next one trusts them and journals no run again, for `--to v2` and `--to r6`.
#[test]
fn a_copied_dst_is_read_once_then_judged_by_its_new_stamps() {
    use std::os::unix::fs::MetadataExt;
    for to in ["v2", "r6"] {
        let tmp = tempfile::tempdir().unwrap();
        let src = store(tmp.path(), 40, 9);
        let dst = tmp.path().join("dst");
        migrate(&src, &dst, &["--to", to]);
        let copy = tmp.path().join("copy");
        let cp = std::process::Command::new("cp")
            .arg("-a")
            .arg(&dst)
            .arg(&copy)
            .status()
            .unwrap();
        assert!(cp.success());
        // Past the racy window of the copy's change times (a tenth of a second).
        std::thread::sleep(Duration::from_millis(250));
        let completed = || -> Vec<Value> {
            journal_lines(&copy.join(".planrun/journal.jsonl"), "completed")
                .iter()
                .map(|line| serde_json::from_str(line).unwrap())
                .collect()
        };
        let written = completed();
        assert!(written.len() > 20, "{}", written.len());
        let mut after_first: Option<Vec<Value>> = None;
        for pass in 1..=2 {
            let output = migrate(&src, &copy, &["--to", to, "--resume", "--format", "json"]);
            let report: Value = serde_json::from_slice(&output.stdout).unwrap();
            assert_eq!(
                report["catch_up"]["changed"], 0,
                "--to {to}, pass {pass}: {report:#}"
            );
            assert_eq!(
                report["catch_up"]["retried"], 0,
                "--to {to}, pass {pass}: {report:#}"
            );
            let journaled = completed();
            assert_eq!(journaled.len(), written.len(), "--to {to}, pass {pass}");
            for line in &journaled {
                for output in line["outputs"].as_array().unwrap() {
                    let file = copy.join(output["path"].as_str().unwrap());
                    let inode = std::fs::metadata(&file).unwrap().ino();
                    assert_eq!(output["stamp"]["ino"], inode, "--to {to}, pass {pass}");
                }
            }
            match &after_first {
                Some(first) => assert_eq!(&journaled, first, "--to {to}: journaled again"),
                None => after_first = Some(journaled),
            }
        }
        let want = tree(&dst, &[".planrun"]);
        let got = tree(&copy, &[".planrun"]);
        assert!(got == want, "--to {to}: {}", first_difference(&want, &got));
    }
}

/// A journal whose runs were converted again and again is compacted after the pass that leaves
/// at least half its final lines superseded: one final line a run, no answered `started` line.
/// The next resume finds every run up to date, and after another round of changes DST is as a
/// fresh migration writes it, for `--to v2` and `--to r6`.
#[test]
fn a_journal_whose_runs_were_redone_is_compacted_and_still_resumes() {
    for to in ["v2", "r6"] {
        let tmp = tempfile::tempdir().unwrap();
        let src = store(tmp.path(), 40, 13);
        let dst = tmp.path().join("dst");
        let journal = dst.join(".planrun/journal.jsonl");
        let count = |event: &str| journal_lines(&journal, event).len();
        migrate(&src, &dst, &["--to", to]);
        let (completed, failed) = (count("completed"), count("failed"));
        let runs = files(&src, "prun-");
        for round in 0..2 {
            for run in &runs {
                save(run, |t| {
                    t["state"] = Value::String(["FAILED", "COMPLETE"][round].to_owned());
                });
            }
            migrate(&src, &dst, &["--to", to, "--resume"]);
        }
        assert_eq!(count("completed"), completed, "--to {to}");
        assert_eq!(count("failed"), failed, "--to {to}");
        assert_eq!(count("started"), 0, "--to {to}");
        let output = migrate(&src, &dst, &["--to", to, "--resume", "--format", "json"]);
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        let catch_up = &report["catch_up"];
        assert_eq!(catch_up["changed"], 0, "--to {to}: {report:#}");
        assert_eq!(catch_up["retried"], 0, "--to {to}: {report:#}");
        assert_eq!(
            catch_up["up_to_date"].as_u64().unwrap() as usize,
            completed,
            "--to {to}: {report:#}"
        );
        change(&src, 29);
        migrate(&src, &dst, &["--to", to, "--resume"]);
        let want = fresh(&src, tmp.path(), to);
        let got = tree(&dst, &[".planrun"]);
        assert!(got == want, "--to {to}: {}", first_difference(&want, &got));
    }
}

/// After `--to r6` the SDK is pointed at DST and saves a run there. A later resume (a retried
/// job) keeps that file byte for byte, reports the conflict and exits 1;
/// `--overwrite-changed` replaces it.
#[test]
fn an_output_the_sdk_saved_into_a_head_store_survives_a_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    copy_dir(&example_store(), &src);
    let dst = tmp.path().join("head");
    migrate(&src, &dst, &["--to", "r6"]);
    let run = dst.join("prun-4c8f0e3b-5d6a-4b7c-9e8f-0a1b2c3d4e5f.json");
    save(&run, |t| {
        t["state"] = Value::String("READY_TO_RESUME".to_owned());
    });
    let saved = std::fs::read(&run).unwrap();

    let output = migrate(&src, &dst, &["--to", "r6", "--resume", "--format", "json"]);
    assert_eq!(code(&output), 1, "{}", show(&output));
    assert_eq!(
        std::fs::read(&run).unwrap(),
        saved,
        "the SDK's save was overwritten"
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["catch_up"]["conflicts"], 1, "{report:#}");
    let failure = report["failures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "conflict")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert!(failure["file"]
        .as_str()
        .unwrap()
        .ends_with("prun-4c8f0e3b-5d6a-4b7c-9e8f-0a1b2c3d4e5f.json"));

    // Asked again, it is still kept, and so is a shared plan the SDK saved there meanwhile.
    let plan = dst.join("plan-4e0d7052-6f81-4c23-9e4f-5a6b7c8d9ea4.json");
    save(&plan, |t| {
        t["plan_context"]["query"] = Value::String("saved by the SDK".to_owned());
    });
    let plan_saved = std::fs::read(&plan).unwrap();
    let again = migrate(&src, &dst, &["--to", "r6", "--resume", "--format", "json"]);
    assert_eq!(code(&again), 1, "{}", show(&again));
    assert_eq!(std::fs::read(&run).unwrap(), saved);
    assert_eq!(std::fs::read(&plan).unwrap(), plan_saved);
    let report: Value = serde_json::from_slice(&again.stdout).unwrap();
    let kept: Vec<&str> = report["catch_up"]["kept"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert!(
        kept.contains(&"plan-4e0d7052-6f81-4c23-9e4f-5a6b7c8d9ea4.json")
            && kept.contains(&"prun-4c8f0e3b-5d6a-4b7c-9e8f-0a1b2c3d4e5f.json"),
        "{report:#}"
    );
    let overwrite = migrate(
        &src,
        &dst,
        &["--to", "r6", "--resume", "--overwrite-changed"],
    );
    assert_eq!(code(&overwrite), 0, "{}", show(&overwrite));
    assert_eq!(tree(&dst, &[".planrun"]), fresh(&src, tmp.path(), "r6"));
}

/// A file stamped too close to the moment it was read for an equal stamp to prove it unchanged
/// later (racily clean, as git says) is journaled with its content's hash, and every later pass
/// compares contents: the same content keeps its runs up to date, other content converts them
/// again, whether the file is a run's own or a plan its runs share. A line without the hash
/// (journaled by an earlier build) counts its run as changed. The store's files' modification
/// times are set an hour ahead: racily clean whenever this runs.
#[test]
fn a_racily_clean_input_is_compared_by_its_content() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    copy_dir(&example_store(), &src);
    let ahead = std::time::SystemTime::now() + Duration::from_secs(3600);
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let file = std::fs::File::options().write(true).open(path).unwrap();
            file.set_modified(ahead).unwrap();
        }
    }
    let dst = tmp.path().join("dst");
    migrate(&src, &dst, &[]);
    let journal = dst.join(".planrun/journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let completed: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["event"] == "completed")
        .collect();
    assert_eq!(completed.len(), run_files(&src).len(), "{text}");
    // Every input read has its hash: the run file first, then its plan.
    let hash = |line: &Value, i: usize| -> String {
        let input = &line["inputs"][i];
        input["hash"]
            .as_str()
            .unwrap_or_else(|| panic!("input {i} has no hash: {line}"))
            .to_owned()
    };
    let (run_0, run_1) = (hash(&completed[0], 0), hash(&completed[1], 0));
    assert_eq!(completed[0]["inputs"][0]["path"], completed[0]["run"]);
    let plan = &completed[0]["inputs"][1];
    assert!(
        plan["path"].as_str().unwrap().starts_with("plan-"),
        "{plan}"
    );
    let runs_of_plan = completed
        .iter()
        .filter(|line| line["inputs"][1]["path"] == plan["path"])
        .count();
    let catch_up = |src: &Path| -> Value {
        let output = migrate(src, &dst, &["--resume", "--format", "json"]);
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        report["catch_up"].clone()
    };
    let counts = |caught: &Value| (caught["up_to_date"].clone(), caught["changed"].clone());
    let same = catch_up(&src);
    assert_eq!(counts(&same), (5.into(), 0.into()), "{same:#}");

    // The journal says the first run read other bytes than the file holds now.
    std::fs::write(&journal, text.replacen(&run_0, "0123456789abcdef", 1)).unwrap();
    let other = catch_up(&src);
    assert_eq!(counts(&other), (4.into(), 1.into()), "{other:#}");

    // The same for the plan, in every line that names it: all its runs are converted again.
    let text = std::fs::read_to_string(&journal).unwrap();
    let plan_hash = hash(&completed[0], 1);
    std::fs::write(&journal, text.replace(&plan_hash, "fedcba9876543210")).unwrap();
    let shared = catch_up(&src);
    let kept = 5 - runs_of_plan;
    assert_eq!(
        counts(&shared),
        (kept.into(), runs_of_plan.into()),
        "{shared:#}"
    );

    // The run's lines journaled without the hash: an equal stamp proves nothing.
    let text = std::fs::read_to_string(&journal).unwrap();
    let unhashed = text.replace(&format!(",\"hash\":\"{run_1}\""), "");
    assert_ne!(unhashed, text);
    std::fs::write(&journal, unhashed).unwrap();
    let old = catch_up(&src);
    assert_eq!(counts(&old), (4.into(), 1.into()), "{old:#}");
    assert_eq!(tree(&dst, &[".planrun"]), fresh(&src, tmp.path(), "v2"));
}

/// With `--to r6`, a run already in V2 is written with the store's end-user file beside it,
/// and what the two disagree on goes to its residue: that file is one of the run's inputs. The
/// end user saved again in SRC converts both of its runs again, the V2 one too, and DST's
/// residues are a fresh migration's.
#[test]
fn an_end_user_saved_again_redoes_a_v2_run_in_a_head_store() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    copy_dir(&example_store(), &src);
    let legacy = "prun-6e0b2a5d-7f8c-4d9e-9a0b-2c3d4e5f6a71";
    let converted = run(args(&[&"convert", &src.join(format!("{legacy}.json"))]));
    assert_eq!(code(&converted), 0, "{}", show(&converted));
    let v2 = "prun-00000000-0000-4000-8000-0000000e2d00";
    let text = String::from_utf8(converted.stdout)
        .unwrap()
        .replace(legacy, v2);
    std::fs::write(src.join(format!("{v2}.json")), text).unwrap();
    let dst = tmp.path().join("dst");
    migrate(&src, &dst, &["--to", "r6"]);

    save(&src.join("user-123.json"), |user| {
        user["name"] = Value::String("Zoë M. Martins".to_owned());
    });
    let output = migrate(&src, &dst, &["--to", "r6", "--resume", "--format", "json"]);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["catch_up"]["changed"], 2, "{report:#}");
    let fresh = tmp.path().join("fresh");
    migrate(&src, &fresh, &["--to", "r6"]);
    assert_eq!(tree(&dst, &[".planrun"]), tree(&fresh, &[".planrun"]));
    let residues = |dir: &Path| tree(&dir.join(".planrun/residue"), &[]);
    assert_eq!(residues(&dst), residues(&fresh));
}

/// A HEAD store planrun wrote keeps, in a run's residue, what HEAD's files cannot hold: there
/// the run's own plan, when the store's plan file is another run's version. Migrated back to V2,
/// such a run reads its plan from the residue, not the plan file, so a resume finds it up to
/// date; the residue saved again converts it again.
#[test]
fn a_run_whose_residue_holds_its_plan_is_up_to_date_until_the_residue_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let v2 = tmp.path().join("v2");
    migrate(&example_store(), &v2, &[]);
    // A second run of one plan, whose plan the SDK saved again in between.
    let first = "prun-6e0b2a5d-7f8c-4d9e-9a0b-2c3d4e5f6a71";
    let mut again = json(&v2.join(format!("{first}.json")));
    let second = "prun-00000000-0000-4000-8000-0000000e2d01";
    again["id"] = Value::String(second.to_owned());
    again["plan"]["label"] = Value::String("Book a table for two, again".to_owned());
    std::fs::write(v2.join(format!("{second}.json")), again.to_string()).unwrap();
    let head = tmp.path().join("head");
    let downgraded = run(args(&[&"downgrade", &v2, &"--out-dir", &head]));
    assert!(code(&downgraded) < 2, "{}", show(&downgraded));
    let residue = head.join(format!(".planrun/residue/{first}.json"));
    assert!(json(&residue)["plan"].is_object(), "{}", show(&downgraded));

    let dst = tmp.path().join("dst");
    migrate(&head, &dst, &[]);
    let catch_up = || -> Value {
        let output = migrate(&head, &dst, &["--resume", "--format", "json"]);
        serde_json::from_slice::<Value>(&output.stdout).unwrap()["catch_up"].clone()
    };
    let same = catch_up();
    assert_eq!(
        (&same["up_to_date"], &same["changed"]),
        (&6.into(), &0.into()),
        "{same:#}"
    );

    save(&residue, |residue| {
        residue["plan"]["plan_context"]["query"] = Value::String("Book a table for three".into());
    });
    let other = catch_up();
    assert_eq!(
        (&other["up_to_date"], &other["changed"]),
        (&5.into(), &1.into()),
        "{other:#}"
    );
    assert_eq!(tree(&dst, &[".planrun"]), fresh(&head, tmp.path(), "v2"));
}

/// A writer rewrites random runs in place the way the SDK does (`open("w")`: truncate, write
/// half, pause, write the rest) while a migration and resumes run with `--jobs 2`. Once it
/// stops, one more resume gives the bytes of a fresh migration; and no pass ever wrote an
/// output from a torn read (every output in DST is a valid V2 run at every pause).
#[test]
fn a_store_rewritten_while_it_is_migrated_catches_up_after_the_writer_stops() {
    let tmp = tempfile::tempdir().unwrap();
    let src = store(tmp.path(), 150, 13);
    let dst = tmp.path().join("dst");
    let runs = files(&src, "prun-");
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let stop = Arc::clone(&stop);
        let runs = runs.clone();
        std::thread::spawn(move || {
            use std::io::Write;
            let mut n = 0usize;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let run = &runs[(n * 7919) % runs.len()];
                let mut tree: Value = serde_json::from_slice(&std::fs::read(run).unwrap()).unwrap();
                tree["state"] = Value::String(["FAILED", "COMPLETE"][n % 2].to_owned());
                let text = planrun_wire::json::to_sdk_json(&tree);
                let (first, rest) = text.as_bytes().split_at(text.len() / 2);
                let mut file = std::fs::File::create(run).unwrap();
                file.write_all(first).unwrap();
                file.flush().unwrap();
                std::thread::sleep(Duration::from_millis(3));
                file.write_all(rest).unwrap();
                drop(file);
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    migrate(&src, &dst, &[]);
    for _ in 0..3 {
        for (name, bytes) in tree(&dst, &[".planrun"]) {
            if name.ends_with(".json") && !name.contains('/') {
                let v2: Result<planrun_v2::PlanRunV2, _> = serde_json::from_slice(&bytes);
                assert!(v2.is_ok(), "{name} is not a whole V2 run");
            }
        }
        migrate(&src, &dst, &["--resume"]);
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    let last = migrate(&src, &dst, &["--resume"]);
    assert_eq!(code(&last), 0, "{}", show(&last));
    assert_eq!(tree(&dst, &[".planrun"]), fresh(&src, tmp.path(), "v2"));
}

/// A catch-up killed with SIGKILL at several points (and the resume after it) still ends with
/// DST as a fresh migration of SRC would write it.
#[test]
fn a_catch_up_killed_midway_resumes_to_a_fresh_migration() {
    let tmp = tempfile::tempdir().unwrap();
    let src = store(tmp.path(), 900, 17);
    let dst = tmp.path().join("dst");
    migrate(&src, &dst, &["--to", "r6"]);
    for (round, after) in [(0u64, 40u64), (1, 120), (2, 300)] {
        change(&src, round * 7 + 1);
        // Every run converted again: the plan and end-user files all saved anew.
        for plan in files(&src, "plan-") {
            save(&plan, |t| {
                t["plan_context"]["tool_ids"] = serde_json::json!([]);
            });
        }
        let mut child = planrun()
            .args(args(&[
                &"migrate",
                &src,
                &"--out",
                &dst,
                &"--to",
                &"r6",
                &"--resume",
                &"--jobs",
                &"2",
            ]))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(after));
        let _ = child.kill();
        let _ = child.wait();
    }
    let last = migrate(&src, &dst, &["--to", "r6", "--resume"]);
    // Exit 1 only for the runs the changes broke (rejected, blocked): no conflict, nothing in
    // flux.
    let report = json(&dst.join(".planrun/report.json"));
    assert_eq!(report["catch_up"]["conflicts"], 0, "{}", show(&last));
    let outcomes = outcomes(&report);
    assert_eq!(
        outcomes.get("in_flux").copied().unwrap_or(0),
        0,
        "{}",
        show(&last)
    );
    let failed = ["rejected", "blocked"].map(|o| outcomes.get(o).copied().unwrap_or(0));
    assert_eq!(
        code(&last),
        i32::from(failed.iter().sum::<u64>() > 0),
        "{}",
        show(&last)
    );
    assert!(temp_files(&dst).is_empty(), "{:?}", temp_files(&dst));
    let want = fresh(&src, tmp.path(), "r6");
    let got = tree(&dst, &[".planrun"]);
    assert!(got == want, "{}", first_difference(&want, &got));
}

/// A run a resume finds blocked (its agent-memory file deleted from SRC) keeps nothing of its
/// earlier conversion in DST, which the SDK would load as the run's state after the cut-over;
/// its report entry names what was removed. Once the file is back, the next resume converts the
/// run again. DST is a fresh migration's after each pass.
#[test]
fn a_run_now_blocked_keeps_no_output_of_its_earlier_conversion() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    copy_dir(&example_store(), &src);
    let dst = tmp.path().join("dst");
    migrate(&src, &dst, &[]);
    let run = "prun-5d9a1f4c-6e7b-4c8d-8f9a-1b2c3d4e5f60";
    let memory = src.join(run).join("$report.json");
    let bytes = std::fs::read(&memory).unwrap();
    std::fs::remove_file(&memory).unwrap();
    let output = migrate(&src, &dst, &["--resume"]);
    assert_eq!(code(&output), 1, "{}", show(&output));
    let report = json(&dst.join(".planrun/report.json"));
    let failure = &report["failures"][0];
    assert_eq!(failure["class"], "blocked", "{failure}");
    let removed = format!("removed from DST: {run}.json, {run}/$report.json");
    assert!(
        failure["message"].as_str().unwrap().ends_with(&removed),
        "{failure}"
    );
    assert!(!dst.join(run).exists());
    assert_eq!(tree(&dst, &[".planrun"]), fresh(&src, tmp.path(), "v2"));
    std::fs::write(&memory, bytes).unwrap();
    let output = migrate(&src, &dst, &["--resume"]);
    assert_eq!(code(&output), 0, "{}", show(&output));
    assert!(dst.join(run).join("$report.json").is_file());
    assert_eq!(tree(&dst, &[".planrun"]), fresh(&src, tmp.path(), "v2"));
}

/// An agent-memory copy is filed under the run its value names, which can be another run's
/// (here: copies of a run that keep its `$report` value). When that run is saved again without
/// the value, or leaves SRC, a resume keeps the copy the other runs still record: whole, and in
/// two shards, where only the other shard's runs record it. DST is a fresh migration's after
/// each pass.
#[test]
fn an_agent_memory_copy_another_run_records_outlives_its_runs_change() {
    let run = "prun-5d9a1f4c-6e7b-4c8d-8f9a-1b2c3d4e5f60";
    for shards in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        copy_dir(&example_store(), &src);
        let text = std::fs::read_to_string(src.join(format!("{run}.json"))).unwrap();
        let copies: Vec<String> = (0..4)
            .map(|i| format!("prun-5d9a1f4c-6e7b-4c8d-8f9a-1b2c3d4e5f9{i}"))
            .collect();
        for copy in &copies {
            // The run's id changes, its `$report` value still names the run.
            let text = text.replacen(
                &format!("\"id\": \"{run}\""),
                &format!("\"id\": \"{copy}\""),
                1,
            );
            assert!(text.contains(copy.as_str()));
            std::fs::write(src.join(format!("{copy}.json")), text).unwrap();
        }
        let dst = tmp.path().join("dst");
        // The order the shards run in; the run's own shard goes last once it is known, so
        // that no pass of the other shard repairs what it removed.
        let order = std::cell::Cell::new(["0/2", "1/2"]);
        let pass = |extra: &[&str]| {
            if shards {
                for shard in order.get() {
                    migrate(&src, &dst, &[extra, &["--shard", shard]].concat());
                }
            } else {
                migrate(&src, &dst, extra);
            }
            let (got, want) = (tree(&dst, &[".planrun"]), fresh(&src, tmp.path(), "v2"));
            assert!(
                got == want,
                "shards {shards}: {}",
                first_difference(&want, &got)
            );
        };
        pass(&[]);
        if shards {
            // Only the other shard's copies are kept: the run's shard learns of them from that
            // shard's journal.
            let journal = std::fs::read_to_string(dst.join(".planrun/journal-0-of-2.jsonl"));
            let journal = journal.unwrap();
            let shard_of = |name: &str| journal.contains(&format!("\"run\":\"{name}.json\""));
            let (same, other): (Vec<&String>, Vec<&String>) = copies
                .iter()
                .partition(|copy| shard_of(copy) == shard_of(run));
            assert!(
                !same.is_empty() && !other.is_empty(),
                "the copies are all in one shard"
            );
            for copy in same {
                std::fs::remove_file(src.join(format!("{copy}.json"))).unwrap();
            }
            if shard_of(run) {
                order.set(["1/2", "0/2"]);
            }
            pass(&["--resume"]);
        }
        let copy = dst.join(run).join("$report.json");
        assert!(copy.is_file());
        save(&src.join(format!("{run}.json")), forget_agent_memory);
        pass(&["--resume"]);
        assert!(copy.is_file(), "a copy other runs record was removed");
        // The run names its value again, then leaves SRC: the copy stays for the others.
        std::fs::write(src.join(format!("{run}.json")), &text).unwrap();
        pass(&["--resume"]);
        std::fs::remove_file(src.join(format!("{run}.json"))).unwrap();
        pass(&["--resume"]);
        assert!(copy.is_file(), "a copy other runs record left with its run");
    }
}

/// Checks that every journal of `dst` holds one final line a run at most: a pass that
/// converted every run again compacted them.
fn assert_compacted(dst: &Path) {
    let last = ["completed", "failed", "removed", "conflict"];
    let journals: Vec<PathBuf> = std::fs::read_dir(dst.join(".planrun"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert!(!journals.is_empty());
    for journal in journals {
        let mut finals = std::collections::BTreeMap::new();
        for line in std::fs::read_to_string(&journal).unwrap().lines() {
            let line: Value = serde_json::from_str(line).unwrap();
            let event = line["event"].as_str().unwrap_or_default();
            if let (Some(run), true) = (line["run"].as_str(), last.contains(&event)) {
                *finals.entry(run.to_owned()).or_insert(0) += 1;
            }
        }
        let twice: Vec<_> = finals.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            twice.is_empty(),
            "{}: not compacted: {twice:?}",
            journal.display()
        );
    }
}
