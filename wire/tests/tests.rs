//! The integration tests of planrun-wire, in one test binary (one link instead of one per
//! file): a module per area, whose documentation says which law or behaviour it pins.

mod json;
mod protocol;
mod string_scan;
