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
