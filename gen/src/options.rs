//! What to generate: the run count, the seed, the mix of wire versions and how often a run is
//! large. The version mix is reduced to distinct versions in the caller's order, since runs are
//! assigned to versions round-robin.

use std::io;

use planrun_legacy::Version;

/// By default one run in 40 is large.
pub const DEFAULT_LARGE_EVERY: usize = 40;

/// What to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenOptions {
    /// How many runs.
    pub runs: usize,
    /// The seed; the same options give byte-identical stores.
    pub seed: u64,
    /// The wire versions of the runs, assigned round-robin in this order (duplicates ignored).
    pub versions: Vec<Version>,
    /// One run in every `large_every` is large (tens of KB of output text); 0 = never.
    pub large_every: usize,
    /// A store with a history (see [`crate::generate`]): one directory that successive
    /// releases wrote into in turn, so some plans were saved again by a later release, some
    /// runs of releases before v0.3.0 have no plan file, and some W1/R0 plans repeat an output.
    pub history: bool,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            runs: 1000,
            seed: 0,
            versions: Version::ALL.to_vec(),
            large_every: DEFAULT_LARGE_EVERY,
            history: false,
        }
    }
}

impl GenOptions {
    /// The version mix: [`GenOptions::versions`] without duplicates, in their first order; an
    /// error if there is none.
    pub(crate) fn version_mix(&self) -> io::Result<Vec<Version>> {
        let mut versions: Vec<Version> = Vec::new();
        for v in &self.versions {
            if !versions.contains(v) {
                versions.push(*v);
            }
        }
        if versions.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no versions to generate",
            ));
        }
        Ok(versions)
    }
}
