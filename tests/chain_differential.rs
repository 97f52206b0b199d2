//! The typed version chain against its reference, the rename table's tree interpreter: the same
//! R6 run, residue and loss report, and from them the same V2 bytes and report entries, for every
//! run of the SDK corpus and the example store, every run of generated stores of each version
//! alone and of the default mix, and generated runs of every version (proptest). And every legacy
//! row of the table has its typed step, so a row added without one fails here.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use planrun_converter::chain::{reference, to_r6, AtR6, TYPED_ROWS};
use planrun_converter::renames::TABLE;
use planrun_converter::upgrade::{resolve_config, upgrade_at, PlanSource, Sources};
use planrun_gen::{generate, GenOptions};
use planrun_legacy::{parse, LegacyDocument, LegacyRun, Parsed, Version};
use planrun_wire::json::to_sdk_json;

/// The chain's result as bytes: the R6 run as the SDK writes it, the residue and the report.
fn wire(at: &AtR6) -> (String, String, String) {
    (
        to_sdk_json(&at.run),
        serde_json::to_string(&at.residue).unwrap(),
        serde_json::to_string(&at.report).unwrap(),
    )
}

fn same_chain(run: &LegacyRun, what: &str) -> (AtR6, AtR6) {
    let typed = to_r6(run).unwrap_or_else(|e| panic!("{what}: typed: {e}"));
    let tree = reference::to_r6(run).unwrap_or_else(|e| panic!("{what}: reference: {e}"));
    assert_eq!(wire(&typed), wire(&tree), "{what}: the bytes differ");
    assert_eq!(typed, tree, "{what}");
    (typed, tree)
}

/// A directory tree of documents as one store: its runs, and its plans and end users by file
/// stem.
struct Dir {
    runs: Vec<(PathBuf, Parsed)>,
    others: HashMap<String, Parsed>,
}

/// Every `.json` file under `dir`, at any depth, in sorted order.
fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            json_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

fn read_dir(dir: &Path) -> Dir {
    let mut paths = Vec::new();
    json_files(dir, &mut paths);
    paths.sort();
    let mut out = Dir {
        runs: Vec::new(),
        others: HashMap::new(),
    };
    for path in paths {
        let Ok(parsed) = parse(&std::fs::read(&path).unwrap()) else {
            continue;
        };
        if parsed.as_run().is_some() {
            out.runs.push((path, parsed));
        } else {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            out.others.insert(stem, parsed);
        }
    }
    out
}

/// Both chains over every run of `dir`, then the final step from each: the same V2 bytes and
/// the same report, entry for entry (or the same refusal). Returns how many runs it compared.
fn same_store(dir: &Path) -> usize {
    let store = read_dir(dir);
    let (config, _) = resolve_config(None).unwrap();
    for (path, parsed) in &store.runs {
        let what = path.display().to_string();
        let run = parsed.as_run().unwrap();
        let (typed, tree) = same_chain(run, &what);
        let plan = match store.others.get(&run.plan_id().to_string()) {
            Some(Parsed {
                document: LegacyDocument::Plan(plan),
                ..
            }) => Some(plan),
            _ => None,
        };
        let end_user = match store.others.get(&typed.run.end_user_id) {
            Some(Parsed {
                document: LegacyDocument::EndUser(user),
                ..
            }) => Some(user),
            _ => None,
        };
        let sources = Sources {
            run: parsed,
            plan: PlanSource::looked_up(plan),
            end_user,
            plan_read: &[],
            end_user_read: &[],
            config: &config,
            agent_memory: None,
        };
        let v2 = |at: AtR6| match upgrade_at(&sources, at) {
            Ok(converted) => Ok((
                serde_json::to_string_pretty(&converted.run).unwrap(),
                converted
                    .report
                    .entries
                    .iter()
                    .map(|e| serde_json::to_string(e).unwrap())
                    .collect::<Vec<_>>(),
            )),
            Err(e) => Err(e.to_string()),
        };
        assert_eq!(v2(typed), v2(tree), "{what}: the V2 outputs differ");
    }
    store.runs.len()
}

#[test]
fn every_legacy_row_of_the_table_has_its_typed_step() {
    let legacy: Vec<&str> = TABLE
        .iter()
        .filter(|row| row.from.is_some())
        .map(|row| row.id)
        .collect();
    assert_eq!(
        legacy, TYPED_ROWS,
        "the typed chain (converter/src/chain/mod.rs) and the rename table list different rows"
    );
}

#[test]
fn the_corpus_and_the_example_store_give_the_same_bytes_both_ways() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/store"));
    let mut compared = 0;
    for dir in dirs {
        compared += same_store(&dir);
    }
    assert!(compared > 100, "only {compared} runs compared");
}

#[test]
fn generated_stores_of_every_version_give_the_same_bytes_both_ways() {
    let tmp = tempfile::tempdir().unwrap();
    let mixes: Vec<Vec<Version>> = Version::ALL
        .into_iter()
        .map(|v| vec![v])
        .chain([Version::ALL.to_vec()])
        .collect();
    for (i, versions) in mixes.into_iter().enumerate() {
        let out = tmp.path().join(format!("store-{i}"));
        let runs = if versions.len() > 1 { 600 } else { 150 };
        let opts = GenOptions {
            runs,
            seed: 11 + i as u64,
            versions,
            ..GenOptions::default()
        };
        generate(&opts, &out).unwrap();
        assert_eq!(same_store(&out), runs, "{}", out.display());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn generated_runs_of_every_version_give_the_same_chain_both_ways(
        run in prop::sample::select(Version::ALL.to_vec())
            .prop_flat_map(planrun_legacy::strategies::run)
    ) {
        same_chain(&run, &format!("{run:?}"));
    }
}
