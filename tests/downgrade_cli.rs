//! `planrun downgrade` writes a store the SDK at HEAD loads completely: the run, its plan, its
//! end user and its agent-memory files, each in HEAD's own form.

use std::path::Path;
use std::process::{Command, Output};

fn planrun(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_planrun"))
        .args(args)
        .output()
        .unwrap()
}

fn example_store_as_v2(dst: &Path) {
    let store = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/store");
    let out = planrun(&[
        "-q",
        "migrate",
        store.to_str().unwrap(),
        "--out",
        dst.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn agent_memory_files_come_along_byte_for_byte() {
    // Pins DiskFileStorage at HEAD: an AgentMemoryValue's full_value() reads
    // `<run id>/<output name>.json` beside the run, so a store without it cannot load the value.
    let tmp = tempfile::tempdir().unwrap();
    let v2 = tmp.path().join("v2");
    example_store_as_v2(&v2);
    let run = "prun-5d9a1f4c-6e7b-4c8d-8f9a-1b2c3d4e5f60";
    let head = tmp.path().join("head");
    let file = v2.join(format!("{run}.json"));
    let out = planrun(&[
        "-q",
        "downgrade",
        file.to_str().unwrap(),
        "--out-dir",
        head.to_str().unwrap(),
        "--allow-loss",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let memory = format!("{run}/$report.json");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/store");
    assert_eq!(
        std::fs::read(head.join(&memory)).unwrap(),
        std::fs::read(source.join(&memory)).unwrap()
    );
    for name in [
        format!("{run}.json"),
        "plan-2c8b5e30-4d6f-4a01-9c2d-3e4f5a6b7c82.json".to_owned(),
    ] {
        assert!(head.join(&name).is_file(), "{name}");
    }
    let plan = std::fs::read_to_string(head.join("plan-2c8b5e30-4d6f-4a01-9c2d-3e4f5a6b7c82.json"))
        .unwrap();
    // HEAD writes `plan_inputs` and every step's `condition`, even when the source had none.
    assert!(plan.contains("\"plan_inputs\": ["), "{plan}");
    assert!(
        !plan.contains("\"value\""),
        "Variable.value is not HEAD's: {plan}"
    );
}

#[test]
fn a_missing_agent_memory_file_blocks_the_downgrade() {
    let tmp = tempfile::tempdir().unwrap();
    let v2 = tmp.path().join("v2");
    example_store_as_v2(&v2);
    let run = "prun-5d9a1f4c-6e7b-4c8d-8f9a-1b2c3d4e5f60";
    std::fs::remove_file(v2.join(format!("{run}/$report.json"))).unwrap();
    let head = tmp.path().join("head");
    let file = v2.join(format!("{run}.json"));
    let out = planrun(&[
        "downgrade",
        file.to_str().unwrap(),
        "--out-dir",
        head.to_str().unwrap(),
        "--allow-loss",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("blocked") && stderr.contains("$report.json"),
        "{stderr}"
    );
    assert!(!head.exists() || std::fs::read_dir(&head).unwrap().next().is_none());
}

#[test]
fn a_refused_loss_names_the_option_that_allows_it() {
    let tmp = tempfile::tempdir().unwrap();
    let v2 = tmp.path().join("v2");
    example_store_as_v2(&v2);
    // The W1 workflow keeps its execution context in the V2 residue; R6 has no place for it.
    let file = v2.join("prun-3b7e9d2a-4c5f-4a6b-8d7e-9f0a1b2c3d4e.json");
    let head = tmp.path().join("head");
    let out = planrun(&[
        "downgrade",
        file.to_str().unwrap(),
        "--out-dir",
        head.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--allow-loss"), "{stderr}");
}

#[test]
fn a_v2_store_becomes_one_head_store_with_its_residue_beside_it() {
    let tmp = tempfile::tempdir().unwrap();
    let v2 = tmp.path().join("v2");
    example_store_as_v2(&v2);
    let head = tmp.path().join("head");
    let out = planrun(&[
        "-q",
        "downgrade",
        v2.to_str().unwrap(),
        "--out-dir",
        head.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Each run file is the one a single-file downgrade writes; so are plans and agent memory.
    let mut runs: Vec<String> = std::fs::read_dir(&v2)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter(|n| n.starts_with("prun-") && n.ends_with(".json"))
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 5);
    for run in &runs {
        let single = tmp.path().join(format!("single-{run}"));
        let out = planrun(&[
            "-q",
            "downgrade",
            v2.join(run).to_str().unwrap(),
            "--out-dir",
            single.to_str().unwrap(),
            "--allow-loss",
        ]);
        assert!(out.status.success(), "{run}");
        for entry in std::fs::read_dir(&single).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            // End users are merged across runs in a store; runs and plans are per run.
            if name.starts_with("prun-") || name.starts_with("plan-") {
                let path = entry.path();
                if path.is_file() {
                    let in_store = std::fs::read(head.join(&name)).unwrap();
                    assert_eq!(in_store, std::fs::read(&path).unwrap(), "{name}");
                } else {
                    for file in std::fs::read_dir(&path).unwrap() {
                        let file = file.unwrap().path();
                        let relative =
                            format!("{name}/{}", file.file_name().unwrap().to_string_lossy());
                        assert_eq!(
                            std::fs::read(head.join(&relative)).unwrap(),
                            std::fs::read(&file).unwrap(),
                            "{relative}"
                        );
                    }
                }
            }
        }
    }
    // The W1 workflow's execution context has no place at HEAD: it is in the residue, by value.
    let residue = head.join(".planrun/residue/prun-3b7e9d2a-4c5f-4a6b-8d7e-9f0a1b2c3d4e.json");
    let residue: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(residue).unwrap()).unwrap();
    assert!(
        residue["legacy"]["entries"]
            .as_object()
            .is_some_and(|d| d.keys().any(|k| k.contains("execution_context"))),
        "{residue}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(head.join(".planrun/report.json")).unwrap())
            .unwrap();
    assert_eq!(report["runs"], 5);
    let entries = report["reports"]["prun-3b7e9d2a-4c5f-4a6b-8d7e-9f0a1b2c3d4e"]["entries"]
        .as_array()
        .unwrap();
    assert!(
        entries.iter().all(|e| e["kind"] != "dropped"),
        "nothing is dropped when the residue keeps it: {entries:?}"
    );
    // A second downgrade into the same place is refused: it is not empty.
    let again = planrun(&[
        "downgrade",
        v2.to_str().unwrap(),
        "--out-dir",
        head.to_str().unwrap(),
    ]);
    assert_eq!(again.status.code(), Some(2));
}
