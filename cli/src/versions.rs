//! `planrun versions`: the legacy wire versions this toolkit reads, from the one registry.

use std::io::Write;

use planrun_legacy::{Version, REGISTRY};

use crate::common::{Format, Globals, Outcome};

/// Arguments of `versions`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(globals: &Globals, _args: Args) -> anyhow::Result<Outcome> {
    let text = match globals.format {
        Format::Json => format!("{}\n", serde_json::to_string_pretty(&REGISTRY)?),
        Format::Text => {
            let mut text = String::new();
            for info in &REGISTRY {
                let head = if info.version == Version::HEAD {
                    " (HEAD)"
                } else {
                    ""
                };
                text.push_str(&format!(
                    "{:<3} {:<16} {}-  {}{head}\n",
                    info.name,
                    info.releases,
                    info.run_prefix.as_str(),
                    info.adds
                ));
            }
            text
        }
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(Outcome::Success)
}
