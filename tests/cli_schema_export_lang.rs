//! `planrun schema export --lang typescript|python` and `--from` end to end: a generator that is
//! not installed is a usage error (exit 2) saying how to install it, one that is runs on every
//! schema. The real generators run in the interop check (`interop/run`).

use std::path::Path;
use std::process::{Command, Output};

fn planrun(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_planrun"));
    command.args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("the planrun binary runs")
}

#[test]
fn a_missing_generator_exits_2_and_says_how_to_install_it() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().to_str().unwrap();
    let missing = Path::new("/nonexistent/planrun-test/generator");
    let ts = planrun(
        &["schema", "export", "--lang", "typescript", "--out", dir],
        &[("PLANRUN_JSON2TS", missing)],
    );
    assert_eq!(ts.status.code(), Some(2), "{ts:?}");
    let err = String::from_utf8(ts.stderr).unwrap();
    assert!(
        err.contains("npm install --global json-schema-to-typescript@16.0.0"),
        "{err}"
    );
    let py = planrun(
        &["schema", "export", "--lang", "python", "--out", dir],
        &[("PLANRUN_DATAMODEL_CODEGEN", missing)],
    );
    assert_eq!(py.status.code(), Some(2), "{py:?}");
    let err = String::from_utf8(py.stderr).unwrap();
    assert!(
        err.contains("pip install datamodel-code-generator==0.89.0"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn an_installed_generator_runs_once_per_schema_directory() {
    use std::os::unix::fs::PermissionsExt;
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("json2ts");
    // json2ts --input DIR/*.json --output OUT/ --unknownAny: one .d.ts per input.
    std::fs::write(
        &fake,
        "#!/bin/sh\nfor f in $2; do printf '/* eslint-disable */\\n' > \"$4$(basename \"$f\" .json).d.ts\"; done\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = tempfile::tempdir().unwrap();
    let result = planrun(
        &[
            "schema",
            "export",
            "--lang",
            "typescript",
            "--out",
            out.path().to_str().unwrap(),
        ],
        &[("PLANRUN_JSON2TS", &fake)],
    );
    assert_eq!(result.status.code(), Some(0), "{result:?}");
    let text = String::from_utf8(result.stdout).unwrap();
    let count = planrun_schemas::all().len();
    assert_eq!(
        text.trim_end(),
        format!(
            "wrote {count} TypeScript declaration files to {}",
            out.path().display()
        )
    );
    assert!(out.path().join("v2/PlanRunV2.d.ts").is_file());
    assert!(out.path().join("legacy/run_R4.d.ts").is_file());
}

#[test]
fn json_schema_export_from_a_directory_copies_its_schemas() {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/releases/0.1.0");
    let out = tempfile::tempdir().unwrap();
    let result = planrun(
        &[
            "schema",
            "export",
            "--from",
            from.to_str().unwrap(),
            "--out",
            out.path().to_str().unwrap(),
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(result.status.code(), Some(0), "{result:?}");
    let report: serde_json::Value = serde_json::from_slice(&result.stdout).unwrap();
    assert_eq!(report["lang"], "json-schema");
    let file = "v2/PlanRunV2.schema.json";
    assert!(report["files"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f == file));
    assert_eq!(
        std::fs::read_to_string(out.path().join(file)).unwrap(),
        std::fs::read_to_string(from.join(file)).unwrap()
    );
}
