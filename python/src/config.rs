//! `Config`: the configuration every converted run gets (`--config` of the CLI), resolved once
//! and reused by any number of calls.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use planrun_converter::upgrade::resolve_config;
use planrun_legacy::LegacyDocument;
use planrun_store::ResolvedConfig;
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use pyo3::IntoPyObjectExt;

use crate::errors::{parse_error, rejected, PlanrunError};
use crate::{json_to_py, Data};

/// A resolved configuration: a legacy Config laid over the SDK's defaults, its secrets redacted
/// (what `--config FILE` gives the CLI). Build one with `Config()` (the SDK's defaults),
/// `Config.from_file(path)` or `Config.from_document(data)`, and pass it as `config=` to
/// `convert`, `convert_file` or `migrate`; a path there is read as `Config.from_file(path)`.
#[pyclass(module = "planrun_migrate", frozen, name = "Config")]
pub(crate) struct PyConfig {
    pub(crate) resolved: Arc<ResolvedConfig>,
    /// The Config document it was resolved from (`None`: the SDK's defaults), for pickling.
    source: Option<Vec<u8>>,
}

/// The SDK's defaults, resolved once.
pub(crate) fn defaults() -> PyResult<Arc<ResolvedConfig>> {
    static DEFAULTS: OnceLock<Result<Arc<ResolvedConfig>, String>> = OnceLock::new();
    DEFAULTS
        .get_or_init(|| {
            ResolvedConfig::sdk_defaults()
                .map(Arc::new)
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(PlanrunError::new_err)
}

/// A config file, as `--config` reads it.
pub(crate) fn from_file(py: Python<'_>, path: &Path) -> PyResult<PyConfig> {
    let bytes = py
        .detach(|| std::fs::read(path))
        .map_err(|e| PyOSError::new_err(format!("cannot read {}: {e}", path.display())))?;
    resolve(py, bytes, &path.to_string_lossy())
}

/// A legacy Config document over the SDK's defaults; `origin` names it in errors.
fn resolve(py: Python<'_>, bytes: Vec<u8>, origin: &str) -> PyResult<PyConfig> {
    let parsed = planrun_legacy::parse(&bytes).map_err(|e| parse_error(py, origin, &e))?;
    let LegacyDocument::Config(user) = &parsed.document else {
        return Err(rejected(
            py,
            origin,
            "not_a_config",
            format!(
                "not a Config but a {} document",
                parsed.detection.kind.as_str()
            ),
        ));
    };
    let (config, report) =
        resolve_config(Some(user)).map_err(|e| rejected(py, origin, "config", e.to_string()))?;
    Ok(PyConfig {
        resolved: Arc::new(ResolvedConfig::new(config, report)),
        source: Some(bytes),
    })
}

/// The `config=` argument: `None` (the SDK's defaults), a `Config`, or a path to a Config file.
pub(crate) fn argument(
    py: Python<'_>,
    config: Option<&Bound<'_, PyAny>>,
) -> PyResult<Arc<ResolvedConfig>> {
    let Some(config) = config.filter(|c| !c.is_none()) else {
        return defaults();
    };
    if let Ok(config) = config.cast::<PyConfig>() {
        return Ok(Arc::clone(&config.get().resolved));
    }
    let path: PathBuf = config.extract().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(
            "config must be a planrun_migrate.Config, a path to a legacy Config file, or None",
        )
    })?;
    Ok(from_file(py, &path)?.resolved)
}

#[pymethods]
impl PyConfig {
    /// The SDK's defaults.
    #[new]
    fn new() -> PyResult<Self> {
        Ok(PyConfig {
            resolved: defaults()?,
            source: None,
        })
    }

    /// A legacy Config file (JSON, as the SDK writes it) over the SDK's defaults.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        from_file(py, &path)
    }

    /// A legacy Config document (bytes or str) over the SDK's defaults.
    #[staticmethod]
    fn from_document(py: Python<'_>, data: Data) -> PyResult<Self> {
        resolve(py, data.0, "<config>")
    }

    /// Pickled as the document it was resolved from, so a process pool can take it.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let class = py.get_type::<PyConfig>();
        match &self.source {
            Some(bytes) => {
                (class.getattr("from_document")?, (PyBytes::new(py, bytes),)).into_bound_py_any(py)
            }
            None => (class, ()).into_bound_py_any(py),
        }
    }

    /// The V2 config written into every run, as a dict (secrets redacted).
    #[getter]
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(
            py,
            &serde_json::to_string(self.resolved.config()).expect("config is JSON"),
        )
    }

    /// The loss-report entries of resolving it (they open every converted run's report).
    #[getter]
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(
            py,
            &serde_json::to_string(self.resolved.report()).expect("reports are JSON"),
        )
    }

    /// The fingerprint a migration's journal records: a resume must use the same config.
    #[getter]
    fn fingerprint(&self) -> String {
        self.resolved.fingerprint()
    }

    fn __repr__(&self) -> String {
        format!("Config(fingerprint={:?})", self.resolved.fingerprint())
    }
}
