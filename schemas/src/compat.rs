//! Compatibility verdicts between two versions of a JSON Schema (draft 2020-12), in the meaning of
//! Confluent Schema Registry:
//!
//! * **BACKWARD**: consumers using NEW can read data written with OLD (every document OLD accepts,
//!   NEW accepts);
//! * **FORWARD**: consumers using OLD can read data written with NEW (every document NEW accepts,
//!   OLD accepts);
//! * **FULL**: both;
//! * **BREAKING**: neither.
//!
//! [`compare`] walks both schemas side by side (following local `$ref`s, matching `oneOf`/`anyOf`
//! branches by their tag) and lists every [`Rule`] that fired as a [`Finding`] with JSON pointers
//! into both schemas and the instance path it concerns. Each finding says which direction it
//! breaks: a change that makes the schema accept less breaks BACKWARD, one that makes it accept
//! more breaks FORWARD, one that does both (a changed tag, a changed pattern) breaks both. The
//! verdict is the conjunction over the findings. Keywords the walk does not model (`allOf`,
//! `not`, `if`, `patternProperties`, …) are compared as values, and any change to them is taken
//! to break both directions: the verdict errs on the side of BREAKING, never of compatible.
//! Annotations (`title`, `description`, `default`, `examples`, `$comment`, …) are ignored.
//!
//! [`compare_paths`] compares two files, or two directories file by file (matched by relative
//! name; a `releases/` directory, where archived copies live, is not part of a schema set).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

/// A compatibility verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Compatibility {
    /// Both BACKWARD and FORWARD.
    Full,
    /// Consumers using NEW can read data written with OLD.
    Backward,
    /// Consumers using OLD can read data written with NEW.
    Forward,
    /// Neither.
    Breaking,
}

impl Compatibility {
    /// The verdict over a set of findings.
    pub fn of<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Self {
        let (mut backward, mut forward) = (true, true);
        for finding in findings {
            backward &= !finding.breaks_backward;
            forward &= !finding.breaks_forward;
        }
        match (backward, forward) {
            (true, true) => Compatibility::Full,
            (true, false) => Compatibility::Backward,
            (false, true) => Compatibility::Forward,
            (false, false) => Compatibility::Breaking,
        }
    }

    /// Whether this verdict meets a requirement.
    pub fn satisfies(self, required: Requirement) -> bool {
        match required {
            Requirement::Backward => matches!(self, Compatibility::Full | Compatibility::Backward),
            Requirement::Forward => matches!(self, Compatibility::Full | Compatibility::Forward),
            Requirement::Full => self == Compatibility::Full,
        }
    }
}

impl fmt::Display for Compatibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compatibility::Full => "FULL",
            Compatibility::Backward => "BACKWARD",
            Compatibility::Forward => "FORWARD",
            Compatibility::Breaking => "BREAKING",
        })
    }
}

/// The compatibility a caller requires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Requirement {
    /// BACKWARD or FULL.
    Backward,
    /// FORWARD or FULL.
    Forward,
    /// FULL.
    Full,
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Requirement::Backward => "backward",
            Requirement::Forward => "forward",
            Requirement::Full => "full",
        })
    }
}

macro_rules! rules {
    ($($(#[doc = $doc:literal])* $variant:ident = $id:literal,)*) => {
        /// A rule of the comparison; each finding names the one that fired.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Rule {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Rule {
            /// Every rule, in the order they are documented.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant,)*];

            /// The rule's stable id (kebab-case), as printed and in JSON.
            pub fn id(self) -> &'static str {
                match self {
                    $(Rule::$variant => $id,)*
                }
            }
        }
    };
}

rules! {
    /// A schema file that only NEW has (informational: no data was written with it before).
    SchemaAdded = "schema-added",
    /// A schema file that only OLD has: NEW cannot read the data OLD described.
    SchemaRemoved = "schema-removed",
    /// The schema became `false` (accepts nothing).
    SchemaNarrowed = "schema-narrowed",
    /// The schema was `false` (accepted nothing) and now accepts something.
    SchemaWidened = "schema-widened",
    /// A property OLD declared is gone from NEW's `properties`.
    PropertyRemoved = "property-removed",
    /// NEW declares an optional property OLD did not.
    PropertyAdded = "property-added",
    /// NEW declares a property OLD did not, and requires it.
    RequiredPropertyAdded = "required-property-added",
    /// A property OLD declared as optional is required in NEW.
    PropertyMadeRequired = "property-made-required",
    /// A property OLD required is optional in NEW.
    PropertyMadeOptional = "property-made-optional",
    /// NEW accepts fewer JSON types than OLD.
    TypeNarrowed = "type-narrowed",
    /// NEW accepts more JSON types than OLD.
    TypeWidened = "type-widened",
    /// An `enum` (or `const`, or `oneOf` of consts) value OLD accepted is gone.
    EnumValueRemoved = "enum-value-removed",
    /// NEW accepts an `enum` value OLD did not.
    EnumValueAdded = "enum-value-added",
    /// NEW restricts to a set of values where OLD accepted any value of the type.
    EnumIntroduced = "enum-introduced",
    /// NEW accepts any value of the type where OLD restricted to a set of values.
    EnumDropped = "enum-dropped",
    /// The `const` of a required property (a union tag such as `type` or `kind`) changed.
    TagConstChanged = "tag-const-changed",
    /// A `const` changed.
    ConstChanged = "const-changed",
    /// NEW requires a `pattern` where OLD had none.
    PatternAdded = "pattern-added",
    /// NEW drops OLD's `pattern`.
    PatternRemoved = "pattern-removed",
    /// The `pattern` changed (taken as breaking both ways: regular languages are not compared).
    PatternChanged = "pattern-changed",
    /// NEW requires a `format` where OLD had none.
    FormatAdded = "format-added",
    /// NEW drops OLD's `format`.
    FormatRemoved = "format-removed",
    /// The `format` changed.
    FormatChanged = "format-changed",
    /// `additionalProperties` accepts less (`true` → a schema or `false`, a schema → `false`).
    AdditionalPropertiesTightened = "additional-properties-tightened",
    /// `additionalProperties` accepts more (`false` → a schema or `true`, a schema → `true`).
    AdditionalPropertiesLoosened = "additional-properties-loosened",
    /// A `oneOf` branch OLD had matches no branch of NEW.
    OneOfBranchRemoved = "oneof-branch-removed",
    /// NEW has a `oneOf` branch that matches no branch of OLD.
    OneOfBranchAdded = "oneof-branch-added",
    /// An `anyOf` branch OLD had (e.g. `null` of a nullable value) matches no branch of NEW.
    AnyOfBranchRemoved = "anyof-branch-removed",
    /// NEW has an `anyOf` branch (e.g. `null`: the value became nullable) OLD did not.
    AnyOfBranchAdded = "anyof-branch-added",
    /// A bound (`minimum`, `maxLength`, `minItems`, …) accepts less.
    RangeNarrowed = "range-narrowed",
    /// A bound accepts more.
    RangeWidened = "range-widened",
    /// NEW requires `uniqueItems` where OLD did not.
    UniqueItemsAdded = "unique-items-added",
    /// NEW drops OLD's `uniqueItems`.
    UniqueItemsRemoved = "unique-items-removed",
    /// A `$ref` that cannot be followed (not local) names another schema.
    RefChanged = "ref-changed",
    /// A keyword the comparison does not model (`allOf`, `not`, `if`, …) changed; taken as
    /// breaking both ways.
    KeywordChanged = "keyword-changed",
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

/// One rule that fired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The rule.
    pub rule: Rule,
    /// Where in the documents (an instance path: `*` stands for any array item or map value).
    pub path: String,
    /// JSON pointer into the OLD schema (the parent, when the thing is new).
    pub old: String,
    /// JSON pointer into the NEW schema (the parent, when the thing is gone).
    pub new: String,
    /// What changed, in words.
    pub detail: String,
    /// Whether NEW rejects some document OLD accepts.
    pub breaks_backward: bool,
    /// Whether OLD rejects some document NEW accepts.
    pub breaks_forward: bool,
}

impl Finding {
    /// `breaks backward`, `breaks forward`, `breaks both` or `no break`.
    pub fn breaks(&self) -> &'static str {
        match (self.breaks_backward, self.breaks_forward) {
            (true, true) => "breaks both",
            (true, false) => "breaks backward",
            (false, true) => "breaks forward",
            (false, false) => "no break",
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {} ({}): {} [old #{}, new #{}]",
            self.rule,
            if self.path.is_empty() {
                "/"
            } else {
                &self.path
            },
            self.breaks(),
            self.detail,
            self.old,
            self.new
        )
    }
}

/// Compares two schemas; returns every rule that fired, in walk order.
pub fn compare(old: &Value, new: &Value) -> Vec<Finding> {
    let mut walk = Walk {
        old_root: old,
        new_root: new,
        findings: Vec::new(),
        visited: HashSet::new(),
    };
    walk.cmp(
        Loc::new(old, String::new()),
        Loc::new(new, String::new()),
        "",
        false,
    );
    walk.findings
}

/// How a file of a schema set changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileChange {
    /// In both sets, compared.
    Compared,
    /// Only in NEW.
    Added,
    /// Only in OLD.
    Removed,
}

/// The comparison of one file.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    /// The relative file name (the file name, when two files were compared).
    pub file: String,
    /// How it changed.
    pub change: FileChange,
    /// The verdict for this file.
    pub verdict: Compatibility,
    /// The rules that fired.
    pub findings: Vec<Finding>,
}

/// The comparison of two schema sets.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The verdict over every file.
    pub verdict: Compatibility,
    /// Every file, sorted by name.
    pub files: Vec<FileReport>,
}

impl Report {
    /// Every finding of every file, with its file.
    pub fn findings(&self) -> impl Iterator<Item = (&str, &Finding)> {
        self.files
            .iter()
            .flat_map(|f| f.findings.iter().map(move |x| (f.file.as_str(), x)))
    }

    /// The report as text: one line per file and per finding, then the verdict.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for file in &self.files {
            let what = match file.change {
                FileChange::Compared if file.findings.is_empty() => " (no change)",
                FileChange::Compared => "",
                FileChange::Added => " (added)",
                FileChange::Removed => " (removed)",
            };
            out.push_str(&format!("{}: {}{what}\n", file.file, file.verdict));
            for finding in &file.findings {
                out.push_str(&format!("  - {finding}\n"));
            }
        }
        out.push_str(&format!("verdict: {}\n", self.verdict));
        out
    }
}

/// Compares two schema sets given as `(relative name, schema)`.
pub fn compare_sets(old: &[(String, Value)], new: &[(String, Value)]) -> Report {
    let old_map: BTreeMap<&str, &Value> = old.iter().map(|(n, v)| (n.as_str(), v)).collect();
    let new_map: BTreeMap<&str, &Value> = new.iter().map(|(n, v)| (n.as_str(), v)).collect();
    let names: BTreeSet<&str> = old_map.keys().chain(new_map.keys()).copied().collect();
    let mut files = Vec::new();
    for name in names {
        let (change, findings) = match (old_map.get(name), new_map.get(name)) {
            (Some(o), Some(n)) => (FileChange::Compared, compare(o, n)),
            (Some(_), None) => (
                FileChange::Removed,
                vec![Finding {
                    rule: Rule::SchemaRemoved,
                    path: String::new(),
                    old: String::new(),
                    new: String::new(),
                    detail: format!("{name} is no longer published"),
                    breaks_backward: true,
                    breaks_forward: false,
                }],
            ),
            (None, Some(_)) => (
                FileChange::Added,
                vec![Finding {
                    rule: Rule::SchemaAdded,
                    path: String::new(),
                    old: String::new(),
                    new: String::new(),
                    detail: format!("{name} is new"),
                    breaks_backward: false,
                    breaks_forward: false,
                }],
            ),
            (None, None) => continue,
        };
        files.push(FileReport {
            file: name.to_owned(),
            change,
            verdict: Compatibility::of(&findings),
            findings,
        });
    }
    let verdict = Compatibility::of(files.iter().flat_map(|f| &f.findings));
    Report { verdict, files }
}

/// Why two paths could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompatError {
    /// One path is a file and the other a directory, or a path does not exist.
    #[error("{0}")]
    Usage(String),
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A file is not JSON.
    #[error("{path} is not JSON: {message}")]
    NotJson {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
}

/// Compares two schema files, or two directories of them matched by relative file name.
pub fn compare_paths(old: &Path, new: &Path) -> Result<Report, CompatError> {
    match (old.is_dir(), new.is_dir()) {
        (true, true) => {
            let old_set = load_dir(old, new)?;
            let new_set = load_dir(new, old)?;
            if old_set.is_empty() && new_set.is_empty() {
                return Err(CompatError::Usage(format!(
                    "no .json file in {} or {}",
                    old.display(),
                    new.display()
                )));
            }
            Ok(compare_sets(&old_set, &new_set))
        }
        (false, false) => {
            let old_schema = load_file(old)?;
            let new_schema = load_file(new)?;
            let name = new
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            Ok(compare_sets(
                &[(name.clone(), old_schema)],
                &[(name, new_schema)],
            ))
        }
        _ => Err(CompatError::Usage(format!(
            "OLD and NEW must both be files or both be directories ({} is a {}, {} is a {})",
            old.display(),
            if old.is_dir() { "directory" } else { "file" },
            new.display(),
            if new.is_dir() { "directory" } else { "file" },
        ))),
    }
}

fn load_file(path: &Path) -> Result<Value, CompatError> {
    if !path.exists() {
        return Err(CompatError::Usage(format!(
            "{} does not exist",
            path.display()
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|source| CompatError::Io {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| CompatError::NotJson {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

/// Every `.json` file below `dir` by relative name (`/`-separated), skipping `releases/`
/// directories and the other side's directory when it lies inside this one.
fn load_dir(dir: &Path, other: &Path) -> Result<Vec<(String, Value)>, CompatError> {
    let other = other.canonicalize().ok();
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_owned(), String::new())];
    while let Some((path, rel)) = stack.pop() {
        let entries = std::fs::read_dir(&path).map_err(|source| CompatError::Io {
            path: path.clone(),
            source,
        })?;
        for entry in entries {
            let entry = entry.map_err(|source| CompatError::Io {
                path: path.clone(),
                source,
            })?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = entry.path();
            let child_rel = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if child.is_dir() {
                let skip =
                    name == "releases" || other.is_some() && child.canonicalize().ok() == other;
                if !skip {
                    stack.push((child, child_rel));
                }
            } else if name.ends_with(".json") {
                out.push((child_rel, load_file(&child)?));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// A schema and where it sits in its document.
#[derive(Clone)]
struct Loc<'a> {
    schema: &'a Value,
    ptr: String,
}

impl<'a> Loc<'a> {
    fn new(schema: &'a Value, ptr: String) -> Self {
        Loc { schema, ptr }
    }

    fn child(&self, schema: &'a Value, segments: &[&str]) -> Loc<'a> {
        Loc {
            schema,
            ptr: join(&self.ptr, segments),
        }
    }

    fn obj(&self) -> Option<&'a Map<String, Value>> {
        self.schema.as_object()
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.obj().and_then(|o| o.get(key))
    }

    fn is_false(&self) -> bool {
        self.schema == &Value::Bool(false)
    }
}

fn join(ptr: &str, segments: &[&str]) -> String {
    let mut out = ptr.to_owned();
    for segment in segments {
        out.push('/');
        out.push_str(&segment.replace('~', "~0").replace('/', "~1"));
    }
    out
}

fn path_join(path: &str, segment: &str) -> String {
    format!("{path}/{}", segment.replace('~', "~0").replace('/', "~1"))
}

/// Keywords that only annotate.
const ANNOTATIONS: &[&str] = &[
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

/// Keywords the walk compares itself.
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

const JSON_TYPES: &[&str] = &[
    "null", "boolean", "object", "array", "number", "integer", "string",
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

/// Whether a schema accepts every value (`true`, `{}` or annotations only).
fn is_trivial(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(obj) => obj.keys().all(|k| ANNOTATIONS.contains(&k.as_str())),
        _ => false,
    }
}

fn json_type(value: &Value) -> &'static str {
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
fn accepts(types: &BTreeSet<&'static str>, t: &str) -> bool {
    types.contains(t) || (t == "integer" && types.contains("number"))
}

/// The values a schema is restricted to by `const` or `enum`, if it is.
fn values_of(schema: &Map<String, Value>) -> Option<Vec<Value>> {
    let by_const = schema.get("const").map(|c| vec![c.clone()]);
    let by_enum = schema.get("enum").and_then(Value::as_array).cloned();
    match (by_const, by_enum) {
        (Some(c), Some(e)) => Some(c.into_iter().filter(|v| e.contains(v)).collect()),
        (c, e) => c.or(e),
    }
}

/// The JSON types a schema accepts at its own level (`type`, narrowed by `const`/`enum`);
/// `None` means any type.
fn types_of(schema: &Map<String, Value>) -> Option<BTreeSet<&'static str>> {
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

struct Walk<'a> {
    old_root: &'a Value,
    new_root: &'a Value,
    findings: Vec<Finding>,
    visited: HashSet<(String, String)>,
}

/// Which side of the comparison.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Old,
    New,
}

impl<'a> Walk<'a> {
    #[allow(clippy::too_many_arguments)]
    fn fire(
        &mut self,
        rule: Rule,
        path: &str,
        old: &str,
        new: &str,
        detail: String,
        breaks_backward: bool,
        breaks_forward: bool,
    ) {
        self.findings.push(Finding {
            rule,
            path: path.to_owned(),
            old: old.to_owned(),
            new: new.to_owned(),
            detail,
            breaks_backward,
            breaks_forward,
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
    fn deref(&self, side: Side, mut loc: Loc<'a>) -> Loc<'a> {
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

    /// The branches of a union (`oneOf`/`anyOf`), nested unions flattened; `None` when the
    /// schema is not a union. Also returns the keyword.
    fn branches(&self, side: Side, loc: &Loc<'a>) -> Option<(&'static str, Vec<Loc<'a>>)> {
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

    fn key(loc: &Loc<'a>) -> Key {
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

    /// Whether a branch only restricts values (`const`/`enum`, perhaps with `type`).
    fn is_value_set(loc: &Loc<'a>) -> bool {
        loc.obj().is_some_and(|o| {
            (o.contains_key("const") || o.contains_key("enum"))
                && o.keys().all(|k| {
                    matches!(k.as_str(), "const" | "enum" | "type")
                        || ANNOTATIONS.contains(&k.as_str())
                })
        })
    }

    /// Compares two schemas.
    fn cmp(&mut self, old: Loc<'a>, new: Loc<'a>, path: &str, tag: bool) {
        let old = self.deref(Side::Old, old);
        let new = self.deref(Side::New, new);
        if !self.visited.insert((old.ptr.clone(), new.ptr.clone())) {
            return;
        }
        match (old.is_false(), new.is_false()) {
            (true, true) => return,
            (true, false) => {
                let detail = "OLD accepted nothing here; NEW accepts values".to_owned();
                return self.fire(
                    Rule::SchemaWidened,
                    path,
                    &old.ptr,
                    &new.ptr,
                    detail,
                    false,
                    true,
                );
            }
            (false, true) => {
                let detail = "NEW accepts nothing here".to_owned();
                return self.fire(
                    Rule::SchemaNarrowed,
                    path,
                    &old.ptr,
                    &new.ptr,
                    detail,
                    true,
                    false,
                );
            }
            (false, false) => {}
        }
        let old_union = self.branches(Side::Old, &old);
        let new_union = self.branches(Side::New, &new);
        if old_union.is_some() || new_union.is_some() {
            let both = old_union.is_some() && new_union.is_some();
            let keyword_old = old_union.as_ref().map(|u| u.0);
            let keyword_new = new_union.as_ref().map(|u| u.0);
            let old_branches = old_union.map(|u| u.1).unwrap_or_else(|| vec![old.clone()]);
            let new_branches = new_union.map(|u| u.1).unwrap_or_else(|| vec![new.clone()]);
            self.cmp_union(
                (
                    &old,
                    keyword_old.or(keyword_new).unwrap_or("oneOf"),
                    old_branches,
                ),
                (
                    &new,
                    keyword_new.or(keyword_old).unwrap_or("oneOf"),
                    new_branches,
                ),
                path,
            );
            if both {
                self.cmp_keywords(&old, &new, path, tag, true);
            }
            return;
        }
        self.cmp_keywords(&old, &new, path, tag, false);
    }

    fn cmp_union(
        &mut self,
        (old, old_kw, old_branches): (&Loc<'a>, &'static str, Vec<Loc<'a>>),
        (new, new_kw, new_branches): (&Loc<'a>, &'static str, Vec<Loc<'a>>),
        path: &str,
    ) {
        let collect = |branches: &[Loc<'a>]| -> Vec<Value> {
            let mut values: Vec<Value> = Vec::new();
            for b in branches {
                for v in b.obj().and_then(values_of).unwrap_or_default() {
                    if !values.contains(&v) {
                        values.push(v);
                    }
                }
            }
            values
        };
        let old_set = old_branches.iter().all(Self::is_value_set);
        let new_set = new_branches.iter().all(Self::is_value_set);
        if old_set && new_set {
            let (old_values, new_values) = (collect(&old_branches), collect(&new_branches));
            self.cmp_values(old, new, &old_values, &new_values, path, false, false);
            return;
        }
        // An enum written as a union of consts on one side, a plain typed schema on the other.
        let plain = |branches: &[Loc<'a>]| -> Option<BTreeSet<&'static str>> {
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
        };
        if let (true, Some(types)) = (old_set, plain(&new_branches)) {
            let values = collect(&old_branches);
            let detail = format!(
                "OLD only accepted {}; NEW accepts any value of its type",
                show_all(&values)
            );
            self.fire(
                Rule::EnumDropped,
                path,
                &old.ptr,
                &new.ptr,
                detail,
                false,
                true,
            );
            for value in values.iter().filter(|v| !accepts(&types, json_type(v))) {
                let detail = format!("NEW no longer accepts {}", show(Some(value)));
                self.fire(
                    Rule::EnumValueRemoved,
                    path,
                    &old.ptr,
                    &new.ptr,
                    detail,
                    true,
                    false,
                );
            }
            return;
        }
        if let (Some(types), true) = (plain(&old_branches), new_set) {
            let values = collect(&new_branches);
            let detail = format!("NEW only accepts {}", show_all(&values));
            self.fire(
                Rule::EnumIntroduced,
                path,
                &old.ptr,
                &new.ptr,
                detail,
                true,
                false,
            );
            for value in values.iter().filter(|v| !accepts(&types, json_type(v))) {
                let detail = format!("NEW accepts {}, which OLD did not", show(Some(value)));
                self.fire(
                    Rule::EnumValueAdded,
                    path,
                    &old.ptr,
                    &new.ptr,
                    detail,
                    false,
                    true,
                );
            }
            return;
        }
        let old_keys: Vec<Key> = old_branches.iter().map(Self::key).collect();
        let new_keys: Vec<Key> = new_branches.iter().map(Self::key).collect();
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
                    describe_key(&old_keys[i])
                );
                self.fire(
                    rule_removed,
                    path,
                    &old_branches[i].ptr,
                    &new.ptr,
                    detail,
                    true,
                    false,
                );
            }
            for &j in &new_left {
                let detail = format!("NEW adds the branch {}", describe_key(&new_keys[j]));
                self.fire(
                    rule_added,
                    path,
                    &old.ptr,
                    &new_branches[j].ptr,
                    detail,
                    false,
                    true,
                );
            }
        }
        pairs.sort();
        for (i, j) in pairs {
            self.cmp(
                old_branches[i].clone(),
                new_branches[j].clone(),
                path,
                false,
            );
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn cmp_values(
        &mut self,
        old: &Loc<'a>,
        new: &Loc<'a>,
        old_values: &[Value],
        new_values: &[Value],
        path: &str,
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
                self.fire(
                    rule,
                    path,
                    &join(&old.ptr, &["const"]),
                    &join(&new.ptr, &["const"]),
                    detail,
                    true,
                    true,
                );
            }
            return;
        }
        for value in old_values.iter().filter(|v| !new_values.contains(v)) {
            let detail = format!("NEW no longer accepts {}", show(Some(value)));
            self.fire(
                Rule::EnumValueRemoved,
                path,
                &old.ptr,
                &new.ptr,
                detail,
                true,
                false,
            );
        }
        for value in new_values.iter().filter(|v| !old_values.contains(v)) {
            let detail = format!("NEW accepts {}, which OLD did not", show(Some(value)));
            self.fire(
                Rule::EnumValueAdded,
                path,
                &old.ptr,
                &new.ptr,
                detail,
                false,
                true,
            );
        }
    }

    /// Compares the keywords of two non-union schemas (or, with `skip_unions`, the keywords
    /// beside the unions of two union schemas).
    fn cmp_keywords(
        &mut self,
        old: &Loc<'a>,
        new: &Loc<'a>,
        path: &str,
        tag: bool,
        skip_unions: bool,
    ) {
        let empty = empty_map();
        let o = old.obj().unwrap_or(empty);
        let n = new.obj().unwrap_or(empty);

        // Values: const / enum.
        match (values_of(o), values_of(n)) {
            (Some(ov), Some(nv)) => {
                let both_const = o.contains_key("const")
                    && n.contains_key("const")
                    && !o.contains_key("enum")
                    && !n.contains_key("enum");
                self.cmp_values(old, new, &ov, &nv, path, both_const, tag);
            }
            (None, Some(nv)) => {
                let detail = format!("NEW only accepts {}", show_all(&nv));
                self.fire(
                    Rule::EnumIntroduced,
                    path,
                    &old.ptr,
                    &new.ptr,
                    detail,
                    true,
                    false,
                );
            }
            (Some(ov), None) => {
                let detail = format!("OLD only accepted {}; NEW accepts any value", show_all(&ov));
                self.fire(
                    Rule::EnumDropped,
                    path,
                    &old.ptr,
                    &new.ptr,
                    detail,
                    false,
                    true,
                );
            }
            (None, None) => {}
        }

        // Types.
        if !skip_unions || o.contains_key("type") || n.contains_key("type") {
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
            if !removed.is_empty() {
                let detail = format!(
                    "type {} became {}: {} no longer accepted",
                    show_types(&ot),
                    show_types(&nt),
                    removed.join(", ")
                );
                self.fire(
                    Rule::TypeNarrowed,
                    path,
                    &join(&old.ptr, &["type"]),
                    &join(&new.ptr, &["type"]),
                    detail,
                    true,
                    false,
                );
            }
            if !added.is_empty() {
                let detail = format!(
                    "type {} became {}: {} now accepted",
                    show_types(&ot),
                    show_types(&nt),
                    added.join(", ")
                );
                self.fire(
                    Rule::TypeWidened,
                    path,
                    &join(&old.ptr, &["type"]),
                    &join(&new.ptr, &["type"]),
                    detail,
                    false,
                    true,
                );
            }
        }

        // Objects.
        if ["properties", "required", "additionalProperties"]
            .iter()
            .any(|k| o.contains_key(*k) || n.contains_key(*k))
        {
            self.cmp_object(old, new, o, n, path);
        }

        // Arrays.
        if o.contains_key("items") || n.contains_key("items") {
            let items = |loc: &Loc<'a>, m: &'a Map<String, Value>| {
                m.get("items").map_or_else(
                    || Loc::new(self.trivial(), join(&loc.ptr, &["items"])),
                    |i| loc.child(i, &["items"]),
                )
            };
            let (oi, ni) = (items(old, o), items(new, n));
            self.cmp(oi, ni, &path_join(path, "*"), false);
        }
        let unique = |m: &Map<String, Value>| {
            m.get("uniqueItems")
                .and_then(Value::as_bool)
                .unwrap_or(false)
        };
        match (unique(o), unique(n)) {
            (false, true) => self.fire(
                Rule::UniqueItemsAdded,
                path,
                &old.ptr,
                &join(&new.ptr, &["uniqueItems"]),
                "NEW requires unique items".to_owned(),
                true,
                false,
            ),
            (true, false) => self.fire(
                Rule::UniqueItemsRemoved,
                path,
                &join(&old.ptr, &["uniqueItems"]),
                &new.ptr,
                "NEW allows repeated items".to_owned(),
                false,
                true,
            ),
            _ => {}
        }

        // Strings: pattern, format.
        for (keyword, added, removed, changed) in [
            (
                "pattern",
                Rule::PatternAdded,
                Rule::PatternRemoved,
                Rule::PatternChanged,
            ),
            (
                "format",
                Rule::FormatAdded,
                Rule::FormatRemoved,
                Rule::FormatChanged,
            ),
        ] {
            match (o.get(keyword), n.get(keyword)) {
                (None, Some(nv)) => self.fire(
                    added,
                    path,
                    &old.ptr,
                    &join(&new.ptr, &[keyword]),
                    format!("NEW requires {keyword} {nv}"),
                    true,
                    false,
                ),
                (Some(ov), None) => self.fire(
                    removed,
                    path,
                    &join(&old.ptr, &[keyword]),
                    &new.ptr,
                    format!("NEW drops {keyword} {ov}"),
                    false,
                    true,
                ),
                (Some(ov), Some(nv)) if ov != nv => self.fire(
                    changed,
                    path,
                    &join(&old.ptr, &[keyword]),
                    &join(&new.ptr, &[keyword]),
                    format!("{keyword} {ov} became {nv}"),
                    true,
                    true,
                ),
                _ => {}
            }
        }

        // Bounds.
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
            let (op, np) = (join(&old.ptr, &[keyword]), join(&new.ptr, &[keyword]));
            if narrowed {
                self.fire(Rule::RangeNarrowed, path, &op, &np, detail, true, false);
            } else {
                self.fire(Rule::RangeWidened, path, &op, &np, detail, false, true);
            }
        }

        // `$ref` beside other assertions.
        match (
            o.get("$ref").and_then(Value::as_str),
            n.get("$ref").and_then(Value::as_str),
        ) {
            (Some(or), Some(nr)) => {
                match (self.resolve(Side::Old, or), self.resolve(Side::New, nr)) {
                    (Some(ot), Some(nt)) => self.cmp(ot, nt, path, false),
                    _ if or != nr => self.fire(
                        Rule::RefChanged,
                        path,
                        &join(&old.ptr, &["$ref"]),
                        &join(&new.ptr, &["$ref"]),
                        format!("$ref {or} became {nr}"),
                        true,
                        true,
                    ),
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
                self.fire(
                    Rule::KeywordChanged,
                    path,
                    &old.ptr,
                    &new.ptr,
                    detail,
                    true,
                    true,
                );
            }
        }

        // Everything else, compared as values.
        let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
        for key in keys {
            let k = key.as_str();
            if ANNOTATIONS.contains(&k) || MODELLED.contains(&k) {
                continue;
            }
            let ov = o.get(k).map(strip);
            let nv = n.get(k).map(strip);
            if ov != nv {
                let detail = format!(
                    "`{k}` changed ({} → {}); not modelled, taken as breaking both ways",
                    ov.as_ref()
                        .map_or("absent".to_owned(), |v| shorten(&v.to_string())),
                    nv.as_ref()
                        .map_or("absent".to_owned(), |v| shorten(&v.to_string()))
                );
                self.fire(
                    Rule::KeywordChanged,
                    path,
                    &join(&old.ptr, &[k]),
                    &join(&new.ptr, &[k]),
                    detail,
                    true,
                    true,
                );
            }
        }
    }

    /// The `true` schema, standing for an absent `items` or `additionalProperties`.
    fn trivial(&self) -> &'static Value {
        static TRUE: Value = Value::Bool(true);
        &TRUE
    }

    fn cmp_object(
        &mut self,
        old: &Loc<'a>,
        new: &Loc<'a>,
        o: &'a Map<String, Value>,
        n: &'a Map<String, Value>,
        path: &str,
    ) {
        let empty = empty_map();
        let op = o
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(empty);
        let np = n
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(empty);
        let required = |m: &Map<String, Value>| -> BTreeSet<String> {
            m.get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        let (or, nr) = (required(o), required(n));
        let t = self.trivial();
        let o_ap = o.get("additionalProperties").map_or_else(
            || Loc::new(t, join(&old.ptr, &["additionalProperties"])),
            |ap| old.child(ap, &["additionalProperties"]),
        );
        let n_ap = n.get("additionalProperties").map_or_else(
            || Loc::new(t, join(&new.ptr, &["additionalProperties"])),
            |ap| new.child(ap, &["additionalProperties"]),
        );

        for (name, old_prop) in op {
            let prop_path = path_join(path, name);
            let old_loc = old.child(old_prop, &["properties", name]);
            if let Some(new_prop) = np.get(name) {
                let new_loc = new.child(new_prop, &["properties", name]);
                let is_tag = or.contains(name) && nr.contains(name);
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
            self.fire(
                Rule::PropertyRemoved,
                &prop_path,
                &old_loc.ptr,
                &join(&new.ptr, &["properties"]),
                detail,
                backward,
                forward,
            );
        }
        for (name, new_prop) in np {
            if op.contains_key(name) {
                continue;
            }
            let prop_path = path_join(path, name);
            let new_loc = new.child(new_prop, &["properties", name]);
            let is_required = nr.contains(name);
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
                (Rule::PropertyAdded, format!("NEW adds the optional property `{name}`, which OLD rejects (additionalProperties: false)"))
            } else {
                (
                    Rule::PropertyAdded,
                    format!("NEW constrains `{name}`, which OLD accepted with any value"),
                )
            };
            self.fire(
                rule,
                &prop_path,
                &join(&old.ptr, &["properties"]),
                &new_loc.ptr,
                detail,
                backward,
                forward,
            );
        }
        for name in nr.difference(&or) {
            if op.contains_key(name) && np.contains_key(name) {
                let detail = format!("`{name}` is required in NEW, optional in OLD");
                self.fire(
                    Rule::PropertyMadeRequired,
                    &path_join(path, name),
                    &join(&old.ptr, &["required"]),
                    &join(&new.ptr, &["required"]),
                    detail,
                    true,
                    false,
                );
            } else if !np.contains_key(name) {
                let detail = format!("NEW requires `{name}`, which OLD did not");
                self.fire(
                    Rule::PropertyMadeRequired,
                    &path_join(path, name),
                    &join(&old.ptr, &["required"]),
                    &join(&new.ptr, &["required"]),
                    detail,
                    true,
                    false,
                );
            }
        }
        for name in or.difference(&nr) {
            if np.contains_key(name) || !op.contains_key(name) {
                let detail = format!("`{name}` is optional in NEW, required in OLD");
                self.fire(
                    Rule::PropertyMadeOptional,
                    &path_join(path, name),
                    &join(&old.ptr, &["required"]),
                    &join(&new.ptr, &["required"]),
                    detail,
                    false,
                    true,
                );
            }
        }

        // additionalProperties itself.
        let (ot, nt) = (is_trivial(o_ap.schema), is_trivial(n_ap.schema));
        let (of, nf) = (o_ap.is_false(), n_ap.is_false());
        let values_path = path_join(path, "*");
        if ot && nt || of && nf {
            return;
        }
        if ot || nf {
            let detail = format!(
                "additionalProperties {} became {}",
                ap_text(o_ap.schema),
                ap_text(n_ap.schema)
            );
            self.fire(
                Rule::AdditionalPropertiesTightened,
                &values_path,
                &o_ap.ptr,
                &n_ap.ptr,
                detail,
                true,
                false,
            );
        } else if of || nt {
            let detail = format!(
                "additionalProperties {} became {}",
                ap_text(o_ap.schema),
                ap_text(n_ap.schema)
            );
            self.fire(
                Rule::AdditionalPropertiesLoosened,
                &values_path,
                &o_ap.ptr,
                &n_ap.ptr,
                detail,
                false,
                true,
            );
        } else {
            self.cmp(o_ap, n_ap, &values_path, false);
        }
    }
}

/// An empty object, standing for a boolean schema's keywords.
fn empty_map() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

fn ap_text(schema: &Value) -> &'static str {
    match schema {
        Value::Bool(true) => "true",
        Value::Bool(false) => "false",
        s if is_trivial(s) => "true",
        _ => "a schema",
    }
}

fn describe_key(key: &Key) -> String {
    match key {
        Key::Tag(name, value) => format!("{name} = {value}"),
        Key::Const(value) => format!("const {value}"),
        Key::Types(Some(types)) => format!(
            "of type {}",
            types.iter().copied().collect::<Vec<_>>().join(", ")
        ),
        Key::Types(None) => "of any type".to_owned(),
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

fn shorten(text: &str) -> String {
    const MAX: usize = 120;
    if text.chars().count() <= MAX {
        return text.to_owned();
    }
    let cut: String = text.chars().take(MAX).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests;
