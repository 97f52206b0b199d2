//! `planrun migrate SRC --out DST [--to v2|r6]`: a whole legacy store to a directory of
//! PlanRunV2 files, or to a store the SDK at HEAD loads completely, in parallel, crash-safe and
//! resumable (see `planrun_store::migrate` and docs/migration.md for the
//! layout of DST, the journal and what a crash can lose). Exit 0 when every run was converted
//! (or already current), 1 when some were rejected or blocked, 2 on a usage or I/O error.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};
use planrun_store::migrate::{
    migrate, Durability, Options, Progress, Shard, Summary, Target, DEFAULT_CHUNK_SIZE,
};

use crate::common::{load_config, Format, Globals, Outcome};

/// What `--to` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum To {
    /// PlanRunV2 files.
    V2,
    /// The SDK's HEAD format (a DiskFileStorage store).
    R6,
}

/// Arguments of `migrate`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The legacy DiskFileStorage directory; it is never written.
    src: PathBuf,
    /// The destination: a new or empty directory, or an interrupted migration of SRC (with
    /// --resume).
    #[arg(long, value_name = "DST")]
    out: PathBuf,
    /// Worker threads [default: the number of cores].
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Bring DST up to date with SRC as it is now: continue an interrupted migration, convert
    /// runs that are new or whose files changed since, remove the outputs of runs gone from
    /// SRC, and keep (and report) outputs someone else changed in DST (starts a migration if
    /// DST is new or empty).
    #[arg(long)]
    resume: bool,
    /// Convert and verify every run in memory; write nothing but --report. With --resume: what
    /// a catch-up would do (counts of up-to-date, changed, new, removed runs and conflicts).
    #[arg(long)]
    dry_run: bool,
    /// With --resume: replace outputs someone else changed in DST since they were written (by
    /// default they are kept and reported as conflicts, exit 1).
    #[arg(long, requires = "resume")]
    overwrite_changed: bool,
    /// Also write the JSON report to FILE.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// A legacy Config file laid over the SDK's defaults (its secrets are never written).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// What DST becomes: `v2`, a directory of PlanRunV2 files, or `r6`, a DiskFileStorage store
    /// the SDK at HEAD loads completely (each file exactly as HEAD writes it; what HEAD cannot
    /// hold is kept in DST/.planrun/residue/, which the SDK never reads).
    #[arg(long, value_enum, default_value_t = To::V2)]
    to: To,
    /// Migrate only shard I of N: the runs whose FNV-1a 64 file-name hash mod N is I.
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    /// fsync every output and its directory before journaling it (default: one syncfs per
    /// chunk of runs).
    #[arg(long)]
    durable: bool,
    /// Never sync: leave outputs and journal to the kernel's write-back, as `cp -r` does. Faster
    /// on disk; after an OS crash or power loss, --resume redoes every output that did not
    /// reach the disk.
    #[arg(long, conflicts_with = "durable")]
    no_sync: bool,
    /// Runs per chunk (memory bound and group-commit size).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CHUNK_SIZE, hide = true)]
    chunk_size: usize,
}

struct Bar(ProgressBar);

impl Progress for Bar {
    fn ordering(&self) {
        self.0.set_message("ordering runs by plan…");
    }

    fn begin(&self, todo: u64, skipped: u64) {
        self.0.set_length(todo);
        if skipped > 0 {
            self.0
                .set_message(format!("({skipped} done before, skipped)"));
        } else {
            self.0.set_message("");
        }
    }

    fn advance(&self, n: u64) {
        self.0.inc(n);
    }

    fn verifying(&self) {
        self.0.set_message("verifying outputs…");
    }

    fn end(&self) {
        self.0.finish_and_clear();
    }
}

pub(crate) fn run(globals: &Globals, args: Args) -> anyhow::Result<Outcome> {
    let jobs = match args.jobs {
        Some(0) => bail!("--jobs must be at least 1"),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
    };
    if let Some(report) = &args.report {
        if let (Ok(src), Some(parent)) = (std::fs::canonicalize(&args.src), report.parent()) {
            let parent = if parent.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                parent.to_owned()
            };
            if std::fs::canonicalize(&parent).is_ok_and(|p| p.starts_with(&src)) {
                bail!(
                    "--report {} is inside SRC, which is never written",
                    report.display()
                );
            }
        }
    }
    let Some(durability) = Durability::from_flags(args.durable, args.no_sync) else {
        bail!("--durable and --no-sync cannot be combined");
    };
    let options = Options {
        src: args.src,
        dst: args.out,
        jobs,
        resume: args.resume,
        dry_run: args.dry_run,
        shard: args.shard,
        durability,
        chunk_size: args.chunk_size,
        config: load_config(args.config.as_deref())?,
        target: match args.to {
            To::V2 => Target::V2,
            To::R6 => Target::Head,
        },
        overwrite_changed: args.overwrite_changed,
    };
    let summary = if !globals.quiet && std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(0).with_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs, eta {eta} {msg}",
            )
            .expect("a valid template"),
        );
        let bar = Bar(bar);
        let summary = migrate(&options, &bar);
        bar.0.finish_and_clear();
        summary?
    } else {
        migrate(&options, &())?
    };
    let text = serde_json::to_string_pretty(&summary.report)? + "\n";
    if let Some(path) = &args.report {
        std::fs::write(path, &text)
            .with_context(|| format!("cannot write the report {}", path.display()))?;
    }
    print(globals, &summary, &text)?;
    Ok(if summary.report.failed() > 0 {
        Outcome::Partial
    } else {
        Outcome::Success
    })
}

fn print(globals: &Globals, summary: &Summary, json: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match globals.format {
        Format::Json => out.write_all(json.as_bytes())?,
        Format::Text if globals.quiet => {
            // Errors only: the runs that failed and the kept conflicts.
            std::io::stderr()
                .lock()
                .write_all(summary.report.failures_text().as_bytes())?;
        }
        Format::Text => {
            if summary.resumed {
                writeln!(
                    out,
                    "resumed: {} {} up to date (inputs unchanged, outputs verified, skipped), {} stale temp {} removed{}",
                    summary.skipped,
                    if summary.skipped == 1 { "run" } else { "runs" },
                    summary.temps_removed,
                    if summary.temps_removed == 1 { "file" } else { "files" },
                    if summary.journal_cut { ", a torn journal line cut off" } else { "" }
                )?;
            }
            out.write_all(summary.report.to_text().as_bytes())?;
            if let Some(file) = &summary.report_file {
                writeln!(out, "report: {}", file.display())?;
            }
        }
    }
    out.flush()?;
    Ok(())
}
