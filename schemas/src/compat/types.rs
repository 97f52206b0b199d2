//! `type`: which JSON types each side accepts at a schema's own level, narrowed by its
//! `const`/`enum`. A type gone breaks BACKWARD and a type added breaks FORWARD; `number` accepts
//! integers, so `integer` → `number` only widens. (A value made nullable through an `anyOf` with
//! a `null` branch is a union change, decided in `unions`.)

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::enums::values_of;
use super::walk::{Pair, Walk, BACKWARD, FORWARD};
use super::Rule;

/// Every JSON type, as `type` names them.
pub(super) const JSON_TYPES: &[&str] = &[
    "null", "boolean", "object", "array", "number", "integer", "string",
];

/// The type of a value (`integer` for a number without a fraction).
pub(super) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(n) => {
            let whole = n.is_i64()
                || n.is_u64()
                || n.as_f64()
                    .is_some_and(|f| f.is_finite() && f.fract() == 0.0);
            if whole {
                "integer"
            } else {
                "number"
            }
        }
    }
}

/// Whether a set of types accepts values of type `t` (`number` accepts integers).
pub(super) fn accepts(types: &BTreeSet<&'static str>, t: &str) -> bool {
    types.contains(t) || (t == "integer" && types.contains("number"))
}

/// The JSON types a schema accepts at its own level (`type`, narrowed by `const`/`enum`);
/// `None` means any type.
pub(super) fn types_of(schema: &Map<String, Value>) -> Option<BTreeSet<&'static str>> {
    let explicit: Option<BTreeSet<&'static str>> = match schema.get("type") {
        Some(Value::String(t)) => JSON_TYPES.iter().find(|x| **x == t).map(|x| [*x].into()),
        Some(Value::Array(ts)) => Some(
            ts.iter()
                .filter_map(Value::as_str)
                .filter_map(|t| JSON_TYPES.iter().find(|x| **x == t).copied())
                .collect(),
        ),
        _ => None,
    };
    let by_values: Option<BTreeSet<&'static str>> =
        values_of(schema).map(|vs| vs.iter().map(json_type).collect());
    match (explicit, by_values) {
        (Some(e), Some(v)) => Some(v.into_iter().filter(|t| accepts(&e, t)).collect()),
        (e, v) => e.or(v),
    }
}

impl<'a> Walk<'a> {
    /// Compares the types two schemas accept.
    pub(super) fn cmp_types(&mut self, pair: Pair<'a, '_>) {
        let (o, n) = pair.keywords();
        let ot = types_of(o);
        let nt = types_of(n);
        let all: BTreeSet<&'static str> = JSON_TYPES.iter().copied().collect();
        let ot_set = ot.clone().unwrap_or_else(|| all.clone());
        let nt_set = nt.clone().unwrap_or_else(|| all.clone());
        let removed: Vec<&str> = ot_set
            .iter()
            .copied()
            .filter(|t| !accepts(&nt_set, t))
            .collect();
        let added: Vec<&str> = nt_set
            .iter()
            .copied()
            .filter(|t| !accepts(&ot_set, t))
            .filter(|t| !(*t == "integer" && ot_set.contains("number")))
            .collect();
        let show_types = |t: &Option<BTreeSet<&str>>| match t {
            Some(t) => t.iter().copied().collect::<Vec<_>>().join(", "),
            None => "any type".to_owned(),
        };
        let change = format!("type {} became {}", show_types(&ot), show_types(&nt));
        if !removed.is_empty() {
            let detail = format!("{change}: {} no longer accepted", removed.join(", "));
            self.fire(
                Rule::TypeNarrowed,
                pair.at_keyword("type"),
                detail,
                BACKWARD,
            );
        }
        if !added.is_empty() {
            let detail = format!("{change}: {} now accepted", added.join(", "));
            self.fire(Rule::TypeWidened, pair.at_keyword("type"), detail, FORWARD);
        }
    }
}
