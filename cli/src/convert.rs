//! `planrun convert FILE [--store DIR] [--config FILE]`: one run to its `PlanRunV2` on stdout, in
//! the V2 file format (pretty JSON and a newline; a current run's own bytes). Its plan, end user
//! and agent memory are looked up in the file's own directory, or in `--store`. `FILE` = `-`
//! reads JSON Lines of run documents from stdin and writes JSON Lines of V2 documents (a
//! rejected or blocked line writes nothing on stdout). The loss report goes to stderr, as text,
//! or as JSON with `--format json`. This is the function `planrun migrate` runs on every run of a
//! store, so both give the same bytes.

use std::io::{self, BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use planrun_store::{convert_document, convert_run, ResolvedConfig, RunResult};

use crate::common::{load_config, Format, Globals, Outcome};

/// Arguments of `convert`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A run file (any legacy version, or a PlanRunV2), or `-` for JSON Lines on stdin.
    file: PathBuf,
    /// The store holding the run's plan, end user and agent memory [default: FILE's directory;
    /// for `-`, none: legacy runs are then blocked on their plan].
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
    /// A legacy Config file laid over the SDK's defaults (its secrets are never written).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

pub(crate) fn run(globals: &Globals, args: Args) -> anyhow::Result<Outcome> {
    let config = load_config(args.config.as_deref())?;
    if args.file.as_os_str() == "-" {
        return stream(globals, args.store.as_deref(), &config);
    }
    std::fs::symlink_metadata(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let store = match &args.store {
        Some(store) => store.clone(),
        None => match args.file.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
            _ => PathBuf::from("."),
        },
    };
    let result = convert_run(&args.file, &store, &config);
    let mut out = io::stdout().lock();
    if let Ok(output) = &result.outcome {
        out.write_all(&output.bytes)?;
        out.flush()?;
    }
    tell(globals, &result, None)
}

fn stream(
    globals: &Globals,
    store: Option<&Path>,
    config: &ResolvedConfig,
) -> anyhow::Result<Outcome> {
    let stdin = io::stdin().lock();
    let mut out = BufWriter::new(io::stdout().lock());
    let mut outcome = Outcome::Success;
    for (index, line) in stdin.split(b'\n').enumerate() {
        let line = line.context("cannot read stdin")?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let number = index + 1;
        let origin = PathBuf::from(format!("<stdin>:{number}"));
        let result = convert_document(&line, &origin, None, store, config);
        if let Ok(output) = &result.outcome {
            let compact = if output.class == planrun_store::Class::AlreadyCurrent {
                String::from_utf8_lossy(line.trim_ascii()).into_owned()
            } else {
                let tree: serde_json::Value = serde_json::from_slice(&output.bytes)?;
                serde_json::to_string(&tree)?
            };
            writeln!(out, "{compact}")?;
        }
        if let Outcome::Partial = tell(globals, &result, Some(number))? {
            outcome = Outcome::Partial;
        }
    }
    out.flush()?;
    Ok(outcome)
}

/// Writes a run's loss report (or why it failed) to stderr.
fn tell(globals: &Globals, result: &RunResult, line: Option<usize>) -> anyhow::Result<Outcome> {
    let mut err = io::stderr().lock();
    let failed = result.outcome.is_err();
    if globals.quiet && !failed {
        return Ok(Outcome::Success);
    }
    match globals.format {
        Format::Json => {
            let mut doc = serde_json::json!({
                "path": result.path.to_string_lossy(),
                "class": result.class(),
                "source_version": result.source_version,
            });
            if let Some(line) = line {
                doc["line"] = line.into();
            }
            match &result.outcome {
                Ok(output) => {
                    doc["id"] = output.id.clone().into();
                    doc["report"] = serde_json::to_value(&output.report)?;
                }
                Err(failure) => {
                    doc["error"] = serde_json::json!({
                        "file": failure.file.to_string_lossy(),
                        "pointer": failure.pointer,
                        "line": failure.line,
                        "column": failure.column,
                        "kind": failure.kind,
                        "message": failure.message,
                    });
                }
            }
            writeln!(err, "{doc}")?;
        }
        Format::Text => match &result.outcome {
            Ok(output) => {
                writeln!(
                    err,
                    "{}: {} ({}) -> {}",
                    result.path.display(),
                    output.class,
                    result.source_version.as_deref().unwrap_or("?"),
                    output.id
                )?;
                write!(err, "{}", output.report)?;
            }
            Err(failure) if failure.file == result.path => writeln!(err, "{failure}")?,
            Err(failure) => writeln!(err, "{}: {failure}", result.path.display())?,
        },
    }
    Ok(if failed {
        Outcome::Partial
    } else {
        Outcome::Success
    })
}
