//! A deterministic generator of realistic legacy `DiskFileStorage` stores, for rehearsing a
//! migration and for scale tests and benchmarks.
//!
//! [`generate`] writes runs of the chosen wire versions (W1 `wkfl-…json`, R0 `pr-…json`, R1+
//! `prun-…json`), their plans (several runs share one), end users (`<external_id>.json`, R4+) and
//! agent-memory values (`<prun-id>/<output_name>.json`, R2+) into a new directory, exactly as the
//! SDK of each version writes them (`model_dump_json(indent=4)`, through
//! [`planrun_legacy::json::to_sdk_json`]).
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

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use indexmap::IndexMap;
use planrun_legacy::json::{to_python_json, to_sdk_json};
use planrun_legacy::{
    stringify, AgentMemoryValue, Category, Clarification, ClarificationId, EndUser,
    ExecutionContextR0, ExecutionContextR3, ExecutionContextR4, ExecutionContextW1, LegacyRun,
    LocalDataValue, Output, Outputs, Plan, PlanContext, PlanId, PlanInput, PlanInputV032, Prefix,
    PrefixedId, RunId, RunR1, RunR2, RunR3, RunR4, RunR5, RunR6, RunRefKey, RunState, RunW1, Step,
    Variable, Version,
};
use serde::Serialize;
use serde_json::{Map, Number, Value};
use Version::*;

/// By default one run in 40 is large.
pub const DEFAULT_LARGE_EVERY: usize = 40;

/// What to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenOptions {
    /// How many runs.
    pub runs: usize,
    /// The seed; the same options give byte-identical stores.
    pub seed: u64,
    /// The wire versions of the runs, assigned round-robin in this order (duplicates ignored).
    pub versions: Vec<Version>,
    /// One run in every `large_every` is large (tens of KB of output text); 0 = never.
    pub large_every: usize,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            runs: 1000,
            seed: 0,
            versions: Version::ALL.to_vec(),
            large_every: DEFAULT_LARGE_EVERY,
        }
    }
}

/// What a generated file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// A run (`wkfl-`, `pr-` or `prun-…json`).
    Run,
    /// A plan (`plan-…json`).
    Plan,
    /// An end user (`<external_id>.json`).
    EndUser,
    /// An agent-memory value (`<prun-id>/<output_name>.json`).
    AgentMemory,
}

/// One generated file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GenFile {
    /// Relative to the store directory.
    pub path: PathBuf,
    /// What it is.
    pub kind: FileKind,
    /// The version of the SDK that wrote it: the run's; for a plan, the version of the runs that
    /// share it; for an end user, the newest version among its runs (the last writer).
    pub version: Version,
    /// Its size.
    pub bytes: u64,
}

/// What [`generate`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GenSummary {
    /// Runs written.
    pub runs: usize,
    /// Runs per wire version.
    pub runs_per_version: BTreeMap<Version, usize>,
    /// Plan files.
    pub plans: usize,
    /// End-user files.
    pub end_users: usize,
    /// Agent-memory files.
    pub agent_memory_files: usize,
    /// R4+ runs whose `end_user_id` has no file, on purpose.
    pub runs_without_end_user_file: usize,
    /// Runs with tens of KB of output text.
    pub large_runs: usize,
    /// Every file written.
    pub files: usize,
    /// Bytes of every file written.
    pub bytes: u64,
    /// Bytes of the run files alone.
    pub run_bytes: u64,
    /// Every file with its kind and version: each run followed by its agent-memory files, then
    /// the plans, then the end users.
    #[serde(skip)]
    pub manifest: Vec<GenFile>,
}

/// Writes a store into `out`, which must not exist or be an empty directory: nothing is ever
/// overwritten (files are created with `create_new`). On an I/O error the store is left as far
/// as it got.
pub fn generate(opts: &GenOptions, out: &Path) -> io::Result<GenSummary> {
    let mut versions: Vec<Version> = Vec::new();
    for v in &opts.versions {
        if !versions.contains(v) {
            versions.push(*v);
        }
    }
    if versions.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "no versions to generate",
        ));
    }
    prepare(out)?;
    let layout = lay_out(opts, &versions);

    let built = parallel(&layout.plans, |seed| build_plan(seed, out))?;
    let (plans, plan_files): (Vec<PlanSpec>, Vec<GenFile>) = built.into_iter().unzip();

    let mut summary = GenSummary::default();
    let run_files = parallel(&layout.runs, |seed| {
        build_run(seed, &plans[seed.plan], &layout.users, out)
    })?;
    for (seed, files) in layout.runs.iter().zip(run_files) {
        summary.runs += 1;
        *summary.runs_per_version.entry(seed.version).or_default() += 1;
        summary.large_runs += usize::from(seed.large);
        summary.runs_without_end_user_file +=
            usize::from(matches!(seed.end_user, EndUserRef::Missing(_)));
        for file in files {
            match file.kind {
                FileKind::Run => summary.run_bytes += file.bytes,
                FileKind::AgentMemory => summary.agent_memory_files += 1,
                _ => {}
            }
            summary.manifest.push(file);
        }
    }
    summary.plans = plan_files.len();
    summary.manifest.extend(plan_files);
    for user in &layout.users {
        summary.manifest.push(write_end_user(user, out)?);
        summary.end_users += 1;
    }
    summary.files = summary.manifest.len();
    summary.bytes = summary.manifest.iter().map(|f| f.bytes).sum();
    Ok(summary)
}

fn prepare(out: &Path) -> io::Result<()> {
    match fs::read_dir(out) {
        Ok(mut entries) => match entries.next() {
            None => Ok(()),
            Some(_) => Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{} exists and is not empty (gen writes only into a new or empty directory)",
                    out.display()
                ),
            )),
        },
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            fs::create_dir_all(out).map_err(|e| at(out, e))
        }
        Err(err) => Err(at(out, err)),
    }
}

fn at(path: &Path, err: io::Error) -> io::Error {
    io::Error::new(err.kind(), format!("{}: {err}", path.display()))
}

/// Creates `dir/name` (never overwriting) with `text`, and describes it.
fn write_new(
    out: &Path,
    name: PathBuf,
    text: &str,
    kind: FileKind,
    version: Version,
) -> io::Result<GenFile> {
    let path = out.join(&name);
    let mut file = fs::File::create_new(&path).map_err(|e| at(&path, e))?;
    file.write_all(text.as_bytes()).map_err(|e| at(&path, e))?;
    Ok(GenFile {
        path: name,
        kind,
        version,
        bytes: text.len() as u64,
    })
}

/// Maps `f` over `items` on a few threads; results keep the order of `items`.
fn parallel<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> io::Result<R> + Sync,
) -> io::Result<Vec<R>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    if threads <= 1 || items.len() < 256 {
        return items.iter().map(&f).collect();
    }
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(items.len().div_ceil(threads))
            .map(|chunk| scope.spawn(move || chunk.iter().map(f).collect::<io::Result<Vec<R>>>()))
            .collect();
        let mut out = Vec::with_capacity(items.len());
        for handle in handles {
            let part = handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
            out.extend(part);
        }
        Ok(out)
    })
}

// ---------------------------------------------------------------------------------------------
// Randomness
// ---------------------------------------------------------------------------------------------

/// SplitMix64: small, fast, and the same on every platform.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in `lo..=hi`.
    fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64) * (1.0 / (1u64 << 53) as f64) < p
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn word(&mut self, words: &[&'static str]) -> &'static str {
        words[self.below(words.len())]
    }

    fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut x = self.below(total as usize) as u32;
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    }

    /// A random (version 4) UUID as the SDK's `uuid4()` makes them.
    fn uuid(&mut self) -> u128 {
        let raw = (u128::from(self.next_u64()) << 64) | u128::from(self.next_u64());
        (raw & !(0xF << 76) & !(0x3 << 62)) | (0x4 << 76) | (0x2 << 62)
    }

    fn hex(&mut self, digits: usize) -> String {
        let mut s = String::with_capacity(digits);
        while s.len() < digits {
            let word = format!("{:016x}", self.next_u64());
            s.push_str(&word[..(digits - s.len()).min(16)]);
        }
        s
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// A pydantic/Python float as number text (`150.0`, `149.99`): Rust's `{:?}` and Python's
/// `repr` agree for the magnitudes generated here.
fn float(x: f64) -> Value {
    Value::Number(Number::from_str(&format!("{x:?}")).expect("finite floats are JSON numbers"))
}

fn money(rng: &mut Rng, lo: usize, hi: usize) -> Value {
    float(rng.between(lo * 100, hi * 100) as f64 / 100.0)
}

// ---------------------------------------------------------------------------------------------
// Layout: which runs, plans and end users the store holds and how they refer to each other
// ---------------------------------------------------------------------------------------------

struct Layout {
    runs: Vec<RunSeed>,
    plans: Vec<PlanSeed>,
    users: Vec<UserSeed>,
}

struct RunSeed {
    version: Version,
    id: RunId,
    plan: usize,
    state: RunState,
    /// Categories of its clarifications, in order.
    clarifications: Vec<Category>,
    /// R6 written by v0.4.0+ (`source`, "User Verification").
    late_r6: bool,
    /// W1–R3: `execution_context.end_user_id`.
    ec_user: Option<String>,
    /// R4+: the top-level `end_user_id`.
    end_user: EndUserRef,
    large: bool,
    seed: u64,
}

enum EndUserRef {
    None,
    File(usize),
    Missing(String),
}

struct PlanSeed {
    version: Version,
    id: PlanId,
    scenario: usize,
    seed: u64,
}

struct UserSeed {
    external_id: String,
    /// The newest version among its runs: the SDK that wrote the file last.
    version: Version,
    seed: u64,
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

fn lay_out(opts: &GenOptions, versions: &[Version]) -> Layout {
    let mut rng = Rng::new(opts.seed ^ 0x7061_6e72_756e_2d67);
    let mut plans: Vec<PlanSeed> = Vec::new();
    let mut pools: Vec<Vec<usize>> = vec![Vec::new(); versions.len()];
    let mut cursors = vec![0usize; versions.len()];
    let cycles: Vec<Vec<Category>> = versions.iter().map(|v| category_cycle(*v)).collect();
    let mut users: Vec<UserSeed> = Vec::new();
    let mut named: Vec<usize> = Vec::new();
    let mut local: Option<usize> = None;
    let mut user_counter = 0usize;
    let mut large_at = usize::MAX;
    let mut runs = Vec::with_capacity(opts.runs);
    let weights: Vec<u32> = SCENARIOS.iter().map(|s| s.weight).collect();
    for i in 0..opts.runs {
        let slot = i % versions.len();
        let version = versions[slot];
        let id = RunId(PrefixedId::new(version.run_prefix(), rng.uuid()));

        let pool = &mut pools[slot];
        let plan = if pool.is_empty() || rng.chance(0.4) {
            plans.push(PlanSeed {
                version,
                id: PlanId(PrefixedId::new(Prefix::Plan, rng.uuid())),
                scenario: rng.weighted(&weights),
                seed: rng.next_u64(),
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

        let ec_user = (version <= R3 && rng.chance(0.35)).then(|| {
            user_counter += 1;
            if rng.chance(0.3) {
                "local".to_owned()
            } else {
                user_name(&mut rng, user_counter)
            }
        });
        let end_user = if version < R4 {
            EndUserRef::None
        } else if rng.chance(0.04) {
            user_counter += 1;
            EndUserRef::Missing(user_name(&mut rng, user_counter))
        } else {
            let index = if rng.chance(0.4) {
                *local.get_or_insert_with(|| {
                    users.push(UserSeed {
                        external_id: "local".to_owned(),
                        version,
                        seed: rng.next_u64(),
                    });
                    users.len() - 1
                })
            } else if named.is_empty() || rng.chance(0.25) {
                user_counter += 1;
                users.push(UserSeed {
                    external_id: user_name(&mut rng, user_counter),
                    version,
                    seed: rng.next_u64(),
                });
                named.push(users.len() - 1);
                users.len() - 1
            } else {
                *rng.pick(&named)
            };
            users[index].version = users[index].version.max(version);
            EndUserRef::File(index)
        };

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
    Layout { runs, plans, users }
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

// ---------------------------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------------------------

const ASCII_FIRST: &[&str] = &[
    "ada",
    "grace",
    "linus",
    "alan",
    "barbara",
    "ken",
    "margaret",
    "dennis",
    "katherine",
    "tim",
    "hedy",
    "edsger",
    "radia",
    "guido",
    "anita",
    "john",
];
const ASCII_LAST: &[&str] = &[
    "lovelace", "hopper", "torvalds", "turing", "liskov", "thompson", "hamilton", "ritchie",
    "johnson", "berners", "lamarr", "dijkstra", "perlman", "rossum", "borg", "mccarthy",
];
const UNICODE_HANDLES: &[&str] = &[
    "zoë",
    "józef",
    "renée",
    "søren",
    "東京",
    "müller",
    "ana-lúcia",
];
const PEOPLE: &[(&str, &str)] = &[
    ("Ana Silva", "ana.silva@example.com"),
    ("José Álvarez", "jose.alvarez@example.com"),
    ("Zoë Chen", "zoe.chen@example.com"),
    ("Grace Hopper", "grace@example.org"),
    ("Søren Kierkegaard", "soren@example.dk"),
    ("Amélie Dubois", "amelie.dubois@example.fr"),
    ("Kenji Watanabe", "kenji.watanabe@example.jp"),
    ("Oluwaseun Adeyemi", "seun@example.ng"),
];
const ORIGINS: &[&str] = &[
    "London",
    "Berlin",
    "New York",
    "São Paulo",
    "Zürich",
    "Kraków",
    "Toronto",
    "Madrid",
];
const CITIES: &[&str] = &[
    "Lisbon",
    "Porto",
    "Tokyo",
    "Reykjavík",
    "Montréal",
    "Barcelona",
    "Kyoto",
    "Edinburgh",
    "Zürich",
    "東京",
];
const TOPICS: &[&str] = &[
    "solid-state batteries",
    "EU AI Act compliance",
    "urban heat islands",
    "RISC-V adoption in data centres",
    "coral reef restoration",
    "four-day work weeks",
    "green hydrogen costs",
    "vector databases",
];
const WEEKDAYS: &[&str] = &["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"];
const CURRENCIES: &[&str] = &["USD", "GBP", "JPY", "CHF", "BRL", "SEK"];
const REPOS: &[&str] = &[
    "portiaAI/portia-sdk-python",
    "rust-lang/rust",
    "serde-rs/json",
    "tokio-rs/tokio",
    "pydantic/pydantic",
];
const CHANNELS: &[&str] = &["general", "eng-standup", "releases", "sales-emea", "random"];
const THINGS: &[&str] = &[
    "widgets",
    "annual subscriptions",
    "support tickets",
    "espresso machines",
    "e-bikes",
];
const MONTHS: &[&str] = &[
    "January 2025",
    "February 2025",
    "March 2025",
    "April 2025",
    "May 2025",
    "June 2025",
];
const LANGS: &[(&str, &str)] = &[
    (
        "Japanese",
        "ようこそ！ご登録いただきありがとうございます。最初のプロジェクトを作成しましょう。",
    ),
    (
        "Portuguese",
        "Bem-vindo! Obrigado por se registar. Vamos criar o seu primeiro projeto.",
    ),
    (
        "Greek",
        "Καλώς ήρθατε! Ευχαριστούμε για την εγγραφή σας. Ας δημιουργήσουμε το πρώτο σας έργο.",
    ),
    (
        "German",
        "Willkommen! Danke für Ihre Anmeldung. Lassen Sie uns Ihr erstes Projekt anlegen.",
    ),
    ("Arabic", "مرحبًا! شكرًا لتسجيلك. لننشئ مشروعك الأول."),
    (
        "Korean",
        "환영합니다! 가입해 주셔서 감사합니다. 첫 번째 프로젝트를 만들어 봅시다. 🚀",
    ),
];
const VENDORS: &[&str] = &[
    "ACME Ltd",
    "Globex",
    "Initech",
    "Umbrella Corp",
    "Stark Industries",
];
const EVENTS: &[&str] = &[
    "Web Summit",
    "PyCon",
    "RustConf",
    "the jazz festival",
    "the marathon",
];
const CARRIERS: &[(&str, &str, &str)] = &[
    ("TP", "TAP Air Portugal", "Star Alliance"),
    ("LH", "Lufthansa", "Star Alliance"),
    ("BA", "British Airways", "oneworld"),
    ("IB", "Iberia", "oneworld"),
    ("AF", "Air France", "SkyTeam"),
    ("U2", "easyJet", "none"),
];
const CONDITIONS: &[&str] = &[
    "sunny",
    "partly cloudy",
    "light rain",
    "overcast",
    "clear skies",
];
const SUBJECTS: &[&str] = &[
    "The report",
    "Our analysis",
    "The latest data",
    "Customer feedback",
    "The quarterly review",
    "The pilot programme",
    "Independent testing",
    "The vendor's roadmap",
    "Survey data",
    "The finance team",
];
const VERBS: &[&str] = &[
    "shows",
    "suggests",
    "confirms",
    "indicates",
    "highlights",
    "reveals",
    "notes",
    "points to",
];
const OBJECTS: &[&str] = &[
    "a steady increase in demand",
    "lower costs than expected",
    "a strong preference for shorter delivery times",
    "several open risks that need an owner",
    "room for improvement in onboarding",
    "a 12% rise in adoption",
    "consistent results across regions",
    "fewer support tickets per customer",
    "a clear gap between the two leading options",
    "that the current budget is sufficient",
];
const TAILS: &[&str] = &[
    "over the last quarter",
    "in most markets",
    "compared with 2024",
    "according to three independent sources",
    "despite supply constraints",
    "since the last release",
    "for the second month in a row",
    "once seasonal effects are removed",
];
const REGISTRY: &[&str] = &[
    "llm_tool",
    "weather_tool",
    "calculator_tool",
    "portia:search",
    "portia:google:gmail:send_email",
    "portia:google:gmail:search_email",
    "portia:google:gcalendar:create_event",
    "portia:github:repo:star",
    "portia:slack:bot:send_message",
    "portia:google:drive:search",
];
const ERRORS: &[&str] = &[
    "ToolHardError: Could not connect to the weather API (HTTP 503)",
    "ToolSoftError: Rate limit exceeded, retry after 30 seconds",
    "InvalidPlanRunStateError: Plan run is not in a resumable state",
    "ToolHardError: 401 Unauthorized: the OAuth token has expired",
    "TimeoutError: Tool call exceeded 60 seconds",
    "ValueError: Could not parse the model output as JSON",
];

fn sentence(rng: &mut Rng, slots: &Slots, out: &mut String) {
    out.push_str(rng.word(SUBJECTS));
    out.push(' ');
    out.push_str(rng.word(VERBS));
    out.push(' ');
    out.push_str(rng.word(OBJECTS));
    out.push(' ');
    match rng.below(10) {
        0 => {
            out.push_str("for ");
            out.push_str(slots.text(Slot::Topic));
        }
        1 => {
            out.push_str("in ");
            out.push_str(slots.text(Slot::City));
        }
        _ => out.push_str(rng.word(TAILS)),
    }
    out.push('.');
}

fn paragraph(rng: &mut Rng, slots: &Slots, out: &mut String) {
    for i in 0..rng.between(3, 6) {
        if i > 0 {
            out.push(' ');
        }
        sentence(rng, slots, out);
    }
}

/// Markdown-ish report text of about `target` bytes.
fn report(rng: &mut Rng, slots: &Slots, target: usize) -> String {
    let mut out = String::with_capacity(target + 512);
    out.push_str("# ");
    out.push_str(slots.text(Slot::Topic));
    out.push_str("\n\n## Summary\n\n");
    paragraph(rng, slots, &mut out);
    let mut section = 1;
    while out.len() < target {
        out.push_str(&format!("\n\n## Finding {section}\n\n"));
        section += 1;
        paragraph(rng, slots, &mut out);
        if rng.chance(0.4) {
            for _ in 0..rng.between(2, 4) {
                out.push_str("\n- ");
                sentence(rng, slots, &mut out);
            }
        }
    }
    out
}

fn two_sentences(rng: &mut Rng, slots: &Slots) -> String {
    let mut out = String::with_capacity(256);
    sentence(rng, slots, &mut out);
    out.push(' ');
    sentence(rng, slots, &mut out);
    out
}

fn short_text(rng: &mut Rng, slots: &Slots) -> String {
    let mut out = String::with_capacity(128);
    sentence(rng, slots, &mut out);
    out
}

// ---------------------------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------------------------

/// A value a plan is about (a city, a date …): its text in tasks and its native JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Origin,
    City,
    Date,
    Budget,
    Person,
    Topic,
    Weekday,
    Amount,
    Currency,
    Repo,
    Channel,
    Things,
    Month,
    Lang,
    A,
    B,
    Vendor,
    Event,
}

impl Slot {
    const ALL: [Slot; 18] = [
        Slot::Origin,
        Slot::City,
        Slot::Date,
        Slot::Budget,
        Slot::Person,
        Slot::Topic,
        Slot::Weekday,
        Slot::Amount,
        Slot::Currency,
        Slot::Repo,
        Slot::Channel,
        Slot::Things,
        Slot::Month,
        Slot::Lang,
        Slot::A,
        Slot::B,
        Slot::Vendor,
        Slot::Event,
    ];

    fn name(self) -> &'static str {
        match self {
            Slot::Origin => "origin",
            Slot::City => "city",
            Slot::Date => "date",
            Slot::Budget => "budget",
            Slot::Person => "person",
            Slot::Topic => "topic",
            Slot::Weekday => "weekday",
            Slot::Amount => "amount",
            Slot::Currency => "currency",
            Slot::Repo => "repo",
            Slot::Channel => "channel",
            Slot::Things => "things",
            Slot::Month => "month",
            Slot::Lang => "lang",
            Slot::A => "a",
            Slot::B => "b",
            Slot::Vendor => "vendor",
            Slot::Event => "event",
        }
    }

    fn from_name(name: &str) -> Option<Slot> {
        Slot::ALL.into_iter().find(|s| s.name() == name)
    }

    fn draw(self, rng: &mut Rng) -> Value {
        match self {
            Slot::Origin => Value::from(*rng.pick(ORIGINS)),
            Slot::City => Value::from(*rng.pick(CITIES)),
            Slot::Date => Value::from(date(rng)),
            Slot::Budget => Value::from(rng.between(2, 18) * 50),
            Slot::Person => Value::from(rng.pick(PEOPLE).0),
            Slot::Topic => Value::from(*rng.pick(TOPICS)),
            Slot::Weekday => Value::from(*rng.pick(WEEKDAYS)),
            Slot::Amount => money(rng, 20, 5000),
            Slot::Currency => Value::from(*rng.pick(CURRENCIES)),
            Slot::Repo => Value::from(*rng.pick(REPOS)),
            Slot::Channel => Value::from(*rng.pick(CHANNELS)),
            Slot::Things => Value::from(*rng.pick(THINGS)),
            Slot::Month => Value::from(*rng.pick(MONTHS)),
            Slot::Lang => Value::from(rng.pick(LANGS).0),
            Slot::A | Slot::B => {
                if rng.chance(0.7) {
                    Value::from(rng.between(1, 999))
                } else {
                    float(rng.between(1, 9999) as f64 / 10.0)
                }
            }
            Slot::Vendor => Value::from(*rng.pick(VENDORS)),
            Slot::Event => Value::from(*rng.pick(EVENTS)),
        }
    }
}

fn date(rng: &mut Rng) -> String {
    format!("2025-{:02}-{:02}", rng.between(1, 12), rng.between(1, 28))
}

fn datetime(rng: &mut Rng) -> String {
    let offset = rng.pick(&["+00:00", "+01:00", "-05:00", "+09:00"]);
    format!(
        "{}T{:02}:{:02}:00{offset}",
        date(rng),
        rng.between(7, 19),
        rng.pick(&[0, 15, 30, 45])
    )
}

/// The values of one plan (and the runs that reuse it, unless they pass other inputs).
struct Slots {
    native: Vec<Value>,
    text: Vec<String>,
}

impl Slots {
    fn draw(rng: &mut Rng) -> Slots {
        let native: Vec<Value> = Slot::ALL.iter().map(|s| s.draw(rng)).collect();
        let text = native.iter().map(|v| stringify(v.clone())).collect();
        Slots { native, text }
    }

    fn text(&self, slot: Slot) -> &str {
        &self.text[slot as usize]
    }
}

/// What a step's output looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A list of pydantic models, as `json.dumps` writes it (with spaces).
    Flights,
    /// One pydantic model, `model_dump_json()` (compact).
    Choice,
    /// A sentence or a dict.
    Weather,
    /// Text, an enum value or `""` (None).
    Booking,
    /// `""` (None) or a confirmation.
    Sent,
    /// An int, a float, `NaN` or an integer beyond 64 bits.
    Number,
    /// A float.
    Rate,
    /// `"true"` / `"false"`.
    Verdict,
    /// A list of dicts.
    Emails,
    /// A paragraph or two.
    Summary,
    /// Kilobytes of markdown (agent memory material from R2).
    Report,
    /// A list of dicts with urls and scores.
    Sources,
    /// A dict with a list of datetimes.
    Availability,
    /// An ISO datetime.
    Event,
    /// An ISO date.
    Date,
    /// Non-Latin text.
    Translation,
    /// An enum value.
    Status,
    /// A string that looks like JSON.
    JsonText,
    /// Tab-separated rows.
    Table,
    /// An int, sometimes beyond 64 bits.
    Count,
    /// A sentence.
    Answer,
    /// A list of strings.
    KeyPoints,
    /// Decoded bytes with control characters.
    File,
}

struct StepTpl {
    task: &'static str,
    tool: Option<&'static str>,
    output: &'static str,
    kind: Kind,
    /// Earlier steps whose outputs this one reads, with the variable description.
    uses: &'static [(usize, &'static str)],
    /// Constants the W1-era planner put in `Variable.value`.
    consts: &'static [(&'static str, Slot, &'static str)],
    condition: Option<&'static str>,
}

struct InputTpl {
    slot: Slot,
    name: &'static str,
    description: &'static str,
    /// The step that reads it.
    step: usize,
}

struct Scenario {
    weight: u32,
    query: &'static str,
    steps: &'static [StepTpl],
    inputs: &'static [InputTpl],
}

const fn step(
    task: &'static str,
    tool: Option<&'static str>,
    output: &'static str,
    kind: Kind,
) -> StepTpl {
    StepTpl {
        task,
        tool,
        output,
        kind,
        uses: &[],
        consts: &[],
        condition: None,
    }
}

const fn input(slot: Slot, name: &'static str, description: &'static str, step: usize) -> InputTpl {
    InputTpl {
        slot,
        name,
        description,
        step,
    }
}

const LLM: Option<&str> = Some("llm_tool");

static SCENARIOS: &[Scenario] = &[
    Scenario {
        weight: 14,
        query:
            "Book me the cheapest flight from {origin} to {city} on {date} if the weather is good",
        steps: &[
            step(
                "Search flights from {origin} to {city} on {date}",
                Some("portia:search"),
                "$flights",
                Kind::Flights,
            ),
            step(
                "Get the weather in {city} on {date}",
                Some("weather_tool"),
                "$weather",
                Kind::Weather,
            ),
            StepTpl {
                uses: &[(0, "flights found"), (1, "forecast")],
                condition: Some("if $weather is sunny"),
                ..step(
                    "Pick the cheapest flight under {budget} EUR",
                    LLM,
                    "$choice",
                    Kind::Choice,
                )
            },
            StepTpl {
                uses: &[(2, "chosen flight")],
                condition: Some("if $choice is not empty"),
                ..step(
                    "Book the chosen flight and email the confirmation",
                    Some("portia:google:gmail:send_email"),
                    "$booking",
                    Kind::Booking,
                )
            },
        ],
        inputs: &[
            input(Slot::Origin, "$origin", "Origin city", 0),
            input(Slot::City, "$destination", "Destination city", 0),
            input(Slot::Date, "$departure_date", "Departure date", 0),
            input(Slot::Budget, "$budget", "Max price in EUR", 2),
        ],
    },
    Scenario {
        weight: 8,
        query: "What is {a} plus {b}?",
        steps: &[StepTpl {
            consts: &[
                ("$a", Slot::A, "first number"),
                ("$b", Slot::B, "second number"),
            ],
            ..step(
                "Add {a} and {b}",
                Some("calculator_tool"),
                "$result",
                Kind::Number,
            )
        }],
        inputs: &[
            input(Slot::A, "$a", "First number", 0),
            input(Slot::B, "$b", "Second number", 0),
        ],
    },
    Scenario {
        weight: 12,
        query: "Summarise my unread emails from {person} and draft a reply",
        steps: &[
            step(
                "Find unread emails from {person}",
                Some("portia:google:gmail:search_email"),
                "$emails",
                Kind::Emails,
            ),
            StepTpl {
                uses: &[(0, "the unread emails")],
                ..step(
                    "Summarise the emails in a few sentences",
                    LLM,
                    "$summary",
                    Kind::Summary,
                )
            },
            StepTpl {
                uses: &[(1, "summary of the thread")],
                ..step(
                    "Draft a polite reply to {person}",
                    LLM,
                    "$draft",
                    Kind::Summary,
                )
            },
        ],
        inputs: &[input(Slot::Person, "$sender", "Whose emails to read", 0)],
    },
    Scenario {
        weight: 11,
        query: "Research {topic} and write a short report with sources",
        steps: &[
            step(
                "Search the web for recent articles on {topic}",
                Some("portia:search"),
                "$sources",
                Kind::Sources,
            ),
            StepTpl {
                uses: &[(0, "articles found")],
                ..step(
                    "Read the five most relevant articles and take notes",
                    LLM,
                    "$notes",
                    Kind::Report,
                )
            },
            StepTpl {
                uses: &[(1, "notes")],
                ..step(
                    "Write a report on {topic} citing the sources",
                    LLM,
                    "$big_report",
                    Kind::Report,
                )
            },
            StepTpl {
                uses: &[(2, "the report")],
                ..step(
                    "List the key points of the report",
                    LLM,
                    "$key_points",
                    Kind::KeyPoints,
                )
            },
        ],
        inputs: &[input(Slot::Topic, "$topic", "Research topic", 0)],
    },
    Scenario {
        weight: 8,
        query: "Schedule a 30 minute meeting with {person} next {weekday}",
        steps: &[
            step(
                "Check {person}'s availability next {weekday}",
                Some("portia:google:gcalendar:check_availability"),
                "$availability",
                Kind::Availability,
            ),
            StepTpl {
                uses: &[(0, "free slots")],
                ..step(
                    "Create a 30 minute event in the first free slot",
                    Some("portia:google:gcalendar:create_event"),
                    "$event",
                    Kind::Event,
                )
            },
            StepTpl {
                uses: &[(1, "the event")],
                ..step(
                    "Email {person} the invitation",
                    Some("portia:google:gmail:send_email"),
                    "$invite_sent",
                    Kind::Sent,
                )
            },
        ],
        inputs: &[
            input(Slot::Person, "$attendee", "Who to meet", 0),
            input(Slot::Weekday, "$day", "Day of the week", 0),
        ],
    },
    Scenario {
        weight: 6,
        query: "Convert {amount} {currency} to EUR and tell me if it is over budget",
        steps: &[
            step(
                "Get today's {currency} to EUR exchange rate",
                Some("portia:search"),
                "$rate",
                Kind::Rate,
            ),
            StepTpl {
                uses: &[(0, "exchange rate")],
                consts: &[("$amount", Slot::Amount, "amount to convert")],
                ..step(
                    "Multiply {amount} by the rate",
                    Some("calculator_tool"),
                    "$converted",
                    Kind::Rate,
                )
            },
            StepTpl {
                uses: &[(1, "amount in EUR")],
                ..step(
                    "Compare the amount with the budget of {budget} EUR",
                    LLM,
                    "$over_budget",
                    Kind::Verdict,
                )
            },
        ],
        inputs: &[
            input(Slot::Amount, "$amount", "Amount", 0),
            input(Slot::Currency, "$currency", "Currency code", 0),
        ],
    },
    Scenario {
        weight: 5,
        query: "Star the GitHub repository {repo} and post it to #{channel}",
        steps: &[
            step(
                "Star {repo} on GitHub",
                Some("portia:github:repo:star"),
                "$starred",
                Kind::Status,
            ),
            StepTpl {
                uses: &[(0, "star result")],
                ..step(
                    "Post a message about {repo} to #{channel}",
                    Some("portia:slack:bot:send_message"),
                    "$message",
                    Kind::JsonText,
                )
            },
        ],
        inputs: &[
            input(Slot::Repo, "$repo", "owner/name", 0),
            input(Slot::Channel, "channel", "Slack channel", 1),
        ],
    },
    Scenario {
        weight: 7,
        query: "How many {things} did we sell in {month}?",
        steps: &[
            step(
                "Query the sales table for {things} sold in {month}",
                Some("portia:sql:query"),
                "$rows",
                Kind::Table,
            ),
            StepTpl {
                uses: &[(0, "sales rows")],
                ..step(
                    "Sum the units column",
                    Some("calculator_tool"),
                    "$total",
                    Kind::Count,
                )
            },
            StepTpl {
                uses: &[(1, "total units")],
                ..step(
                    "Answer the question in one sentence",
                    LLM,
                    "$answer",
                    Kind::Answer,
                )
            },
        ],
        inputs: &[input(Slot::Month, "$month", "Month to report on", 0)],
    },
    Scenario {
        weight: 5,
        query: "Translate our welcome message into {lang}",
        steps: &[step(
            "Translate the welcome message into {lang}",
            LLM,
            "$translation",
            Kind::Translation,
        )],
        inputs: &[input(Slot::Lang, "$language", "Target language", 0)],
    },
    Scenario {
        weight: 8,
        query: "Weather in {city}",
        steps: &[step(
            "Get weather",
            Some("weather_tool"),
            "$weather",
            Kind::Weather,
        )],
        inputs: &[input(Slot::City, "$city", "City", 0)],
    },
    Scenario {
        weight: 4,
        query: "When is {event} in {city} this year?",
        steps: &[
            step(
                "Search for the dates of {event} in {city}",
                Some("portia:search"),
                "$results",
                Kind::Sources,
            ),
            StepTpl {
                uses: &[(0, "search results")],
                ..step("Extract the start date", LLM, "$date", Kind::Date)
            },
        ],
        inputs: &[input(Slot::Event, "$event", "Event name", 0)],
    },
    Scenario {
        weight: 3,
        query: "Find the latest invoice from {vendor} and tell me the total",
        steps: &[
            step(
                "Find the most recent invoice from {vendor} in Drive",
                Some("portia:google:drive:search"),
                "$invoice",
                Kind::File,
            ),
            StepTpl {
                uses: &[(0, "the invoice file")],
                ..step("Read the invoice total", LLM, "$invoice_total", Kind::Rate)
            },
        ],
        inputs: &[input(Slot::Vendor, "$vendor", "Vendor name", 0)],
    },
    Scenario {
        weight: 1,
        query: "Say hello",
        steps: &[],
        inputs: &[],
    },
];

/// The plan shapes of §3, by the release that wrote them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Era {
    /// alpha.50 – 0.1.5: `Variable.value`, no `condition`, tool ids in planner order.
    Alpha,
    /// 0.1.6 – 0.1.7: tool ids sorted, still no `condition`.
    V016,
    /// 0.1.8 – 0.1.11: `Step.condition` and `Variable.value`.
    V018,
    /// v0.1.12 – v0.3.1: `Variable.value` gone.
    V0112,
    /// v0.3.2 – v0.3.3: plan `inputs`.
    V032,
    /// v0.3.4+: `plan_inputs`.
    V034,
}

impl Era {
    fn draw(version: Version, rng: &mut Rng) -> Era {
        match version {
            W1 | R0 => Era::Alpha,
            R1 => [Era::Alpha, Era::V016, Era::V018][rng.weighted(&[15, 15, 70])],
            R2 | R3 | R4 => Era::V0112,
            R5 => Era::V032,
            R6 => Era::V034,
        }
    }
    fn has_value(self) -> bool {
        matches!(self, Era::Alpha | Era::V016 | Era::V018)
    }
    fn has_condition(self) -> bool {
        !matches!(self, Era::Alpha | Era::V016)
    }
}

/// What runs need to know about their plan.
struct PlanSpec {
    id: PlanId,
    slots: Slots,
    /// Output name and kind of each step.
    steps: Vec<(String, Kind)>,
    /// Plan input names with the slot they carry.
    inputs: Vec<(String, Slot)>,
}

fn fill(template: &str, slots: &Slots, inputs: &[(String, Slot)]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            return out;
        };
        match Slot::from_name(&after[..close]) {
            Some(slot) => match inputs.iter().find(|(_, s)| *s == slot) {
                Some((name, _)) if name.starts_with('$') => out.push_str(name),
                Some((name, _)) => {
                    out.push('$');
                    out.push_str(name);
                }
                None => out.push_str(slots.text(slot)),
            },
            None => out.push_str(&rest[open..open + close + 2]),
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

fn build_plan(seed: &PlanSeed, out: &Path) -> io::Result<(PlanSpec, GenFile)> {
    let mut rng = Rng::new(seed.seed);
    let scenario = &SCENARIOS[seed.scenario];
    let slots = Slots::draw(&mut rng);
    let era = Era::draw(seed.version, &mut rng);
    // v0.7.0+ `to_legacy_plan` output: positional outputs, bare input names, empty descriptions.
    let builder = seed.version == R6 && rng.chance(0.1);
    let use_inputs =
        matches!(era, Era::V032 | Era::V034) && !scenario.inputs.is_empty() && rng.chance(0.6);
    let inputs: Vec<(String, Slot)> = if use_inputs {
        scenario
            .inputs
            .iter()
            .map(|i| {
                let name = if builder {
                    i.name.trim_start_matches('$')
                } else {
                    i.name
                };
                (name.to_owned(), i.slot)
            })
            .collect()
    } else {
        Vec::new()
    };
    let output_name = |i: usize| {
        if builder {
            format!("$step_{i}_output")
        } else {
            scenario.steps[i].output.to_owned()
        }
    };

    let mut tool_ids: Vec<String> = Vec::new();
    let mut steps = Vec::with_capacity(scenario.steps.len());
    let mut metas = Vec::with_capacity(scenario.steps.len());
    for (i, tpl) in scenario.steps.iter().enumerate() {
        let mut variables = Vec::new();
        if use_inputs {
            for (tpl_input, (name, _)) in scenario.inputs.iter().zip(&inputs) {
                if tpl_input.step == i {
                    variables.push(Variable {
                        name: name.clone(),
                        value: None,
                        description: if builder {
                            String::new()
                        } else {
                            tpl_input.description.to_owned()
                        },
                    });
                }
            }
        }
        for (k, description) in tpl.uses {
            variables.push(Variable {
                name: output_name(*k),
                value: era.has_value().then_some(Value::Null),
                description: if builder {
                    String::new()
                } else {
                    (*description).to_owned()
                },
            });
        }
        if era.has_value() {
            for (name, slot, description) in tpl.consts {
                variables.push(Variable {
                    name: (*name).to_owned(),
                    value: Some(slots.native[*slot as usize].clone()),
                    description: (*description).to_owned(),
                });
            }
        }
        let condition = tpl.condition.map(|c| {
            if builder {
                format!("If {} is true", output_name(tpl.uses[0].0))
            } else {
                c.to_owned()
            }
        });
        // The W1-era planner sometimes left the tool of an LLM step unset.
        let tool_id = match tpl.tool {
            Some("llm_tool") if era == Era::Alpha && rng.chance(0.3) => None,
            tool => tool.map(str::to_owned),
        };
        if let Some(tool) = &tool_id {
            if !tool_ids.contains(tool) {
                tool_ids.push(tool.clone());
            }
        }
        steps.push(Step {
            task: fill(tpl.task, &slots, &inputs),
            inputs: variables,
            tool_id,
            output: output_name(i),
            condition: era.has_condition().then_some(condition),
            extra: IndexMap::new(),
        });
        metas.push((output_name(i), tpl.kind));
    }
    // The planner saw the whole tool registry, not only the tools it used.
    if !builder {
        for _ in 0..rng.below(4) {
            let tool = (*rng.pick(REGISTRY)).to_owned();
            if !tool_ids.contains(&tool) {
                tool_ids.push(tool);
            }
        }
    }
    if era == Era::Alpha {
        rng.shuffle(&mut tool_ids);
    } else {
        tool_ids.sort();
    }

    let plan = Plan {
        id: Some(seed.id),
        plan_context: PlanContext {
            query: fill(scenario.query, &slots, &[]),
            tool_ids,
        },
        steps,
        inputs: (era == Era::V032).then(|| {
            scenario
                .inputs
                .iter()
                .zip(&inputs)
                .map(|(tpl, (name, _))| PlanInputV032 {
                    name: name.clone(),
                    description: tpl.description.to_owned(),
                })
                .collect()
        }),
        plan_inputs: (era == Era::V034).then(|| {
            scenario
                .inputs
                .iter()
                .zip(&inputs)
                .map(|(tpl, (name, slot))| PlanInput {
                    name: name.clone(),
                    description: if builder || rng.chance(0.15) {
                        None
                    } else {
                        Some(tpl.description.to_owned())
                    },
                    value: if rng.chance(0.4) {
                        slots.native[*slot as usize].clone()
                    } else {
                        Value::Null
                    },
                })
                .collect()
        }),
    };
    let file = write_new(
        out,
        PathBuf::from(format!("{}.json", seed.id)),
        &to_sdk_json(&plan),
        FileKind::Plan,
        seed.version,
    )?;
    let spec = PlanSpec {
        id: seed.id,
        slots,
        steps: metas,
        inputs,
    };
    Ok((spec, file))
}

// ---------------------------------------------------------------------------------------------
// Output values
// ---------------------------------------------------------------------------------------------

fn flight(rng: &mut Rng, slots: &Slots) -> Value {
    let (code, name, alliance) = *rng.pick(CARRIERS);
    let mut m = Map::new();
    m.insert(
        "flight_no".into(),
        Value::from(format!("{code}{}", rng.between(100, 9999))),
    );
    m.insert("origin".into(), Value::from(slots.text(Slot::Origin)));
    m.insert("destination".into(), Value::from(slots.text(Slot::City)));
    m.insert(
        "departure".into(),
        Value::from(format!(
            "{}T{:02}:{:02}:00",
            slots.text(Slot::Date),
            rng.between(6, 21),
            rng.pick(&[0, 5, 20, 35, 50])
        )),
    );
    m.insert("price_eur".into(), money(rng, 39, 900));
    m.insert("stops".into(), Value::from(rng.weighted(&[6, 3, 1])));
    let mut carrier = Map::new();
    carrier.insert("name".into(), Value::from(name));
    carrier.insert("alliance".into(), Value::from(alliance));
    m.insert("carrier".into(), Value::Object(carrier));
    Value::Object(m)
}

fn object(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// The stored (stringified) value of a step output of this kind.
fn value(kind: Kind, rng: &mut Rng, slots: &Slots) -> String {
    match kind {
        Kind::Flights => {
            let flights: Vec<Value> = (0..rng.between(4, 12))
                .map(|_| flight(rng, slots))
                .collect();
            to_python_json(&Value::Array(flights))
        }
        Kind::Choice => serde_json::to_string(&flight(rng, slots)).expect("JSON"),
        Kind::Weather => {
            let condition = *rng.pick(CONDITIONS);
            let temp = rng.between(8, 34);
            if rng.chance(0.5) {
                format!(
                    "{} in {}, {temp}°C, wind {} km/h",
                    capitalise(condition),
                    slots.text(Slot::City),
                    rng.between(2, 40)
                )
            } else {
                to_python_json(&object(vec![
                    ("city", Value::from(slots.text(Slot::City))),
                    ("temp_c", float(temp as f64 + rng.below(10) as f64 / 10.0)),
                    ("conditions", Value::from(condition)),
                    ("humidity", float(rng.between(20, 95) as f64 / 100.0)),
                    ("alerts", Value::Array(Vec::new())),
                ]))
            }
        }
        Kind::Booking => match rng.weighted(&[5, 3, 2]) {
            0 => format!(
                "Booked {}{} on {}, confirmation code {}",
                rng.pick(CARRIERS).0,
                rng.between(100, 9999),
                slots.text(Slot::Date),
                rng.hex(6).to_uppercase()
            ),
            1 => (*rng.pick(&["confirmed", "pending", "waitlisted"])).to_owned(),
            _ => String::new(),
        },
        Kind::Sent => {
            if rng.chance(0.5) {
                String::new()
            } else {
                format!("Message sent (id {})", rng.hex(16))
            }
        }
        Kind::Number => match rng.weighted(&[8, 4, 1, 1, 1]) {
            0 => rng.between(2, 1998).to_string(),
            1 => format!("{:?}", rng.between(1, 99_999) as f64 / 10.0),
            2 => "NaN".to_owned(),
            3 => format!("-{}", rng.between(1, 500)),
            _ => format!("{}", u128::from(u64::MAX) + rng.between(1, 1 << 20) as u128),
        },
        Kind::Rate => format!("{:?}", rng.between(1, 2_000_000) as f64 / 10_000.0),
        Kind::Verdict => (if rng.chance(0.6) { "true" } else { "false" }).to_owned(),
        Kind::Emails => {
            let emails: Vec<Value> = (0..rng.between(3, 10))
                .map(|_| {
                    let (name, email) = *rng.pick(PEOPLE);
                    object(vec![
                        ("from", Value::from(format!("{name} <{email}>"))),
                        ("subject", Value::from(short_text(rng, slots))),
                        ("snippet", Value::from(two_sentences(rng, slots))),
                        ("received", Value::from(datetime(rng))),
                        ("unread", Value::Bool(true)),
                        ("labels", Value::from(vec!["INBOX", "IMPORTANT"])),
                    ])
                })
                .collect();
            to_python_json(&Value::Array(emails))
        }
        Kind::Summary => {
            let mut out = String::with_capacity(1024);
            paragraph(rng, slots, &mut out);
            if rng.chance(0.6) {
                out.push_str("\n\n");
                paragraph(rng, slots, &mut out);
            }
            out
        }
        Kind::Report => {
            let target = rng.between(3000, 10_000);
            report(rng, slots, target)
        }
        Kind::Sources => {
            let sources: Vec<Value> = (0..rng.between(3, 8))
                .map(|i| {
                    object(vec![
                        ("title", Value::from(short_text(rng, slots))),
                        (
                            "url",
                            Value::from(format!(
                                "https://{}.example.com/articles/{}",
                                rng.pick(&["news", "research", "blog", "journal"]),
                                rng.hex(8)
                            )),
                        ),
                        ("snippet", Value::from(two_sentences(rng, slots))),
                        (
                            "score",
                            float((990 - i * rng.between(40, 120)) as f64 / 1000.0),
                        ),
                    ])
                })
                .collect();
            to_python_json(&Value::Array(sources))
        }
        Kind::Availability => {
            let slots_free: Vec<Value> = (0..rng.between(0, 4))
                .map(|_| Value::from(datetime(rng)))
                .collect();
            let email = PEOPLE
                .iter()
                .find(|(n, _)| *n == slots.text(Slot::Person))
                .map_or("someone@example.com", |(_, e)| e);
            to_python_json(&object(vec![
                ("attendee", Value::from(email)),
                ("free_slots", Value::Array(slots_free)),
                (
                    "timezone",
                    Value::from(*rng.pick(&[
                        "Europe/Lisbon",
                        "UTC",
                        "America/New_York",
                        "Asia/Tokyo",
                    ])),
                ),
            ]))
        }
        Kind::Event => datetime(rng),
        Kind::Date => date(rng),
        Kind::Translation => {
            let lang = slots.text(Slot::Lang);
            LANGS
                .iter()
                .find(|(l, _)| *l == lang)
                .map_or(LANGS[0].1, |(_, t)| t)
                .to_owned()
        }
        Kind::Status => (*rng.pick(&["starred", "already_starred", "not_found"])).to_owned(),
        Kind::JsonText => {
            let message = object(vec![
                ("ok", Value::Bool(true)),
                (
                    "channel",
                    Value::from(format!("#{}", slots.text(Slot::Channel))),
                ),
                (
                    "ts",
                    Value::from(format!(
                        "17{:08}.{:06}",
                        rng.below(99_999_999),
                        rng.below(999_999)
                    )),
                ),
                (
                    "text",
                    Value::from(format!("⭐ Starred {}", slots.text(Slot::Repo))),
                ),
            ]);
            if rng.chance(0.5) {
                to_python_json(&message)
            } else {
                serde_json::to_string(&message).expect("JSON")
            }
        }
        Kind::Table => {
            let mut out = String::from("date\tproduct\tunits\trevenue_eur");
            for _ in 0..rng.between(8, 40) {
                out.push_str(&format!(
                    "\n{}\t{}\t{}\t{:.2}",
                    date(rng),
                    slots.text(Slot::Things),
                    rng.between(1, 400),
                    rng.between(100, 999_999) as f64 / 100.0
                ));
            }
            out
        }
        Kind::Count => {
            if rng.chance(0.1) {
                format!("{}", u128::from(u64::MAX) + rng.between(1, 1 << 30) as u128)
            } else {
                rng.between(0, 250_000).to_string()
            }
        }
        Kind::Answer => format!(
            "We sold {} {} in {}.",
            rng.between(0, 25_000),
            slots.text(Slot::Things),
            slots.text(Slot::Month)
        ),
        Kind::KeyPoints => {
            let points: Vec<Value> = (0..rng.between(3, 6))
                .map(|_| Value::from(short_text(rng, slots)))
                .collect();
            to_python_json(&Value::Array(points))
        }
        Kind::File => {
            // bytes decoded as UTF-8 with errors ignored: control characters survive.
            format!(
                "%PDF-1.7\n%\u{7f}\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n\u{0}\u{1}\u{8}\u{c}Invoice {}-{}\tTotal {:.2} EUR\r\n%%EOF",
                slots.text(Slot::Vendor),
                rng.between(1000, 99999),
                rng.between(100, 999_999) as f64 / 100.0
            )
        }
    }
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A summary: text, or `""` or `null` (which stay different).
fn summary(kind: Kind, rng: &mut Rng, slots: &Slots) -> Option<String> {
    match rng.weighted(&[80, 12, 8]) {
        1 => None,
        2 => Some(String::new()),
        _ => Some(match kind {
            Kind::Flights | Kind::Choice => format!(
                "Flights from {} to {} on {}",
                slots.text(Slot::Origin),
                slots.text(Slot::City),
                slots.text(Slot::Date)
            ),
            Kind::Weather => format!("Weather forecast for {}", slots.text(Slot::City)),
            Kind::Emails => format!("Unread emails from {}", slots.text(Slot::Person)),
            Kind::Report | Kind::Summary | Kind::KeyPoints => short_text(rng, slots),
            Kind::Translation => format!("Welcome message in {}", slots.text(Slot::Lang)),
            Kind::Table | Kind::Count | Kind::Answer => {
                format!(
                    "{} sold in {}",
                    capitalise(slots.text(Slot::Things)),
                    slots.text(Slot::Month)
                )
            }
            _ => format!("Result of the {} step", kind_label(kind)),
        }),
    }
}

fn kind_label(kind: Kind) -> &'static str {
    match kind {
        Kind::Booking => "booking",
        Kind::Sent => "email",
        Kind::Number => "calculation",
        Kind::Rate => "conversion",
        Kind::Verdict => "check",
        Kind::Sources => "search",
        Kind::Availability => "availability",
        Kind::Event => "calendar",
        Kind::Date => "date extraction",
        Kind::Status => "GitHub",
        Kind::JsonText => "Slack",
        Kind::File => "Drive",
        _ => "previous",
    }
}

// ---------------------------------------------------------------------------------------------
// Clarifications
// ---------------------------------------------------------------------------------------------

const INPUTS: &[(&str, &str, &str)] = &[
    ("city", "Which city do you mean?", "Lisbon"),
    (
        "recipient",
        "Who should the email go to?",
        "ana.silva@example.com",
    ),
    ("date", "Which date should I use?", "2025-06-01"),
    (
        "repository",
        "Which repository do you mean?",
        "portiaAI/portia-sdk-python",
    ),
    (
        "channel",
        "Which Slack channel should I post to?",
        "#eng-standup",
    ),
    ("amount", "How much should I transfer?", "250"),
    ("ciudad", "¿A qué ciudad quieres viajar?", "Málaga"),
];
const ACTIONS: &[(&str, &str)] = &[
    (
        "Please authenticate with Google",
        "https://accounts.google.com/o/oauth2/auth?response_type=code&client_id=portia&scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fgmail.send&state=",
    ),
    (
        "Please authorise Portia to access your GitHub account",
        "https://github.com/login/oauth/authorize?client_id=Iv1.portia&scope=public_repo&state=",
    ),
    (
        "Connect your Slack workspace",
        "https://slack.com/oauth/v2/authorize?client_id=portia&scope=chat%3Awrite&state=",
    ),
    (
        "Sign in to Microsoft to continue",
        "https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=portia&state=",
    ),
];

fn options(rng: &mut Rng) -> (&'static str, &'static str, Vec<Value>) {
    match rng.below(4) {
        0 => (
            "airport",
            "Which airport do you want to fly from?",
            vec!["LHR".into(), "LGW".into(), "STN".into(), "LCY".into()],
        ),
        1 => (
            "calendar",
            "Which calendar should the meeting go in?",
            vec!["Work".into(), "Personal".into(), "Team Offsite 🏝️".into()],
        ),
        2 => (
            "contact",
            "Which Ana did you mean?",
            vec![
                object(vec![
                    ("name", "Ana Silva".into()),
                    ("email", "ana.silva@example.com".into()),
                ]),
                object(vec![
                    ("name", "Ana Souza".into()),
                    ("email", "ana.souza@example.com.br".into()),
                ]),
            ],
        ),
        _ => (
            "seats",
            "How many seats should I book?",
            vec![1.into(), 2.into(), 3.into(), 4.into()],
        ),
    }
}

struct ClarificationCtx {
    version: Version,
    late_r6: bool,
    run: RunId,
}

fn clarification(
    ctx: &ClarificationCtx,
    rng: &mut Rng,
    category: Category,
    step: Option<i64>,
    resolved: bool,
) -> Clarification {
    let version = ctx.version;
    let run_ref = if version == W1 {
        (RunRefKey::WorkflowId, Some(ctx.run))
    } else if ctx.late_r6 && rng.chance(0.03) {
        // plan_run_id is optional from v0.7.0.
        (RunRefKey::PlanRunId, None)
    } else if rng.chance(0.02) {
        // A clarification raised for another run (the SDK does not check).
        let other = RunId(PrefixedId::new(version.run_prefix(), rng.uuid()));
        (RunRefKey::PlanRunId, Some(other))
    } else {
        (RunRefKey::PlanRunId, Some(ctx.run))
    };
    let mut fields: IndexMap<String, Value> = IndexMap::new();
    let (guidance, response) = match category {
        Category::Argument => {
            let (_, guidance, answer) = *rng.pick(INPUTS);
            (
                guidance.to_owned(),
                if resolved { answer.into() } else { Value::Null },
            )
        }
        Category::Input => {
            let (argument, guidance, answer) = *rng.pick(INPUTS);
            fields.insert("argument_name".into(), argument.into());
            (
                guidance.to_owned(),
                if resolved { answer.into() } else { Value::Null },
            )
        }
        Category::Action => {
            let (guidance, url) = *rng.pick(ACTIONS);
            fields.insert("action_url".into(), format!("{url}{}", rng.hex(32)).into());
            if version >= R4 {
                fields.insert("require_confirmation".into(), rng.chance(0.25).into());
            }
            let response = if resolved && rng.chance(0.6) {
                Value::Bool(true)
            } else {
                Value::Null
            };
            (guidance.to_owned(), response)
        }
        Category::MultipleChoice => {
            let (argument, guidance, options) = options(rng);
            let response = if resolved {
                rng.pick(&options).clone()
            } else {
                Value::Null
            };
            fields.insert("argument_name".into(), argument.into());
            fields.insert("options".into(), Value::Array(options));
            (guidance.to_owned(), response)
        }
        Category::ValueConfirmation => {
            let amount = money(rng, 10, 2000);
            let guidance = format!(
                "Confirm transfer of {} EUR to {}?",
                stringify(amount.clone()),
                rng.pick(VENDORS)
            );
            fields.insert("argument_name".into(), "amount".into());
            let response = match (resolved, rng.below(3)) {
                (false, _) => Value::Null,
                (true, 0) => amount,
                (true, n) => Value::Bool(n == 1),
            };
            (guidance, response)
        }
        Category::UserVerification => {
            let guidance = format!(
                "Do you approve sending this email to {}?",
                rng.pick(PEOPLE).1
            );
            (
                guidance,
                if resolved {
                    rng.chance(0.8).into()
                } else {
                    Value::Null
                },
            )
        }
        Category::Custom => {
            let (name, guidance) = *rng.pick(&[
                ("payment_approval", "Approve the payment in the banking app"),
                (
                    "document_review",
                    "Review the contract draft before it is sent",
                ),
                ("two_factor", "Enter the code sent to your phone"),
            ]);
            fields.insert("name".into(), name.into());
            let data = object(vec![
                ("amount", money(rng, 5, 5000)),
                ("currency", (*rng.pick(CURRENCIES)).into()),
                ("reference", rng.hex(10).into()),
                (
                    "nested",
                    object(vec![
                        (
                            "ids",
                            Value::from(vec![rng.between(1, 99), rng.between(100, 999)]),
                        ),
                        ("note", Value::Null),
                    ]),
                ),
            ]);
            fields.insert("data".into(), data);
            let response = if resolved {
                object(vec![("approved", rng.chance(0.85).into())])
            } else {
                Value::Null
            };
            (guidance.to_owned(), response)
        }
    };
    let source = (version == R6 && ctx.late_r6).then(|| match rng.weighted(&[50, 20, 10, 20]) {
        0 => Some("default_execution_agent".to_owned()),
        1 => Some((*rng.pick(REGISTRY)).to_owned()),
        2 => Some("execution_hooks".to_owned()),
        _ => None,
    });
    Clarification {
        id: Some(ClarificationId(PrefixedId::new(Prefix::Clar, rng.uuid()))),
        run_ref: Some(run_ref),
        category,
        response,
        step: if category == Category::Custom && rng.chance(0.3) {
            None
        } else {
            step
        },
        user_guidance: guidance,
        resolved,
        source,
        fields,
        extra: IndexMap::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// Runs
// ---------------------------------------------------------------------------------------------

/// Values at least this long go to agent memory (R2+), like the SDK's default threshold of about
/// 1000 tokens.
const MEMORY_THRESHOLD: usize = 4000;

enum Produced {
    Local(LocalDataValue),
    Memory(AgentMemoryValue),
}

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

fn build_run(
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
    let mut memory: Vec<(String, LocalDataValue)> = Vec::new();
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
        let produced = if version >= R2 && !large && value.len() >= MEMORY_THRESHOLD {
            let reference = AgentMemoryValue {
                output_name: name.clone(),
                plan_run_id: seed.id,
                summary: summary.clone().unwrap_or_default(),
            };
            memory.push((name.clone(), LocalDataValue { value, summary }));
            Produced::Memory(reference)
        } else {
            Produced::Local(LocalDataValue { value, summary })
        };
        step_outputs.push((name.clone(), produced));
    }
    let final_output = match seed.state {
        RunState::COMPLETE => Some(match step_outputs.last() {
            Some((_, Produced::Memory(reference))) if rng.chance(0.3) => {
                Produced::Memory(reference.clone())
            }
            last => {
                let value = match last {
                    Some((_, Produced::Local(local))) if local.value.len() <= 2000 => {
                        local.value.clone()
                    }
                    _ if seed.large && n == 0 => {
                        let target = rng.between(16_000, 64_000);
                        report(&mut rng, &plan.slots, target)
                    }
                    _ => short_text(&mut rng, &plan.slots),
                };
                let summary = match rng.weighted(&[85, 10, 5]) {
                    0 => Some(short_text(&mut rng, &plan.slots)),
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
    };

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

    let plan_run_inputs: IndexMap<String, LocalDataValue> = plan
        .inputs
        .iter()
        .map(|(name, slot)| {
            let value = if rng.chance(0.5) {
                plan.slots.text(*slot).to_owned()
            } else {
                stringify(slot.draw(&mut rng))
            };
            let summary = rng.chance(0.15).then(|| format!("the {}", slot.name()));
            (name.clone(), LocalDataValue { value, summary })
        })
        .collect();

    let end_user_id = match &seed.end_user {
        EndUserRef::None => String::new(),
        EndUserRef::File(i) => users[*i].external_id.clone(),
        EndUserRef::Missing(id) => id.clone(),
    };

    let local_outputs = |outputs: Vec<(String, Produced)>| -> IndexMap<String, LocalDataValue> {
        outputs
            .into_iter()
            .map(|(k, p)| match p {
                Produced::Local(local) => (k, local),
                Produced::Memory(_) => unreachable!("agent memory exists from R2 on"),
            })
            .collect()
    };
    let union = |p: Produced| match p {
        Produced::Local(local) => Output::Local(local),
        Produced::Memory(memory) => Output::AgentMemory(memory),
    };
    let run = match version {
        W1 | R0 | R1 => {
            let outputs = Outputs {
                clarifications,
                step_outputs: local_outputs(step_outputs),
                final_output: final_output.map(|p| match p {
                    Produced::Local(local) => local,
                    Produced::Memory(_) => unreachable!("agent memory exists from R2 on"),
                }),
            };
            if version == W1 {
                LegacyRun::W1(RunW1 {
                    id: Some(seed.id),
                    plan_id: plan.id,
                    current_step_index: index,
                    state: seed.state,
                    execution_context: ExecutionContextW1 {
                        end_user_id: seed.ec_user.clone(),
                        additional_data: additional_data(&mut rng),
                        planner_system_context_extension: extension(&mut rng),
                        agent_system_context_extension: extension(&mut rng),
                    },
                    outputs,
                })
            } else {
                let run = RunR1 {
                    id: Some(seed.id),
                    plan_id: plan.id,
                    current_step_index: index,
                    state: seed.state,
                    execution_context: ExecutionContextR0 {
                        end_user_id: seed.ec_user.clone(),
                        additional_data: additional_data(&mut rng),
                        planning_agent_system_context_extension: extension(&mut rng),
                        execution_agent_system_context_extension: extension(&mut rng),
                    },
                    outputs,
                };
                if version == R0 {
                    LegacyRun::R0(run)
                } else {
                    LegacyRun::R1(run)
                }
            }
        }
        _ => {
            let outputs = Outputs {
                clarifications,
                step_outputs: step_outputs
                    .into_iter()
                    .map(|(k, p)| (k, union(p)))
                    .collect(),
                final_output: final_output.map(union),
            };
            match version {
                R2 => LegacyRun::R2(RunR2 {
                    id: Some(seed.id),
                    plan_id: plan.id,
                    current_step_index: index,
                    state: seed.state,
                    execution_context: ExecutionContextR0 {
                        end_user_id: seed.ec_user.clone(),
                        additional_data: additional_data(&mut rng),
                        planning_agent_system_context_extension: extension(&mut rng),
                        execution_agent_system_context_extension: extension(&mut rng),
                    },
                    outputs,
                }),
                R3 => LegacyRun::R3(RunR3 {
                    id: Some(seed.id),
                    plan_id: plan.id,
                    current_step_index: index,
                    state: seed.state,
                    execution_context: ExecutionContextR3 {
                        end_user_id: seed.ec_user.clone(),
                        additional_data: additional_data(&mut rng),
                    },
                    outputs,
                }),
                R4 => LegacyRun::R4(RunR4 {
                    id: Some(seed.id),
                    plan_id: plan.id,
                    current_step_index: index,
                    state: seed.state,
                    execution_context: ExecutionContextR4 {
                        additional_data: additional_data(&mut rng),
                    },
                    end_user_id,
                    outputs,
                }),
                R5 => LegacyRun::R5(RunR5 {
                    id: Some(seed.id),
                    plan_id: plan.id,
                    current_step_index: index,
                    state: seed.state,
                    execution_context: ExecutionContextR4 {
                        additional_data: additional_data(&mut rng),
                    },
                    end_user_id,
                    outputs,
                    plan_run_inputs,
                }),
                _ => LegacyRun::R6(RunR6 {
                    id: Some(seed.id),
                    plan_id: plan.id,
                    current_step_index: index,
                    state: seed.state,
                    end_user_id,
                    outputs,
                    plan_run_inputs,
                }),
            }
        }
    };

    let mut files = Vec::with_capacity(1 + memory.len());
    files.push(write_new(
        out,
        PathBuf::from(format!("{}.json", seed.id)),
        &to_sdk_json(&run),
        FileKind::Run,
        version,
    )?);
    if !memory.is_empty() {
        let dir = PathBuf::from(seed.id.to_string());
        fs::create_dir(out.join(&dir)).map_err(|e| at(&out.join(&dir), e))?;
        for (name, value) in memory {
            files.push(write_new(
                out,
                dir.join(format!("{name}.json")),
                &to_sdk_json(&value),
                FileKind::AgentMemory,
                version,
            )?);
        }
    }
    Ok(files)
}

// ---------------------------------------------------------------------------------------------
// End users
// ---------------------------------------------------------------------------------------------

fn write_end_user(seed: &UserSeed, out: &Path) -> io::Result<GenFile> {
    let mut rng = Rng::new(seed.seed);
    let user = if seed.external_id == "local" {
        EndUser {
            external_id: seed.external_id.clone(),
            name: String::new(),
            email: String::new(),
            phone_number: String::new(),
            additional_data: IndexMap::new(),
        }
    } else {
        let (name, email) = *rng.pick(PEOPLE);
        let mut data: IndexMap<String, Option<String>> = IndexMap::new();
        if rng.chance(0.6) {
            data.insert(
                "tenant".into(),
                Some((*rng.pick(&["acme", "globex", "initech"])).into()),
            );
        }
        if rng.chance(0.4) {
            data.insert(
                "tier".into(),
                Some((*rng.pick(&["free", "pro", "gold"])).into()),
            );
        }
        if rng.chance(0.2) {
            data.insert(
                "locale".into(),
                Some((*rng.pick(&["pt-PT", "en-GB", "ja-JP", "de-CH"])).into()),
            );
        }
        // `remove_additional_data` sets null from v0.3.5 (R6).
        if seed.version == R6 && rng.chance(0.2) {
            data.insert("previous_plan".into(), None);
        }
        EndUser {
            external_id: seed.external_id.clone(),
            name: if rng.chance(0.8) {
                name.to_owned()
            } else {
                String::new()
            },
            email: if rng.chance(0.7) {
                email.to_owned()
            } else {
                String::new()
            },
            phone_number: if rng.chance(0.3) {
                format!("+44 20 7946 {:04}", rng.below(10_000))
            } else {
                String::new()
            },
            additional_data: data,
        }
    };
    write_new(
        out,
        PathBuf::from(format!("{}.json", seed.external_id)),
        &to_sdk_json(&user),
        FileKind::EndUser,
        seed.version,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_version_4_and_text_is_canonical() {
        let mut rng = Rng::new(7);
        for _ in 0..100 {
            let id = PrefixedId::new(Prefix::Prun, rng.uuid()).to_string();
            let uuid = id.strip_prefix("prun-").unwrap();
            assert_eq!(uuid.len(), 36);
            assert_eq!(&uuid[14..15], "4", "{id}");
            assert!("89ab".contains(&uuid[19..20]), "{id}");
            assert_eq!(uuid, uuid.to_lowercase());
        }
    }

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

    #[test]
    fn templates_fill_slots_and_inputs() {
        let mut rng = Rng::new(3);
        let slots = Slots::draw(&mut rng);
        let city = slots.text(Slot::City).to_owned();
        assert_eq!(
            fill("Weather in {city}", &slots, &[]),
            format!("Weather in {city}")
        );
        let inputs = vec![
            ("$destination".to_owned(), Slot::City),
            ("channel".to_owned(), Slot::Channel),
        ];
        assert_eq!(
            fill(
                "Fly to {city}, post to #{channel} {unknown}",
                &slots,
                &inputs
            ),
            "Fly to $destination, post to #$channel {unknown}"
        );
    }
}
