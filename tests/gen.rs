//! The store generator (`planrun_converter::gen` and `planrun gen`): deterministic, written exactly
//! as the SDK writes (every file parses, re-emits byte-identical and is detected as the version
//! it was generated as), internally consistent (plans, end users and agent memory that runs refer
//! to exist, except the end users left out on purpose), and realistic in its mix.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use planrun_gen::{generate, FileKind, GenOptions, GenSummary};
use planrun_legacy::{
    parse, Category, Clarification, DocKind, LegacyDocument, LegacyRun, LocalDataValue, Output,
    Parsed, Plan, Version,
};
use Version::*;

fn generated(opts: &GenOptions) -> (tempfile::TempDir, PathBuf, GenSummary) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("store");
    let summary = generate(opts, &out).unwrap();
    (dir, out, summary)
}

fn opts(runs: usize, seed: u64) -> GenOptions {
    GenOptions {
        runs,
        seed,
        ..GenOptions::default()
    }
}

/// Every file under `root`, by relative path.
fn files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.insert(path.strip_prefix(root).unwrap().to_owned(), bytes);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Every run of the store, parsed, with its generated version.
fn runs(out: &Path, summary: &GenSummary) -> Vec<(Version, u64, LegacyRun)> {
    summary
        .manifest
        .iter()
        .filter(|f| f.kind == FileKind::Run)
        .map(|f| {
            let parsed = parse(&std::fs::read(out.join(&f.path)).unwrap()).unwrap();
            let run = parsed.as_run().unwrap().clone();
            (f.version, f.bytes, run)
        })
        .collect()
}

struct View<'a> {
    clarifications: &'a [Clarification],
    outputs: Vec<(&'a str, Output)>,
    final_output: Option<Output>,
    plan_run_inputs: Option<&'a indexmap::IndexMap<String, LocalDataValue>>,
    ec_end_user: Option<Option<&'a str>>,
    end_user_id: Option<&'a str>,
}

/// One shape for every version's run.
fn view(run: &LegacyRun) -> View<'_> {
    macro_rules! old {
        ($r:expr) => {
            View {
                clarifications: &$r.outputs.clarifications,
                outputs: $r
                    .outputs
                    .step_outputs
                    .iter()
                    .map(|(k, v)| (k.as_str(), Output::Local(v.clone())))
                    .collect(),
                final_output: $r.outputs.final_output.clone().map(Output::Local),
                plan_run_inputs: None,
                ec_end_user: Some($r.execution_context.end_user_id.as_deref()),
                end_user_id: None,
            }
        };
    }
    macro_rules! new {
        ($r:expr, $ec:expr, $eu:expr, $pri:expr) => {
            View {
                clarifications: &$r.outputs.clarifications,
                outputs: $r
                    .outputs
                    .step_outputs
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.clone()))
                    .collect(),
                final_output: $r.outputs.final_output.clone(),
                plan_run_inputs: $pri,
                ec_end_user: $ec,
                end_user_id: $eu,
            }
        };
    }
    match run {
        LegacyRun::W1(r) => old!(r),
        LegacyRun::R0(r) | LegacyRun::R1(r) => old!(r),
        LegacyRun::R2(r) => new!(
            r,
            Some(r.execution_context.end_user_id.as_deref()),
            None,
            None
        ),
        LegacyRun::R3(r) => new!(
            r,
            Some(r.execution_context.end_user_id.as_deref()),
            None,
            None
        ),
        LegacyRun::R4(r) => new!(r, None, Some(r.end_user_id.as_str()), None),
        LegacyRun::R5(r) => new!(
            r,
            None,
            Some(r.end_user_id.as_str()),
            Some(&r.plan_run_inputs)
        ),
        LegacyRun::R6(r) => new!(
            r,
            None,
            Some(r.end_user_id.as_str()),
            Some(&r.plan_run_inputs)
        ),
    }
}

fn allowed_categories(version: Version) -> BTreeSet<&'static str> {
    let mut all = vec![
        "Action",
        "Input",
        "Multiple Choice",
        "Value Confirmation",
        "Custom",
    ];
    if version <= R0 {
        all.push("Argument");
    }
    if version == R6 {
        all.push("User Verification");
    }
    all.into_iter().collect()
}

// ---------------------------------------------------------------------------------------------
// (1) Determinism
// ---------------------------------------------------------------------------------------------

#[test]
fn the_same_options_write_byte_identical_stores_and_another_seed_does_not() {
    let (_a, out_a, summary_a) = generated(&opts(240, 42));
    let (_b, out_b, summary_b) = generated(&opts(240, 42));
    let (_c, out_c, summary_c) = generated(&opts(240, 43));
    let (a, b, c) = (files(&out_a), files(&out_b), files(&out_c));
    assert_eq!(a.len(), summary_a.files);
    assert!(a == b, "two generations with the same options differ");
    assert_eq!(summary_a, summary_b);
    assert!(a != c, "another seed wrote the same store");
    assert_ne!(summary_a.manifest, summary_c.manifest);
    // Different seeds give different ids, so no run file name is shared.
    let runs_c: BTreeSet<&PathBuf> = summary_c
        .manifest
        .iter()
        .filter(|f| f.kind == FileKind::Run)
        .map(|f| &f.path)
        .collect();
    assert!(summary_a
        .manifest
        .iter()
        .filter(|f| f.kind == FileKind::Run)
        .all(|f| !runs_c.contains(&f.path)));
}

#[test]
fn the_version_list_and_large_every_change_only_what_they_say() {
    let only = GenOptions {
        runs: 30,
        seed: 5,
        versions: vec![R6, W1, R3, R6],
        large_every: 0,
        history: false,
    };
    let (_dir, out, summary) = generated(&only);
    let per: Vec<(Version, usize)> = summary.runs_per_version.clone().into_iter().collect();
    assert_eq!(per, vec![(W1, 10), (R3, 10), (R6, 10)]);
    assert_eq!(summary.large_runs, 0);
    for (version, bytes, _) in runs(&out, &summary) {
        assert!([W1, R3, R6].contains(&version));
        assert!(bytes < 16_000, "a large run with large_every 0");
    }
}

#[test]
fn an_existing_non_empty_directory_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "mine").unwrap();
    let err = generate(&opts(5, 1), dir.path()).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists, "{err}");
    assert_eq!(files(dir.path()).len(), 1);
    assert_eq!(std::fs::read(dir.path().join("keep.txt")).unwrap(), b"mine");

    // An empty directory is fine.
    let empty = tempfile::tempdir().unwrap();
    let summary = generate(&opts(5, 1), empty.path()).unwrap();
    assert_eq!(files(empty.path()).len(), summary.files);

    let none = GenOptions {
        versions: Vec::new(),
        ..opts(5, 1)
    };
    let fresh = tempfile::tempdir().unwrap();
    let err = generate(&none, &fresh.path().join("store")).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
}

// ---------------------------------------------------------------------------------------------
// (2) Every file as the SDK writes it
// ---------------------------------------------------------------------------------------------

#[test]
fn every_file_parses_re_emits_byte_identical_and_is_detected_as_its_version() {
    let (_dir, out, summary) = generated(&opts(400, 7));
    let on_disk = files(&out);
    let listed: BTreeSet<&PathBuf> = summary.manifest.iter().map(|f| &f.path).collect();
    assert_eq!(
        listed,
        on_disk.keys().collect(),
        "the manifest lists exactly the files written"
    );
    assert_eq!(summary.files, on_disk.len());
    assert_eq!(
        summary.bytes,
        on_disk.values().map(|b| b.len() as u64).sum::<u64>()
    );
    for file in &summary.manifest {
        let bytes = &on_disk[&file.path];
        assert_eq!(file.bytes, bytes.len() as u64);
        assert!(
            !bytes.ends_with(b"\n"),
            "{}: trailing newline",
            file.path.display()
        );
        let parsed: Parsed =
            parse(bytes).unwrap_or_else(|e| panic!("{}: {e}", file.path.display()));
        assert!(
            parsed.normalizations.is_empty(),
            "{}: {:?}",
            file.path.display(),
            parsed.normalizations
        );
        assert!(
            parsed.to_sdk_json().as_bytes() == bytes.as_slice(),
            "{}: re-emission differs",
            file.path.display()
        );
        let kind = match file.kind {
            FileKind::Run => DocKind::Run,
            FileKind::Plan => DocKind::Plan,
            FileKind::EndUser => DocKind::EndUser,
            FileKind::AgentMemory => DocKind::Output,
        };
        assert_eq!(parsed.detection.kind, kind, "{}", file.path.display());
        assert!(
            parsed.detection.versions.contains(file.version),
            "{}: generated as {} but detected as {}",
            file.path.display(),
            file.version,
            parsed.detection
        );
        if let Some(run) = parsed.as_run() {
            let name = file.path.file_name().unwrap().to_str().unwrap();
            assert_eq!(name, format!("{}.json", run.id().unwrap()));
            let prefix = match file.version {
                W1 => "wkfl-",
                R0 => "pr-",
                _ => "prun-",
            };
            assert!(name.starts_with(prefix), "{name} as {}", file.version);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// (3) References between files
// ---------------------------------------------------------------------------------------------

#[test]
fn plans_end_users_and_agent_memory_that_runs_refer_to_exist() {
    let (_dir, out, summary) = generated(&opts(400, 11));
    let mut plans: HashMap<String, Plan> = HashMap::new();
    for file in summary.manifest.iter().filter(|f| f.kind == FileKind::Plan) {
        let parsed = parse(&std::fs::read(out.join(&file.path)).unwrap()).unwrap();
        let LegacyDocument::Plan(plan) = parsed.document else {
            panic!("{} is not a plan", file.path.display())
        };
        plans.insert(plan.id.unwrap().to_string(), plan);
    }
    let memory_files: BTreeSet<PathBuf> = summary
        .manifest
        .iter()
        .filter(|f| f.kind == FileKind::AgentMemory)
        .map(|f| f.path.clone())
        .collect();
    let mut referenced = BTreeSet::new();
    let mut missing_users = 0;
    let mut runs_per_plan: HashMap<String, usize> = HashMap::new();
    for (version, _, run) in runs(&out, &summary) {
        let plan_id = run.plan_id().to_string();
        assert!(
            out.join(format!("{plan_id}.json")).is_file(),
            "{plan_id} of {:?}",
            run.id()
        );
        *runs_per_plan.entry(plan_id.clone()).or_default() += 1;
        let plan = &plans[&plan_id];
        let v = view(&run);
        // A run's step outputs follow its plan's steps.
        let expected: Vec<&str> = plan
            .steps
            .iter()
            .map(|s| s.output.as_str())
            .take(v.outputs.len())
            .collect();
        let names: Vec<&str> = v.outputs.iter().map(|(k, _)| *k).collect();
        assert_eq!(names, expected, "{:?}", run.id());
        // Its plan_run_inputs name the plan's inputs.
        if let Some(inputs) = v.plan_run_inputs {
            let plan_inputs: Vec<String> = match (&plan.inputs, &plan.plan_inputs) {
                (Some(old), _) => old.iter().map(|i| i.name.clone()).collect(),
                (_, Some(new)) => new.iter().map(|i| i.name.clone()).collect(),
                _ => panic!("an {version} run whose plan has no inputs key"),
            };
            let keys: Vec<String> = inputs.keys().cloned().collect();
            assert_eq!(keys, plan_inputs);
        }
        if let Some(user) = v.end_user_id {
            assert!(version >= R4);
            if !out.join(format!("{user}.json")).is_file() {
                missing_users += 1;
            }
        }
        for output in v
            .outputs
            .iter()
            .map(|(_, o)| o)
            .chain(v.final_output.as_ref())
        {
            if let Output::AgentMemory(memory) = output {
                assert!(version >= R2);
                assert_eq!(Some(memory.plan_run_id), run.id());
                let path = PathBuf::from(memory.plan_run_id.to_string())
                    .join(format!("{}.json", memory.output_name));
                assert!(memory_files.contains(&path), "{}", path.display());
                let parsed = parse(&std::fs::read(out.join(&path)).unwrap()).unwrap();
                let LegacyDocument::Output(Output::Local(value)) = parsed.document else {
                    panic!("{} is not a LocalDataValue", path.display())
                };
                assert_eq!(memory.summary, value.summary.unwrap_or_default());
                referenced.insert(path);
            }
        }
    }
    assert_eq!(missing_users, summary.runs_without_end_user_file);
    assert!(missing_users > 0, "some R4+ runs have no end-user file");
    assert_eq!(
        referenced, memory_files,
        "every agent-memory file is referenced"
    );
    assert!(!memory_files.is_empty());
    assert_eq!(plans.len(), summary.plans);
    assert!(
        runs_per_plan.values().any(|n| *n >= 3),
        "several runs share a plan"
    );
    assert!(
        plans.len() < summary.runs * 3 / 4,
        "{} plans for {} runs",
        plans.len(),
        summary.runs
    );
}

// ---------------------------------------------------------------------------------------------
// (4) The mix
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct Seen {
    categories: BTreeMap<Version, BTreeSet<&'static str>>,
    summary_null: bool,
    summary_empty: bool,
    agent_memory: BTreeSet<Version>,
    plan_run_inputs: BTreeSet<Version>,
    ec_user_null: bool,
    ec_user_set: bool,
    shapes: BTreeSet<&'static str>,
}

fn shape(value: &str) -> Option<&'static str> {
    Some(match value {
        "" => "empty",
        "true" | "false" => "bool",
        "NaN" => "nan",
        v if v.parse::<i64>().is_ok() => "int",
        v if v.len() > 19 && v.bytes().all(|b| b.is_ascii_digit()) => "big int",
        v if v.parse::<f64>().is_ok() => "float",
        v if v.starts_with('{') && v.contains("\": ") => "python json dict",
        v if v.starts_with('{') && v.contains("\":") => "compact model",
        v if v.starts_with('[') => "python json list",
        v if v.len() == 10 && v.as_bytes()[4] == b'-' => "date",
        v if v.len() == 25 && v.as_bytes()[10] == b'T' => "datetime",
        v if !v.is_ascii() => "unicode",
        v if v.contains('\t') && v.contains('\n') => "table",
        _ => return None,
    })
}

fn check_mix(seed: u64) {
    let (_dir, out, summary) = generated(&opts(400, seed));
    let mut seen = Seen::default();
    let runs = runs(&out, &summary);
    for (version, _, run) in &runs {
        let v = view(run);
        for clar in v.clarifications {
            seen.categories
                .entry(*version)
                .or_default()
                .insert(clar.category.as_str());
            assert_eq!(
                clar.fields.contains_key("require_confirmation"),
                clar.category == Category::Action && *version >= R4
            );
            assert!(clar.source.is_none() || *version == R6);
        }
        for output in v
            .outputs
            .iter()
            .map(|(_, o)| o)
            .chain(v.final_output.as_ref())
        {
            match output {
                Output::Local(local) => {
                    seen.summary_null |= local.summary.is_none();
                    seen.summary_empty |= local.summary.as_deref() == Some("");
                    seen.shapes.extend(shape(&local.value));
                }
                Output::AgentMemory(_) => {
                    seen.agent_memory.insert(*version);
                }
            }
        }
        if v.plan_run_inputs.is_some_and(|i| !i.is_empty()) {
            seen.plan_run_inputs.insert(*version);
        }
        match v.ec_end_user {
            Some(None) => seen.ec_user_null = true,
            Some(Some(_)) => seen.ec_user_set = true,
            None => {}
        }
    }
    for version in Version::ALL {
        assert_eq!(
            seen.categories.get(&version).cloned().unwrap_or_default(),
            allowed_categories(version),
            "seed {seed}: clarification categories of {version}"
        );
    }
    assert!(seen.summary_null && seen.summary_empty, "seed {seed}");
    assert!(
        !seen.agent_memory.is_empty() && seen.agent_memory.iter().all(|v| *v >= R2),
        "seed {seed}: agent memory in {:?}",
        seen.agent_memory
    );
    assert_eq!(
        seen.plan_run_inputs,
        [R5, R6].into_iter().collect(),
        "seed {seed}: plan_run_inputs"
    );
    assert!(seen.ec_user_null && seen.ec_user_set, "seed {seed}");
    for shape in [
        "empty",
        "bool",
        "int",
        "float",
        "python json dict",
        "compact model",
        "python json list",
        "date",
        "datetime",
        "unicode",
        "table",
    ] {
        assert!(seen.shapes.contains(shape), "seed {seed}: no {shape} value");
    }

    // Plans of every era: W1-era Variable.value, v0.3.2 `inputs`, v0.3.4 `plan_inputs`.
    let mut plan_shapes = BTreeSet::new();
    for file in summary.manifest.iter().filter(|f| f.kind == FileKind::Plan) {
        let text = std::fs::read_to_string(out.join(&file.path)).unwrap();
        let tree: serde_json::Value = serde_json::from_str(&text).unwrap();
        let variables_with_value = tree["steps"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["inputs"].as_array().unwrap())
            .any(|v| v.get("value").is_some());
        if variables_with_value {
            plan_shapes.insert(format!("value {}", file.version <= R1));
        }
        if tree
            .get("inputs")
            .is_some_and(|i| !i.as_array().unwrap().is_empty())
        {
            plan_shapes.insert(format!("inputs {}", file.version));
        }
        if tree
            .get("plan_inputs")
            .is_some_and(|i| !i.as_array().unwrap().is_empty())
        {
            plan_shapes.insert(format!("plan_inputs {}", file.version));
        }
    }
    assert_eq!(
        plan_shapes,
        ["value true", "inputs R5", "plan_inputs R6"]
            .into_iter()
            .map(str::to_owned)
            .collect(),
        "seed {seed}"
    );

    // End users: some written by R6 with a null additional_data value.
    assert!(summary.end_users > 1);
    // The SDK's default end user, as `Portia.initialize_end_user` names it (v0.3.0 to HEAD).
    assert!(out.join("portia:default_user.json").is_file());

    // Sizes: about 4 KB per run on average, with a tail of large runs.
    let run_bytes: u64 = runs.iter().map(|(_, b, _)| *b).sum();
    assert_eq!(run_bytes, summary.run_bytes);
    let average = run_bytes / runs.len() as u64;
    assert!(
        (2_000..=8_000).contains(&average),
        "seed {seed}: average run file {average} bytes"
    );
    assert_eq!(summary.large_runs, 10);
    let large = runs.iter().filter(|(_, b, _)| *b > 16_000).count();
    assert!(large >= 10, "seed {seed}: {large} runs over 16 KB");
    let large_versions: BTreeSet<Version> = runs
        .iter()
        .filter(|(_, b, _)| *b > 16_000)
        .map(|(v, _, _)| *v)
        .collect();
    assert!(
        large_versions.len() >= 4,
        "seed {seed}: large runs only in {large_versions:?}"
    );
}

#[test]
fn the_default_mix_covers_every_category_summary_form_output_shape_and_size() {
    for seed in [0, 1, 2] {
        check_mix(seed);
    }
}

// ---------------------------------------------------------------------------------------------
// (5) The CLI
// ---------------------------------------------------------------------------------------------

fn planrun(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_planrun"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_cli_writes_the_same_store_as_the_library_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("store");
    let out_str = out.to_str().unwrap();
    let run = planrun(&[
        "gen",
        "--runs",
        "50",
        "--seed",
        "7",
        "--versions",
        "W1,r3,R6",
        "--out",
        out_str,
        "--large-every",
        "10",
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stdout = String::from_utf8(run.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.contains("50 runs (W1 17, R3 17, R6 16)"), "{stdout}");
    assert!(stdout.contains("5 large runs"), "{stdout}");

    let (_lib_dir, lib_out, summary) = generated(&GenOptions {
        runs: 50,
        seed: 7,
        versions: vec![W1, R3, R6],
        large_every: 10,
        history: false,
    });
    assert!(
        files(&out) == files(&lib_out),
        "CLI and library stores differ"
    );
    assert!(stdout.contains(&format!("{} files, {} bytes", summary.files, summary.bytes)));

    // Again into the same (now non-empty) directory: exit 2, nothing touched.
    let before = files(&out);
    let again = planrun(&["gen", "--runs", "5", "--out", out_str]);
    assert_eq!(again.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("not empty"), "{stderr}");
    assert!(files(&out) == before);

    // Quiet prints nothing; JSON prints the summary; all eight versions by default.
    let quiet_out = dir.path().join("quiet");
    let quiet = planrun(&[
        "gen",
        "--quiet",
        "--runs",
        "16",
        "--out",
        quiet_out.to_str().unwrap(),
    ]);
    assert!(quiet.status.success());
    assert!(quiet.stdout.is_empty());
    let json_out = dir.path().join("json");
    let json = planrun(&[
        "gen",
        "--format",
        "json",
        "--runs",
        "16",
        "--out",
        json_out.to_str().unwrap(),
    ]);
    assert!(json.status.success());
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["runs"], 16);
    assert_eq!(report["runs_per_version"].as_object().unwrap().len(), 8);
    assert_eq!(report["runs_per_version"]["R0"], 2);

    // A bad version is a usage error.
    let bad = planrun(&[
        "gen",
        "--runs",
        "1",
        "--versions",
        "R9",
        "--out",
        dir.path().join("bad").to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("R9"));
    assert!(!dir.path().join("bad").exists());
}

/// `--history`: one directory that the releases of the mix wrote into in turn. A plan a later
/// release saved again holds what that release writes (`condition: null`, `inputs: []` or
/// `plan_inputs: []`, no `Variable.value`, sorted tools) and is detected as that release's; a
/// run of a release before v0.3.0 may have no plan file (the SDK saved the run of a hand-built
/// plan, not the plan); only W1/R0 plans repeat an output (0.1.6 added the check), and no
/// release saves those again.
#[test]
fn a_history_store_holds_what_successive_releases_leave() {
    let history = GenOptions {
        history: true,
        ..opts(600, 21)
    };
    let (_dir, out, summary) = generated(&history);
    assert!(summary.plans_saved_again > 0, "{summary:?}");
    assert!(summary.plans_never_saved > 0, "{summary:?}");
    assert!(summary.runs_without_plan_file >= summary.plans_never_saved);
    assert!(summary.plans_repeating_an_output > 0, "{summary:?}");

    let mut repeating = 0;
    for file in summary.manifest.iter().filter(|f| f.kind == FileKind::Plan) {
        let bytes = std::fs::read(out.join(&file.path)).unwrap();
        let parsed = parse(&bytes).unwrap();
        assert!(
            parsed.detection.versions.contains(file.version),
            "{}: written by {} but detected as {}",
            file.path.display(),
            file.version,
            parsed.detection.versions
        );
        let LegacyDocument::Plan(plan) = &parsed.document else {
            panic!("{}: not a plan", file.path.display())
        };
        let outputs: BTreeSet<&str> = plan.steps.iter().map(|s| s.output.as_str()).collect();
        if outputs.len() < plan.steps.len() {
            repeating += 1;
            assert!(file.version <= R0, "{}", file.path.display());
        }
        // A plan written from v0.1.12 on (by its own release or saved again by a later one) is
        // what that release's save of it gives: saving it again changes nothing.
        if file.version >= R2 {
            let again = planrun_legacy::sdk::plan_as_saved(&bytes, file.version).unwrap();
            assert_eq!(
                planrun_wire::json::to_sdk_json(&again).as_bytes(),
                &bytes[..],
                "{}",
                file.path.display()
            );
        }
    }
    assert_eq!(repeating, summary.plans_repeating_an_output);

    let plan_files: BTreeSet<String> = summary
        .manifest
        .iter()
        .filter(|f| f.kind == FileKind::Plan)
        .map(|f| f.path.to_string_lossy().into_owned())
        .collect();
    let mut without = 0;
    for (version, _, run) in runs(&out, &summary) {
        if !plan_files.contains(&format!("{}.json", run.plan_id())) {
            without += 1;
            assert!(version <= R3, "a {version} run without a plan file");
        }
    }
    assert_eq!(without, summary.runs_without_plan_file);
}
