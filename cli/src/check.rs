//! `planrun check PATH… [--sdk HEAD]`: what the SDK at HEAD would do with each file of a store
//! before you upgrade to it: which files it fails to load, and what it would silently change
//! when it saves them back. Exit 0 when every file loads, 1 when some would fail, 2 on a usage
//! or I/O error.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use planrun_legacy::head::{check, Verdict};
use planrun_legacy::Normalization;

use crate::common::{Format, Globals, Outcome};

/// Arguments of `check`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Files or store directories (every JSON file below them; `.planrun/` is skipped).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// The SDK release to judge by; only `HEAD` (v0.9.0) is known today.
    #[arg(long, default_value = "HEAD", value_name = "VERSION")]
    sdk: String,
}

pub(crate) fn run(globals: &Globals, args: Args) -> anyhow::Result<Outcome> {
    if !args.sdk.eq_ignore_ascii_case("head") {
        bail!(
            "--sdk {}: only HEAD (v0.9.0) is checked today; the rules of older releases are not \
             written down yet",
            args.sdk
        );
    }
    let mut files = Vec::new();
    for path in &args.paths {
        crate::common::collect(path, &mut files)
            .with_context(|| format!("cannot read {}", path.display()))?;
    }
    files.retain(|f| !f.components().any(|c| c.as_os_str() == ".planrun"));
    let mut out = std::io::stdout().lock();
    let (mut failing, mut changing) = (0usize, 0usize);
    for file in &files {
        let bytes = crate::common::read_file(file)?;
        let verdict = match planrun_legacy::parse(&bytes) {
            Ok(parsed) => check(&parsed, in_run_dir(file)),
            Err(err) => Verdict {
                fails: vec![format!(
                    "not a document the SDK reads: {}",
                    err.in_file(file)
                )],
                changes: Vec::new(),
            },
        };
        failing += usize::from(!verdict.fails.is_empty());
        changing += usize::from(verdict.fails.is_empty() && !verdict.changes.is_empty());
        match globals.format {
            Format::Json => writeln!(
                out,
                "{}",
                serde_json::json!({
                    "path": file,
                    "loads": verdict.fails.is_empty(),
                    "fails": verdict.fails,
                    "changes_on_save": verdict.changes.iter().map(change_json).collect::<Vec<_>>(),
                })
            )?,
            Format::Text => {
                for why in &verdict.fails {
                    writeln!(out, "fails    {}: {why}", file.display())?;
                }
                if verdict.fails.is_empty() && !globals.quiet {
                    for change in &verdict.changes {
                        writeln!(out, "changes  {}: {}", file.display(), change_text(change))?;
                    }
                }
            }
        }
    }
    if globals.format == Format::Text && !globals.quiet {
        writeln!(
            out,
            "{} files: {failing} fail to load at HEAD, {changing} load but change when saved, {} load as they are",
            files.len(),
            files.len() - failing - changing
        )?;
    }
    Ok(if failing > 0 {
        Outcome::Partial
    } else {
        Outcome::Success
    })
}

/// Whether `file` is `<run id>/<output name>.json`: an agent-memory file.
fn in_run_dir(file: &Path) -> bool {
    file.parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("prun-"))
}

fn change_text(change: &Normalization) -> String {
    match change {
        Normalization::Defaulted { pointer, value } => format!("{pointer}: written as {value}"),
        Normalization::Dropped { pointer, value } => format!("{pointer}: left out (was {value})"),
        Normalization::Coerced { pointer, from, to } => {
            format!("{pointer}: {from} written as {to}")
        }
        Normalization::Reformatted => "key order or layout".to_owned(),
    }
}

fn change_json(change: &Normalization) -> serde_json::Value {
    match change {
        Normalization::Defaulted { pointer, value } => {
            serde_json::json!({"kind": "defaulted", "pointer": pointer, "value": value})
        }
        Normalization::Dropped { pointer, value } => {
            serde_json::json!({"kind": "dropped", "pointer": pointer, "value": value})
        }
        Normalization::Coerced { pointer, from, to } => {
            serde_json::json!({"kind": "coerced", "pointer": pointer, "from": from, "to": to})
        }
        Normalization::Reformatted => serde_json::json!({"kind": "reformatted"}),
    }
}
