//! What converting one run ends with: its outcome class, its output or the failure that names
//! the file, JSON pointer, line and column at fault.

use std::fmt;
use std::path::{Path, PathBuf};

use planrun_legacy::{ErrorKind, ParseError};
use serde::{Deserialize, Serialize};

use crate::loss::RunReport;
use crate::stamp::{Input, Seen};

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
    /// An input kept changing while it was read (a writer saving it meanwhile): nothing was
    /// written from the torn read, and the next pass picks the run up.
    InFlux,
}

impl Class {
    /// Every class, in report order.
    pub const ALL: [Class; 6] = [
        Class::Converted,
        Class::ConvertedWithLoss,
        Class::AlreadyCurrent,
        Class::Rejected,
        Class::Blocked,
        Class::InFlux,
    ];

    /// The class's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Converted => "converted",
            Class::ConvertedWithLoss => "converted_with_loss",
            Class::AlreadyCurrent => "already_current",
            Class::Rejected => "rejected",
            Class::Blocked => "blocked",
            Class::InFlux => "in_flux",
        }
    }

    /// Whether the run has an output.
    pub fn is_success(self) -> bool {
        !matches!(self, Class::Rejected | Class::Blocked | Class::InFlux)
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of problem a [`Failure`] is: a short stable name for counting, in reports and
/// journals (the snake-case names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The bytes are not JSON (or are cut short).
    Syntax,
    /// JSON, but a value of the wrong type, a missing or unknown key, or a bad id.
    Data,
    /// The same key twice in one object.
    DuplicateKey,
    /// `NaN` or `Infinity`.
    NonFiniteNumber,
    /// Nesting deeper than the parser's limit.
    TooDeep,
    /// Valid JSON of no legacy document shape.
    Unrecognised,
    /// The file could not be read.
    Io,
    /// The file is a symbolic link, which is never followed.
    Symlink,
    /// An id that cannot name a file in its directory.
    UnsafeName,
    /// The document's id is not the one its file name says.
    IdMismatch,
    /// Two runs would be written to the same output.
    Conflict,
    /// The document is not a run.
    NotARun,
    /// A run and a document it refers to do not belong together.
    Mismatch,
    /// The output does not satisfy the V2 schema.
    Schema,
    /// A run converted on its own, without its plan or a store to look in.
    MissingPlan,
    /// An agent-memory file the run refers to is missing.
    MissingAgentMemory,
    /// An input kept changing while it was read.
    InFlux,
    /// A bug in planrun.
    Internal,
}

impl FailureKind {
    /// The kind's name in reports and journals.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Syntax => "syntax",
            FailureKind::Data => "data",
            FailureKind::DuplicateKey => "duplicate_key",
            FailureKind::NonFiniteNumber => "non_finite_number",
            FailureKind::TooDeep => "too_deep",
            FailureKind::Unrecognised => "unrecognised",
            FailureKind::Io => "io",
            FailureKind::Symlink => "symlink",
            FailureKind::UnsafeName => "unsafe_name",
            FailureKind::IdMismatch => "id_mismatch",
            FailureKind::Conflict => "conflict",
            FailureKind::NotARun => "not_a_run",
            FailureKind::Mismatch => "mismatch",
            FailureKind::Schema => "schema",
            FailureKind::MissingPlan => "missing_plan",
            FailureKind::MissingAgentMemory => "missing_agent_memory",
            FailureKind::InFlux => "in_flux",
            FailureKind::Internal => "internal",
        }
    }
}

impl From<ErrorKind> for FailureKind {
    fn from(kind: ErrorKind) -> Self {
        match kind {
            ErrorKind::Syntax => FailureKind::Syntax,
            ErrorKind::Data => FailureKind::Data,
            ErrorKind::DuplicateKey => FailureKind::DuplicateKey,
            ErrorKind::NonFiniteNumber => FailureKind::NonFiniteNumber,
            ErrorKind::TooDeep => FailureKind::TooDeep,
            ErrorKind::Unrecognised => FailureKind::Unrecognised,
        }
    }
}

impl fmt::Display for FailureKind {
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
    /// What kind of problem it is.
    pub kind: FailureKind,
    /// What is wrong, in words.
    pub message: String,
}

impl Failure {
    /// A failure without a position.
    pub(crate) fn new(
        class: Class,
        file: &Path,
        kind: FailureKind,
        message: impl Into<String>,
    ) -> Self {
        Failure {
            class,
            file: file.to_owned(),
            pointer: None,
            line: 0,
            column: 0,
            kind,
            message: message.into(),
        }
    }

    /// A rejection without a position.
    pub fn rejected(file: &Path, kind: FailureKind, message: impl Into<String>) -> Self {
        Failure::new(Class::Rejected, file, kind, message)
    }

    /// A rejection at the place a parse error names (its own file, if it has one).
    pub(crate) fn parse(error: ParseError, file: &Path) -> Self {
        Failure {
            class: Class::Rejected,
            file: error.path.clone().unwrap_or_else(|| file.to_owned()),
            pointer: Some(error.pointer.clone()),
            line: error.line,
            column: error.column,
            kind: error.kind.into(),
            message: error.message,
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
    /// Where the store holds it, for reports ([`crate::Store::locate`]).
    pub source: PathBuf,
    /// The run id it is filed under.
    pub run_id: String,
    /// The output's name.
    pub output_name: String,
    /// Its bytes, as read and checked when the run was converted: what is copied is what was
    /// checked, and the file is read once.
    pub content: Vec<u8>,
    /// Its version when it was read, when the store gives stamps.
    pub seen: Option<Seen>,
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
    pub report: RunReport,
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
    /// The files of the store the conversion read (the run, its plan, end user and agent
    /// memory, found or not), with their stamps, when the store gives them.
    pub inputs: Vec<Input>,
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
