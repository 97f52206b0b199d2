//! `--resume` on a live store: what DST lacks to correspond to SRC as it is now, found by
//! comparing each run's journal line with SRC and DST. A run is up to date when none of the
//! files its conversion read (its journaled inputs) changed and its outputs are still the bytes
//! written; a run whose inputs changed, a new run and a run whose outputs were damaged are
//! converted again; a run gone from SRC has its own outputs removed; and an output someone else
//! changed in DST (a valid document that is not the one written: the SDK saving a run into a
//! HEAD store after the cut-over, an edit by hand) is kept and reported as a conflict, unless
//! the caller asked to overwrite changed outputs.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::feed::lock;
use super::finals::InJournalOrder;
use super::head::LastCopy;
use super::journal::{ErrorRecord, Event, Line, MemoryRecord, Reader};
use super::report::Builder;
use super::{check_output, content_hash, feed, io_err, Ctx, Fast, FinalLines, MigrateError};
use crate::fsio::Dir;
use crate::stamp::{Input, Stamp};

/// How many names of each kind a report lists.
const NAMES: usize = 5;

/// What a catch-up found, in the report of a resumed migration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatchUpCounts {
    /// Runs whose inputs and outputs are as journaled: skipped.
    pub up_to_date: u64,
    /// Runs converted again because a file they were converted from changed (or, with
    /// `--overwrite-changed`, because someone else changed an output).
    pub changed: u64,
    /// Runs of SRC the journal has no final line for (new, or in flight when a pass stopped).
    pub new: u64,
    /// Runs tried again: they failed before, or their outputs were damaged.
    pub retried: u64,
    /// Runs gone from SRC whose outputs were removed.
    pub removed: u64,
    /// Outputs someone else changed in DST, kept.
    pub conflicts: u64,
    /// Every file kept because someone else changed it, relative to DST.
    pub kept: Vec<String>,
    /// The first few run names of each kind.
    pub names: BTreeMap<String, Vec<String>>,
}

impl CatchUpCounts {
    fn note(&mut self, kind: &str, run: &str) {
        let names = self.names.entry(kind.to_owned()).or_default();
        if names.len() < NAMES {
            names.push(run.to_owned());
        }
    }

    /// Adds another shard's counts.
    pub fn merge(&mut self, other: &CatchUpCounts) {
        self.up_to_date += other.up_to_date;
        self.changed += other.changed;
        self.new += other.new;
        self.retried += other.retried;
        self.removed += other.removed;
        self.conflicts += other.conflicts;
        self.kept.extend(other.kept.iter().cloned());
        for (kind, names) in &other.names {
            let mine = self.names.entry(kind.clone()).or_default();
            mine.extend(names.iter().take(NAMES.saturating_sub(mine.len())).cloned());
        }
    }
}

/// What a catch-up decided.
pub(super) struct CatchUp<'a> {
    /// By place in the listing: whether the run is up to date (not converted again).
    pub(super) done: Vec<bool>,
    /// The counts for the report.
    pub(super) counts: CatchUpCounts,
    /// Lines to journal: `removed` for runs gone from SRC, `conflict` for kept outputs.
    pub(super) lines: Vec<Line>,
    /// With `--to r6`: the shared files (plans, end users) someone else changed in DST, which
    /// this pass must not write.
    pub(super) kept: HashSet<String>,
    /// With `--to r6`: the last copy of each of SRC's plans and end users, when every pass
    /// synced its outputs (so a copy's stamp in DST proves its bytes).
    pub(super) copies: HashMap<String, LastCopy>,
    /// With `--to r6`: the shared files written by runs that stay as they are (up to date, or
    /// kept as conflicts). Such a file stays though SRC has none: a V2 run's plan is written
    /// from the run, where the store never saved it.
    wanted: HashSet<String, super::Fast>,
    /// By place: the own outputs of each run converted again, as its last `completed` line
    /// records them (see [`super::earlier`]).
    pub(super) earlier: HashMap<usize, Vec<super::earlier::Output>>,
    /// The agent-memory copies under another run's id that runs that stay record.
    pub(super) foreign_memory: HashSet<String>,
    /// The agent-memory copies of runs gone from SRC, removed once every line is read (unless
    /// a run that stays records them).
    gone_memory: Vec<String>,
    /// For a pass over one shard of several: the other shards' journals.
    pub(super) others: Option<super::earlier::OtherJournals>,
    /// How far the journal was read, for the verify pass to go on from there.
    pub(super) read: ReadSoFar<'a>,
}

/// The journal as a catch-up read it: the verify pass reads only the lines after it.
pub(super) struct ReadSoFar<'a> {
    /// Each run's last final line so far.
    pub(super) finals: FinalLines<'a>,
    /// The bytes and lines read.
    pub(super) offset: u64,
    pub(super) index: u64,
    /// The `completed` lines of runs found up to date, whose outputs the catch-up checked and
    /// whose lines it added to the report.
    pub(super) completed: u64,
    /// What the report found wrong in those lines.
    pub(super) problems: Vec<String>,
}

/// Whether a file a run's line records is shared with other runs: a HEAD store's plan or
/// end-user file, at DST's top level (a run's agent memory and residue lie in directories).
pub(super) fn is_shared(path: &str) -> bool {
    !path.contains('/')
}

/// The state of a run's outputs in DST against its journal line.
enum Outputs {
    /// Every file holds the bytes written.
    Intact,
    /// Every file holds the bytes written, though not every one has the stamp journaled (DST
    /// was copied, or restored from a backup): the stamps found, taken before the reads.
    Restamped(Vec<Input>),
    /// A file is missing, cut short or not a document: it is redone.
    Damaged,
    /// This file holds a valid document that is not the one written: someone else wrote it.
    Changed(String),
}

/// A journal line the catch-up judges, in journal order.
enum Item {
    /// The last final line of a run of SRC, at its place in the listing.
    Listed {
        at: usize,
        index: u64,
        line: Box<Line>,
        trust: Trust,
    },
    /// The last final line of a run gone from SRC.
    Gone(Box<Line>),
    /// Loss-report entries that later lines name.
    Defines(Box<Line>),
}

/// What becomes of a listed run.
enum Verdict {
    UpToDate,
    /// Up to date, with its outputs' stamps as found now.
    Restamped(Vec<Input>),
    Changed,
    New,
    Retried,
    /// Someone else changed this output; whether the run's inputs changed too.
    Conflict(String, bool),
}

/// What becomes of a run gone from SRC whose outputs no pass removed yet.
enum Gone {
    /// Its outputs are removed; `true` when it has any (it completed).
    Removed(bool),
    /// Someone else changed this output: it is kept.
    Conflict(String),
}

/// An [`Item`] judged.
enum Judged {
    Listed(Verdict),
    Gone(Option<Gone>),
    Defines,
}

/// Compares the journal with SRC and DST (see the module docs). With `apply`, removes the
/// outputs of runs gone from SRC (a dry run only counts them). With `report`, adds the lines
/// of the runs found up to date to it. The stats and reads that judge each run are spread
/// over `pool` while this thread reads the journal, which ends at its first torn or invalid
/// line ([`ReadSoFar::offset`]: what a resume keeps of it).
pub(super) fn catch_up<'a>(
    ctx: &Ctx<'a>,
    journal: &Path,
    overwrite_changed: bool,
    apply: bool,
    pool: &rayon::ThreadPool,
    mut report: Option<&mut Builder>,
) -> Result<CatchUp<'a>, MigrateError> {
    let before = report.as_deref().cloned();
    let mut limit = u64::MAX;
    loop {
        let finals = if limit == u64::MAX {
            FinalLines::read_all(journal, ctx.runs, pool.current_num_threads(), pool)?
        } else {
            FinalLines::read(journal, ctx.runs, limit)?
        };
        let tags = finals.lines;
        let found = judge_journal(
            ctx,
            journal,
            finals,
            overwrite_changed,
            apply,
            pool,
            report.as_deref_mut(),
        )?;
        if found.read.index >= tags {
            return Ok(found);
        }
        // A line whose tag reads but whose rest is no journal line (damage, not a torn
        // tail): the journal ends before it, so the lines after it settle nothing. Judged
        // again without them; what the first reading removed stays removed.
        limit = found.read.index;
        if let (Some(report), Some(before)) = (report.as_deref_mut(), &before) {
            *report = before.clone();
        }
    }
}

/// [`catch_up`] with the journal's final lines known.
fn judge_journal<'a>(
    ctx: &Ctx<'a>,
    journal: &Path,
    finals: FinalLines<'a>,
    overwrite_changed: bool,
    apply: bool,
    pool: &rayon::ThreadPool,
    mut report: Option<&mut Builder>,
) -> Result<CatchUp<'a>, MigrateError> {
    let mut found = CatchUp {
        done: vec![false; ctx.runs.len()],
        counts: CatchUpCounts::default(),
        lines: Vec::new(),
        kept: HashSet::new(),
        copies: HashMap::new(),
        wanted: HashSet::default(),
        earlier: HashMap::new(),
        foreign_memory: HashSet::new(),
        gone_memory: Vec::new(),
        others: (ctx.mine.len() < ctx.runs.len())
            .then(|| super::earlier::OtherJournals::of(journal)),
        read: ReadSoFar {
            offset: 0,
            index: 0,
            completed: 0,
            problems: Vec::new(),
            finals: FinalLines::new(ctx.runs),
        },
    };
    // The bytes this shard ever wrote into each shared file, by path and hash.
    let mut ours: HashMap<String, HashSet<String>> = HashMap::new();
    // Those of them a V2 run wrote: a plan file SRC may never have had.
    let mut from_v2: HashSet<String> = HashSet::new();
    // Each pass's start, and whether it got as far as journaling its copied documents.
    let mut sessions: Vec<(i64, bool)> = Vec::new();
    let mut copies = HashMap::new();
    let mut seen = vec![false; ctx.runs.len()];
    let dst = ctx.sink.dir();
    let shared = SharedFiles::default();
    let mut removal: Result<(), MigrateError> = Ok(());
    let mut reader = Reader::open(journal).map_err(io_err("cannot read", journal))?;
    let mut index = 0u64;
    let read = feed::judged_in_order(
        pool,
        |send| -> Result<(), MigrateError> {
            let mut settling = finals.in_journal_order();
            let mut batch = Vec::with_capacity(BATCH);
            while let Some(line) = reader
                .next_line_unless_started()
                .map_err(io_err("cannot read", journal))?
            {
                index += 1;
                // A `started` line settles no run and names no shared file.
                let Some(line) = line else {
                    continue;
                };
                remember(&line, &mut ours, &mut from_v2, &mut sessions);
                if line.event == Event::Copied {
                    LastCopy::remember(&line, &mut copies);
                }
                let Some(item) = to_judge(line, index, &finals, &mut settling, &mut seen) else {
                    continue;
                };
                batch.push(item);
                if batch.len() == BATCH {
                    send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)));
                }
            }
            send(batch);
            Ok(())
        },
        |item| match item {
            Item::Listed { line, trust, .. } => Judged::Listed(judge_listed(
                ctx,
                dst,
                line,
                overwrite_changed,
                *trust,
                &shared,
            )),
            Item::Gone(line) => Judged::Gone(judge_gone(ctx, dst, line)),
            Item::Defines(_) => Judged::Defines,
        },
        |judged| {
            for (item, judged) in judged {
                // After a failed removal the rest are not tried; the error ends the pass.
                if removal.is_ok() {
                    removal = settle(ctx, &mut found, item, judged, apply, report.as_deref_mut());
                }
            }
        },
    );
    read?;
    removal?;
    if apply {
        remove_gone_memory(ctx, &found)?;
    }
    for (at, seen) in seen.iter().enumerate() {
        if !seen && ctx.mine.binary_search(&at).is_ok() {
            found.counts.new += 1;
            found.counts.note("new", &ctx.runs.get(at));
        }
    }
    if !finals.stamps_trusted {
        copies.clear();
    }
    let unfinished = unfinished_windows(&sessions);
    let shared = Shared {
        ours: &ours,
        from_v2: &from_v2,
        unfinished: &unfinished,
        copies: &copies,
    };
    review_shared(
        ctx,
        dst,
        &shared,
        overwrite_changed,
        apply,
        pool,
        &mut found,
    )?;
    found.copies = copies;
    found.read.offset = reader.good_len;
    found.read.index = index;
    found.read.finals = finals;
    Ok(found)
}

/// The item to judge for the journal's line `index`, if it settles a run or defines entries.
fn to_judge(
    line: Box<Line>,
    index: u64,
    finals: &FinalLines<'_>,
    settling: &mut InJournalOrder<'_, '_>,
    seen: &mut [bool],
) -> Option<Item> {
    if let Some(at) = settling.position(&line, index) {
        seen[at] = true;
        let trust = Trust {
            in_flight: finals.in_flight[at],
            stamps: finals.stamps_trusted,
        };
        return Some(Item::Listed {
            at,
            index,
            line,
            trust,
        });
    }
    let last_of_a_gone_run = line.event.is_final()
        && line
            .run
            .as_deref()
            .is_some_and(|run| finals.strays.get(run).is_some_and(|(i, _)| *i == index));
    if last_of_a_gone_run {
        Some(Item::Gone(line))
    } else if line.event == Event::Entries {
        Some(Item::Defines(line))
    } else {
        None
    }
}

/// Applies a judged item, in journal order: counts, lines to journal, removals (with `apply`)
/// and the report.
fn settle(
    ctx: &Ctx,
    found: &mut CatchUp<'_>,
    item: Item,
    judged: Judged,
    apply: bool,
    report: Option<&mut Builder>,
) -> Result<(), MigrateError> {
    match (item, judged) {
        (
            Item::Listed {
                at,
                index,
                line,
                trust,
            },
            Judged::Listed(verdict),
        ) => {
            let stays = matches!(
                verdict,
                Verdict::UpToDate | Verdict::Restamped(_) | Verdict::Conflict(..)
            );
            if stays {
                super::earlier::note_foreign(&line, &mut found.foreign_memory);
            }
            if ctx.target == super::Target::Head && stays {
                // Runs share these files: most are in the set already.
                for record in line.memory.iter().flatten() {
                    if is_shared(&record.path) && !found.wanted.contains(&record.path) {
                        found.wanted.insert(record.path.clone());
                    }
                }
            }
            settle_listed(found, (at, index, trust.in_flight), line, verdict, report);
        }
        (Item::Gone(line), Judged::Gone(Some(gone))) => {
            return settle_gone(ctx, found, *line, gone, apply)
        }
        (Item::Defines(line), _) => {
            if let (Some(report), Some(key), Some(counts)) = (report, &line.key, &line.entries) {
                report.define(key, counts);
            }
        }
        _ => {}
    }
    Ok(())
}

/// How many lines the pool judges at a time.
const BATCH: usize = 1024;

/// Notes what a line tells of the shared files this shard wrote (and which of them a V2 run
/// wrote) and of the passes so far.
fn remember(
    line: &Line,
    ours: &mut HashMap<String, HashSet<String>>,
    from_v2: &mut HashSet<String>,
    sessions: &mut Vec<(i64, bool)>,
) {
    if matches!(
        line.event,
        Event::Completed | Event::Conflict | Event::Copied
    ) {
        let v2 = line.class == Some(crate::Class::AlreadyCurrent);
        for record in line.memory.iter().flatten().filter(|r| is_shared(&r.path)) {
            ours.entry(record.path.clone())
                .or_default()
                .insert(record.hash.clone());
            if v2 && !from_v2.contains(&record.path) {
                from_v2.insert(record.path.clone());
            }
        }
    }
    match line.event {
        Event::Session => sessions.push((line.read_at.unwrap_or(0), false)),
        Event::Copied => {
            if let Some(last) = sessions.last_mut() {
                last.1 = true;
            }
        }
        _ => {}
    }
}

/// Counts the verdict on the run at place `at`, judged by the journal's line `index` (and
/// whether a pass stopped while converting it again); a run found up to date keeps its line,
/// which goes to the report, a conflict gets a `conflict` line, and a run converted again
/// hands its earlier outputs on.
fn settle_listed(
    found: &mut CatchUp<'_>,
    (at, index, in_flight): (usize, u64, bool),
    line: Box<Line>,
    verdict: Verdict,
    report: Option<&mut Builder>,
) {
    let run = line.run.as_deref().unwrap_or_default();
    let counts = &mut found.counts;
    match verdict {
        Verdict::Restamped(stamps) if line.event == Event::Completed => {
            counts.up_to_date += 1;
            found.done[at] = true;
            // Journaled again with the stamps found, so that later passes need not read the
            // outputs; the verify pass reads this line and adds it to the report.
            let mut again = *line;
            again.outputs = Some(stamps);
            found.lines.push(again);
        }
        Verdict::UpToDate | Verdict::Restamped(_) => {
            counts.up_to_date += 1;
            found.done[at] = true;
            if line.event == Event::Completed {
                found.read.completed += 1;
            }
            if let Some(report) = report {
                if let Err(problem) = report.add(&line) {
                    found
                        .read
                        .problems
                        .push(format!("the journal's line {index}: {problem}"));
                }
            }
        }
        Verdict::Changed | Verdict::Retried => {
            let kind = if matches!(verdict, Verdict::Changed) {
                counts.changed += 1;
                "changed"
            } else {
                counts.retried += 1;
                "retried"
            };
            counts.note(kind, run);
            // A `conflict` line's outputs are someone else's: never removed.
            if line.event == Event::Completed {
                // A run in flight when a pass stopped may have written its outputs since its
                // line: their stamps prove nothing.
                let outputs = super::earlier::own_outputs_stamped(&line, !in_flight);
                found.earlier.insert(at, outputs);
            }
        }
        Verdict::New => {
            counts.new += 1;
            counts.note("new", run);
        }
        Verdict::Conflict(file, inputs_changed) => {
            counts.conflicts += 1;
            counts.note("conflicts", run);
            found.done[at] = true;
            counts.kept.push(file.clone());
            found.lines.push(conflict(*line, &file, inputs_changed));
        }
    }
}

/// A run the journal has a final line for that is no longer in SRC (or in this shard of it):
/// its outputs are removed (with `apply`) unless someone else changed them.
fn settle_gone(
    ctx: &Ctx,
    found: &mut CatchUp<'_>,
    line: Line,
    gone: Gone,
    apply: bool,
) -> Result<(), MigrateError> {
    let run = line.run.clone().unwrap_or_default();
    match gone {
        Gone::Conflict(file) => {
            found.counts.conflicts += 1;
            found.counts.note("conflicts", &run);
            found.counts.kept.push(file.clone());
            found.lines.push(conflict(line, &file, true));
            return Ok(());
        }
        Gone::Removed(written) => {
            if apply && written {
                let memory = remove_own_outputs(ctx, &line)?;
                found.gone_memory.extend(memory);
            }
        }
    }
    found.counts.removed += 1;
    found.counts.note("removed", &run);
    found.lines.push(Line {
        event: Event::Removed,
        run: Some(run),
        id: line.id,
        ..Line::default()
    });
    Ok(())
}

/// The time windows of passes that stopped before journaling their copied documents (killed,
/// or failed): from a pass's start to the next one's (or now). Such a pass may have written
/// shared files whose bytes its journal does not record.
fn unfinished_windows(sessions: &[(i64, bool)]) -> Vec<(i64, i64)> {
    sessions
        .iter()
        .enumerate()
        .filter(|(_, (_, finished))| !finished)
        .map(|(i, (start, _))| {
            let end = sessions.get(i + 1).map_or(i64::MAX, |(next, _)| *next);
            (*start, end)
        })
        .collect()
}

/// A HEAD store's shared files this shard wrote: one whose bytes are no longer any this shard
/// wrote, and which still is a document, was written by someone else (the SDK saving a plan or
/// end user after the cut-over) and is kept; one that is still ours, whose file left SRC and
/// which no run that stays wrote, is removed, as a fresh migration would not write it. A file
/// whose stamp is the one its last copy left is ours without a read. The files are looked at
/// on `pool`.
fn review_shared(
    ctx: &Ctx,
    dst: &Dir,
    shared: &Shared<'_>,
    overwrite_changed: bool,
    apply: bool,
    pool: &rayon::ThreadPool,
    found: &mut CatchUp,
) -> Result<(), MigrateError> {
    use rayon::prelude::*;
    let mut paths: Vec<&String> = shared.ours.keys().collect();
    paths.sort();
    let states: Vec<SharedState> = pool.install(|| {
        paths
            .par_iter()
            .map(|path| shared.state(ctx, dst, path, &found.wanted))
            .collect()
    });
    let elsewhere = std::sync::OnceLock::new();
    for (path, state) in paths.into_iter().zip(states) {
        match state {
            SharedState::Settled => {}
            SharedState::Orphan(_)
                if shared.from_v2.contains(path) && used_elsewhere(ctx, pool, &elsewhere, path) => {
            }
            SharedState::Foreign(bytes) => {
                let changed_at = dst
                    .stamp(Path::new(path))
                    .ok()
                    .flatten()
                    .map_or(0, |stamp| stamp.ctime);
                let by_a_stopped_pass = shared
                    .unfinished
                    .iter()
                    .any(|(start, end)| (*start..*end).contains(&changed_at));
                if !overwrite_changed && !by_a_stopped_pass && planrun_legacy::parse(&bytes).is_ok()
                {
                    found.counts.conflicts += 1;
                    found.counts.note("conflicts", path);
                    found.counts.kept.push(path.clone());
                    found.kept.insert(path.clone());
                }
            }
            SharedState::Orphan(bytes) => {
                if apply {
                    let full = ctx.dst.join(path);
                    std::fs::remove_file(&full).map_err(|e| io_err("cannot remove", &full)(e))?;
                }
                found.counts.removed += 1;
                found.counts.note("removed", path);
                found.lines.push(Line {
                    event: Event::Removed,
                    memory: Some(vec![MemoryRecord {
                        path: path.clone(),
                        bytes: bytes.len() as u64,
                        hash: content_hash(&bytes),
                    }]),
                    ..Line::default()
                });
            }
        }
    }
    Ok(())
}

/// Whether a V2 run of another shard may still use the plan file `path`, which a V2 run of
/// this shard wrote, no run of this shard that stays wrote and SRC does not have: a V2 run
/// file of another shard names the plan in its first bytes, or some run file there shows no
/// plan at all (the file is kept then, to be safe). A legacy run's plan file is SRC's, so a
/// legacy run naming the plan does not count. Always `false` for a pass over the whole store.
fn used_elsewhere(
    ctx: &Ctx,
    pool: &rayon::ThreadPool,
    plans: &std::sync::OnceLock<Option<HashSet<Vec<u8>>>>,
    path: &str,
) -> bool {
    let Some(id) = path
        .strip_suffix(".json")
        .filter(|id| id.starts_with("plan-"))
    else {
        return false;
    };
    if ctx.mine.len() == ctx.runs.len() {
        return false;
    }
    plans
        .get_or_init(|| v2_plans_elsewhere(ctx, pool))
        .as_ref()
        .is_none_or(|plans| plans.contains(id.as_bytes()))
}

/// The plan ids the V2 run files of the other shards name in their first bytes; `None` when
/// one of those files shows neither a V2 run's plan nor a legacy run's `plan_id`.
fn v2_plans_elsewhere(ctx: &Ctx, pool: &rayon::ThreadPool) -> Option<HashSet<Vec<u8>>> {
    use rayon::prelude::*;
    let others: Vec<usize> = (0..ctx.runs.len())
        .filter(|at| ctx.mine.binary_search(at).is_err())
        .collect();
    let named: Option<Vec<Option<Vec<u8>>>> = pool.install(|| {
        others
            .par_iter()
            .map_init(
                || [0u8; super::order::HEAD],
                |buf, &at| {
                    let head = ctx.store.first_bytes(&ctx.runs.get(at), buf)?;
                    match super::order::v2_plan_id(head) {
                        Some(id) => Some(Some(id.to_vec())),
                        None => super::order::plan_id(head).map(|_| None),
                    }
                },
            )
            .collect()
    });
    Some(named?.into_iter().flatten().collect())
}

/// What the journal says of a HEAD store's shared files.
struct Shared<'j> {
    /// The bytes this shard ever wrote into each, by path and hash.
    ours: &'j HashMap<String, HashSet<String>>,
    /// Those a V2 run wrote.
    from_v2: &'j HashSet<String>,
    /// The windows of passes that stopped before journaling their copies.
    unfinished: &'j [(i64, i64)],
    /// Each document's last copy (empty unless every pass synced its outputs).
    copies: &'j HashMap<String, LastCopy>,
}

/// A shared file of DST as [`review_shared`] finds it.
enum SharedState {
    /// Ours with its file still in SRC, or gone from DST: nothing to do.
    Settled,
    /// Bytes this shard never wrote.
    Foreign(Vec<u8>),
    /// Ours, but its file left SRC.
    Orphan(Vec<u8>),
}

impl Shared<'_> {
    /// The state of DST's shared file `path`; `wanted` are the files runs that stay wrote.
    fn state(
        &self,
        ctx: &Ctx,
        dst: &Dir,
        path: &str,
        wanted: &HashSet<String, super::Fast>,
    ) -> SharedState {
        let relative = Path::new(path);
        let held = self
            .copies
            .get(path)
            .is_some_and(|copy| copy.left(dst, relative, ctx.started));
        if held && ctx.src.join(path).exists() {
            return SharedState::Settled;
        }
        let Ok(bytes) = dst.read_nofollow(relative) else {
            return SharedState::Settled;
        };
        if !self.ours[path].contains(&content_hash(&bytes)) {
            SharedState::Foreign(bytes)
        } else if wanted.contains(path) || ctx.src.join(path).exists() {
            SharedState::Settled
        } else {
            SharedState::Orphan(bytes)
        }
    }
}

/// The verdict on a run of SRC with a final journal line, from stats of its inputs and
/// outputs (and reads of the outputs whose stamps do not prove them intact).
fn judge_listed(
    ctx: &Ctx,
    dst: &Dir,
    line: &Line,
    overwrite_changed: bool,
    trust: Trust,
    shared: &SharedFiles,
) -> Verdict {
    match line.event {
        Event::Completed | Event::Conflict => {}
        Event::Removed => return Verdict::New,
        _ => return Verdict::Retried,
    }
    let run = line.run.as_deref().unwrap_or_default();
    // Without the moment, every unhashed input counts as racily clean.
    let read_at = line.read_at.unwrap_or(i64::MIN);
    let src = ctx.store.files();
    let inputs_changed = line.inputs.iter().flatten().any(|input| {
        let own = input.path == run || !is_shared(&input.path);
        let now = if own {
            src.stamp(Path::new(&input.path)).ok()
        } else {
            shared.stamp(src, &input.path)
        };
        input_changed(now, input, read_at, || {
            if own {
                content_now(src, &input.path)
            } else {
                shared.content(src, &input.path)
            }
        })
    });
    match outputs(ctx, dst, line, trust.stamps) {
        // A pass that stopped while converting the run again may have written it.
        Outputs::Changed(_) if trust.in_flight => Verdict::Retried,
        Outputs::Changed(file) if !overwrite_changed => Verdict::Conflict(file, inputs_changed),
        Outputs::Changed(_) => Verdict::Changed,
        _ if inputs_changed => Verdict::Changed,
        Outputs::Damaged => Verdict::Retried,
        Outputs::Intact => Verdict::UpToDate,
        Outputs::Restamped(stamps) => Verdict::Restamped(stamps),
    }
}

/// The verdict on a run gone from SRC whose last line is `line`: none when a pass removed its
/// outputs already.
fn judge_gone(ctx: &Ctx, dst: &Dir, line: &Line) -> Option<Gone> {
    match line.event {
        Event::Removed => None,
        Event::Completed | Event::Conflict => Some(match outputs(ctx, dst, line, false) {
            Outputs::Changed(file) => Gone::Conflict(file),
            _ => Gone::Removed(true),
        }),
        _ => Some(Gone::Removed(false)),
    }
}

/// Whether `input` differs from what the journal recorded: another stamp, or a file that
/// appeared or vanished. An equal stamp that was racily clean when it was recorded proves
/// nothing: then the input's content, hashed by `content` as it is now (`None`: it cannot be
/// read whole), must be the one journaled, on every pass while the stamp holds. A racily clean
/// input journaled without its hash (an earlier build of planrun kept none) counts as changed.
pub(super) fn input_changed(
    now: Option<Option<Stamp>>,
    input: &Input,
    read_at: i64,
    content: impl FnOnce() -> Option<String>,
) -> bool {
    match now {
        Some(now) if now == input.stamp => match &input.hash {
            Some(hash) => content().as_ref() != Some(hash),
            None => input.stamp.is_some_and(|s| s.racy(read_at)),
        },
        _ => true,
    }
}

/// The content hash of the file `path` of `src` as it is now, `None` when it cannot be read
/// whole (gone, or changed while read).
pub(super) fn content_now(src: &Dir, path: &str) -> Option<String> {
    let (bytes, _) = src.read_stamped(Path::new(path)).ok()?;
    Some(content_hash(&bytes))
}

/// SRC's shared files (plans, end users) as this pass found them: each one's stamp, and its
/// content hash when a racily clean input asks for it, is taken once, not once for every run
/// that names the file.
#[derive(Default)]
pub(super) struct SharedFiles {
    stamps: Mutex<HashMap<String, Option<Option<Stamp>>, Fast>>,
    contents: Mutex<HashMap<String, Option<String>, Fast>>,
}

impl SharedFiles {
    /// The stamp of `path` in `src` (`Some(None)` for a missing file, `None` when it cannot be
    /// taken), taken on the first call for the path.
    fn stamp(&self, src: &Dir, path: &str) -> Option<Option<Stamp>> {
        once_per_path(&self.stamps, path, || src.stamp(Path::new(path)).ok())
    }

    /// [`content_now`] of `path`, read on the first call for the path.
    fn content(&self, src: &Dir, path: &str) -> Option<String> {
        once_per_path(&self.contents, path, || content_now(src, path))
    }
}

/// What `found` gives for `path`, from `known` when an earlier call found it. The lock is not
/// held while `found` runs (a stat or a read), so two workers may both take it the first time.
fn once_per_path<T: Clone>(
    known: &Mutex<HashMap<String, T, Fast>>,
    path: &str,
    found: impl FnOnce() -> T,
) -> T {
    if let Some(known) = lock(known).get(path) {
        return known.clone();
    }
    let found = found();
    lock(known).insert(path.to_owned(), found.clone());
    found
}

/// Whether the run's own outputs still have the stamps they had when written, so they are the
/// bytes the journal records without reading them; `false` when a stamp differs, is missing or
/// is racily clean against `now` (then they are read).
pub(super) fn outputs_unchanged(dst: &Dir, line: &Line, now: i64) -> bool {
    let Some(outputs) = &line.outputs else {
        return false;
    };
    !outputs.is_empty()
        && outputs.iter().all(|output| {
            let Some(stamp) = output.stamp else {
                return false;
            };
            !stamp.racy(now)
                && dst
                    .stamp(Path::new(&output.path))
                    .is_ok_and(|found| found == Some(stamp))
        })
}

/// What a catch-up may take on trust for one run.
#[derive(Clone, Copy)]
struct Trust {
    /// A pass stopped while converting the run again: its outputs may be newer than its line.
    in_flight: bool,
    /// Outputs whose stamps still hold are the bytes written (no pass ran under `--no-sync`).
    stamps: bool,
}

/// The state of the outputs a completed line names; with `stamps`, outputs whose stamps still
/// hold are not read.
fn outputs(ctx: &Ctx, dst: &Dir, line: &Line, stamps: bool) -> Outputs {
    let Some(id) = line.id.as_deref() else {
        return Outputs::Damaged;
    };
    if stamps && outputs_unchanged(dst, line, ctx.started) {
        return Outputs::Intact;
    }
    // Taken before the reads: when these find the bytes written, the files had these stamps.
    let found = stamps.then(|| stamps_now(dst, line, ctx.started)).flatten();
    match outputs_read(ctx, dst, line, id) {
        Outputs::Intact => found.map_or(Outputs::Intact, Outputs::Restamped),
        state => state,
    }
}

/// The stamps of the outputs `line` names as they are now, unless one is missing or racily
/// clean against `now` (or the line names none).
fn stamps_now(dst: &Dir, line: &Line, now: i64) -> Option<Vec<Input>> {
    let outputs = line
        .outputs
        .as_ref()
        .filter(|outputs| !outputs.is_empty())?;
    outputs
        .iter()
        .map(|output| {
            let stamp = dst.stamp(Path::new(&output.path)).ok().flatten()?;
            (!stamp.racy(now)).then(|| Input {
                path: output.path.clone(),
                stamp: Some(stamp),
                hash: None,
            })
        })
        .collect()
}

/// The state of the outputs `line` names, by reading them; `id` is the run's V2 id.
fn outputs_read(ctx: &Ctx, dst: &Dir, line: &Line, id: &str) -> Outputs {
    let name = planrun_wire::join!(id, ".json");
    let Ok(run) = dst.read_nofollow(Path::new(&name)) else {
        return Outputs::Damaged;
    };
    if Some(run.len() as u64) != line.bytes_out || Some(content_hash(&run)) != line.hash {
        return match check_output(ctx, &run, id) {
            Ok(()) => Outputs::Changed(name),
            Err(_) => Outputs::Damaged,
        };
    }
    let mut state = Outputs::Intact;
    // Shared files are judged once for the whole store (see `review_shared`).
    for record in line.memory.iter().flatten().filter(|r| !is_shared(&r.path)) {
        let Ok(content) = dst.read_nofollow(Path::new(&record.path)) else {
            state = Outputs::Damaged;
            continue;
        };
        if content.len() as u64 == record.bytes && content_hash(&content) == record.hash {
            continue;
        }
        // A file of planrun's own (a residue) is damaged when it differs; a file the SDK reads
        // (agent memory, a HEAD store's plan or end user) that still is a document was
        // written by someone else.
        let planrun_s = record.path.starts_with(super::CONTROL_DIR);
        if !planrun_s && planrun_legacy::parse(&content).is_ok() {
            return Outputs::Changed(record.path.clone());
        }
        state = Outputs::Damaged;
    }
    state
}

/// The `conflict` line that keeps `completed`'s record (so a later pass judges the run again)
/// and names the file someone else changed.
fn conflict(completed: Line, file: &str, inputs_changed: bool) -> Line {
    let also = if inputs_changed {
        " (the run changed in SRC too)"
    } else {
        ""
    };
    Line {
        event: Event::Conflict,
        error: Some(ErrorRecord {
            file: file.to_owned(),
            pointer: None,
            line: 0,
            column: 0,
            kind: "conflict".to_owned(),
            message: format!(
                "someone else changed this output in DST since planrun wrote it{also}: it is kept; \
                 pass --overwrite-changed to replace it"
            ),
        }),
        ..completed
    }
}

/// Removes the outputs that belong to the run of `line` alone: its document and its residue;
/// never a HEAD store's shared plan or end-user file. Returns its agent-memory copies
/// (`<id>/…`), which another run may record too (a value can name another run's memory): they
/// are removed once every line is read ([`remove_gone_memory`]).
fn remove_own_outputs(ctx: &Ctx, line: &Line) -> Result<Vec<String>, MigrateError> {
    let (memory, own): (Vec<String>, Vec<String>) = super::earlier::own_outputs(line)
        .into_iter()
        .partition(|path| super::earlier::is_memory(path));
    for path in own {
        super::earlier::remove_if_there(&ctx.dst.join(&path))?;
    }
    Ok(memory)
}

/// Removes the agent-memory copies of the runs gone from SRC that no run that stays records
/// (in this shard's journal, or in another shard's), then their directories left empty.
fn remove_gone_memory(ctx: &Ctx, found: &CatchUp) -> Result<(), MigrateError> {
    let mut dirs = std::collections::BTreeSet::new();
    for path in &found.gone_memory {
        let recorded = |others: &super::earlier::OtherJournals| others.record(path);
        if found.foreign_memory.contains(path) || found.others.as_ref().is_some_and(recorded) {
            continue;
        }
        super::earlier::remove_if_there(&ctx.dst.join(path))?;
        dirs.extend(path.rsplit_once('/').map(|(dir, _)| dir));
    }
    for dir in dirs {
        // Only when empty: another run's agent memory may be filed there too.
        let _ = std::fs::remove_dir(ctx.dst.join(dir));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const READ_AT: i64 = 1_700_000_000_123_456_789;

    fn input(mtime: i64, hash: Option<&str>) -> Input {
        Input {
            path: "run.json".to_owned(),
            stamp: Some(Stamp {
                len: 2,
                mtime,
                ctime: mtime,
                ino: 7,
            }),
            hash: hash.map(str::to_owned),
        }
    }

    /// The content closure of an input whose content must not be read.
    fn unread() -> Option<String> {
        panic!("the content was read, though the stamp decides")
    }

    #[test]
    fn a_settled_input_is_judged_by_its_stamp_alone() {
        let settled = input(READ_AT - 1_000_000_000, None);
        assert!(!input_changed(
            Some(settled.stamp),
            &settled,
            READ_AT,
            unread
        ));
        let other = Stamp {
            len: 3,
            ..settled.stamp.unwrap()
        };
        assert!(input_changed(Some(Some(other)), &settled, READ_AT, unread));
        assert!(input_changed(Some(None), &settled, READ_AT, unread), "gone");
        assert!(input_changed(None, &settled, READ_AT, unread), "no stamp");
        let never_saved = Input {
            stamp: None,
            ..settled.clone()
        };
        assert!(!input_changed(Some(None), &never_saved, READ_AT, unread));
        assert!(input_changed(
            settled.stamp.map(Some),
            &never_saved,
            READ_AT,
            unread
        ));
    }

    #[test]
    fn a_racily_clean_input_is_compared_by_content() {
        let racy = input(READ_AT, Some("00000000000000aa"));
        let same = || Some("00000000000000aa".to_owned());
        let other = || Some("00000000000000bb".to_owned());
        assert!(!input_changed(Some(racy.stamp), &racy, READ_AT, same));
        assert!(input_changed(Some(racy.stamp), &racy, READ_AT, other));
        assert!(input_changed(Some(racy.stamp), &racy, READ_AT, || None));
        // Journaled without its hash (an earlier build): it counts as changed.
        let unhashed = input(READ_AT, None);
        assert!(input_changed(
            Some(unhashed.stamp),
            &unhashed,
            READ_AT,
            unread
        ));
    }
}
