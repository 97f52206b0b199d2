//! The committed schemas (`schemas/` at the repository root) are exactly what the code generates:
//! the same files, the same bytes, and no file that is no longer published.

use std::path::Path;

use planrun_schemas::{all, file_text, LEGACY_DIR, V2_DIR};

const REGENERATE: &str = "cargo run -p planrun -- schema export --out schemas";

#[test]
fn committed_schemas_are_fresh() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
    let published = all();
    let mut problems = Vec::new();
    for (name, schema) in &published {
        match std::fs::read_to_string(dir.join(name)) {
            Ok(text) if text == file_text(schema) => {}
            Ok(_) => problems.push(format!("schemas/{name} differs from the generated schema")),
            Err(_) => problems.push(format!("schemas/{name} is missing")),
        }
    }
    for sub in [V2_DIR, LEGACY_DIR] {
        for entry in std::fs::read_dir(dir.join(sub)).into_iter().flatten() {
            let name = format!("{sub}/{}", entry.unwrap().file_name().to_string_lossy());
            if name.ends_with(".schema.json") && !published.iter().any(|(n, _)| *n == name) {
                problems.push(format!("schemas/{name} is no longer published"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "the committed schemas are stale:\n  {}\nregenerate them with `{REGENERATE}` (from the repository root)",
        problems.join("\n  ")
    );
}
