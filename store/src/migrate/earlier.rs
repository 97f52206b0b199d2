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
use crate::{Class, Durability, Failure, FailureKind, RunOutput};

/// What a resume knows of the earlier outputs of the runs it converts again.
#[derive(Debug, Default)]
pub(super) struct Earlier {
    /// By place: the own outputs (see [`own_outputs`]) of each run converted again, as its last
    /// `completed` line records them.
    by_place: HashMap<usize, Vec<String>>,
    /// Agent-memory copies filed under another run's id that runs of this shard that stay
    /// record.
    foreign: HashSet<String>,
    /// The agent-memory copies this pass's conversions wrote or are writing; held while a file
    /// is removed, so none is removed once a conversion claimed it.
    written: Mutex<HashSet<String>>,
    /// For a pass over one shard: the other shards' journals, read when first needed.
    others: Option<OtherJournals>,
}

/// The journals of the other shards of DST, by path.
#[derive(Debug)]
struct OtherJournals {
    paths: Vec<PathBuf>,
    text: OnceLock<Vec<u8>>,
}

impl Earlier {
    /// What a catch-up found: `by_place` and `foreign` as in [`Earlier`]; `shard_journal` is
    /// this shard's journal when the pass is over one shard of several.
    pub(super) fn new(
        by_place: HashMap<usize, Vec<String>>,
        foreign: HashSet<String>,
        shard_journal: Option<&Path>,
    ) -> Self {
        let others = shard_journal.map(|own| OtherJournals {
            paths: other_journals(own),
            text: OnceLock::new(),
        });
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
            lock(&self.written).insert(path.to_owned());
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
        let written = lock(&self.written);
        for path in earlier.iter().filter(|p| !rewritten(p)) {
            let memory = !path.starts_with(CONTROL_DIR) && path.contains('/');
            if memory && (written.contains(path) || self.recorded_elsewhere(path)) {
                continue;
            }
            let full = ctx.dst.join(path);
            match std::fs::remove_file(&full) {
                Ok(()) => removed.push(path.clone()),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => return Err(io_err("cannot remove", &full)(err)),
            }
            parents.extend(Path::new(path).parent().map(Path::to_path_buf));
        }
        for parent in parents {
            let full = ctx.dst.join(&parent);
            // An agent-memory directory left empty goes, unless a conversion of this pass
            // writes into it.
            let into = |p: &String| Path::new(p).parent() == Some(parent.as_path());
            if !parent.starts_with(CONTROL_DIR) && !written.iter().any(into) {
                let _ = std::fs::remove_dir(&full);
            }
            if ctx.durability == Durability::Files {
                let synced = if full.is_dir() { full } else { ctx.dst.clone() };
                crate::fsio::fsync_dir(&synced).map_err(io_err("cannot sync", &synced))?;
            }
        }
        Ok(removed)
    }

    /// Whether a run other than the one converted again records the agent-memory copy `path`:
    /// a run of this shard that stays, or (in shards) a line of another shard's journal.
    fn recorded_elsewhere(&self, path: &str) -> bool {
        if self.foreign.contains(path) {
            return true;
        }
        let Some(others) = &self.others else {
            return false;
        };
        let text = others.text.get_or_init(|| {
            let read = others
                .paths
                .iter()
                .map(|p| std::fs::read(p).unwrap_or_default());
            read.collect::<Vec<_>>().concat()
        });
        let needle = format!("\"path\":\"{path}\"");
        memchr::memmem::find(text, needle.as_bytes()).is_some()
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
