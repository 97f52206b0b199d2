//! The shared-part writer against the derived one it stands in for: `render::to_vec_pretty`
//! writes the bytes of `serde_json::to_writer_pretty` for every generated run, whether its plan
//! and config are the rendered ones (copied) or differ from them (written as usual), with and
//! without the `legacy` residue. A field added to `PlanRunV2` and not to the writer fails here.

use proptest::prelude::*;

use planrun_v2::render::{self, Rendered, Shared};
use planrun_v2::strategies::{config, plan_run_v2, plan_v2};
use planrun_v2::PlanRunV2;

fn derived(run: &PlanRunV2) -> String {
    serde_json::to_string_pretty(run).unwrap()
}

fn shared(run: &PlanRunV2, shared: Shared<'_>) -> String {
    let mut text = Vec::new();
    render::to_vec_pretty(&mut text, run, shared).unwrap();
    String::from_utf8(text).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn runs_sharing_the_rendered_parts_are_written_as_the_derived_writer_writes_them(
        mut run in plan_run_v2(),
        other_plan in plan_v2(),
        other_config in config(),
    ) {
        let plan = Rendered::new(run.plan.clone());
        let config = Rendered::new(run.config.clone());
        let both = Shared { plan: Some(&plan), config: Some(&config) };
        prop_assert_eq!(shared(&run, both), derived(&run));
        prop_assert_eq!(shared(&run, Shared::default()), derived(&run));

        // Equal parts held apart, as when a run's plan was not taken from the rendered one.
        let equal_plan = Rendered::new((*run.plan).clone());
        let equal_config = Rendered::new((*run.config).clone());
        let equal = Shared { plan: Some(&equal_plan), config: Some(&equal_config) };
        prop_assert_eq!(shared(&run, equal), derived(&run));

        let plan = Rendered::new(other_plan);
        let config = Rendered::new(other_config);
        let others = Shared { plan: Some(&plan), config: Some(&config) };
        prop_assert_eq!(shared(&run, others), derived(&run));

        run.legacy = None;
        prop_assert_eq!(shared(&run, both), derived(&run));
    }
}
