//! Stores of Portia SDK runs and the batch migration over them.
//!
//! [`entry`] reads a legacy `DiskFileStorage` directory and converts one run of it, the one
//! per-run function that both `planrun convert` and `planrun migrate` call, so a batch gives
//! the same bytes as converting each run alone. [`migrate`] is the parallel, crash-safe,
//! resumable batch engine: journal, group commit, resume, verify, shards and reports.

pub mod entry;
pub mod migrate;

pub use entry::*;
