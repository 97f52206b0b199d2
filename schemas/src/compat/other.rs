//! Every keyword the other modules do not model (`allOf`, `not`, `if`, `patternProperties`, …):
//! compared as values with annotations stripped, and any change taken to break both directions,
//! so that the verdict errs on the side of BREAKING, never of compatible.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::walk::{shorten, Pair, Walk, ANNOTATIONS, BOTH};
use super::Rule;

/// Keywords the walk compares itself, each in its family's module.
const MODELLED: &[&str] = &[
    "$ref",
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "uniqueItems",
    "oneOf",
    "anyOf",
];

/// A schema with its annotations removed at every level, for comparing unmodelled keywords.
fn strip(schema: &Value) -> Value {
    let Some(obj) = schema.as_object() else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in obj {
        if ANNOTATIONS.contains(&key.as_str()) {
            continue;
        }
        let value = match key.as_str() {
            "properties" | "patternProperties" | "dependentSchemas" => match value {
                Value::Object(map) => {
                    Value::Object(map.iter().map(|(k, v)| (k.clone(), strip(v))).collect())
                }
                other => other.clone(),
            },
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => match value {
                Value::Array(items) => Value::Array(items.iter().map(strip).collect()),
                other => other.clone(),
            },
            "items"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties" => strip(value),
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    Value::Object(out)
}

impl<'a> Walk<'a> {
    /// Compares every keyword that is neither an annotation nor modelled.
    pub(super) fn cmp_unmodelled(&mut self, pair: Pair<'a, '_>) {
        let (o, n) = pair.keywords();
        let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
        for key in keys {
            let k = key.as_str();
            if ANNOTATIONS.contains(&k) || MODELLED.contains(&k) {
                continue;
            }
            let ov = o.get(k).map(strip);
            let nv = n.get(k).map(strip);
            if ov != nv {
                let shown = |v: &Option<Value>| {
                    v.as_ref()
                        .map_or("absent".to_owned(), |v| shorten(&v.to_string()))
                };
                let detail = format!(
                    "`{k}` changed ({} → {}); not modelled, taken as breaking both ways",
                    shown(&ov),
                    shown(&nv)
                );
                self.fire(Rule::KeywordChanged, pair.at_keyword(k), detail, BOTH);
            }
        }
    }
}
