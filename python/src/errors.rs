//! The exceptions: `PlanrunError` and its subclasses `RejectedError` (invalid input, with the
//! file, JSON pointer, line, column and kind at fault) and `BlockedError` (a referenced file is
//! missing; `.path` names it). Their attributes are set on each instance, so they survive
//! pickling (a process pool sends them back to its caller).

use std::path::Path;

use planrun_legacy::ParseError;
use planrun_store::{Class, Failure};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

pyo3::create_exception!(
    planrun_migrate,
    PlanrunError,
    PyException,
    "The base class of every error planrun_migrate raises."
);
pyo3::create_exception!(
    planrun_migrate,
    RejectedError,
    PlanrunError,
    "Invalid input: the document (or its plan, end user or agent-memory file) cannot be \
     converted. `.path` is the file at fault, `.pointer` the JSON pointer into it (or None), \
     `.line` and `.column` its 1-based position (0 when unknown), `.kind` a short stable name \
     (`syntax`, `data`, `mismatch`, `id_mismatch`, `unsafe_name`, ...), `.message` what is \
     wrong and `.run` the run being converted."
);
pyo3::create_exception!(
    planrun_migrate,
    BlockedError,
    PlanrunError,
    "A file the run refers to is missing: `.path` names it (the plan, or an agent-memory \
     file), `.kind` is `missing_plan` or `missing_agent_memory`; the other attributes are \
     RejectedError's."
);

/// The exception a failed conversion raises: `BlockedError` or `RejectedError`, with the
/// failure's place. `run` is the run being converted.
pub(crate) fn failure_error(py: Python<'_>, run: &Path, failure: &Failure) -> PyErr {
    let text = if failure.file == run {
        failure.to_string()
    } else {
        format!("{}: {failure}", run.display())
    };
    let err = if failure.class == Class::Blocked {
        BlockedError::new_err(text)
    } else {
        RejectedError::new_err(text)
    };
    let place = Place {
        path: failure.file.to_string_lossy().into_owned(),
        pointer: failure.pointer.clone(),
        line: failure.line,
        column: failure.column,
        kind: failure.kind.as_str().to_owned(),
        message: failure.message.clone(),
        run: run.to_string_lossy().into_owned(),
    };
    place.attach(py, err)
}

/// A `RejectedError` for a document that does not parse; `origin` names it.
pub(crate) fn parse_error(py: Python<'_>, origin: &str, error: &ParseError) -> PyErr {
    let path = error
        .path
        .as_ref()
        .map_or_else(|| origin.to_owned(), |p| p.to_string_lossy().into_owned());
    let text = error.clone().in_file(&path).to_string();
    let place = Place {
        path,
        pointer: Some(error.pointer.clone()),
        line: error.line,
        column: error.column,
        kind: error.kind.as_str().to_owned(),
        message: error.message.clone(),
        run: origin.to_owned(),
    };
    place.attach(py, RejectedError::new_err(text))
}

/// A `RejectedError` without a position.
pub(crate) fn rejected(py: Python<'_>, origin: &str, kind: &str, message: String) -> PyErr {
    let place = Place {
        path: origin.to_owned(),
        pointer: None,
        line: 0,
        column: 0,
        kind: kind.to_owned(),
        message: message.clone(),
        run: origin.to_owned(),
    };
    place.attach(py, RejectedError::new_err(format!("{origin}: {message}")))
}

/// Where a problem is, as exception attributes.
struct Place {
    path: String,
    pointer: Option<String>,
    line: usize,
    column: usize,
    kind: String,
    message: String,
    run: String,
}

impl Place {
    fn attach(self, py: Python<'_>, err: PyErr) -> PyErr {
        let value = err.value(py);
        let set = || -> PyResult<()> {
            value.setattr("path", self.path)?;
            value.setattr("pointer", self.pointer)?;
            value.setattr("line", self.line)?;
            value.setattr("column", self.column)?;
            value.setattr("kind", self.kind)?;
            value.setattr("message", self.message)?;
            value.setattr("run", self.run)?;
            Ok(())
        };
        match set() {
            Ok(()) => err,
            Err(failed) => failed,
        }
    }
}
