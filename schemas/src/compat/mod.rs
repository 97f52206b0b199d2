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
//!
//! This module holds the public API. `walk` holds the walk itself (the dispatcher, `$ref`
//! following, `items`); each keyword family decides its own rules in its own module: `unions`
//! (`oneOf`/`anyOf` branches), `enums` (`enum`/`const`), `types`, `objects` (`properties`,
//! `required`, `additionalProperties`), `strings` (`pattern`/`format`), `ranges` (bounds,
//! `uniqueItems`) and `other` (every keyword not modelled).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

mod enums;
mod objects;
mod other;
mod ranges;
mod strings;
mod types;
mod unions;
mod walk;

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
    /// The schemas nest (through `$ref`s) deeper than the comparison follows; what lies below
    /// is taken as breaking both ways.
    TooDeep = "too-deep",
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
    walk::Walk::run(old, new)
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

#[cfg(test)]
mod tests;
