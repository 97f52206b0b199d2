//! Reading a legacy `DiskFileStorage` directory, and the one per-run conversion that both
//! `planrun convert` and `planrun migrate` use (law 5: a batch gives the same bytes as converting
//! each run alone, because both call [`convert_run`]).
//!
//! # The store
//!
//! A store is flat (wire-format spec §6.1): `plan-<uuid>.json` plans, `wkfl-…json` (W1),
//! `pr-…json` (R0) and `prun-…json` (R1+) runs, `<external_id>.json` end users (from v0.3.0) and
//! `<prun-id>/<output_name>.json` agent-memory values (from v0.1.12).
//!
//! * **Symlinks are never followed.** Every file is opened with `O_NOFOLLOW` (and the agent-memory
//!   directory is checked first); a run that is a symlink, or whose plan, end user or agent-memory
//!   file is one, is `rejected` with that reason.
//! * **Names built from data never leave their directory.** An end user's `external_id` and an
//!   agent-memory `output_name` name files; each must be a single normal path component (not
//!   empty, no `/`, `\`, NUL, not `.` or `..`), else the run is `rejected`.
//! * **A run file's name is its id.** The SDK finds a run by `<id>.json`, so a file whose run id is
//!   not its name is `rejected`; the check applies to files whose name looks like a run file
//!   (`wkfl-`/`pr-`/`prun-` … `.json`), so `planrun convert ./some-copy.json` still works.
//!
//! # The V2 file format
//!
//! A converted run is written as `serde_json::to_string_pretty(&PlanRunV2)` followed by one
//! `"\n"`: UTF-8, two-space indentation, keys in the order of the `PlanRunV2` struct, number text
//! kept exactly as read. A run that already is a `PlanRunV2` (`already_current`) is validated
//! (serde and the JSON Schema) and its bytes are kept exactly as they are.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::fs::OpenOptions;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use planrun_legacy::json::{from_tree, located, parse_value};
use planrun_legacy::{DocKind, ErrorKind, LegacyDocument, ParseError, Parsed};
use planrun_v2::PlanRunV2;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use planrun_converter::chain::to_r6_with_tree;
use planrun_converter::report::LossReport;
use planrun_converter::upgrade::{resolve_config, upgrade_at, ConvertError, Sources};

/// The file-name prefixes of runs: W1 `wkfl-`, R0 `pr-`, R1 and later `prun-`.
pub const RUN_PREFIXES: [&str; 3] = ["wkfl-", "pr-", "prun-"];

/// The schema every V2 run is checked against.
pub const PLAN_RUN_V2_SCHEMA: &str = "v2/PlanRunV2.schema.json";

/// Whether a file name is a run's (`wkfl-…json`, `pr-…json`, `prun-…json`).
pub fn is_run_file_name(name: &str) -> bool {
    name.ends_with(".json") && RUN_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The key two run files collide on: the part of the name after the run prefix. `wkfl-X.json`,
/// `pr-X.json` and `prun-X.json` all become the V2 run `prun-X`.
pub fn run_key(name: &str) -> Option<&str> {
    let stem = name.strip_suffix(".json")?;
    RUN_PREFIXES.iter().find_map(|p| stem.strip_prefix(p))
}

/// FNV-1a, 64 bits: the stable hash of shard assignment and of output checksums.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Why a name built from data cannot name a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnsafeName {
    /// `""`.
    #[error("it is empty")]
    Empty,
    /// `.` or `..`.
    #[error("it is a relative directory reference")]
    Dots,
    /// `/`, `\` or NUL.
    #[error("it holds a path separator or NUL")]
    Separator,
}

/// Accepts only a single normal path component: not empty, not `.`/`..`, no `/`, `\` or NUL.
pub fn safe_component(name: &str) -> Result<(), UnsafeName> {
    if name.is_empty() {
        Err(UnsafeName::Empty)
    } else if name == "." || name == ".." {
        Err(UnsafeName::Dots)
    } else if name.contains(['/', '\\', '\0']) {
        Err(UnsafeName::Separator)
    } else {
        Ok(())
    }
}

/// The configuration every run of a conversion gets: the user's `--config` over the SDK's
/// defaults, secrets redacted, with what resolving it did.
#[derive(Debug, Clone)]
pub struct ResolvedConfig {
    /// The V2 config written into every run.
    pub config: planrun_v2::Config,
    /// The report entries of resolving it; they open every run's loss report.
    pub report: LossReport,
}

/// A `--config` file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// It is not a legacy document.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// It is a legacy document, but not a Config.
    #[error("{}: not a Config but a {kind} document", path.display())]
    NotAConfig {
        /// The file.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// The config does not resolve.
    #[error("{}: {source}", path.display())]
    Resolve {
        /// The file.
        path: PathBuf,
        /// Why.
        source: ConvertError,
    },
}

impl ResolvedConfig {
    /// The SDK's defaults (no `--config`).
    pub fn sdk_defaults() -> Result<Self, ConfigError> {
        let (config, report) = resolve_config(None).map_err(|source| ConfigError::Resolve {
            path: PathBuf::from("(SDK defaults)"),
            source,
        })?;
        Ok(ResolvedConfig { config, report })
    }

    /// A legacy Config file over the SDK's defaults.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let bytes = std::fs::read(path).map_err(|source| ConfigError::Io {
            path: path.to_owned(),
            source,
        })?;
        let parsed = planrun_legacy::parse(&bytes).map_err(|e| e.in_file(path))?;
        let LegacyDocument::Config(user) = &parsed.document else {
            return Err(ConfigError::NotAConfig {
                path: path.to_owned(),
                kind: parsed.detection.kind.as_str(),
            });
        };
        let (config, report) =
            resolve_config(Some(user)).map_err(|source| ConfigError::Resolve {
                path: path.to_owned(),
                source,
            })?;
        Ok(ResolvedConfig { config, report })
    }

    /// A fingerprint of the config and its report: a resumed migration must use the same one.
    pub fn fingerprint(&self) -> String {
        let text = serde_json::to_string(&(&self.config, &self.report)).expect("config is JSON");
        format!("{:016x}", fnv1a64(text.as_bytes()))
    }
}

/// The outcome class of one run, in reports and journals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Converted; the loss report drops nothing.
    Converted,
    /// Converted; the loss report has at least one `dropped` entry.
    ConvertedWithLoss,
    /// Already a `PlanRunV2`: validated and kept byte for byte.
    AlreadyCurrent,
    /// Invalid input: the failure names the file, JSON pointer, line and column.
    Rejected,
    /// A reference cannot be resolved: the failure names the missing file.
    Blocked,
}

impl Class {
    /// Every class, in report order.
    pub const ALL: [Class; 5] = [
        Class::Converted,
        Class::ConvertedWithLoss,
        Class::AlreadyCurrent,
        Class::Rejected,
        Class::Blocked,
    ];

    /// The class's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Converted => "converted",
            Class::ConvertedWithLoss => "converted_with_loss",
            Class::AlreadyCurrent => "already_current",
            Class::Rejected => "rejected",
            Class::Blocked => "blocked",
        }
    }

    /// Whether the run has an output.
    pub fn is_success(self) -> bool {
        !matches!(self, Class::Rejected | Class::Blocked)
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a run has no output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// `rejected` or `blocked`.
    pub class: Class,
    /// The file at fault: the run, its plan, end user or agent-memory file, or (blocked) the file
    /// that is missing.
    pub file: PathBuf,
    /// JSON pointer into `file`, when the problem has a place in it.
    pub pointer: Option<String>,
    /// 1-based line in `file`; 0 when unknown.
    pub line: usize,
    /// 1-based byte column in `file`; 0 when unknown.
    pub column: usize,
    /// A short stable name for counting: the parse error kind (`syntax`, `data`, …) or `io`,
    /// `symlink`, `unsafe_name`, `id_mismatch`, `conflict`, `not_a_run`, `mismatch`, `schema`,
    /// `missing_plan`, `missing_agent_memory`.
    pub kind: String,
    /// What is wrong, in words.
    pub message: String,
}

impl Failure {
    fn new(class: Class, file: &Path, kind: &str, message: impl Into<String>) -> Self {
        Failure {
            class,
            file: file.to_owned(),
            pointer: None,
            line: 0,
            column: 0,
            kind: kind.to_owned(),
            message: message.into(),
        }
    }

    /// A rejection without a position.
    pub fn rejected(file: &Path, kind: &str, message: impl Into<String>) -> Self {
        Failure::new(Class::Rejected, file, kind, message)
    }

    fn parse(error: ParseError, file: &Path) -> Self {
        Failure {
            class: Class::Rejected,
            file: error.path.clone().unwrap_or_else(|| file.to_owned()),
            pointer: Some(error.pointer.clone()),
            line: error.line,
            column: error.column,
            kind: error.kind.as_str().to_owned(),
            message: error.message,
        }
    }

    fn io(error: &io::Error, file: &Path) -> Self {
        if error.raw_os_error() == Some(libc::ELOOP) {
            Failure::rejected(file, "symlink", "a symlink: symlinks are never followed")
        } else {
            Failure::rejected(file, "io", format!("cannot read: {error}"))
        }
    }
}

impl fmt::Display for Failure {
    /// `path:line:column: class (kind) at pointer: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        write!(f, ": {} ({})", self.class, self.kind)?;
        match self.pointer.as_deref() {
            Some("") => write!(f, " at (document root)")?,
            Some(pointer) => write!(f, " at {pointer}")?,
            None => {}
        }
        write!(f, ": {}", self.message)
    }
}

/// An agent-memory file a run refers to, to be copied next to its V2 document.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MemoryFile {
    /// `<prun-id>/<output_name>.json`, relative to the store (and to the destination).
    pub relative: PathBuf,
    /// The file in the store.
    pub source: PathBuf,
}

/// A run with an output.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutput {
    /// `converted`, `converted_with_loss` or `already_current`.
    pub class: Class,
    /// The V2 run id; the output is `<id>.json`.
    pub id: String,
    /// The V2 document, in the V2 file format (see the module docs).
    pub bytes: Vec<u8>,
    /// The loss report: the config's entries, then the run's (empty for `already_current`).
    pub report: LossReport,
    /// The agent-memory files the run refers to, sorted.
    pub agent_memory: Vec<MemoryFile>,
}

/// The result of converting one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunResult {
    /// The run file (or `<stdin>:LINE`).
    pub path: PathBuf,
    /// Size of the run document in bytes (0 when it could not be read).
    pub bytes_in: u64,
    /// The versions that could have written it (`R4`, `R1–R2`, `V2` for a current run), when
    /// the document could be read.
    pub source_version: Option<String>,
    /// The output, or why there is none.
    pub outcome: Result<RunOutput, Failure>,
}

impl RunResult {
    /// The run's outcome class.
    pub fn class(&self) -> Class {
        match &self.outcome {
            Ok(out) => out.class,
            Err(failure) => failure.class,
        }
    }
}

/// Converts the run file `run_path`, looking its plan, end user and agent memory up in
/// `store_dir`. Never fails as a function: an unreadable or invalid run is a `rejected` result.
pub fn convert_run(run_path: &Path, store_dir: &Path, config: &ResolvedConfig) -> RunResult {
    convert_run_cached(run_path, store_dir, config, &EndUsers::default())
}

/// [`convert_run`] for a batch: end-user files already read are taken from `end_users`.
pub fn convert_run_cached(
    run_path: &Path,
    store_dir: &Path,
    config: &ResolvedConfig,
    end_users: &EndUsers,
) -> RunResult {
    let bytes = match read_nofollow(run_path) {
        Ok(bytes) => bytes,
        Err(err) => {
            return RunResult {
                path: run_path.to_owned(),
                bytes_in: 0,
                source_version: None,
                outcome: Err(Failure::io(&err, run_path)),
            }
        }
    };
    let name = run_path.file_name().and_then(|n| n.to_str());
    convert_in(&bytes, run_path, name, Some((store_dir, end_users)), config)
}

/// End-user documents already read, by path: a store has far fewer end users than runs, and
/// reading one per run cost three system calls and a parse. Holds at most
/// [`EndUsers::CAPACITY`] documents (then starts over), so memory stays bounded.
#[derive(Debug, Default)]
pub struct EndUsers {
    read: Mutex<HashMap<PathBuf, Arc<Reference>>>,
}

/// A referenced document as read: `Ok(None)` when its file does not exist.
type Reference = Result<Option<Parsed>, Failure>;

impl EndUsers {
    /// The most end-user documents held.
    pub const CAPACITY: usize = 4096;

    fn get(&self, path: &Path) -> Arc<Reference> {
        let lock = || self.read.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(hit) = lock().get(path) {
            return Arc::clone(hit);
        }
        let read = Arc::new(read_reference(path, DocKind::EndUser, "end-user"));
        let mut cache = lock();
        if cache.len() >= Self::CAPACITY {
            cache.clear();
        }
        cache.insert(path.to_owned(), Arc::clone(&read));
        read
    }
}

/// Converts one run document held in memory. `origin` names it in failures; `file_name`, when
/// given and shaped like a run file name, must match the run's id; `store_dir` is where its plan,
/// end user and agent memory are (`None`: nowhere, so a legacy run is `blocked` on its plan).
pub fn convert_document(
    bytes: &[u8],
    origin: &Path,
    file_name: Option<&str>,
    store_dir: Option<&Path>,
    config: &ResolvedConfig,
) -> RunResult {
    let end_users = EndUsers::default();
    convert_in(
        bytes,
        origin,
        file_name,
        store_dir.map(|dir| (dir, &end_users)),
        config,
    )
}

fn convert_in(
    bytes: &[u8],
    origin: &Path,
    file_name: Option<&str>,
    store: Option<(&Path, &EndUsers)>,
    config: &ResolvedConfig,
) -> RunResult {
    let store_dir = store.map(|(dir, _)| dir);
    let mut result = RunResult {
        path: origin.to_owned(),
        bytes_in: bytes.len() as u64,
        source_version: None,
        outcome: Err(Failure::rejected(origin, "internal", "not converted")),
    };
    let name = file_name.filter(|n| is_run_file_name(n));
    match planrun_legacy::parse_keeping_tree(bytes) {
        Ok((parsed, tree)) => {
            result.source_version = Some(parsed.detection.versions.to_string());
            result.outcome = convert_legacy(&parsed, tree, origin, name, store, config);
        }
        Err(legacy_error) => match current(bytes, origin, name, store_dir) {
            Some(outcome) => {
                result.source_version = Some("V2".to_owned());
                result.outcome = outcome;
            }
            None => result.outcome = Err(Failure::parse(legacy_error, origin)),
        },
    }
    result
}

fn convert_legacy(
    parsed: &Parsed,
    tree: Option<Value>,
    origin: &Path,
    name: Option<&str>,
    store: Option<(&Path, &EndUsers)>,
    config: &ResolvedConfig,
) -> Result<RunOutput, Failure> {
    let store_dir = store.map(|(dir, _)| dir);
    let Some(run) = parsed.as_run() else {
        return Err(Failure::rejected(
            origin,
            "not_a_run",
            format!(
                "not a run but a {} document",
                parsed.detection.kind.as_str()
            ),
        ));
    };
    if let Some(name) = name {
        match run.id() {
            Some(id) if format!("{id}.json") == name => {}
            Some(id) => {
                return Err(Failure::rejected(
                    origin,
                    "id_mismatch",
                    format!("the file holds run {id}, but its name says {name}"),
                ))
            }
            None => {
                return Err(Failure::rejected(
                    origin,
                    "id_mismatch",
                    format!("the run has no id, but its file name says {name}"),
                ))
            }
        }
    }
    let plan_id = run.plan_id().to_string();
    let plan_doc = match store_dir {
        Some(dir) => read_reference(&dir.join(format!("{plan_id}.json")), DocKind::Plan, "plan")?,
        None => None,
    };
    let plan = plan_doc.as_ref().map(|p| match &p.document {
        LegacyDocument::Plan(plan) => plan,
        _ => unreachable!("read_reference checked the kind"),
    });

    let r6 = to_r6_with_tree(run, tree)
        .map_err(|e| Failure::rejected(origin, "internal", e.to_string()))?;
    let end_user_id = r6.run.end_user_id.clone();
    let user_doc = match store {
        Some((dir, end_users)) => {
            safe_component(&end_user_id).map_err(|why| {
                Failure::rejected(
                    origin,
                    "unsafe_name",
                    format!(
                        "the end-user id {end_user_id:?} cannot name a file in the store: {why}"
                    ),
                )
            })?;
            Some(end_users.get(&dir.join(format!("{end_user_id}.json"))))
        }
        None => None,
    };
    let end_user = match user_doc.as_deref() {
        Some(Err(failure)) => return Err(failure.clone()),
        Some(Ok(Some(parsed))) => match &parsed.document {
            LegacyDocument::EndUser(user) => Some(user),
            _ => unreachable!("read_reference checked the kind"),
        },
        Some(Ok(None)) | None => None,
    };

    let problem: RefCell<Option<Failure>> = RefCell::new(None);
    let found: RefCell<Vec<MemoryFile>> = RefCell::new(Vec::new());
    let exists = |run_id: &str, output_name: &str| -> bool {
        let dir = store_dir.expect("only called with a store");
        match memory_file(dir, origin, run_id, output_name) {
            Ok(Some(file)) => {
                found.borrow_mut().push(file);
                true
            }
            Ok(None) => false,
            Err(failure) => {
                problem.borrow_mut().get_or_insert(failure);
                true
            }
        }
    };
    let sources = Sources {
        run: parsed,
        plan,
        end_user,
        config: &config.config,
        agent_memory: store_dir.map(|_| &exists as &dyn Fn(&str, &str) -> bool),
    };
    let converted = upgrade_at(&sources, r6);
    if let Some(failure) = problem.into_inner() {
        return Err(failure);
    }
    let converted = converted.map_err(|err| match err {
        ConvertError::Blocked { what, missing } => {
            let file = store_dir.map_or_else(|| PathBuf::from(&missing), |d| d.join(&missing));
            let kind = if what == "plan" {
                "missing_plan"
            } else {
                "missing_agent_memory"
            };
            let why = if store_dir.is_none() {
                format!("{what} {missing} not found (no store to look in: give --store)")
            } else {
                format!("{what} {missing} not found")
            };
            Failure::new(Class::Blocked, &file, kind, why)
        }
        ConvertError::Rejected(message) => Failure::rejected(origin, "mismatch", message),
        ConvertError::Chain(e) => Failure::rejected(origin, "internal", e.to_string()),
    })?;
    let id = converted.run.id.clone();
    check_output_name(&id, name, origin)?;
    let mut report = config.report.clone();
    report.extend(converted.report);
    // Most documents fit the first buffer: growing one by doubling copied it six times.
    let mut text = Vec::with_capacity(16 * 1024);
    serde_json::to_writer_pretty(&mut text, &converted.run).expect("V2 runs are JSON");
    text.push(b'\n');
    let mut agent_memory = found.into_inner();
    agent_memory.sort();
    agent_memory.dedup();
    Ok(RunOutput {
        class: if report.has_loss() {
            Class::ConvertedWithLoss
        } else {
            Class::Converted
        },
        id,
        bytes: text,
        report,
        agent_memory,
    })
}

/// A document that is already a `PlanRunV2`: `None` when it does not have the V2 run shape (the
/// legacy parser's error then stands), else its validated outcome.
fn current(
    bytes: &[u8],
    origin: &Path,
    name: Option<&str>,
    store_dir: Option<&Path>,
) -> Option<Result<RunOutput, Failure>> {
    let tree = parse_value(bytes).ok()?;
    let schema = planrun_schemas::validate::v2_schema_for(&tree)?;
    if schema != PLAN_RUN_V2_SCHEMA {
        return None;
    }
    Some(validate_current(bytes, &tree, origin, name, store_dir))
}

fn validate_current(
    bytes: &[u8],
    tree: &Value,
    origin: &Path,
    name: Option<&str>,
    store_dir: Option<&Path>,
) -> Result<RunOutput, Failure> {
    let run: PlanRunV2 = from_tree(bytes, tree).map_err(|e| Failure::parse(e, origin))?;
    let violations =
        planrun_schemas::validate::validate(tree, PLAN_RUN_V2_SCHEMA).expect("the V2 run schema exists");
    if let Some(first) = violations.into_iter().next() {
        let error = located(bytes, first.pointer, ErrorKind::Data, first.message);
        let mut failure = Failure::parse(error, origin);
        failure.kind = "schema".to_owned();
        return Err(failure);
    }
    if let Some(name) = name {
        if format!("{}.json", run.id) != name {
            return Err(Failure::rejected(
                origin,
                "id_mismatch",
                format!("the file holds run {}, but its name says {name}", run.id),
            ));
        }
    }
    check_output_name(&run.id, name, origin)?;
    let mut agent_memory = Vec::new();
    if let Some(dir) = store_dir {
        let outputs = run
            .step_output_values
            .iter()
            .map(|v| &v.output)
            .chain(run.final_output.as_ref());
        for output in outputs {
            if let planrun_v2::Output::AgentMemory {
                output_name,
                plan_run_id,
                ..
            } = output
            {
                match memory_file(dir, origin, plan_run_id, output_name)? {
                    Some(file) => agent_memory.push(file),
                    None => {
                        let missing = format!("{plan_run_id}/{output_name}.json");
                        return Err(Failure::new(
                            Class::Blocked,
                            &dir.join(&missing),
                            "missing_agent_memory",
                            format!("agent-memory file {missing} not found"),
                        ));
                    }
                }
            }
        }
    }
    agent_memory.sort();
    agent_memory.dedup();
    Ok(RunOutput {
        class: Class::AlreadyCurrent,
        id: run.id,
        bytes: bytes.to_vec(),
        report: LossReport::default(),
        agent_memory,
    })
}

/// The output is named by the V2 id: it must be a safe file name and, for a store file, the name
/// the run file's own name maps to.
fn check_output_name(id: &str, name: Option<&str>, origin: &Path) -> Result<(), Failure> {
    safe_component(id).map_err(|why| {
        Failure::rejected(
            origin,
            "unsafe_name",
            format!("the run id {id:?} cannot name a file: {why}"),
        )
    })?;
    if let Some(key) = name.and_then(run_key) {
        if id != format!("prun-{key}") {
            return Err(Failure::rejected(
                origin,
                "id_mismatch",
                format!("the V2 run id {id} is not the one its file name maps to (prun-{key})"),
            ));
        }
    }
    Ok(())
}

/// Reads a referenced document (plan, end user): `Ok(None)` when the file does not exist.
fn read_reference(path: &Path, kind: DocKind, what: &str) -> Reference {
    let bytes = match read_nofollow(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => {
            let mut failure = Failure::io(&err, path);
            failure.message = format!("the {what} file: {}", failure.message);
            return Err(failure);
        }
    };
    let parsed = planrun_legacy::parse(&bytes).map_err(|e| Failure::parse(e, path))?;
    if parsed.detection.kind != kind {
        return Err(Failure::rejected(
            path,
            "mismatch",
            format!(
                "the {what} file holds a {} document, not a {}",
                parsed.detection.kind.as_str(),
                kind.as_str()
            ),
        ));
    }
    Ok(Some(parsed))
}

/// Checks the agent-memory file `<run_id>/<output_name>.json` of the store: `Ok(None)` when it
/// does not exist, a failure when a name is unsafe, a symlink is in the way or the file is not a
/// stored output.
fn memory_file(
    store_dir: &Path,
    origin: &Path,
    run_id: &str,
    output_name: &str,
) -> Result<Option<MemoryFile>, Failure> {
    for (what, name) in [("run id", run_id), ("output name", output_name)] {
        safe_component(name).map_err(|why| {
            Failure::rejected(
                origin,
                "unsafe_name",
                format!("the agent-memory {what} {name:?} cannot name a file in the store: {why}"),
            )
        })?;
    }
    let dir = store_dir.join(run_id);
    match std::fs::symlink_metadata(&dir) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(Failure::io(&err, &dir)),
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(Failure::rejected(
                &dir,
                "symlink",
                "the agent-memory directory is a symlink: symlinks are never followed",
            ))
        }
        Ok(meta) if !meta.is_dir() => return Ok(None),
        Ok(_) => {}
    }
    let relative = Path::new(run_id).join(format!("{output_name}.json"));
    let path = store_dir.join(&relative);
    let bytes = match read_nofollow(&path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(Failure::io(&err, &path)),
    };
    let parsed = planrun_legacy::parse(&bytes).map_err(|e| Failure::parse(e, &path))?;
    if parsed.detection.kind != DocKind::Output {
        return Err(Failure::rejected(
            &path,
            "mismatch",
            format!(
                "the agent-memory file holds a {} document, not a stored output",
                parsed.detection.kind.as_str()
            ),
        ));
    }
    Ok(Some(MemoryFile {
        relative,
        source: path,
    }))
}

/// Reads a regular file without following a symlink at its last component (`ELOOP` if it is
/// one) and without blocking on a FIFO.
pub fn read_nofollow(path: &Path) -> io::Result<Vec<u8>> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    // Sized by the one fstat above (File's own read_to_end would stat and seek again) and read
    // by Read's default read_to_end, which fills spare capacity without zeroing it first. The
    // extra byte lets the second read see the end; a file that grew meanwhile is still read whole.
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0) + 1);
    PlainRead(&file).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A reader with only `read`, so that `read_to_end` is `Read`'s default one.
struct PlainRead<'a>(&'a std::fs::File);

impl Read for PlainRead<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

/// The entries of a store directory, sorted by name (byte order), split into what a migration
/// reads: run files and everything else it does not convert.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// Names of run files (`wkfl-`/`pr-`/`prun-` … `.json`), whatever their file type: a symlink
    /// or directory of that name is a run that will be rejected, never skipped.
    pub runs: Vec<String>,
    /// Entries a migration does not read by itself, with why: symlinks, special files and
    /// non-UTF-8 names. Plans, end users and agent-memory directories are not listed.
    pub ignored: Vec<(PathBuf, String)>,
}

/// Lists a store directory (names only; no file is opened).
pub fn list_store(dir: &Path) -> io::Result<Listing> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        entries.push((entry.file_name(), entry.file_type()?));
    }
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut listing = Listing::default();
    for (name, kind) in entries {
        let Some(text) = name.to_str() else {
            listing
                .ignored
                .push((dir.join(&name), "the name is not UTF-8".to_owned()));
            continue;
        };
        if is_run_file_name(text) {
            listing.runs.push(text.to_owned());
        } else if kind.is_symlink() {
            listing.ignored.push((
                dir.join(&name),
                "a symlink: symlinks are never followed".to_owned(),
            ));
        } else if !kind.is_file() && !kind.is_dir() {
            listing
                .ignored
                .push((dir.join(&name), "not a regular file".to_owned()));
        }
    }
    Ok(listing)
}

/// For run file names sorted in byte order: the earlier name each one conflicts with, if any.
/// Two runs conflict when they map to the same V2 id (`wkfl-X.json` and `prun-X.json`); the name
/// that sorts first wins.
pub fn conflicts(sorted_runs: &[String]) -> Vec<Option<usize>> {
    let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    sorted_runs
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let key = run_key(name)?;
            match first.get(key) {
                Some(&winner) => Some(winner),
                None => {
                    first.insert(key, i);
                    None
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_single_normal_components_are_safe() {
        for ok in ["local", "user-123", "$big_report", "a.b", "...", "ünïcode"] {
            assert_eq!(safe_component(ok), Ok(()), "{ok}");
        }
        assert_eq!(safe_component(""), Err(UnsafeName::Empty));
        assert_eq!(safe_component("."), Err(UnsafeName::Dots));
        assert_eq!(safe_component(".."), Err(UnsafeName::Dots));
        for bad in ["../../etc/passwd", "a/b", "a\\b", "a\0b", "/abs"] {
            assert_eq!(safe_component(bad), Err(UnsafeName::Separator), "{bad:?}");
        }
    }

    #[test]
    fn run_names_map_to_one_key_and_the_first_name_wins() {
        assert!(is_run_file_name("wkfl-1.json"));
        assert!(is_run_file_name("pr-1.json"));
        assert!(!is_run_file_name("plan-1.json"));
        assert!(!is_run_file_name("prun-1.txt"));
        assert_eq!(run_key("wkfl-abc.json"), Some("abc"));
        assert_eq!(run_key("pr-abc.json"), Some("abc"));
        assert_eq!(run_key("prun-abc.json"), Some("abc"));
        let names: Vec<String> = ["pr-a.json", "prun-a.json", "prun-b.json", "wkfl-a.json"]
            .map(String::from)
            .to_vec();
        assert_eq!(conflicts(&names), vec![None, Some(0), None, Some(0)]);
    }

    #[test]
    fn end_users_are_read_once_and_failures_are_kept_too() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("ada.json");
        std::fs::write(
            &user,
            r#"{"external_id": "ada", "name": "", "email": "", "phone_number": "", "additional_data": {}}"#,
        )
        .unwrap();
        let broken = dir.path().join("bob.json");
        std::fs::write(&broken, "{").unwrap();
        let cache = EndUsers::default();
        let first = cache.get(&user);
        assert!(matches!(&*first, Ok(Some(_))), "{first:?}");
        std::fs::remove_file(&user).unwrap();
        assert!(Arc::ptr_eq(&first, &cache.get(&user)), "read again");
        assert!(matches!(&*cache.get(&broken), Err(f) if f.kind == "syntax"));
        assert!(matches!(
            &*cache.get(&dir.path().join("eve.json")),
            Ok(None)
        ));
    }

    #[test]
    fn fnv1a64_matches_the_reference_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
