//! Many downgraded runs as one store the SDK at HEAD loads: each run's own files, and each
//! shared file (a plan several runs execute, an end user several runs belong to) written once,
//! by a rule that does not depend on the order the runs were converted in. What a shared file
//! or the HEAD format cannot hold for a run is kept in that run's residue, which the store keeps
//! beside the SDK's files (the SDK never reads it), and each such value is named in the report.

use std::collections::BTreeMap;

use serde::Serialize;

use planrun_wire::json::to_sdk_json;

use planrun_v2::PlanRunV2;

use crate::downgrade::Downgraded;
pub use crate::residue::residue_path;
use crate::residue::Residue;

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
///   a run whose plan was rebuilt (the SDK never saved one) writes none;
/// * an end user is the first run's, with the `additional_data` keys of every run that it lacks
///   added (the first value of a key wins); a run whose end user differs from the written one
///   keeps its own in its residue;
/// * every value a downgrade had to drop goes to its run's residue instead, so nothing is lost.
pub fn assemble(runs: &mut [(PlanRunV2, Downgraded)]) -> HeadStore {
    runs.sort_by(|a, b| a.0.id.cmp(&b.0.id));
    let mut store = HeadStore::default();
    let mut plans: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut users: BTreeMap<String, (String, planrun_legacy::EndUser)> = BTreeMap::new();
    for (v2, down) in runs.iter() {
        if let Some(plan) = &down.plan {
            let plan_file = format!("{}.json", down.run.plan_id);
            plans
                .entry(plan_file)
                .or_insert_with(|| (v2.id.clone(), to_sdk_json(plan)));
        }
        let user_file = format!("{}.json", down.end_user.external_id);
        let (_, merged) = users
            .entry(user_file)
            .or_insert_with(|| (v2.id.clone(), down.end_user.clone()));
        for (key, value) in &down.end_user.additional_data {
            merged
                .additional_data
                .entry(key.clone())
                .or_insert_with(|| value.clone());
        }
    }
    for (v2, down) in runs.iter_mut() {
        let id = v2.id.clone();
        let plan_file = format!("{}.json", down.run.plan_id);
        let own_plan = down.plan.as_ref().and_then(|plan| {
            let (plan_owner, plan_text) = &plans[&plan_file];
            (*plan_text != to_sdk_json(plan)).then(|| {
                store.conflicts.push(Conflict {
                    file: plan_file.clone(),
                    written_for: plan_owner.clone(),
                    run: id.clone(),
                    what: "the run's plan differs from the one written".to_owned(),
                });
                serde_json::to_value(plan).expect("plans are JSON")
            })
        });
        let user_file = format!("{}.json", down.end_user.external_id);
        let (user_owner, merged) = &users[&user_file];
        if to_sdk_json(&stripped(merged, &down.end_user)) != to_sdk_json(&down.end_user) {
            store.conflicts.push(Conflict {
                file: user_file.clone(),
                written_for: user_owner.clone(),
                run: id.clone(),
                what: "the run's end user disagrees with the one written".to_owned(),
            });
        }
        let mut residue = Residue::of(v2, down, Some(merged));
        residue.plan = own_plan;
        store
            .files
            .insert(format!("{id}.json"), to_sdk_json(&down.run));
        if residue.needed() {
            store.files.insert(residue_path(&id), residue.to_text());
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
    use crate::downgrade::downgrade_to_head;
    use crate::report::EntryKind;
    use serde_json::Value;

    const A: &str = "prun-0a6f3c1e-2b4d-4e8f-9a0b-1c2d3e4f5a60";
    const B: &str = "prun-1b7a4d2f-3c5e-4f90-8b1c-2d3e4f5a6b71";

    /// The V2 fixture as run `id`, its end user holding `data`.
    fn run(id: &str, data: &[(&str, &str)]) -> (PlanRunV2, Downgraded) {
        let fixture = include_str!("../../v2/tests/fixtures/plan_run.json");
        let mut v2: PlanRunV2 = serde_json::from_str(fixture).unwrap();
        v2.id = id.to_owned();
        for clarification in &mut v2.clarifications {
            let mut tree = serde_json::to_value(&*clarification).unwrap();
            tree["plan_run_id"] = Value::from(id);
            *clarification = serde_json::from_value(tree).unwrap();
        }
        v2.end_user.additional_data = data
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Some((*v).to_owned())))
            .collect();
        let down = downgrade_to_head(&v2, true).unwrap();
        (v2, down)
    }

    #[test]
    fn shared_files_are_written_once_whatever_the_order_of_the_runs() {
        let mut runs = vec![
            run(B, &[("tier", "gold"), ("team", "b")]),
            run(A, &[("tier", "free")]),
        ];
        let mut reversed = runs.clone();
        reversed.reverse();
        let store = assemble(&mut runs);
        assert_eq!(store, assemble(&mut reversed));
        let user_file = format!("{}.json", runs[0].1.end_user.external_id);
        let user: Value = serde_json::from_str(&store.files[&user_file]).unwrap();
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
        // Both keep their own end user: A lacks B's key, B disagrees on `tier`.
        for id in [A, B] {
            let residue = Residue::read(store.files[&residue_path(id)].as_bytes()).unwrap();
            assert!(residue.end_user.is_some(), "{id}");
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
        let mut runs = vec![run(A, &[])];
        let dropped = runs[0]
            .1
            .report
            .entries
            .iter()
            .filter(|e| e.kind == EntryKind::Dropped)
            .count();
        let store = assemble(&mut runs);
        assert!(runs[0]
            .1
            .report
            .entries
            .iter()
            .all(|e| e.kind != EntryKind::Dropped));
        let moved = runs[0]
            .1
            .report
            .entries
            .iter()
            .filter(|e| e.to.as_deref() == Some(residue_path(A).as_str()))
            .count();
        assert_eq!(moved, dropped);
        if runs[0].0.legacy.is_some() {
            let residue = Residue::read(store.files[&residue_path(A)].as_bytes()).unwrap();
            assert_eq!(
                residue.legacy,
                Some(serde_json::to_value(&runs[0].0.legacy).unwrap())
            );
        }
        assert!(store.files.contains_key(&format!("{A}.json")));
    }
}
