//! Bounds (`minimum`, `maxLength`, `minItems`, …) and `uniqueItems`: limits on a value's size or
//! on its items. A bound that accepts less breaks BACKWARD and one that accepts more breaks
//! FORWARD; a bound added counts as accepting less, a bound dropped as accepting more.

use serde_json::{Map, Value};

use super::walk::{join, At, Pair, Walk, BACKWARD, FORWARD};
use super::Rule;

/// Bounds: keyword and whether it is a lower bound.
const BOUNDS: &[(&str, bool)] = &[
    ("minimum", true),
    ("exclusiveMinimum", true),
    ("maximum", false),
    ("exclusiveMaximum", false),
    ("minLength", true),
    ("maxLength", false),
    ("minItems", true),
    ("maxItems", false),
    ("minProperties", true),
    ("maxProperties", false),
];

impl<'a> Walk<'a> {
    /// Compares every bound of two schemas.
    pub(super) fn cmp_bounds(&mut self, pair: Pair<'a, '_>) {
        let (o, n) = pair.keywords();
        for &(keyword, lower) in BOUNDS {
            let ov = o.get(keyword).and_then(Value::as_f64);
            let nv = n.get(keyword).and_then(Value::as_f64);
            let narrowed = match (ov, nv) {
                (None, Some(_)) => Some(true),
                (Some(_), None) => Some(false),
                (Some(a), Some(b)) if a != b => Some(if lower { b > a } else { b < a }),
                _ => None,
            };
            let Some(narrowed) = narrowed else { continue };
            let shown = |v: Option<&Value>| v.map_or("none".to_owned(), Value::to_string);
            let detail = format!(
                "{keyword} {} became {}",
                shown(o.get(keyword)),
                shown(n.get(keyword))
            );
            let at = pair.at_keyword(keyword);
            if narrowed {
                self.fire(Rule::RangeNarrowed, at, detail, BACKWARD);
            } else {
                self.fire(Rule::RangeWidened, at, detail, FORWARD);
            }
        }
    }

    /// Compares `uniqueItems` (absent means `false`).
    pub(super) fn cmp_unique_items(&mut self, pair: Pair<'a, '_>) {
        let (o, n) = pair.keywords();
        let unique = |m: &Map<String, Value>| {
            m.get("uniqueItems")
                .and_then(Value::as_bool)
                .unwrap_or(false)
        };
        let (old, new, path) = (&pair.old.ptr, &pair.new.ptr, pair.path);
        match (unique(o), unique(n)) {
            (false, true) => {
                let at = At::new(path, old, &join(new, &["uniqueItems"]));
                let detail = "NEW requires unique items".to_owned();
                self.fire(Rule::UniqueItemsAdded, at, detail, BACKWARD);
            }
            (true, false) => {
                let at = At::new(path, &join(old, &["uniqueItems"]), new);
                let detail = "NEW allows repeated items".to_owned();
                self.fire(Rule::UniqueItemsRemoved, at, detail, FORWARD);
            }
            _ => {}
        }
    }
}
