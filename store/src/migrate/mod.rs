//! The batch engine behind `planrun migrate`: a whole `DiskFileStorage` store to a new
//! directory of `PlanRunV2` files, in parallel, with bounded memory, crash-safe and resumable.
//!
//! * **Same bytes as `convert`.** Every run goes through [`crate::convert_entry`],
//!   which `planrun convert` reaches through `convert_run`, so a batch gives the bytes of singles.
//! * **SRC is never written**: it is only listed and read, and DST may not be inside it.
//! * **Bounded memory.** Only the sorted list of run *names* is held, with the order to convert
//!   them in (a place and a mark a run); runs are converted in chunks of [`Options::chunk_size`]
//!   (256 by default) on a rayon pool whose threads take the runs in order, one at a time (the
//!   runs of one plan together), each writing its own outputs: a worker holds one run's
//!   documents, and a finished run only its journal line until its chunk is journaled.
//! * **Runs of one plan together.** Runs are converted in the order of their plan ids (read
//!   from the first bytes of each run file), so each plan is read and converted once for all
//!   its runs; the order changes no output, and the journal and report name each run.
//! * **Atomic outputs.** Every file is written unnamed (`O_TMPFILE`) in its final directory and
//!   linked under its name once complete; where that cannot be done, it is written to a hidden
//!   temp file (`.tmp-planrun-<shard>-<pid>-<n>`) renamed into place ((`write_atomic`)).
//! * **Group commit.** Per chunk: the `started` lines (one write), the conversions and atomic
//!   writes, then one `syncfs(2)` on DST's file system, then the `completed`/`failed` lines (one
//!   write). The sync and the journal writes happen on a committer thread, chunk after chunk in
//!   order, while the workers convert the next chunk, so conversion never waits for the disk (a
//!   few chunks run ahead at most); chunks that finish during a sync share the next one.
//!   With `--durable`: each output is fsynced before it gets its name, each touched directory
//!   after, and the journal after every append. With `--no-sync`: no sync at all.
//! * **Resume** brings DST up to date with SRC as it is now (see [`CatchUpCounts`]): a run is skipped
//!   only when its last journal line is `completed`, the files it was converted from still have
//!   their journaled stamps, and its outputs are still the journaled bytes; runs gone from SRC
//!   have their outputs removed, and outputs someone else changed are kept. Stale temp files of
//!   the shard are removed first; a torn journal tail is cut off.
//! * **Verify.** At the end every output this pass wrote is re-read with a fresh reader (size and
//!   hash against the journal, strict serde into `PlanRunV2`, the id), the outputs of earlier
//!   passes are those the catch-up found intact, and the journal's counts must match the shard's
//!   run list.
//!
//! What a crash can lose. **SIGKILL**: nothing that was journaled `completed` (its output was
//! in place under its name before the line was written, and the page cache survives the
//! process); the runs of the chunks in flight are redone on resume; their unnamed files vanish
//! with the process, and temp files and a torn last journal line are cleaned up. **Power loss**
//! (default mode): every run whose `completed` line survives has its output on disk, because
//! the chunk's `syncfs` came before that line was written; the journal lines written since the
//! last `syncfs` may be lost, and those runs are redone with the chunks in flight (a few at
//! most); an output that reached the disk only in part is caught by the
//! size/hash check and redone. With `--durable` a `completed` line, once written, is itself on
//! disk. Both rely on the file system and the disk honouring `syncfs`/`fsync`. With
//! `--no-sync` a `completed` line may reach the disk before its output: resume's size/hash check
//! redoes every such run, and a journal line the crash damaged is cut off with all after it.

mod catch_up;
mod feed;
pub mod head;
pub mod journal;
mod order;
pub mod report;

use std::collections::BTreeSet;
use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use planrun_v2::check::Checker;

pub use self::catch_up::CatchUpCounts;
use self::journal::{Event, Head, Line, MemoryRecord, OpenError, Reader, Writer, JOURNAL_FORMAT};
use self::order::Ordered;
use self::report::{BatchReport, Builder};
use crate::fsio::{shard_temp_prefix, Dir};
use crate::loss::SharedCounts;
use crate::{
    convert_entry, fnv1a64, list_store, run_key, safe_component, Conflicts, DiskSink, DiskStore,
    Doc, Failure, MemoryFile, Names, References, ResolvedConfig, RunResult, Sink, Store,
};

/// DST's bookkeeping directory: journals and reports.
pub const CONTROL_DIR: &str = ".planrun";

/// The directory under [`CONTROL_DIR`] of a HEAD store's residue (`--to r6`).
pub const RESIDUE_DIR: &str = "residue";

/// The default number of runs per chunk.
pub const DEFAULT_CHUNK_SIZE: usize = 256;

/// The tool and version recorded in a journal header; a resume needs the same.
pub const TOOL: &str = concat!("planrun ", env!("CARGO_PKG_VERSION"));

/// One shard of a store: the runs whose FNV-1a 64 file-name hash mod `count` is `index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// `0..count`.
    pub index: u64,
    /// How many shards.
    pub count: u64,
}

impl Shard {
    /// Whether the run file `name` belongs to this shard.
    pub fn owns(&self, name: &str) -> bool {
        fnv1a64(name.as_bytes()) % self.count == self.index
    }

    /// `i-of-n`, as in file names.
    pub fn tag(&self) -> String {
        format!("{}-of-{}", self.index, self.count)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| format!("expected I/N (e.g. 0/4), got {text:?}"))?;
        let index: u64 = i
            .trim()
            .parse()
            .map_err(|_| format!("bad shard index {i:?}"))?;
        let count: u64 = n
            .trim()
            .parse()
            .map_err(|_| format!("bad shard count {n:?}"))?;
        if count == 0 || index >= count {
            return Err(format!(
                "the shard index must be below the shard count (0 ≤ I < N), got {index}/{count}"
            ));
        }
        Ok(Shard { index, count })
    }
}

fn shard_tag(shard: Option<Shard>) -> String {
    shard.map_or_else(|| "all".to_owned(), |s| s.tag())
}

/// `journal.jsonl`, or `journal-i-of-n.jsonl` for a shard.
pub fn journal_name(shard: Option<Shard>) -> String {
    match shard {
        Some(s) => format!("journal-{}.jsonl", s.tag()),
        None => "journal.jsonl".to_owned(),
    }
}

/// `report.json`, or `report-i-of-n.json` for a shard.
pub fn report_name(shard: Option<Shard>) -> String {
    match shard {
        Some(s) => format!("report-{}.json", s.tag()),
        None => "report.json".to_owned(),
    }
}

/// What a migration writes into DST.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Target {
    /// One `PlanRunV2` file per run (and the agent-memory files it refers to).
    #[default]
    V2,
    /// A `DiskFileStorage` store the SDK at HEAD (wire version R6) loads completely: each run,
    /// plan, end user and agent-memory file exactly as HEAD writes it, and
    /// `.planrun/residue/<run id>.json` for what HEAD cannot hold. `--to r6` on the command line.
    Head,
}

impl Target {
    /// The name in journals and on the command line (`v2`, `r6`).
    pub fn as_str(self) -> &'static str {
        match self {
            Target::V2 => "v2",
            Target::Head => "r6",
        }
    }
}

/// When a migration makes what it wrote durable, that is, able to survive an OS crash or a power
/// loss (a killed process loses nothing journaled in any mode: the page cache outlives it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// `--no-sync`: never; outputs and journal are left to the kernel's write-back, as `cp -r`
    /// leaves its copy. After an OS crash a `completed` line may name an output that did not
    /// reach the disk; `--resume` re-hashes every such output and redoes the ones that differ.
    None,
    /// The default: one `syncfs(2)` per group of finished chunks before their `completed` lines
    /// are written, and one at the end.
    #[default]
    Chunks,
    /// `--durable`: each output fsynced before it gets its name, each directory written into
    /// fsynced before the chunk is journaled, and the journal after every append.
    Files,
}

impl Durability {
    /// The mode of the `--durable` and `--no-sync` flags; `None` when both are given, since one
    /// fsyncs every file and the other nothing.
    pub fn from_flags(durable: bool, no_sync: bool) -> Option<Self> {
        match (durable, no_sync) {
            (true, true) => None,
            (true, false) => Some(Durability::Files),
            (false, true) => Some(Durability::None),
            (false, false) => Some(Durability::Chunks),
        }
    }

    /// Whether every file is fsynced on its own (`--durable`).
    pub fn per_file(self) -> bool {
        self == Durability::Files
    }
}

/// What to migrate, and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// The legacy store; never written.
    pub src: PathBuf,
    /// The destination directory.
    pub dst: PathBuf,
    /// Worker threads (at least 1).
    pub jobs: usize,
    /// Continue the migration DST's journal records (or start one if there is none).
    pub resume: bool,
    /// Convert and verify in memory; write nothing.
    pub dry_run: bool,
    /// Only this shard of the store.
    pub shard: Option<Shard>,
    /// When outputs are made durable.
    pub durability: Durability,
    /// Runs per chunk.
    pub chunk_size: usize,
    /// The config every run gets.
    pub config: ResolvedConfig,
    /// What DST becomes.
    pub target: Target,
    /// On a resume, replace an output someone else changed in DST since it was written (by
    /// default it is kept and reported as a conflict).
    pub overwrite_changed: bool,
}

/// Progress notifications (a progress bar, or nothing), and the one way to stop a migration
/// early: [`Progress::cancelled`].
pub trait Progress: Sync {
    /// The runs to convert are being ordered by plan, which reads the start of each run file.
    fn ordering(&self) {}
    /// Conversion starts: `todo` runs to convert, `skipped` already done by an earlier session.
    fn begin(&self, _todo: u64, _skipped: u64) {}
    /// `n` more runs are done.
    fn advance(&self, _n: u64) {}
    /// The verify pass starts.
    fn verifying(&self) {}
    /// Everything is done.
    fn end(&self) {}
    /// Whether to stop: asked before each chunk is converted and verified. Once it says yes,
    /// the chunks already converted are committed and journaled, and the migration returns
    /// [`MigrateError::Cancelled`], leaving DST as a crash would, to be continued with
    /// `--resume`; a dry run just stops. The default never stops (the CLI stops on SIGINT,
    /// which ends the process).
    fn cancelled(&self) -> bool {
        false
    }
}

impl Progress for () {}

/// What a migration did.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The report (also written to DST).
    pub report: BatchReport,
    /// Whether an earlier session was continued.
    pub resumed: bool,
    /// Runs an earlier session had completed (skipped, their outputs verified).
    pub skipped: u64,
    /// Stale temp files removed on resume.
    pub temps_removed: usize,
    /// Whether a torn journal tail was cut off on resume.
    pub journal_cut: bool,
    /// The journal (`None` for a dry run).
    pub journal: Option<PathBuf>,
    /// The report file in DST (`None` for a dry run).
    pub report_file: Option<PathBuf>,
}

/// Why a migration stopped (exit code 2). Bad runs are not errors: they are in the report.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// The arguments or DST do not allow a migration.
    #[error("{0}")]
    Usage(String),
    /// The file system failed.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// Where.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The verify pass found outputs that do not match the journal.
    #[error("verify failed for {count} output(s): {}", first.join("; "))]
    Verify {
        /// How many.
        count: usize,
        /// The first few problems.
        first: Vec<String>,
    },
    /// The worker pool could not start.
    #[error("cannot start {0}")]
    Pool(#[from] rayon::ThreadPoolBuildError),
    /// [`Progress::cancelled`] asked to stop; what was journaled stands, and `--resume` continues.
    #[error("cancelled; what was done is journaled, and --resume continues it")]
    Cancelled,
}

/// Why SRC, which holds no run file, is not a store: what a store holds, what SRC holds, and a
/// directory below it (two levels at most, symlinks not followed) that does hold run files.
fn no_run_files(src: &Path) -> String {
    let patterns = crate::names::RUN_PREFIXES
        .map(|p| format!("{p}*.json"))
        .join(", ");
    let (dirs, json) = entries(src)
        .iter()
        .fold((0, 0), |(d, j), (name, is_dir)| match is_dir {
            true => (d + 1, j),
            false if name.ends_with(".json") => (d, j + 1),
            false => (d, j),
        });
    let mut said = format!(
        "no run files ({patterns}) in SRC {}; it holds {dirs} director{} and {json} JSON file{}",
        src.display(),
        if dirs == 1 { "y" } else { "ies" },
        if json == 1 { "" } else { "s" },
    );
    if let Some(store) = store_below(src, 2) {
        said.push_str(&format!(": did you mean {}?", store.display()));
    }
    said
}

/// The entries of `dir` that are directories or regular files (name, is it a directory), sorted;
/// none when it cannot be read.
fn entries(dir: &Path) -> Vec<(String, bool)> {
    let mut found: Vec<(String, bool)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let kind = e.file_type().ok()?;
            let name = e.file_name().into_string().ok()?;
            (kind.is_dir() || kind.is_file()).then_some((name, kind.is_dir()))
        })
        .collect();
    found.sort();
    found
}

/// The first directory below `dir`, at most `depth` levels down and nearest first, that holds a
/// run file (of the first thousand directories of each level).
fn store_below(dir: &Path, depth: usize) -> Option<PathBuf> {
    let mut level = vec![dir.to_owned()];
    for _ in 0..depth {
        let mut next = Vec::new();
        for parent in &level {
            for (name, is_dir) in entries(parent) {
                if is_dir {
                    next.push(parent.join(name));
                }
            }
        }
        // A hint, not a search: a huge tree is not walked.
        next.truncate(1000);
        if let Some(store) = next.iter().find(|d| {
            entries(d)
                .iter()
                .any(|(n, f)| !f && crate::names::is_run_file_name(n))
        }) {
            return Some(store.clone());
        }
        level = next;
    }
    None
}

fn io_err(what: &'static str, path: &Path) -> impl FnOnce(io::Error) -> MigrateError {
    let path = path.to_owned();
    move |source| MigrateError::Io { what, path, source }
}

/// Everything a worker needs.
struct Ctx<'a> {
    src: PathBuf,
    dst: PathBuf,
    runs: &'a Names,
    /// The places of the shard's runs in `runs`, ascending.
    mine: &'a [usize],
    /// With `--to r6`: shared files someone else changed in DST, which this pass keeps.
    kept: std::collections::HashSet<String>,
    /// When this pass started (ns since the epoch): a file stamped within the racy window of it
    /// is read, not trusted by its stamp.
    started: i64,
    conflicts: Conflicts,
    config: &'a ResolvedConfig,
    durability: Durability,
    dry_run: bool,
    target: Target,
    store: DiskStore,
    sink: DiskSink,
    refs: References,
    checker: Checker,
}

/// Migrates a store (see the module docs).
pub fn migrate(opts: &Options, progress: &dyn Progress) -> Result<Summary, MigrateError> {
    if opts.jobs == 0 || opts.chunk_size == 0 {
        return Err(MigrateError::Usage(
            "--jobs and the chunk size must be at least 1".to_owned(),
        ));
    }
    let src = std::fs::canonicalize(&opts.src).map_err(io_err("cannot read SRC", &opts.src))?;
    if !src.is_dir() {
        return Err(MigrateError::Usage(format!(
            "SRC {} is not a directory",
            src.display()
        )));
    }
    let dst = absolute(&opts.dst).map_err(io_err("cannot resolve DST", &opts.dst))?;
    if dst.starts_with(&src) || src.starts_with(&dst) {
        return Err(MigrateError::Usage(format!(
            "DST {} and SRC {} must not contain each other: SRC is never written",
            dst.display(),
            src.display()
        )));
    }
    let mut listing = list_store(&src).map_err(io_err("cannot list SRC", &src))?;
    if listing.runs.is_empty() {
        // Most likely a wrong SRC (a store's parent, a fresh directory): migrating it would make
        // an empty DST and say "0 runs", which reads as success.
        return Err(MigrateError::Usage(no_run_files(&src)));
    }
    // A HEAD store's copy of the documents lists these itself (`head::copy_documents`).
    let strangers = match opts.target {
        Target::V2 => not_documents(&DiskStore::new(&src), &listing.documents, opts.shard),
        Target::Head => Vec::new(),
    };
    if opts.target != Target::Head {
        // Only a HEAD store copies the store's other documents; a V2 store reads plans and end
        // users by the ids its runs name, so their names (2 MB at 100,000 runs) are not kept.
        listing.documents = Names::default();
    }
    let mut mine: Vec<usize> = (0..listing.runs.len())
        .filter(|&i| opts.shard.is_none_or(|s| s.owns(&listing.runs.get(i))))
        .collect();
    // Kept to the end: grown by doubling, it held up to twice its eight bytes a run.
    mine.shrink_to_fit();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs)
        .thread_name(|i| format!("planrun-migrate-{i}"))
        .build()?;
    let mut ctx = Ctx {
        src: src.clone(),
        dst: dst.clone(),
        runs: &listing.runs,
        mine: &mine,
        kept: std::collections::HashSet::new(),
        started: crate::stamp::now_ns(),
        conflicts: Conflicts::of(&listing.runs),
        config: &opts.config,
        durability: opts.durability,
        dry_run: opts.dry_run,
        target: opts.target,
        store: DiskStore::new(&src),
        sink: DiskSink::new(&dst, opts.durability.per_file(), &shard_tag(opts.shard)),
        refs: References::default(),
        checker: Checker::new(),
    };
    let mut builder = Builder::new(
        &src,
        (!opts.dry_run).then_some(&*dst),
        opts.dry_run,
        opts.shard,
    );
    for (path, reason) in &listing.ignored {
        builder.ignore(path, reason);
    }
    for (name, why) in strangers {
        builder.ignore(&src.join(name), &why);
    }
    if opts.dry_run {
        let journal_path = dst.join(CONTROL_DIR).join(journal_name(opts.shard));
        let todo = if opts.resume && journal_path.is_file() {
            // What a catch-up would do, without writing: only the runs it would convert.
            let found = catch_up::catch_up(
                &ctx,
                &journal_path,
                opts.overwrite_changed,
                false,
                &pool,
                None,
            )?;
            builder.catch_up(found.counts);
            let undone: Vec<usize> = mine.iter().copied().filter(|&i| !found.done[i]).collect();
            ordered(&ctx, &undone, &pool, progress)
        } else {
            ordered(&ctx, &mine, &pool, progress)
        };
        return dry_run(&ctx, opts, &todo, &pool, builder, progress);
    }

    let fingerprint = opts.config.fingerprint();
    let control = dst.join(CONTROL_DIR);
    let journal_path = control.join(journal_name(opts.shard));
    let header = Line {
        event: Event::Header,
        format: Some(JOURNAL_FORMAT.to_owned()),
        tool: Some(TOOL.to_owned()),
        src: Some(src.to_string_lossy().into_owned()),
        shard: Some(
            opts.shard
                .map_or_else(|| "all".to_owned(), |s| s.to_string()),
        ),
        config: Some(fingerprint),
        target: (opts.target != Target::V2).then(|| opts.target.as_str().to_owned()),
        ..Line::default()
    };
    let start = prepare(&dst, &journal_path, &header, opts)?;
    let (mut journal, resumed, mut journal_cut) = match start {
        Start::Fresh => {
            std::fs::create_dir_all(&control).map_err(io_err("cannot create", &control))?;
            let writer = open_err(Writer::create(&journal_path, &header), &journal_path)?;
            if opts.durability.per_file() {
                // The journal's directory entries, so a power loss cannot leave outputs without it.
                for dir in [Some(control.as_path()), Some(dst.as_path()), dst.parent()]
                    .into_iter()
                    .flatten()
                {
                    crate::fsio::fsync_dir(dir).map_err(io_err("cannot sync", dir))?;
                }
            }
            (writer, false, false)
        }
        Start::Resume => {
            let writer = open_err(Writer::reopen(&journal_path), &journal_path)?;
            (writer, true, false)
        }
    };
    let temps_removed = if resumed {
        crate::fsio::remove_temps(&dst, &shard_temp_prefix(&shard_tag(opts.shard)))
            .map_err(io_err("cannot remove stale temp files in", &dst))?
    } else {
        0
    };
    let mut read_so_far = None;
    let done = if resumed {
        let found = catch_up::catch_up(
            &ctx,
            &journal_path,
            opts.overwrite_changed,
            true,
            &pool,
            Some(&mut builder),
        )?;
        journal_cut = journal
            .cut_to(found.read.offset)
            .map_err(io_err("cannot write", &journal_path))?;
        builder.catch_up(found.counts);
        ctx.kept = found.kept;
        read_so_far = Some(found.read);
        Some((found.done, found.lines))
    } else {
        None
    };
    journal
        .append(
            &[Line {
                event: Event::Session,
                resume: Some(resumed),
                synced: Some(opts.durability != Durability::None),
                read_at: Some(ctx.started),
                ..Line::default()
            }],
            opts.durability.per_file(),
        )
        .map_err(io_err("cannot write", &journal_path))?;
    let dst_dir = File::open(&dst).map_err(io_err("cannot open", &dst))?;
    let done = match done {
        Some((done, lines)) => {
            // Outputs removed for runs gone from SRC are made durable before their lines.
            if !lines.is_empty() && opts.durability != Durability::None {
                crate::fsio::syncfs(&dst_dir).map_err(io_err("cannot sync", &dst))?;
            }
            journal
                .append(&lines, opts.durability.per_file())
                .map_err(io_err("cannot write", &journal_path))?;
            Some(done)
        }
        None => None,
    };

    let todo = match done {
        Some(done) => {
            let undone: Vec<usize> = mine.iter().copied().filter(|&i| !done[i]).collect();
            ordered(&ctx, &undone, &pool, progress)
        }
        None => ordered(&ctx, &mine, &pool, progress),
    };
    let skipped = (mine.len() - todo.places().len()) as u64;
    progress.begin(todo.places().len() as u64, skipped);
    convert_all(&ctx, opts, &todo, &pool, &mut journal, &dst_dir, progress)?;
    drop(todo);
    if opts.target == Target::Head {
        let copied = head::copy_documents(
            &ctx.store,
            &ctx.sink,
            &listing.documents,
            opts.shard,
            &ctx.kept,
        )
        .map_err(|(err, path)| io_err("cannot write", &dst.join(path))(err))?;
        if opts.durability == Durability::Chunks {
            crate::fsio::syncfs(&dst_dir).map_err(io_err("cannot sync", &dst))?;
        }
        journal
            .append(
                &[Line {
                    event: Event::Copied,
                    memory: Some(copied.records),
                    ..Line::default()
                }],
                opts.durability.per_file(),
            )
            .map_err(io_err("cannot write", &journal_path))?;
        builder.documents_copied(copied.written);
        for (name, why) in copied.skipped {
            builder.ignore(&src.join(name), &why);
        }
    }
    if opts.durability == Durability::Chunks {
        crate::fsio::syncfs(&dst_dir).map_err(io_err("cannot sync", &dst))?;
    }

    progress.verifying();
    // The plans and end users read for conversion are not needed to verify it: they are freed
    // beside the verify pass, which leaves a core partly idle, rather than on one core after it.
    let refs = std::mem::take(&mut ctx.refs);
    let verified = std::thread::scope(|scope| {
        scope.spawn(move || drop(refs));
        verify(
            &ctx,
            &journal_path,
            read_so_far,
            &pool,
            &mut builder,
            opts.chunk_size,
            progress,
        )
    })?;
    builder.verified(verified);
    let report = builder.finish();
    let mut text = serde_json::to_string_pretty(&report).expect("reports are JSON");
    text.push('\n');
    let report_file = control.join(report_name(opts.shard));
    ctx.sink
        .write(
            &Path::new(CONTROL_DIR).join(report_name(opts.shard)),
            text.as_bytes(),
        )
        .map_err(io_err("cannot write", &report_file))?;
    match opts.durability {
        Durability::Files => {
            crate::fsio::fsync_dir(&control).map_err(io_err("cannot sync", &control))?;
        }
        Durability::Chunks => {
            crate::fsio::syncfs(&dst_dir).map_err(io_err("cannot sync", &dst))?;
        }
        Durability::None => {}
    }
    progress.end();
    Ok(Summary {
        report,
        resumed,
        skipped,
        temps_removed,
        journal_cut,
        journal: Some(journal.path().to_owned()),
        report_file: Some(report_file),
    })
}

/// The JSON files of the store (of `shard`) that are neither runs, plans nor end users, each with
/// why: a store holds those only, so such a file is listed, never silently passed over. Plans
/// (`plan-*.json`) are read when their runs are converted; the other names, end users by the
/// SDK's layout and few, are read here.
fn not_documents(
    store: &DiskStore,
    documents: &Names,
    shard: Option<Shard>,
) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for name in documents.iter() {
        let name = name.as_str();
        if name.starts_with("plan-") || shard.is_some_and(|s| !s.owns(name)) {
            continue;
        }
        let Some(id) = name.strip_suffix(".json") else {
            continue;
        };
        let why = match store.read(Doc::EndUser(id)) {
            Ok(Some(bytes)) => match planrun_legacy::parse(&bytes) {
                Ok(parsed) if parsed.detection.kind == planrun_legacy::DocKind::EndUser => continue,
                Ok(parsed) => format!(
                    "a {} document, where a store holds runs, plans and end users",
                    parsed.detection.kind.as_str()
                ),
                Err(err) => err.to_string(),
            },
            Ok(None) => continue,
            Err(failure) => failure.message,
        };
        found.push((name.to_owned(), why));
    }
    found
}

/// The places `todo` in the order they are converted (by plan), saying so to `progress` first.
fn ordered(
    ctx: &Ctx,
    todo: &[usize],
    pool: &rayon::ThreadPool,
    progress: &dyn Progress,
) -> Ordered {
    progress.ordering();
    order::by_plan(&ctx.store, ctx.runs, todo, pool)
}

/// Converts the runs `todo` chunk by chunk on the pool while a committer thread makes each
/// finished chunk durable and journals it, in chunk order, so conversion never waits for a
/// sync. The workers are at most a few chunks ahead of the committer (it has four journal
/// batches queued at most). A DST failure stops the batch once the chunks already started have
/// been committed.
fn convert_all(
    ctx: &Ctx,
    opts: &Options,
    todo: &Ordered,
    pool: &rayon::ThreadPool,
    journal: &mut Writer,
    dst_dir: &File,
    progress: &dyn Progress,
) -> Result<(), MigrateError> {
    enum Batch {
        Started(Vec<Line>),
        Finished(Vec<Line>),
    }
    let journal_path = journal.path().to_owned();
    let (sender, receiver) = std::sync::mpsc::sync_channel::<Batch>(4);
    std::thread::scope(|scope| {
        let committer = scope.spawn(move || -> Result<(), MigrateError> {
            let write_err = |err| io_err("cannot write", &journal_path)(err);
            while let Ok(first) = receiver.recv() {
                // Every chunk finished by now shares one sync: the slower the disk, the more.
                let mut finished = Vec::new();
                for batch in std::iter::once(first).chain(receiver.try_iter()) {
                    match batch {
                        Batch::Started(lines) => {
                            journal.append(&lines, false).map_err(&write_err)?;
                        }
                        Batch::Finished(lines) => finished.extend(lines),
                    }
                }
                if !finished.is_empty() {
                    commit(ctx, dst_dir, &finished)?;
                    journal
                        .append(&finished, opts.durability.per_file())
                        .map_err(&write_err)?;
                    progress.advance(finished.len() as u64);
                }
            }
            Ok(())
        });
        let cancelled = AtomicBool::new(false);
        let mut stopped = Ok(());
        feed::chunks_in_order(
            pool,
            todo.items(),
            opts.chunk_size,
            |chunk| {
                if !still_wanted(progress, &cancelled) {
                    return false;
                }
                let started = chunk
                    .iter()
                    .map(|&i| Line {
                        event: Event::Started,
                        run: Some(ctx.runs.get(i).to_string()),
                        ..Line::default()
                    })
                    .collect();
                sender.send(Batch::Started(started)).is_ok()
            },
            |i| work(ctx, i),
            Result::is_err,
            |results| {
                let mut lines = Vec::with_capacity(results.len());
                for result in results {
                    match result {
                        Ok(line) => lines.push(line),
                        Err(err) => {
                            if stopped.is_ok() {
                                stopped = Err(err);
                            }
                        }
                    }
                }
                // A committer that stopped has its own error, returned below.
                let _ = sender.send(Batch::Finished(lines));
            },
        );
        if cancelled.into_inner() && stopped.is_ok() {
            stopped = Err(MigrateError::Cancelled);
        }
        drop(sender);
        let committed = committer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        committed.and(stopped)
    })
}

/// Whether the next chunk may start: not once the user has cancelled, which `cancelled`
/// records for the caller to report after the chunks in flight are done.
fn still_wanted(progress: &dyn Progress, cancelled: &AtomicBool) -> bool {
    if progress.cancelled() {
        cancelled.store(true, Ordering::Relaxed);
    }
    !cancelled.load(Ordering::Relaxed)
}

fn open_err<T>(result: Result<T, OpenError>, path: &Path) -> Result<T, MigrateError> {
    result.map_err(|err| match err {
        OpenError::Locked(path) => MigrateError::Usage(format!(
            "another planrun migrate is working on this shard of DST (it holds the lock on {})",
            path.display()
        )),
        OpenError::Io(source) if source.kind() == io::ErrorKind::AlreadyExists => {
            MigrateError::Usage(format!(
                "{} appeared while starting: another planrun migrate is working on this shard of DST",
                path.display()
            ))
        }
        OpenError::Io(source) => MigrateError::Io {
            what: "cannot open the journal",
            path: path.to_owned(),
            source,
        },
    })
}

fn dry_run(
    ctx: &Ctx,
    opts: &Options,
    todo: &Ordered,
    pool: &rayon::ThreadPool,
    mut builder: Builder,
    progress: &dyn Progress,
) -> Result<Summary, MigrateError> {
    progress.begin(todo.places().len() as u64, 0);
    let mut verified = 0;
    let (cancelled, failed) = (AtomicBool::new(false), AtomicBool::new(false));
    let mut stopped = Ok(());
    feed::chunks_in_order(
        pool,
        todo.items(),
        opts.chunk_size,
        |_| still_wanted(progress, &cancelled) && !failed.load(Ordering::Relaxed),
        |i| work(ctx, i),
        Result::is_err,
        |lines| {
            if stopped.is_err() {
                return;
            }
            let count = lines.len() as u64;
            for line in lines {
                let added = line.and_then(|line| {
                    verified += u64::from(line.event == Event::Completed);
                    for shared in &line.groups {
                        builder.define(shared.key(), shared.counts());
                    }
                    builder.add(&line).map_err(|problem| MigrateError::Verify {
                        count: 1,
                        first: vec![problem],
                    })
                });
                if let Err(err) = added {
                    failed.store(true, Ordering::Relaxed);
                    stopped = Err(err);
                    return;
                }
            }
            progress.advance(count);
        },
    );
    stopped?;
    if cancelled.into_inner() {
        return Err(MigrateError::Cancelled);
    }
    builder.verified(verified);
    progress.end();
    Ok(Summary {
        report: builder.finish(),
        resumed: false,
        skipped: 0,
        temps_removed: 0,
        journal_cut: false,
        journal: None,
        report_file: None,
    })
}

/// An absolute path with every existing ancestor canonicalised (DST may not exist yet).
fn absolute(path: &Path) -> io::Result<PathBuf> {
    let path = if path.is_absolute() {
        path.to_owned()
    } else {
        std::env::current_dir()?.join(path)
    };
    for ancestor in path.ancestors() {
        match std::fs::canonicalize(ancestor) {
            Ok(mut out) => {
                let rest = path
                    .strip_prefix(ancestor)
                    .expect("an ancestor is a prefix");
                for component in rest.components() {
                    match component {
                        Component::Normal(name) => out.push(name),
                        Component::ParentDir => {
                            out.pop();
                        }
                        _ => {}
                    }
                }
                return Ok(out);
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(err),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        "no existing ancestor",
    ))
}

enum Start {
    Fresh,
    Resume,
}

/// Decides whether DST allows a fresh start or a resume, creating it when it does not exist.
fn prepare(
    dst: &Path,
    journal: &Path,
    header: &Line,
    opts: &Options,
) -> Result<Start, MigrateError> {
    match std::fs::symlink_metadata(dst) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dst).map_err(io_err("cannot create DST", dst))?;
            return Ok(Start::Fresh);
        }
        Err(err) => return Err(io_err("cannot read DST", dst)(err)),
        Ok(meta) if !meta.is_dir() => {
            return Err(MigrateError::Usage(format!(
                "DST {} exists and is not a directory",
                dst.display()
            )))
        }
        Ok(_) => {}
    }
    if journal.exists() {
        let found = journal::read_header(journal).map_err(io_err("cannot read", journal))?;
        let Some(found) = found else {
            if !opts.resume {
                return Err(MigrateError::Usage(format!(
                    "DST holds a journal without a valid header ({}): pass --resume to start this shard over",
                    journal.display()
                )));
            }
            // Only a power loss right after creating the journal leaves it without a header;
            // nothing was written after it, so the shard starts over.
            std::fs::remove_file(journal).map_err(io_err("cannot remove", journal))?;
            return Ok(Start::Fresh);
        };
        let checks = [
            ("journal format", &found.format, &header.format),
            ("source store", &found.src, &header.src),
            ("shard", &found.shard, &header.shard),
            ("tool version", &found.tool, &header.tool),
            ("config (--config)", &found.config, &header.config),
            ("target (--to)", &found.target, &header.target),
        ];
        for (what, was, now) in checks {
            if was != now {
                return Err(MigrateError::Usage(format!(
                    "DST holds a migration with another {what} ({} there, {} now): choose a new DST",
                    was.as_deref().unwrap_or("none"),
                    now.as_deref().unwrap_or("none")
                )));
            }
        }
        if !opts.resume {
            return Err(MigrateError::Usage(format!(
                "DST {} holds an earlier migration of {} (journal {}): pass --resume to continue it, or choose a new DST",
                dst.display(),
                found.src.as_deref().unwrap_or("?"),
                journal.display()
            )));
        }
        return Ok(Start::Resume);
    }
    check_new(dst, header, opts.shard)?;
    Ok(Start::Fresh)
}

/// A fresh start needs DST empty, or (for a shard) holding only the work of sibling shards of
/// the same store and split.
fn check_new(dst: &Path, header: &Line, shard: Option<Shard>) -> Result<(), MigrateError> {
    let not_new = || {
        MigrateError::Usage(format!(
            "DST {} is not empty and holds no migration of this store to resume: choose a new or empty directory",
            dst.display()
        ))
    };
    let mut others = false;
    for entry in std::fs::read_dir(dst).map_err(io_err("cannot list DST", dst))? {
        let entry = entry.map_err(io_err("cannot list DST", dst))?;
        others |= entry.file_name() != CONTROL_DIR;
    }
    let control = dst.join(CONTROL_DIR);
    let mut siblings = 0;
    if control.is_dir() {
        let suffix = shard.map(|s| format!("-of-{}", s.count));
        for entry in std::fs::read_dir(&control).map_err(io_err("cannot list", &control))? {
            let entry = entry.map_err(io_err("cannot list", &control))?;
            let name = entry.file_name();
            let name = name.to_str().unwrap_or("");
            if name.starts_with(crate::fsio::TEMP_PREFIX) {
                continue;
            }
            // Only a sharded migration shares DST, with the other shards of the same split.
            let Some(suffix) = suffix.as_deref() else {
                return Err(not_new());
            };
            if name == RESIDUE_DIR {
                continue;
            }
            let journal_of = name
                .strip_prefix("journal-")
                .and_then(|n| n.strip_suffix(".jsonl"));
            let report_of = name
                .strip_prefix("report-")
                .and_then(|n| n.strip_suffix(".json"));
            match (journal_of, report_of) {
                (Some(tag), _) if tag.ends_with(suffix) => {
                    let sibling = journal::read_header(&entry.path())
                        .map_err(io_err("cannot read", &entry.path()))?;
                    match sibling {
                        Some(h) if h.src == header.src => siblings += 1,
                        Some(h) => {
                            return Err(MigrateError::Usage(format!(
                                "DST holds shards of a migration of another store ({})",
                                h.src.as_deref().unwrap_or("?")
                            )))
                        }
                        // A sibling that is just starting.
                        None => siblings += 1,
                    }
                }
                (_, Some(tag)) if tag.ends_with(suffix) => {}
                _ => return Err(not_new()),
            }
        }
    }
    if others && siblings == 0 {
        return Err(not_new());
    }
    Ok(())
}

/// For every run of a listing, the (1-based) index of its last `completed`/`failed` journal
/// line, by the run's place in the listing: eight bytes a run, where a map by name took about
/// ninety (9 MB at 100,000 runs).
#[derive(Debug)]
struct FinalLines<'a> {
    runs: &'a Names,
    /// By place in `runs`; 0 for a run without a final line.
    last: Vec<u64>,
    /// By place in `runs`: whether a `started` line follows the run's last final line (it was
    /// being converted again when a pass stopped, so its outputs may be newer than the journal).
    in_flight: Vec<bool>,
    /// The runs the journal has a final line for that are not in `runs` (gone from SRC, or of
    /// another shard), each with the index and event of its last final line.
    strays: std::collections::BTreeMap<String, (u64, Event)>,
    /// Whether every pass synced its outputs: after one under `--no-sync`, an output's stamp
    /// may have survived an OS crash that lost its bytes, so outputs are read, not trusted.
    stamps_trusted: bool,
    /// The place of the run of each final line, in journal order ([`FinalLines::ELSEWHERE`]
    /// for one not in `runs`): four bytes a line, so that a second reading of the journal finds
    /// each line's run without looking its name up again.
    places: Vec<u32>,
    /// How many lines were read.
    lines: u64,
}

impl<'a> FinalLines<'a> {
    /// In `places`: a run not in the listing (or at a place beyond `u32`).
    const ELSEWHERE: u32 = u32::MAX;

    /// Reads only the heads of the first `limit` lines: the callers read the lines again in
    /// full, and stop where one is invalid. `runs` is in byte order,
    /// as a [`Listing`](crate::store::Listing) is.
    fn read(journal: &Path, runs: &'a Names, limit: u64) -> Result<Self, MigrateError> {
        let mut found = FinalLines::new(runs);
        let mut reader = Reader::open(journal).map_err(io_err("cannot read", journal))?;
        let mut index = 0u64;
        while index < limit {
            let Some(line) = reader.next_head().map_err(io_err("cannot read", journal))? else {
                break;
            };
            index += 1;
            found.absorb(line, index);
        }
        found.lines = index;
        Ok(found)
    }

    /// Nothing read yet.
    fn new(runs: &'a Names) -> Self {
        FinalLines {
            runs,
            last: vec![0; runs.len()],
            in_flight: vec![false; runs.len()],
            stamps_trusted: true,
            strays: std::collections::BTreeMap::new(),
            places: Vec::new(),
            lines: 0,
        }
    }

    /// Takes in the journal's line `index`, read after every line before it.
    fn absorb(&mut self, line: Head, index: u64) {
        let runs = self.runs;
        if line.event == Event::Session {
            self.stamps_trusted &= line.synced != Some(false);
        }
        if line.event == Event::Started {
            if let Some(at) = line.run.as_deref().and_then(|run| runs.position(run)) {
                self.in_flight[at] = true;
            }
            return;
        }
        if !line.is_final() {
            return;
        }
        let at = line.run.as_deref().and_then(|run| runs.position(run));
        if let Some(at) = at {
            self.in_flight[at] = false;
        }
        match (at, line.run) {
            (Some(at), _) => self.last[at] = index,
            (None, Some(run)) => {
                self.strays.insert(run, (index, line.event));
            }
            (None, None) => {}
        }
        let place = at.and_then(|at| u32::try_from(at).ok());
        self.places.push(place.unwrap_or(Self::ELSEWHERE));
    }

    /// The first run (by name) the journal settles that is not in `runs` and whose outputs a
    /// resume did not remove: a run this shard should not have.
    fn stray(&self) -> Option<&str> {
        self.strays
            .iter()
            .find(|(_, (_, event))| *event != Event::Removed)
            .map(|(run, _)| run.as_str())
    }

    /// A reading of the journal's lines again, in order, that tells which settle a run.
    fn in_journal_order(&self) -> InJournalOrder<'_, 'a> {
        self.in_journal_order_after(0)
    }

    /// [`FinalLines::in_journal_order`] from the line after the first `finals` final lines.
    fn in_journal_order_after(&self, finals: usize) -> InJournalOrder<'_, 'a> {
        InJournalOrder {
            lines: self,
            next: finals,
        }
    }
}

/// [`FinalLines`] read in step with the journal.
struct InJournalOrder<'f, 'a> {
    lines: &'f FinalLines<'a>,
    /// How many final lines have been read.
    next: usize,
}

impl InJournalOrder<'_, '_> {
    /// The place of the run of `line`, the journal's line `index`, when that is the run's last
    /// final line. Every line must be passed, in journal order; the line's run is checked
    /// against its place, not trusted.
    fn position(&mut self, line: &Line, index: u64) -> Option<usize> {
        if !line.event.is_final() {
            return None;
        }
        let place = *self.lines.places.get(self.next)?;
        self.next += 1;
        let runs = self.lines.runs;
        let run = line.run.as_deref()?;
        let at = match place {
            FinalLines::ELSEWHERE => runs.position(run)?,
            place => usize::try_from(place).ok()?,
        };
        (self.lines.last[at] == index && runs.get(at) == *run).then_some(at)
    }
}

/// Converts one run and writes its outputs (nothing in a dry run); the journal line to record.
/// Problems with the run are in the line; an error is a DST failure that stops the batch.
fn work(ctx: &Ctx, index: usize) -> Result<Line, MigrateError> {
    let clock = Instant::now();
    let read_at = crate::stamp::now_ns();
    let name = ctx.runs.get(index);
    let name = name.as_str();
    let path = ctx.src.join(name);
    let result = match ctx.conflicts.winner(index) {
        Some(winner) => {
            let winner = ctx.runs.get(winner);
            RunResult {
                path: path.clone(),
                bytes_in: std::fs::symlink_metadata(&path).map_or(0, |m| m.len()),
                source_version: None,
                outcome: Err(Failure::rejected(
                    &path,
                    "conflict",
                    format!(
                        "{name} and {winner} map to the same V2 run prun-{}; {winner} sorts first and wins",
                        run_key(name).unwrap_or("?")
                    ),
                )),
                inputs: Vec::new(),
            }
        }
        None => convert_entry(&ctx.store, name, ctx.config, &ctx.refs),
    };
    let mut inputs = result.inputs;
    if let Ok(out) = &result.outcome {
        inputs.extend(out.agent_memory.iter().map(|file| crate::stamp::Input {
            path: file.relative.to_string_lossy().into_owned(),
            stamp: file.stamp,
        }));
    }
    let mut line = Line {
        run: Some(name.to_owned()),
        version: result.source_version.clone(),
        bytes_in: Some(result.bytes_in),
        inputs: Some(inputs),
        read_at: Some(read_at),
        ..Line::default()
    };
    let outcome = match result.outcome {
        Ok(out) if ctx.target == Target::Head => {
            match head::outputs(&ctx.store, &ctx.refs, &path, &out) {
                Ok(mut at_head) => {
                    // A shared file someone else changed in DST is kept, not written.
                    at_head.files.retain(|(relative, _)| {
                        !ctx.kept.contains(relative.to_string_lossy().as_ref())
                    });
                    let memory = write_outputs(
                        ctx,
                        &out.id,
                        &at_head.run,
                        &out.agent_memory,
                        &at_head.files,
                    )?;
                    let mut out = out;
                    out.report.extend(at_head.report);
                    out.bytes = at_head.run;
                    Ok((out, memory))
                }
                Err(failure) => Err(failure),
            }
        }
        Ok(out) => {
            let memory = write_outputs(ctx, &out.id, &out.bytes, &out.agent_memory, &[])?;
            Ok((out, memory))
        }
        Err(failure) => Err(failure),
    };
    match outcome {
        Ok((out, memory)) => {
            line.event = Event::Completed;
            line.class = Some(out.class);
            line.bytes_out = Some(out.bytes.len() as u64);
            line.hash = Some(content_hash(&out.bytes));
            line.groups = out
                .report
                .shared()
                .map(|s| Arc::clone(s.counts()))
                .collect();
            let own = out.report.own_counts();
            if !own.is_empty() {
                line.groups.push(SharedCounts::new(own));
            }
            if !line.groups.is_empty() {
                line.shared = Some(line.groups.iter().map(|g| g.key().to_owned()).collect());
            }
            if !ctx.dry_run {
                line.outputs = Some(output_stamps(ctx, &out.id, &memory));
            }
            line.memory = Some(memory);
            line.id = Some(out.id);
        }
        Err(failure) => {
            line.event = Event::Failed;
            line.class = Some(failure.class);
            line.error = Some((&failure).into());
        }
    }
    line.micros = Some(u64::try_from(clock.elapsed().as_micros()).unwrap_or(u64::MAX));
    Ok(line)
}

/// The journaled hash of an output's bytes: XXH3-64 in hex, fast enough to hash every output
/// twice (when written and when verified).
fn content_hash(bytes: &[u8]) -> String {
    planrun_wire::join::hex16(xxhash_rust::xxh3::xxh3_64(bytes))
}

/// The stamps of a run's own outputs just written (its document, then its agent memory and
/// residue; a HEAD store's shared files are judged apart): a later pass that finds the same
/// stamps knows the files are the ones written without reading them.
fn output_stamps(ctx: &Ctx, id: &str, memory: &[MemoryRecord]) -> Vec<crate::stamp::Input> {
    let document = planrun_wire::join!(id, ".json");
    let own = memory
        .iter()
        .map(|m| m.path.as_str())
        .filter(|path| !catch_up::is_shared(path));
    std::iter::once(document.as_str())
        .chain(own)
        .map(|path| crate::stamp::Input {
            path: path.to_owned(),
            stamp: ctx.sink.dir().stamp(Path::new(path)).ok().flatten(),
        })
        .collect()
}

/// Copies the agent-memory files (their bytes as the conversion read and checked them), then
/// writes the V2 document; in a dry run, checks the document instead. An error is a DST failure.
fn write_outputs(
    ctx: &Ctx,
    id: &str,
    bytes: &[u8],
    memory: &[MemoryFile],
    extra: &[(PathBuf, Vec<u8>)],
) -> Result<Vec<MemoryRecord>, MigrateError> {
    let mut records = Vec::with_capacity(memory.len());
    for file in memory {
        let content = &file.content;
        let relative = file.relative.to_string_lossy().into_owned();
        if !ctx.dry_run {
            ctx.sink
                .write(&file.relative, content)
                .map_err(io_err("cannot write", &ctx.dst.join(&file.relative)))?;
        }
        records.push(MemoryRecord {
            path: relative,
            bytes: content.len() as u64,
            hash: content_hash(content),
        });
    }
    for (relative, content) in extra {
        if !ctx.dry_run {
            ctx.sink
                .write(relative, content)
                .map_err(io_err("cannot write", &ctx.dst.join(relative)))?;
        }
        records.push(MemoryRecord {
            path: relative.to_string_lossy().into_owned(),
            bytes: content.len() as u64,
            hash: content_hash(content),
        });
    }
    let name = planrun_wire::join!(id, ".json");
    if ctx.dry_run {
        check_output(ctx, bytes, id).map_err(|problem| MigrateError::Verify {
            count: 1,
            first: vec![format!("{name}: {problem}")],
        })?;
    } else {
        ctx.sink
            .write(Path::new(&name), bytes)
            .map_err(io_err("cannot write", &ctx.dst.join(&name)))?;
    }
    Ok(records)
}

/// Makes a chunk's outputs durable before its lines are journaled: one `syncfs`, or (per file)
/// an fsync of every directory the chunk wrote into (its files were fsynced before renaming),
/// or nothing (`--no-sync`).
fn commit(ctx: &Ctx, dst_dir: &File, lines: &[Line]) -> Result<(), MigrateError> {
    match ctx.durability {
        Durability::None => return Ok(()),
        Durability::Chunks => {
            return crate::fsio::syncfs(dst_dir).map_err(io_err("cannot sync", &ctx.dst));
        }
        Durability::Files => {}
    }
    let mut dirs = BTreeSet::new();
    for line in lines.iter().filter(|l| l.event == Event::Completed) {
        for memory in line.memory.iter().flatten() {
            if let Some(parent) = Path::new(&memory.path).parent() {
                dirs.insert(ctx.dst.join(parent));
            }
        }
    }
    for dir in dirs.iter().chain([&ctx.dst]) {
        crate::fsio::fsync_dir(dir).map_err(io_err("cannot sync", dir))?;
    }
    Ok(())
}

/// A V2 document read back with a fresh reader, holding the id its file is named by: the
/// verdict of a strict serde read into `PlanRunV2` (which accepts exactly what the published
/// schema accepts, as the test suite proves), given by a [`Checker`] that reads each distinct
/// plan, end user and config once per migration instead of once per run.
fn check_document(checker: &Checker, bytes: &[u8], id: &str) -> Result<(), String> {
    let found = checker
        .check(bytes)
        .map_err(|e| format!("not a PlanRunV2: {e}"))?;
    if found != id {
        return Err(format!("holds run {found}"));
    }
    Ok(())
}

/// [`check_document`] for V2 output, the HEAD run check for `--to r6`.
fn check_output(ctx: &Ctx, bytes: &[u8], id: &str) -> Result<(), String> {
    match ctx.target {
        Target::V2 => check_document(&ctx.checker, bytes, id),
        Target::Head => head::check_document(bytes, id),
    }
}

/// Checks a completed run's files against its journal line: sizes and hashes.
fn check_files(dst: &Dir, line: &Line) -> Result<Vec<u8>, String> {
    let id = line.id.as_deref().ok_or("no id journaled")?;
    safe_component(id).map_err(|why| format!("bad id {id:?}: {why}"))?;
    let name = planrun_wire::join!(id, ".json");
    let bytes = dst
        .read_nofollow(Path::new(&name))
        .map_err(|e| format!("{name}: {e}"))?;
    if Some(bytes.len() as u64) != line.bytes_out || Some(content_hash(&bytes)) != line.hash {
        return Err(format!("{name}: not the bytes the journal recorded"));
    }
    // A HEAD store's shared plans and end users are other runs' outputs too, rewritten by
    // later runs and kept when someone else changed them: a catch-up judges them on their own.
    for memory in line
        .memory
        .iter()
        .flatten()
        .filter(|m| !catch_up::is_shared(&m.path))
    {
        let content = dst
            .read_nofollow(Path::new(&memory.path))
            .map_err(|e| format!("{}: {e}", memory.path))?;
        if content.len() as u64 != memory.bytes || content_hash(&content) != memory.hash {
            return Err(format!(
                "{}: not the bytes the journal recorded",
                memory.path
            ));
        }
    }
    Ok(bytes)
}

/// The verify pass: every run of the shard has a final journal line; every completed run's
/// output is re-read from disk and checked. Feeds the report; returns how many outputs passed.
/// After a catch-up (`so_far`), only the lines after those it read are read: it checked and
/// reported the outputs of the runs it found up to date.
fn verify<'a>(
    ctx: &Ctx<'a>,
    journal: &Path,
    so_far: Option<catch_up::ReadSoFar<'a>>,
    pool: &rayon::ThreadPool,
    builder: &mut Builder,
    chunk_size: usize,
    progress: &dyn Progress,
) -> Result<u64, MigrateError> {
    let so_far = so_far.unwrap_or_else(|| catch_up::ReadSoFar {
        finals: FinalLines::new(ctx.runs),
        offset: 0,
        index: 0,
        completed: 0,
        problems: Vec::new(),
    });
    let mut last = so_far.finals;
    let finals_before = last.places.len();
    let mut reader =
        Reader::open_at(journal, so_far.offset).map_err(io_err("cannot read", journal))?;
    let mut index = so_far.index;
    while let Some(line) = reader.next_head().map_err(io_err("cannot read", journal))? {
        index += 1;
        last.absorb(line, index);
    }
    let mine = ctx.mine;
    let mut problems: Vec<String> = so_far.problems;
    let outside =
        (0..ctx.runs.len()).find(|i| last.last[*i] != 0 && mine.binary_search(i).is_err());
    let outside = outside.map(|i| ctx.runs.get(i));
    if let Some(stray) = last.stray().or(outside.as_deref()) {
        problems.push(format!(
            "the journal records {stray}, which is not a run of this shard of SRC (did SRC change?)"
        ));
    }
    let unsettled = mine.iter().filter(|&&i| last.last[i] == 0).count();
    if unsettled > 0 {
        problems.push(format!(
            "{unsettled} run(s) of the shard have no final journal line"
        ));
    }
    let mut settling = last.in_journal_order_after(finals_before);
    let mut reader =
        Reader::open_at(journal, so_far.offset).map_err(io_err("cannot read", journal))?;
    let mut index = so_far.index;
    let mut batch: Vec<Line> = Vec::with_capacity(chunk_size);
    let mut verified = so_far.completed;
    let mut completed = so_far.completed;
    let check = |line: &Line| {
        let bytes = check_files(ctx.sink.dir(), line)?;
        check_output(ctx, &bytes, line.id.as_deref().unwrap_or(""))
            .map_err(|e| format!("{}.json: {e}", line.id.as_deref().unwrap_or("?")))
    };
    // The pool's threads take the batches of completed lines as this thread reads them from the
    // journal; a failed check is kept with its batch and place, to be reported in journal order.
    type Checked = (u64, Vec<(usize, usize, String)>);
    let (read, checked) = feed::fed_by(
        pool,
        |send| -> Result<(), MigrateError> {
            let mut batches = 0;
            while let Some(line) = reader.next_line().map_err(io_err("cannot read", journal))? {
                index += 1;
                if let (Event::Entries, Some(key), Some(counts)) =
                    (line.event, &line.key, &line.entries)
                {
                    builder.define(key, counts);
                    continue;
                }
                if settling.position(&line, index).is_none() {
                    continue;
                }
                if let Err(problem) = builder.add(&line) {
                    problems.push(format!("the journal's line {index}: {problem}"));
                }
                if line.event == Event::Completed {
                    completed += 1;
                    batch.push(line);
                    if batch.len() == chunk_size {
                        if progress.cancelled() {
                            return Err(MigrateError::Cancelled);
                        }
                        let full = Vec::with_capacity(chunk_size);
                        send((batches, std::mem::replace(&mut batch, full)));
                        batches += 1;
                    }
                }
            }
            send((batches, std::mem::take(&mut batch)));
            Ok(())
        },
        |(passed, failed): &mut Checked, (number, lines): (usize, Vec<Line>)| {
            for (position, line) in lines.iter().enumerate() {
                match check(line) {
                    Ok(()) => *passed += 1,
                    Err(problem) => failed.push((number, position, problem)),
                }
            }
        },
    );
    read?;
    let mut failed = Vec::new();
    for (passed, failures) in checked {
        verified += passed;
        failed.extend(failures);
    }
    failed.sort_unstable_by_key(|&(number, position, _)| (number, position));
    problems.extend(failed.into_iter().map(|(_, _, problem)| problem));
    if reader.torn {
        problems.push(format!(
            "the journal's line {} is not a journal line",
            index + 1
        ));
    }
    if verified != completed && problems.is_empty() {
        problems.push(format!(
            "{completed} completed runs, {verified} verified outputs"
        ));
    }
    if problems.is_empty() {
        Ok(verified)
    } else {
        Err(MigrateError::Verify {
            count: problems.len(),
            first: problems.into_iter().take(5).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The second reading of the journal finds each run's last final line by the places the
    /// first recorded, as a lookup of every line's run by name finds it.
    #[test]
    fn a_second_reading_finds_the_last_final_line_of_each_run() {
        let line = |event, run: &str| Line {
            event,
            run: Some(run.into()),
            ..Line::default()
        };
        let lines = vec![
            Line::default(),
            line(Event::Started, "a.json"),
            line(Event::Failed, "a.json"),
            line(Event::Started, "b.json"),
            line(Event::Completed, "b.json"),
            line(Event::Completed, "stray.json"),
            line(Event::Completed, "a.json"),
            Line {
                event: Event::Failed,
                ..Line::default()
            },
            line(Event::Failed, "with \"escape\".json"),
            line(Event::Failed, "c.json"),
            line(Event::Completed, "c.json"),
            line(Event::Completed, "with \"escape\".json"),
        ];
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("journal.jsonl");
        let text: String = lines.iter().map(Line::to_jsonl).collect();
        std::fs::write(&journal, text).unwrap();
        let runs: Names = ["a.json", "b.json", "c.json", "with \"escape\".json"]
            .into_iter()
            .collect();
        let found = FinalLines::read(&journal, &runs, u64::MAX).unwrap();
        assert_eq!(found.last, [7, 5, 11, 12]);
        assert_eq!(found.stray(), Some("stray.json"));
        let mut again = found.in_journal_order();
        let settling: Vec<Option<usize>> = (lines.iter().zip(1..))
            .map(|(line, index)| again.position(line, index))
            .collect();
        let by_name: Vec<Option<usize>> = (lines.iter().zip(1..))
            .map(|(line, index)| {
                let at = runs.position(line.run.as_deref()?)?;
                (line.event.is_final() && found.last[at] == index).then_some(at)
            })
            .collect();
        assert_eq!(settling, by_name);
        let settled = [
            None,
            None,
            None,
            None,
            Some(1),
            None,
            Some(0),
            None,
            None,
            None,
        ];
        assert_eq!(settling[..10], settled);
        assert_eq!(settling[10..], [Some(2), Some(3)]);
    }

    #[test]
    fn shards_parse_and_split_every_name_exactly_once() {
        assert_eq!("1/4".parse(), Ok(Shard { index: 1, count: 4 }));
        for bad in ["4/4", "1", "a/2", "0/0", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        let shards: Vec<Shard> = (0..3).map(|index| Shard { index, count: 3 }).collect();
        for i in 0..100 {
            let name = format!("prun-{i}.json");
            assert_eq!(shards.iter().filter(|s| s.owns(&name)).count(), 1);
        }
        assert_eq!(journal_name(Some(shards[2])), "journal-2-of-3.jsonl");
        assert_eq!(report_name(None), "report.json");
    }

    #[test]
    fn verify_accepts_only_a_v2_run_with_the_id_of_its_name() {
        let store = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/store");
        let listing = list_store(&store).unwrap();
        let config = ResolvedConfig::sdk_defaults().unwrap();
        let result = crate::convert_run(&store.join(&*listing.runs.get(0)), &store, &config);
        let out = result.outcome.unwrap();
        assert_eq!(check_document(&Checker::new(), &out.bytes, &out.id), Ok(()));

        let other = "prun-00000000-0000-0000-0000-000000000000";
        assert_eq!(
            check_document(&Checker::new(), &out.bytes, other),
            Err(format!("holds run {}", out.id))
        );
        let mut tree: serde_json::Value = serde_json::from_slice(&out.bytes).unwrap();
        tree["state"] = serde_json::json!("PAUSED_FOREVER");
        let unknown_state = serde_json::to_vec(&tree).unwrap();
        let cut = &out.bytes[..out.bytes.len() / 2];
        for bad in [&unknown_state[..], cut, &b"[]"[..], &b"\xff"[..]] {
            let problem = check_document(&Checker::new(), bad, &out.id).unwrap_err();
            assert!(problem.starts_with("not a PlanRunV2: "), "{problem}");
        }
    }

    /// Says stop at its `at`-th question.
    struct StopAt {
        asked: std::sync::atomic::AtomicUsize,
        at: usize,
    }

    impl Progress for StopAt {
        fn cancelled(&self) -> bool {
            self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 >= self.at
        }
    }

    /// Every file under `dir` but the `.planrun` directory, by relative path.
    fn outputs(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
        let mut out = std::collections::BTreeMap::new();
        let mut todo = vec![dir.to_owned()];
        while let Some(next) = todo.pop() {
            for entry in std::fs::read_dir(&next).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    if path.file_name() != Some(CONTROL_DIR.as_ref()) {
                        todo.push(path);
                    }
                } else {
                    let bytes = std::fs::read(&path).unwrap();
                    out.insert(path.strip_prefix(dir).unwrap().to_owned(), bytes);
                }
            }
        }
        out
    }

    #[test]
    fn a_cancelled_migration_stops_between_chunks_and_resumes_to_the_same_tree() {
        let store = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/store");
        let tmp = tempfile::tempdir().unwrap();
        let opts = |dst: &str| Options {
            src: store.clone(),
            dst: tmp.path().join(dst),
            jobs: 2,
            resume: false,
            dry_run: false,
            shard: None,
            durability: Durability::Chunks,
            chunk_size: 1,
            config: ResolvedConfig::sdk_defaults().unwrap(),
            target: Target::V2,
            overwrite_changed: false,
        };
        let whole = migrate(&opts("whole"), &()).unwrap();
        let runs = whole.report.runs;
        assert!(runs >= 3, "{runs}");

        let stop = StopAt {
            asked: 0.into(),
            at: 3,
        };
        let err = migrate(&opts("cut"), &stop).unwrap_err();
        assert!(matches!(err, MigrateError::Cancelled), "{err}");
        let journal = tmp
            .path()
            .join("cut")
            .join(CONTROL_DIR)
            .join(journal_name(None));
        let names = list_store(&store).unwrap().runs;
        let last = FinalLines::read(&journal, &names, u64::MAX).unwrap();
        assert_eq!(
            last.last.iter().filter(|&&at| at != 0).count(),
            2,
            "two chunks of one run before the stop: {last:?}"
        );
        assert!(!tmp
            .path()
            .join("cut")
            .join(CONTROL_DIR)
            .join("report.json")
            .exists());

        let mut again = opts("cut");
        again.resume = true;
        let resumed = migrate(&again, &()).unwrap();
        assert!(resumed.resumed);
        assert_eq!(resumed.skipped, 2);
        assert_eq!(resumed.report.runs, runs);
        assert_eq!(
            outputs(&tmp.path().join("cut")),
            outputs(&tmp.path().join("whole"))
        );

        let mut dry = opts("dry");
        dry.dry_run = true;
        let stop = StopAt {
            asked: 0.into(),
            at: 2,
        };
        assert!(matches!(migrate(&dry, &stop), Err(MigrateError::Cancelled)));
        assert!(!tmp.path().join("dry").exists());
        // Stopping in the verify pass (chunks of one run: a question per output) also resumes.
        let stop = StopAt {
            asked: 0.into(),
            at: runs as usize + 2,
        };
        assert!(matches!(
            migrate(&opts("verify"), &stop),
            Err(MigrateError::Cancelled)
        ));
        let mut again = opts("verify");
        again.resume = true;
        assert_eq!(migrate(&again, &()).unwrap().skipped, runs);
    }

    #[test]
    fn absolute_paths_resolve_missing_tails() {
        let dir = tempfile::tempdir().unwrap();
        let canon = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(
            absolute(&dir.path().join("a/./b/../c")).unwrap(),
            canon.join("a/c")
        );
    }
}
