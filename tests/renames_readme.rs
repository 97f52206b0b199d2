//! The rename table of docs/formats.md is the table the chain runs on, printed by `planrun renames`.

use std::process::Command;

#[test]
fn the_formats_guide_table_is_generated_from_the_rename_table() {
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/formats.md"))
        .unwrap();
    let start = guide
        .find("<!-- renames:start -->\n")
        .expect("docs/formats.md has the renames markers")
        + 23;
    let end = guide.find("<!-- renames:end -->").unwrap();
    assert_eq!(
        &guide[start..end],
        planrun_converter::renames::markdown(),
        "docs/formats.md's rename table is stale: replace it with the output of `cargo run -p planrun -- renames --markdown`"
    );
}

#[test]
fn planrun_renames_prints_every_row_in_every_format() {
    let bin = env!("CARGO_BIN_EXE_planrun");
    let text = Command::new(bin).arg("renames").output().unwrap();
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    let json = Command::new(bin)
        .args(["renames", "--format", "json"])
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let markdown = Command::new(bin)
        .args(["renames", "--markdown"])
        .output()
        .unwrap();
    let markdown = String::from_utf8(markdown.stdout).unwrap();
    assert_eq!(
        rows.as_array().unwrap().len(),
        planrun_converter::renames::TABLE.len()
    );
    for row in planrun_converter::renames::TABLE {
        assert!(text.contains(row.id), "{} missing from text", row.id);
        assert!(
            markdown.contains(&format!("`{}`", row.id)),
            "{} missing from markdown",
            row.id
        );
    }
    for id in [
        "w1.workflow_id",
        "r0.id_prefix",
        "r3.end_user_id",
        "v2.step_outputs",
        "plan.inputs",
        "v2.current_step_id",
    ] {
        assert!(
            rows.as_array().unwrap().iter().any(|r| r["id"] == id),
            "{id}"
        );
    }
}
