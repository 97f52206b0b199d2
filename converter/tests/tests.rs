//! The integration tests of planrun-converter, in one test binary (one link instead of one per
//! file): a module per area, whose documentation says which law or behaviour it pins.

mod blocked;
mod chain_corpus;
mod cloud;
mod common;
mod config;
mod downgrade_residue;
mod plan_roundtrip;
mod run_context;
mod run_roundtrip;
