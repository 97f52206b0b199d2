//! The one per-run conversion that both `planrun convert` and `planrun migrate` use, so a batch
//! gives the same bytes as converting each run alone.
//!
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
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use planrun_converter::chain::to_r6;
use planrun_converter::plan_from_legacy;
use planrun_converter::report::{EntryKind, LossReport};
use planrun_converter::residue::{residue_path, Residue};
use planrun_converter::upgrade::{
    upgrade_at, upgrade_sharing_plan, ConvertError, Converted, Missing, PlanSource, Sources,
};
use planrun_converter::PlanConversion;
use planrun_legacy::{DocKind, ErrorKind, LegacyDocument, LegacyRun, Parsed, Plan, VersionSet};
use planrun_v2::render::{self, Rendered, Shared};
use planrun_v2::{PlanRunV2, PlanV2};
use planrun_wire::json::{from_tree, located, parse_value};
use serde_json::Value;

use crate::config::ResolvedConfig;
use crate::disk::{io_failure, DiskStore};
use crate::fsio::read_nofollow;
use crate::loss::{RunReport, SharedEntries};
use crate::names::{is_run_file_name, run_key, safe_component};
use crate::outcome::{Class, Failure, FailureKind, MemoryFile, RunOutput, RunResult};
use crate::stamp::{Input, Seen};
use crate::store::{Doc, Stamped, Store};

/// The schema every V2 run is checked against.
pub const PLAN_RUN_V2_SCHEMA: &str = "v2/PlanRunV2.schema.json";

/// Converts the run file `run_path`, looking its plan, end user and agent memory up in the
/// directory `store_dir`. Never fails as a function: an unreadable or invalid run is a
/// `rejected` result.
pub fn convert_run(run_path: &Path, store_dir: &Path, config: &ResolvedConfig) -> RunResult {
    let bytes = match read_nofollow(run_path) {
        Ok(bytes) => bytes,
        Err(err) => return unread(run_path, io_failure(&err, run_path)),
    };
    let name = run_path.file_name().and_then(|n| n.to_str());
    let store = DiskStore::new(store_dir);
    convert_in(
        &bytes,
        run_path,
        name,
        Some((&store, &References::default())),
        config,
    )
}

/// Converts the run entry `name` of `store`, as a batch does: plans and end users already read
/// are taken from `refs`.
pub fn convert_entry(
    store: &dyn Store,
    name: &str,
    config: &ResolvedConfig,
    refs: &References,
) -> RunResult {
    let origin = store.locate(&Doc::Run(name).relative());
    let (bytes, seen) = match store.read_stamped(Doc::Run(name)) {
        Ok(Some(found)) => found,
        Ok(None) => {
            let failure = Failure::rejected(
                &origin,
                FailureKind::Io,
                "cannot read: the store has no such run",
            );
            return unread(&origin, failure);
        }
        Err(failure) => return unread(&origin, failure),
    };
    let mut result = convert_in(&bytes, &origin, Some(name), Some((store, refs)), config);
    result
        .inputs
        .insert(0, Input::seen(name.to_owned(), seen.as_ref()));
    result
}

fn unread(origin: &Path, failure: Failure) -> RunResult {
    RunResult {
        path: origin.to_owned(),
        bytes_in: 0,
        source_version: None,
        outcome: Err(failure),
        inputs: Vec::new(),
    }
}

/// The documents runs refer to (end users and plans), as recently read: a store has fewer of
/// them than runs, and runs that share one close together read and convert it once. A
/// migration takes the runs of one plan one after the other (it orders them by plan), so
/// every plan is read and converted once there. Each kind holds at most its capacity (then
/// starts over): [`References::PLANS`] plans, each with its conversion, and
/// [`References::END_USERS`] end users. The caches are small on purpose: with runs ordered by
/// plan a large one saves no reading, and the conversions it keeps cost more time (measured:
/// the rest of the work is pushed out of the processor's caches) than they save. A plan read through a HEAD store's residue
/// is not cached: it is that run's own.
#[derive(Debug)]
pub struct References {
    end_users: Cache<Referenced>,
    plans: Cache<PlanRead>,
}

impl Default for References {
    fn default() -> Self {
        References {
            end_users: Cache::new(References::END_USERS),
            plans: Cache::new(References::PLANS),
        }
    }
}

/// One kind of referenced document, by id, holding at most `capacity` of them. An id is taken
/// before its document is read, so a worker that asks for it meanwhile waits for that one read
/// instead of making its own (a migration gives the runs of one plan to one worker, but a
/// chunk's end can part them).
#[derive(Debug)]
struct Cache<T> {
    held: Mutex<HashMap<String, Held<T>>>,
    capacity: usize,
}

/// A document a [`Cache`] gave out: read once, shared by everyone who asked for its id.
#[derive(Debug)]
pub(crate) struct Held<T>(Arc<OnceLock<T>>);

impl<T> Held<T> {
    /// A document read apart from any cache.
    fn new(value: T) -> Self {
        Held(Arc::new(OnceLock::from(value)))
    }

    /// Whether `a` and `b` are the one read of a document.
    #[cfg(test)]
    fn same(a: &Self, b: &Self) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl<T> Clone for Held<T> {
    fn clone(&self) -> Self {
        Held(Arc::clone(&self.0))
    }
}

impl<T> std::ops::Deref for Held<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.0
            .get()
            .expect("a cache gives out only documents it has read")
    }
}

impl<T> Cache<T> {
    fn new(capacity: usize) -> Self {
        Cache {
            held: Mutex::default(),
            capacity,
        }
    }
}

/// A referenced document as read: `Ok(None)` when the store has none of that name.
type Reference = Result<Option<Parsed>, Failure>;

/// A referenced document as read, with its file's version as the read saw it (`None` when the
/// store has no such file or gives no stamps).
#[derive(Debug)]
pub(crate) struct Referenced {
    pub(crate) read: Reference,
    pub(crate) seen: Option<Seen>,
}

/// A plan as read, and its conversion to `PlanV2` and that plan's text once a run has needed
/// them: the conversion depends on the plan alone, and runs share plans.
#[derive(Debug)]
pub(crate) struct PlanRead {
    read: Reference,
    seen: Option<Seen>,
    converted: OnceLock<PlanConverted>,
}

/// A plan's conversion, for all the runs of the plan: the conversion (its report taken out),
/// the converted plan rendered, and the conversion's report entries, shared by the runs' reports.
#[derive(Debug)]
struct PlanConverted {
    conversion: PlanConversion,
    rendered: Rendered<PlanV2>,
    entries: Arc<SharedEntries>,
}

impl PlanRead {
    /// The plan as read: `Ok(None)` when the store has none.
    pub(crate) fn read(&self) -> &Result<Option<Parsed>, Failure> {
        &self.read
    }

    /// The plan file's version as the read saw it.
    pub(crate) fn seen(&self) -> Option<&Seen> {
        self.seen.as_ref()
    }

    fn new(Referenced { read, seen }: Referenced) -> Self {
        PlanRead {
            read,
            seen,
            converted: OnceLock::new(),
        }
    }

    /// The plan's conversion, made on first use.
    fn converted(&self, plan: &Plan) -> &PlanConverted {
        self.converted.get_or_init(|| {
            let mut conversion = plan_from_legacy(plan);
            let entries = SharedEntries::new(std::mem::take(&mut conversion.report));
            let rendered = Rendered::new(conversion.plan.clone());
            PlanConverted {
                conversion,
                rendered,
                entries,
            }
        })
    }
}

impl References {
    /// The most plans held.
    pub const PLANS: usize = 16;

    /// The most end users held.
    pub const END_USERS: usize = 16;

    /// The end user `external_id` of `store`.
    pub(crate) fn end_user(&self, store: &dyn Store, external_id: &str) -> Held<Referenced> {
        self.end_users.get(external_id, || {
            read_reference(
                store,
                Doc::EndUser(external_id),
                DocKind::EndUser,
                "end-user",
            )
        })
    }

    /// The plan `plan_id` of `store`.
    pub(crate) fn plan(&self, store: &dyn Store, plan_id: &str) -> Held<PlanRead> {
        self.plans.get(plan_id, || {
            PlanRead::new(read_reference(
                store,
                Doc::Plan(plan_id),
                DocKind::Plan,
                "plan",
            ))
        })
    }
}

impl<T> Cache<T> {
    fn get(&self, id: &str, read: impl FnOnce() -> T) -> Held<T> {
        let mut cache = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let (held, full) = if let Some(hit) = cache.get(id) {
            (hit.clone(), None)
        } else {
            // A full cache is emptied, and what it held freed after the lock is let go.
            let full = (cache.len() >= self.capacity).then(|| std::mem::take(&mut *cache));
            let held: Held<T> = Held(Arc::new(OnceLock::new()));
            cache.insert(id.to_owned(), held.clone());
            (held, full)
        };
        drop(cache);
        drop(full);
        held.0.get_or_init(read);
        held
    }
}

/// Rejects the run at `origin` when its end-user id cannot name the end-user file
/// `<external_id>.json` (see [`safe_component`]), before that file is looked up or written.
pub(crate) fn check_end_user_id(origin: &Path, external_id: &str) -> Result<(), Failure> {
    safe_component(external_id).map_err(|why| {
        Failure::rejected(
            origin,
            FailureKind::UnsafeName,
            format!("the end-user id {external_id:?} cannot name a file in the store: {why}"),
        )
    })
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
    let refs = References::default();
    let store = store_dir.map(DiskStore::new);
    convert_in(
        bytes,
        origin,
        file_name,
        store.as_ref().map(|s| (s as &dyn Store, &refs)),
        config,
    )
}

fn convert_in(
    bytes: &[u8],
    origin: &Path,
    file_name: Option<&str>,
    store: Option<(&dyn Store, &References)>,
    config: &ResolvedConfig,
) -> RunResult {
    let mut result = RunResult {
        path: origin.to_owned(),
        bytes_in: bytes.len() as u64,
        source_version: None,
        outcome: Err(Failure::rejected(
            origin,
            FailureKind::Internal,
            "not converted",
        )),
        inputs: Vec::new(),
    };
    let name = file_name.filter(|n| is_run_file_name(n));
    let residue = store.and_then(|(s, _)| residue_of(s, name?, bytes, &mut result.inputs));
    let undone = match &residue {
        Some(Kept::Applies(_, undone)) => undone.as_slice(),
        _ => bytes,
    };
    match planrun_legacy::parse(undone) {
        Ok(parsed) => {
            let mut read = Reading {
                versions: parsed.detection.versions,
                inputs: std::mem::take(&mut result.inputs),
            };
            result.outcome = convert_legacy(
                &parsed,
                origin,
                name,
                store,
                config,
                residue.as_ref(),
                &mut read,
            );
            result.source_version = Some(read.versions.to_string());
            result.inputs = read.inputs;
        }
        Err(legacy_error) => match current(bytes, origin, name, store.map(|(s, _)| s)) {
            Some(outcome) => {
                result.source_version = Some("V2".to_owned());
                result.outcome = outcome;
            }
            None => result.outcome = Err(Failure::parse(legacy_error, origin)),
        },
    }
    result
}

/// A run's residue in a HEAD store, as found beside it.
enum Kept {
    /// It was made with this very run file: the residue, and the run file as it was before
    /// HEAD's form was made of it.
    Applies(Box<Residue>, Vec<u8>),
    /// It was made with another version of the run file (the SDK has saved the run since), or
    /// it cannot be read: it does not apply, and what it holds is not in the V2 document.
    Stale(PathBuf),
}

/// The residue the store keeps of the run file `name` holding `bytes`, if it keeps one, which
/// is then recorded among the run's `inputs`.
fn residue_of(
    store: &dyn Store,
    name: &str,
    bytes: &[u8],
    inputs: &mut Vec<Input>,
) -> Option<Kept> {
    let id = name.strip_suffix(".json")?;
    let doc = Doc::Residue(id);
    let stale = || Some(Kept::Stale(store.locate(&doc.relative())));
    let path = || doc.relative().to_string_lossy().into_owned();
    let text = match store.read_stamped(doc) {
        Ok(Some((text, seen))) => {
            inputs.push(Input::seen(path(), seen.as_ref()));
            text
        }
        Ok(None) => return None,
        // Recorded as missing, so that a later pass reads it again.
        Err(_) => {
            inputs.push(Input::seen(path(), None));
            return stale();
        }
    };
    match Residue::read(&text) {
        Some(residue) => match residue.undo_run(bytes) {
            Some(undone) => Some(Kept::Applies(Box::new(residue), undone)),
            None => stale(),
        },
        None => stale(),
    }
}

/// What converting a legacy run learns beside its output: the versions it is judged as (with
/// its plan) and the files of the store it read.
struct Reading {
    versions: VersionSet,
    inputs: Vec<Input>,
}

/// The output of a converted run: its loss report (the config's entries and the plan's shared,
/// not copied) and its bytes, rendered with the plan's and config's shared parts.
fn run_output(
    converted: Converted,
    shared_plan: Option<(usize, &PlanConverted)>,
    plan_converted: Option<&PlanConverted>,
    config: &ResolvedConfig,
    agent_memory: Vec<MemoryFile>,
) -> RunOutput {
    let id = converted.run.id.clone();
    let mut report = RunReport::default();
    report.share(config.shared_report());
    match shared_plan {
        Some((at, plan)) => {
            let mut before = converted.report;
            let after = before.entries.split_off(at);
            report.extend(before);
            report.share(&plan.entries);
            report.extend(LossReport { entries: after });
        }
        None => report.extend(converted.report),
    }
    // Most documents fit the first buffer: growing one by doubling copied it six times.
    let mut text = Vec::with_capacity(16 * 1024);
    let shared = Shared {
        plan: plan_converted.map(|plan| &plan.rendered),
        config: Some(config.rendered()),
    };
    render::to_vec_pretty(&mut text, &converted.run, shared).expect("V2 runs are JSON");
    text.push(b'\n');
    RunOutput {
        class: if report.has_loss() {
            Class::ConvertedWithLoss
        } else {
            Class::Converted
        },
        id,
        bytes: text,
        report,
        agent_memory,
    }
}

/// The run's end user as the store holds it (through the cache), recorded among the inputs;
/// `None` without a store.
fn read_end_user(
    store: Option<(&dyn Store, &References)>,
    origin: &Path,
    end_user_id: &str,
    inputs: &mut Vec<Input>,
) -> Result<Option<Held<Referenced>>, Failure> {
    let Some((store, refs)) = store else {
        return Ok(None);
    };
    check_end_user_id(origin, end_user_id)?;
    let read = refs.end_user(store, end_user_id);
    inputs.push(Input::seen(
        format!("{end_user_id}.json"),
        read.seen.as_ref(),
    ));
    Ok(Some(read))
}

/// The run `parsed` holds, whose id must be the one its file `name` (when given) says.
fn named_run<'p>(
    parsed: &'p Parsed,
    origin: &Path,
    name: Option<&str>,
) -> Result<&'p LegacyRun, Failure> {
    let Some(run) = parsed.as_run() else {
        return Err(Failure::rejected(
            origin,
            FailureKind::NotARun,
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
                    FailureKind::IdMismatch,
                    format!("the file holds run {id}, but its name says {name}"),
                ))
            }
            None => {
                return Err(Failure::rejected(
                    origin,
                    FailureKind::IdMismatch,
                    format!("the run has no id, but its file name says {name}"),
                ))
            }
        }
    }
    Ok(run)
}

/// The failure a conversion error is: a blocked run names the file it misses (in the store,
/// when there is one), a rejected one the run.
fn conversion_failure(err: ConvertError, origin: &Path, store: Option<&dyn Store>) -> Failure {
    match err {
        ConvertError::Blocked { what, missing } => {
            let file = store.map_or_else(
                || PathBuf::from(&missing),
                |s| s.locate(Path::new(&missing)),
            );
            let kind = match what {
                Missing::Plan => FailureKind::MissingPlan,
                Missing::AgentMemory => FailureKind::MissingAgentMemory,
            };
            let why = if store.is_none() {
                format!("{what} {missing} not found (no store to look in: give --store)")
            } else {
                format!("{what} {missing} not found")
            };
            Failure::new(Class::Blocked, &file, kind, why)
        }
        ConvertError::Rejected(message) => {
            Failure::rejected(origin, FailureKind::Mismatch, message)
        }
        ConvertError::Chain(e) => Failure::rejected(origin, FailureKind::Internal, e.to_string()),
    }
}

/// Puts back what a HEAD store's residue kept for the run, or reports a residue that no longer
/// fits it.
fn apply_residue(
    converted: &mut Converted,
    residue: Option<&Kept>,
    origin: &Path,
) -> Result<(), Failure> {
    match residue {
        Some(Kept::Applies(residue, _)) => {
            residue
                .restore(&mut converted.run)
                .map_err(|why| Failure::rejected(origin, FailureKind::Mismatch, why))?;
            converted.report.push(
                EntryKind::Moved,
                Some(residue_path(&converted.run.id)),
                Some("/legacy".to_owned()),
                "what the HEAD store could not hold, put back from the residue planrun kept \
                 beside it",
                None,
            );
        }
        Some(Kept::Stale(path)) => converted.report.push(
            EntryKind::Dropped,
            Some(path.to_string_lossy().into_owned()),
            None,
            "the residue planrun kept beside this HEAD store no longer fits the run (the SDK \
             has saved it since), so what it holds is not in this document",
            None,
        ),
        None => {}
    }
    Ok(())
}

fn convert_legacy(
    parsed: &Parsed,
    origin: &Path,
    name: Option<&str>,
    store: Option<(&dyn Store, &References)>,
    config: &ResolvedConfig,
    residue: Option<&Kept>,
    read: &mut Reading,
) -> Result<RunOutput, Failure> {
    let Reading { versions, inputs } = read;
    let applies = match residue {
        Some(Kept::Applies(residue, _)) => Some(&**residue),
        _ => None,
    };
    let store_only = store.map(|(s, _)| s);
    let run = named_run(parsed, origin, name)?;
    let plan_id = run.plan_id().to_string();
    let plan_read = store.map(|(store, refs)| match applies {
        Some(residue) => Held::new(PlanRead::new(read_plan_with(store, &plan_id, residue))),
        None => refs.plan(store, &plan_id),
    });
    inputs.extend(plan_input(&plan_id, plan_read.as_deref(), applies));
    let plan_doc = match plan_read.as_deref().map(|p| &p.read) {
        Some(Err(failure)) => return Err(failure.clone()),
        Some(Ok(parsed)) => parsed.as_ref(),
        None => None,
    };
    // A plan is read as the version that wrote it, whatever its runs are: a store with a
    // history holds old runs whose plan a later release saved again. A run whose keys allow
    // several versions is judged with its plan (see `Detection::loaded_by`).
    if let Some(judged) = plan_doc
        .map(|p| p.detection.loaded_by(*versions))
        .filter(|judged| !judged.is_empty())
    {
        *versions = judged;
    }
    let plan = plan_doc.map(|p| match &p.document {
        LegacyDocument::Plan(plan) => plan,
        _ => unreachable!("read_reference checked the kind"),
    });

    let r6 =
        to_r6(run).map_err(|e| Failure::rejected(origin, FailureKind::Internal, e.to_string()))?;
    let end_user_id = r6.run.end_user_id.clone();
    let user_doc = read_end_user(store, origin, &end_user_id, inputs)?;
    let end_user = match user_doc.as_deref().map(|u| &u.read) {
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
        let store = store_only.expect("only called with a store");
        match memory_file(store, origin, run_id, output_name) {
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
    let plan_source = match (plan, store_only) {
        (Some(plan), _) => PlanSource::Read(plan),
        (None, Some(store)) if store.holds_plans() => PlanSource::NeverSaved,
        (None, _) => PlanSource::NotSearched,
    };
    let sources = Sources {
        run: parsed,
        plan: plan_source,
        end_user,
        plan_read: plan_doc.map_or(&[], |p| &p.normalizations),
        end_user_read: match user_doc.as_deref().map(|u| &u.read) {
            Some(Ok(Some(parsed))) => &parsed.normalizations,
            _ => &[],
        },
        config: config.config(),
        agent_memory: store_only.map(|_| &exists as &dyn Fn(&str, &str) -> bool),
    };
    let plan_converted = plan_read
        .as_deref()
        .zip(plan)
        .map(|(p, plan)| p.converted(plan));
    let converted = match plan_converted {
        Some(plan) => upgrade_sharing_plan(&sources, r6, &plan.conversion)
            .map(|sharing| (sharing.converted, Some((sharing.plan_entries_at, plan)))),
        None => upgrade_at(&sources, r6).map(|converted| (converted, None)),
    };
    if let Some(failure) = problem.into_inner() {
        return Err(failure);
    }
    let converted = converted.map_err(|err| conversion_failure(err, origin, store_only))?;
    let (mut converted, shared_plan) = converted;
    apply_residue(&mut converted, residue, origin)?;
    let id = converted.run.id.clone();
    check_output_name(&id, name, origin)?;
    let mut agent_memory = found.into_inner();
    copied_once(&mut agent_memory);
    Ok(run_output(
        converted,
        shared_plan,
        plan_converted,
        config,
        agent_memory,
    ))
}

/// Sorts a run's agent-memory files and keeps one of each: a file read twice is copied once,
/// since two reads of the same bytes differ only in what they saw of the file (the second may
/// be past the racy window the first was in).
fn copied_once(agent_memory: &mut Vec<MemoryFile>) {
    agent_memory.sort();
    agent_memory.dedup_by(|a, b| a.relative == b.relative && a.content == b.content);
}

/// The plan file among a run's inputs, as `read`: none without a store, or when the run's
/// residue holds its plan (the residue is an input then, and the store's plan file unread).
fn plan_input(plan_id: &str, read: Option<&PlanRead>, residue: Option<&Residue>) -> Option<Input> {
    let read = read.filter(|_| residue.is_none_or(|r| r.plan.is_none()))?;
    Some(Input::seen(format!("{plan_id}.json"), read.seen.as_ref()))
}

/// A document that is already a `PlanRunV2`: `None` when it does not have the V2 run shape (the
/// legacy parser's error then stands), else its validated outcome.
fn current(
    bytes: &[u8],
    origin: &Path,
    name: Option<&str>,
    store: Option<&dyn Store>,
) -> Option<Result<RunOutput, Failure>> {
    let tree = parse_value(bytes).ok()?;
    let schema = planrun_schemas::validate::v2_schema_for(&tree)?;
    if schema != PLAN_RUN_V2_SCHEMA {
        return None;
    }
    Some(validate_current(bytes, &tree, origin, name, store))
}

fn validate_current(
    bytes: &[u8],
    tree: &Value,
    origin: &Path,
    name: Option<&str>,
    store: Option<&dyn Store>,
) -> Result<RunOutput, Failure> {
    let run: PlanRunV2 = from_tree(bytes, tree).map_err(|e| Failure::parse(e, origin))?;
    let violations = planrun_schemas::validate::validate(tree, PLAN_RUN_V2_SCHEMA)
        .expect("the V2 run schema exists");
    if let Some(first) = violations.into_iter().next() {
        let error = located(bytes, first.pointer, ErrorKind::Data, first.message);
        let mut failure = Failure::parse(error, origin);
        failure.kind = FailureKind::Schema;
        return Err(failure);
    }
    if let Some(name) = name {
        if format!("{}.json", run.id) != name {
            return Err(Failure::rejected(
                origin,
                FailureKind::IdMismatch,
                format!("the file holds run {}, but its name says {name}", run.id),
            ));
        }
    }
    check_output_name(&run.id, name, origin)?;
    let mut agent_memory = Vec::new();
    if let Some(store) = store {
        for (plan_run_id, output_name) in run.agent_memory() {
            if let Some(file) = memory_file(store, origin, plan_run_id, output_name)? {
                agent_memory.push(file);
            } else {
                let missing = format!("{plan_run_id}/{output_name}.json");
                let doc = Doc::AgentMemory {
                    run_id: plan_run_id,
                    output_name,
                };
                return Err(Failure::new(
                    Class::Blocked,
                    &store.locate(&doc.relative()),
                    FailureKind::MissingAgentMemory,
                    format!("agent-memory file {missing} not found"),
                ));
            }
        }
    }
    copied_once(&mut agent_memory);
    Ok(RunOutput {
        class: Class::AlreadyCurrent,
        id: run.id,
        bytes: bytes.to_vec(),
        report: RunReport::default(),
        agent_memory,
    })
}

/// The output is named by the V2 id: it must be a safe file name and, for a store file, the name
/// the run file's own name maps to.
fn check_output_name(id: &str, name: Option<&str>, origin: &Path) -> Result<(), Failure> {
    safe_component(id).map_err(|why| {
        Failure::rejected(
            origin,
            FailureKind::UnsafeName,
            format!("the run id {id:?} cannot name a file: {why}"),
        )
    })?;
    if let Some(key) = name.and_then(run_key) {
        if id.strip_prefix("prun-") != Some(key) {
            return Err(Failure::rejected(
                origin,
                FailureKind::IdMismatch,
                format!("the V2 run id {id} is not the one its file name maps to (prun-{key})"),
            ));
        }
    }
    Ok(())
}

/// The plan of a run with a residue: the run's own plan when the residue holds it, else the
/// store's plan file, each with HEAD's changes undone when it is the file the residue was made
/// with.
fn read_plan_with(store: &dyn Store, plan_id: &str, residue: &Residue) -> Referenced {
    let doc = Doc::Plan(plan_id);
    let (bytes, seen) = match &residue.plan {
        Some(plan) => (planrun_wire::json::to_sdk_json(plan).into_bytes(), None),
        None => match read_bytes(store, doc, "plan") {
            Ok(Some(found)) => found,
            Ok(None) => {
                return Referenced {
                    read: Ok(None),
                    seen: None,
                }
            }
            Err(failure) => {
                return Referenced {
                    read: Err(failure),
                    seen: None,
                }
            }
        },
    };
    let bytes = residue.undo_plan(&bytes).unwrap_or(bytes);
    let read = parse_reference(
        &bytes,
        &store.locate(&doc.relative()),
        DocKind::Plan,
        "plan",
    )
    .map(Some);
    Referenced { read, seen }
}

/// Reads a referenced document (plan, end user): `Ok(None)` when the store has none.
fn read_reference(store: &dyn Store, doc: Doc<'_>, kind: DocKind, what: &str) -> Referenced {
    match read_bytes(store, doc, what) {
        Ok(Some((bytes, seen))) => Referenced {
            read: parse_reference(&bytes, &store.locate(&doc.relative()), kind, what).map(Some),
            seen,
        },
        Ok(None) => Referenced {
            read: Ok(None),
            seen: None,
        },
        Err(failure) => Referenced {
            read: Err(failure),
            seen: None,
        },
    }
}

/// The bytes of a referenced document with their stamp, `None` when the store has none; a
/// failure names the `what` file.
fn read_bytes(store: &dyn Store, doc: Doc<'_>, what: &str) -> Result<Option<Stamped>, Failure> {
    store.read_stamped(doc).map_err(|mut failure| {
        failure.message = format!("the {what} file: {}", failure.message);
        failure
    })
}

/// A referenced document read from `bytes` (the file at `path`), which must be of `kind`.
fn parse_reference(
    bytes: &[u8],
    path: &Path,
    kind: DocKind,
    what: &str,
) -> Result<Parsed, Failure> {
    let parsed = planrun_legacy::parse(bytes).map_err(|e| Failure::parse(e, path))?;
    if parsed.detection.kind != kind {
        return Err(Failure::rejected(
            path,
            FailureKind::Mismatch,
            format!(
                "the {what} file holds a {} document, not a {}",
                parsed.detection.kind.as_str(),
                kind.as_str()
            ),
        ));
    }
    Ok(parsed)
}

/// Checks the agent-memory file `<run_id>/<output_name>.json` of the store: `Ok(None)` when it
/// does not exist, a failure when a name is unsafe, a symlink is in the way or the file is not a
/// stored output.
fn memory_file(
    store: &dyn Store,
    origin: &Path,
    run_id: &str,
    output_name: &str,
) -> Result<Option<MemoryFile>, Failure> {
    for (what, name) in [("run id", run_id), ("output name", output_name)] {
        safe_component(name).map_err(|why| {
            Failure::rejected(
                origin,
                FailureKind::UnsafeName,
                format!("the agent-memory {what} {name:?} cannot name a file in the store: {why}"),
            )
        })?;
    }
    let doc = Doc::AgentMemory {
        run_id,
        output_name,
    };
    let path = store.locate(&doc.relative());
    let Some((bytes, seen)) = store.read_stamped(doc)? else {
        return Ok(None);
    };
    // The file is copied byte for byte, so its re-emission is not checked.
    let (detection, document) =
        planrun_legacy::read(&bytes).map_err(|e| Failure::parse(e, &path))?;
    if detection.kind != DocKind::Output {
        return Err(Failure::rejected(
            &path,
            FailureKind::Mismatch,
            format!(
                "the agent-memory file holds a {} document, not a stored output",
                detection.kind.as_str()
            ),
        ));
    }
    // The SDK reads these files as LocalDataValue only (`get_plan_run_output`), so a stored
    // AgentMemoryValue, which points elsewhere again, fails its `full_value()`.
    if matches!(
        document,
        LegacyDocument::Output(planrun_legacy::Output::AgentMemory(_))
    ) {
        return Err(Failure::rejected(
            &path,
            FailureKind::Mismatch,
            "the agent-memory file holds another agent-memory reference, not the value: the \
             SDK reads these files as a LocalDataValue only",
        ));
    }
    Ok(Some(MemoryFile {
        relative: doc.relative(),
        source: path,
        run_id: run_id.to_owned(),
        output_name: output_name.to_owned(),
        content: bytes,
        seen,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Copies the example store's R3 run with agent memory into a temp dir.
    fn agent_memory_store() -> (tempfile::TempDir, PathBuf) {
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/store");
        let dir = tempfile::tempdir().unwrap();
        let run = "prun-5d9a1f4c-6e7b-4c8d-8f9a-1b2c3d4e5f60";
        for name in [
            format!("{run}.json"),
            "plan-2c8b5e30-4d6f-4a01-9c2d-3e4f5a6b7c82.json".to_owned(),
            format!("{run}/$report.json"),
        ] {
            let to = dir.path().join(&name);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(example.join(&name), to).unwrap();
        }
        let run_path = dir.path().join(format!("{run}.json"));
        (dir, run_path)
    }

    #[test]
    fn a_key_the_sdk_drops_from_a_plan_is_reported_not_lost() {
        // Pins Variable's `extra="ignore"` (0.1.13 to HEAD): the SDK drops an unknown key of a
        // step input without a word. Until 0.1.12 the SDK forbade it; planrun reads it either way and
        // reports the key, with its value, as dropped, so the run is `converted_with_loss`.
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/store");
        let dir = tempfile::tempdir().unwrap();
        let run = "wkfl-3b7e9d2a-4c5f-4a6b-8d7e-9f0a1b2c3d4e.json";
        let plan = "plan-0a6f3c1e-2b4d-4e8f-9a0b-1c2d3e4f5a60.json";
        std::fs::copy(example.join(run), dir.path().join(run)).unwrap();
        let text = std::fs::read_to_string(example.join(plan)).unwrap();
        let edited = text.replacen(
            "\"description\": \"forecast\"",
            "\"description\": \"forecast\",\n                    \"unit\": \"celsius\"",
            1,
        );
        assert_ne!(edited, text);
        std::fs::write(dir.path().join(plan), edited).unwrap();
        let config = ResolvedConfig::sdk_defaults().unwrap();
        let result = convert_run(&dir.path().join(run), dir.path(), &config);
        let output = result.outcome.expect("converted");
        assert_eq!(output.class, Class::ConvertedWithLoss);
        let dropped: Vec<_> = output
            .report
            .entries()
            .filter(|e| e.kind == planrun_converter::EntryKind::Dropped)
            .collect();
        assert_eq!(dropped.len(), 1, "{}", output.report);
        assert_eq!(
            dropped[0].from.as_deref(),
            Some("/plan/steps/1/inputs/0/unit")
        );
        assert_eq!(dropped[0].value, Some(serde_json::json!("celsius")));
    }

    #[test]
    fn an_agent_memory_file_must_hold_the_value_itself() {
        // Pins DiskFileStorage.get_plan_run_output at HEAD (and since v0.1.12): it reads
        // `<run>/<output>.json` as a LocalDataValue, so a stored AgentMemoryValue fails to load.
        let (dir, run_path) = agent_memory_store();
        let config = ResolvedConfig::sdk_defaults().unwrap();
        let ok = convert_run(&run_path, dir.path(), &config);
        assert_eq!(ok.class(), Class::Converted, "{:?}", ok.outcome);
        std::fs::write(
            dir.path()
                .join("prun-5d9a1f4c-6e7b-4c8d-8f9a-1b2c3d4e5f60/$report.json"),
            r#"{"output_name": "$report", "plan_run_id": "prun-5d9a1f4c-6e7b-4c8d-8f9a-1b2c3d4e5f60", "summary": "s"}"#,
        )
        .unwrap();
        let rejected = convert_run(&run_path, dir.path(), &config);
        let failure = rejected.outcome.unwrap_err();
        assert_eq!(
            (failure.class, failure.kind.as_str()),
            (Class::Rejected, "mismatch")
        );
        assert!(failure.message.contains("LocalDataValue"), "{failure}");
        assert!(failure.file.ends_with("$report.json"), "{failure}");
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
        std::fs::write(dir.path().join("bob.json"), "{").unwrap();
        let store = DiskStore::new(dir.path());
        let cache = References::default();
        let first = cache.end_user(&store, "ada");
        assert!(matches!(&first.read, Ok(Some(_))), "{first:?}");
        std::fs::remove_file(&user).unwrap();
        assert!(
            Held::same(&first, &cache.end_user(&store, "ada")),
            "read again"
        );
        assert!(
            matches!(&cache.end_user(&store, "bob").read, Err(f) if f.kind == FailureKind::Syntax)
        );
        assert!(matches!(&cache.end_user(&store, "eve").read, Ok(None)));
    }

    #[test]
    fn a_full_cache_starts_over_and_still_gives_each_id_its_own_value() {
        let capacity = 8;
        let cache: Cache<String> = Cache::new(capacity);
        let reads = std::cell::Cell::new(0);
        let get = |id: &str| {
            cache.get(id, || {
                reads.set(reads.get() + 1);
                id.to_uppercase()
            })
        };
        for i in 0..=capacity {
            assert_eq!(*get(&format!("id{i}")), format!("ID{i}"));
        }
        assert_eq!(reads.get(), capacity + 1);
        assert_eq!(cache.held.lock().unwrap().len(), 1, "emptied when full");
        let last = format!("id{capacity}");
        assert!(Held::same(&get(&last), &get(&last)));
        assert_eq!(*get("id0"), "ID0");
        assert_eq!(reads.get(), capacity + 2, "id0 was read again");
    }

    #[test]
    fn a_worker_asking_for_an_id_being_read_waits_for_that_read() {
        let cache: Cache<String> = Cache::new(References::PLANS);
        let reads = std::sync::atomic::AtomicUsize::new(0);
        let read = || {
            reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            "P".to_owned()
        };
        let (first, second) = std::thread::scope(|scope| {
            let mut second = None;
            let first = cache.get("p", || {
                // The second worker asks while this read is under way.
                second = Some(scope.spawn(|| cache.get("p", read)));
                std::thread::sleep(std::time::Duration::from_millis(50));
                read()
            });
            (first, second.expect("spawned").join().expect("no panic"))
        });
        assert_eq!(reads.into_inner(), 1, "the id was read twice");
        assert!(Held::same(&first, &second));
    }

    #[test]
    fn each_kind_holds_its_own_capacity() {
        let refs = References::default();
        assert_eq!(refs.plans.capacity, References::PLANS);
        assert_eq!(refs.end_users.capacity, References::END_USERS);
    }
}
