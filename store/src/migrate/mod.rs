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
mod compact;
mod convert;
mod dst;
mod earlier;
mod feed;
mod finals;
pub mod head;
pub mod journal;
mod options;
mod order;
pub mod report;
mod verify;

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use planrun_v2::check::Checker;

pub use self::catch_up::CatchUpCounts;
use self::convert::{convert_all, dry_run, ordered};
use self::dst::{absolute, no_run_files, prepare, Start};
use self::feed::joined;
use self::finals::FinalLines;
use self::journal::{Event, Line, OpenError, Writer, JOURNAL_FORMAT};
use self::options::shard_tag;
pub use self::options::{journal_name, report_name, Options, Progress, Shard, Summary, Target};
use self::report::{BatchReport, Builder};
use self::verify::{check_output, verify};
use crate::fsio::shard_temp_prefix;
use crate::stamp::content_hash;
pub use crate::Durability;
use crate::{
    list_store, Conflicts, DiskSink, DiskStore, Doc, Listing, Names, References, ResolvedConfig,
    Sink, Store,
};

/// DST's bookkeeping directory: journals and reports.
pub const CONTROL_DIR: &str = ".planrun";

/// The directory under [`CONTROL_DIR`] of a HEAD store's residue (`--to r6`).
pub const RESIDUE_DIR: &str = "residue";

/// The default number of runs per chunk.
pub const DEFAULT_CHUNK_SIZE: usize = 256;

/// The tool and version recorded in a journal header; a resume needs the same.
pub const TOOL: &str = concat!("planrun ", env!("CARGO_PKG_VERSION"));

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

/// The hasher of the maps keyed by the journal's texts (report counts, shared files' paths):
/// a lookup or two per run, where SipHash showed in the profile; the keys are the journal's own.
type Fast = xxhash_rust::xxh3::Xxh3DefaultBuilder;

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
    /// On a resume: the earlier outputs of the runs converted again.
    earlier: earlier::Earlier,
    /// With `--to r6`: the last copy of each of SRC's plans and end users (on a resume).
    copies: std::collections::HashMap<String, head::LastCopy>,
    /// With `--to r6`: the shared files this pass wrote, each written once.
    shared_writes: head::SharedWrites,
    /// With `--to r6`: which version of a plan the store never saved its V2 runs write.
    plan_claims: head::PlanClaims,
    /// When this pass started (ns since the epoch): a file stamped within the racy window of it
    /// is read, not trusted by its stamp.
    started: i64,
    /// Runs that map to one V2 id, found when the first run is converted (a pass that converts
    /// none, a resume with nothing to do, never needs them).
    conflicts: std::sync::OnceLock<Conflicts>,
    config: &'a ResolvedConfig,
    durability: Durability,
    dry_run: bool,
    target: Target,
    store: DiskStore,
    sink: DiskSink,
    refs: References,
    checker: Checker,
}

impl Ctx<'_> {
    /// The earlier run the run at `place` loses its V2 id to, if any.
    fn conflict_winner(&self, place: usize) -> Option<usize> {
        self.conflicts
            .get_or_init(|| Conflicts::of(self.runs))
            .winner(place)
    }
}

/// Migrates a store (see the module docs).
pub fn migrate(opts: &Options, progress: &dyn Progress) -> Result<Summary, MigrateError> {
    let (src, dst) = check_paths(opts)?;
    let (Listed { mut listing, mine }, opened) = list_and_reopen(opts, &src, &dst)?;
    let documents = std::mem::take(&mut listing.documents);
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
        earlier: earlier::Earlier::default(),
        copies: std::collections::HashMap::new(),
        shared_writes: head::SharedWrites::default(),
        plan_claims: head::PlanClaims::in_dst(&dst),
        started: crate::stamp::now_ns(),
        conflicts: std::sync::OnceLock::new(),
        config: &opts.config,
        durability: opts.durability,
        dry_run: opts.dry_run,
        target: opts.target,
        store: DiskStore::new(&src),
        sink: DiskSink::new(&dst, opts.durability, &shard_tag(opts.shard)),
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
    // SRC's JSON files that are no Portia document, each with why.
    let strangers = |documents: &Names| match opts.target {
        Target::V2 => not_documents(&DiskStore::new(&src), documents, opts.shard),
        // A HEAD store's copy of the documents lists these itself (`head::copy_documents`).
        Target::Head => Vec::new(),
    };
    if opts.dry_run {
        let strangers = strangers(&documents);
        return dry_run_pass(&ctx, opts, &mine, &pool, builder, strangers, progress);
    }

    let Opened {
        mut journal,
        resumed,
        temps_removed,
    } = match opened {
        Some(opened) => opened,
        None => open_journal(opts, &src, &dst)?,
    };
    let dst_dir = File::open(&dst).map_err(io_err("cannot open", &dst))?;
    let pass = Pass {
        opts,
        pool: &pool,
        dst_dir: &dst_dir,
        progress,
    };
    // The store's other files are read beside the start of the pass (a resume's catch-up, whose
    // first reading of the journal leaves a core partly idle).
    let (strangers, start) = std::thread::scope(|scope| {
        let strangers = scope.spawn(|| strangers(&documents));
        let start = start_pass(&mut ctx, &pass, &mut journal, &mut builder, resumed);
        (joined(strangers), start)
    });
    let start = start?;
    for (name, why) in strangers {
        builder.ignore(&src.join(name), &why);
    }
    // Only a HEAD store copies the store's other documents; a V2 store reads plans and end users
    // by the ids its runs name, so their names (2 MB at 100,000 runs) are not kept.
    let documents = match opts.target {
        Target::Head => documents,
        Target::V2 => Names::default(),
    };
    let todo = match &start.done {
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
        copy_head_documents(&ctx, &pass, &documents, &mut journal, &mut builder)?;
    }
    if opts.durability == Durability::Chunks {
        crate::fsio::syncfs(&dst_dir).map_err(io_err("cannot sync", &dst))?;
    }
    let (report, report_file, mut finals) =
        finish(&mut ctx, &pass, journal.path(), start.read, builder)?;
    let temp = dst.join(CONTROL_DIR).join(format!(
        "{}journal.jsonl",
        shard_temp_prefix(&shard_tag(opts.shard))
    ));
    compact::compact(&mut journal, &mut finals, &temp)?;
    Ok(Summary {
        report,
        resumed,
        skipped,
        temps_removed,
        journal_cut: start.journal_cut,
        journal: Some(journal.path().to_owned()),
        report_file: Some(report_file),
    })
}

/// A dry run: what a migration (with `--resume`, a catch-up of DST) would do, converting in
/// memory and writing nothing. `strangers` are SRC's JSON files that are no Portia document.
fn dry_run_pass(
    ctx: &Ctx,
    opts: &Options,
    mine: &[usize],
    pool: &rayon::ThreadPool,
    mut builder: Builder,
    strangers: Vec<(String, String)>,
    progress: &dyn Progress,
) -> Result<Summary, MigrateError> {
    for (name, why) in strangers {
        builder.ignore(&ctx.src.join(name), &why);
    }
    let journal_path = ctx.dst.join(CONTROL_DIR).join(journal_name(opts.shard));
    let todo = if opts.resume && journal_path.is_file() {
        // What a catch-up would do, without writing: only the runs it would convert.
        let found = catch_up::catch_up(
            ctx,
            &journal_path,
            opts.overwrite_changed,
            false,
            pool,
            None,
        )?;
        builder.catch_up(found.counts);
        let undone: Vec<usize> = mine.iter().copied().filter(|&i| !found.done[i]).collect();
        ordered(ctx, &undone, pool, progress)
    } else {
        ordered(ctx, mine, pool, progress)
    };
    dry_run(ctx, opts, &todo, pool, builder, progress)
}

/// SRC and DST as absolute paths, once the options allow a migration between them.
fn check_paths(opts: &Options) -> Result<(PathBuf, PathBuf), MigrateError> {
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
    Ok((src, dst))
}

/// SRC as a pass lists it.
struct Listed {
    listing: Listing,
    /// The places of the shard's runs in the listing, ascending.
    mine: Vec<usize>,
}

/// Lists SRC; a SRC without a run file is a usage error.
fn list_src(opts: &Options, src: &Path) -> Result<Listed, MigrateError> {
    let listing = list_store(src).map_err(io_err("cannot list SRC", src))?;
    if listing.runs.is_empty() {
        // Most likely a wrong SRC (a store's parent, a fresh directory): migrating it would make
        // an empty DST and say "0 runs", which reads as success.
        return Err(MigrateError::Usage(no_run_files(src)));
    }
    let mut mine: Vec<usize> = (0..listing.runs.len())
        .filter(|&i| opts.shard.is_none_or(|s| s.owns(&listing.runs.get(i))))
        .collect();
    // Kept to the end of the migration: no slack left from growing it.
    mine.shrink_to_fit();
    Ok(Listed { listing, mine })
}

/// SRC's listing and, for a resume of a migration whose journal has a valid header, that journal
/// reopened ([`open_journal`]) beside the listing: its walk of DST for stale temp files reads
/// every directory of DST, while listing SRC leaves a core idle. Errors are the listing's first.
fn list_and_reopen(
    opts: &Options,
    src: &Path,
    dst: &Path,
) -> Result<(Listed, Option<Opened>), MigrateError> {
    let journal_path = dst.join(CONTROL_DIR).join(journal_name(opts.shard));
    let reopens = opts.resume
        && !opts.dry_run
        && journal_path.is_file()
        && matches!(journal::read_header(&journal_path), Ok(Some(_)));
    if !reopens {
        return Ok((list_src(opts, src)?, None));
    }
    let (listed, opened) = std::thread::scope(|scope| {
        let listed = scope.spawn(|| list_src(opts, src));
        let opened = open_journal(opts, src, dst);
        (joined(listed), opened)
    });
    Ok((listed?, Some(opened?)))
}

/// The shard's journal, open for appending and locked.
struct Opened {
    journal: Writer,
    /// Whether the pass resumes an earlier migration.
    resumed: bool,
    /// How many stale temp files of this shard were removed from DST (on a resume).
    temps_removed: usize,
}

/// The shard's journal, created for a fresh migration or reopened (and locked) for a resume of
/// the same one, and then (once the lock is held) the shard's stale temp files removed.
fn open_journal(opts: &Options, src: &Path, dst: &Path) -> Result<Opened, MigrateError> {
    let (journal, resumed) = create_or_reopen(opts, src, dst)?;
    let temps_removed = if resumed {
        crate::fsio::remove_temps(dst, &shard_temp_prefix(&shard_tag(opts.shard)))
            .map_err(io_err("cannot remove stale temp files in", dst))?
    } else {
        0
    };
    Ok(Opened {
        journal,
        resumed,
        temps_removed,
    })
}

/// The shard's journal, created for a fresh migration or reopened (and locked) for a resume of
/// the same one; whether it resumes.
fn create_or_reopen(
    opts: &Options,
    src: &Path,
    dst: &Path,
) -> Result<(Writer, bool), MigrateError> {
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
        config: Some(opts.config.fingerprint()),
        target: (opts.target != Target::V2).then(|| opts.target.as_str().to_owned()),
        ..Line::default()
    };
    match prepare(dst, &journal_path, &header, opts)? {
        Start::Fresh => {
            std::fs::create_dir_all(&control).map_err(io_err("cannot create", &control))?;
            let writer = open_err(Writer::create(&journal_path, &header), &journal_path)?;
            if opts.durability.per_file() {
                // The journal's directory entries, so a power loss cannot leave outputs without it.
                for dir in [Some(control.as_path()), Some(dst), dst.parent()]
                    .into_iter()
                    .flatten()
                {
                    crate::fsio::fsync_dir(dir).map_err(io_err("cannot sync", dir))?;
                }
            }
            Ok((writer, false))
        }
        Start::Resume => Ok((
            open_err(Writer::reopen(&journal_path), &journal_path)?,
            true,
        )),
    }
}

/// What every step of a pass that writes DST works with, beside its [`Ctx`].
struct Pass<'p> {
    opts: &'p Options,
    pool: &'p rayon::ThreadPool,
    /// DST, open: what `syncfs` syncs.
    dst_dir: &'p File,
    progress: &'p dyn Progress,
}

/// What a pass knows once it has started: after a resume's catch-up, which runs are up to date
/// and how far the journal was read.
struct PassStart<'a> {
    done: Option<Vec<bool>>,
    read: Option<catch_up::ReadSoFar<'a>>,
    journal_cut: bool,
}

/// Starts a pass: for a resume, catches up with SRC and DST and cuts a torn journal tail; then
/// journals the session and the catch-up's removals.
fn start_pass<'a>(
    ctx: &mut Ctx<'a>,
    pass: &Pass<'_>,
    journal: &mut Writer,
    builder: &mut Builder,
    resumed: bool,
) -> Result<PassStart<'a>, MigrateError> {
    let Pass {
        opts,
        pool,
        dst_dir,
        ..
    } = *pass;
    let journal_path = journal.path().to_owned();
    let mut start = PassStart {
        done: None,
        read: None,
        journal_cut: false,
    };
    let mut lines = Vec::new();
    if resumed {
        let found = catch_up::catch_up(
            ctx,
            &journal_path,
            opts.overwrite_changed,
            true,
            pool,
            Some(&mut *builder),
        )?;
        start.journal_cut = journal
            .cut_to(found.read.offset)
            .map_err(io_err("cannot write", &journal_path))?;
        builder.catch_up(found.counts);
        ctx.kept = found.kept;
        ctx.earlier = earlier::Earlier::new(found.earlier, found.foreign_memory, found.others);
        ctx.copies = found.copies;
        start.read = Some(found.read);
        start.done = Some(found.done);
        lines = found.lines;
    }
    let session = Line {
        event: Event::Session,
        resume: Some(resumed),
        synced: Some(opts.durability != Durability::None),
        read_at: Some(ctx.started),
        ..Line::default()
    };
    journal
        .append(&[session], opts.durability.per_file())
        .map_err(io_err("cannot write", &journal_path))?;
    // Outputs removed for runs gone from SRC are made durable before their lines.
    if !lines.is_empty() && opts.durability != Durability::None {
        crate::fsio::syncfs(dst_dir).map_err(io_err("cannot sync", &ctx.dst))?;
    }
    journal
        .append(&lines, opts.durability.per_file())
        .map_err(io_err("cannot write", &journal_path))?;
    Ok(start)
}

/// With `--to r6`: copies SRC's plans and end users in HEAD's form (those no run's conversion
/// wrote), and journals what was written.
fn copy_head_documents(
    ctx: &Ctx,
    pass: &Pass<'_>,
    documents: &Names,
    journal: &mut Writer,
    builder: &mut Builder,
) -> Result<(), MigrateError> {
    let Pass {
        opts,
        dst_dir,
        pool,
        ..
    } = *pass;
    let from = head::CopyFrom {
        store: &ctx.store,
        sink: &ctx.sink,
        documents,
        shard: opts.shard,
        kept: &ctx.kept,
        last: &ctx.copies,
        written: &ctx.shared_writes,
        now: ctx.started,
    };
    let copied = head::copy_documents(&from, pool)
        .map_err(|(err, path)| io_err("cannot write", &ctx.dst.join(path))(err))?;
    // After every read, as a run's line takes it.
    let read_at = crate::stamp::now_ns();
    if opts.durability == Durability::Chunks {
        crate::fsio::syncfs(dst_dir).map_err(io_err("cannot sync", &ctx.dst))?;
    }
    let line = Line {
        event: Event::Copied,
        memory: Some(copied.records),
        inputs: Some(copied.inputs),
        outputs: Some(copied.outputs),
        read_at: Some(read_at),
        ..Line::default()
    };
    let journal_path = journal.path().to_owned();
    journal
        .append(&[line], opts.durability.per_file())
        .map_err(io_err("cannot write", &journal_path))?;
    builder.documents_copied(copied.carried);
    for (name, why) in copied.skipped {
        builder.ignore(&ctx.src.join(name), &why);
    }
    Ok(())
}

/// Ends a pass: the verify pass, then the report written (and made durable) in DST.
fn finish<'a>(
    ctx: &mut Ctx<'a>,
    pass: &Pass<'_>,
    journal_path: &Path,
    read: Option<catch_up::ReadSoFar<'a>>,
    mut builder: Builder,
) -> Result<(BatchReport, PathBuf, FinalLines<'a>), MigrateError> {
    let Pass {
        opts,
        pool,
        dst_dir,
        progress,
    } = *pass;
    progress.verifying();
    // The plans and end users read for conversion are not needed to verify it: they are freed
    // beside the verify pass, which leaves a core partly idle, rather than on one core after it.
    let refs = std::mem::take(&mut ctx.refs);
    let ctx = &*ctx;
    let (verified, finals) = std::thread::scope(|scope| {
        scope.spawn(move || drop(refs));
        verify(
            ctx,
            journal_path,
            read,
            pool,
            &mut builder,
            opts.chunk_size,
            progress,
        )
    })?;
    builder.verified(verified);
    let report = builder.finish();
    let mut text = serde_json::to_string_pretty(&report).expect("reports are JSON");
    text.push('\n');
    let control = ctx.dst.join(CONTROL_DIR);
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
            crate::fsio::syncfs(dst_dir).map_err(io_err("cannot sync", &ctx.dst))?;
        }
        Durability::None => {}
    }
    progress.end();
    Ok((report, report_file, finals))
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

#[cfg(test)]
mod tests {
    use super::verify::check_document;
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
