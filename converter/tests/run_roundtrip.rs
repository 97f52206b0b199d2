//! Law 3 over the corpus: `downgrade(upgrade(run))` equals the run brought to R6, and every
//! difference is named by the loss report. Also the snapshots of every corpus run's V2 document
//! and loss report (one pair per input, the real wire bytes).

use crate::common;

use std::path::Path;

use planrun_converter::upgrade::resolve_config;

#[test]
fn every_corpus_run_round_trips_and_every_difference_is_reported() {
    let (config, config_report) = resolve_config(None).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .canonicalize()
        .unwrap();
    let mut checked = 0;
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let store = common::index(&dir);
        for (path, parsed) in &store.runs {
            let rel = path.strip_prefix(&root).unwrap().display().to_string();
            let converted = common::check_law3(&store, parsed, &config)
                .unwrap_or_else(|e| panic!("{rel}: {e}"));
            let mut report = config_report.clone();
            report.extend(converted.report);
            insta::with_settings!({snapshot_path => "../../snapshots/converter/runs", prepend_module_to_snapshot => false, omit_expression => true}, {
                let name = rel.trim_end_matches(".json").replace('/', "__");
                insta::assert_snapshot!(format!("{name}.v2"), serde_json::to_string_pretty(&converted.run).unwrap());
                insta::assert_snapshot!(format!("{name}.report"), report.to_string());
            });
            checked += 1;
        }
    }
    assert!(checked > 120, "only {checked} runs checked");
}
