//! The run round trip (and the plan round trip through the run) over generated stores: every run of every version that
//! `planrun gen` makes from a random seed round-trips with every difference reported.

use crate::converter_common as common;

use planrun_converter::upgrade::resolve_config;
use planrun_gen::{generate, GenOptions};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn generated_runs_round_trip(seed in any::<u64>(), history in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let store_dir = dir.path().join("store");
        let opts = GenOptions { runs: 24, seed, large_every: 0, history, ..GenOptions::default() };
        generate(&opts, &store_dir).unwrap();
        let store = common::index(&store_dir);
        prop_assert_eq!(store.runs.len(), 24);
        let (config, _) = resolve_config(None).unwrap();
        for (path, parsed) in &store.runs {
            if let Err(e) = common::check_law3(&store, parsed, &config) {
                return Err(TestCaseError::fail(format!("seed {seed}, {}: {e}", path.display())));
            }
        }
    }
}
