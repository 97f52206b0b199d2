//! What the verbs share: the global options, the outcome that becomes the exit code, and the
//! helpers more than one verb needs (reading the user's files, `--config`).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::ValueEnum;
use planrun_store::ResolvedConfig;

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Human-readable lines.
    Text,
    /// One JSON document (or JSON Lines for streams).
    Json,
}

/// Options every verb sees.
pub(crate) struct Globals {
    /// Report format.
    pub format: Format,
    /// Print only errors.
    pub quiet: bool,
}

/// What a verb ended with; mapped to the documented exit codes.
pub(crate) enum Outcome {
    /// Everything read or converted.
    Success,
    /// Some documents were rejected or blocked.
    Partial,
}

/// Loads `--config`, or the SDK's defaults.
pub(crate) fn load_config(path: Option<&Path>) -> anyhow::Result<ResolvedConfig> {
    Ok(match path {
        Some(path) => ResolvedConfig::from_file(path)?,
        None => ResolvedConfig::sdk_defaults()?,
    })
}

/// Reads a file the user named; the error says which.
pub(crate) fn read_file(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Every `.json` file under `path` (itself if it is a file), sorted; symlinks are not followed.
pub(crate) fn collect(path: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    planrun_store::check::json_files(path, out)
}
