//! `properties`, `required` and `additionalProperties`. A key one side declares and the other
//! does not is governed there by `additionalProperties`, so whether adding or removing a
//! property breaks a direction depends on it: with `additionalProperties: false` (as in every V2
//! schema) a new property breaks FORWARD, and a new required one breaks BACKWARD as well.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::walk::{
    empty_map, is_trivial, join, path_join, trivial, At, Loc, Pair, Walk, BACKWARD, FORWARD,
};
use super::Rule;

/// The names a schema requires.
fn required(schema: &Map<String, Value>) -> BTreeSet<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn ap_text(schema: &Value) -> &'static str {
    match schema {
        Value::Bool(true) => "true",
        Value::Bool(false) => "false",
        s if is_trivial(s) => "true",
        _ => "a schema",
    }
}

/// Two object schemas' `properties`, `required` and `additionalProperties`, side by side.
struct Objects<'a, 'p> {
    pair: Pair<'a, 'p>,
    old_props: &'a Map<String, Value>,
    new_props: &'a Map<String, Value>,
    old_required: BTreeSet<String>,
    new_required: BTreeSet<String>,
    /// `additionalProperties` of each side (a trivial schema where absent).
    old_additional: Loc<'a>,
    new_additional: Loc<'a>,
}

impl<'a, 'p> Objects<'a, 'p> {
    fn of(pair: Pair<'a, 'p>) -> Self {
        let (o, n) = pair.keywords();
        let props = |keywords: &'a Map<String, Value>| {
            keywords
                .get("properties")
                .and_then(Value::as_object)
                .unwrap_or(empty_map())
        };
        let additional = |loc: &Loc<'a>| {
            loc.get("additionalProperties").map_or_else(
                || Loc::new(trivial(), join(&loc.ptr, &["additionalProperties"])),
                |ap| loc.child(ap, &["additionalProperties"]),
            )
        };
        Objects {
            old_props: props(o),
            new_props: props(n),
            old_required: required(o),
            new_required: required(n),
            old_additional: additional(pair.old),
            new_additional: additional(pair.new),
            pair,
        }
    }
}

impl<'a> Walk<'a> {
    /// Compares the properties, required names and additional properties of two schemas.
    pub(super) fn cmp_object(&mut self, pair: Pair<'a, '_>) {
        let objects = Objects::of(pair);
        self.removed_properties(&objects);
        self.added_properties(&objects);
        self.required_changes(&objects);
        self.cmp_additional(objects);
    }

    /// Each property OLD declares: compared with NEW's, or (removed) with what NEW's
    /// `additionalProperties` makes of it.
    fn removed_properties(&mut self, objects: &Objects<'a, '_>) {
        let Pair { old, new, path } = objects.pair;
        let (or, n_ap) = (&objects.old_required, &objects.new_additional);
        for (name, old_prop) in objects.old_props {
            let prop_path = path_join(path, name);
            let old_loc = old.child(old_prop, &["properties", name]);
            if let Some(new_prop) = objects.new_props.get(name) {
                let new_loc = new.child(new_prop, &["properties", name]);
                let is_tag = or.contains(name) && objects.new_required.contains(name);
                self.cmp(old_loc, new_loc, &prop_path, is_tag);
                continue;
            }
            // Removed: NEW now governs the key with additionalProperties.
            let was_required = or.contains(name);
            let (backward, forward, how) = if n_ap.is_false() {
                (
                    true,
                    was_required,
                    "NEW rejects it (additionalProperties: false)".to_owned(),
                )
            } else if is_trivial(n_ap.schema) {
                (
                    false,
                    was_required || !is_trivial(old_prop),
                    "NEW accepts any value under it".to_owned(),
                )
            } else {
                self.cmp(old_loc.clone(), n_ap.clone(), &prop_path, false);
                (
                    false,
                    was_required,
                    "NEW checks it against additionalProperties".to_owned(),
                )
            };
            let detail = format!(
                "{}property `{name}` removed; {how}",
                if was_required { "required " } else { "" }
            );
            let at = At::new(&prop_path, &old_loc.ptr, &join(&new.ptr, &["properties"]));
            self.fire(Rule::PropertyRemoved, at, detail, (backward, forward));
        }
    }

    /// Each property only NEW declares, which OLD data could carry only as an additional one.
    fn added_properties(&mut self, objects: &Objects<'a, '_>) {
        let Pair { old, new, path } = objects.pair;
        let o_ap = &objects.old_additional;
        for (name, new_prop) in objects.new_props {
            if objects.old_props.contains_key(name) {
                continue;
            }
            let prop_path = path_join(path, name);
            let new_loc = new.child(new_prop, &["properties", name]);
            let is_required = objects.new_required.contains(name);
            // OLD data could only carry the key as an additional property.
            let (mut backward, forward) = if o_ap.is_false() {
                (false, true)
            } else if is_trivial(o_ap.schema) {
                (!is_trivial(new_prop), false)
            } else {
                self.cmp(o_ap.clone(), new_loc.clone(), &prop_path, false);
                (false, false)
            };
            backward |= is_required;
            if !backward && !forward && !is_required {
                continue;
            }
            let (rule, detail) = if is_required {
                (
                    Rule::RequiredPropertyAdded,
                    format!("NEW requires the new property `{name}`, which OLD data lacks"),
                )
            } else if forward {
                (
                    Rule::PropertyAdded,
                    format!(
                        "NEW adds the optional property `{name}`, which OLD rejects \
                         (additionalProperties: false)"
                    ),
                )
            } else {
                (
                    Rule::PropertyAdded,
                    format!("NEW constrains `{name}`, which OLD accepted with any value"),
                )
            };
            let at = At::new(&prop_path, &join(&old.ptr, &["properties"]), &new_loc.ptr);
            self.fire(rule, at, detail, (backward, forward));
        }
    }

    /// Names required on one side only.
    fn required_changes(&mut self, objects: &Objects<'a, '_>) {
        let Pair { old, new, path } = objects.pair;
        let (or, nr) = (&objects.old_required, &objects.new_required);
        let (op, np) = (objects.old_props, objects.new_props);
        let (old_required, new_required) =
            (join(&old.ptr, &["required"]), join(&new.ptr, &["required"]));
        let at_required =
            |name: &str| At::new(&path_join(path, name), &old_required, &new_required);
        for name in nr.difference(or) {
            let detail = if op.contains_key(name) && np.contains_key(name) {
                format!("`{name}` is required in NEW, optional in OLD")
            } else if !np.contains_key(name) {
                format!("NEW requires `{name}`, which OLD did not")
            } else {
                continue;
            };
            self.fire(
                Rule::PropertyMadeRequired,
                at_required(name),
                detail,
                BACKWARD,
            );
        }
        for name in or.difference(nr) {
            if np.contains_key(name) || !op.contains_key(name) {
                let detail = format!("`{name}` is optional in NEW, required in OLD");
                self.fire(
                    Rule::PropertyMadeOptional,
                    at_required(name),
                    detail,
                    FORWARD,
                );
            }
        }
    }

    /// `additionalProperties` itself.
    fn cmp_additional(&mut self, objects: Objects<'a, '_>) {
        let path = objects.pair.path;
        let (o_ap, n_ap) = (objects.old_additional, objects.new_additional);
        let (ot, nt) = (is_trivial(o_ap.schema), is_trivial(n_ap.schema));
        let (of, nf) = (o_ap.is_false(), n_ap.is_false());
        let values_path = path_join(path, "*");
        if ot && nt || of && nf {
            return;
        }
        if !(ot || nf || of || nt) {
            return self.cmp(o_ap, n_ap, &values_path, false);
        }
        let detail = format!(
            "additionalProperties {} became {}",
            ap_text(o_ap.schema),
            ap_text(n_ap.schema)
        );
        let at = At::new(&values_path, &o_ap.ptr, &n_ap.ptr);
        if ot || nf {
            self.fire(Rule::AdditionalPropertiesTightened, at, detail, BACKWARD);
        } else {
            self.fire(Rule::AdditionalPropertiesLoosened, at, detail, FORWARD);
        }
    }
}
