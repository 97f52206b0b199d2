//! `planrun`: detect, convert, migrate and downgrade stored Portia SDK runs.
//!
//! The command line. Exit codes: 0 everything converted (or read), 1 some documents were
//! rejected or blocked, 2 a usage or I/O error. A closed pipe on stdout ends quietly with 0.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::common::{Format, Globals, Outcome};

mod check;
mod common;
mod compat;
mod convert;
mod detect;
mod diff;
mod downgrade;
mod gen;
mod help;
mod migrate;
mod renames;
mod report;
mod schema;
mod validate;
mod versions;

/// Migrate stored Portia SDK runs (every legacy wire version) to PlanRunV2 and back.
#[derive(Debug, Parser)]
#[command(name = "planrun", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Output format of reports.
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Print only errors.
    #[arg(long, short, global = true)]
    quiet: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Convert one run (or JSON Lines of runs on stdin) to PlanRunV2 on stdout; the loss report on stderr.
    #[command(after_help = help::CONVERT)]
    Convert(convert::Args),
    /// Migrate a whole store to a directory of PlanRunV2 files: parallel, crash-safe, resumable.
    #[command(after_help = help::MIGRATE)]
    Migrate(migrate::Args),
    /// Work with migration reports (merge the reports of shards).
    #[command(after_help = help::REPORT)]
    Report(report::Args),
    /// Say what a file or store is: document kinds, versions and the evidence for them.
    #[command(after_help = help::DETECT)]
    Detect(detect::Args),
    /// Say which files an SDK (HEAD by default) would fail to load, and what a save would change.
    #[command(after_help = help::CHECK)]
    Check(check::Args),
    /// Convert a PlanRunV2 back to the SDK's HEAD format: run, plan and end user.
    #[command(after_help = help::DOWNGRADE)]
    Downgrade(downgrade::Args),
    /// List the legacy wire versions this toolkit reads: name, SDK releases, what each changed.
    #[command(after_help = help::TOOL)]
    Versions(versions::Args),
    /// Print the rename table the migration chain runs on.
    #[command(after_help = help::TOOL)]
    Renames(renames::Args),
    /// Show the differences between two JSON documents, by JSON pointer.
    #[command(after_help = help::DIFF)]
    Diff(diff::Args),
    /// Work with the published JSON Schemas (draft 2020-12) of the legacy and V2 formats.
    #[command(after_help = help::TOOL)]
    Schema(schema::Args),
    /// Check documents against the published JSON Schemas; report every violation.
    #[command(after_help = help::VALIDATE)]
    Validate(validate::Args),
    /// Write a deterministic, realistic legacy store (for migration rehearsals and scale tests).
    #[command(after_help = help::GEN)]
    Gen(gen::Args),
}

/// Parses the command line, runs the verb and maps its result to an exit code.
fn run() -> ExitCode {
    let cli = Cli::parse();
    let globals = Globals {
        format: cli.format,
        quiet: cli.quiet,
    };
    let result = match cli.command {
        Command::Convert(args) => convert::run(&globals, args),
        Command::Migrate(args) => migrate::run(&globals, args),
        Command::Report(args) => report::run(&globals, args),
        Command::Detect(args) => detect::run(&globals, args),
        Command::Check(args) => check::run(&globals, args),
        Command::Downgrade(args) => downgrade::run(&globals, args),
        Command::Versions(args) => versions::run(&globals, args),
        Command::Renames(args) => renames::run(&globals, args),
        Command::Diff(args) => diff::run(&globals, args),
        Command::Schema(args) => schema::run(&globals, args),
        Command::Validate(args) => validate::run(&globals, args),
        Command::Gen(args) => gen::run(&globals, args),
    };
    match result {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::Partial) => ExitCode::from(1),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            let _ = writeln!(io::stderr(), "error: {}", chain(&err));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes, `: `-separated, each said once: an error whose own message already
/// ends with its cause's (`cannot read SRC /x: No such file or directory (os error 2)`, which
/// keeps the cause for [`is_broken_pipe`]) is not followed by it again, as `{:#}` would.
fn chain(err: &anyhow::Error) -> String {
    let mut out = String::new();
    let mut last = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if !last.is_empty() && last.ends_with(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
        last = text;
    }
    out
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Conversion allocates many small strings and maps; mimalloc cuts the allocator's share of the
/// batch profile (malloc/free were a fifth of it).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    run()
}
