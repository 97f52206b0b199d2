//! The configuration every run of a conversion gets.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use planrun_converter::report::LossReport;
use planrun_converter::upgrade::{resolve_config, ConvertError};
use planrun_legacy::{LegacyDocument, ParseError};
use planrun_v2::render::Rendered;

use crate::loss::SharedEntries;
use crate::names::fnv1a64;

/// The configuration every run of a conversion gets: the user's `--config` over the SDK's
/// defaults, secrets redacted, with what resolving it did.
#[derive(Debug, Clone)]
pub struct ResolvedConfig {
    /// The report entries of resolving it; they open every run's loss report.
    report: Arc<SharedEntries>,
    /// The V2 config written into every run, with its text inside a run, written once for all
    /// the runs that hold it.
    rendered: Rendered<planrun_v2::Config>,
}

/// A `--config` file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// It is not a legacy document.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// It is a legacy document, but not a Config.
    #[error("{}: not a Config but a {kind} document", path.display())]
    NotAConfig {
        /// The file.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// The config does not resolve.
    #[error("{}: {source}", path.display())]
    Resolve {
        /// The file.
        path: PathBuf,
        /// Why.
        source: ConvertError,
    },
}

impl ResolvedConfig {
    /// A resolved config and the report of resolving it.
    pub fn new(config: Arc<planrun_v2::Config>, report: LossReport) -> Self {
        ResolvedConfig {
            report: SharedEntries::new(report),
            rendered: Rendered::new(config),
        }
    }

    /// The report entries of resolving it; they open every run's loss report.
    pub fn report(&self) -> &LossReport {
        self.report.report()
    }

    /// [`ResolvedConfig::report`], as the runs share it.
    pub(crate) fn shared_report(&self) -> &Arc<SharedEntries> {
        &self.report
    }

    /// The V2 config written into every run, shared by them.
    pub fn config(&self) -> &Arc<planrun_v2::Config> {
        self.rendered.value()
    }

    /// The config rendered once (see [`planrun_v2::render`]).
    pub(crate) fn rendered(&self) -> &Rendered<planrun_v2::Config> {
        &self.rendered
    }

    /// The SDK's defaults (no `--config`).
    pub fn sdk_defaults() -> Result<Self, ConfigError> {
        let (config, report) = resolve_config(None).map_err(|source| ConfigError::Resolve {
            path: PathBuf::from("(SDK defaults)"),
            source,
        })?;
        Ok(ResolvedConfig::new(config, report))
    }

    /// A legacy Config file over the SDK's defaults.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let bytes = std::fs::read(path).map_err(|source| ConfigError::Io {
            path: path.to_owned(),
            source,
        })?;
        let parsed = planrun_legacy::parse(&bytes).map_err(|e| e.in_file(path))?;
        let LegacyDocument::Config(user) = &parsed.document else {
            return Err(ConfigError::NotAConfig {
                path: path.to_owned(),
                kind: parsed.detection.kind.as_str(),
            });
        };
        let (config, report) =
            resolve_config(Some(user)).map_err(|source| ConfigError::Resolve {
                path: path.to_owned(),
                source,
            })?;
        Ok(ResolvedConfig::new(config, report))
    }

    /// A fingerprint of the config and its report: a resumed migration must use the same one.
    pub fn fingerprint(&self) -> String {
        let text = serde_json::to_string(&(self.config(), self.report())).expect("config is JSON");
        planrun_wire::join::hex16(fnv1a64(text.as_bytes()))
    }
}
