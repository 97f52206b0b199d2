//! The layout of a store: which runs, plans and end users it holds and how they refer to each
//! other, drawn from one stream up front so that every plan and run can then be built on its own
//! seed, in any order and on any thread.

use planrun_legacy::Version::{R0, R3, R4, R6};
use planrun_legacy::{Category, PlanId, Prefix, PrefixedId, RunId, RunState, Version};

use crate::options::GenOptions;
use crate::rng::Rng;
use crate::scenarios::SCENARIOS;
use crate::vocab::{ASCII_FIRST, ASCII_LAST, UNICODE_HANDLES};

pub(crate) struct Layout {
    pub(crate) runs: Vec<RunSeed>,
    pub(crate) plans: Vec<PlanSeed>,
    pub(crate) users: Vec<UserSeed>,
}

pub(crate) struct RunSeed {
    pub(crate) version: Version,
    pub(crate) id: RunId,
    pub(crate) plan: usize,
    pub(crate) state: RunState,
    /// Categories of its clarifications, in order.
    pub(crate) clarifications: Vec<Category>,
    /// R6 written by v0.4.0+ (`source`, "User Verification").
    pub(crate) late_r6: bool,
    /// W1–R3: `execution_context.end_user_id`.
    pub(crate) ec_user: Option<String>,
    /// R4+: the top-level `end_user_id`.
    pub(crate) end_user: EndUserRef,
    pub(crate) large: bool,
    pub(crate) seed: u64,
}

pub(crate) enum EndUserRef {
    None,
    File(usize),
    Missing(String),
}

pub(crate) struct PlanSeed {
    /// The release that made the plan (and ran it first).
    pub(crate) version: Version,
    pub(crate) id: PlanId,
    pub(crate) scenario: usize,
    pub(crate) seed: u64,
    /// Who wrote the plan file: [`PlanFile::Saved`] by `version`, [`PlanFile::SavedAgain`] by a
    /// later release, or [`PlanFile::NeverSaved`].
    pub(crate) file: PlanFile,
    /// A W1/R0 plan whose last step repeats the first step's output (those releases had no
    /// uniqueness check; 0.1.6 added it).
    pub(crate) repeats_output: bool,
}

/// What became of a plan's file in a store with a history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlanFile {
    /// Written once, by the release that made the plan.
    Saved,
    /// Written again by this later release (it loaded the plan and saved it, as v0.3.0–v0.3.5's
    /// `run_plan` or any caller may); when that release cannot load the plan, it stays as saved.
    SavedAgain(Version),
    /// Never written: before v0.3.0 running a hand-built plan saved the run but not the plan
    /// (and `Portia.create_plan_run` saves no plan in any release).
    NeverSaved,
}

pub(crate) struct UserSeed {
    pub(crate) external_id: String,
    /// The newest version among its runs: the SDK that wrote the file last.
    pub(crate) version: Version,
    pub(crate) seed: u64,
}

const STATES: [(RunState, u32); 6] = [
    (RunState::COMPLETE, 48),
    (RunState::NOT_STARTED, 10),
    (RunState::NEED_CLARIFICATION, 15),
    (RunState::FAILED, 10),
    (RunState::IN_PROGRESS, 10),
    (RunState::READY_TO_RESUME, 7),
];

/// Clarification categories cycle per version so that every category occurs; Input and Action
/// come up most, as in real stores.
fn category_cycle(version: Version) -> Vec<Category> {
    use Category::*;
    let mut cycle = vec![
        Input,
        Action,
        MultipleChoice,
        Input,
        ValueConfirmation,
        Action,
        Custom,
    ];
    if version <= R0 {
        cycle.insert(2, Argument);
    }
    if version == R6 {
        cycle.insert(4, UserVerification);
    }
    cycle
}

pub(crate) fn lay_out(opts: &GenOptions, versions: &[Version]) -> Layout {
    let mut rng = Rng::new(opts.seed ^ 0x7061_6e72_756e_2d67);
    let mut plans: Vec<PlanSeed> = Vec::new();
    let mut pools: Vec<Vec<usize>> = vec![Vec::new(); versions.len()];
    let mut cursors = vec![0usize; versions.len()];
    let cycles: Vec<Vec<Category>> = versions.iter().map(|v| category_cycle(*v)).collect();
    let mut users = Users::default();
    let mut large_at = usize::MAX;
    let mut runs = Vec::with_capacity(opts.runs);
    let weights: Vec<u32> = SCENARIOS.iter().map(|s| s.weight).collect();
    for i in 0..opts.runs {
        let slot = i % versions.len();
        let version = versions[slot];
        let id = RunId(PrefixedId::new(version.run_prefix(), rng.uuid()));

        let pool = &mut pools[slot];
        let plan = if pool.is_empty() || rng.chance(0.4) {
            let id = PlanId(PrefixedId::new(Prefix::Plan, rng.uuid()));
            let scenario = rng.weighted(&weights);
            let seed = rng.next_u64();
            let (file, repeats_output) = if opts.history {
                history_of_plan(&mut rng, version, versions)
            } else {
                (PlanFile::Saved, false)
            };
            plans.push(PlanSeed {
                version,
                id,
                scenario,
                seed,
                file,
                repeats_output,
            });
            pool.push(plans.len() - 1);
            plans.len() - 1
        } else if rng.chance(0.7) {
            pool[pool.len() - 1 - rng.below(pool.len().min(6))]
        } else {
            *rng.pick(pool)
        };

        // One large run in each block of `large_every` runs, at a seeded place in the block (so
        // that large runs fall on every version).
        if opts.large_every > 0 && i % opts.large_every == 0 {
            large_at = i + rng.below(opts.large_every);
        }
        let large = opts.large_every > 0 && i == large_at;
        let state = if large {
            RunState::COMPLETE
        } else {
            STATES[rng.weighted(&STATES.map(|(_, w)| w))].0
        };
        let late_r6 = version == R6 && rng.chance(0.85);
        let count = match state {
            RunState::NEED_CLARIFICATION | RunState::READY_TO_RESUME => rng.between(1, 3),
            RunState::COMPLETE if rng.chance(0.25) => rng.between(1, 2),
            RunState::FAILED | RunState::IN_PROGRESS if rng.chance(0.2) => 1,
            _ => 0,
        };
        let mut clarifications = Vec::with_capacity(count);
        while clarifications.len() < count {
            let category = cycles[slot][cursors[slot] % cycles[slot].len()];
            cursors[slot] += 1;
            if category != Category::UserVerification || late_r6 {
                clarifications.push(category);
            }
        }

        let ec_user = users.execution_context_user(&mut rng, version);
        let end_user = users.end_user(&mut rng, version);

        runs.push(RunSeed {
            version,
            id,
            plan,
            state,
            clarifications,
            late_r6,
            ec_user,
            end_user,
            large,
            seed: rng.next_u64(),
        });
    }
    Layout {
        runs,
        plans,
        users: users.seeds,
    }
}

/// The end users of a store being laid out.
#[derive(Default)]
struct Users {
    seeds: Vec<UserSeed>,
    /// The places of users with a drawn name (not the SDK's default).
    named: Vec<usize>,
    /// The place of the SDK's default end user, once a run names it.
    local: Option<usize>,
    /// How many names were drawn, so each is new.
    counter: usize,
}

impl Users {
    /// The end user a run of R3 or earlier names in its execution context, if any.
    fn execution_context_user(&mut self, rng: &mut Rng, version: Version) -> Option<String> {
        (version <= R3 && rng.chance(0.35)).then(|| {
            self.counter += 1;
            if rng.chance(0.3) {
                "local".to_owned()
            } else {
                user_name(rng, self.counter)
            }
        })
    }

    /// The end user an R4+ run names: the default one, a named one (new or earlier), or one
    /// without a file.
    fn end_user(&mut self, rng: &mut Rng, version: Version) -> EndUserRef {
        if version < R4 {
            return EndUserRef::None;
        }
        if rng.chance(0.04) {
            self.counter += 1;
            return EndUserRef::Missing(user_name(rng, self.counter));
        }
        let index = if rng.chance(0.4) {
            let seeds = &mut self.seeds;
            *self.local.get_or_insert_with(|| {
                seeds.push(UserSeed {
                    external_id: planrun_legacy::EndUser::SDK_DEFAULT_ID.to_owned(),
                    version,
                    seed: rng.next_u64(),
                });
                seeds.len() - 1
            })
        } else if self.named.is_empty() || rng.chance(0.25) {
            self.counter += 1;
            self.seeds.push(UserSeed {
                external_id: user_name(rng, self.counter),
                version,
                seed: rng.next_u64(),
            });
            self.named.push(self.seeds.len() - 1);
            self.seeds.len() - 1
        } else {
            *rng.pick(&self.named)
        };
        self.seeds[index].version = self.seeds[index].version.max(version);
        EndUserRef::File(index)
    }
}

/// What happened to a new plan of `version` in a store that `mix` (oldest first is not
/// required) wrote in turn: a tenth of the plans of releases before v0.3.0 were never saved; a
/// quarter of the rest were saved again by a later release of the mix; a third of W1/R0 plans
/// repeat an output.
fn history_of_plan(rng: &mut Rng, version: Version, mix: &[Version]) -> (PlanFile, bool) {
    let later: Vec<Version> = mix.iter().copied().filter(|v| *v > version).collect();
    let file = if version <= R3 && rng.chance(0.1) {
        PlanFile::NeverSaved
    } else if !later.is_empty() && rng.chance(0.25) {
        PlanFile::SavedAgain(*rng.pick(&later))
    } else {
        PlanFile::Saved
    };
    (file, version <= R0 && rng.chance(0.33))
}

/// An end user's external id: unique (`k` is), a safe file name, and never starting with a run
/// or plan prefix.
fn user_name(rng: &mut Rng, k: usize) -> String {
    match rng.below(6) {
        0 => format!("user-{}", 100 + k),
        1 => {
            let (first, last) = (rng.pick(ASCII_FIRST), rng.pick(ASCII_LAST));
            format!("{first}.{last}{k}@example.com")
        }
        2 => format!("cust_{k:05}"),
        3 => format!("{}-{k}", rng.pick(UNICODE_HANDLES)),
        4 => format!("acct-{k:04}-{}", rng.hex(6)),
        _ => format!("{}{k}", rng.pick(ASCII_FIRST)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_names_never_look_like_runs_or_plans() {
        let mut rng = Rng::new(1);
        for k in 0..2000 {
            let name = user_name(&mut rng, k);
            for prefix in ["pr", "plan", "wkfl"] {
                assert!(!name.starts_with(prefix), "{name}");
            }
            assert!(!name.contains('/') && !name.is_empty(), "{name}");
        }
    }
}
