//! What the fuzz targets share: how one input holds several documents, an in-memory store for
//! the conversions that look documents up, and the checks of the laws that more than one target
//! asserts. Every check panics with what was broken, so libFuzzer keeps the input as a crash.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use planrun_converter::EntryKind;
use planrun_legacy::Parsed;
use planrun_store::{Doc, Failure, Listing, References, ResolvedConfig, RunResult, Store};
use planrun_v2::PlanRunV2;
use planrun_wire::json::{from_tree, parse_value};
use serde_json::Value;

/// The byte that separates the documents of one input. JSON text never holds a raw NUL, so a
/// seed made of real documents splits back into exactly those documents.
pub const SEPARATOR: u8 = 0;

/// The documents of an input: its bytes split at each [`SEPARATOR`].
pub fn split(data: &[u8]) -> Vec<&[u8]> {
    data.split(|b| *b == SEPARATOR).collect()
}

/// The SDK's default configuration, resolved once: the config every fuzzed conversion gets.
pub fn config() -> &'static ResolvedConfig {
    static CONFIG: OnceLock<ResolvedConfig> = OnceLock::new();
    CONFIG.get_or_init(|| ResolvedConfig::sdk_defaults().expect("the SDK defaults resolve"))
}

/// The name the run is read under: not shaped like a run file name, so no file name is checked
/// against the run's id.
pub const RUN_NAME: &str = "<run>";

/// A store of one run and the documents it may refer to, each answered whatever id is asked
/// for (the converter rejects a plan or end user that is not the run's).
#[derive(Debug, Default)]
pub struct MemStore {
    /// The run's entry name; [`RUN_NAME`] when empty. A residue is looked up only for a run
    /// named `<id>.json`.
    pub name: String,
    /// The run document.
    pub run: Vec<u8>,
    /// The plan.
    pub plan: Option<Vec<u8>>,
    /// The end user.
    pub end_user: Option<Vec<u8>>,
    /// The residue of a run of a HEAD store.
    pub residue: Option<Vec<u8>>,
    /// Agent-memory values by output name; `default_memory` answers for any other name.
    pub memory: HashMap<String, Vec<u8>>,
    /// The value of every agent-memory output not in `memory`.
    pub default_memory: Option<Vec<u8>>,
}

impl MemStore {
    /// A store of the documents of a split input: run, plan, end user, agent memory.
    pub fn of(parts: &[&[u8]]) -> Self {
        let part = |i: usize| parts.get(i).map(|p| p.to_vec());
        MemStore {
            name: String::new(),
            run: part(0).unwrap_or_default(),
            plan: part(1),
            end_user: part(2),
            residue: None,
            memory: HashMap::new(),
            default_memory: part(3),
        }
    }

    /// Converts the run as a batch does.
    pub fn convert(&self) -> RunResult {
        planrun_store::convert_entry(self, self.name(), config(), &References::default())
    }

    fn name(&self) -> &str {
        if self.name.is_empty() {
            RUN_NAME
        } else {
            &self.name
        }
    }
}

impl Store for MemStore {
    fn list(&self) -> io::Result<Listing> {
        Ok(Listing {
            runs: [self.name()].into_iter().collect(),
            ..Listing::default()
        })
    }

    fn read(&self, doc: Doc<'_>) -> Result<Option<Vec<u8>>, Failure> {
        Ok(match doc {
            Doc::Run(_) => Some(self.run.clone()),
            Doc::Plan(_) => self.plan.clone(),
            Doc::EndUser(_) => self.end_user.clone(),
            Doc::Residue(_) => self.residue.clone(),
            Doc::AgentMemory { output_name, .. } => self
                .memory
                .get(output_name)
                .or(self.default_memory.as_ref())
                .cloned(),
        })
    }

    fn locate(&self, relative: &Path) -> PathBuf {
        Path::new("mem").join(relative)
    }
}

/// A V2 run as the converter writes it: pretty JSON and one newline.
pub fn v2_text(run: &PlanRunV2) -> String {
    let mut text = serde_json::to_string_pretty(run).expect("V2 documents are JSON");
    text.push('\n');
    text
}

/// Reads V2 run bytes as the toolkit does (strict reader, then the published schema), panicking
/// with `what` if either refuses.
pub fn read_v2(bytes: &[u8], what: &str) -> PlanRunV2 {
    let tree =
        parse_value(bytes).unwrap_or_else(|e| panic!("{what}: not JSON the reader takes: {e}"));
    let run: PlanRunV2 =
        from_tree(bytes, &tree).unwrap_or_else(|e| panic!("{what}: the V2 reader refuses it: {e}"));
    let violations = planrun_schemas::validate::validate(&tree, "v2/PlanRunV2.schema.json")
        .expect("the V2 run schema exists");
    assert!(
        violations.is_empty(),
        "{what}: the V2 schema refuses what the V2 reader took: {violations:?}"
    );
    run
}

/// Asserts that a parsed legacy document re-emits to a fixpoint: its re-emission reads back
/// with nothing to normalise and the same bytes, and, when reading changed nothing, as the same
/// document (a secret read in clear is written masked, so it reads back otherwise).
pub fn assert_fixpoint(parsed: &Parsed, what: &str) -> String {
    let emitted = parsed.to_sdk_json();
    let again = planrun_legacy::parse(emitted.as_bytes())
        .unwrap_or_else(|e| panic!("{what}: its re-emission is refused: {e}\n{emitted}"));
    assert!(
        again.normalizations.is_empty(),
        "{what}: its re-emission still normalises: {:?}\n{emitted}",
        again.normalizations
    );
    assert_eq!(
        again.to_sdk_json(),
        emitted,
        "{what}: re-emission is not a fixpoint"
    );
    if parsed.normalizations.is_empty() {
        assert_eq!(
            again.document, parsed.document,
            "{what}: re-read to another document"
        );
    }
    emitted
}

/// Asserts that the legacy reader takes `bytes` exactly as written (nothing to normalise) and
/// returns the parse.
pub fn assert_exact_legacy(bytes: &[u8], what: &str) -> Parsed {
    let parsed = planrun_legacy::parse(bytes).unwrap_or_else(|e| {
        panic!(
            "{what}: the legacy reader refuses it: {e}\n{}",
            String::from_utf8_lossy(bytes)
        )
    });
    assert!(
        parsed.normalizations.is_empty(),
        "{what}: not in the SDK's form: {:?}\n{}",
        parsed.normalizations,
        String::from_utf8_lossy(bytes)
    );
    parsed
}

/// Asserts that no loss-report entry says a value was dropped without naming the value: a
/// dropped datum the report does not hold would be lost.
pub fn assert_drops_recorded(entries: &[planrun_converter::Entry], what: &str) {
    for entry in entries {
        if entry.kind == EntryKind::Dropped {
            assert!(
                entry.value.is_some(),
                "{what}: a dropped entry without its value: {entry:?}"
            );
        }
    }
}

/// Whether `tree` is JSON the toolkit's reader takes (no duplicate keys, NaN, …).
pub fn strict_tree(bytes: &[u8]) -> Option<Value> {
    parse_value(bytes).ok()
}

/// Asserts that two texts are equal, showing the first lines where they differ.
pub fn assert_same_text(got: &[u8], want: &[u8], what: &str) {
    if got == want {
        return;
    }
    let (got, want) = (String::from_utf8_lossy(got), String::from_utf8_lossy(want));
    let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
    let at = g.iter().zip(&w).take_while(|(a, b)| a == b).count();
    let from = at.saturating_sub(3);
    panic!(
        "{what}: differs from line {}\n--- got\n{}\n--- want\n{}",
        at + 1,
        g[from..g.len().min(at + 4)].join("\n"),
        w[from..w.len().min(at + 4)].join("\n")
    );
}
