//! `planrun schema compat OLD NEW [--require backward|forward|full]`: classifies the change from
//! OLD to NEW (two schema files, or two directories of them matched by relative file name) as
//! BACKWARD, FORWARD, FULL or BREAKING compatible, in Confluent Schema Registry's meaning, and
//! lists every rule that fired with JSON pointers into both schemas. Exit codes: 0 when the
//! verdict meets `--require` (default `backward`), 1 when it does not, 2 on a usage or I/O error.

use std::io::Write;
use std::path::PathBuf;

use planrun_schemas::compat::{compare_paths, CompatError, Requirement};

use crate::common::{Format, Globals, Outcome};

/// Arguments of `schema compat`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The old schema file, or a directory of them.
    old: PathBuf,
    /// The new schema file, or a directory of them (files matched by relative name).
    new: PathBuf,
    /// The compatibility the change must have for exit code 0.
    #[arg(long, value_enum, default_value_t = RequireArg::Backward)]
    require: RequireArg,
}

/// The values of `--require`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RequireArg {
    /// Consumers using NEW can read data written with OLD (BACKWARD or FULL).
    Backward,
    /// Consumers using OLD can read data written with NEW (FORWARD or FULL).
    Forward,
    /// Both (FULL).
    Full,
}

impl From<RequireArg> for Requirement {
    fn from(arg: RequireArg) -> Self {
        match arg {
            RequireArg::Backward => Requirement::Backward,
            RequireArg::Forward => Requirement::Forward,
            RequireArg::Full => Requirement::Full,
        }
    }
}

pub(crate) fn run(globals: &Globals, args: Args) -> anyhow::Result<Outcome> {
    let required = Requirement::from(args.require);
    let report = compare_paths(&args.old, &args.new).map_err(|e| match e {
        CompatError::Usage(message) => anyhow::anyhow!("{message}"),
        other => anyhow::Error::new(other),
    })?;
    let met = report.verdict.satisfies(required);
    let mut out = std::io::stdout().lock();
    match globals.format {
        Format::Text => {
            if !globals.quiet || !met {
                out.write_all(report.to_text().as_bytes())?;
                writeln!(
                    out,
                    "required: {required} ({})",
                    if met { "met" } else { "NOT met" }
                )?;
            }
        }
        Format::Json => writeln!(
            out,
            "{}",
            serde_json::json!({
                "old": args.old,
                "new": args.new,
                "verdict": report.verdict,
                "required": required,
                "met": met,
                "files": report.files,
            })
        )?,
    }
    Ok(if met {
        Outcome::Success
    } else {
        Outcome::Partial
    })
}
