//! `planrun check PATH… [--sdk VERSION]`: what the SDK of one version (HEAD by default) would do
//! with each file of a store before you move to it: which files it fails to load, which it never
//! reads, and what it would silently change when it saves them back. Exit 0 when every file it
//! reads loads, 1 when some would fail, 2 on a usage or I/O error.

use std::io::Write;
use std::path::PathBuf;

use planrun_legacy::sdk::{parse_sdk, release, sdk_name};
use planrun_legacy::{Normalization, Version};

use crate::common::{Format, Globals, Outcome};

/// Arguments of `check`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Files or store directories (every JSON file below them; `.planrun/` is skipped).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// The SDK to judge by: `HEAD` (v0.9.0), or a wire version or the release it is judged as:
    /// W1 (0.0.1-alpha.50), R0 (0.1.0-alpha), R1 (0.1.10), R2 (v0.1.12), R3 (v0.2.0), R4
    /// (v0.3.0), R5 (v0.3.2), R6 (HEAD).
    #[arg(long, default_value = "HEAD", value_name = "VERSION", value_parser = parse_sdk)]
    sdk: Version,
}

pub(crate) fn run(globals: &Globals, args: Args) -> anyhow::Result<Outcome> {
    let sdk = args.sdk;
    let checked = planrun_store::check::check_paths(&args.paths, sdk).map_err(|(err, path)| {
        anyhow::Error::new(err).context(format!("cannot read {}", path.display()))
    })?;
    let mut out = std::io::stdout().lock();
    let (mut failing, mut changing, mut unread) = (0usize, 0usize, 0usize);
    for file in &checked {
        let verdict = &file.verdict;
        failing += usize::from(!verdict.fails.is_empty());
        changing += usize::from(verdict.fails.is_empty() && !verdict.changes.is_empty());
        unread += usize::from(verdict.unread.is_some());
        match globals.format {
            Format::Json => writeln!(out, "{}", file.to_json())?,
            Format::Text => {
                for why in &verdict.fails {
                    writeln!(out, "fails    {}: {why}", file.path.display())?;
                }
                if let (Some(why), false) = (&verdict.unread, globals.quiet) {
                    writeln!(out, "unread   {}: {why}", file.path.display())?;
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
        let at = if sdk == Version::HEAD {
            "HEAD".to_owned()
        } else {
            format!("{sdk} ({})", release(sdk))
        };
        let not_read = if unread > 0 {
            format!(", {unread} not read by {}", sdk_name(sdk))
        } else {
            String::new()
        };
        writeln!(
            out,
            "{} files: {failing} fail to load at {at}, {changing} load but change when saved, {} load as they are{not_read}",
            files.len(),
            files.len() - failing - changing - unread
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
