//! `--to r6`: each converted run written back as the SDK at HEAD writes it, with its plan, its
//! end user and a residue for what HEAD cannot hold, so DST is a store HEAD loads completely.
//!
//! Shared files are safe to write from any run in any order: a plan file is the HEAD form of
//! the store's own plan file, and an end-user file the store's own end-user file, so every run
//! that shares one writes the same bytes. What a run's V2 document holds beyond them (context
//! data merged into its end user, an old execution context) goes to that run's residue.

use std::path::PathBuf;

use planrun_converter::downgrade::downgrade_to_head;
use planrun_converter::report::{EntryKind, LossReport};
use planrun_converter::residue::{residue_path, Residue};
use planrun_legacy::{LegacyDocument, LegacyRun};
use planrun_v2::PlanRunV2;
use planrun_wire::json::to_sdk_json;

use crate::stamp::Input;
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
}

/// The HEAD-store files of a converted run. `origin` names the run in failures.
pub fn outputs(
    store: &dyn Store,
    refs: &References,
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
    match &down.plan {
        Some(plan) => files.push((
            PathBuf::from(format!("{}.json", down.run.plan_id)),
            to_sdk_json(plan).into_bytes(),
        )),
        None => down.report.push(
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
    let residue = Residue::of(&v2, &mut down, stored.as_ref());
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
    })
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
    /// Documents written.
    pub(super) written: u64,
    /// Documents that are neither a plan nor an end user, by name, with why they stay behind.
    pub(super) skipped: Vec<(String, String)>,
    /// What was written, to journal: a later pass tells its own writes from someone else's.
    pub(super) records: Vec<super::journal::MemoryRecord>,
}

/// Writes the HEAD form of every plan and end user of `documents` that `shard` owns (by the
/// FNV-1a hash of its name, like runs), so a HEAD store also holds those no run refers to.
/// A run that refers to one writes the same bytes, so the two may race harmlessly.
pub(super) fn copy_documents(
    store: &dyn Store,
    sink: &dyn crate::Sink,
    documents: &crate::Names,
    shard: Option<super::Shard>,
    kept: &std::collections::HashSet<String>,
) -> Result<Copied, (std::io::Error, String)> {
    let mut copied = Copied {
        written: 0,
        skipped: Vec::new(),
        records: Vec::new(),
    };
    for name in documents.iter() {
        let name = name.as_str();
        if shard.is_some_and(|s| !s.owns(name)) || kept.contains(name) {
            continue;
        }
        let Some(id) = name.strip_suffix(".json") else {
            continue;
        };
        let doc = if id.starts_with("plan-") {
            Doc::Plan(id)
        } else {
            Doc::EndUser(id)
        };
        let bytes = match store.read(doc) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => continue,
            Err(failure) => {
                copied.skipped.push((name.to_owned(), failure.message));
                continue;
            }
        };
        let text = match planrun_legacy::parse(&bytes) {
            Ok(parsed) => match parsed.document {
                LegacyDocument::Plan(plan) => {
                    // HEAD's form renames an output a pre-0.1.8 plan repeats; what it cannot
                    // make loadable (two plan inputs of one name) stays behind.
                    let head = planrun_legacy::head::plan(&plan).document;
                    let fails = planrun_legacy::head::plan_validator_fails(&head);
                    if !fails.is_empty() {
                        copied.skipped.push((
                            name.to_owned(),
                            format!("a plan the SDK at HEAD cannot load: {}", fails.join("; ")),
                        ));
                        continue;
                    }
                    to_sdk_json(&head)
                }
                LegacyDocument::EndUser(user) => to_sdk_json(&user),
                _ => {
                    copied.skipped.push((
                        name.to_owned(),
                        format!(
                            "a {} document: a HEAD store holds runs, plans and end users only",
                            parsed.detection.kind.as_str()
                        ),
                    ));
                    continue;
                }
            },
            Err(err) => {
                copied
                    .skipped
                    .push((name.to_owned(), format!("not read: {err}")));
                continue;
            }
        };
        sink.write(std::path::Path::new(name), text.as_bytes())
            .map_err(|e| (e, name.to_owned()))?;
        copied.written += 1;
        copied.records.push(super::journal::MemoryRecord {
            path: name.to_owned(),
            bytes: text.len() as u64,
            hash: super::content_hash(text.as_bytes()),
        });
    }
    Ok(copied)
}
