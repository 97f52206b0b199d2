//! Every published JSON Schema (draft 2020-12), legacy and V2, under one set of stable names:
//! `v2/<Type>.schema.json` (from `planrun_v2::schemas`) and `legacy/<kind>.schema.json` or
//! `legacy/run.<version>.schema.json` (from `planrun_legacy::schemas`). The committed copies live
//! in the repository's `schemas/` directory; regenerate them with
//! `cargo run -p planrun -- schema export --out schemas`.

use std::io;
use std::path::Path;

use serde_json::Value;

/// The directory of the V2 schemas, relative to an export directory.
pub const V2_DIR: &str = "v2";
/// The directory of the legacy schemas, relative to an export directory.
pub const LEGACY_DIR: &str = "legacy";

/// Every published schema as `(relative file name, schema)`: the V2 ones first, then the legacy
/// ones, each in its crate's order.
pub fn all() -> Vec<(String, Value)> {
    let v2 = planrun_v2::schemas()
        .into_iter()
        .map(|(file, schema)| (format!("{V2_DIR}/{file}"), schema));
    let legacy = planrun_legacy::schemas()
        .into_iter()
        .map(|(file, schema)| (format!("{LEGACY_DIR}/{file}"), schema));
    v2.chain(legacy).collect()
}

/// The names of every published schema, in the order of [`all`].
pub fn names() -> Vec<String> {
    all().into_iter().map(|(name, _)| name).collect()
}

/// The text a schema file holds: pretty-printed JSON with a trailing newline.
pub fn file_text(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).expect("schemas are JSON");
    text.push('\n');
    text
}

/// Writes every schema under `dir` (`dir/v2/…`, `dir/legacy/…`), each file replaced atomically
/// (written beside it, then renamed). A `*.schema.json` file in those two directories that is no
/// longer published is removed, so the directory holds exactly [`all`].
pub fn write_all(dir: &Path) -> io::Result<()> {
    let schemas = all();
    for sub in [V2_DIR, LEGACY_DIR] {
        let sub_dir = dir.join(sub);
        std::fs::create_dir_all(&sub_dir)?;
        for entry in std::fs::read_dir(&sub_dir)? {
            let entry = entry?;
            let name = format!("{sub}/{}", entry.file_name().to_string_lossy());
            if name.ends_with(".schema.json")
                && entry.file_type()?.is_file()
                && !schemas.iter().any(|(published, _)| *published == name)
            {
                std::fs::remove_file(entry.path())?;
            }
        }
    }
    for (name, schema) in &schemas {
        let path = dir.join(name);
        let partial = path.with_extension("json.partial");
        std::fs::write(&partial, file_text(schema))?;
        std::fs::rename(&partial, &path)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_end_in_schema_json() {
        let names = names();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len());
        assert!(names.iter().all(|n| n.ends_with(".schema.json")));
        assert!(names.contains(&"v2/PlanRunV2.schema.json".to_owned()));
        assert!(names.contains(&"legacy/run.R4.schema.json".to_owned()));
    }

    #[test]
    fn write_all_writes_every_schema_and_removes_stale_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join(LEGACY_DIR)).unwrap();
        std::fs::write(dir.join("legacy/run.R9.schema.json"), "{}").unwrap();
        std::fs::write(dir.join("legacy/notes.txt"), "kept").unwrap();
        write_all(dir).unwrap();
        for (name, schema) in all() {
            let text = std::fs::read_to_string(dir.join(&name)).unwrap();
            assert_eq!(text, file_text(&schema), "{name}");
            assert!(text.ends_with("}\n"));
        }
        assert!(!dir.join("legacy/run.R9.schema.json").exists());
        assert!(dir.join("legacy/notes.txt").exists());
    }
}
