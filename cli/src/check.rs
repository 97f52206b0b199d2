//! `planrun check PATH… [--sdk HEAD]`: what the SDK at HEAD would do with each file of a store
//! before you upgrade to it: which files it fails to load, and what it would silently change
//! when it saves them back. Exit 0 when every file loads, 1 when some would fail, 2 on a usage
//! or I/O error.

use std::io::Write;
use std::path::PathBuf;

use anyhow::bail;
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
    let checked = planrun_store::check::check_paths(&args.paths).map_err(|(err, path)| {
        anyhow::Error::new(err).context(format!("cannot read {}", path.display()))
    })?;
    let mut out = std::io::stdout().lock();
    let (mut failing, mut changing) = (0usize, 0usize);
    for file in &checked {
        let verdict = &file.verdict;
        failing += usize::from(!verdict.fails.is_empty());
        changing += usize::from(verdict.fails.is_empty() && !verdict.changes.is_empty());
        match globals.format {
            Format::Json => writeln!(out, "{}", file.to_json())?,
            Format::Text => {
                for why in &verdict.fails {
                    writeln!(out, "fails    {}: {why}", file.path.display())?;
                }
                if verdict.fails.is_empty() && !globals.quiet {
                    for change in &verdict.changes {
                        writeln!(
                            out,
                            "changes  {}: {}",
                            file.path.display(),
                            change_text(change)
                        )?;
                    }
                }
            }
        }
    }
    let files = &checked;
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
