//! The final step: an R6 run, its Plan, its EndUser and a Config become one `PlanRunV2`.
//! Every datum lands in a typed V2 field or in the `legacy` residue, and the report says which.

use std::sync::{Arc, OnceLock};

use indexmap::IndexMap;
use planrun_wire::join;
use serde_json::{Map, Value};

use planrun_legacy::{Category, Clarification, Output, Parsed, Plan, RunId, RunR6, StepKey};
use planrun_v2::{LegacyResidue, PlanRunV2, PlanV2};
use planrun_wire::json::escape_pointer_token;

use crate::chain::{to_r6, AtR6, ChainError};
use crate::ids::stable_id;
use crate::plan::{
    absent, plan_from_legacy, rebuilt_plan, rebuilt_plan_entries, PlanConversion, REBUILT_PLAN_KEY,
};
use crate::renames;
use crate::report::{EntryKind, LossReport};

/// Says whether an agent-memory file exists, given the run id and the output name.
pub type MemoryCheck<'a> = &'a dyn Fn(&str, &str) -> bool;

/// Everything one run's conversion reads; the store layer finds the files.
pub struct Sources<'a> {
    /// The parsed legacy run.
    pub run: &'a Parsed,
    /// Its plan (`plan-<id>.json`), as the store gave it.
    pub plan: PlanSource<'a>,
    /// Its end user (`<external_id>.json`, R4+ stores), if found.
    pub end_user: Option<&'a planrun_legacy::EndUser>,
    /// What reading the plan file changed (its parse's normalisations), reported under `/plan`:
    /// a key the SDK ignores is dropped there too, and must not vanish silently.
    pub plan_read: &'a [planrun_legacy::Normalization],
    /// What reading the end-user file changed, reported under `/end_user`.
    pub end_user_read: &'a [planrun_legacy::Normalization],
    /// The resolved configuration (see [`resolve_config`]), shared by the runs converted with it.
    pub config: &'a Arc<planrun_v2::Config>,
    /// Whether an agent-memory file exists (`<prun-id>/<output_name>.json`); `None` when there is
    /// no store to look in (a single document converted on its own).
    pub agent_memory: Option<MemoryCheck<'a>>,
}

/// A run's plan, as its store gave it.
#[derive(Debug, Clone, Copy)]
pub enum PlanSource<'a> {
    /// The plan file, read.
    Read(&'a planrun_legacy::Plan),
    /// The store has no file of the run's `plan_id`: the SDK before v0.3.0 saved the run of a
    /// hand-built plan but not the plan. The plan is rebuilt from the run
    /// ([`crate::plan::rebuilt_plan`]).
    NeverSaved,
    /// No store was searched (a run converted on its own): the run is blocked on its plan.
    NotSearched,
}

impl<'a> PlanSource<'a> {
    /// A plan looked up in a store: `None` when the store has no file of that id.
    pub fn looked_up(plan: Option<&'a planrun_legacy::Plan>) -> Self {
        plan.map_or(PlanSource::NeverSaved, PlanSource::Read)
    }

    /// The plan file, when one was read.
    pub fn read(self) -> Option<&'a planrun_legacy::Plan> {
        match self {
            PlanSource::Read(plan) => Some(plan),
            PlanSource::NeverSaved | PlanSource::NotSearched => None,
        }
    }
}

/// A finished conversion.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    /// The V2 document.
    pub run: PlanRunV2,
    /// Everything the conversion did to the source.
    pub report: LossReport,
}

/// What a blocked run is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// Its plan file.
    Plan,
    /// An agent-memory file one of its outputs refers to.
    AgentMemory,
}

impl Missing {
    /// Its name in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Missing::Plan => "plan",
            Missing::AgentMemory => "agent-memory file",
        }
    }
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a run was not converted.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// A referenced file is missing.
    #[error("blocked: {what} {missing} not found")]
    Blocked {
        /// What is missing.
        what: Missing,
        /// The file name or relative path that was looked for.
        missing: String,
    },
    /// The inputs are valid one by one but do not fit together.
    #[error("rejected: {0}")]
    Rejected(String),
    /// A bug in the chain; never expected.
    #[error(transparent)]
    Chain(#[from] ChainError),
}

/// The run's Config: the user's file laid over the SDK's defaults, every secret written masked.
/// The report has one entry for the config as a whole (how many keys the file set), one per key
/// the file has that the SDK's Config does not (dropped), and one per secret the file held in
/// clear (redacted).
pub fn resolve_config(
    user: Option<&planrun_legacy::Config>,
) -> Result<(Arc<planrun_v2::Config>, LossReport), ConvertError> {
    let note = renames::V2_CONFIG.note;
    let mut report = LossReport::default();
    let mut base =
        serde_json::to_value(planrun_v2::Config::sdk_defaults()).expect("config is JSON");
    match user {
        None => report.push(
            EntryKind::Defaulted,
            None,
            Some("/config".into()),
            "no --config given: the SDK's defaults alone (no provider, no models)",
            None,
        ),
        Some(user) => {
            let overlay = serde_json::to_value(user).expect("config is JSON");
            let known = base.as_object().map_or(0, Map::len);
            let mut set = 0;
            for (key, value) in overlay.as_object().into_iter().flatten() {
                match (base.get_mut(key), value) {
                    (Some(Value::Object(models)), Value::Object(given)) => {
                        for (k, v) in given {
                            models.insert(k.clone(), v.clone());
                        }
                    }
                    (Some(slot), _) => *slot = value.clone(),
                    (None, _) => {
                        report.dropped(
                            format!("/config/{}", escape_pointer_token(key)),
                            "not a field of the current SDK's Config",
                            value.clone(),
                        );
                        continue;
                    }
                }
                set += 1;
            }
            let keys = if set == 1 { "key" } else { "keys" };
            report.push(
                EntryKind::Derived,
                Some("/config".into()),
                Some("/config".into()),
                format!("{note}; the file sets {set} of the Config's {known} {keys}"),
                None,
            );
            for secret in user.clear_secrets() {
                let pointer = format!("/config/{secret}");
                report.push(
                    EntryKind::Coerced,
                    Some(pointer.clone()),
                    Some(pointer),
                    "secret redacted: this toolkit never writes one in clear",
                    None,
                );
            }
        }
    }
    let config =
        serde_json::from_value(base).map_err(|e| ConvertError::Rejected(format!("config: {e}")))?;
    Ok((Arc::new(config), report))
}

/// Converts one legacy run (any version) to `PlanRunV2`.
pub fn upgrade(src: &Sources) -> Result<Converted, ConvertError> {
    let legacy_run = src.run.as_run().ok_or_else(|| {
        ConvertError::Rejected(format!(
            "not a run but a {}",
            src.run.detection.kind.as_str()
        ))
    })?;
    upgrade_at(src, to_r6(legacy_run)?)
}

/// [`upgrade`] for a caller that has already brought the run to R6 (with [`to_r6`] on
/// `src.run`), e.g. to learn its end user before reading the end-user file.
pub fn upgrade_at(src: &Sources, at: AtR6) -> Result<Converted, ConvertError> {
    convert(src, at, None).map(|(converted, _)| converted)
}

/// A conversion made with a plan converted beforehand, whose report leaves out the plan
/// conversion's own entries (see [`upgrade_sharing_plan`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SharingPlan {
    /// The conversion; its report lacks the plan conversion's entries.
    pub converted: Converted,
    /// Where in `converted.report.entries` the plan conversion's entries belong.
    pub plan_entries_at: usize,
}

/// [`upgrade_at`] for a caller that keeps plans converted: `converted` is
/// `plan_from_legacy(src.plan)` (its `report` is not read), which a batch makes once for all
/// the runs of a plan. The run's report holds every entry but the plan conversion's, which
/// are the same for every run of the plan: the caller keeps them once, not once per run.
pub fn upgrade_sharing_plan(
    src: &Sources,
    at: AtR6,
    converted: &PlanConversion,
) -> Result<SharingPlan, ConvertError> {
    let (converted, at) = convert(src, at, Some(converted))?;
    Ok(SharingPlan {
        converted,
        plan_entries_at: at.expect("a shared plan conversion has its place"),
    })
}

/// The conversion; with a plan converted beforehand, its report leaves out that conversion's
/// entries and the index says where they belong.
fn convert(
    src: &Sources,
    at: AtR6,
    converted: Option<&PlanConversion>,
) -> Result<(Converted, Option<usize>), ConvertError> {
    let mut report = normalization_entries("/run", &src.run.normalizations);
    report.extend(normalization_entries("/plan", src.plan_read));
    report.extend(normalization_entries("/end_user", src.end_user_read));
    report.extend(at.report);
    let mut residue = at.residue;
    let run = at.run;
    if src.run.step_key == StepKey::Id {
        cite(
            &mut report,
            EntryKind::Renamed,
            &renames::V2_CURRENT_STEP_ID,
        );
    }

    let rebuilt;
    let legacy_plan = match src.plan {
        PlanSource::Read(plan) => plan,
        PlanSource::NeverSaved => {
            rebuilt = rebuilt_plan(&run);
            &rebuilt
        }
        PlanSource::NotSearched => {
            return Err(ConvertError::Blocked {
                what: Missing::Plan,
                missing: format!("{}.json", run.plan_id),
            })
        }
    };
    let plan_found = matches!(src.plan, PlanSource::Read(_));
    if let Some(id) = legacy_plan.id {
        if id != run.plan_id {
            return Err(ConvertError::Rejected(format!(
                "the plan file holds {id}, but the run executes {}",
                run.plan_id
            )));
        }
    }
    let (plan, plan_entries_at) = embed_plan(
        legacy_plan,
        plan_found,
        converted,
        &run,
        &mut report,
        &mut residue,
    );

    check_agent_memory(src, &run)?;

    let end_user = end_user(src.end_user, &run.end_user_id, &residue, &mut report)?;
    let step_output_values =
        step_output_values(run.outputs.step_outputs, legacy_plan, &plan, &mut report);
    let final_output = run.outputs.final_output.map(|o| {
        cite(&mut report, EntryKind::Moved, &renames::V2_FINAL_OUTPUT);
        output(o)
    });
    let run_id = run_id(src, run.id.as_ref(), &mut report);
    let clarifications = run
        .outputs
        .clarifications
        .iter()
        .enumerate()
        .map(|(i, c)| clarification(i, c, &mut report))
        .collect::<Result<Vec<_>, _>>()?;
    if !clarifications.is_empty() {
        cite(&mut report, EntryKind::Moved, &renames::V2_CLARIFICATIONS);
    }
    let plan_run_inputs = plan_run_inputs(run.plan_run_inputs, &mut report);
    let v2 = PlanRunV2 {
        id: run_id,
        state: state(run.state),
        current_step_index: run.current_step_index,
        plan,
        end_user,
        step_output_values,
        final_output,
        plan_run_inputs,
        config: Arc::clone(src.config),
        clarifications,
        legacy: (!residue.is_empty()).then(|| LegacyResidue {
            source_version: at.source_version.as_str().to_owned(),
            entries: residue,
        }),
    };
    Ok((Converted { run: v2, report }, plan_entries_at))
}

/// The run's plan in V2 (its conversion shared when given), and where in the report the plan's
/// shared entries go; a plan rebuilt from the run is reported as such.
fn embed_plan(
    legacy_plan: &Plan,
    plan_found: bool,
    converted: Option<&PlanConversion>,
    run: &RunR6,
    report: &mut LossReport,
    residue: &mut IndexMap<String, Value>,
) -> (Arc<PlanV2>, Option<usize>) {
    let (mut plan, plan_entries_at) = if !plan_found {
        let converted = plan_from_legacy(legacy_plan);
        rebuilt_plan_entries(run, report);
        residue.insert(REBUILT_PLAN_KEY.to_owned(), absent());
        (converted.plan, None)
    } else if let Some(converted) = converted {
        debug_assert!(
            {
                let made = plan_from_legacy(legacy_plan);
                made.plan == converted.plan && made.residue == converted.residue
            },
            "not this plan's conversion"
        );
        residue.extend(converted.residue.clone());
        (Arc::clone(&converted.plan), Some(report.entries.len()))
    } else {
        let converted = plan_from_legacy(legacy_plan);
        report.extend(converted.report);
        residue.extend(converted.residue);
        (converted.plan, None)
    };
    if legacy_plan.id.is_none() {
        Arc::make_mut(&mut plan).id = run.plan_id.to_string();
        report.push(
            EntryKind::Derived,
            Some("/run/plan_id".into()),
            Some("/plan/id".into()),
            "the plan file has no id; the run's plan_id names it",
            None,
        );
    }
    report.push(
        EntryKind::Moved,
        Some("/run/plan_id".into()),
        Some("/plan/id".into()),
        renames::V2_PLAN_ID.note,
        None,
    );
    (plan, plan_entries_at)
}

/// Refuses a run whose agent-memory file is missing from the store (when one is searched).
fn check_agent_memory(src: &Sources, run: &RunR6) -> Result<(), ConvertError> {
    let Some(exists) = src.agent_memory else {
        return Ok(());
    };
    let outputs = run
        .outputs
        .step_outputs
        .values()
        .chain(run.outputs.final_output.as_ref());
    for output in outputs {
        if let Output::AgentMemory(memory) = output {
            if !exists(&memory.plan_run_id.to_string(), &memory.output_name) {
                return Err(ConvertError::Blocked {
                    what: Missing::AgentMemory,
                    missing: format!("{}/{}.json", memory.plan_run_id, memory.output_name),
                });
            }
        }
    }
    Ok(())
}

/// The run's id; a run file without one gets an id derived from its content.
fn run_id(src: &Sources, id: Option<&RunId>, report: &mut LossReport) -> String {
    if let Some(id) = id {
        return id.to_string();
    }
    let id = stable_id("prun", &src.run.to_sdk_json());
    report.defaulted(
        "/id",
        "the run file has no id; one is derived from its content",
        Value::String(id.clone()),
    );
    id
}

/// The run's inputs, their values kept as the strings the SDK stored.
fn plan_run_inputs(
    inputs: IndexMap<String, planrun_legacy::LocalDataValue>,
    report: &mut LossReport,
) -> IndexMap<String, planrun_v2::LocalDataValue> {
    inputs
        .into_iter()
        .map(|(name, value)| {
            let row = &renames::V2_PLAN_RUN_INPUTS;
            let under = join!("/", escape_pointer_token(&name));
            report.push_mapping(EntryKind::Moved, row, &under, row.note);
            (
                name,
                planrun_v2::LocalDataValue {
                    value: Value::String(value.value),
                    summary: value.summary,
                },
            )
        })
        .collect()
}

fn state(state: planrun_legacy::RunState) -> planrun_v2::PlanRunState {
    use planrun_legacy::RunState as L;
    use planrun_v2::PlanRunState as V;
    match state {
        L::NOT_STARTED => V::NotStarted,
        L::IN_PROGRESS => V::InProgress,
        L::NEED_CLARIFICATION => V::NeedClarification,
        L::READY_TO_RESUME => V::ReadyToResume,
        L::COMPLETE => V::Complete,
        L::FAILED => V::Failed,
    }
}

/// A legacy output as a V2 output; the stringified value stays a string (nothing is decoded).
pub fn output(output: Output) -> planrun_v2::Output {
    match output {
        Output::Local(local) => planrun_v2::Output::Local {
            value: Value::String(local.value),
            summary: local.summary,
        },
        Output::AgentMemory(memory) => planrun_v2::Output::AgentMemory {
            plan_run_id: memory.plan_run_id.to_string(),
            output_name: memory.output_name,
            summary: memory.summary,
        },
    }
}

/// The stored EndUser, else a default one for the run's `end_user_id`; the old context's
/// `additional_data` is merged under it, the stored values winning.
fn end_user(
    stored: Option<&planrun_legacy::EndUser>,
    external_id: &str,
    residue: &IndexMap<String, Value>,
    report: &mut LossReport,
) -> Result<planrun_v2::EndUser, ConvertError> {
    let mut user = match stored {
        Some(stored) if stored.external_id != external_id => {
            return Err(ConvertError::Rejected(format!(
                "the end-user file holds {:?}, but the run names {external_id:?}",
                stored.external_id
            )))
        }
        Some(stored) => {
            let row = &renames::V2_END_USER_ID;
            report.push_mapping(EntryKind::Moved, row, "", row.note);
            planrun_v2::EndUser {
                external_id: stored.external_id.clone(),
                name: stored.name.clone(),
                email: stored.email.clone(),
                phone_number: stored.phone_number.clone(),
                additional_data: stored.additional_data.clone(),
            }
        }
        None => {
            static NOTE: OnceLock<String> = OnceLock::new();
            let row = &renames::V2_END_USER_ID;
            let note = NOTE.get_or_init(|| format!("no end-user file: {}", row.note));
            report.push_mapping(EntryKind::Defaulted, row, "", note);
            planrun_v2::EndUser::bare(external_id)
        }
    };
    let context_data = residue
        .get("/run/execution_context")
        .and_then(|ec| ec.get("additional_data"))
        .and_then(Value::as_object);
    for (key, value) in context_data.into_iter().flatten() {
        let under = join!("/", escape_pointer_token(key));
        if user.additional_data.contains_key(key) {
            let from = Some(join!("/run/execution_context/additional_data", under));
            report.push(EntryKind::Moved, from, Some(join!("/legacy/entries/", escape_pointer_token("/run/execution_context"))), "the stored end user has its own value for this key; the context's stays in the residue", None);
        } else {
            user.additional_data
                .insert(key.clone(), value.as_str().map(str::to_owned));
            let row = &renames::V2_ADDITIONAL_DATA;
            report.push_mapping(EntryKind::Derived, row, &under, row.note);
        }
    }
    Ok(user)
}

/// Step outputs matched to plan steps: the first step whose `output` is the key, else `N` from a
/// `$step_N_output` key, else unmatched (kept with its key, reported).
fn step_output_values(
    outputs: IndexMap<String, Output>,
    legacy_plan: &planrun_legacy::Plan,
    plan: &planrun_v2::PlanV2,
    report: &mut LossReport,
) -> Vec<planrun_v2::StepOutputValue> {
    let note = renames::V2_STEP_OUTPUTS.note;
    outputs
        .into_iter()
        .enumerate()
        .map(|(i, (key, value))| {
            let from = join!("/run/outputs/step_outputs/", escape_pointer_token(&key));
            let step_num = legacy_plan
                .steps
                .iter()
                .position(|s| s.output == key)
                .or_else(|| positional(&key).filter(|n| *n < plan.steps.len()));
            report.push(EntryKind::Moved, Some(from.clone()), Some(join!("/step_output_values/", i, "/output")), note, None);
            match step_num {
                Some(n) => report.push(EntryKind::Derived, Some(from), Some(join!("/step_output_values/", i, "/step_num")), join!("produced by plan step ", n), None),
                None => report.push(EntryKind::Derived, Some(from), Some(join!("/step_output_values/", i, "/output_name")), "no plan step produces this output: step_num and step_name are null, the key is kept as output_name", None),
            }
            planrun_v2::StepOutputValue {
                step_num: step_num.map(|n| n as i64),
                step_name: step_num.map(|n| plan.steps[n].step_name().to_owned()),
                output_name: key,
                description: String::new(),
                output: output(value),
            }
        })
        .collect()
}

fn positional(key: &str) -> Option<usize> {
    key.strip_prefix("$step_")?
        .strip_suffix("_output")?
        .parse()
        .ok()
}

/// A legacy clarification as V2: category, fields and unknown keys kept as they are (V2 has an
/// `Argument` variant for the W1 category); keys a release did not write become null, each
/// reported.
fn clarification(
    index: usize,
    clar: &Clarification,
    report: &mut LossReport,
) -> Result<planrun_v2::Clarification, ConvertError> {
    let at = join!("/run/outputs/clarifications/", index);
    let to = join!("/clarifications/", index);
    let id = if let Some(id) = clar.id {
        id.to_string()
    } else {
        let id = stable_id(
            "clar",
            &join!(at, serde_json::to_string(clar).expect("JSON")),
        );
        report.defaulted(
            join!(to, "/id"),
            "the clarification has no id; one is derived from its content",
            Value::String(id.clone()),
        );
        id
    };
    let plan_run_id = clar.run_ref.and_then(|(_, id)| id).map(|id| id.to_string());
    if clar.run_ref.is_none() {
        report.defaulted(
            join!(to, "/plan_run_id"),
            "no run reference in the source",
            Value::Null,
        );
    }
    let mut absent = Vec::new();
    if clar.source.is_none() {
        absent.push("source");
    }
    let v2_keys: &[&str] = match clar.category {
        Category::Argument => &["argument_name"],
        other => other.subtype_keys(),
    };
    absent.extend(
        v2_keys
            .iter()
            .filter(|key| !clar.fields.contains_key(**key)),
    );
    for key in absent {
        report.defaulted(
            join!(to, "/", key),
            "a key this release of the SDK did not write",
            Value::Null,
        );
    }
    if !clar.extra.is_empty() {
        report.push(
            EntryKind::Moved,
            Some(at.clone()),
            Some(join!(to, "/extra")),
            "keys the SDK's clarification models ignore, kept",
            None,
        );
    }
    typed_clarification(clar, id, plan_run_id)
        .map_err(|e| ConvertError::Rejected(format!("{at}: {e}")))
}

/// The V2 clarification of `clar`, with its id and run reference as V2 writes them: the
/// category's keys read as the V2 reader reads them (`null` or absent is none), keys a release
/// did not write left out, unknown keys in `extra`.
fn typed_clarification(
    clar: &Clarification,
    id: String,
    plan_run_id: Option<String>,
) -> Result<planrun_v2::Clarification, String> {
    use planrun_v2::Clarification as V;
    fn field<T: serde::de::DeserializeOwned>(
        clar: &Clarification,
        key: &str,
    ) -> Result<Option<T>, String> {
        match clar.fields.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => T::deserialize(value).map(Some).map_err(|e| e.to_string()),
        }
    }
    let response = clar.response.clone();
    let step = clar.step;
    let user_guidance = clar.user_guidance.clone();
    let resolved = clar.resolved;
    let source = clar.source.clone().flatten();
    let extra = clar.extra.clone();
    // Every variant has the common fields; each adds its category's own keys.
    macro_rules! variant {
        ($name:ident $(, $key:ident)*) => {
            V::$name {
                id,
                plan_run_id,
                response,
                step,
                user_guidance,
                resolved,
                source,
                $($key: field(clar, stringify!($key))?,)*
                extra,
            }
        };
    }
    Ok(match clar.category {
        Category::Argument => variant!(Argument, argument_name),
        Category::Action => variant!(Action, action_url, require_confirmation),
        Category::Input => variant!(Input, argument_name),
        Category::MultipleChoice => variant!(MultipleChoice, argument_name, options),
        Category::ValueConfirmation => variant!(ValueConfirmation, argument_name),
        Category::UserVerification => variant!(UserVerification),
        Category::Custom => variant!(Custom, name, data),
    })
}

/// The run state, unchanged across versions.
pub fn legacy_state(state: planrun_v2::PlanRunState) -> planrun_legacy::RunState {
    use planrun_legacy::RunState as L;
    use planrun_v2::PlanRunState as V;
    match state {
        V::NotStarted => L::NOT_STARTED,
        V::InProgress => L::IN_PROGRESS,
        V::NeedClarification => L::NEED_CLARIFICATION,
        V::ReadyToResume => L::READY_TO_RESUME,
        V::Complete => L::COMPLETE,
        V::Failed => L::FAILED,
    }
}

/// What reading a file already changed (a loose spelling written canonically, a default filled
/// in, an ignored key dropped), as report entries against the source document `doc` (`/run`,
/// `/plan`, `/end_user`).
fn normalization_entries(
    doc: &str,
    normalizations: &[planrun_legacy::Normalization],
) -> LossReport {
    use planrun_legacy::Normalization as N;
    let mut report = LossReport::default();
    let note = "as the SDK's own loader reads it";
    for n in normalizations {
        match n {
            N::Coerced { pointer, from, .. } => {
                let at = join!(doc, pointer);
                report.push(
                    EntryKind::Coerced,
                    Some(at.clone()),
                    Some(at),
                    join!("read leniently and written canonically, ", note),
                    Some(from.clone()),
                );
            }
            N::Defaulted { pointer, value } => {
                report.defaulted(
                    join!(doc, pointer),
                    join!("absent in the file; the SDK's default, ", note),
                    value.clone(),
                );
            }
            N::Dropped { pointer, value } => {
                report.dropped(
                    join!(doc, pointer),
                    join!("a key the SDK's model ignores, ", note),
                    value.clone(),
                );
            }
            N::Reformatted => {}
        }
    }
    report
}

/// Reports what a mapping row of the rename table says of the run, at the row's own paths.
fn cite(report: &mut LossReport, kind: EntryKind, row: &'static renames::Row) {
    report.push_mapping(kind, row, "", row.note);
}

#[cfg(test)]
mod tests {
    use planrun_legacy::strategies::{clarification, clarification_parts, json, run_id};
    use planrun_legacy::Version;
    use proptest::prelude::*;
    use serde_json::{Map, Value};

    use super::typed_clarification;
    use planrun_legacy::{Category, Clarification};

    /// The reference the typed builder stands in for: the clarification as a JSON object, read
    /// by the V2 reader.
    fn through_value(
        clar: &Clarification,
        id: String,
        plan_run_id: Option<String>,
    ) -> Result<planrun_v2::Clarification, String> {
        let mut obj = Map::new();
        obj.insert("category".into(), clar.category.as_str().into());
        obj.insert("id".into(), id.into());
        obj.insert(
            "plan_run_id".into(),
            plan_run_id.map_or(Value::Null, Value::String),
        );
        obj.insert("response".into(), clar.response.clone());
        obj.insert("step".into(), clar.step.map_or(Value::Null, Value::from));
        obj.insert("user_guidance".into(), clar.user_guidance.clone().into());
        obj.insert("resolved".into(), clar.resolved.into());
        let source = clar.source.clone().flatten();
        obj.insert("source".into(), source.map_or(Value::Null, Value::String));
        let keys: &[&str] = match clar.category {
            Category::Argument => &["argument_name"],
            other => other.subtype_keys(),
        };
        for key in keys {
            let value = clar.fields.get(*key).cloned().unwrap_or(Value::Null);
            obj.insert((*key).into(), value);
        }
        let extra = clar.extra.iter().map(|(k, v)| (k.clone(), v.clone()));
        obj.insert("extra".into(), Value::Object(extra.collect()));
        serde_json::from_value(Value::Object(obj)).map_err(|e| e.to_string())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Every clarification the SDK of any version writes, and the same with one category
        /// key holding any JSON value, gets the reference's clarification or its refusal.
        #[test]
        fn the_typed_clarification_is_the_one_read_through_a_value(
            (version, parts) in proptest::sample::select(Version::ALL.to_vec())
                .prop_flat_map(|v| (Just(v), clarification_parts(v))),
            uuid in any::<u128>(),
            odd in proptest::option::of(json()),
        ) {
            let run = run_id(version, uuid);
            let mut clar = clarification(version, run, parts);
            if let (Some(value), Some(key)) = (odd, clar.fields.keys().next().cloned()) {
                clar.fields.insert(key, value);
            }
            let id = "clar-00000000-0000-4000-8000-000000000000".to_owned();
            let plan_run_id = Some(run.to_string());
            let typed = typed_clarification(&clar, id.clone(), plan_run_id.clone());
            let reference = through_value(&clar, id, plan_run_id);
            match (&typed, &reference) {
                (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
                // Both refuse; the wording differs where the reference's is an artefact of
                // arbitrary-precision numbers read from text ("invalid type: map" for a number).
                (Err(_), Err(_)) => {}
                _ => prop_assert!(false, "typed {typed:?}, reference {reference:?}"),
            }
        }
    }
}
