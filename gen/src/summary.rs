//! What [`generate`](crate::generate) reports: counts of what it wrote and a manifest of every
//! file with its kind and the SDK version that wrote it, so callers can check a store without
//! walking it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use planrun_legacy::Version;
use serde::Serialize;

/// What a generated file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// A run (`wkfl-`, `pr-` or `prun-…json`).
    Run,
    /// A plan (`plan-…json`).
    Plan,
    /// An end user (`<external_id>.json`).
    EndUser,
    /// An agent-memory value (`<prun-id>/<output_name>.json`).
    AgentMemory,
}

/// One generated file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GenFile {
    /// Relative to the store directory.
    pub path: PathBuf,
    /// What it is.
    pub kind: FileKind,
    /// The version of the SDK that wrote it: the run's; for a plan, the version of the runs that
    /// share it; for an end user, the newest version among its runs (the last writer).
    pub version: Version,
    /// Its size.
    pub bytes: u64,
}

/// What [`generate`](crate::generate) wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GenSummary {
    /// Runs written.
    pub runs: usize,
    /// Runs per wire version.
    pub runs_per_version: BTreeMap<Version, usize>,
    /// Plan files.
    pub plans: usize,
    /// End-user files.
    pub end_users: usize,
    /// Agent-memory files.
    pub agent_memory_files: usize,
    /// R4+ runs whose `end_user_id` has no file, on purpose.
    pub runs_without_end_user_file: usize,
    /// Runs with tens of KB of output text.
    pub large_runs: usize,
    /// Plan files a later release saved again (a store with a history).
    pub plans_saved_again: usize,
    /// Plans never saved, whose runs have no plan file (a store with a history).
    pub plans_never_saved: usize,
    /// Runs whose plan file does not exist (a store with a history).
    pub runs_without_plan_file: usize,
    /// W1/R0 plans that repeat a step output (a store with a history).
    pub plans_repeating_an_output: usize,
    /// Every file written.
    pub files: usize,
    /// Bytes of every file written.
    pub bytes: u64,
    /// Bytes of the run files alone.
    pub run_bytes: u64,
    /// Every file with its kind and version: each run followed by its agent-memory files, then
    /// the plans, then the end users.
    #[serde(skip)]
    pub manifest: Vec<GenFile>,
}

impl GenSummary {
    /// Counts a run and appends its files (the run file, then its agent-memory files).
    pub(crate) fn add_run(
        &mut self,
        version: Version,
        large: bool,
        without_end_user_file: bool,
        without_plan_file: bool,
        files: Vec<GenFile>,
    ) {
        self.runs += 1;
        self.runs_without_plan_file += usize::from(without_plan_file);
        *self.runs_per_version.entry(version).or_default() += 1;
        self.large_runs += usize::from(large);
        self.runs_without_end_user_file += usize::from(without_end_user_file);
        for file in files {
            match file.kind {
                FileKind::Run => self.run_bytes += file.bytes,
                FileKind::AgentMemory => self.agent_memory_files += 1,
                _ => {}
            }
            self.manifest.push(file);
        }
    }

    /// Appends the plan files.
    pub(crate) fn add_plans(&mut self, files: Vec<GenFile>) {
        self.plans += files.len();
        self.manifest.extend(files);
    }

    /// Appends an end-user file.
    pub(crate) fn add_end_user(&mut self, file: GenFile) {
        self.end_users += 1;
        self.manifest.push(file);
    }

    /// Totals over the manifest, once every file is in.
    pub(crate) fn finish(mut self) -> Self {
        self.files = self.manifest.len();
        self.bytes = self.manifest.iter().map(|f| f.bytes).sum();
        self
    }
}
