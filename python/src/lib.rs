//! `planrun_migrate._native`, the extension module behind the `planrun_migrate` Python package:
//! detection, conversion, downgrade and batch migration of Portia SDK runs, in-process, through
//! the very functions the `planrun` CLI calls (`planrun_store::convert_run` and
//! `convert_document` for `convert`, `planrun_store::migrate::migrate` for `migrate`), so a
//! Python caller gets the CLI's bytes.
//!
//! Every call that reads files or converts releases the GIL, so Python threads and process pools
//! scale. `migrate` runs the engine on a thread of its own and polls for signals every 100 ms: a
//! `KeyboardInterrupt` sets the engine's cancellation flag, waits for the chunks in flight to be
//! committed, and is raised; the destination can then be resumed (`resume=True`).
//!
//! The Python side (`planrun_migrate/` beside this crate) re-exports this module, ships its type
//! stubs and the pydantic models of the V2 schemas (`planrun_migrate.models`).

mod config;
mod errors;
mod memory;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use planrun_converter::downgrade::{downgrade_to_head, DowngradeError};
use planrun_store::migrate::{
    Durability, MigrateError, Options, Progress, Shard, Target, DEFAULT_CHUNK_SIZE,
};
use planrun_store::{convert_document, convert_entry, convert_run, References, RunResult};
use planrun_v2::PlanRunV2;
use planrun_wire::json::{from_tree, parse_value, to_sdk_json};
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyMemoryView, PyString};
use pyo3::IntoPyObjectExt;

use crate::config::PyConfig;
use crate::errors::{
    failure_error, parse_error, rejected, BlockedError, PlanrunError, RejectedError,
};
use crate::memory::{MemoryStore, RUN_NAME};

/// A document argument: `bytes`, `bytearray`, `memoryview` or `str` (UTF-8).
pub(crate) struct Data(pub(crate) Vec<u8>);

impl<'a, 'py> FromPyObject<'a, 'py> for Data {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(bytes) = obj.cast::<PyBytes>() {
            return Ok(Data(bytes.as_bytes().to_vec()));
        }
        if let Ok(text) = obj.cast::<PyString>() {
            return Ok(Data(text.to_str()?.as_bytes().to_vec()));
        }
        if let Ok(bytes) = obj.cast::<PyByteArray>() {
            return Ok(Data(bytes.to_vec()));
        }
        if obj.cast::<PyMemoryView>().is_ok() {
            let bytes = obj.py().get_type::<PyBytes>().call1((obj,))?;
            return Ok(Data(bytes.cast::<PyBytes>()?.as_bytes().to_vec()));
        }
        Err(PyTypeError::new_err(format!(
            "expected a document as bytes or str, got {}",
            obj.get_type().name()?
        )))
    }
}

/// JSON text as Python objects (`json.loads`).
pub(crate) fn json_to_py<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.getattr("loads")?.call1((text,))
}

/// The result of converting one run: the V2 document, its loss report and its outcome class.
#[pyclass(module = "planrun_migrate", frozen)]
struct Converted {
    /// The `PlanRunV2` document as text: exactly the bytes `planrun convert` prints (pretty
    /// JSON and a newline; an already-current run's own bytes).
    #[pyo3(get)]
    document: String,
    report: Report,
    /// The outcome class: `converted`, `converted_with_loss` (the report drops something) or
    /// `already_current` (the input already was a `PlanRunV2`, kept byte for byte).
    #[pyo3(get)]
    outcome: String,
    /// The V2 run id; a migration names the document `<id>.json`.
    #[pyo3(get)]
    id: String,
    /// The versions that could have written the input (`R4`, `R1–R2`, `V2`).
    #[pyo3(get)]
    source_version: Option<String>,
    /// The run converted: its file, or `<run>` for a document passed in memory.
    #[pyo3(get)]
    path: String,
    /// The agent-memory files the run refers to (`<prun-id>/<output_name>.json`, relative to
    /// the store), which a migration copies next to the V2 document.
    #[pyo3(get)]
    agent_memory: Vec<String>,
}

#[pymethods]
impl Converted {
    /// The loss report as a dict (`{"entries": [...]}`): the config's entries, then the run's;
    /// what `planrun --format json convert` prints as `report`.
    #[getter]
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &self.report.json())
    }

    fn __repr__(&self) -> String {
        format!(
            "Converted(id={:?}, outcome={:?}, source_version={:?})",
            self.id,
            self.outcome,
            self.source_version.as_deref().unwrap_or("?")
        )
    }

    /// Pickled field by field, so process pools can return it.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let restore = py
            .import("planrun_migrate._native")?
            .getattr("_converted")?;
        let fields = (
            &self.document,
            self.report.json(),
            &self.outcome,
            &self.id,
            &self.source_version,
            &self.path,
            &self.agent_memory,
        );
        (restore, fields).into_bound_py_any(py)
    }
}

/// A loss report, turned into JSON text only when asked for (most callers never look).
enum Report {
    Native(planrun_store::loss::RunReport),
    Json(String),
}

impl Report {
    fn json(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Report::Native(report) => serde_json::to_string(report)
                .expect("reports are JSON")
                .into(),
            Report::Json(text) => text.as_str().into(),
        }
    }
}

/// Rebuilds a pickled `Converted` (internal).
#[pyfunction]
#[allow(
    clippy::too_many_arguments,
    reason = "one argument per field of the pickled object"
)]
fn _converted(
    document: String,
    report: String,
    outcome: String,
    id: String,
    source_version: Option<String>,
    path: String,
    agent_memory: Vec<String>,
) -> Converted {
    Converted {
        document,
        report: Report::Json(report),
        outcome,
        id,
        source_version,
        path,
        agent_memory,
    }
}

/// A conversion's `Converted`, or the run and its failure.
type Outcome = Result<Converted, Box<(PathBuf, planrun_store::Failure)>>;

/// A conversion's result as `Converted`, or its failure; built without the GIL.
fn converted(result: RunResult) -> Outcome {
    match result.outcome {
        Ok(output) => Ok(Converted {
            document: String::from_utf8(output.bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            report: Report::Native(output.report),
            outcome: output.class.as_str().to_owned(),
            id: output.id,
            source_version: result.source_version,
            path: result.path.to_string_lossy().into_owned(),
            agent_memory: output
                .agent_memory
                .iter()
                .map(|m| m.relative.to_string_lossy().into_owned())
                .collect(),
        }),
        Err(failure) => Err(Box::new((result.path, failure))),
    }
}

fn finish(py: Python<'_>, result: Outcome) -> PyResult<Converted> {
    result.map_err(|failed| failure_error(py, &failed.0, &failed.1))
}

/// An `OSError` (`FileNotFoundError`, ...) naming the file.
fn os_error(err: &std::io::Error, path: &Path) -> PyErr {
    let text = err.to_string();
    PyOSError::new_err((
        err.raw_os_error().unwrap_or(0),
        text,
        path.to_string_lossy().into_owned(),
    ))
}

/// What a document is, which versions could have written it, and why (`planrun detect`).
///
/// Returns `{"kind": "run", "versions": "R1–R2", "version": "R2", "candidates": ["R1", "R2"],
/// "evidence": [{"pointer", "fact", "versions", "used"}, ...]}`: `versions` is the range as the
/// CLI prints it, `version` the one the document is read as (the newest candidate). Raises
/// `RejectedError` (with the position) when the bytes are not a legacy Portia document.
#[pyfunction]
fn detect(py: Python<'_>, data: Data) -> PyResult<Bound<'_, PyAny>> {
    let detection = py.detach(|| planrun_legacy::detect(&data.0));
    let detection = detection.map_err(|e| parse_error(py, "<document>", &e))?;
    let mut tree = serde_json::to_value(&detection).expect("detections are JSON");
    tree["version"] = detection.version().as_str().into();
    tree["candidates"] = detection
        .versions
        .iter()
        .map(|v| serde_json::Value::from(v.as_str()))
        .collect();
    json_to_py(py, &tree.to_string())
}

/// Converts the run file `path` to `PlanRunV2`, as `planrun convert PATH [--store DIR]
/// [--config FILE]` does: its plan, end user and agent memory are looked up in `store` (default:
/// the file's own directory).
///
/// `config` is a `Config`, a path to a legacy Config file, or None (the SDK's defaults). Returns
/// a `Converted`; raises `RejectedError` for invalid input, `BlockedError` when the plan or an
/// agent-memory file is missing, `OSError` when `path` does not exist.
#[pyfunction]
#[pyo3(signature = (path, store=None, config=None))]
fn convert_file(
    py: Python<'_>,
    path: PathBuf,
    store: Option<PathBuf>,
    config: Option<&Bound<'_, PyAny>>,
) -> PyResult<Converted> {
    let config = config::argument(py, config)?;
    std::fs::symlink_metadata(&path).map_err(|e| os_error(&e, &path))?;
    let store = store.unwrap_or_else(|| match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    });
    let result = py.detach(|| converted(convert_run(&path, &store, &config)));
    finish(py, result)
}

/// Converts one run document held in memory (bytes or str, any legacy version or a
/// `PlanRunV2`) to `PlanRunV2`.
///
/// Its plan, end user and agent-memory values come from `plan`, `end_user` and `agent_memory`
/// (a dict from output name, or `<run id>/<output name>`, to the stored output's document), and
/// whatever is not given from the `DiskFileStorage` directory `store`. With neither, a legacy run
/// is blocked on its plan, as a line of `planrun convert -` without `--store` is. The same
/// per-run conversion as `convert_file` and `migrate`, so the document is the CLI's bytes.
///
/// Returns a `Converted`; raises `RejectedError` or `BlockedError` (see `convert_file`).
#[pyfunction]
#[pyo3(signature = (run, *, store=None, plan=None, end_user=None, agent_memory=None, config=None))]
fn convert(
    py: Python<'_>,
    run: Data,
    store: Option<PathBuf>,
    plan: Option<Data>,
    end_user: Option<Data>,
    agent_memory: Option<HashMap<String, Data>>,
    config: Option<&Bound<'_, PyAny>>,
) -> PyResult<Converted> {
    let config = config::argument(py, config)?;
    let origin = Path::new(RUN_NAME);
    let in_memory = plan.is_some() || end_user.is_some() || agent_memory.is_some();
    let result = py.detach(move || {
        if !in_memory {
            return converted(convert_document(
                &run.0,
                origin,
                None,
                store.as_deref(),
                &config,
            ));
        }
        let memory = MemoryStore {
            run: run.0,
            plan: plan.map(|d| d.0),
            end_user: end_user.map(|d| d.0),
            agent_memory: agent_memory
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| (k, v.0))
                .collect(),
            fallback: store.map(planrun_store::DiskStore::new),
        };
        converted(convert_entry(
            &memory,
            RUN_NAME,
            &config,
            &References::default(),
        ))
    });
    finish(py, result)
}

/// Converts a `PlanRunV2` document (bytes or str) back to the SDK's HEAD format, as
/// `planrun downgrade FILE` does: returns the files of the HEAD store, `{"<prun-id>.json": bytes,
/// "<plan-id>.json": bytes, "<external_id>.json": bytes, "<prun-id>/<output_name>.json": bytes,
/// ...}`, each exactly as the SDK at HEAD writes it.
///
/// The agent-memory files the run's outputs point at are read from `store` (the directory the V2
/// document is in, e.g. a `migrate` destination) or taken from `agent_memory` (by output name, or
/// `<run id>/<output name>`); a missing one is a `BlockedError`. Data HEAD cannot hold is refused
/// (`RejectedError`, kind `would_drop`) unless `allow_loss`; a document that is not a `PlanRunV2`
/// is a `RejectedError` with its position.
#[pyfunction]
#[pyo3(signature = (document, *, store=None, agent_memory=None, allow_loss=false))]
fn downgrade(
    py: Python<'_>,
    document: Data,
    store: Option<PathBuf>,
    agent_memory: Option<HashMap<String, Data>>,
    allow_loss: bool,
) -> PyResult<Bound<'_, PyDict>> {
    let origin = "<document>";
    let memory: HashMap<String, Vec<u8>> = agent_memory
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v.0))
        .collect();
    let files = py.detach(move || -> Result<Vec<(String, Vec<u8>)>, Rejection> {
        let bytes = document.0;
        let v2: PlanRunV2 = match serde_json::from_slice(&bytes) {
            Ok(v2) => v2,
            Err(err) => {
                // The strict read says why; the tree reader says where.
                let located =
                    parse_value(&bytes).and_then(|tree| from_tree::<PlanRunV2>(&bytes, &tree));
                return Err(match located {
                    Err(parsed) => Rejection::Parse(parsed),
                    Ok(_) => Rejection::Plain("data", format!("not a PlanRunV2 document: {err}")),
                });
            }
        };
        let down = downgrade_to_head(&v2, allow_loss).map_err(|e| {
            let kind = match e {
                DowngradeError::WouldDrop(_) => "would_drop",
                DowngradeError::Invalid(_) => "invalid",
            };
            Rejection::Plain(kind, e.to_string())
        })?;
        let external_id = &down.end_user.external_id;
        safe_file_name(external_id, "end-user id")?;
        let mut files = vec![
            (
                format!("{}.json", v2.id),
                to_sdk_json(&down.run).into_bytes(),
            ),
            (
                format!("{external_id}.json"),
                to_sdk_json(&down.end_user).into_bytes(),
            ),
        ];
        // A rebuilt plan (the SDK never saved one) gets no file, as the SDK left the run.
        if let Some(plan) = &down.plan {
            files.insert(
                1,
                (
                    format!("{}.json", v2.plan.id),
                    to_sdk_json(plan).into_bytes(),
                ),
            );
        }
        let mut copied = Vec::new();
        for (plan_run_id, output_name) in v2.agent_memory() {
            safe_file_name(plan_run_id, "run id")?;
            safe_file_name(output_name, "output name")?;
            let name = format!("{plan_run_id}/{output_name}.json");
            let held = memory
                .get(&format!("{plan_run_id}/{output_name}"))
                .or_else(|| memory.get(output_name))
                .cloned();
            let found = match (held, &store) {
                (Some(bytes), _) => Some(bytes),
                (None, Some(dir)) => match std::fs::read(dir.join(&name)) {
                    Ok(bytes) => Some(bytes),
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
                    Err(err) => return Err(Rejection::Plain("io", format!("{name}: {err}"))),
                },
                (None, None) => None,
            };
            let Some(bytes) = found else {
                let missing = store.as_ref().map_or_else(
                    || name.clone(),
                    |dir| dir.join(&name).to_string_lossy().into_owned(),
                );
                return Err(Rejection::Blocked(missing));
            };
            copied.push((name, bytes));
        }
        copied.sort();
        copied.dedup();
        files.extend(copied);
        Ok(files)
    });
    let files = files.map_err(|why| match why {
        Rejection::Parse(error) => parse_error(py, origin, &error),
        Rejection::Plain(kind, message) => rejected(py, origin, kind, message),
        Rejection::Blocked(missing) => {
            let failure = planrun_store::Failure {
                class: planrun_store::Class::Blocked,
                file: PathBuf::from(&missing),
                pointer: None,
                line: 0,
                column: 0,
                kind: planrun_store::FailureKind::MissingAgentMemory,
                message: format!(
                    "agent-memory file {missing} not found; the SDK could not load that output's value (give store= or agent_memory=)"
                ),
            };
            failure_error(py, Path::new(origin), &failure)
        }
    })?;
    let out = PyDict::new(py);
    for (name, bytes) in files {
        out.set_item(name, PyBytes::new(py, &bytes))?;
    }
    Ok(out)
}

/// A name built from data must be a single path component to name a file of the store.
fn safe_file_name(name: &str, what: &str) -> Result<(), Rejection> {
    let ok = !name.is_empty() && !name.starts_with('.') && !name.contains(['/', '\\', '\0']);
    if ok {
        Ok(())
    } else {
        Err(Rejection::Plain(
            "unsafe_name",
            format!("{what} {name:?} cannot be a file name in the store"),
        ))
    }
}

/// What the SDK of one version would do with each file of a store (`planrun check PATH --sdk
/// SDK`): which files it fails to load, which it never reads, and what it would silently change
/// when it saves them back.
///
/// `path` is a file or a store directory (every JSON file below it, sorted; `.planrun/` is
/// skipped, symlinks are not followed). Returns one dict per file, as `planrun --format json
/// check` prints them: `{"path", "loads", "fails": [why, ...], "changes_on_save": [{"kind",
/// "pointer", ...}, ...]}`; a file that SDK never reads has `"loads": None` and `"unread": why`.
/// `sdk` is `"HEAD"` or a wire version name (`"R3"`); any other is a `ValueError`.
#[pyfunction]
#[pyo3(signature = (path, sdk="HEAD"))]
fn check<'py>(py: Python<'py>, path: PathBuf, sdk: &str) -> PyResult<Bound<'py, PyAny>> {
    let sdk = planrun_legacy::sdk::parse_sdk(sdk).map_err(PyValueError::new_err)?;
    let lines = py.detach(|| {
        planrun_store::check::check_paths(std::slice::from_ref(&path), sdk).map(|checked| {
            checked
                .iter()
                .map(planrun_store::check::Checked::to_json)
                .collect::<Vec<_>>()
        })
    });
    let lines = lines.map_err(|(err, file)| os_error(&err, &file))?;
    json_to_py(py, &serde_json::Value::Array(lines).to_string())
}

/// Why a document was refused, before it becomes a `RejectedError`.
enum Rejection {
    Parse(planrun_legacy::ParseError),
    Plain(&'static str, String),
    /// The missing agent-memory file.
    Blocked(String),
}

/// The engine's cancellation flag, set by a `KeyboardInterrupt` in the calling thread.
struct Cancel(Arc<AtomicBool>);

impl Progress for Cancel {
    fn cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Migrates the legacy `DiskFileStorage` directory `src` to a new directory `out` of
/// `PlanRunV2` files: the engine, journal, report and exit rules of `planrun migrate SRC --out
/// OUT` (see docs/migration.md), in-process.
///
/// Returns the JSON report as a dict (what `planrun --format json migrate` prints; its
/// `outcomes` counts the runs per outcome class, `failures` lists the rejected and blocked
/// runs). `jobs` is the number of worker threads (default: the cores); `resume` brings `out` up
/// to date with `src` as it is now (an interrupted migration continued, new and changed runs
/// converted, the outputs of runs gone from `src` removed; an output someone else changed in
/// `out` is kept and counted under `catch_up.conflicts` unless `overwrite_changed`); `dry_run`
/// converts and checks in memory and writes nothing (with `resume`: what a catch-up would do);
/// `shard` is `"I/N"` or `(I, N)`; `config` a `Config` or a Config file's path; `durability` is
/// `"chunks"` (one syncfs per group of chunks), `"files"` (fsync every file, `--durable`) or
/// `"none"` (no sync, `--no-sync`). `to` is `"v2"` (PlanRunV2
/// files) or `"r6"` (a `DiskFileStorage` store the SDK at HEAD loads completely, what HEAD
/// cannot hold kept under `out/.planrun/residue/`), as `--to` of the CLI.
///
/// A `KeyboardInterrupt` stops the migration once the chunks in flight are journaled; pass
/// `resume=True` to continue it. Raises `PlanrunError` when the migration cannot run or its
/// verify pass fails (the CLI's exit 2), `ValueError` for an unknown `to`; rejected and blocked
/// runs are in the report, not errors.
#[pyfunction]
#[pyo3(signature = (src, out, *, jobs=None, resume=false, dry_run=false, to="v2", shard=None, config=None, durability="chunks", overwrite_changed=false))]
#[allow(
    clippy::too_many_arguments,
    reason = "the keyword arguments of `planrun migrate`"
)]
fn migrate<'py>(
    py: Python<'py>,
    src: PathBuf,
    out: PathBuf,
    jobs: Option<usize>,
    resume: bool,
    dry_run: bool,
    to: &str,
    shard: Option<&Bound<'py, PyAny>>,
    config: Option<&Bound<'py, PyAny>>,
    durability: &str,
    overwrite_changed: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let target = match to.to_ascii_lowercase().as_str() {
        "v2" => Target::V2,
        "r6" => Target::Head,
        _ => {
            return Err(PyValueError::new_err(format!(
                "to={to:?}: expected \"v2\" (PlanRunV2 files) or \"r6\" (a store the SDK at HEAD \
                 loads), as `planrun migrate --to` takes"
            )))
        }
    };
    let jobs = match jobs {
        Some(0) => return Err(PyValueError::new_err("jobs must be at least 1")),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
    };
    if overwrite_changed && !resume {
        return Err(PyValueError::new_err(
            "overwrite_changed needs resume=True: only a resume finds outputs someone else changed",
        ));
    }
    let shard = match shard.filter(|s| !s.is_none()) {
        None => None,
        Some(shard) => {
            let text = if let Ok((index, count)) = shard.extract::<(u64, u64)>() {
                format!("{index}/{count}")
            } else {
                shard.extract::<String>().map_err(|_| {
                    PyTypeError::new_err("shard must be \"I/N\", a tuple (I, N), or None")
                })?
            };
            Some(Shard::from_str(&text).map_err(PyValueError::new_err)?)
        }
    };
    let durability = Durability::named(&durability.to_ascii_lowercase()).ok_or_else(|| {
        PyValueError::new_err(format!(
            "durability={durability:?}: expected \"chunks\" (the default: one syncfs per group of \
             chunks), \"files\" (fsync every file, as --durable) or \"none\" (no sync, as \
             --no-sync)"
        ))
    })?;
    let config = config::argument(py, config)?;
    let options = Options {
        src,
        dst: out,
        jobs,
        resume,
        dry_run,
        shard,
        durability,
        chunk_size: DEFAULT_CHUNK_SIZE,
        config: (*config).clone(),
        target,
        overwrite_changed,
    };

    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Cancel(Arc::clone(&cancel));
    let caller = std::thread::current();
    let engine = std::thread::Builder::new()
        .name("planrun-migrate".to_owned())
        .spawn(move || {
            let summary = planrun_store::migrate::migrate(&options, &flag);
            caller.unpark();
            summary
        })
        .map_err(|e| PlanrunError::new_err(format!("cannot start the migration: {e}")))?;
    loop {
        py.detach(|| std::thread::park_timeout(Duration::from_millis(100)));
        if engine.is_finished() {
            break;
        }
        if let Err(interrupt) = py.check_signals() {
            cancel.store(true, Ordering::Relaxed);
            // The chunks in flight are committed and journaled before the engine returns.
            let _ = py.detach(|| engine.join());
            return Err(interrupt);
        }
    }
    let summary = engine
        .join()
        .map_err(|_| PlanrunError::new_err("the migration panicked"))?;
    match summary {
        Ok(summary) => {
            let text = serde_json::to_string(&summary.report).expect("reports are JSON");
            json_to_py(py, &text)
        }
        Err(MigrateError::Io { what, path, source }) => Err(PlanrunError::new_err(format!(
            "{what} {}: {source}",
            path.display()
        ))),
        Err(err) => Err(PlanrunError::new_err(in_python_terms(&err.to_string()))),
    }
}

/// The CLI flags the engine's messages name, and the keyword arguments of `migrate` that mean
/// the same: a Python user is told to pass `resume=True`, not `--resume`.
const FLAGS_AS_KEYWORDS: [(&str, &str); 7] = [
    ("--overwrite-changed", "overwrite_changed=True"),
    ("--resume", "resume=True"),
    ("--dry-run", "dry_run=True"),
    ("--no-sync", "durability=\"none\""),
    ("--durable", "durability=\"files\""),
    ("--config", "config="),
    ("--to", "to="),
];

/// `message` with each CLI flag of [`FLAGS_AS_KEYWORDS`] said as its keyword argument.
fn in_python_terms(message: &str) -> String {
    FLAGS_AS_KEYWORDS
        .iter()
        .fold(message.to_owned(), |text, (flag, keyword)| {
            text.replace(flag, keyword)
        })
}

/// Conversion allocates many small strings and maps: with glibc malloc, malloc and free took
/// about a fifth of a conversion's time (perf, generated store), so the extension uses the
/// CLI's allocator. Python objects are not affected: CPython allocates them itself.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Detect, convert, downgrade and migrate stored Portia SDK runs (every wire version from the
/// `Workflow` of 0.0.1-alpha.50 to the `PlanRun` of v0.9) to `PlanRunV2` and back, in-process,
/// with the functions the `planrun` CLI calls.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("PlanrunError", py.get_type::<PlanrunError>())?;
    m.add("RejectedError", py.get_type::<RejectedError>())?;
    m.add("BlockedError", py.get_type::<BlockedError>())?;
    m.add_class::<PyConfig>()?;
    m.add_class::<Converted>()?;
    m.add_function(wrap_pyfunction!(detect, m)?)?;
    m.add_function(wrap_pyfunction!(convert_file, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(downgrade, m)?)?;
    m.add_function(wrap_pyfunction!(migrate, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(_converted, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("HEAD", planrun_legacy::Version::HEAD.as_str())?;
    Ok(())
}
