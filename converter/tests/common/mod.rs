//! Shared helpers of the round-trip tests: indexing a store's documents and checking for one run
//! that `downgrade(upgrade(run))` is the run at R6 but for differences the loss report names.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use planrun_converter::chain::to_r6;
use planrun_converter::diff::diff;
use planrun_converter::downgrade::downgrade;
use planrun_converter::renames::{self, Op};
use planrun_converter::upgrade::{upgrade, Converted, PlanSource, Sources};
use planrun_converter::{EntryKind, LossReport};
use planrun_legacy::{parse, DocKind, EndUser, LegacyDocument, Parsed, Plan};

/// Every document under a directory, parsed, with its plans and end users by id.
pub(crate) struct Store {
    pub runs: Vec<(PathBuf, Parsed)>,
    pub plans: HashMap<String, Plan>,
    pub end_users: HashMap<String, EndUser>,
}

pub(crate) fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            json_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

pub(crate) fn index(dir: &Path) -> Store {
    let mut files = Vec::new();
    json_files(dir, &mut files);
    let mut store = Store {
        runs: Vec::new(),
        plans: HashMap::new(),
        end_users: HashMap::new(),
    };
    for path in files {
        let Ok(parsed) = parse(&std::fs::read(&path).unwrap()) else {
            continue;
        };
        match &parsed.document {
            LegacyDocument::Plan(plan) => {
                if let Some(id) = plan.id {
                    store.plans.insert(id.to_string(), plan.clone());
                }
            }
            LegacyDocument::EndUser(user) => {
                store
                    .end_users
                    .insert(user.external_id.clone(), user.clone());
            }
            _ if parsed.detection.kind == DocKind::Run => store.runs.push((path, parsed)),
            _ => {}
        }
    }
    store
}

/// R6-run pointers as the V2 document spells them.
fn v2_pointer(r6: &str) -> String {
    r6.replacen("/outputs/clarifications", "/clarifications", 1)
        .replacen("/outputs/final_output", "/final_output", 1)
}

/// Whether an entry that announces a change (`moved` and `renamed` keep values as they were)
/// names this R6 pointer or one of its parents.
fn covered(report: &LossReport, r6_pointer: &str) -> bool {
    let from = format!("/run{r6_pointer}");
    let to = v2_pointer(r6_pointer);
    let changes = [
        EntryKind::Defaulted,
        EntryKind::Coerced,
        EntryKind::Dropped,
        EntryKind::Derived,
    ];
    report
        .entries
        .iter()
        .filter(|e| changes.contains(&e.kind))
        .any(|e| {
            e.from.as_deref().is_some_and(|p| from.starts_with(p))
                || e.to.as_deref().is_some_and(|p| to.starts_with(p))
        })
}

/// Whether `path` is the JSON pointer `prefix` or lies under it.
fn within(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// An entry that cites a mapping row of the rename table (its note holds the row's) moves data
/// from within the row's source to within its target, so the table and the reports never drift.
fn entries_stay_within_their_rows(report: &LossReport) -> Result<(), String> {
    for entry in &report.entries {
        for row in renames::TABLE {
            let Op::Mapping { from, to } = row.op else {
                continue;
            };
            if !entry.note.contains(row.note) {
                continue;
            }
            let outside = |at: &Option<String>, prefix: &str| {
                at.as_deref().is_some_and(|p| !within(p, prefix))
            };
            if outside(&entry.from, from) || outside(&entry.to, to) {
                return Err(format!(
                    "entry {:?} {:?} -> {:?} cites row {} ({from} -> {to}) but lies outside it",
                    entry.kind, entry.from, entry.to, row.id
                ));
            }
        }
    }
    Ok(())
}

/// Law 3 for one run of a store (every difference between `downgrade(upgrade(run))` and the run
/// brought to R6 is named by the loss report), and law 2 through the run (the plan comes back
/// exactly): upgrade, check the V2 document reads back, downgrade, compare.
pub(crate) fn check_law3(
    store: &Store,
    parsed: &Parsed,
    config: &std::sync::Arc<planrun_v2::Config>,
) -> Result<Converted, String> {
    let run = parsed.as_run().ok_or("not a run")?;
    let plan = store.plans.get(&run.plan_id().to_string());
    let at_r6 = to_r6(run).map_err(|e| e.to_string())?;
    let end_user = store.end_users.get(&at_r6.run.end_user_id);
    let sources = Sources {
        run: parsed,
        plan: PlanSource::looked_up(plan),
        end_user,
        plan_read: &[],
        end_user_read: &[],
        config,
        agent_memory: None,
    };
    let converted = upgrade(&sources).map_err(|e| e.to_string())?;
    entries_stay_within_their_rows(&converted.report)?;
    let text = serde_json::to_string_pretty(&converted.run).unwrap();
    let reread: planrun_v2::PlanRunV2 =
        serde_json::from_str(&text).map_err(|e| format!("V2 does not read back: {e}"))?;
    if reread != converted.run {
        return Err("V2 document changes on a second read".into());
    }
    let back = downgrade(&converted.run, true).map_err(|e| e.to_string())?;
    let mut report = converted.report.clone();
    report.extend(back.report.clone());
    let expected = serde_json::to_value(&at_r6.run).unwrap();
    let actual = serde_json::to_value(&back.run).unwrap();
    let unreported: Vec<String> = diff(&expected, &actual)
        .iter()
        .map(|d| d.pointer().to_owned())
        .filter(|p| !covered(&report, p))
        .collect();
    if !unreported.is_empty() {
        return Err(format!(
            "differences not in the loss report: {unreported:?}\n{report}"
        ));
    }
    match (plan, &back.plan) {
        (Some(plan), Some(back_plan)) if back_plan != plan => {
            return Err(format!(
                "the plan does not come back exactly through the run (law 2): {:?}",
                diff(
                    &serde_json::to_value(plan).unwrap(),
                    &serde_json::to_value(back_plan).unwrap()
                )
            ));
        }
        (Some(_), None) => return Err("a plan that was read comes back as none".into()),
        (None, Some(_)) => return Err("a plan never saved comes back as a file".into()),
        _ => {}
    }
    Ok(converted)
}
