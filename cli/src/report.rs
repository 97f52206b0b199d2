//! `planrun report merge REPORT… --out FILE`: the reports of the shards of one store
//! (`DST/.planrun/report-i-of-n.json`) merged into the report of the whole. Exit 0 when no run
//! was rejected or blocked, 1 when some were, 2 when the reports cannot be merged.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use planrun_store::migrate::report::{merge, BatchReport};

use crate::common::{Format, Globals, Outcome};

/// Arguments of `report`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Merge shard reports of one store into one report.
    Merge {
        /// The shard reports.
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// Where to write the merged report.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
}

pub(crate) fn run(globals: &Globals, args: Args) -> anyhow::Result<Outcome> {
    let Command::Merge { reports, out } = args.command;
    let mut parsed: Vec<BatchReport> = Vec::with_capacity(reports.len());
    for path in &reports {
        let bytes = crate::common::read_file(path)?;
        parsed.push(
            serde_json::from_slice(&bytes)
                .with_context(|| format!("{} is not a migration report", path.display()))?,
        );
    }
    let merged = merge(parsed).context("cannot merge the reports")?;
    let text = serde_json::to_string_pretty(&merged)? + "\n";
    std::fs::write(&out, &text).with_context(|| format!("cannot write {}", out.display()))?;
    if !globals.quiet {
        let mut stdout = std::io::stdout().lock();
        match globals.format {
            Format::Json => stdout.write_all(text.as_bytes())?,
            Format::Text => {
                stdout.write_all(merged.to_text().as_bytes())?;
                if (merged.shards.len() as u64) < merged.shard_count {
                    writeln!(
                        stdout,
                        "note: {} of {} shards merged",
                        merged.shards.len(),
                        merged.shard_count
                    )?;
                }
            }
        }
    }
    Ok(if merged.failed() > 0 {
        Outcome::Partial
    } else {
        Outcome::Success
    })
}
