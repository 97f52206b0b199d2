//! The rename table's interpreter: each row of a version applied to the run's JSON tree, the
//! result read back with the R6 model (keeping a W1 clarification category, which V2 keeps). It is the reference the typed chain is tested against,
//! byte for byte and entry for entry, and it runs any row the typed chain lacks.

use indexmap::IndexMap;
use serde_json::{Map, Value};

use planrun_legacy::{LegacyRun, RunR6, Version};
use planrun_wire::json::escape_pointer_token;

use super::{note, AtR6, ChainError};
use crate::renames::{rows_from, Op, Row};
use crate::report::{EntryKind, LossReport};

/// Brings a run of any version to R6 by interpreting the rename table on its JSON tree.
pub fn to_r6(run: &LegacyRun) -> Result<AtR6, ChainError> {
    let source_version = run.version();
    if let LegacyRun::R6(run) = run {
        if rows_from(Version::R6).next().is_none() {
            // Nothing to apply: skip the round trip through a JSON tree.
            return Ok(AtR6 {
                run: run.clone(),
                residue: IndexMap::new(),
                report: LossReport::default(),
                source_version,
            });
        }
    }
    let mut tree = serde_json::to_value(run)?;
    let mut residue = IndexMap::new();
    let mut report = LossReport::default();
    for version in Version::ALL.into_iter().filter(|v| *v >= source_version) {
        for row in rows_from(version) {
            apply(row, &mut tree, &mut residue, &mut report);
        }
    }
    Ok(AtR6 {
        run: RunR6::from_chain_tree(tree, source_version)?,
        residue,
        report,
        source_version,
    })
}

fn apply(
    row: &'static Row,
    tree: &mut Value,
    residue: &mut IndexMap<String, Value>,
    report: &mut LossReport,
) {
    match row.op {
        Op::RenameKey { at, from, to } => {
            for pointer in expand(tree, at) {
                let Some(Value::Object(obj)) = tree.pointer_mut(&pointer) else {
                    continue;
                };
                if !obj.contains_key(from) {
                    continue;
                }
                let old = std::mem::take(obj);
                *obj = old
                    .into_iter()
                    .map(|(k, v)| {
                        if k == from {
                            (to.to_owned(), v)
                        } else {
                            (k, v)
                        }
                    })
                    .collect::<Map<String, Value>>();
                report.push(
                    EntryKind::Renamed,
                    Some(format!("/run{pointer}/{}", escape_pointer_token(from))),
                    Some(format!("/run{pointer}/{}", escape_pointer_token(to))),
                    note(row),
                    None,
                );
            }
        }
        Op::RewritePrefix { at, from, to } => {
            for pointer in expand(tree, at) {
                let Some(Value::String(id)) = tree.pointer_mut(&pointer) else {
                    continue;
                };
                let Some(rest) = id.strip_prefix(from).and_then(|r| r.strip_prefix('-')) else {
                    continue;
                };
                *id = format!("{to}-{rest}");
                let place = format!("/run{pointer}");
                report.push(
                    EntryKind::Coerced,
                    Some(place.clone()),
                    Some(place),
                    note(row),
                    None,
                );
            }
        }
        Op::Move { from, to, default } => {
            let taken = take(tree, from);
            let (value, kind) = match taken {
                Some(v) if !v.is_null() => (v, EntryKind::Moved),
                _ => (parse_default(default), EntryKind::Defaulted),
            };
            let recorded = (kind == EntryKind::Defaulted).then(|| value.clone());
            if insert(tree, to, value) {
                let source = (kind == EntryKind::Moved).then(|| format!("/run{from}"));
                report.push(kind, source, Some(format!("/run{to}")), note(row), recorded);
            }
        }
        Op::Default { at, key, value } => {
            if let Some(Value::Object(obj)) = tree.pointer_mut(at) {
                if !obj.contains_key(key) {
                    let value = parse_default(value);
                    obj.insert(key.to_owned(), value.clone());
                    report.defaulted(
                        format!("/run{at}/{}", escape_pointer_token(key)),
                        note(row),
                        value,
                    );
                }
            }
        }
        Op::ToResidue { at } => {
            if let Some(value) = take(tree, at) {
                let key = format!("/run{at}");
                report.push(
                    EntryKind::Moved,
                    Some(key.clone()),
                    Some(format!("/legacy/entries/{}", escape_pointer_token(&key))),
                    note(row),
                    None,
                );
                residue.insert(key, value);
            }
        }
        Op::Mapping { .. } => {}
    }
}

fn parse_default(text: &str) -> Value {
    serde_json::from_str(text).expect("rename-table defaults are JSON")
}

/// Removes and returns the value at `pointer`.
fn take(tree: &mut Value, pointer: &str) -> Option<Value> {
    let (parent, key) = split(pointer)?;
    match tree.pointer_mut(parent)? {
        Value::Object(obj) => obj.shift_remove(&key),
        _ => None,
    }
}

/// Sets the value at `pointer`, whose parent object must exist; false when it does not.
fn insert(tree: &mut Value, pointer: &str, value: Value) -> bool {
    let Some((parent, key)) = split(pointer) else {
        return false;
    };
    match tree.pointer_mut(parent) {
        Some(Value::Object(obj)) => {
            obj.insert(key, value);
            true
        }
        _ => false,
    }
}

fn split(pointer: &str) -> Option<(&str, String)> {
    let (parent, token) = pointer.rsplit_once('/')?;
    Some((parent, token.replace("~1", "/").replace("~0", "~")))
}

/// Expands a pointer pattern with `*` tokens into the concrete pointers present in `tree`.
fn expand(tree: &Value, pattern: &str) -> Vec<String> {
    let mut found = vec![String::new()];
    for token in pattern.split('/').skip(1) {
        let mut next = Vec::new();
        for pointer in found {
            match (token, tree.pointer(&pointer)) {
                ("*", Some(Value::Array(items))) => {
                    next.extend((0..items.len()).map(|i| format!("{pointer}/{i}")));
                }
                ("*", Some(Value::Object(obj))) => {
                    next.extend(
                        obj.keys()
                            .map(|k| format!("{pointer}/{}", escape_pointer_token(k))),
                    );
                }
                ("*", _) => {}
                (token, _) => next.push(format!("{pointer}/{token}")),
            }
        }
        found = next;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_expand_over_arrays_and_objects() {
        let tree = serde_json::json!({"a": [{"b": 1}, {"b": 2}], "m": {"x/y": {"b": 3}}});
        assert_eq!(expand(&tree, "/a/*/b"), ["/a/0/b", "/a/1/b"]);
        assert_eq!(expand(&tree, "/m/*/b"), ["/m/x~1y/b"]);
        assert_eq!(expand(&tree, ""), [""]);
        assert!(expand(&tree, "/none/*").is_empty());
    }
}
