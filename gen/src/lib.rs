//! A deterministic generator of realistic legacy `DiskFileStorage` stores, for rehearsing a
//! migration and for scale tests and benchmarks.
//!
//! [`generate`] writes runs of the chosen wire versions (W1 `wkfl-…json`, R0 `pr-…json`, R1+
//! `prun-…json`), their plans (several runs share one), end users (`<external_id>.json`, R4+) and
//! agent-memory values (`<prun-id>/<output_name>.json`, R2+) into a new directory, exactly as the
//! SDK of each version writes them (`model_dump_json(indent=4)`, through
//! [`planrun_wire::json::to_sdk_json`]).
//!
//! What a store holds:
//! * runs in every state, their step outputs following their plan's steps (a run stopped at step
//!   `k` has the outputs of steps `0..k`), values of every shape the SDK stringifies (text, `""`
//!   for `None`, ints, floats, `NaN`, integers beyond 64 bits, bools, dicts and lists as Python
//!   JSON text, compact pydantic models, dates, enums, unicode, tabs and newlines) and summaries
//!   that are text, `""` or `null`;
//! * clarifications of every category the version has: `workflow_id` and "Argument" in W1 (and
//!   "Argument" in R0), `require_confirmation` on Action from R4, `source` and "User
//!   Verification" only in R6 runs of v0.4.0 and later (a share of R6 runs is v0.3.4–v0.3.x);
//! * plans of the release that wrote them: `Variable.value` and unsorted `tool_ids` in W1/R0 and
//!   early R1, `Step.condition` from 0.1.8, `inputs` (v0.3.2) for R5, `plan_inputs` for R6, some
//!   R6 plans built by the v0.7.0 plan builder (`$step_N_output`);
//! * `execution_context.end_user_id` null or set in W1–R3; from R4 a top-level `end_user_id`
//!   whose file exists, except for a few runs whose end user was never saved (counted in
//!   [`GenSummary::runs_without_end_user_file`]); end-user files with `null` additional data
//!   only when an R6 SDK wrote them last;
//! * `plan_run_inputs` (R5/R6) keyed by the plan's input names;
//! * one run in every block of `large_every` large: an inline output of tens of KB of text.
//!
//! With the default options a run file averages about 3.6 KB (about 4.8 KB per run counting its
//! share of plans, end users and agent memory); the large runs are 16–64 KB.
//!
//! External ids never start with a run or plan prefix (`pr`, `plan`, `wkfl`), which the SDK's
//! prefix scans would mistake for runs or plans.
//!
//! The same options give byte-identical stores: every value comes from a SplitMix64 stream
//! seeded from [`GenOptions::seed`] (one stream lays the store out, then one per plan and per
//! run), so the work is spread over threads without changing a byte.

mod agent_memory;
mod clarification;
mod end_user;
mod layout;
mod options;
mod output;
mod plan;
mod rng;
mod run;
mod scenarios;
mod slots;
mod summary;
mod text;
mod vocab;
mod write;

use std::io;
use std::path::Path;

pub use options::{GenOptions, DEFAULT_LARGE_EVERY};
pub use summary::{FileKind, GenFile, GenSummary};

use end_user::write_end_user;
use layout::{lay_out, EndUserRef};
use plan::{build_plan, PlanSpec};
use run::build_run;
use write::{parallel, prepare};

/// Writes a store into `out`, which must not exist or be an empty directory: nothing is ever
/// overwritten (files are created with `create_new`). On an I/O error the store is left as far
/// as it got.
pub fn generate(opts: &GenOptions, out: &Path) -> io::Result<GenSummary> {
    let versions = opts.version_mix()?;
    prepare(out)?;
    let layout = lay_out(opts, &versions);

    let built = parallel(&layout.plans, |seed| build_plan(seed, out))?;
    let (plans, plan_files): (Vec<PlanSpec>, Vec<Option<GenFile>>) = built.into_iter().unzip();

    let mut summary = GenSummary::default();
    for ((seed, file), spec) in layout.plans.iter().zip(&plan_files).zip(&plans) {
        summary.plans_never_saved += usize::from(file.is_none());
        summary.plans_saved_again +=
            usize::from(file.as_ref().is_some_and(|f| f.version != seed.version));
        summary.plans_repeating_an_output += usize::from(spec.repeats_an_output());
    }
    let run_files = parallel(&layout.runs, |seed| {
        build_run(seed, &plans[seed.plan], &layout.users, out)
    })?;
    for (seed, files) in layout.runs.iter().zip(run_files) {
        let without_end_user_file = matches!(seed.end_user, EndUserRef::Missing(_));
        let without_plan_file = plan_files[seed.plan].is_none();
        summary.add_run(
            seed.version,
            seed.large,
            without_end_user_file,
            without_plan_file,
            files,
        );
    }
    summary.add_plans(plan_files.into_iter().flatten().collect());
    for user in &layout.users {
        summary.add_end_user(write_end_user(user, out)?);
    }
    Ok(summary.finish())
}
