//! The integration tests of planrun-v2, in one test binary (one link instead of one per
//! file): a module per area, whose documentation says which law or behaviour it pins.

mod agreement;
mod check;
mod common;
mod corpus;
mod errors;
mod render;
mod roundtrip;
mod schemas;
mod secrets;
