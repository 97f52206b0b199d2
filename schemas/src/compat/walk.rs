//! The walk over two schemas side by side: it follows local `$ref`s on both sides, decides the
//! cases no keyword family owns (a schema that became `false` or stopped being it, a `$ref` that
//! cannot be followed), and hands every other keyword to its family's module, in a fixed order
//! so that findings come out in walk order.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::{Finding, Rule};

/// A schema and where it sits in its document.
#[derive(Clone)]
pub(super) struct Loc<'a> {
    pub(super) schema: &'a Value,
    pub(super) ptr: String,
}

impl<'a> Loc<'a> {
    pub(super) fn new(schema: &'a Value, ptr: String) -> Self {
        Loc { schema, ptr }
    }

    pub(super) fn child(&self, schema: &'a Value, segments: &[&str]) -> Loc<'a> {
        Loc {
            schema,
            ptr: join(&self.ptr, segments),
        }
    }

    pub(super) fn obj(&self) -> Option<&'a Map<String, Value>> {
        self.schema.as_object()
    }

    pub(super) fn get(&self, key: &str) -> Option<&'a Value> {
        self.obj().and_then(|o| o.get(key))
    }

    pub(super) fn is_false(&self) -> bool {
        self.schema == &Value::Bool(false)
    }

    /// The schema's keywords (none for a boolean schema).
    pub(super) fn keywords(&self) -> &'a Map<String, Value> {
        self.obj().unwrap_or_else(|| empty_map())
    }
}

/// A JSON pointer extended by `segments`, each escaped.
pub(super) fn join(ptr: &str, segments: &[&str]) -> String {
    let mut out = ptr.to_owned();
    for segment in segments {
        out.push('/');
        out.push_str(&segment.replace('~', "~0").replace('/', "~1"));
    }
    out
}

/// An instance path extended by one segment (a property name, or `*`), escaped.
pub(super) fn path_join(path: &str, segment: &str) -> String {
    format!("{path}/{}", segment.replace('~', "~0").replace('/', "~1"))
}

/// Keywords that only annotate.
pub(super) const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$comment",
    "$defs",
    "definitions",
    "$vocabulary",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
];

/// Whether a schema accepts every value (`true`, `{}` or annotations only).
pub(super) fn is_trivial(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(obj) => obj.keys().all(|k| ANNOTATIONS.contains(&k.as_str())),
        _ => false,
    }
}

/// The `true` schema, standing for an absent `items` or `additionalProperties`.
pub(super) fn trivial() -> &'static Value {
    static TRUE: Value = Value::Bool(true);
    &TRUE
}

/// An empty object, standing for a boolean schema's keywords.
pub(super) fn empty_map() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

/// A value's text for a message, cut to a readable length.
pub(super) fn shorten(text: &str) -> String {
    const MAX: usize = 120;
    if text.chars().count() <= MAX {
        return text.to_owned();
    }
    let cut: String = text.chars().take(MAX).collect();
    format!("{cut}…")
}

/// Where a finding is: the instance path it concerns and JSON pointers into OLD and NEW.
pub(super) struct At {
    path: String,
    old: String,
    new: String,
}

impl At {
    pub(super) fn new(path: &str, old: &str, new: &str) -> Self {
        At {
            path: path.to_owned(),
            old: old.to_owned(),
            new: new.to_owned(),
        }
    }
}

/// Two schemas compared side by side, and the instance path they describe.
#[derive(Clone, Copy)]
pub(super) struct Pair<'a, 'p> {
    pub(super) old: &'p Loc<'a>,
    pub(super) new: &'p Loc<'a>,
    pub(super) path: &'p str,
}

impl<'a> Pair<'a, '_> {
    /// The keywords of OLD and of NEW.
    pub(super) fn keywords(&self) -> (&'a Map<String, Value>, &'a Map<String, Value>) {
        (self.old.keywords(), self.new.keywords())
    }

    /// A finding at the two schemas themselves.
    pub(super) fn at(&self) -> At {
        At::new(self.path, &self.old.ptr, &self.new.ptr)
    }

    /// A finding at `keyword` of both schemas.
    pub(super) fn at_keyword(&self, keyword: &str) -> At {
        At::new(
            self.path,
            &join(&self.old.ptr, &[keyword]),
            &join(&self.new.ptr, &[keyword]),
        )
    }
}

/// The directions a finding breaks: `(backward, forward)`.
pub(super) type Breaks = (bool, bool);
/// Breaks BACKWARD only: NEW rejects some document OLD accepts.
pub(super) const BACKWARD: Breaks = (true, false);
/// Breaks FORWARD only: OLD rejects some document NEW accepts.
pub(super) const FORWARD: Breaks = (false, true);
/// Breaks both directions.
pub(super) const BOTH: Breaks = (true, true);

/// Which side of the comparison.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Old,
    New,
}

/// The state of one comparison: both roots (for `$ref`s), the findings so far and the pairs of
/// schemas already compared (so that recursive `$ref`s end).
pub(super) struct Walk<'a> {
    old_root: &'a Value,
    new_root: &'a Value,
    /// Whether both roots are the same schema: then a pair at one pointer is one schema.
    same_roots: bool,
    findings: Vec<Finding>,
    visited: HashSet<(String, String)>,
    /// How many comparisons are open on the stack.
    depth: usize,
}

/// How deep comparisons nest before the walk stops with [`Rule::TooDeep`]: far deeper than any
/// real schema (the published ones nest about ten levels), and shallow enough for any thread's
/// stack, since recursive `$ref`s of different cycle lengths on the two sides can make a chain
/// of distinct pairs as long as the product of their lengths.
const MAX_DEPTH: usize = 96;

impl<'a> Walk<'a> {
    /// Compares two schemas; returns every rule that fired, in walk order.
    pub(super) fn run(old: &'a Value, new: &'a Value) -> Vec<Finding> {
        let mut walk = Walk {
            old_root: old,
            new_root: new,
            same_roots: old == new,
            findings: Vec::new(),
            visited: HashSet::new(),
            depth: 0,
        };
        walk.cmp(
            Loc::new(old, String::new()),
            Loc::new(new, String::new()),
            "",
            false,
        );
        walk.findings
    }

    /// Records that `rule` fired.
    pub(super) fn fire(&mut self, rule: Rule, at: At, detail: String, breaks: Breaks) {
        self.findings.push(Finding {
            rule,
            path: at.path,
            old: at.old,
            new: at.new,
            detail,
            breaks_backward: breaks.0,
            breaks_forward: breaks.1,
        });
    }

    fn root(&self, side: Side) -> &'a Value {
        match side {
            Side::Old => self.old_root,
            Side::New => self.new_root,
        }
    }

    /// The target of a local `$ref` (`#`, `#/…`, or the root's `$id` followed by a fragment).
    fn resolve(&self, side: Side, reference: &str) -> Option<Loc<'a>> {
        let root = self.root(side);
        let fragment = match reference.split_once('#') {
            Some(("", fragment)) => fragment,
            Some((base, fragment)) if root.get("$id").and_then(Value::as_str) == Some(base) => {
                fragment
            }
            _ => return None,
        };
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return None;
        }
        root.pointer(fragment)
            .map(|schema| Loc::new(schema, fragment.to_owned()))
    }

    /// Follows a schema that is only a `$ref` (plus annotations), repeatedly.
    pub(super) fn deref(&self, side: Side, mut loc: Loc<'a>) -> Loc<'a> {
        for _ in 0..64 {
            let Some(obj) = loc.obj() else { return loc };
            let Some(reference) = obj.get("$ref").and_then(Value::as_str) else {
                return loc;
            };
            let only_ref = obj
                .keys()
                .all(|k| k == "$ref" || ANNOTATIONS.contains(&k.as_str()));
            if !only_ref {
                return loc;
            }
            match self.resolve(side, reference) {
                Some(target) => loc = target,
                None => return loc,
            }
        }
        loc
    }

    /// Compares two schemas. `tag` says that they are the schemas of a property both sides
    /// require, whose `const` is then a union tag.
    pub(super) fn cmp(&mut self, old: Loc<'a>, new: Loc<'a>, path: &str, tag: bool) {
        let old = self.deref(Side::Old, old);
        let new = self.deref(Side::New, new);
        if (self.same_roots && old.ptr == new.ptr)
            || !self.visited.insert((old.ptr.clone(), new.ptr.clone()))
        {
            return;
        }
        let pair = Pair {
            old: &old,
            new: &new,
            path,
        };
        if self.depth >= MAX_DEPTH {
            let detail = format!("the schemas nest deeper than {MAX_DEPTH} levels here");
            return self.fire(Rule::TooDeep, pair.at(), detail, BOTH);
        }
        self.depth += 1;
        self.cmp_pair(pair, tag);
        self.depth -= 1;
    }

    fn cmp_pair(&mut self, pair: Pair<'a, '_>, tag: bool) {
        let (old, new) = (pair.old, pair.new);
        match (old.is_false(), new.is_false()) {
            (true, true) => return,
            (true, false) => {
                let detail = "OLD accepted nothing here; NEW accepts values".to_owned();
                return self.fire(Rule::SchemaWidened, pair.at(), detail, FORWARD);
            }
            (false, true) => {
                let detail = "NEW accepts nothing here".to_owned();
                return self.fire(Rule::SchemaNarrowed, pair.at(), detail, BACKWARD);
            }
            (false, false) => {}
        }
        match self.cmp_unions(pair) {
            None => self.cmp_keywords(pair, tag, false),
            // Both are unions: the keywords beside them too.
            Some(true) => self.cmp_keywords(pair, tag, true),
            Some(false) => {}
        }
    }

    /// Compares the keywords of two non-union schemas (or, with `skip_unions`, the keywords
    /// beside the unions of two union schemas), family by family.
    fn cmp_keywords(&mut self, pair: Pair<'a, '_>, tag: bool, skip_unions: bool) {
        let (o, n) = pair.keywords();
        self.cmp_values(pair, tag);
        if !skip_unions || o.contains_key("type") || n.contains_key("type") {
            self.cmp_types(pair);
        }
        if ["properties", "required", "additionalProperties"]
            .iter()
            .any(|k| o.contains_key(*k) || n.contains_key(*k))
        {
            self.cmp_object(pair);
        }
        if o.contains_key("items") || n.contains_key("items") {
            let items = |loc: &Loc<'a>| {
                loc.get("items").map_or_else(
                    || Loc::new(trivial(), join(&loc.ptr, &["items"])),
                    |i| loc.child(i, &["items"]),
                )
            };
            self.cmp(
                items(pair.old),
                items(pair.new),
                &path_join(pair.path, "*"),
                false,
            );
        }
        self.cmp_unique_items(pair);
        self.cmp_strings(pair);
        self.cmp_bounds(pair);
        self.cmp_ref(pair);
        self.cmp_unmodelled(pair);
    }

    /// A `$ref` beside other assertions: its target is compared when both sides can follow it.
    fn cmp_ref(&mut self, pair: Pair<'a, '_>) {
        let (o, n) = pair.keywords();
        match (
            o.get("$ref").and_then(Value::as_str),
            n.get("$ref").and_then(Value::as_str),
        ) {
            (Some(or), Some(nr)) => {
                match (self.resolve(Side::Old, or), self.resolve(Side::New, nr)) {
                    (Some(ot), Some(nt)) => self.cmp(ot, nt, pair.path, false),
                    _ if or != nr => {
                        let detail = format!("$ref {or} became {nr}");
                        self.fire(Rule::RefChanged, pair.at_keyword("$ref"), detail, BOTH);
                    }
                    _ => {}
                }
            }
            (None, None) => {}
            (or, nr) => {
                let detail = format!(
                    "$ref {} became {}",
                    or.unwrap_or("none"),
                    nr.unwrap_or("none")
                );
                self.fire(Rule::KeywordChanged, pair.at(), detail, BOTH);
            }
        }
    }
}
