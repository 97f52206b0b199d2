//! The eight run wire versions and sets of them, so detection can say "R1–R2" when the evidence
//! allows two versions instead of guessing one.

use std::fmt;

use serde::{Serialize, Serializer};

/// A wire version of the run object (§0 of the wire-format spec).
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

impl Version {
    /// All versions, oldest first.
    pub const ALL: [Version; 8] = [
        Version::W1,
        Version::R0,
        Version::R1,
        Version::R2,
        Version::R3,
        Version::R4,
        Version::R5,
        Version::R6,
    ];

    /// The name used in the spec and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Version::W1 => "W1",
            Version::R0 => "R0",
            Version::R1 => "R1",
            Version::R2 => "R2",
            Version::R3 => "R3",
            Version::R4 => "R4",
            Version::R5 => "R5",
            Version::R6 => "R6",
        }
    }

    /// Parses a version name (`"W1"`, `"r3"` …).
    pub fn parse(text: &str) -> Option<Version> {
        Version::ALL
            .into_iter()
            .find(|v| v.as_str().eq_ignore_ascii_case(text))
    }

    /// The run id prefix of this version.
    pub fn run_prefix(self) -> crate::id::Prefix {
        match self {
            Version::W1 => crate::id::Prefix::Wkfl,
            Version::R0 => crate::id::Prefix::Pr,
            _ => crate::id::Prefix::Prun,
        }
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
    pub const ALL: VersionSet = VersionSet(0xff);
    /// No version.
    pub const EMPTY: VersionSet = VersionSet(0);

    /// The versions from `first` to `last`, inclusive.
    pub fn range(first: Version, last: Version) -> Self {
        VersionSet(
            Version::ALL
                .into_iter()
                .filter(|v| *v >= first && *v <= last)
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
