//! Law 3 (total and located): no bytes make `parse` or `detect` panic, and every error they
//! return says what is wrong. Proven on deterministic mutations of every document of the real
//! corpus (bytes flipped, files cut short, `"`, `{`, `]`, `,`, `NaN`, `-Infinity`, `\u0000`, a
//! raw NUL and a 4000-deep `[[[[…` run inserted):
//!
//! * neither function panics (each call runs under `catch_unwind`; the report names the file and
//!   the mutation);
//! * every error has a non-empty message;
//! * when the mutation leaves text that is not JSON (serde_json is the oracle), both functions
//!   fail with the same error, of a JSON-level kind, at a line > 0 inside the text; a file cut
//!   short is reported as cut short at its end; `NaN` or a deep run where a value starts is named
//!   as such;
//! * when `parse` accepts a mutated file, `detect` agrees with it and the re-emission is a
//!   fixpoint (parsed again: accepted, no normalisation, the same bytes).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Instant;

use planrun_legacy::{detect, parse, ErrorKind, ParseError};

/// SplitMix64: a small, seeded, reproducible PRNG.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform-enough in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// FNV-1a, to seed each file's mutations from its path (stable across runs and platforms).
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .canonicalize()
        .expect("the corpus lives in ../shared/corpus beside the project")
}

/// Every JSON document of the corpus, sorted, except the manifests and the SDK's JSON Schemas.
fn corpus_documents(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            if name != "schemas" {
                corpus_documents(&path, out);
            }
        } else if name.ends_with(".json") && name != "manifest.json" {
            out.push(path);
        }
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    /// XOR one byte with `mask`.
    Flip { at: usize, mask: u8 },
    /// Keep only the first `len` bytes.
    Cut { len: usize },
    /// Insert `bytes` before offset `at`.
    Insert {
        at: usize,
        bytes: Vec<u8>,
        label: &'static str,
        /// `at` is where a value starts, so what the insertion breaks is known.
        at_value: bool,
    },
}

impl Mutation {
    fn apply(&self, src: &[u8]) -> Vec<u8> {
        match self {
            Mutation::Flip { at, mask } => {
                let mut out = src.to_vec();
                out[*at] ^= mask;
                out
            }
            Mutation::Cut { len } => src[..*len].to_vec(),
            Mutation::Insert { at, bytes, .. } => {
                let mut out = Vec::with_capacity(src.len() + bytes.len());
                out.extend_from_slice(&src[..*at]);
                out.extend_from_slice(bytes);
                out.extend_from_slice(&src[*at..]);
                out
            }
        }
    }

    fn describe(&self) -> String {
        match self {
            Mutation::Flip { at, mask } => format!("flip byte {at} with mask {mask:#04x}"),
            Mutation::Cut { len } => format!("cut to {len} bytes"),
            Mutation::Insert { at, label, .. } => format!("insert {label} at byte {at}"),
        }
    }
}

/// What gets inserted: JSON punctuation, non-finite numbers, NULs in both spellings, deep nesting.
fn insertions() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("`\"`", b"\"".to_vec()),
        ("`{`", b"{".to_vec()),
        ("`]`", b"]".to_vec()),
        ("`,`", b",".to_vec()),
        ("`NaN`", b"NaN".to_vec()),
        ("`-Infinity`", b"-Infinity".to_vec()),
        ("`\\u0000`", b"\\u0000".to_vec()),
        ("a raw NUL byte", vec![0]),
        ("4000 `[`", vec![b'['; 4000]),
    ]
}

/// Flips at 6 places, 6 cuts, each insertion at 2 places, and `NaN` and the deep run where the
/// first value starts: about 32 mutations a file.
fn mutations_of(rel: &str, src: &[u8]) -> Vec<Mutation> {
    let n = src.len();
    let mut rng = Rng::new(fnv1a(rel));
    let mut out = Vec::new();
    for _ in 0..6 {
        out.push(Mutation::Flip {
            at: rng.below(n),
            mask: 1 << rng.below(8),
        });
    }
    for len in [0, 1, n / 2, n - 1, rng.below(n), rng.below(n)] {
        out.push(Mutation::Cut { len });
    }
    for (label, bytes) in insertions() {
        for _ in 0..2 {
            out.push(Mutation::Insert {
                at: rng.below(n + 1),
                bytes: bytes.clone(),
                label,
                at_value: false,
            });
        }
    }
    if let Some(colon) = src.windows(3).position(|w| w == b"\": ") {
        for (label, bytes) in insertions() {
            if label == "`NaN`" || label == "4000 `[`" {
                out.push(Mutation::Insert {
                    at: colon + 3,
                    bytes,
                    label,
                    at_value: true,
                });
            }
        }
    }
    out
}

fn lines_in(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count() + 1
}

/// The 1-based line and byte column of the last byte (a newline ends its own line); `(1, 1)` for
/// no bytes. Where a file cut short must be reported.
fn last_byte_position(bytes: &[u8]) -> (usize, usize) {
    let Some(last) = bytes.len().checked_sub(1) else {
        return (1, 1);
    };
    let before = &bytes[..last];
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    (lines_in(before), last - line_start + 1)
}

/// What the oracle (serde_json itself) says about the mutated bytes.
fn is_json(bytes: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(bytes).is_ok()
}

/// The kinds that only the JSON reader produces, always with a position.
fn is_json_level(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::Syntax
            | ErrorKind::DuplicateKey
            | ErrorKind::NonFiniteNumber
            | ErrorKind::TooDeep
    )
}

fn check_error(err: &ParseError, bytes: &[u8], what: &str) -> Result<(), String> {
    if err.message.trim().is_empty() || err.to_string().trim().is_empty() {
        return Err(format!("{what}: an error with an empty message: {err:?}"));
    }
    if err.line > lines_in(bytes) {
        return Err(format!(
            "{what}: line {} is past the end of a {}-line text: {err}",
            err.line,
            lines_in(bytes)
        ));
    }
    if is_json_level(err.kind) && (err.line == 0 || err.column == 0) {
        return Err(format!(
            "{what}: a {} error without a position: {err}",
            err.kind.as_str()
        ));
    }
    Ok(())
}

/// Checks the law for one mutated text; `Err` describes the violation.
fn check(mutation: &Mutation, bytes: &[u8]) -> Result<Outcome, String> {
    let parsed = parse(bytes);
    let detected = detect(bytes);
    if let Err(err) = &parsed {
        check_error(err, bytes, "parse")?;
    }
    if let Err(err) = &detected {
        check_error(err, bytes, "detect")?;
    }
    if !is_json(bytes) {
        let err = match &parsed {
            Ok(p) => return Err(format!("not JSON, yet parsed as {}", p.detection)),
            Err(err) => err,
        };
        if detected.as_ref().err() != Some(err) {
            return Err(format!(
                "not JSON: parse says {err}, detect says {detected:?}"
            ));
        }
        if !is_json_level(err.kind) || err.line == 0 {
            return Err(format!(
                "a syntax break reported as {} at line {}: {err}",
                err.kind.as_str(),
                err.line
            ));
        }
        match mutation {
            Mutation::Cut { .. } => {
                if err.kind != ErrorKind::Syntax || !err.message.contains("cut short") {
                    return Err(format!("a cut file not reported as cut short: {err}"));
                }
                if (err.line, err.column) != last_byte_position(bytes) {
                    return Err(format!(
                        "a cut file reported at {}:{}, its last byte is at {:?}: {err}",
                        err.line,
                        err.column,
                        last_byte_position(bytes)
                    ));
                }
            }
            Mutation::Insert {
                label,
                at_value: true,
                ..
            } => {
                let want = if *label == "`NaN`" {
                    ErrorKind::NonFiniteNumber
                } else {
                    ErrorKind::TooDeep
                };
                if err.kind != want {
                    return Err(format!(
                        "{label} where a value starts reported as {}: {err}",
                        err.kind.as_str()
                    ));
                }
            }
            _ => {}
        }
        return Ok(Outcome::NotJson(err.kind));
    }
    match (&parsed, &detected) {
        (Ok(p), Ok(d)) if &p.detection == d => {}
        (Ok(p), other) => {
            return Err(format!(
                "parse detected {}, detect says {other:?}",
                p.detection
            ));
        }
        (Err(err), _) => return Ok(Outcome::Rejected(err.kind)),
    }
    let p = parsed.expect("matched Ok above");
    let emitted = p.to_sdk_json();
    let again = parse(emitted.as_bytes())
        .map_err(|e| format!("accepted, but its re-emission is rejected: {e}\n{emitted}"))?;
    if !again.normalizations.is_empty() || again.to_sdk_json() != emitted {
        return Err(format!(
            "accepted, but its re-emission is not a fixpoint: {:?}\n{emitted}",
            again.normalizations
        ));
    }
    Ok(Outcome::Accepted)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Outcome {
    NotJson(ErrorKind),
    Rejected(ErrorKind),
    Accepted,
}

impl Outcome {
    fn name(self) -> String {
        match self {
            Outcome::NotJson(kind) => format!("not JSON, {}", kind.as_str()),
            Outcome::Rejected(kind) => format!("JSON, rejected as {}", kind.as_str()),
            Outcome::Accepted => "accepted".to_owned(),
        }
    }
}

thread_local! {
    /// Set while this thread runs mutations under `catch_unwind`: panics are recorded, not printed.
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

#[test]
fn mutated_corpus_documents_never_panic_and_every_error_is_located() {
    let started = Instant::now();
    let root = corpus_root();
    let mut files = Vec::new();
    corpus_documents(&root, &mut files);
    assert!(
        files.len() > 300,
        "only {} corpus documents found under {}",
        files.len(),
        root.display()
    );

    // Panics under test are caught and reported below with the file and mutation; keep their
    // message and location instead of printing thousands of lines. Other panics print as usual.
    let default_hook = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if CATCHING.with(Cell::get) {
            LAST_PANIC.with(|last| *last.borrow_mut() = Some(info.to_string()));
        } else {
            default_hook(info);
        }
    }));

    let mut failures = Vec::new();
    let mut outcomes: HashMap<Outcome, usize> = HashMap::new();
    let mut total = 0;
    for path in &files {
        let rel = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let src = std::fs::read(path).unwrap();
        if src.is_empty() {
            continue;
        }
        for mutation in mutations_of(&rel, &src) {
            total += 1;
            let bytes = mutation.apply(&src);
            CATCHING.with(|c| c.set(true));
            let result = panic::catch_unwind(AssertUnwindSafe(|| check(&mutation, &bytes)));
            CATCHING.with(|c| c.set(false));
            match result {
                Ok(Ok(outcome)) => *outcomes.entry(outcome).or_default() += 1,
                Ok(Err(violation)) => {
                    failures.push(format!("{rel}, {}: {violation}", mutation.describe()));
                }
                Err(_) => {
                    let message = LAST_PANIC
                        .with(|last| last.borrow_mut().take())
                        .unwrap_or_default();
                    failures.push(format!("{rel}, {}: PANIC {message}", mutation.describe()));
                }
            }
        }
    }

    let mut summary: Vec<String> = outcomes
        .iter()
        .map(|(o, n)| format!("{n} {}", o.name()))
        .collect();
    summary.sort();
    eprintln!(
        "{total} mutations of {} documents in {:.2?}: {}",
        files.len(),
        started.elapsed(),
        summary.join(", ")
    );
    assert!(
        failures.is_empty(),
        "{} of {total} mutations broke the law:\n{}",
        failures.len(),
        failures
            .iter()
            .take(30)
            .map(|f| f.chars().take(600).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The oracle split must be real: most mutations break the syntax, some leave valid JSON.
    let not_json: usize = outcomes
        .iter()
        .filter(|(o, _)| matches!(o, Outcome::NotJson(_)))
        .map(|(_, n)| n)
        .sum();
    assert!(
        not_json > total / 2 && not_json < total,
        "{not_json} of {total} mutations were not JSON"
    );
    for kind in [
        ErrorKind::Syntax,
        ErrorKind::NonFiniteNumber,
        ErrorKind::TooDeep,
    ] {
        assert!(
            outcomes.contains_key(&Outcome::NotJson(kind)),
            "no mutation produced a {} error",
            kind.as_str()
        );
    }
}

/// The two shapes where serde_json stops on a newline (it then says "column 0"): the error is
/// reported at the newline's own line and 1-based column, never at column 0.
#[test]
fn errors_that_stop_on_a_newline_point_at_it() {
    for (text, line, column, kind) in [
        // A string whose closing quote was lost runs into the end of its line.
        ("{\n    \"summary\": \"abc\n}", 2, 20, ErrorKind::Syntax),
        // A file cut right after a newline.
        ("{\n    \"value\": 1,\n", 2, 16, ErrorKind::Syntax),
        ("{\n", 1, 2, ErrorKind::Syntax),
        ("", 1, 1, ErrorKind::Syntax),
    ] {
        let err = parse(text.as_bytes()).expect_err(text);
        assert_eq!(
            (err.kind, err.line, err.column),
            (kind, line, column),
            "{text:?}: {err}"
        );
        assert_eq!(detect(text.as_bytes()).unwrap_err(), err, "{text:?}");
        assert!(
            err.to_string().starts_with(&format!("{line}:{column}: ")),
            "{err}"
        );
    }
}
