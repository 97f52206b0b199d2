//! Runs: what a run holds (step outputs following its plan's steps, its final output,
//! clarifications, plan-run inputs, its end user), then the wire shape of its version, W1 to R6.

use std::io;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use planrun_legacy::Version::{R0, R2, R3, R4, R5, W1};
use planrun_legacy::{
    stringify, Clarification, ExecutionContextR0, ExecutionContextR3, ExecutionContextR4,
    ExecutionContextW1, LegacyRun, LocalDataValue, Outputs, PlanId, RunR1, RunR2, RunR3, RunR4,
    RunR5, RunR6, RunState, RunW1,
};
use planrun_wire::json::to_sdk_json;

use crate::agent_memory::{AgentMemory, Produced};
use crate::clarification::{clarification, ClarificationCtx};
use crate::layout::{EndUserRef, RunSeed, UserSeed};
use crate::output::{summary, value};
use crate::plan::PlanSpec;
use crate::rng::Rng;
use crate::summary::{FileKind, GenFile};
use crate::text::{report, short_text};
use crate::vocab::ERRORS;
use crate::write::write_new;

fn extension(rng: &mut Rng) -> Option<Vec<String>> {
    rng.chance(0.15).then(|| {
        let lines: &[&str] = &[
            "Always answer in British English.",
            "Today's date is 2025-03-01.",
            "The user is a premium customer; prefer direct flights.",
            "Never send emails without a subject line.",
        ];
        (0..rng.between(1, 2))
            .map(|_| (*rng.pick(lines)).to_owned())
            .collect()
    })
}

fn additional_data(rng: &mut Rng) -> IndexMap<String, String> {
    let mut data = IndexMap::new();
    if rng.chance(0.2) {
        data.insert(
            "tenant".to_owned(),
            (*rng.pick(&["acme", "globex", "initech"])).to_owned(),
        );
        if rng.chance(0.5) {
            data.insert(
                "tier".to_owned(),
                (*rng.pick(&["free", "pro", "gold"])).to_owned(),
            );
        }
    }
    data
}

pub(crate) fn build_run(
    seed: &RunSeed,
    plan: &PlanSpec,
    users: &[UserSeed],
    out: &Path,
) -> io::Result<Vec<GenFile>> {
    let mut rng = Rng::new(seed.seed);
    let version = seed.version;
    let n = plan.steps.len();
    let (index, done) = match seed.state {
        RunState::NOT_STARTED => (if rng.chance(0.005) { -1 } else { 0 }, 0),
        RunState::COMPLETE => (n.saturating_sub(1) as i64, n),
        _ => {
            let k = if n == 0 { 0 } else { rng.below(n) };
            (k as i64, k)
        }
    };

    // Step outputs: inline, or (R2+, long values) in agent memory.
    let mut memory = AgentMemory::new(seed.id, version);
    let mut step_outputs: Vec<(String, Produced)> = Vec::with_capacity(done);
    for (i, (name, kind)) in plan.steps.iter().take(done).enumerate() {
        let large = seed.large && i + 1 == done;
        let value = if large {
            let target = rng.between(16_000, 64_000);
            report(&mut rng, &plan.slots, target)
        } else {
            self::value(*kind, &mut rng, &plan.slots)
        };
        let summary = summary(*kind, &mut rng, &plan.slots);
        let produced = memory.place(name, LocalDataValue { value, summary }, large);
        step_outputs.push((name.clone(), produced));
    }
    let final_output = final_output(seed, plan, &step_outputs, &mut rng);

    let ctx = ClarificationCtx {
        version,
        late_r6: seed.late_r6,
        run: seed.id,
    };
    let last = seed.clarifications.len().saturating_sub(1);
    let clarifications: Vec<Clarification> = seed
        .clarifications
        .iter()
        .enumerate()
        .map(|(i, category)| {
            let open = i == last && seed.state == RunState::NEED_CLARIFICATION;
            let step = if i == last || index <= 0 {
                index.max(0)
            } else {
                rng.below(index as usize + 1) as i64
            };
            clarification(&ctx, &mut rng, *category, Some(step), !open)
        })
        .collect();

    let plan_run_inputs = run_inputs(plan, &mut rng);

    let end_user_id = match &seed.end_user {
        EndUserRef::None => String::new(),
        EndUserRef::File(i) => users[*i].external_id.clone(),
        EndUserRef::Missing(id) => id.clone(),
    };

    let run = shape(
        Contents {
            seed,
            plan_id: plan.id,
            index,
            step_outputs,
            final_output,
            clarifications,
            plan_run_inputs,
            end_user_id,
        },
        &mut rng,
    );
    let mut files = vec![write_new(
        out,
        PathBuf::from(format!("{}.json", seed.id)),
        &to_sdk_json(&run),
        FileKind::Run,
        version,
    )?];
    files.extend(memory.write(out)?);
    Ok(files)
}

/// The final output of a run in `seed.state`: a complete run's last output (or its agent-memory
/// reference), a failed run's error.
fn final_output(
    seed: &RunSeed,
    plan: &PlanSpec,
    step_outputs: &[(String, Produced)],
    rng: &mut Rng,
) -> Option<Produced> {
    match seed.state {
        RunState::COMPLETE => Some(match step_outputs.last() {
            Some((_, Produced::Memory(reference))) if rng.chance(0.3) => {
                Produced::Memory(reference.clone())
            }
            last => {
                let value = match last {
                    Some((_, Produced::Local(local))) if local.value.len() <= 2000 => {
                        local.value.clone()
                    }
                    _ if seed.large && plan.steps.is_empty() => {
                        let target = rng.between(16_000, 64_000);
                        report(rng, &plan.slots, target)
                    }
                    _ => short_text(rng, &plan.slots),
                };
                let summary = match rng.weighted(&[85, 10, 5]) {
                    0 => Some(short_text(rng, &plan.slots)),
                    1 => None,
                    _ => Some(String::new()),
                };
                Produced::Local(LocalDataValue { value, summary })
            }
        }),
        RunState::FAILED => Some(Produced::Local(LocalDataValue {
            value: (*rng.pick(ERRORS)).to_owned(),
            summary: None,
        })),
        _ => None,
    }
}

/// The run's inputs: the plan's inputs with a value each, some with a summary.
fn run_inputs(plan: &PlanSpec, rng: &mut Rng) -> IndexMap<String, LocalDataValue> {
    plan.inputs
        .iter()
        .map(|(name, slot)| {
            let value = if rng.chance(0.5) {
                plan.slots.text(*slot).to_owned()
            } else {
                stringify(slot.draw(rng))
            };
            let summary = rng.chance(0.15).then(|| format!("the {}", slot.name()));
            (name.clone(), LocalDataValue { value, summary })
        })
        .collect()
}

/// What a run holds, before it takes the wire shape of its version.
struct Contents<'a> {
    seed: &'a RunSeed,
    plan_id: PlanId,
    index: i64,
    step_outputs: Vec<(String, Produced)>,
    final_output: Option<Produced>,
    clarifications: Vec<Clarification>,
    plan_run_inputs: IndexMap<String, LocalDataValue>,
    end_user_id: String,
}

/// The run in the wire shape of its version; the execution context (W1–R5) is drawn here.
fn shape(c: Contents<'_>, rng: &mut Rng) -> LegacyRun {
    let seed = c.seed;
    let version = seed.version;
    if version < R2 {
        let outputs = Outputs {
            clarifications: c.clarifications,
            step_outputs: c
                .step_outputs
                .into_iter()
                .map(|(k, p)| (k, p.into_local()))
                .collect(),
            final_output: c.final_output.map(Produced::into_local),
        };
        if version == W1 {
            return LegacyRun::W1(RunW1 {
                id: Some(seed.id),
                plan_id: c.plan_id,
                current_step_index: c.index,
                state: seed.state,
                execution_context: ExecutionContextW1 {
                    end_user_id: seed.ec_user.clone(),
                    additional_data: additional_data(rng),
                    planner_system_context_extension: extension(rng),
                    agent_system_context_extension: extension(rng),
                },
                outputs,
            });
        }
        let run = RunR1 {
            id: Some(seed.id),
            plan_id: c.plan_id,
            current_step_index: c.index,
            state: seed.state,
            execution_context: context_r0(seed, rng),
            outputs,
        };
        return if version == R0 {
            LegacyRun::R0(run)
        } else {
            LegacyRun::R1(run)
        };
    }
    let outputs = Outputs {
        clarifications: c.clarifications,
        step_outputs: c
            .step_outputs
            .into_iter()
            .map(|(k, p)| (k, p.into_output()))
            .collect(),
        final_output: c.final_output.map(Produced::into_output),
    };
    match version {
        R2 => LegacyRun::R2(RunR2 {
            id: Some(seed.id),
            plan_id: c.plan_id,
            current_step_index: c.index,
            state: seed.state,
            execution_context: context_r0(seed, rng),
            outputs,
        }),
        R3 => LegacyRun::R3(RunR3 {
            id: Some(seed.id),
            plan_id: c.plan_id,
            current_step_index: c.index,
            state: seed.state,
            execution_context: ExecutionContextR3 {
                end_user_id: seed.ec_user.clone(),
                additional_data: additional_data(rng),
            },
            outputs,
        }),
        R4 => LegacyRun::R4(RunR4 {
            id: Some(seed.id),
            plan_id: c.plan_id,
            current_step_index: c.index,
            state: seed.state,
            execution_context: ExecutionContextR4 {
                additional_data: additional_data(rng),
            },
            end_user_id: c.end_user_id,
            outputs,
        }),
        R5 => LegacyRun::R5(RunR5 {
            id: Some(seed.id),
            plan_id: c.plan_id,
            current_step_index: c.index,
            state: seed.state,
            execution_context: ExecutionContextR4 {
                additional_data: additional_data(rng),
            },
            end_user_id: c.end_user_id,
            outputs,
            plan_run_inputs: c.plan_run_inputs,
        }),
        _ => LegacyRun::R6(RunR6 {
            id: Some(seed.id),
            plan_id: c.plan_id,
            current_step_index: c.index,
            state: seed.state,
            end_user_id: c.end_user_id,
            outputs,
            plan_run_inputs: c.plan_run_inputs,
        }),
    }
}

/// The execution context of R0–R2 runs.
fn context_r0(seed: &RunSeed, rng: &mut Rng) -> ExecutionContextR0 {
    ExecutionContextR0 {
        end_user_id: seed.ec_user.clone(),
        additional_data: additional_data(rng),
        planning_agent_system_context_extension: extension(rng),
        execution_agent_system_context_extension: extension(rng),
    }
}
