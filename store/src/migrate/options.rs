//! What a migration is asked to do: its options (target, shard, durability), how it reports
//! progress, and what it returns.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use super::report::BatchReport;
use crate::{fnv1a64, Durability, ResolvedConfig};

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

pub(super) fn shard_tag(shard: Option<Shard>) -> String {
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
    /// [`MigrateError::Cancelled`](super::MigrateError::Cancelled), leaving DST as a crash would, to be continued with
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
