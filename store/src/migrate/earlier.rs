//! On a resume, the outputs of a run's earlier conversion that its conversion again does not
//! write: a fresh migration would not have them. A run saved again without an agent-memory
//! value would otherwise keep that value's copy in DST, and a run now rejected or blocked its
//! whole earlier output, which the SDK would load as the run's state after the cut-over.
//!
//! An agent-memory copy is filed under the id of the run its value names, which may be another
//! run's: such a copy is left where another run still records it (a run of this shard that
//! stays, one of another shard's journals, or a conversion of this pass).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::feed::lock;
use super::journal::{Line, MemoryRecord};
use super::{io_err, Ctx, MigrateError, CONTROL_DIR};
use crate::stamp::Stamp;
use crate::{Class, Durability, Failure, FailureKind, RunOutput};

/// What a resume knows of the earlier outputs of the runs it converts again.
#[derive(Debug, Default)]
pub(super) struct Earlier {
    /// By place: the own outputs (see [`own_outputs`]) of each run converted again, as its last
    /// `completed` line records them, with the stamps it journaled.
    by_place: HashMap<usize, Vec<Output>>,
    /// Agent-memory copies filed under another run's id that runs of this shard that stay
    /// record.
    foreign: HashSet<String>,
    /// The agent-memory copies this pass's conversions wrote or are writing, and their
    /// directories; held while a file is removed, so none is removed once a conversion claimed
    /// it.
    written: Mutex<Written>,
    /// For a pass over one shard: the other shards' journals, read when first needed.
    others: Option<OtherJournals>,
}

/// An output a run's earlier line records: its path relative to DST, and its stamp just after
/// it was written (`None` where the line has none, or the run was in flight since).
pub(super) type Output = (String, Option<Stamp>);

/// See [`Earlier::written`].
#[derive(Debug, Default)]
struct Written {
    files: HashSet<String>,
    dirs: HashSet<String>,
}

/// The journals of the other shards of DST, found and read when first needed (by a catch-up
/// removing a gone run's agent memory, or a conversion removing a stale copy), once a pass.
#[derive(Debug)]
pub(super) struct OtherJournals {
    /// This shard's journal.
    own: PathBuf,
    text: OnceLock<Vec<u8>>,
}

impl OtherJournals {
    /// The journals beside `own` (this shard's) in DST's control directory.
    pub(super) fn of(own: &Path) -> Self {
        OtherJournals {
            own: own.to_owned(),
            text: OnceLock::new(),
        }
    }

    /// Whether a line of another shard's journal records the file `path` (any line, so a run
    /// that no longer does may keep a file; a journal that cannot be read keeps every file).
    pub(super) fn record(&self, path: &str) -> bool {
        let text = self.text.get_or_init(|| {
            let mut text = Vec::new();
            for journal in other_journals(&self.own) {
                match std::fs::read(journal) {
                    Ok(bytes) => text.extend(bytes),
                    Err(_) => return Vec::from(b"*".as_slice()),
                }
            }
            text
        });
        if text.as_slice() == b"*" {
            return true;
        }
        let needle = serde_json::to_string(path).expect("paths are JSON strings");
        let needle = format!("\"path\":{needle}");
        memchr::memmem::find(text, needle.as_bytes()).is_some()
    }
}

impl Earlier {
    /// What a catch-up found: `by_place`, `foreign` and `others` as in [`Earlier`].
    pub(super) fn new(
        by_place: HashMap<usize, Vec<Output>>,
        foreign: HashSet<String>,
        others: Option<OtherJournals>,
    ) -> Self {
        Earlier {
            by_place,
            foreign,
            written: Mutex::default(),
            others,
        }
    }

    /// Notes that a conversion of this pass writes the agent-memory copy `path`.
    pub(super) fn note_written(&self, path: &str) {
        if !self.by_place.is_empty() {
            let mut written = lock(&self.written);
            if let Some((dir, _)) = path.rsplit_once('/') {
                written.dirs.insert(dir.to_owned());
            }
            written.files.insert(path.to_owned());
        }
    }

    /// Removes the earlier outputs of the run at `index` that `written` (the new document's id
    /// and the other files it wrote; `None` for a run that failed) does not hold and no other
    /// run records; the paths removed.
    fn remove_stale(
        &self,
        ctx: &Ctx,
        index: usize,
        written: Option<(&str, &[MemoryRecord])>,
    ) -> Result<Vec<String>, MigrateError> {
        let Some(earlier) = self.by_place.get(&index).filter(|_| !ctx.dry_run) else {
            return Ok(Vec::new());
        };
        let rewritten = |path: &String| {
            written.is_some_and(|(id, memory)| {
                path.strip_suffix(".json") == Some(id) || memory.iter().any(|m| m.path == *path)
            })
        };
        let mut removed = Vec::new();
        let mut parents = HashSet::new();
        {
            let claimed = lock(&self.written);
            for (path, stamp) in earlier.iter().filter(|(p, _)| !rewritten(p)) {
                if is_memory(path) && self.in_use(ctx, path, *stamp, &claimed) {
                    continue;
                }
                if remove_if_there(&ctx.dst.join(path))? {
                    removed.push(path.to_owned());
                }
                if let Some((dir, _)) = path.rsplit_once('/') {
                    parents.insert(dir.to_owned());
                }
            }
            // An agent-memory directory left empty goes, unless a conversion of this pass
            // writes into it.
            let memory_dir = |dir: &&String| !dir.starts_with(CONTROL_DIR);
            for dir in parents.iter().filter(memory_dir) {
                if claimed.dirs.contains(dir) {
                    continue;
                }
                let _ = std::fs::remove_dir(ctx.dst.join(dir));
            }
        }
        if ctx.durability == Durability::Files && !removed.is_empty() {
            for dir in parents
                .iter()
                .map(|dir| ctx.dst.join(dir))
                .chain([ctx.dst.clone()])
            {
                if dir.is_dir() {
                    crate::fsio::fsync_dir(&dir).map_err(io_err("cannot sync", &dir))?;
                }
            }
        }
        Ok(removed)
    }

    /// Whether the agent-memory copy `path` of a run converted again stays: it is no longer the
    /// file that run's line recorded (`stamp`, when known: someone else wrote it since), a
    /// conversion of this pass writes it, or another run records it (a run of this shard that
    /// stays, or a line of another shard's journal).
    fn in_use(&self, ctx: &Ctx, path: &str, stamp: Option<Stamp>, written: &Written) -> bool {
        let rewritten = || ctx.sink.dir().stamp(Path::new(path)).ok().flatten() != stamp;
        stamp.is_some() && rewritten()
            || written.files.contains(path)
            || self.foreign.contains(path)
            || self
                .others
                .as_ref()
                .is_some_and(|others| others.record(path))
    }
}

/// Whether a path relative to DST is an agent-memory copy: in a directory, not `.planrun/`.
pub(super) fn is_memory(path: &str) -> bool {
    path.contains('/') && !path.starts_with(CONTROL_DIR)
}

/// Removes the file `full`; whether it was there.
pub(super) fn remove_if_there(full: &Path) -> Result<bool, MigrateError> {
    match std::fs::remove_file(full) {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(io_err("cannot remove", full)(err)),
    }
}

/// The journals beside `own` in DST's control directory that are another shard's.
fn other_journals(own: &Path) -> Vec<PathBuf> {
    let Some(dir) = own.parent() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            name.starts_with("journal-") && name.ends_with(".jsonl") && path != own
        })
        .collect()
}

/// [`own_outputs`], each with the stamp the line journaled for it (with `stamps`).
pub(super) fn own_outputs_stamped(line: &Line, stamps: bool) -> Vec<Output> {
    let stamps = line.outputs.iter().flatten().filter(|_| stamps);
    own_outputs(line)
        .into_iter()
        .map(|path| {
            let stamp = stamps
                .clone()
                .find(|o| o.path == path)
                .and_then(|o| o.stamp);
            (path, stamp)
        })
        .collect()
}

/// The run's own outputs a `completed` line records, by path relative to DST: its document
/// (first), its agent-memory copies (`<id>/…`) and its residue; none without an id.
pub(super) fn own_outputs(line: &Line) -> Vec<String> {
    let Some(id) = line.id.as_deref() else {
        return Vec::new();
    };
    let own = |path: &str| {
        path.strip_prefix(id)
            .is_some_and(|rest| rest.starts_with('/'))
            || path == planrun_converter::residue::residue_path(id)
    };
    let mut paths = vec![planrun_wire::join!(id, ".json")];
    paths.extend(
        line.memory
            .iter()
            .flatten()
            .map(|m| m.path.clone())
            .filter(|p| own(p)),
    );
    paths
}

/// Notes in `foreign` the agent-memory copies a line of a run that stays records under
/// another run's id.
pub(super) fn note_foreign(line: &Line, foreign: &mut HashSet<String>) {
    let id = line.id.as_deref().unwrap_or_default();
    for record in line.memory.iter().flatten() {
        let dir = record.path.split_once('/').map(|(dir, _)| dir);
        if dir.is_some_and(|dir| dir != id && dir != CONTROL_DIR) {
            foreign.insert(record.path.clone());
        }
    }
}

/// `outcome`, once the outputs of the run's earlier conversion (on a resume) that it did not
/// write again are removed (see the module docs). A failure's message names what was removed.
/// A run that lost its V2 id to another file has no output of that id to remove.
pub(super) fn without_earlier_outputs(
    ctx: &Ctx,
    index: usize,
    outcome: Result<(RunOutput, Vec<MemoryRecord>), Failure>,
) -> Result<Result<(RunOutput, Vec<MemoryRecord>), Failure>, MigrateError> {
    Ok(match outcome {
        Ok((out, memory)) => {
            ctx.earlier
                .remove_stale(ctx, index, Some((&out.id, &memory)))?;
            Ok((out, memory))
        }
        Err(mut failure) => {
            let removed = if failure.kind == FailureKind::Conflict {
                Vec::new()
            } else {
                ctx.earlier.remove_stale(ctx, index, None)?
            };
            if !removed.is_empty() {
                let what = if failure.class == Class::InFlux {
                    "its outputs made from the version read before were removed from DST until \
                     a pass reads it whole"
                } else {
                    "its outputs made from an earlier version of the run were removed from DST"
                };
                failure.message = format!("{}; {what}: {}", failure.message, removed.join(", "));
            }
            Err(failure)
        }
    })
}
