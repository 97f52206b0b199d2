//! The eight run wire versions and sets of them, so detection can say "R1–R2" when the evidence
//! allows two versions instead of guessing one.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::id::Prefix;

/// A wire version of the run object. The one list of versions is [`REGISTRY`]; everything else
/// (detection, the migration chain, reports, the generator, the CLI) reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    /// `Workflow`, `wkfl-` ids (0.0.1-alpha.50).
    W1,
    /// `PlanRun`, `pr-` ids (0.1.0-alpha).
    R0,
    /// `prun-` ids (0.1.0 – 0.1.11).
    R1,
    /// Agent-memory outputs (v0.1.12).
    R2,
    /// No system-context extensions (v0.2.0).
    R3,
    /// Top-level `end_user_id`, EndUser files (v0.3.0).
    R4,
    /// `plan_run_inputs` (v0.3.2).
    R5,
    /// No `execution_context` (v0.3.4 – HEAD).
    R6,
}

/// What the registry says of one version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct VersionInfo {
    /// The version.
    #[serde(skip)]
    pub version: Version,
    /// Its name in reports, journals and on the command line (`R4`).
    pub name: &'static str,
    /// The SDK releases that wrote it.
    pub releases: &'static str,
    /// What it changed in the run object, against the version before it.
    pub adds: &'static str,
    /// The prefix of its run ids (and so of its run file names).
    #[serde(serialize_with = "prefix_text")]
    pub run_prefix: Prefix,
}

#[allow(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's serialize_with hands over a reference"
)]
fn prefix_text<S: Serializer>(prefix: &Prefix, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(prefix.as_str())
}

/// Every run wire version, oldest first: the one place that lists them. Adding a version is
/// one row here and one variant of [`Version`]; "Adding a legacy version" in CONTRIBUTING.md
/// lists the rest.
pub const REGISTRY: [VersionInfo; 8] = [
    VersionInfo {
        version: Version::W1,
        name: "W1",
        releases: "0.0.1-alpha.50",
        adds:
            "the Workflow model: `wkfl-` ids, an execution context with system-context extensions",
        run_prefix: Prefix::Wkfl,
    },
    VersionInfo {
        version: Version::R0,
        name: "R0",
        releases: "0.1.0-alpha",
        adds: "Workflow renamed PlanRun: `pr-` ids, clarifications name their run `plan_run_id`",
        run_prefix: Prefix::Pr,
    },
    VersionInfo {
        version: Version::R1,
        name: "R1",
        releases: "0.1.0 – 0.1.11",
        adds: "`prun-` ids",
        run_prefix: Prefix::Prun,
    },
    VersionInfo {
        version: Version::R2,
        name: "R2",
        releases: "v0.1.12",
        adds: "agent-memory outputs, stored as `<run id>/<output name>.json`",
        run_prefix: Prefix::Prun,
    },
    VersionInfo {
        version: Version::R3,
        name: "R3",
        releases: "v0.2.0",
        adds: "the system-context extensions leave the execution context",
        run_prefix: Prefix::Prun,
    },
    VersionInfo {
        version: Version::R4,
        name: "R4",
        releases: "v0.3.0",
        adds: "a top-level `end_user_id` and EndUser files",
        run_prefix: Prefix::Prun,
    },
    VersionInfo {
        version: Version::R5,
        name: "R5",
        releases: "v0.3.2",
        adds: "`plan_run_inputs`",
        run_prefix: Prefix::Prun,
    },
    VersionInfo {
        version: Version::R6,
        name: "R6",
        releases: "v0.3.4 – HEAD",
        adds: "no `execution_context`",
        run_prefix: Prefix::Prun,
    },
];

impl Version {
    /// All versions, oldest first.
    pub const ALL: [Version; REGISTRY.len()] = {
        let mut all = [Version::W1; REGISTRY.len()];
        let mut i = 0;
        while i < REGISTRY.len() {
            all[i] = REGISTRY[i].version;
            i += 1;
        }
        all
    };

    /// The version the SDK writes today, which a downgrade writes and the chain ends at.
    pub const HEAD: Version = Version::ALL[Version::ALL.len() - 1];

    /// What the registry says of this version.
    pub fn info(self) -> &'static VersionInfo {
        &REGISTRY[self as usize]
    }

    /// The name used in reports, journals and on the command line.
    pub fn as_str(self) -> &'static str {
        self.info().name
    }

    /// Parses a version name (`"W1"`, `"r3"` …).
    pub fn parse(text: &str) -> Option<Version> {
        Version::ALL
            .into_iter()
            .find(|v| v.as_str().eq_ignore_ascii_case(text))
    }

    /// The run id prefix of this version.
    pub fn run_prefix(self) -> Prefix {
        self.info().run_prefix
    }

    /// The version after this one, `None` at [`Version::HEAD`].
    pub fn next(self) -> Option<Version> {
        Version::ALL.get(self as usize + 1).copied()
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A set of versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VersionSet(u8);

impl VersionSet {
    /// Every version.
    pub const ALL: VersionSet = VersionSet(u8::MAX >> (8 - REGISTRY.len()));
    /// No version.
    pub const EMPTY: VersionSet = VersionSet(0);

    /// The versions from `first` to [`Version::HEAD`].
    pub fn since(first: Version) -> Self {
        VersionSet::range(first, Version::HEAD)
    }

    /// The versions from `first` to `last`, inclusive.
    pub fn range(first: Version, last: Version) -> Self {
        VersionSet(
            Version::ALL
                .into_iter()
                .filter(|v| *v >= first && *v <= last)
                .fold(0, |bits, v| bits | v.bit()),
        )
    }

    /// The versions for which `keep` says yes.
    pub fn matching(keep: impl Fn(Version) -> bool) -> Self {
        VersionSet(
            Version::ALL
                .into_iter()
                .filter(|v| keep(*v))
                .fold(0, |bits, v| bits | v.bit()),
        )
    }

    /// Just one version.
    pub fn only(version: Version) -> Self {
        VersionSet(version.bit())
    }

    /// Versions in both sets.
    pub fn intersect(self, other: VersionSet) -> Self {
        VersionSet(self.0 & other.0)
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether `version` is in the set.
    pub fn contains(self, version: Version) -> bool {
        self.0 & version.bit() != 0
    }

    /// The versions in the set, oldest first.
    pub fn iter(self) -> impl Iterator<Item = Version> {
        Version::ALL.into_iter().filter(move |v| self.contains(*v))
    }

    /// The newest version in the set.
    pub fn newest(self) -> Option<Version> {
        self.iter().last()
    }

    /// The oldest version in the set.
    pub fn oldest(self) -> Option<Version> {
        self.iter().next()
    }

    /// The SDK releases that wrote the versions of the set, from the oldest's to the newest's:
    /// `v0.3.0`, `0.1.0 – 0.1.11 to v0.1.12`.
    pub fn releases(self) -> String {
        match (self.oldest(), self.newest()) {
            (Some(oldest), Some(newest)) if oldest == newest => oldest.info().releases.to_owned(),
            (Some(oldest), Some(newest)) => {
                format!("{} to {}", oldest.info().releases, newest.info().releases)
            }
            _ => "none".to_owned(),
        }
    }
}

impl fmt::Display for VersionSet {
    /// `R4`, `R1–R2`, or `W1, R3` for a set with gaps.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let versions: Vec<Version> = self.iter().collect();
        match versions.as_slice() {
            [] => f.write_str("none"),
            [one] => f.write_str(one.as_str()),
            [first, .., last] if versions.len() == (*last as usize - *first as usize + 1) => {
                write!(f, "{first}–{last}")
            }
            many => f.write_str(
                &many
                    .iter()
                    .map(|v| v.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        }
    }
}

impl Serialize for VersionSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}
