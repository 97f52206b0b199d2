//! The proptest configuration of every property test of this crate.

use proptest::test_runner::Config as ProptestConfig;

/// 64 cases per property by default; `PROPTEST_CASES=10000` searches harder.
pub(crate) fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(64);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}
