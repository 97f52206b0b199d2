//! `planrun gen --runs N --out DIR`: writes a deterministic, realistic legacy DiskFileStorage
//! store (runs of the chosen versions, their plans, end users and agent memory) for rehearsing a
//! migration or for scale tests. DIR must not exist or be empty: nothing is overwritten.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use planrun_gen::{generate, GenOptions, DEFAULT_LARGE_EVERY};
use planrun_legacy::Version;

use crate::common::{Format, Globals, Outcome};

/// Arguments of `gen`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// How many runs to write.
    #[arg(long)]
    runs: usize,
    /// The seed: the same options write byte-identical stores.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Wire versions of the runs, comma-separated, assigned round-robin [default: all eight].
    #[arg(long, value_delimiter = ',', value_parser = parse_version, value_name = "W1,R0,…,R6")]
    versions: Vec<Version>,
    /// The store directory to create (it may exist if it is empty).
    #[arg(long)]
    out: PathBuf,
    /// Every Kth run is large (tens of KB of output text); 0 = never.
    #[arg(long, default_value_t = DEFAULT_LARGE_EVERY, value_name = "K")]
    large_every: usize,
    /// Write a store with a history, as one directory that the releases of --versions wrote
    /// into in turn: some plans saved again by a later release, some runs before v0.3.0 whose
    /// plan was never saved, some W1/R0 plans that repeat a step output.
    #[arg(long)]
    history: bool,
}

fn parse_version(text: &str) -> Result<Version, String> {
    Version::parse(text.trim()).ok_or_else(|| {
        let names: Vec<&str> = Version::ALL.iter().map(|v| v.as_str()).collect();
        format!(
            "unknown version {text:?} (expected one of {})",
            names.join(", ")
        )
    })
}

pub(crate) fn run(globals: &Globals, args: Args) -> anyhow::Result<Outcome> {
    let opts = GenOptions {
        runs: args.runs,
        seed: args.seed,
        versions: if args.versions.is_empty() {
            Version::ALL.to_vec()
        } else {
            args.versions
        },
        large_every: args.large_every,
        history: args.history,
    };
    let summary = generate(&opts, &args.out)
        .with_context(|| format!("cannot generate a store in {}", args.out.display()))?;
    if globals.quiet {
        return Ok(Outcome::Success);
    }
    let mut out = std::io::stdout().lock();
    match globals.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string(&summary)?)?,
        Format::Text => {
            let per_version: Vec<String> = summary
                .runs_per_version
                .iter()
                .map(|(v, n)| format!("{v} {n}"))
                .collect();
            writeln!(
                out,
                "{}: {} files, {} bytes; {} runs ({}), {} plans, {} end users, {} agent-memory files, {} large runs, {} runs without an end-user file",
                args.out.display(),
                summary.files,
                summary.bytes,
                summary.runs,
                per_version.join(", "),
                summary.plans,
                summary.end_users,
                summary.agent_memory_files,
                summary.large_runs,
                summary.runs_without_end_user_file,
            )?;
            if args.history {
                writeln!(
                    out,
                    "history: {} plans saved again by a later release, {} plans never saved ({} runs without a plan file), {} plans that repeat an output",
                    summary.plans_saved_again,
                    summary.plans_never_saved,
                    summary.runs_without_plan_file,
                    summary.plans_repeating_an_output,
                )?;
            }
        }
    }
    Ok(Outcome::Success)
}
