//! Structural differences between two JSON documents, by JSON pointer: what `planrun diff` prints
//! and what the round-trip tests compare. The walker lives in `planrun_wire::json`, where the
//! legacy reader also uses it to list what re-emission changes.

pub use planrun_wire::json::{diff, Difference};
