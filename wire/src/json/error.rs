//! Typed parse errors that carry everything a user needs to find the problem: the file (when the
//! caller knows it), a JSON pointer, the line and column, and what was expected.

use std::fmt;
use std::path::PathBuf;

/// What went wrong, coarse enough to count in a batch report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The bytes are not JSON (or are cut short).
    Syntax,
    /// JSON, but a value of the wrong type, a missing or unknown key, or a bad id.
    Data,
    /// The same key appears twice in one object; the SDK would silently keep the last one.
    DuplicateKey,
    /// `NaN`/`Infinity`: Python's `json` writes them, JSON does not allow them.
    NonFiniteNumber,
    /// Nesting deeper than the parser's limit.
    TooDeep,
    /// Valid JSON, but no legacy document shape matches it.
    Unrecognised,
}

impl ErrorKind {
    /// A short stable name for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "syntax",
            ErrorKind::Data => "data",
            ErrorKind::DuplicateKey => "duplicate_key",
            ErrorKind::NonFiniteNumber => "non_finite_number",
            ErrorKind::TooDeep => "too_deep",
            ErrorKind::Unrecognised => "unrecognised",
        }
    }
}

/// A document could not be read as a legacy Portia document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ParseError {
    /// The file the bytes came from, when the caller said so (see [`ParseError::in_file`]).
    pub path: Option<PathBuf>,
    /// RFC 6901 pointer to the offending value (`""` is the whole document).
    pub pointer: String,
    /// 1-based line of the offending value, 0 when the position is unknown.
    pub line: usize,
    /// 1-based byte column of the offending value, 0 when the position is unknown.
    pub column: usize,
    /// The class of problem.
    pub kind: ErrorKind,
    /// What was found and what was expected.
    pub message: String,
}

impl ParseError {
    /// Attaches the file the document was read from.
    pub fn in_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }
}

/// Pointers into deeply nested documents are shortened so one error never prints kilobytes.
const MAX_POINTER_CHARS: usize = 200;

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = &self.path {
            write!(f, "{}:", path.display())?;
        }
        if self.line > 0 {
            write!(f, "{}:{}: ", self.line, self.column)?;
        } else if self.path.is_some() {
            f.write_str(" ")?;
        }
        let pointer = if self.pointer.is_empty() {
            "(document root)"
        } else {
            &self.pointer
        };
        if pointer.chars().count() > MAX_POINTER_CHARS {
            let head: String = pointer.chars().take(MAX_POINTER_CHARS).collect();
            write!(f, "at {head}… : {}", self.message)
        } else {
            write!(f, "at {pointer}: {}", self.message)
        }
    }
}

/// Shortens a value quoted in an error message so a 100 MB string never ends up in a report.
pub fn excerpt(text: &str) -> String {
    const MAX: usize = 80;
    if text.chars().count() <= MAX {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(MAX).collect();
        format!("{head:?}… ({} bytes)", text.len())
    }
}
