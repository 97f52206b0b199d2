//! The integration tests of planrun-legacy, in one test binary (one link instead of one per
//! file): a module per area, whose documentation says which law or behaviour it pins.

mod common {
    pub(crate) mod corpus;
    pub(crate) mod props;
}
mod agreement;
mod bad_input;
mod corpus;
mod handmade;
mod head;
mod mutations;
mod reference_read;
mod roundtrip_props;
mod schemas;
mod sdk_check;
mod sdk_rules;
mod tree_reads;
