//! The integration tests of planrun: the CLI, and the laws that span the crates. One test
//! binary (one link instead of one per file), a module per area, whose documentation says which
//! law or behaviour it pins.

mod chain_differential;
mod check_cli;
mod cli_errors;
mod cli_schema_export_lang;
mod cli_schema_validate;
#[path = "../converter/tests/common/mod.rs"]
mod converter_common;
mod corpus_schemas;
mod downgrade_cli;
mod gen;
mod interop_documents;
mod migrate_bad_input;
mod migrate_corpus;
mod migrate_crash;
mod migrate_live;
mod migrate_r6;
mod migrate_shards;
mod migrate_support;
mod migrate_sync;
mod renames_readme;
mod run_roundtrip_generated;
mod schema_compat;
mod schemas_fresh;
mod versions_cli;
