//! A run's residue: what a HEAD store cannot hold of a V2 run, kept beside the store
//! (`.planrun/residue/<run id>.json`, which the SDK never reads) so that migrating the HEAD store
//! back to V2 gives the V2 document it was made from, byte for byte.
//!
//! It holds the V2 document's `legacy` object (an old execution context and the like), its end
//! user when the store's end-user file does not give it back, and the changes that brought the
//! run and its plan to HEAD's form, so they can be undone; and, checked by converting the HEAD
//! files back when the residue is made, any other top-level field those do not give back. A
//! residue is applied only to the very run and plan files it was made with (their FNV-1a
//! hashes are recorded): once the SDK has saved a run again, its residue no longer applies.

use std::sync::Arc;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use planrun_legacy::{LegacyDocument, Normalization, Parsed};
use planrun_v2::PlanRunV2;
use planrun_wire::hash::fnv1a64;
use planrun_wire::join::hex16;
use planrun_wire::json::to_sdk_json;

use crate::downgrade::Downgraded;
use crate::report::EntryKind;
use crate::upgrade::{upgrade, PlanSource, Sources};

/// The `format` of every residue file.
pub const RESIDUE_FORMAT: &str = "planrun-residue/1";

/// The directory a store keeps its runs' residues in, relative to its root.
pub const RESIDUE_DIR: &str = ".planrun/residue";

/// Where a store keeps the residue of run `id`, relative to its root.
pub fn residue_path(id: &str) -> String {
    format!("{RESIDUE_DIR}/{id}.json")
}

/// One change made to bring a file to HEAD's form, as its residue records it to undo it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// `defaulted` (HEAD wrote a key the file lacked), `dropped` (HEAD cannot hold the key) or
    /// `coerced` (HEAD holds another value).
    pub kind: String,
    /// Where, in the file.
    pub pointer: String,
    /// The value before the change (absent for `defaulted`; `null` is a value here).
    #[serde(
        default,
        deserialize_with = "planrun_wire::strict::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub before: Option<Value>,
}

/// What a HEAD store keeps of one run beyond the SDK's own files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Residue {
    /// [`RESIDUE_FORMAT`].
    pub format: String,
    /// FNV-1a 64 (hex) of the run file this residue was made with.
    pub run_fnv: String,
    /// FNV-1a 64 (hex) of the plan file this residue was made with; empty when the run has no
    /// plan file (its plan was rebuilt, as the SDK never saved it).
    pub plan_fnv: String,
    /// The V2 document's `legacy` object, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy: Option<Value>,
    /// The V2 document's end user, when the store's end-user file does not give it back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_user: Option<Value>,
    /// The run's own plan in HEAD's form, when the store's plan file is another run's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Value>,
    /// Top-level fields of the V2 document that HEAD's files and the rest of this residue do
    /// not give back, put back as they are: two step outputs of one name (the run keeps the
    /// last), or the step numbers of a V2 run that no legacy run made. Never the config: a
    /// conversion writes the config it is given.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub fields: IndexMap<String, Value>,
    /// The changes that brought the run to HEAD's form, in the order they were made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run_changes: Vec<Change>,
    /// The changes that brought the plan to HEAD's form.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plan_changes: Vec<Change>,
}

impl Residue {
    /// The residue of `v2` downgraded to HEAD's form as `down` (see
    /// [`crate::downgrade::downgrade_to_head`]), for a store whose end-user file for the run is
    /// `written_user` (`None`: the store has none). `None` when HEAD's files give `v2` back
    /// without help ([`Residue::needed`] says). The report's `dropped` entries become moves to
    /// the residue.
    pub fn of(
        v2: &PlanRunV2,
        down: &mut Downgraded,
        written_user: Option<&planrun_legacy::EndUser>,
    ) -> Residue {
        for entry in &mut down.report.entries {
            if entry.kind == EntryKind::Dropped {
                entry.kind = EntryKind::Moved;
                entry.to = Some(residue_path(&v2.id));
                entry.value = None;
                entry.note = format!("{}; kept in the store's residue", entry.note).into();
            }
        }
        let user_back = match written_user {
            Some(user) => planrun_v2::EndUser {
                external_id: user.external_id.clone(),
                name: user.name.clone(),
                email: user.email.clone(),
                phone_number: user.phone_number.clone(),
                additional_data: user.additional_data.clone(),
            },
            None => planrun_v2::EndUser::bare(&v2.end_user.external_id),
        };
        let run_text = to_sdk_json(&down.run);
        let plan_text = down.plan.as_ref().map(to_sdk_json);
        let mut residue = Residue {
            format: RESIDUE_FORMAT.to_owned(),
            run_fnv: hex16(fnv1a64(run_text.as_bytes())),
            plan_fnv: plan_text
                .as_ref()
                .map_or_else(String::new, |text| hex16(fnv1a64(text.as_bytes()))),
            legacy: v2
                .legacy
                .as_ref()
                .map(|l| serde_json::to_value(l).expect("V2 documents are JSON")),
            end_user: (user_back != v2.end_user)
                .then(|| serde_json::to_value(&v2.end_user).expect("V2 documents are JSON")),
            plan: None,
            fields: IndexMap::new(),
            run_changes: undoable(&down.undo.run),
            plan_changes: down.undo.plan.iter().filter_map(change).collect(),
        };
        let files = (
            run_text.as_bytes(),
            plan_text.as_ref().map(String::as_bytes),
        );
        residue.fields = residue.not_given_back(v2, files, written_user);
        residue
    }

    /// The top-level fields of `v2` that converting HEAD's files back (`files`: the run's and
    /// the plan's text) with this residue does not give back as they are (the config aside).
    fn not_given_back(
        &self,
        v2: &PlanRunV2,
        files: (&[u8], Option<&[u8]>),
        written_user: Option<&planrun_legacy::EndUser>,
    ) -> IndexMap<String, Value> {
        let want = serde_json::to_value(v2).expect("V2 documents are JSON");
        let back = self
            .convert_back(files, written_user, &v2.config)
            .map(|run| serde_json::to_value(run).expect("V2 documents are JSON"));
        let (Value::Object(want), Some(Value::Object(back))) = (want, back) else {
            return IndexMap::new();
        };
        // Compared as text: a JSON object's equality ignores key order, the V2 bytes do not (a
        // clarification whose HEAD form dropped some keys and kept later ones gets them back
        // in another order).
        let text = |value: &Value| serde_json::to_string(value).expect("JSON values are JSON");
        want.into_iter()
            .filter(|(key, value)| {
                key != "config" && back.get(key).map(text).as_ref() != Some(&text(value))
            })
            .collect()
    }

    /// What converting HEAD's files of the run back to V2 gives, as a store conversion does:
    /// the files undone, upgraded (every agent-memory file there), this residue put back.
    fn convert_back(
        &self,
        (run, plan): (&[u8], Option<&[u8]>),
        written_user: Option<&planrun_legacy::EndUser>,
        config: &Arc<planrun_v2::Config>,
    ) -> Option<PlanRunV2> {
        let run = self.undo_run(run)?;
        let run = planrun_legacy::parse(&run).ok()?;
        let plan = match plan {
            Some(plan) => Some(planrun_legacy::parse(&self.undo_plan(plan)?).ok()?),
            None => None,
        };
        let plan_source = match &plan {
            Some(Parsed {
                document: LegacyDocument::Plan(plan),
                ..
            }) => PlanSource::Read(plan),
            Some(_) => return None,
            None => PlanSource::NeverSaved,
        };
        let every_file = |_: &str, _: &str| true;
        let sources = Sources {
            run: &run,
            plan: plan_source,
            end_user: written_user,
            plan_read: plan.as_ref().map_or(&[], |p| &p.normalizations),
            end_user_read: &[],
            config,
            agent_memory: Some(&every_file),
        };
        let mut back = upgrade(&sources).ok()?.run;
        self.restore(&mut back).ok()?;
        Some(back)
    }

    /// Whether HEAD's files alone would not give the V2 document back, so the residue must be
    /// kept.
    pub fn needed(&self) -> bool {
        self.legacy.is_some()
            || self.end_user.is_some()
            || self.plan.is_some()
            || !self.fields.is_empty()
            || !self.run_changes.is_empty()
            || !self.plan_changes.is_empty()
    }

    /// The residue file's text.
    pub fn to_text(&self) -> String {
        to_sdk_json(self)
    }

    /// Reads a residue file; `None` when it is not one this release writes.
    pub fn read(bytes: &[u8]) -> Option<Residue> {
        let residue: Residue = serde_json::from_slice(bytes).ok()?;
        (residue.format == RESIDUE_FORMAT).then_some(residue)
    }

    /// The run file as it was before HEAD's form was made of it, when `bytes` is the file this
    /// residue was made with; `None` otherwise.
    pub fn undo_run(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        undo(bytes, &self.run_fnv, &self.run_changes)
    }

    /// [`Residue::undo_run`] for the plan file.
    pub fn undo_plan(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        undo(bytes, &self.plan_fnv, &self.plan_changes)
    }

    /// Puts back into `v2` (converted from the undone files) what the HEAD files could not hold.
    pub fn restore(&self, v2: &mut PlanRunV2) -> Result<(), String> {
        v2.legacy = match &self.legacy {
            Some(legacy) => Some(
                serde_json::from_value(legacy.clone())
                    .map_err(|e| format!("residue legacy: {e}"))?,
            ),
            None => None,
        };
        if let Some(user) = &self.end_user {
            v2.end_user = serde_json::from_value(user.clone())
                .map_err(|e| format!("residue end user: {e}"))?;
        }
        if !self.fields.is_empty() {
            let mut tree = serde_json::to_value(&*v2).expect("V2 documents are JSON");
            for (key, value) in &self.fields {
                tree[key] = value.clone();
            }
            *v2 = serde_json::from_value(tree).map_err(|e| format!("residue fields: {e}"))?;
        }
        Ok(())
    }
}

/// The run's changes a residue records to undo: all but those inside a clarification whose
/// category HEAD replaced (W1's `Argument`). Undone, that clarification would make a run no
/// reader of R6 takes (no SDK that writes R6 has the category), so the residue keeps the V2
/// clarifications among its `fields` instead.
fn undoable(changes: &[Normalization]) -> Vec<Change> {
    let replaced: Vec<String> = changes
        .iter()
        .filter_map(|c| match c {
            Normalization::Coerced { pointer, .. } => {
                pointer.strip_suffix("/category").map(|p| format!("{p}/"))
            }
            _ => None,
        })
        .collect();
    changes
        .iter()
        .filter_map(change)
        .filter(|c| !replaced.iter().any(|p| c.pointer.starts_with(p.as_str())))
        .collect()
}

fn change(normalization: &Normalization) -> Option<Change> {
    let (kind, pointer, before) = match normalization {
        Normalization::Defaulted { pointer, .. } => ("defaulted", pointer, None),
        Normalization::Dropped { pointer, value } => ("dropped", pointer, Some(value.clone())),
        Normalization::Coerced { pointer, from, .. } => ("coerced", pointer, Some(from.clone())),
        Normalization::Reformatted => return None,
    };
    Some(Change {
        kind: kind.to_owned(),
        pointer: pointer.clone(),
        before,
    })
}

fn undo(bytes: &[u8], fnv: &str, changes: &[Change]) -> Option<Vec<u8>> {
    if hex16(fnv1a64(bytes)) != fnv {
        return None;
    }
    let mut tree: Value = serde_json::from_slice(bytes).ok()?;
    // In the order they were found: keys dropped from one object go back in their source order,
    // which is the order a legacy reader keeps them in (a clarification's extra keys, say).
    for change in changes {
        if change.pointer == "/inputs" && change.kind == "coerced" {
            // v0.3.2's `inputs`, which HEAD's form holds as `plan_inputs`.
            let object = tree.as_object_mut()?;
            object.shift_remove("plan_inputs");
            object.insert("inputs".to_owned(), change.before.clone()?);
            continue;
        }
        let (parent, key) = split(&change.pointer)?;
        let target = tree.pointer_mut(parent)?;
        match (change.kind.as_str(), target) {
            ("defaulted", Value::Object(object)) => {
                object.shift_remove(&key);
            }
            ("dropped" | "coerced", Value::Object(object)) => {
                object.insert(key, change.before.clone()?);
            }
            ("coerced", Value::Array(items)) => {
                *items.get_mut(key.parse::<usize>().ok()?)? = change.before.clone()?;
            }
            _ => return None,
        }
    }
    Some(to_sdk_json(&tree).into_bytes())
}

/// A JSON pointer's parent pointer and its last token, unescaped.
fn split(pointer: &str) -> Option<(&str, String)> {
    let at = pointer.rfind('/')?;
    let token = pointer[at + 1..].replace("~1", "/").replace("~0", "~");
    Some((&pointer[..at], token))
}
