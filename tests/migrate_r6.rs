//! `planrun migrate --to r6`: a legacy store of any version mix becomes a store the SDK at HEAD
//! loads completely. What these tests pin was checked with the SDK at HEAD (v0.9.0): on every
//! corpus store, the example store and a 2,000-run generated store of every version, HEAD's
//! `DiskFileStorage` lists every run, loads every run, plan and end user, reads every
//! agent-memory value, and saves each file back byte for byte.

use crate::migrate_support;

use std::path::{Path, PathBuf};

use migrate_support::*;
use planrun_legacy::{head, parse, LegacyDocument, LegacyRun};
use planrun_wire::json::to_sdk_json;

/// Migrates `store` to a HEAD store in `dst`; the exit code.
fn to_head(store: &Path, dst: &Path, extra: &[&str]) -> i32 {
    let mut argv = args(&[&"migrate", &store, &"--out", &dst, &"--to", &"r6"]);
    argv.extend(extra.iter().map(std::ffi::OsString::from));
    let output = run(argv);
    assert!(code(&output) < 2, "{}", show(&output));
    code(&output)
}

/// Checks that every file of a HEAD store is in the form HEAD writes.
fn assert_head_store(dst: &Path) {
    for (name, bytes) in tree(dst, &[".planrun"]) {
        if bytes == b"<dir>" || name.contains('/') {
            continue;
        }
        let parsed = parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            parsed.normalizations.is_empty(),
            "{name}: {:?}",
            parsed.normalizations
        );
        match &parsed.document {
            LegacyDocument::Run(LegacyRun::R6(run)) => {
                assert!(name.starts_with("prun-"), "{name}");
                assert_eq!(
                    to_sdk_json(&head::run(run).document).as_bytes(),
                    &bytes[..],
                    "{name}"
                );
            }
            LegacyDocument::Plan(plan) => {
                assert_eq!(
                    to_sdk_json(&head::plan(plan).document).as_bytes(),
                    &bytes[..],
                    "{name}"
                );
            }
            LegacyDocument::EndUser(_) => {}
            other => panic!("{name}: a {other:?} in a HEAD store"),
        }
    }
}

#[test]
fn every_corpus_store_becomes_a_head_store_and_r6_files_come_out_as_they_were() {
    let mut stores = corpus_stores();
    stores.push(example_store());
    let tmp = tempfile::tempdir().unwrap();
    for (i, store) in stores.iter().enumerate() {
        let dst = tmp.path().join(format!("head-{i}"));
        assert_eq!(to_head(store, &dst, &[]), 0, "{}", store.display());
        assert_head_store(&dst);
        // Every plan and end user of the store is there, those no run refers to as well.
        for (name, _) in tree(store, &[]) {
            let document = !name.contains('/') && !run_files(store).contains(&name);
            if document && name.ends_with(".json") {
                assert!(dst.join(&name).is_file(), "{}: {name}", store.display());
            }
        }
        let runs = run_files(store);
        let written: Vec<String> = run_files(&dst);
        assert_eq!(written.len(), runs.len(), "{}", store.display());
        // A run the SDK at HEAD wrote is already in HEAD's form: it comes out byte for byte.
        for name in &runs {
            let bytes = std::fs::read(store.join(name)).unwrap();
            let at_head = parse(&bytes).is_ok_and(|p| p.detection.versions.to_string() == "R6");
            if at_head {
                assert_eq!(
                    std::fs::read(dst.join(name)).unwrap(),
                    bytes,
                    "{}: {name}",
                    store.display()
                );
            }
        }
    }
}

#[test]
fn what_head_cannot_hold_is_in_the_residue_and_the_report_drops_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("head");
    assert_eq!(to_head(&example_store(), &dst, &[]), 0);
    // The W1 workflow's execution context (with its system-context extensions) has no place
    // in a HEAD run: it is kept, by value, beside the store.
    let residue =
        json(&dst.join(".planrun/residue/prun-3b7e9d2a-4c5f-4a6b-8d7e-9f0a1b2c3d4e.json"));
    let kept = residue["legacy"]["entries"]
        .as_object()
        .expect("the V2 residue");
    assert!(
        kept.keys().any(|k| k.contains("execution_context")),
        "{residue}"
    );
    let report = json(&dst.join(".planrun/report.json"));
    assert_eq!(
        report["entries"]["per_kind"]["dropped"], 0,
        "{}",
        report["entries"]
    );
    // Agent memory comes along byte for byte.
    let memory = "prun-5d9a1f4c-6e7b-4c8d-8f9a-1b2c3d4e5f60/$report.json";
    assert_eq!(
        std::fs::read(dst.join(memory)).unwrap(),
        std::fs::read(example_store().join(memory)).unwrap()
    );
}

#[test]
fn a_head_migration_resumes_as_itself_and_never_as_a_v2_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("head");
    assert_eq!(to_head(&example_store(), &dst, &[]), 0);
    let first = tree(&dst, &[".planrun"]);
    assert_eq!(to_head(&example_store(), &dst, &["--resume"]), 0);
    assert_eq!(tree(&dst, &[".planrun"]), first);
    let v2 = run(args(&[
        &"migrate",
        &example_store(),
        &"--out",
        &dst,
        &"--resume",
    ]));
    assert_eq!(code(&v2), 2, "{}", show(&v2));
    assert!(
        String::from_utf8_lossy(&v2.stderr).contains("--to"),
        "{}",
        show(&v2)
    );
}

/// A store of V2 runs beside the plan files they were made from, one of which was saved again
/// since (its query edited): the V2 run carries the plan as it was. The plan file of a HEAD
/// store is SRC's (every pass copies it), and the run's own plan used to be written over it or
/// under it at random and lost without a word; now it goes to the run's residue with a `moved`
/// entry, so the HEAD store migrates back to the V2 run byte for byte, and once SRC's plan is
/// the run's again a resume redoes that run (SRC's plan file is one of its inputs).
#[test]
fn a_v2_runs_plan_saved_again_in_src_is_kept_in_its_residue() {
    let tmp = tempfile::tempdir().unwrap();
    let src = example_v2_store(tmp.path());
    for entry in std::fs::read_dir(example_store()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !name.starts_with("prun-") && !name.starts_with("wkfl-") && name.ends_with(".json") {
            std::fs::copy(example_store().join(&name), src.join(&name)).unwrap();
        }
    }
    let run_name = "prun-4c8f0e3b-5d6a-4b7c-9e8f-0a1b2c3d4e5f.json";
    let plan_name = format!(
        "{}.json",
        json(&src.join(run_name))["plan"]["id"].as_str().unwrap()
    );
    let original = std::fs::read(src.join(&plan_name)).unwrap();
    let mut plan = json(&src.join(&plan_name));
    plan["plan_context"]["query"] = serde_json::json!("the query, saved again");
    std::fs::write(
        src.join(&plan_name),
        serde_json::to_string_pretty(&plan).unwrap(),
    )
    .unwrap();

    let dst = tmp.path().join("head");
    assert_eq!(to_head(&src, &dst, &[]), 0);
    assert_head_store(&dst);
    let written = json(&dst.join(&plan_name));
    assert_eq!(written["plan_context"]["query"], "the query, saved again");
    let id = run_name.trim_end_matches(".json");
    let residue = json(&dst.join(format!(".planrun/residue/{id}.json")));
    let before: serde_json::Value = serde_json::from_slice(&original).unwrap();
    assert_eq!(
        residue["plan"]["plan_context"]["query"], before["plan_context"]["query"],
        "{residue}"
    );
    let moved = |dst: &Path| {
        json(&dst.join(".planrun/report.json"))["entries"]["per_kind"]["moved"]
            .as_u64()
            .unwrap()
    };
    let other = tmp.path().join("other");
    copy_dir(&src, &other);
    std::fs::write(other.join(&plan_name), &original).unwrap();
    let unedited = tmp.path().join("unedited");
    assert_eq!(to_head(&other, &unedited, &[]), 0);
    assert_eq!(moved(&dst), moved(&unedited) + 1);

    let back = tmp.path().join("back");
    let output = run(args(&[&"migrate", &dst, &"--out", &back]));
    assert_eq!(code(&output), 0, "{}", show(&output));
    let (src_runs, back_runs) = (tree(&src, &[]), tree(&back, &[".planrun"]));
    for (name, bytes) in &back_runs {
        assert_eq!(
            Some(bytes),
            src_runs.get(name),
            "{name} did not come back as it was"
        );
    }

    std::fs::write(src.join(&plan_name), &original).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(to_head(&src, &dst, &["--resume"]), 0);
    let report = json(&dst.join(".planrun/report.json"));
    assert_eq!(report["catch_up"]["changed"], 1, "{}", report["catch_up"]);
    let skip = [".planrun/journal.jsonl", ".planrun/report.json"];
    let (now, fresh) = (tree(&dst, &skip), tree(&unedited, &skip));
    assert!(now == fresh, "{}", first_difference(&now, &fresh));
}

/// The example store migrated to V2 in `tmp/v2`, without its journal: a store of V2 runs.
fn example_v2_store(tmp: &Path) -> PathBuf {
    let v2 = tmp.join("v2");
    let output = run(args(&[&"migrate", &example_store(), &"--out", &v2]));
    assert_eq!(code(&output), 0, "{}", show(&output));
    std::fs::remove_dir_all(v2.join(".planrun")).unwrap();
    v2
}

/// Migrates the HEAD store `head` back to V2 and checks that every run of the V2 store `v2`
/// comes back byte for byte.
fn assert_runs_come_back(v2: &Path, head: &Path, tmp: &Path) {
    let back = tmp.join("back");
    let _ = std::fs::remove_dir_all(&back);
    let output = run(args(&[&"migrate", &head, &"--out", &back]));
    assert_eq!(code(&output), 0, "{}", show(&output));
    let back = tree(&back, &[".planrun"]);
    for (name, bytes) in tree(v2, &[".planrun"]) {
        assert_eq!(
            back.get(&name),
            Some(&bytes),
            "{name} did not come back as it was"
        );
    }
}

/// Saves the run file `name` of `store` again with the same bytes, as a writer would (a new
/// stamp), and lets the store settle so it is not racily clean.
fn save_again(store: &Path, name: &str) {
    let bytes = std::fs::read(store.join(name)).unwrap();
    std::fs::write(store.join(name), bytes).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
}

/// A V2 store's plans live only in its runs, so a HEAD store made of it writes every plan file
/// from a run. A resume took such a file for one whose SRC file had left ("no run uses it any
/// more") and removed all of them, on a pass with nothing to do: the HEAD store lost its plans.
/// A plan file a run that stays wrote is kept.
#[test]
fn a_head_store_made_of_a_v2_store_keeps_its_plan_files_on_a_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let v2 = example_v2_store(tmp.path());
    let head = tmp.path().join("head");
    assert_eq!(to_head(&v2, &head, &[]), 0);
    let first = tree(&head, &[".planrun"]);
    assert!(
        first.keys().any(|name| name.starts_with("plan-")),
        "{:?}",
        first.keys()
    );
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(to_head(&v2, &head, &["--resume"]), 0);
    let report = json(&head.join(".planrun/report.json"));
    assert_eq!(report["catch_up"]["removed"], 0, "{}", report["catch_up"]);
    assert!(
        tree(&head, &[".planrun"]) == first,
        "a no-op resume changed the HEAD store"
    );
    assert_runs_come_back(&v2, &head, tmp.path());
}

/// Two V2 runs that carry different versions of one plan the store never saved (here: one
/// run's plan given the other's id) write one plan file: the first to claim it, or the version
/// DST holds from an earlier pass; the other run keeps its own plan in its residue with a
/// `moved` entry. Before, one version was written over the other and lost. Every run comes back
/// byte for byte after a fresh migration (one worker or two) and after each resume that redoes
/// one of them. (Which version the file holds can differ from a fresh migration's after such
/// resumes; none is lost.)
#[test]
fn two_v2_runs_with_versions_of_one_unsaved_plan_both_come_back() {
    let tmp = tempfile::tempdir().unwrap();
    let v2 = example_v2_store(tmp.path());
    let (kept, moved) = (
        "prun-3b7e9d2a-4c5f-4a6b-8d7e-9f0a1b2c3d4e.json",
        "prun-4c8f0e3b-5d6a-4b7c-9e8f-0a1b2c3d4e5f.json",
    );
    let plan = |name: &str| {
        json(&v2.join(name))["plan"]["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (plan_kept, plan_moved) = (plan(kept), plan(moved));
    assert_ne!(plan_kept, plan_moved);
    let text = std::fs::read_to_string(v2.join(moved)).unwrap();
    std::fs::write(v2.join(moved), text.replace(&plan_moved, &plan_kept)).unwrap();
    for jobs in ["1", "2"] {
        let head = tmp.path().join(format!("head-{jobs}"));
        assert_eq!(to_head(&v2, &head, &["--jobs", jobs]), 0);
        let report = json(&head.join(".planrun/report.json"));
        let residues = [kept, moved].map(|name| {
            let id = name.trim_end_matches(".json");
            json(&head.join(format!(".planrun/residue/{id}.json")))
        });
        let with_plan = residues.iter().filter(|r| r["plan"].is_object()).count();
        assert_eq!(with_plan, 1, "{residues:?}");
        assert!(report["entries"]["per_kind"]["moved"].as_u64().unwrap() > 0);
        assert_runs_come_back(&v2, &head, tmp.path());
    }
    let head = tmp.path().join("head-2");
    for name in [kept, moved, kept] {
        save_again(&v2, name);
        assert_eq!(to_head(&v2, &head, &["--resume"]), 0);
        assert_runs_come_back(&v2, &head, tmp.path());
    }
}

/// In shards, a plan file that one shard's V2 runs wrote stays while another shard's V2 runs
/// name it, also once the shard that wrote it has compacted its journal. Compaction kept the
/// record of the file's bytes but not that a V2 run wrote them, so the next resume (with
/// nothing to do) took the file for a legacy plan file SRC had deleted and removed it, exit 0:
/// the other shard's runs came back from the HEAD store without their plan.
#[test]
fn a_plan_file_v2_runs_of_another_shard_use_outlives_compaction() {
    let tmp = tempfile::tempdir().unwrap();
    let v2 = example_v2_store(tmp.path());
    let model = "4c8f0e3b-5d6a-4b7c-9e8f-0a1b2c3d4e5f";
    let text = std::fs::read_to_string(v2.join(format!("prun-{model}.json"))).unwrap();
    // Six more runs of that run's plan, which the V2 store has no file of: both shards get some.
    for i in 1..=6 {
        let id = format!("4c8f0e3b-5d6a-4b7c-9e8f-0a1b2c3d4e6{i}");
        std::fs::write(v2.join(format!("prun-{id}.json")), text.replace(model, &id)).unwrap();
    }
    let plan = json(&v2.join(format!("prun-{model}.json")))["plan"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let head = tmp.path().join("head");
    let shard0 = ["--shard", "0/2"];
    for shard in ["0/2", "1/2"] {
        assert_eq!(to_head(&v2, &head, &["--shard", shard]), 0);
    }
    let journal = head.join(".planrun/journal-0-of-2.jsonl");
    let runs_of = |journal: &Path| -> Vec<String> {
        let text = std::fs::read_to_string(journal).unwrap();
        let lines = text
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap());
        let runs = lines.filter_map(|line| line["run"].as_str().map(str::to_owned));
        runs.collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    let (ours, others): (Vec<String>, Vec<String>) = runs_of(&journal)
        .into_iter()
        .partition(|run| run.starts_with("prun-4c8f0e3b"));
    let theirs = runs_of(&head.join(".planrun/journal-1-of-2.jsonl"));
    assert!(!ours.is_empty() && theirs.iter().any(|run| run.starts_with("prun-4c8f0e3b")));
    // Shard 0 loses every run of the plan, and its other runs are saved again: enough of its
    // journal's lines are superseded for the pass to compact it.
    for run in &ours {
        std::fs::remove_file(v2.join(run)).unwrap();
    }
    for run in &others {
        save_again(&v2, run);
    }
    assert_eq!(to_head(&v2, &head, &["--resume", shard0[0], shard0[1]]), 0);
    // Compacted: the lines that recorded writing the plan file are gone, the file's record
    // stays.
    let compacted = std::fs::read_to_string(&journal).unwrap();
    let completed = compacted
        .lines()
        .filter(|line| line.contains(r#""event":"completed""#));
    assert!(
        !completed
            .into_iter()
            .any(|line| ours.iter().any(|run| line.contains(run.as_str()))),
        "the journal was not compacted:\n{compacted}"
    );
    assert!(compacted.contains(&format!("{plan}.json")));
    assert_eq!(to_head(&v2, &head, &["--resume", shard0[0], shard0[1]]), 0);
    let report = json(&head.join(".planrun/report-0-of-2.json"));
    assert_eq!(report["catch_up"]["removed"], 0, "{}", report["catch_up"]);
    assert!(head.join(format!("{plan}.json")).is_file());
    assert_runs_come_back(&v2, &head, tmp.path());
}

/// Migrates `store` to V2 directly, and through a HEAD store (`--to r6`, then back to V2), and
/// downgrades the V2 store and migrates that back too; all three V2 trees must be the same bytes.
fn assert_round_trips(store: &Path, tmp: &Path) {
    let direct = tmp.join("v2");
    let head = tmp.join("head");
    let back = tmp.join("back");
    let down = tmp.join("down");
    let again = tmp.join("again");
    for (argv, what) in [
        (
            args(&[&"migrate", &store, &"--out", &direct]),
            "legacy to V2",
        ),
        (
            args(&[&"migrate", &store, &"--out", &head, &"--to", &"r6"]),
            "legacy to HEAD",
        ),
        (args(&[&"migrate", &head, &"--out", &back]), "HEAD to V2"),
        (
            args(&[&"downgrade", &direct, &"--out-dir", &down]),
            "V2 to HEAD",
        ),
        (
            args(&[&"migrate", &down, &"--out", &again]),
            "downgraded HEAD to V2",
        ),
    ] {
        let output = run(argv);
        assert_eq!(
            code(&output),
            0,
            "{what} ({}): {}",
            store.display(),
            show(&output)
        );
    }
    let direct = tree(&direct, &[".planrun"]);
    assert!(!direct.is_empty());
    for (name, other) in [("legacy → HEAD → V2", &back), ("V2 → HEAD → V2", &again)] {
        let other = tree(other, &[".planrun"]);
        assert!(
            direct == other,
            "{name} differs for {}: {}",
            store.display(),
            first_difference(&direct, &other)
        );
    }
}

#[test]
fn v2_and_head_stores_convert_into_each_other_byte_for_byte() {
    let mut stores = corpus_stores();
    stores.push(example_store());
    for store in &stores {
        let tmp = tempfile::tempdir().unwrap();
        assert_round_trips(store, tmp.path());
    }
}

/// Law 7 for `--to r6`: every run of a store with a history is in the HEAD store, which HEAD
/// loads completely (judged by `check --sdk HEAD`, whose verdicts agree with v0.9.0's own on
/// such stores); a run whose plan was never saved is written without one, as the SDK left it
/// (HEAD lists and loads such a run; only its `get_plan` fails, as it did before), and says so.
#[test]
fn a_store_with_a_history_becomes_a_head_store_with_every_run() {
    let tmp = tempfile::tempdir().unwrap();
    let store = history_store(tmp.path(), 240, 3);
    let dst = tmp.path().join("head");
    assert_eq!(to_head(&store, &dst, &[]), 0);
    assert_head_store(&dst);
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dst.join(".planrun/report.json")).unwrap()).unwrap();
    assert_eq!(report["failures"], serde_json::json!([]), "{report:#}");
    let check = run_argv(&[&"check", &dst, &"--sdk", &"HEAD"]);
    assert_eq!(code(&check), 0, "{}", show(&check));

    let written = tree(&dst, &[".planrun"]);
    let mut planless = 0;
    for (name, bytes) in tree(&store, &[]) {
        let Ok(parsed) = parse(&bytes) else { continue };
        let Some(run) = parsed.as_run() else { continue };
        let head_name = format!("prun-{}", name.split_once('-').unwrap().1);
        assert!(
            written.contains_key(&head_name),
            "{name} is not in the HEAD store"
        );
        let plan_file = format!("{}.json", run.plan_id());
        let has_plan = store.join(&plan_file).exists();
        assert_eq!(written.contains_key(&plan_file), has_plan, "{plan_file}");
        planless += u64::from(!has_plan);
    }
    assert!(planless > 0);
    // Each run written without a plan file says so in the report.
    assert_eq!(
        report["entries"]["per_field"]["/plan"]["defaulted"], planless,
        "{report:#}"
    );
    let trip = tmp.path().join("trip");
    std::fs::create_dir(&trip).unwrap();
    assert_round_trips(&store, &trip);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 4, ..Default::default() })]

    #[test]
    fn generated_stores_round_trip_through_head(
        seed in proptest::prelude::any::<u64>(),
        history in proptest::prelude::any::<bool>(),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let store = tmp.path().join("store");
        let opts = planrun_gen::GenOptions {
            runs: 160,
            seed,
            history,
            ..planrun_gen::GenOptions::default()
        };
        planrun_gen::generate(&opts, &store).unwrap();
        assert_round_trips(&store, tmp.path());
    }
}

#[test]
fn a_run_the_sdk_saved_again_keeps_its_new_state_and_says_its_residue_no_longer_fits() {
    let tmp = tempfile::tempdir().unwrap();
    let head = tmp.path().join("head");
    assert_eq!(to_head(&example_store(), &head, &[]), 0);
    // The SDK at HEAD resumes the W1 workflow and saves it: its file changes, so the residue
    // made for the old file must not be applied to the new one.
    let run = head.join("prun-3b7e9d2a-4c5f-4a6b-8d7e-9f0a1b2c3d4e.json");
    let text = std::fs::read_to_string(&run).unwrap();
    let saved = text.replacen("\"current_step_index\": 1", "\"current_step_index\": 2", 1);
    assert_ne!(saved, text, "the fixture's step index moved");
    std::fs::write(&run, saved).unwrap();
    let back = tmp.path().join("back");
    let output = run_argv(&[&"migrate", &head, &"--out", &back]);
    assert_eq!(code(&output), 0, "{}", show(&output));
    let v2 = json(&back.join("prun-3b7e9d2a-4c5f-4a6b-8d7e-9f0a1b2c3d4e.json"));
    assert_eq!(v2["current_step_index"], 2, "the SDK's new state wins");
    assert!(
        v2.get("legacy").is_none(),
        "the stale residue is not applied: {v2}"
    );
    let report = json(&back.join(".planrun/report.json"));
    assert_eq!(
        outcomes(&report)["converted_with_loss"],
        1,
        "{}",
        report["outcomes"]
    );
}

fn run_argv(items: &[&dyn AsRef<std::ffi::OsStr>]) -> std::process::Output {
    run(args(items))
}

/// A run (R4) with one "Action" clarification that has Multiple Choice keys, and its plan.
const ACTION_WITH_CHOICE_KEYS: &str = r#"{
    "id": "prun-2f0ef59c-2498-4bd6-92d0-5768ffb32c53",
    "plan_id": "plan-ede403ac-32df-48d2-94ce-6965146ba5f3",
    "current_step_index": 0,
    "state": "READY_TO_RESUME",
    "execution_context": {
        "additional_data": {}
    },
    "end_user_id": "local",
    "outputs": {
        "clarifications": [
            {
                "id": "clar-7e8cea83-a97b-432b-8706-cfbe03fd43ea",
                "plan_run_id": "prun-2f0ef59c-2498-4bd6-92d0-5768ffb32c53",
                "category": "Action",
                "response": null,
                "step": 0,
                "user_guidance": "Which calendar should the meeting go in?",
                "resolved": true,
                "argument_name": "calendar",
                "options": [
                    "Work",
                    "Personal"
                ]
            }
        ],
        "step_outputs": {},
        "final_output": null
    }
}"#;
const ACTION_WITH_CHOICE_KEYS_PLAN: &str = r#"{
    "id": "plan-ede403ac-32df-48d2-94ce-6965146ba5f3",
    "plan_context": {
        "query": "Book the offsite",
        "tool_ids": [
            "portia:google:gcalendar:create_event"
        ]
    },
    "steps": [
        {
            "task": "Book the offsite",
            "inputs": [],
            "tool_id": "portia:google:gcalendar:create_event",
            "output": "$event",
            "condition": null
        }
    ]
}"#;

/// Writes `run` and the plan above as a legacy store and checks that it comes back from V2 →
/// HEAD store → V2 byte for byte.
fn round_trips_through_head(run: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    std::fs::create_dir(&store).unwrap();
    std::fs::write(
        store.join("prun-2f0ef59c-2498-4bd6-92d0-5768ffb32c53.json"),
        run,
    )
    .unwrap();
    std::fs::write(
        store.join("plan-ede403ac-32df-48d2-94ce-6965146ba5f3.json"),
        ACTION_WITH_CHOICE_KEYS_PLAN,
    )
    .unwrap();
    assert_round_trips(&store, tmp.path());
}

/// Regression of a fuzzer finding: keys HEAD's form leaves out of a clarification came back from
/// the residue reversed, and the V2 document's `extra` with them. (HEAD loads this "Action" as an
/// InputClarification, since a resolved response `null` is not one of the options: its form
/// keeps `argument_name` and leaves out `options`.)
#[test]
fn keys_head_leaves_out_of_one_clarification_come_back_in_their_order() {
    round_trips_through_head(ACTION_WITH_CHOICE_KEYS);
}

/// Regression of a fuzzer finding: HEAD's form keeps `argument_name` and leaves out `hint`,
/// which came before it; undoing the drop puts `hint` back after it, so the residue must keep
/// the clarifications whole instead.
#[test]
fn keys_head_leaves_out_before_keys_it_keeps_come_back_in_their_order() {
    let run = ACTION_WITH_CHOICE_KEYS.replace(
        "\"resolved\": true,\n",
        "\"resolved\": true,\n                \"hint\": \"Work or Personal\",\n",
    );
    assert!(run.contains("hint"));
    round_trips_through_head(&run);
}

/// A V2 store of one run of the example store that has step outputs, edited by `edit`: its
/// directory and the run's file name and text.
fn edited_v2_store(tmp: &Path, edit: impl Fn(&mut serde_json::Value)) -> (PathBuf, String, String) {
    let v2 = tmp.join("v2");
    let output = run(args(&[&"migrate", &example_store(), &"--out", &v2]));
    assert_eq!(code(&output), 0, "{}", show(&output));
    let (name, mut doc) = run_files(&v2)
        .into_iter()
        .map(|name| {
            let doc = json(&v2.join(&name));
            (name, doc)
        })
        .find(|(_, doc)| {
            doc["step_output_values"]
                .as_array()
                .is_some_and(|v| !v.is_empty())
        })
        .expect("the example store has a run with step outputs");
    for other in run_files(&v2) {
        if other != name {
            std::fs::remove_file(v2.join(other)).unwrap();
        }
    }
    edit(&mut doc);
    let edited = format!("{}\n", serde_json::to_string_pretty(&doc).unwrap());
    std::fs::write(v2.join(&name), &edited).unwrap();
    (v2, name, edited)
}

/// Downgrades the V2 store `v2` to a HEAD store and migrates that back: the run `name`'s text.
fn through_head(tmp: &Path, v2: &Path, name: &str) -> String {
    let down = tmp.join("down");
    let output = run(args(&[&"downgrade", &v2, &"--out-dir", &down]));
    assert_eq!(code(&output), 0, "{}", show(&output));
    let back = tmp.join("back");
    let output = run(args(&[&"migrate", &down, &"--out", &back]));
    assert_eq!(code(&output), 0, "{}", show(&output));
    String::from_utf8(std::fs::read(back.join(name)).unwrap()).unwrap()
}

/// Regression of a fuzzer finding: two step output values of one name (a V2 run of a loop) have
/// one legacy slot, keyed by name as the SDK's dict is, so the later replaces the earlier. The
/// downgrade dropped the earlier one under the later one's pointer, without its value, and a
/// HEAD store said it was kept in the residue but did not keep it. Now a file's downgrade refuses
/// without --allow-loss and names the earlier value's pointer, and a store's residue holds the
/// list, so V2 → HEAD store → V2 gives the same V2 bytes back.
#[test]
fn two_step_outputs_of_one_name_are_refused_or_kept_in_the_residue() {
    let tmp = tempfile::tempdir().unwrap();
    let (v2, name, edited) = edited_v2_store(tmp.path(), |doc| {
        let values = doc["step_output_values"].as_array_mut().unwrap();
        let mut again = values[0].clone();
        again["output"]["value"] = serde_json::json!("the second pass");
        values.push(again);
    });
    let file = v2.join(&name);
    let refused = run(args(&[
        &"downgrade",
        &file,
        &"--out-dir",
        &tmp.path().join("no"),
    ]));
    assert_ne!(code(&refused), 0, "{}", show(&refused));
    assert!(
        show(&refused).contains("/step_output_values/0"),
        "{}",
        show(&refused)
    );
    assert_eq!(through_head(tmp.path(), &v2, &name), edited);
}

/// Regression of a fuzzer finding: a V2 run that no legacy run made may hold what converting a
/// legacy run never gives (here a step number), so HEAD's files alone did not give it back. The
/// residue is now checked by converting the HEAD files back when it is made, and keeps every
/// top-level field they do not give back.
#[test]
fn a_v2_run_no_legacy_run_made_comes_back_through_a_head_store() {
    let tmp = tempfile::tempdir().unwrap();
    let (v2, name, edited) = edited_v2_store(tmp.path(), |doc| {
        doc["step_output_values"][0]["step_num"] = serde_json::json!(7);
    });
    assert_eq!(through_head(tmp.path(), &v2, &name), edited);
}

/// A plan written before v0.1.6 may repeat an output (0.0.1-alpha.50 – 0.1.5 have no uniqueness
/// check; an R1 run of 0.1.0 – 0.1.5 uses it); the SDK's Plan validator refuses it from v0.1.6 to
/// HEAD ("Outputs must be unique", then "Outputs + conditions must be unique"). In the run the
/// later step's output replaced the earlier one's under the shared name, so `--to r6` renames
/// the earlier step's output, writes the plan and the run, and keeps the rename in the residue:
/// the way back gives the direct V2 bytes.
#[test]
fn a_plan_that_repeats_an_output_is_written_with_the_earlier_one_renamed() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    std::fs::create_dir(&store).unwrap();
    let plan = r#"{
    "id": "plan-0d5b8f8e-6a8e-4b8e-9c61-3f0e6c7f2a11",
    "plan_context": {
        "query": "Fetch the weather twice",
        "tool_ids": [
            "weather_tool"
        ]
    },
    "steps": [
        {
            "task": "Get the weather in Lisbon",
            "inputs": [],
            "tool_id": "weather_tool",
            "output": "$weather"
        },
        {
            "task": "Get the weather in Porto",
            "inputs": [],
            "tool_id": "weather_tool",
            "output": "$weather"
        }
    ]
}"#;
    let run = r#"{
    "id": "prun-0d5b8f8e-6a8e-4b8e-9c61-3f0e6c7f2a12",
    "plan_id": "plan-0d5b8f8e-6a8e-4b8e-9c61-3f0e6c7f2a11",
    "current_step_index": 0,
    "state": "NOT_STARTED",
    "execution_context": {
        "end_user_id": null,
        "additional_data": {},
        "planning_agent_system_context_extension": null,
        "execution_agent_system_context_extension": null
    },
    "outputs": {
        "clarifications": [],
        "step_outputs": {
            "$weather": {
                "value": "sunny in Porto",
                "summary": null
            }
        },
        "final_output": null
    }
}"#;
    std::fs::write(
        store.join("plan-0d5b8f8e-6a8e-4b8e-9c61-3f0e6c7f2a11.json"),
        plan,
    )
    .unwrap();
    std::fs::write(
        store.join("prun-0d5b8f8e-6a8e-4b8e-9c61-3f0e6c7f2a12.json"),
        run,
    )
    .unwrap();
    let dst = tmp.path().join("head");
    let output = run_argv(&[&"migrate", &store, &"--out", &dst, &"--to", &"r6"]);
    assert_eq!(code(&output), 0, "{}", show(&output));
    assert_head_store(&dst);
    let written = tree(&dst, &[".planrun"]);
    let plan = parse(&written["plan-0d5b8f8e-6a8e-4b8e-9c61-3f0e6c7f2a11.json"]).unwrap();
    let LegacyDocument::Plan(plan) = plan.document else {
        panic!("not a plan")
    };
    let outputs: Vec<&str> = plan.steps.iter().map(|s| s.output.as_str()).collect();
    assert_eq!(outputs, ["$weather_step_0", "$weather"]);
    assert!(head::plan_validator_fails(&plan).is_empty());
    let run_file = &written["prun-0d5b8f8e-6a8e-4b8e-9c61-3f0e6c7f2a12.json"];
    assert!(String::from_utf8_lossy(run_file).contains("sunny in Porto"));
    let residue = std::fs::read_to_string(
        dst.join(".planrun/residue/prun-0d5b8f8e-6a8e-4b8e-9c61-3f0e6c7f2a12.json"),
    )
    .unwrap();
    assert!(residue.contains("/steps/0/output"), "{residue}");
    let trip = tmp.path().join("trip");
    std::fs::create_dir(&trip).unwrap();
    assert_round_trips(&store, &trip);
}

/// Any V2 run, with a step index a legacy run can hold (any i64 is refused, which the
/// downgrade tests pin).
fn small_step_index() -> impl proptest::strategy::Strategy<Value = planrun_v2::PlanRunV2> {
    use proptest::strategy::Strategy;
    planrun_v2::strategies::plan_run_v2().prop_map(|mut v2| {
        v2.current_step_index = v2.current_step_index.rem_euclid(64);
        v2
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

    /// V2 → HEAD store → V2 for any V2 run the strategies generate, not only those converted
    /// from legacy runs: the downgrade to HEAD's form, the HEAD store's files with the residue,
    /// and the conversion of that store back give the same V2 bytes (with the config the way
    /// back is given: a conversion writes the config it is given). A run the downgrade refuses
    /// (a plan no SDK version wrote), whose end-user id cannot name a file (`downgrade` refuses
    /// it) or whose agent-memory files are not there is not counted.
    #[test]
    fn any_v2_run_comes_back_through_a_head_store(v2 in small_step_index()) {
        use planrun_converter::downgrade::downgrade_to_head;
        let config = planrun_store::ResolvedConfig::sdk_defaults().unwrap();
        // The V2 run as its file reads: an integer written `-0` reads as 0, as in Python.
        let text = serde_json::to_string_pretty(&v2).unwrap();
        let tree = planrun_wire::json::parse_value(text.as_bytes()).unwrap();
        let v2: planrun_v2::PlanRunV2 = planrun_wire::json::from_tree(text.as_bytes(), &tree).unwrap();
        let mut want = v2.clone();
        want.config = config.config().clone();
        let mut want_text = serde_json::to_string_pretty(&want).unwrap();
        want_text.push('\n');
        let Ok(down) = downgrade_to_head(&v2, true) else {
            return Ok(());
        };
        if planrun_store::safe_component(&v2.end_user.external_id).is_err() {
            return Ok(());
        }
        let store = planrun_converter::head_store::assemble(&mut [(v2.clone(), down)]);
        let tmp = tempfile::tempdir().unwrap();
        for (name, text) in &store.files {
            let path = tmp.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let run = tmp.path().join(format!("{}.json", v2.id));
        let back = planrun_store::convert_run(&run, tmp.path(), &config);
        match back.outcome {
            Ok(out) => proptest::prop_assert_eq!(String::from_utf8(out.bytes).unwrap(), want_text),
            Err(failure) if failure.message.contains("agent-memory") => {}
            Err(failure) => proptest::prop_assert!(false, "{}: {}", failure.kind, failure.message),
        }
    }
}

/// Regression of a fuzzer finding: a V2 run is read without an end-user file, so its end-user
/// id was never checked as a file name, and `--to r6` named the end-user file after it; an id
/// like `../escape` would have put it outside DST. The run is rejected now, and nothing is
/// written outside DST.
#[test]
fn an_end_user_id_that_cannot_name_a_file_is_rejected_not_written() {
    let tmp = tempfile::tempdir().unwrap();
    let (v2, _, _) = edited_v2_store(tmp.path(), |doc| {
        doc["end_user"]["external_id"] = serde_json::json!("../escape");
    });
    let dst = tmp.path().join("sub").join("head");
    std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
    let output = run_argv(&[&"migrate", &v2, &"--out", &dst, &"--to", &"r6"]);
    assert_eq!(code(&output), 1, "{}", show(&output));
    assert!(!tmp.path().join("sub").join("escape.json").exists());
    let written: Vec<String> = tree(&dst, &[".planrun"]).into_keys().collect();
    assert!(written.is_empty(), "{written:?}");
    let report = std::fs::read_to_string(dst.join(".planrun/report.json")).unwrap();
    assert!(report.contains("unsafe_name"), "{report}");
}
