//! `planrun renames`: the rename table that the chain runs on, as text, JSON or Markdown.

use std::io::Write;

use crate::common::{Format, Globals, Outcome};
use planrun_converter::renames;

/// Arguments of `renames`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print the Markdown table docs/formats.md shows.
    #[arg(long, conflicts_with = "format")]
    markdown: bool,
}

pub(crate) fn run(globals: &Globals, args: Args) -> anyhow::Result<Outcome> {
    let text = if args.markdown {
        renames::markdown()
    } else {
        match globals.format {
            Format::Text => renames::text(),
            Format::Json => format!("{}\n", serde_json::to_string_pretty(renames::TABLE)?),
        }
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(Outcome::Success)
}
