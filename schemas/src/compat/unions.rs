//! `oneOf`/`anyOf`: which branch of OLD stands for which branch of NEW. Branches are matched by
//! their tag (a required property's `const`), their `const` or their JSON types, because tagged
//! unions reorder and grow across versions; a branch left without a partner is removed or added.

use std::collections::BTreeSet;

use serde_json::Value;

use super::types::types_of;
use super::walk::{At, Loc, Pair, Side, Walk, ANNOTATIONS, BACKWARD, FORWARD};
use super::Rule;

/// How a union branch is recognised across versions.
#[derive(Debug, PartialEq)]
enum Key {
    /// A required property with a `const`: (property, value).
    Tag(String, Value),
    /// A `const` value.
    Const(Value),
    /// The JSON types.
    Types(Option<BTreeSet<&'static str>>),
}

impl Key {
    fn of(loc: &Loc<'_>) -> Key {
        let Some(obj) = loc.obj() else {
            return Key::Types(None);
        };
        if let (Some(props), Some(required)) = (
            obj.get("properties").and_then(Value::as_object),
            obj.get("required").and_then(Value::as_array),
        ) {
            for (name, prop) in props {
                let is_required = required.iter().any(|r| r.as_str() == Some(name));
                if let (true, Some(value)) = (is_required, prop.get("const")) {
                    return Key::Tag(name.clone(), value.clone());
                }
            }
        }
        if let Some(value) = obj.get("const") {
            return Key::Const(value.clone());
        }
        Key::Types(types_of(obj))
    }

    fn describe(&self) -> String {
        match self {
            Key::Tag(name, value) => format!("{name} = {value}"),
            Key::Const(value) => format!("const {value}"),
            Key::Types(Some(types)) => format!(
                "of type {}",
                types.iter().copied().collect::<Vec<_>>().join(", ")
            ),
            Key::Types(None) => "of any type".to_owned(),
        }
    }
}

/// A union's keyword and its branches.
type Union<'a> = (&'static str, Vec<Loc<'a>>);

impl<'a> Walk<'a> {
    /// The branches of a union (`oneOf`/`anyOf`), nested unions flattened; `None` when the
    /// schema is not a union. Also returns the keyword.
    fn branches(&self, side: Side, loc: &Loc<'a>) -> Option<Union<'a>> {
        let keyword = ["oneOf", "anyOf"]
            .into_iter()
            .find(|k| loc.get(k).is_some_and(Value::is_array))?;
        let mut out = Vec::new();
        self.flatten(side, loc, keyword, &mut out, 0);
        Some((keyword, out))
    }

    fn flatten(
        &self,
        side: Side,
        loc: &Loc<'a>,
        keyword: &str,
        out: &mut Vec<Loc<'a>>,
        depth: usize,
    ) {
        let items: Vec<&'a Value> = loc
            .get(keyword)
            .and_then(Value::as_array)
            .map(|v| v.iter().collect())
            .unwrap_or_default();
        for (i, item) in items.into_iter().enumerate() {
            let branch = self.deref(side, loc.child(item, &[keyword, &i.to_string()]));
            let nested = ["oneOf", "anyOf"].into_iter().find(|k| {
                branch.get(k).is_some_and(Value::is_array)
                    && branch.obj().is_some_and(|o| {
                        o.keys()
                            .all(|key| key == k || ANNOTATIONS.contains(&key.as_str()))
                    })
            });
            match nested {
                Some(inner) if depth < 8 => self.flatten(side, &branch, inner, out, depth + 1),
                _ => out.push(branch),
            }
        }
    }

    /// Compares two schemas of which one or both are unions (a schema that is not one stands
    /// for a union of itself). `None` when neither is a union; otherwise whether both are, in
    /// which case the keywords beside the unions remain to be compared.
    pub(super) fn cmp_unions(&mut self, pair: Pair<'a, '_>) -> Option<bool> {
        let old_union = self.branches(Side::Old, pair.old);
        let new_union = self.branches(Side::New, pair.new);
        if old_union.is_none() && new_union.is_none() {
            return None;
        }
        let both = old_union.is_some() && new_union.is_some();
        let keyword_old = old_union.as_ref().map(|u| u.0);
        let keyword_new = new_union.as_ref().map(|u| u.0);
        let old_branches = old_union.map_or_else(|| vec![pair.old.clone()], |u| u.1);
        let new_branches = new_union.map_or_else(|| vec![pair.new.clone()], |u| u.1);
        self.cmp_union(
            pair,
            (keyword_old.or(keyword_new).unwrap_or("oneOf"), old_branches),
            (keyword_new.or(keyword_old).unwrap_or("oneOf"), new_branches),
        );
        Some(both)
    }

    fn cmp_union(
        &mut self,
        pair: Pair<'a, '_>,
        (old_kw, old_branches): Union<'a>,
        (new_kw, new_branches): Union<'a>,
    ) {
        if self.cmp_value_unions(pair, &old_branches, &new_branches) {
            return;
        }
        let old_keys: Vec<Key> = old_branches.iter().map(Key::of).collect();
        let new_keys: Vec<Key> = new_branches.iter().map(Key::of).collect();
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        let mut new_taken = vec![false; new_branches.len()];
        let mut old_taken = vec![false; old_branches.len()];
        for (i, key) in old_keys.iter().enumerate() {
            if let Some(j) = (0..new_keys.len()).find(|&j| !new_taken[j] && new_keys[j] == *key) {
                new_taken[j] = true;
                old_taken[i] = true;
                pairs.push((i, j));
            }
        }
        let old_left: Vec<usize> = (0..old_branches.len()).filter(|&i| !old_taken[i]).collect();
        let new_left: Vec<usize> = (0..new_branches.len()).filter(|&j| !new_taken[j]).collect();
        if old_left.len() == 1 && new_left.len() == 1 {
            pairs.push((old_left[0], new_left[0]));
        } else {
            let rule_removed = if old_kw == "anyOf" {
                Rule::AnyOfBranchRemoved
            } else {
                Rule::OneOfBranchRemoved
            };
            let rule_added = if new_kw == "anyOf" {
                Rule::AnyOfBranchAdded
            } else {
                Rule::OneOfBranchAdded
            };
            for &i in &old_left {
                let detail = format!(
                    "the branch {} of OLD matches no branch of NEW",
                    old_keys[i].describe()
                );
                let at = At::new(pair.path, &old_branches[i].ptr, &pair.new.ptr);
                self.fire(rule_removed, at, detail, BACKWARD);
            }
            for &j in &new_left {
                let detail = format!("NEW adds the branch {}", new_keys[j].describe());
                let at = At::new(pair.path, &pair.old.ptr, &new_branches[j].ptr);
                self.fire(rule_added, at, detail, FORWARD);
            }
        }
        pairs.sort_unstable();
        for (i, j) in pairs {
            self.cmp(
                old_branches[i].clone(),
                new_branches[j].clone(),
                pair.path,
                false,
            );
        }
    }
}
