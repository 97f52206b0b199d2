//! `enum` and `const`, and unions of consts: which values each side restricts a schema to. A
//! value gone breaks BACKWARD and a value added breaks FORWARD; a changed `const` breaks both,
//! and is reported as a changed tag when it is a required property's (a union tag such as `type`
//! or `kind`), since a renamed tag reroutes whole documents.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::types::{accepts, json_type, types_of, JSON_TYPES};
use super::walk::{shorten, Loc, Pair, Walk, ANNOTATIONS, BACKWARD, BOTH, FORWARD};
use super::Rule;

/// The values a schema is restricted to by `const` or `enum`, if it is.
pub(super) fn values_of(schema: &Map<String, Value>) -> Option<Vec<Value>> {
    let by_const = schema.get("const").map(|c| vec![c.clone()]);
    let by_enum = schema.get("enum").and_then(Value::as_array).cloned();
    match (by_const, by_enum) {
        (Some(c), Some(e)) => Some(c.into_iter().filter(|v| e.contains(v)).collect()),
        (c, e) => c.or(e),
    }
}

/// Whether a branch only restricts values (`const`/`enum`, perhaps with `type`).
fn is_value_set(loc: &Loc<'_>) -> bool {
    loc.obj().is_some_and(|o| {
        (o.contains_key("const") || o.contains_key("enum"))
            && o.keys().all(|k| {
                matches!(k.as_str(), "const" | "enum" | "type") || ANNOTATIONS.contains(&k.as_str())
            })
    })
}

/// The values of branches that are value sets, each once, in order.
fn union_values(branches: &[Loc<'_>]) -> Vec<Value> {
    let mut values: Vec<Value> = Vec::new();
    for b in branches {
        for v in b.obj().and_then(values_of).unwrap_or_default() {
            if !values.contains(&v) {
                values.push(v);
            }
        }
    }
    values
}

/// The types of a plain typed schema (one branch with no keyword but `type`), if it is one.
fn plain_types(branches: &[Loc<'_>]) -> Option<BTreeSet<&'static str>> {
    match branches {
        [only]
            if only.obj().is_some_and(|o| {
                o.keys()
                    .all(|k| k == "type" || ANNOTATIONS.contains(&k.as_str()))
            }) =>
        {
            Some(
                only.obj()
                    .and_then(types_of)
                    .unwrap_or_else(|| JSON_TYPES.iter().copied().collect()),
            )
        }
        _ => None,
    }
}

impl<'a> Walk<'a> {
    /// Compares the `const`/`enum` keywords of two schemas; `tag` says that they are a union
    /// tag's.
    pub(super) fn cmp_values(&mut self, pair: Pair<'a, '_>, tag: bool) {
        let (o, n) = pair.keywords();
        match (values_of(o), values_of(n)) {
            (Some(ov), Some(nv)) => {
                let both_const = o.contains_key("const")
                    && n.contains_key("const")
                    && !o.contains_key("enum")
                    && !n.contains_key("enum");
                self.cmp_value_lists(pair, &ov, &nv, both_const, tag);
            }
            (None, Some(nv)) => self.enum_introduced(pair, &nv),
            (Some(ov), None) => self.enum_dropped(pair, &ov, "any value"),
            (None, None) => {}
        }
    }

    /// Compares two unions when both are unions of value sets (an enum written as a union of
    /// consts), or one is and the other a plain typed schema; returns whether they were.
    pub(super) fn cmp_value_unions(
        &mut self,
        pair: Pair<'a, '_>,
        old_branches: &[Loc<'a>],
        new_branches: &[Loc<'a>],
    ) -> bool {
        let old_set = old_branches.iter().all(is_value_set);
        let new_set = new_branches.iter().all(is_value_set);
        if old_set && new_set {
            let (old_values, new_values) = (union_values(old_branches), union_values(new_branches));
            self.cmp_value_lists(pair, &old_values, &new_values, false, false);
            return true;
        }
        if let (true, Some(types)) = (old_set, plain_types(new_branches)) {
            let values = union_values(old_branches);
            self.enum_dropped(pair, &values, "any value of its type");
            let rejected = values.iter().filter(|v| !accepts(&types, json_type(v)));
            self.values_removed(pair, rejected);
            return true;
        }
        if let (Some(types), true) = (plain_types(old_branches), new_set) {
            let values = union_values(new_branches);
            self.enum_introduced(pair, &values);
            let rejected = values.iter().filter(|v| !accepts(&types, json_type(v)));
            self.values_added(pair, rejected);
            return true;
        }
        false
    }

    fn cmp_value_lists(
        &mut self,
        pair: Pair<'a, '_>,
        old_values: &[Value],
        new_values: &[Value],
        both_const: bool,
        tag: bool,
    ) {
        if both_const {
            if old_values != new_values {
                let rule = if tag {
                    Rule::TagConstChanged
                } else {
                    Rule::ConstChanged
                };
                let detail = format!(
                    "const {} became {}",
                    show(old_values.first()),
                    show(new_values.first())
                );
                self.fire(rule, pair.at_keyword("const"), detail, BOTH);
            }
            return;
        }
        self.values_removed(pair, old_values.iter().filter(|v| !new_values.contains(v)));
        self.values_added(pair, new_values.iter().filter(|v| !old_values.contains(v)));
    }

    /// OLD restricted the values, NEW does not: `enum-dropped`; `any` says what NEW accepts.
    fn enum_dropped(&mut self, pair: Pair<'a, '_>, values: &[Value], any: &str) {
        let detail = format!("OLD only accepted {}; NEW accepts {any}", show_all(values));
        self.fire(Rule::EnumDropped, pair.at(), detail, FORWARD);
    }

    /// NEW restricts the values, OLD did not: `enum-introduced`.
    fn enum_introduced(&mut self, pair: Pair<'a, '_>, values: &[Value]) {
        let detail = format!("NEW only accepts {}", show_all(values));
        self.fire(Rule::EnumIntroduced, pair.at(), detail, BACKWARD);
    }

    /// `enum-value-removed` for each value OLD accepted and NEW does not.
    fn values_removed<'v>(&mut self, pair: Pair<'a, '_>, gone: impl Iterator<Item = &'v Value>) {
        for value in gone {
            let detail = format!("NEW no longer accepts {}", show(Some(value)));
            self.fire(Rule::EnumValueRemoved, pair.at(), detail, BACKWARD);
        }
    }

    /// `enum-value-added` for each value NEW accepts and OLD did not.
    fn values_added<'v>(&mut self, pair: Pair<'a, '_>, new: impl Iterator<Item = &'v Value>) {
        for value in new {
            let detail = format!("NEW accepts {}, which OLD did not", show(Some(value)));
            self.fire(Rule::EnumValueAdded, pair.at(), detail, FORWARD);
        }
    }
}

fn show(value: Option<&Value>) -> String {
    value.map_or("none".to_owned(), |v| shorten(&v.to_string()))
}

fn show_all(values: &[Value]) -> String {
    shorten(
        &values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    )
}
