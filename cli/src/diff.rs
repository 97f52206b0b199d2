//! `planrun diff A B`: the differences between two JSON documents, by JSON pointer. Exit 0 when
//! they are equal, 1 when they differ.

use std::io::Write;
use std::path::PathBuf;

use serde_json::Value;

use crate::common::{Format, Globals, Outcome};
use planrun_converter::diff::{diff, Difference};

/// Arguments of `diff`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The first document.
    a: PathBuf,
    /// The second document.
    b: PathBuf,
}

fn read(path: &PathBuf) -> anyhow::Result<Value> {
    let bytes = crate::common::read_file(path)?;
    planrun_wire::json::parse_value(&bytes).map_err(|e| anyhow::anyhow!("{}", e.in_file(path)))
}

pub(crate) fn run(globals: &Globals, args: Args) -> anyhow::Result<Outcome> {
    let differences = diff(&read(&args.a)?, &read(&args.b)?);
    let mut out = std::io::stdout().lock();
    match globals.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&differences)?)?,
        Format::Text if !globals.quiet => {
            for d in &differences {
                match d {
                    Difference::Removed { pointer, .. } => writeln!(out, "- {pointer}")?,
                    Difference::Added { pointer, .. } => writeln!(out, "+ {pointer}")?,
                    Difference::Changed { pointer, from, to } => {
                        writeln!(out, "~ {pointer}: {} → {}", short(from), short(to))?;
                    }
                }
            }
        }
        Format::Text => {}
    }
    Ok(if differences.is_empty() {
        Outcome::Success
    } else {
        Outcome::Partial
    })
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}
