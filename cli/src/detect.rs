//! `planrun detect PATH…`: what each file is, which versions could have written it and why; for a
//! directory, every JSON file below it and a count per kind and version.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;

use crate::common::{Format, Globals, Outcome};

/// Arguments of `detect`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Files or store directories.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

pub(crate) fn run(globals: &Globals, args: Args) -> anyhow::Result<Outcome> {
    let mut files = Vec::new();
    for path in &args.paths {
        crate::common::collect(path, &mut files)
            .with_context(|| format!("cannot read {}", path.display()))?;
    }
    let mut out = std::io::stdout().lock();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut rejected = 0;
    for file in &files {
        let bytes = crate::common::read_file(file)?;
        match planrun_legacy::detect(&bytes) {
            Ok(detection) => {
                *counts
                    .entry(format!(
                        "{} {}",
                        detection.kind.as_str(),
                        detection.versions
                    ))
                    .or_default() += 1;
                if globals.quiet {
                    continue;
                }
                match globals.format {
                    Format::Text => writeln!(out, "{}: {detection}", file.display())?,
                    Format::Json => writeln!(
                        out,
                        "{}",
                        serde_json::json!({"path": file, "ok": true, "detection": detection})
                    )?,
                }
            }
            Err(err) => {
                rejected += 1;
                let err = err.in_file(file);
                match globals.format {
                    Format::Text => eprintln!("rejected: {err}"),
                    Format::Json => writeln!(
                        out,
                        "{}",
                        serde_json::json!({"path": file, "ok": false, "error": {
                            "kind": err.kind.as_str(), "pointer": err.pointer,
                            "line": err.line, "column": err.column, "message": err.message}})
                    )?,
                }
            }
        }
    }
    if !globals.quiet && globals.format == Format::Text && files.len() > 1 {
        for (what, n) in &counts {
            writeln!(out, "{n:>8}  {what}")?;
        }
        writeln!(out, "{rejected:>8}  rejected")?;
    }
    Ok(if rejected > 0 {
        Outcome::Partial
    } else {
        Outcome::Success
    })
}
