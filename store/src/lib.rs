//! Stores of Portia SDK runs and the batch migration over them.
//!
//! * [`Store`] and [`Sink`]: where legacy documents are read from and where converted ones are
//!   written, each write atomic; [`disk`] is the SDK's `DiskFileStorage` directory on a local
//!   file system. Another backend is one new module implementing them.
//! * [`convert_run`] / [`convert_entry`]: the one per-run conversion that both `planrun convert`
//!   and `planrun migrate` call, so a batch gives the same bytes as converting each run alone.
//! * [`migrate`]: the parallel, crash-safe, resumable batch engine (journal, group commit,
//!   resume, verify, shards, reports).
//!
//! This is the one crate of the workspace with a thread pool and system calls of its own.

pub mod check;
mod config;
mod convert;
pub mod disk;
mod durability;
mod fsio;
pub mod loss;
pub mod migrate;
mod names;
mod outcome;
pub mod stamp;
mod store;

pub use config::{ConfigError, ResolvedConfig};
pub use convert::{convert_document, convert_entry, convert_run, References, PLAN_RUN_V2_SCHEMA};
pub use disk::{list_store, DiskSink, DiskStore};
pub use durability::Durability;
pub use fsio::read_nofollow;
pub use names::{
    fnv1a64, is_run_file_name, run_key, safe_component, Conflicts, Name, Names, UnsafeName,
    RUN_PREFIXES,
};
pub use outcome::{Class, Failure, FailureKind, MemoryFile, RunOutput, RunResult};
pub use store::{Doc, Listing, Sink, Stamped, Store};
