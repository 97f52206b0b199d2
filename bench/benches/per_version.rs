//! Micro-benchmarks per wire version: parse, upgrade (chain + final step), serialise the V2
//! document, validate it against its schema, and verify it as `migrate` does (a strict parse of
//! the written bytes into `PlanRunV2`; also by the schema, for comparison). Inputs are runs of
//! `planrun gen`'s default mix.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use planrun_converter::upgrade::{resolve_config, upgrade, PlanSource, Sources};
use planrun_gen::{generate, GenOptions};
use planrun_legacy::{parse, LegacyDocument, Parsed, Plan, Version};

fn main() {
    divan::main();
}

/// One generated run per version, its plan, and the config, made once.
struct Inputs {
    runs: HashMap<Version, Vec<u8>>,
    plans: HashMap<String, Plan>,
    config: std::sync::Arc<planrun_v2::Config>,
}

fn inputs() -> &'static Inputs {
    static INPUTS: OnceLock<Inputs> = OnceLock::new();
    INPUTS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        let summary = generate(
            &GenOptions {
                runs: 64,
                seed: 7,
                large_every: 0,
                ..GenOptions::default()
            },
            &store,
        )
        .unwrap();
        let mut runs = HashMap::new();
        let mut plans = HashMap::new();
        for file in &summary.manifest {
            let path: PathBuf = store.join(&file.path);
            let bytes = std::fs::read(&path).unwrap();
            match parse(&bytes).unwrap().document {
                LegacyDocument::Plan(plan) => {
                    plans.insert(plan.id.unwrap().to_string(), plan);
                }
                // Keyed by the version that wrote the file: an R1 run reads as R1–R2.
                LegacyDocument::Run(_) => {
                    runs.entry(file.version).or_insert(bytes);
                }
                _ => {}
            }
        }
        Inputs {
            runs,
            plans,
            config: resolve_config(None).unwrap().0,
        }
    })
}

const VERSIONS: [&str; 8] = ["W1", "R0", "R1", "R2", "R3", "R4", "R5", "R6"];

fn run_bytes(version: &str) -> &'static [u8] {
    &inputs().runs[&Version::parse(version).unwrap()]
}

fn convert(parsed: &Parsed) -> planrun_v2::PlanRunV2 {
    let inputs = inputs();
    let plan = inputs
        .plans
        .get(&parsed.as_run().unwrap().plan_id().to_string());
    let sources = Sources {
        run: parsed,
        plan: PlanSource::looked_up(plan),
        end_user: None,
        plan_read: &[],
        end_user_read: &[],
        config: &inputs.config,
        agent_memory: None,
    };
    upgrade(&sources).unwrap().run
}

#[divan::bench(args = VERSIONS)]
fn parse_run(bencher: divan::Bencher, version: &str) {
    let bytes = run_bytes(version);
    bencher
        .counter(divan::counter::BytesCount::new(bytes.len()))
        .bench(|| parse(divan::black_box(bytes)).unwrap());
}

#[divan::bench(args = VERSIONS)]
fn upgrade_run(bencher: divan::Bencher, version: &str) {
    let parsed = parse(run_bytes(version)).unwrap();
    bencher.bench(|| convert(divan::black_box(&parsed)));
}

#[divan::bench(args = VERSIONS)]
fn serialise_v2(bencher: divan::Bencher, version: &str) {
    let v2 = convert(&parse(run_bytes(version)).unwrap());
    bencher.bench(|| serde_json::to_string_pretty(divan::black_box(&v2)).unwrap());
}

#[divan::bench(args = VERSIONS)]
fn validate_v2(bencher: divan::Bencher, version: &str) {
    let v2 = serde_json::to_value(convert(&parse(run_bytes(version)).unwrap())).unwrap();
    let schema = planrun_schemas::validate::v2_schema_for(&v2).unwrap();
    planrun_schemas::validate::validate(&v2, &schema).unwrap();
    bencher.bench(|| planrun_schemas::validate::validate(divan::black_box(&v2), &schema).unwrap());
}

/// What `migrate`'s verify pass does per output: a strict parse of the written bytes into
/// `PlanRunV2`.
#[divan::bench(args = VERSIONS)]
fn verify_v2(bencher: divan::Bencher, version: &str) {
    let v2 = convert(&parse(run_bytes(version)).unwrap());
    let text = serde_json::to_string_pretty(&v2).unwrap();
    bencher
        .counter(divan::counter::BytesCount::new(text.len()))
        .bench(|| serde_json::from_str::<planrun_v2::PlanRunV2>(divan::black_box(&text)).unwrap());
}

/// The verdict verify could reach instead (the schema accepts what serde accepts): a JSON tree, then the published schema.
#[divan::bench(args = VERSIONS)]
fn verify_v2_by_schema(bencher: divan::Bencher, version: &str) {
    let v2 = convert(&parse(run_bytes(version)).unwrap());
    let text = serde_json::to_string_pretty(&v2).unwrap();
    let schema =
        planrun_schemas::validate::v2_schema_for(&serde_json::to_value(&v2).unwrap()).unwrap();
    bencher
        .counter(divan::counter::BytesCount::new(text.len()))
        .bench(|| {
            let tree: serde_json::Value = serde_json::from_str(divan::black_box(&text)).unwrap();
            planrun_schemas::validate::validate(&tree, &schema).unwrap()
        });
}
