//! `--to r6`: each converted run written back as the SDK at HEAD writes it, with its plan, its
//! end user and a residue for what HEAD cannot hold, so DST is a store HEAD loads completely.
//!
//! Shared files are safe to write from any run in any order: a plan file is the HEAD form of
//! the store's own plan file, and an end-user file the store's own end-user file, so every run
//! that shares one writes the same bytes. What a run's V2 document holds beyond them (context
//! data merged into its end user, an old execution context, its own version of its plan) goes
//! to that run's residue. A plan the store never saved is written from the V2 runs that carry
//! it, one version of it ([`PlanClaims`]).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use planrun_converter::downgrade::downgrade_to_head;
use planrun_converter::report::{EntryKind, LossReport};
use planrun_converter::residue::{residue_path, Residue};
use planrun_legacy::{LegacyDocument, LegacyRun};
use planrun_v2::PlanRunV2;
use planrun_wire::json::to_sdk_json;

use super::journal::Line;
use crate::stamp::{Input, Stamp};
use crate::Sink;
use crate::{Doc, Failure, FailureKind, References, RunOutput, Store};

/// The files of one run in a HEAD store.
pub struct HeadOutputs {
    /// `<run id>.json`.
    pub run: Vec<u8>,
    /// The plan, the end user (when the store has one) and the residue (when there is one), by
    /// path relative to DST.
    pub files: Vec<(PathBuf, Vec<u8>)>,
    /// What downgrading to HEAD did, after the conversion's own entries.
    pub report: LossReport,
    /// The end-user file of SRC the HEAD files were made with, as read: an input of the run
    /// (a V2 run's conversion read none).
    pub end_user: Input,
    /// For a V2 run, SRC's plan file as read: an input of the run, since it decides whether
    /// the run's own plan goes to its residue.
    pub plan: Option<Input>,
}

/// The HEAD-store files of a converted run. `origin` names the run in failures.
pub fn outputs(
    store: &dyn Store,
    refs: &References,
    claims: &PlanClaims,
    origin: &std::path::Path,
    out: &RunOutput,
) -> Result<HeadOutputs, Failure> {
    let v2: PlanRunV2 = serde_json::from_slice(&out.bytes).map_err(|e| {
        Failure::rejected(
            origin,
            FailureKind::Internal,
            format!("V2 output unreadable: {e}"),
        )
    })?;
    let mut down = downgrade_to_head(&v2, true)
        .map_err(|e| Failure::rejected(origin, FailureKind::Mismatch, e.to_string()))?;
    let mut files = Vec::new();
    let plan_text = down.plan.as_ref().map(to_sdk_json);
    let (own_plan, plan) = plan_file(
        (store, refs, claims),
        out,
        &down.run.plan_id.to_string(),
        down.plan.as_ref().zip(plan_text.as_deref()),
    );
    match (plan_text, &own_plan) {
        (Some(_), Some((_, why))) => down.report.push(
            EntryKind::Moved,
            Some("/plan".to_owned()),
            Some(residue_path(&v2.id)),
            format!(
                "{why}: the plan file {}.json holds that version, the run's own plan is kept in \
                 the store's residue",
                down.run.plan_id
            ),
            None,
        ),
        (Some(text), None) => files.push((
            PathBuf::from(format!("{}.json", down.run.plan_id)),
            text.into_bytes(),
        )),
        (None, _) => down.report.push(
            EntryKind::Defaulted,
            None,
            Some("/plan".to_owned()),
            format!(
                "written without a plan file, as the SDK left the run: {}.json was never saved \
                 (the V2 plan was rebuilt from the run)",
                down.run.plan_id
            ),
            None,
        ),
    }
    let external_id = down.end_user.external_id.clone();
    // A V2 run was read without an end-user file, so its id was never checked as a file name;
    // the HEAD store names one after it.
    crate::convert::check_end_user_id(origin, &external_id)?;
    // A legacy run's conversion read this file already; the batch's cache hands that back.
    let read = refs.end_user(store, &external_id);
    let end_user = Input::seen(format!("{external_id}.json"), read.seen.as_ref());
    let stored = match &read.read {
        Ok(Some(parsed)) => match &parsed.document {
            LegacyDocument::EndUser(user) => Some(user.clone()),
            _ => None,
        },
        Ok(None) => None,
        Err(failure) => return Err(failure.clone()),
    };
    if let Some(user) = &stored {
        files.push((
            PathBuf::from(format!("{external_id}.json")),
            to_sdk_json(user).into_bytes(),
        ));
    }
    let mut residue = Residue::of(&v2, &mut down, stored.as_ref());
    residue.plan = own_plan.map(|(plan, _)| plan);
    if residue.needed() {
        files.push((
            PathBuf::from(residue_path(&v2.id)),
            residue.to_text().into_bytes(),
        ));
    }
    Ok(HeadOutputs {
        run: to_sdk_json(&down.run).into_bytes(),
        files,
        report: down.report,
        end_user,
        plan,
    })
}

/// For a run whose conversion read no plan file (a V2 run carries its plan: `own`, with its
/// HEAD text): SRC's plan file as read, an input of the run, and the run's own plan, with why,
/// when the plan file DST holds is another version of it. That file is SRC's when SRC has one
/// (every pass copies it), else the version [`PlanClaims`] gives the plan id; a run whose plan
/// is not the file's keeps its own in its residue instead of writing over the file. A legacy
/// run's plan is made from SRC's file: `(None, None)`.
fn plan_file(
    (store, refs, claims): (&dyn Store, &References, &PlanClaims),
    out: &RunOutput,
    plan_id: &str,
    own: Option<(&planrun_legacy::Plan, &str)>,
) -> (Option<(serde_json::Value, &'static str)>, Option<Input>) {
    if out.class != crate::Class::AlreadyCurrent {
        return (None, None);
    }
    let read = refs.plan(store, plan_id);
    let input = Input::seen(format!("{plan_id}.json"), read.seen());
    let Some((own, text)) = own else {
        return (None, Some(input));
    };
    let stored = match read.read() {
        Ok(Some(parsed)) => head_form_of(parsed).ok(),
        _ => None,
    };
    let why = match stored {
        Some(stored) => (stored != text).then_some(
            "the store's plan file is another version of the run's plan (saved again since)",
        ),
        None => (!claims.claim(
            &format!("{plan_id}.json"),
            &super::content_hash(text.as_bytes()),
        ))
        .then_some(
            "another V2 run of the store carries another version of this plan, which the store \
             never saved",
        ),
    };
    let own_plan = why.map(|why| (serde_json::to_value(own).expect("plans are JSON"), why));
    (own_plan, Some(input))
}

/// Which version of a plan the store never saved a `--to r6` pass writes as its plan file,
/// when V2 runs carry different ones: the version in DST's file from an earlier pass, else the
/// first run's to ask. Every other version stays with its run, in its residue, so none is
/// written over. (Two shards may still both write such a file: each has its own claims.)
#[derive(Debug, Default)]
pub struct PlanClaims {
    /// DST, whose plan files an earlier pass wrote; `None`: no earlier pass to look at.
    dst: Option<PathBuf>,
    /// The content hash of the version each plan file holds this pass, by path.
    held: std::sync::Mutex<HashMap<String, String>>,
}

impl PlanClaims {
    /// Claims for a pass writing into `dst`.
    pub(super) fn in_dst(dst: &Path) -> Self {
        PlanClaims {
            dst: Some(dst.to_owned()),
            held: std::sync::Mutex::default(),
        }
    }

    /// Whether the version of the plan file `path` hashed `hash` is the one written.
    fn claim(&self, path: &str, hash: &str) -> bool {
        let mut held = super::feed::lock(&self.held);
        let holder = held.entry(path.to_owned()).or_insert_with(|| {
            self.dst
                .as_ref()
                .and_then(|dst| crate::fsio::read_nofollow(&dst.join(path)).ok())
                .map_or_else(|| hash.to_owned(), |bytes| super::content_hash(&bytes))
        });
        holder == hash
    }
}

/// A HEAD run file read back with a fresh reader: an R6 run in exactly the SDK's form, holding
/// the id its file is named by.
pub fn check_document(bytes: &[u8], id: &str) -> Result<(), String> {
    let parsed = planrun_legacy::parse(bytes).map_err(|e| format!("not a run HEAD loads: {e}"))?;
    let LegacyDocument::Run(LegacyRun::R6(run)) = &parsed.document else {
        return Err(format!(
            "not an R6 run but a {} document",
            parsed.detection.kind.as_str()
        ));
    };
    if !parsed.normalizations.is_empty() {
        return Err("not in the form the SDK at HEAD writes".to_owned());
    }
    match &run.id {
        Some(run_id) if run_id.to_string() == id => Ok(()),
        other => Err(format!("holds run {other:?}")),
    }
}

/// What [`copy_documents`] did.
pub(super) struct Copied {
    /// Documents DST holds in HEAD's form: written by this pass, or found as an earlier pass
    /// wrote them.
    pub(super) carried: u64,
    /// Documents that are neither a plan nor an end user, by name, with why they stay behind.
    pub(super) skipped: Vec<(String, String)>,
    /// What was written, to journal: a later pass tells its own writes from someone else's.
    pub(super) records: Vec<super::journal::MemoryRecord>,
    /// The SRC file each written document was made from, as read.
    pub(super) inputs: Vec<Input>,
    /// Each written document's stamp in DST just after it was written.
    pub(super) outputs: Vec<Input>,
}

/// A document's last copy, from the journal's `copied` lines: a resume writes it again only
/// when its SRC file changed or its DST file is no longer the one written.
#[derive(Debug, Clone)]
pub(super) struct LastCopy {
    /// The SRC file as that copy read it.
    input: Input,
    /// When that copy's pass had read its documents (see `Line::read_at`).
    read_at: i64,
    /// The DST file's stamp just after it was written.
    written: Stamp,
    /// The hash of the bytes written.
    hash: String,
}

impl LastCopy {
    /// Takes in the documents a `copied` line records, each over any earlier copy of it.
    pub(super) fn remember(line: &Line, last: &mut HashMap<String, LastCopy>) {
        let (Some(inputs), Some(outputs), Some(memory)) =
            (&line.inputs, &line.outputs, &line.memory)
        else {
            return;
        };
        let written: HashMap<&str, Stamp> = outputs
            .iter()
            .filter_map(|output| Some((output.path.as_str(), output.stamp?)))
            .collect();
        let hashes: HashMap<&str, &str> = memory
            .iter()
            .map(|record| (record.path.as_str(), record.hash.as_str()))
            .collect();
        for input in inputs {
            let path = input.path.as_str();
            let (Some(&stamp), Some(&hash)) = (written.get(path), hashes.get(path)) else {
                continue;
            };
            let copy = LastCopy {
                input: input.clone(),
                read_at: line.read_at.unwrap_or(i64::MIN),
                written: stamp,
                hash: hash.to_owned(),
            };
            last.insert(input.path.clone(), copy);
        }
    }

    /// Whether the document `name` is still as this copy left it: its SRC file unchanged (by
    /// the rules of a run's inputs) and its DST file the one written (see [`LastCopy::left`]).
    fn holds(&self, src: &crate::fsio::Dir, dst: &crate::fsio::Dir, name: &str, now: i64) -> bool {
        let path = Path::new(name);
        let src_now = src.stamp(path).ok();
        !super::catch_up::input_changed(src_now, &self.input, self.read_at, || {
            super::catch_up::content_now(src, name)
        }) && self.left(dst, path, now)
    }

    /// Whether DST's file at `path` is the one this copy wrote: it has the stamp written, and
    /// the bytes written when that stamp is racily clean against `now`. (A file written again
    /// since, even with the same bytes by a run, is copied again, so its stamp is journaled.)
    pub(super) fn left(&self, dst: &crate::fsio::Dir, path: &Path, now: i64) -> bool {
        match dst.stamp(path) {
            Ok(Some(found)) if found == self.written => {
                !found.racy(now)
                    || dst
                        .read_nofollow(path)
                        .is_ok_and(|bytes| super::content_hash(&bytes) == self.hash)
            }
            _ => false,
        }
    }
}

/// The shared files (plans, end users) a `--to r6` pass wrote, by path, with the hash of the
/// bytes: every run of a plan writes the same plan file, so a file is written again only with
/// other bytes.
#[derive(Default)]
pub(super) struct SharedWrites(std::sync::Mutex<HashMap<String, String>>);

impl SharedWrites {
    /// Writes `bytes` (whose hash is `hash`) to `path` in DST, unless it is a shared file this
    /// pass wrote those bytes to already (a run's own files are written as they come).
    pub(super) fn write(
        &self,
        sink: &crate::DiskSink,
        path: &str,
        bytes: &[u8],
        hash: &str,
    ) -> std::io::Result<()> {
        let shared = super::catch_up::is_shared(path);
        if shared && self.wrote(path, hash) {
            return Ok(());
        }
        sink.write(Path::new(path), bytes)?;
        if shared {
            super::feed::lock(&self.0).insert(path.to_owned(), hash.to_owned());
        }
        Ok(())
    }

    /// Whether this pass wrote the bytes hashed `hash` to `path`.
    fn wrote(&self, path: &str, hash: &str) -> bool {
        super::feed::lock(&self.0)
            .get(path)
            .is_some_and(|written| written == hash)
    }
}

/// What [`copy_documents`] works from.
pub(super) struct CopyFrom<'a> {
    pub(super) store: &'a crate::DiskStore,
    pub(super) sink: &'a crate::DiskSink,
    /// SRC's other documents.
    pub(super) documents: &'a crate::Names,
    pub(super) shard: Option<super::Shard>,
    /// Shared files someone else changed in DST: never written.
    pub(super) kept: &'a HashSet<String>,
    /// Each document's last copy, on a resume whose earlier passes all synced their outputs.
    pub(super) last: &'a HashMap<String, LastCopy>,
    /// When the pass started.
    pub(super) now: i64,
    /// What this pass's runs wrote already.
    pub(super) written: &'a SharedWrites,
}

/// One document's fate in [`copy_documents`].
enum Fate {
    /// Not this shard's, or kept.
    Passed,
    /// As the last copy left it.
    Held,
    /// Not a document a HEAD store holds, with why.
    Skipped(String),
    /// Written.
    Written(Box<Written>),
}

/// A document [`copy_documents`] wrote, to journal.
struct Written {
    /// What was written.
    record: super::journal::MemoryRecord,
    /// The SRC file it was made from, as read.
    input: Input,
    /// Its stamp in DST just after.
    output: Input,
}

/// Writes the HEAD form of every plan and end user of `documents` that `shard` owns (by the
/// FNV-1a hash of its name, like runs), so a HEAD store also holds those no run refers to;
/// a document as its last copy left it is not written again. A run that refers to one writes
/// the same bytes, so the two may race harmlessly. The documents are copied on `pool`.
pub(super) fn copy_documents(
    from: &CopyFrom<'_>,
    pool: &rayon::ThreadPool,
) -> Result<Copied, (std::io::Error, String)> {
    use rayon::prelude::*;
    let names: Vec<crate::names::Name<'_>> = from.documents.iter().collect();
    let fates: Vec<Result<Fate, (std::io::Error, String)>> = pool.install(|| {
        names
            .par_iter()
            .map(|name| copy_document(from, name.as_str()))
            .collect()
    });
    let mut copied = Copied {
        carried: 0,
        skipped: Vec::new(),
        records: Vec::new(),
        inputs: Vec::new(),
        outputs: Vec::new(),
    };
    for (name, fate) in names.iter().zip(fates) {
        match fate? {
            Fate::Passed => {}
            Fate::Held => copied.carried += 1,
            Fate::Skipped(why) => copied.skipped.push((name.as_str().to_owned(), why)),
            Fate::Written(written) => {
                copied.carried += 1;
                copied.records.push(written.record);
                copied.inputs.push(written.input);
                copied.outputs.push(written.output);
            }
        }
    }
    Ok(copied)
}

/// [`copy_documents`] of the document `name`.
fn copy_document(from: &CopyFrom<'_>, name: &str) -> Result<Fate, (std::io::Error, String)> {
    if from.shard.is_some_and(|s| !s.owns(name)) || from.kept.contains(name) {
        return Ok(Fate::Passed);
    }
    let Some(id) = name.strip_suffix(".json") else {
        return Ok(Fate::Passed);
    };
    if from
        .last
        .get(name)
        .is_some_and(|last| last.holds(from.store.files(), from.sink.dir(), name, from.now))
    {
        return Ok(Fate::Held);
    }
    let doc = if id.starts_with("plan-") {
        Doc::Plan(id)
    } else {
        Doc::EndUser(id)
    };
    let (bytes, seen) = match from.store.read_stamped(doc) {
        Ok(Some(read)) => read,
        Ok(None) => return Ok(Fate::Passed),
        Err(failure) => return Ok(Fate::Skipped(failure.message)),
    };
    let text = match head_form(&bytes) {
        Ok(text) => text,
        Err(why) => return Ok(Fate::Skipped(why)),
    };
    let path = Path::new(name);
    let hash = super::content_hash(text.as_bytes());
    from.written
        .write(from.sink, name, text.as_bytes(), &hash)
        .map_err(|e| (e, name.to_owned()))?;
    let record = super::journal::MemoryRecord {
        path: name.to_owned(),
        bytes: text.len() as u64,
        hash,
    };
    let output = Input {
        path: name.to_owned(),
        stamp: from.sink.dir().stamp(path).ok().flatten(),
        hash: None,
    };
    Ok(Fate::Written(Box::new(Written {
        record,
        input: Input::seen(name.to_owned(), seen.as_ref()),
        output,
    })))
}

/// The HEAD form of a plan or end-user document, or why a HEAD store cannot hold it.
fn head_form(bytes: &[u8]) -> Result<String, String> {
    let parsed = planrun_legacy::parse(bytes).map_err(|err| format!("not read: {err}"))?;
    head_form_of(&parsed)
}

/// [`head_form`] of a document already read.
fn head_form_of(parsed: &planrun_legacy::Parsed) -> Result<String, String> {
    match &parsed.document {
        LegacyDocument::Plan(plan) => {
            // HEAD's form renames an output a pre-0.1.8 plan repeats; what it cannot make
            // loadable (two plan inputs of one name) stays behind.
            let head = planrun_legacy::head::plan(plan).document;
            let fails = planrun_legacy::head::plan_validator_fails(&head);
            if !fails.is_empty() {
                return Err(format!(
                    "a plan the SDK at HEAD cannot load: {}",
                    fails.join("; ")
                ));
            }
            Ok(to_sdk_json(&head))
        }
        LegacyDocument::EndUser(user) => Ok(to_sdk_json(user)),
        _ => Err(format!(
            "a {} document: a HEAD store holds runs, plans and end users only",
            parsed.detection.kind.as_str()
        )),
    }
}
