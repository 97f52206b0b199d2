//! Many downgraded runs as one store the SDK at HEAD loads: each run's own files, and each
//! shared file (a plan several runs execute, an end user several runs belong to) written once,
//! by a rule that does not depend on the order the runs were converted in. What a shared file
//! or the HEAD format cannot hold for a run is kept in that run's residue, which the store keeps
//! beside the SDK's files (the SDK never reads it), and each such value is named in the report.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use planrun_legacy::json::to_sdk_json;

use crate::downgrade::Downgraded;
use crate::report::EntryKind;

/// Where a store keeps the residue of run `id`, relative to its root.
pub fn residue_path(id: &str) -> String {
    format!(".planrun/residue/{id}.json")
}

/// A shared file that two runs would write differently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conflict {
    /// The file, relative to the store.
    pub file: String,
    /// The run whose version was written: the one whose id sorts first.
    pub written_for: String,
    /// The run whose version differs; it is kept in this run's residue.
    pub run: String,
    /// What differs, in words.
    pub what: String,
}

/// The files of a HEAD store.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HeadStore {
    /// File name relative to the store → its text, as the SDK at HEAD writes it (residue files
    /// included, under `.planrun/residue/`).
    pub files: BTreeMap<String, String>,
    /// The shared files written differently by different runs.
    pub conflicts: Vec<Conflict>,
}

/// Assembles the HEAD store of `runs` (each a run id with its downgrade; the reports are
/// updated to name the residue). Shared files are decided by run id, in byte order:
/// * a plan is written as the first run's; a run whose plan differs keeps its own in its residue;
/// * an end user is the first run's, with the `additional_data` keys of every run that it lacks
///   added (the first value of a key wins); a run whose end user differs from the written one
///   keeps its own in its residue;
/// * every value a downgrade had to drop goes to its run's residue instead, so nothing is lost.
pub fn assemble(runs: &mut [(String, Downgraded)]) -> HeadStore {
    runs.sort_by(|a, b| a.0.cmp(&b.0));
    let mut store = HeadStore::default();
    let mut plans: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut users: BTreeMap<String, (String, planrun_legacy::EndUser)> = BTreeMap::new();
    for (id, down) in runs.iter() {
        let plan_file = format!("{}.json", down.run.plan_id);
        let plan_text = to_sdk_json(&down.plan);
        plans
            .entry(plan_file)
            .or_insert_with(|| (id.clone(), plan_text));
        let user_file = format!("{}.json", down.end_user.external_id);
        let (_, merged) = users
            .entry(user_file)
            .or_insert_with(|| (id.clone(), down.end_user.clone()));
        for (key, value) in &down.end_user.additional_data {
            merged
                .additional_data
                .entry(key.clone())
                .or_insert_with(|| value.clone());
        }
    }
    for (id, down) in runs.iter_mut() {
        let mut residue = Map::new();
        let plan_file = format!("{}.json", down.run.plan_id);
        let (plan_owner, plan_text) = &plans[&plan_file];
        if *plan_text != to_sdk_json(&down.plan) {
            store.conflicts.push(Conflict {
                file: plan_file.clone(),
                written_for: plan_owner.clone(),
                run: id.clone(),
                what: "the run's plan differs from the one written".to_owned(),
            });
            residue.insert(
                "plan".to_owned(),
                serde_json::to_value(&down.plan).expect("plans are JSON"),
            );
        }
        let user_file = format!("{}.json", down.end_user.external_id);
        let (user_owner, merged) = &users[&user_file];
        if *merged != down.end_user {
            if to_sdk_json(&stripped(merged, &down.end_user)) != to_sdk_json(&down.end_user) {
                store.conflicts.push(Conflict {
                    file: user_file.clone(),
                    written_for: user_owner.clone(),
                    run: id.clone(),
                    what: "the run's end user disagrees with the one written".to_owned(),
                });
            }
            residue.insert(
                "end_user".to_owned(),
                serde_json::to_value(&down.end_user).expect("end users are JSON"),
            );
        }
        let dropped = keep_dropped(id, down);
        if !dropped.is_empty() {
            residue.insert("dropped".to_owned(), Value::Object(dropped));
        }
        store
            .files
            .insert(format!("{id}.json"), to_sdk_json(&down.run));
        if !residue.is_empty() {
            store
                .files
                .insert(residue_path(id), to_sdk_json(&Value::Object(residue)));
        }
    }
    for (file, (_, text)) in plans {
        store.files.insert(file, text);
    }
    for (file, (_, user)) in users {
        store.files.insert(file, to_sdk_json(&user));
    }
    store
}

/// Takes every value the downgrade of run `id` had to drop, by the pointer it had, and turns
/// its report entry into a move to the run's residue ([`residue_path`]).
pub fn keep_dropped(id: &str, down: &mut Downgraded) -> Map<String, Value> {
    let mut dropped = Map::new();
    for entry in &mut down.report.entries {
        if entry.kind == EntryKind::Dropped {
            if let (Some(from), Some(value)) = (&entry.from, entry.value.take()) {
                dropped.insert(from.clone(), value);
                entry.kind = EntryKind::Moved;
                entry.to = Some(residue_path(id));
                entry.note = format!("{}; kept in the store's residue", entry.note);
            }
        }
    }
    dropped
}

/// `merged` with only the `additional_data` keys `own` has: whether `own` merely lacks keys
/// other runs added (no conflict) or disagrees on one (a conflict).
fn stripped(
    merged: &planrun_legacy::EndUser,
    own: &planrun_legacy::EndUser,
) -> planrun_legacy::EndUser {
    let mut user = merged.clone();
    user.additional_data
        .retain(|key, _| own.additional_data.contains_key(key));
    user
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::LossReport;

    const PLAN: &str = r#"{"id": "plan-5ccec58f-0e70-4378-a129-7842bc337b8d", "plan_context": {"query": "q", "tool_ids": []}, "steps": [], "plan_inputs": []}"#;

    fn down(id: &str, data: &[(&str, &str)], dropped: bool) -> (String, Downgraded) {
        let run = format!(
            r#"{{"id": "{id}", "plan_id": "plan-5ccec58f-0e70-4378-a129-7842bc337b8d", "current_step_index": 0, "state": "COMPLETE", "end_user_id": "ada", "outputs": {{"clarifications": [], "step_outputs": {{}}, "final_output": null}}, "plan_run_inputs": {{}}}}"#
        );
        let data: Map<String, Value> = data
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
            .collect();
        let user = serde_json::json!({"external_id": "ada", "name": "Ada", "email": "", "phone_number": "", "additional_data": data});
        let mut report = LossReport::default();
        if dropped {
            report.push(
                EntryKind::Dropped,
                Some("/legacy/entries/~1run~1execution_context".to_owned()),
                None,
                "no place in R6",
                Some(serde_json::json!({"additional_data": {}})),
            );
        }
        let down = Downgraded {
            run: serde_json::from_str(&run).unwrap(),
            plan: serde_json::from_str(PLAN).unwrap(),
            end_user: serde_json::from_value(user).unwrap(),
            report,
        };
        (id.to_owned(), down)
    }

    const A: &str = "prun-0a6f3c1e-2b4d-4e8f-9a0b-1c2d3e4f5a60";
    const B: &str = "prun-1b7a4d2f-3c5e-4f90-8b1c-2d3e4f5a6b71";

    #[test]
    fn shared_files_are_written_once_whatever_the_order_of_the_runs() {
        let mut runs = vec![
            down(B, &[("tier", "gold"), ("team", "b")], false),
            down(A, &[("tier", "free")], false),
        ];
        let mut reversed = runs.clone();
        reversed.reverse();
        let store = assemble(&mut runs);
        assert_eq!(store, assemble(&mut reversed));
        let user: Value = serde_json::from_str(&store.files["ada.json"]).unwrap();
        // A sorts first: its value of `tier` wins; B's extra key is added.
        assert_eq!(
            user["additional_data"],
            serde_json::json!({"tier": "free", "team": "b"})
        );
        assert_eq!(store.conflicts.len(), 1, "{:?}", store.conflicts);
        assert_eq!(
            (
                store.conflicts[0].run.as_str(),
                store.conflicts[0].written_for.as_str()
            ),
            (B, A)
        );
        // Both runs keep their own end user: A lacks B's key, B disagrees on `tier`.
        for id in [A, B] {
            let residue: Value = serde_json::from_str(&store.files[&residue_path(id)]).unwrap();
            assert_eq!(residue["end_user"]["external_id"], "ada", "{id}");
        }
        assert_eq!(
            store
                .files
                .keys()
                .filter(|f| f.starts_with("plan-"))
                .count(),
            1
        );
    }

    #[test]
    fn what_a_downgrade_drops_is_kept_in_the_residue_and_reported_there() {
        let mut runs = vec![down(A, &[], true)];
        assert_eq!(runs[0].1.report.entries[0].kind, EntryKind::Dropped);
        let store = assemble(&mut runs);
        let entry = &runs[0].1.report.entries[0];
        assert_eq!(entry.kind, EntryKind::Moved);
        assert_eq!(entry.to.as_deref(), Some(residue_path(A).as_str()));
        let residue: Value = serde_json::from_str(&store.files[&residue_path(A)]).unwrap();
        assert_eq!(
            residue["dropped"]["/legacy/entries/~1run~1execution_context"],
            serde_json::json!({"additional_data": {}})
        );
        assert!(store.conflicts.is_empty());
        assert!(store.files.contains_key(&format!("{A}.json")));
    }
}
