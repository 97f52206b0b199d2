//! The published JSON Schemas (draft 2020-12) of every format planrun reads: their generation
//! from the Rust types ([`published`]), validation of documents against them ([`validate`]),
//! compatibility verdicts between two versions of them ([`compat`]) and their export to Python
//! and TypeScript types ([`export`]). The committed copies live beside this crate, in
//! `schemas/v2/`, `schemas/legacy/` and `schemas/releases/`.

pub mod compat;
pub mod export;
pub mod published;
pub mod validate;

pub use published::{all, file_text, names, write_all, LEGACY_DIR, V2_DIR};
