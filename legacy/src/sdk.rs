//! What the SDK of one wire version does with a file of its store: whether it loads the file at
//! all, and what its next save writes differently. `planrun check --sdk VERSION` is this, file
//! by file, so that a team can see what an SDK upgrade (or a step back) would do to its store.
//!
//! A run is judged by that version's reader, which agrees with the version's SDK on which runs
//! it loads (an older SDK loads some newer runs, and the other way round), after each of its
//! clarifications is taken as the class of the SDK's union that loads it (the union picks a
//! class by the keys, not by the category); a plan or an end user by the versions that load each
//! fact detection found. A save is predicted as planrun's re-emission of the file as that
//! version, with the [`SAVE_RULES`] applied: the places where the SDK's models fill in, leave out
//! or reorder what planrun keeps exactly as read. Every rule here was confirmed by loading and
//! saving files with the SDK of each version (the releases [`release`] names).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serde_json::Value;

use crate::clarification::{Category, Clarification, ClarificationRules};
use crate::detect::{facts_of, prefix_of, DocKind};
use crate::document::{normalizations, read_document, read_run_as};
use crate::json::{parse_value, ParseError};
use crate::version::Version::{self, *};
use crate::{LegacyDocument, Normalization, Output};

/// What the SDK's save does at a place where planrun's re-emission keeps the file as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Save {
    /// An absent key is written with this value (JSON text).
    Default(&'static str),
    /// A key the model does not have (or ignores) is not written.
    Drop,
    /// A list is written sorted.
    Sort,
    /// An absent id is generated: a new uuid with this prefix.
    Generate(&'static str),
    /// A clarification is written as the class of the SDK's union that loads it: that class's
    /// keys, its defaults, nothing else. Done before the run is read, as it decides what the
    /// run's reader sees.
    AsClass,
}

/// One place where the SDK of some versions writes a file differently from how it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SaveRule {
    /// The kind of document.
    pub kind: DocKind,
    /// The place: a JSON pointer in which `*` stands for every element or member.
    pub at: &'static str,
    /// The versions whose SDK does it.
    pub versions: &'static [Version],
    /// What it does.
    pub save: Save,
    /// Why, in the SDK's terms.
    pub why: &'static str,
}

const CLARIFICATION: &str = "/outputs/clarifications/*";

/// Every place where an SDK's save differs from planrun's exact re-emission, each confirmed by
/// loading and saving files with that version's SDK. Everything else the SDK writes by default
/// (a missing `state`, an execution context's missing keys, an end user's missing `name`) or
/// ignores (an execution context's unknown keys) planrun's reader of that version already
/// writes or leaves out the same way.
pub const SAVE_RULES: [SaveRule; 14] = [
    SaveRule {
        kind: DocKind::Run,
        at: "/id",
        versions: &[W1],
        save: Save::Generate("wkfl"),
        why: "Workflow.id has a default factory",
    },
    SaveRule {
        kind: DocKind::Run,
        at: "/id",
        versions: &[R0],
        save: Save::Generate("pr"),
        why: "PlanRun.id has a default factory",
    },
    SaveRule {
        kind: DocKind::Run,
        at: "/id",
        versions: &[R1, R2, R3, R4, R5, R6],
        save: Save::Generate("prun"),
        why: "PlanRun.id has a default factory",
    },
    SaveRule {
        kind: DocKind::Run,
        at: CLARIFICATION,
        versions: &Version::ALL,
        save: Save::AsClass,
        why: "the clarification union loads each clarification as the class its keys fit",
    },
    SaveRule {
        kind: DocKind::Run,
        at: "/outputs/clarifications/*/id",
        versions: &Version::ALL,
        save: Save::Generate("clar"),
        why: "Clarification.id has a default factory",
    },
    SaveRule {
        kind: DocKind::Run,
        at: "/outputs/clarifications/*/plan_run_id",
        versions: &[R6],
        save: Save::Default("null"),
        why: "Clarification.plan_run_id defaults to None (v0.7.0+)",
    },
    SaveRule {
        kind: DocKind::Run,
        at: "/outputs/clarifications/*/source",
        versions: &[R6],
        save: Save::Default("null"),
        why: "Clarification.source defaults to None",
    },
    SaveRule {
        kind: DocKind::Plan,
        at: "/id",
        versions: &Version::ALL,
        save: Save::Generate("plan"),
        why: "Plan.id has a default factory",
    },
    SaveRule {
        kind: DocKind::Plan,
        at: "/plan_context/tool_ids",
        versions: &[R1, R2, R3, R4, R5, R6],
        save: Save::Sort,
        why: "PlanContext serializes tool_ids sorted (0.1.6+)",
    },
    SaveRule {
        kind: DocKind::Plan,
        at: "/steps/*/condition",
        versions: &[R1, R2, R3, R4, R5, R6],
        save: Save::Default("null"),
        why: "Step.condition defaults to None (0.1.8+)",
    },
    SaveRule {
        kind: DocKind::Plan,
        at: "/steps/*/inputs/*/value",
        versions: &[W1, R0, R1],
        save: Save::Default("null"),
        why: "Variable.value defaults to None (until 0.1.11)",
    },
    SaveRule {
        kind: DocKind::Plan,
        at: "/steps/*/inputs/*/value",
        versions: &[R2, R3, R4, R5, R6],
        save: Save::Drop,
        why: "Variable has no value from v0.1.12 and ignores it",
    },
    SaveRule {
        kind: DocKind::Plan,
        at: "/inputs",
        versions: &[R5],
        save: Save::Default("[]"),
        why: "Plan.inputs defaults to [] (v0.3.2)",
    },
    SaveRule {
        kind: DocKind::Plan,
        at: "/plan_inputs",
        versions: &[R6],
        save: Save::Default("[]"),
        why: "Plan.plan_inputs defaults to [] (v0.3.4+)",
    },
];

/// The release a version's SDK is judged as: the one whose models confirmed its rules. Most
/// versions were written by one release; R1 spans 0.1.0 – 0.1.11 and is judged as 0.1.10, R6
/// spans v0.3.4 – HEAD and is judged as HEAD.
pub fn release(version: Version) -> &'static str {
    match version {
        W1 => "0.0.1-alpha.50",
        R0 => "0.1.0-alpha",
        R1 => "0.1.10",
        R2 => "v0.1.12",
        R3 => "v0.2.0",
        R4 => "v0.3.0",
        R5 => "v0.3.2",
        R6 => "v0.9.0",
    }
}

/// Reads `--sdk`: `HEAD`, the name of a wire version (`R3`, in any case), or the release a
/// version is judged as (`v0.2.0` or `0.2.0`).
pub fn parse_sdk(text: &str) -> Result<Version, String> {
    if text.eq_ignore_ascii_case("head") {
        return Ok(Version::HEAD);
    }
    let bare = |release: &str| release.trim_start_matches('v').to_owned();
    let by_release = Version::ALL
        .into_iter()
        .find(|v| bare(release(*v)) == bare(text));
    Version::parse(text).or(by_release).ok_or_else(|| {
        let names: Vec<String> = Version::ALL
            .iter()
            .map(|v| format!("{v} ({})", release(*v)))
            .collect();
        format!(
            "{text:?} is not an SDK planrun knows: give HEAD, a wire version or its release: {}",
            names.join(", ")
        )
    })
}

/// How a verdict names the SDK: `HEAD` for R6, else its release (`v0.2.0`).
pub fn sdk_name(version: Version) -> &'static str {
    if version == Version::HEAD {
        "HEAD"
    } else {
        release(version)
    }
}

/// What the SDK of one version would do with a file of a store: not read it, fail to load it,
/// or load it and write it back changed on its next save.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verdict {
    /// Why the SDK never reads the file (end-user files before v0.3.0, agent-memory files
    /// before v0.1.12); `None` when it does.
    pub unread: Option<String>,
    /// Why the SDK fails to load the file; empty when it loads.
    pub fails: Vec<String>,
    /// What the SDK changes when it saves the file back (pointers into the file): lenient
    /// spellings written canonically, defaults filled in, ignored keys left out. Empty for a
    /// file it fails to load.
    pub changes: Vec<Normalization>,
}

/// A plan as the SDK of `sdk` writes it back after loading it (`model_dump_json(indent=4)` of
/// its `Plan`, as a tree for [`crate::json::to_sdk_json`]); `None` when that SDK does not load
/// it. In a store with a history, a plan a later release saved again holds this.
pub fn plan_as_saved(src: &[u8], sdk: Version) -> Option<Value> {
    let input = parse_value(src).ok()?;
    let (kind, evidence) = facts_of(src, &input).ok()?;
    if kind != DocKind::Plan || evidence.iter().any(|e| !e.loads.contains(sdk)) {
        return None;
    }
    let (document, _) = read_document(src, &input, kind, sdk).ok()?;
    let mut saved = serde_json::to_value(&document).expect("documents are JSON");
    apply(&mut saved, kind, sdk);
    Some(saved)
}

/// Judges the bytes of a store file as the SDK of `sdk` would load them: a run with its
/// `PlanRun` (`Workflow` in W1), a plan with its `Plan` model and validators, an end user, and
/// an agent-memory file (which `DiskFileStorage` reads as a `LocalDataValue`). `in_run_dir` says
/// the file is `<run id>/<output name>.json`.
pub fn check(src: &[u8], in_run_dir: bool, sdk: Version) -> Verdict {
    let unreadable = |err: ParseError| Verdict {
        fails: vec![format!("not a document the SDK reads: {err}")],
        ..Verdict::default()
    };
    let input = match parse_value(src) {
        Ok(input) => input,
        Err(err) => return unreadable(err),
    };
    if input.as_object().is_some_and(|o| o.contains_key("plan_id")) {
        return check_run(src, &input, sdk);
    }
    let (kind, evidence) = match facts_of(src, &input) {
        Ok(facts) => facts,
        Err(err) => return unreadable(err),
    };
    let who = sdk_name(sdk);
    let agent_memory = kind == DocKind::Output && in_run_dir;
    if kind == DocKind::EndUser && sdk < R4 {
        return Verdict {
            unread: Some(format!(
                "{who} reads no end-user files (they begin at v0.3.0)"
            )),
            ..Verdict::default()
        };
    }
    if agent_memory && sdk < R2 {
        return Verdict {
            unread: Some(format!(
                "{who} keeps no agent memory (it begins at v0.1.12)"
            )),
            ..Verdict::default()
        };
    }
    let document = match read_document(src, &input, kind, sdk) {
        Ok((document, _)) => document,
        Err(err) => return unreadable(err),
    };
    let mut saved = serde_json::to_value(&document).expect("documents are JSON");
    apply(&mut saved, kind, sdk);
    let mut verdict = Verdict {
        changes: normalizations(&input, &saved),
        ..Verdict::default()
    };
    match &document {
        LegacyDocument::Output(Output::AgentMemory(_)) if agent_memory => verdict.fails.push(
            "an agent-memory file must hold the value (a LocalDataValue), not another reference"
                .to_owned(),
        ),
        LegacyDocument::Plan(_) | LegacyDocument::EndUser(_) => {
            let model = if kind == DocKind::Plan {
                "Plan"
            } else {
                "EndUser"
            };
            verdict.fails = evidence
                .iter()
                .filter(|e| !e.loads.contains(sdk))
                .map(|e| format!("{}: {who}'s {model} refuses {}", e.pointer, e.fact))
                .collect();
            if kind == DocKind::Plan && sdk <= R1 {
                // Variable forbids unknown keys until v0.1.12; planrun's reader drops them.
                verdict
                    .fails
                    .extend(verdict.changes.iter().filter_map(|c| match c {
                        Normalization::Dropped { pointer, .. }
                            if matches(VARIABLE_KEY, pointer) =>
                        {
                            Some(format!("{pointer}: {who}'s Variable forbids this key"))
                        }
                        _ => None,
                    }));
            }
        }
        _ => {}
    }
    if !verdict.fails.is_empty() {
        verdict.changes.clear();
    }
    verdict
}

/// A key of a plan step's input (a `Variable`).
const VARIABLE_KEY: &str = "/steps/*/inputs/*/*";

/// Whether `pointer` is one `pattern` (a pointer with `*` for any token) names.
fn matches(pattern: &str, pointer: &str) -> bool {
    let (mut p, mut q) = (pattern.split('/'), pointer.split('/'));
    loop {
        match (p.next(), q.next()) {
            (None, None) => return true,
            (Some(a), Some(b)) if a == "*" || a == b => {}
            _ => return false,
        }
    }
}

/// A run: its top-level keys against the version's model; its clarifications as the version's
/// union loads them; then the version's reader; then (R0 and R1 share one reader) the version's
/// own run-id prefix.
fn check_run(src: &[u8], input: &Value, sdk: Version) -> Verdict {
    let who = sdk_name(sdk);
    let model = if sdk == W1 { "Workflow" } else { "PlanRun" };
    // Which versions wrote the run is said only when it fails (detection reads it again).
    let fail = |why: String| {
        let written = match crate::detect(src) {
            Ok(detection) => format!(
                "written as {} (SDK {})",
                detection.versions,
                detection.versions.releases()
            ),
            Err(err) => format!("written by no one SDK version ({})", err.message),
        };
        Verdict {
            fails: vec![format!("{written}: {who}'s {model} {why}")],
            ..Verdict::default()
        }
    };
    let keys: Vec<&str> = input
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let (known, required) = run_keys(sdk);
    let mut clauses = Vec::new();
    if keys.contains(&"current_step_id") {
        clauses.push("forbids current_step_id (it names the step current_step_index)".to_owned());
    }
    let forbidden: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| *k != "current_step_id" && !known.contains(*k))
        .collect();
    if !forbidden.is_empty() {
        clauses.push(format!("forbids {}", forbidden.join(", ")));
    }
    let missing: Vec<&str> = required
        .iter()
        .map(String::as_str)
        .filter(|k| !keys.contains(k))
        .collect();
    if !missing.is_empty() {
        clauses.push(format!("requires {}", missing.join(", ")));
    }
    let prefix = prefix_of(input.get("id").and_then(Value::as_str));
    if !clauses.is_empty() {
        let mut why = clauses.join(" and ");
        if sdk == Version::HEAD && prefix.is_some_and(|p| p != "prun") {
            why.push_str(&format!(
                "; its id prefix {}- is not prun-, so get_plan_runs() does not even list it",
                prefix.unwrap_or_default()
            ));
        }
        return fail(why);
    }
    let mut loaded = input.clone();
    let list = loaded
        .pointer_mut("/outputs/clarifications")
        .and_then(Value::as_array_mut);
    for (i, clarification) in list.into_iter().flatten().enumerate() {
        let Some(obj) = clarification.as_object_mut() else {
            continue;
        };
        if let Err(why) = load_as_class(obj, sdk) {
            return fail(format!("refuses /outputs/clarifications/{i}: {why}"));
        }
    }
    let run = match read_run_as(src, &loaded, sdk) {
        Ok(run) => run,
        Err(err) => {
            return fail(format!(
                "refuses {}: {}",
                pointer_text(&err.pointer),
                err.message
            ))
        }
    };
    let own = sdk.run_prefix().as_str();
    let mut prefixes = vec![("/id".to_owned(), prefix)];
    if let Some(list) = input
        .pointer("/outputs/clarifications")
        .and_then(Value::as_array)
    {
        let key = ClarificationRules::of(sdk).run_ref.as_str();
        for (i, clarification) in list.iter().enumerate() {
            prefixes.push((
                format!("/outputs/clarifications/{i}/{key}"),
                prefix_of(clarification.get(key).and_then(Value::as_str)),
            ));
        }
    }
    if let Some((pointer, Some(other))) = prefixes
        .into_iter()
        .find(|(_, p)| p.is_some_and(|p| p != own))
    {
        return fail(format!(
            "refuses {pointer}: prefix {other:?} does not match the expected prefix {own:?}"
        ));
    }
    let mut saved = serde_json::to_value(&run).expect("documents are JSON");
    apply(&mut saved, DocKind::Run, sdk);
    Verdict {
        changes: normalizations(input, &saved),
        ..Verdict::default()
    }
}

fn pointer_text(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the run"
    } else {
        pointer
    }
}

/// The top-level keys of a version's run model, and those it requires, from its published
/// schema (which states exactly what its reader accepts).
fn run_keys(version: Version) -> &'static (BTreeSet<String>, Vec<String>) {
    static KEYS: OnceLock<Vec<(BTreeSet<String>, Vec<String>)>> = OnceLock::new();
    let all = KEYS.get_or_init(|| {
        let schemas = crate::schemas();
        Version::ALL
            .iter()
            .map(|v| {
                let file = crate::schema_file(DocKind::Run, *v);
                let schema = &schemas
                    .iter()
                    .find(|(name, _)| *name == file)
                    .expect("every version has a run schema")
                    .1;
                let known = schema["properties"]
                    .as_object()
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default();
                let required = schema["required"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|k| k.as_str().map(str::to_owned))
                    .collect();
                (known, required)
            })
            .collect()
    });
    &all[version as usize]
}

/// Applies the save rules of `sdk` for documents of `kind` to `tree`, planrun's re-emission of
/// the file.
fn apply(tree: &mut Value, kind: DocKind, sdk: Version) {
    for rule in SAVE_RULES
        .iter()
        .filter(|r| r.kind == kind && r.versions.contains(&sdk))
    {
        if rule.save == Save::AsClass {
            // Done before the run was read (`load_as_class`).
            continue;
        }
        let (parent, key) = rule.at.rsplit_once('/').unwrap_or(("", rule.at));
        let tokens: Vec<&str> = parent.split('/').skip(1).collect();
        each(tree, &tokens, &mut |node| {
            let Some(obj) = node.as_object_mut() else {
                return;
            };
            match rule.save {
                Save::Default(value) => {
                    if !obj.contains_key(key) {
                        let value = serde_json::from_str(value).expect("defaults are JSON");
                        obj.insert(key.to_owned(), value);
                    }
                }
                Save::Drop => {
                    obj.shift_remove(key);
                }
                Save::Sort => {
                    if let Some(Value::Array(list)) = obj.get_mut(key) {
                        if list.iter().all(Value::is_string) {
                            list.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
                        }
                    }
                }
                Save::Generate(prefix) => {
                    if !obj.contains_key(key) {
                        obj.insert(key.to_owned(), format!("{prefix}-<a new uuid>").into());
                    }
                }
                Save::AsClass => {}
            }
        });
    }
}

/// Calls `visit` on every node `tokens` reach from `node`, `*` standing for every child.
fn each(node: &mut Value, tokens: &[&str], visit: &mut dyn FnMut(&mut Value)) {
    let Some((first, rest)) = tokens.split_first() else {
        visit(node);
        return;
    };
    match (node, *first) {
        (Value::Array(list), "*") => list.iter_mut().for_each(|n| each(n, rest, visit)),
        (Value::Object(obj), "*") => obj.values_mut().for_each(|n| each(n, rest, visit)),
        (Value::Object(obj), key) => {
            if let Some(child) = obj.get_mut(key) {
                each(child, rest, visit);
            }
        }
        _ => {}
    }
}

/// The JSON a clarification class's own key takes, as the SDK validates it from a JSON file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyType {
    /// A string.
    Str,
    /// pydantic's `HttpUrl`: an `http`/`https` URL with a host.
    Url,
    /// A list.
    List,
    /// An object.
    Dict,
    /// A boolean, in pydantic's lax spellings too.
    Bool,
}

/// A key a clarification class declares besides the base class's.
#[derive(Debug, Clone, Copy)]
struct OwnKey {
    key: &'static str,
    ty: KeyType,
    /// Written when absent (JSON text); `None` when the class requires the key.
    default: Option<&'static str>,
    /// The first version whose class has the key.
    since: Version,
}

/// A class of the SDK's clarification union.
#[derive(Debug, Clone, Copy)]
struct ClarificationClass {
    name: &'static str,
    /// The category it writes when the file has none; the base class requires one.
    category: Option<Category>,
    own: &'static [OwnKey],
    /// The first version whose union has it.
    since: Version,
    /// Its model validator: whether it accepts the clarification.
    validator: fn(&serde_json::Map<String, Value>) -> bool,
}

fn accepts_any(_: &serde_json::Map<String, Value>) -> bool {
    true
}

/// `MultipleChoiceClarification.validate_response`: a resolved clarification's response is one
/// of the options.
fn response_is_an_option(obj: &serde_json::Map<String, Value>) -> bool {
    let resolved = obj
        .get("resolved")
        .is_some_and(|r| crate::scalar::bool_from_value(r) == Ok(true));
    let response = obj.get("response").unwrap_or(&Value::Null);
    let options = obj.get("options").and_then(Value::as_array);
    !resolved || options.is_some_and(|o| o.iter().any(|x| py_eq(x, response)))
}

/// `UserVerificationClarification.validate_response`: the response is a boolean or None.
fn response_is_a_bool(obj: &serde_json::Map<String, Value>) -> bool {
    matches!(
        obj.get("response"),
        None | Some(Value::Null | Value::Bool(_))
    )
}

const fn required(key: &'static str, ty: KeyType) -> OwnKey {
    OwnKey {
        key,
        ty,
        default: None,
        since: W1,
    }
}

/// The SDK's `ClarificationType` union, in its order, in every version: the base class first.
/// `UserVerificationClarification` (v0.4.0+) declares no key of its own, so it only wins over
/// the base class, before it in the union, for a clarification without a category.
const CLASSES: [ClarificationClass; 7] = [
    ClarificationClass {
        name: "Clarification",
        category: None,
        own: &[],
        since: W1,
        validator: accepts_any,
    },
    ClarificationClass {
        name: "InputClarification",
        category: Some(Category::Input),
        own: &[required("argument_name", KeyType::Str)],
        since: W1,
        validator: accepts_any,
    },
    ClarificationClass {
        name: "ActionClarification",
        category: Some(Category::Action),
        own: &[
            required("action_url", KeyType::Url),
            OwnKey {
                key: "require_confirmation",
                ty: KeyType::Bool,
                default: Some("false"),
                since: R4,
            },
        ],
        since: W1,
        validator: accepts_any,
    },
    ClarificationClass {
        name: "MultipleChoiceClarification",
        category: Some(Category::MultipleChoice),
        own: &[
            required("argument_name", KeyType::Str),
            required("options", KeyType::List),
        ],
        since: W1,
        validator: response_is_an_option,
    },
    ClarificationClass {
        name: "ValueConfirmationClarification",
        category: Some(Category::ValueConfirmation),
        own: &[required("argument_name", KeyType::Str)],
        since: W1,
        validator: accepts_any,
    },
    ClarificationClass {
        name: "UserVerificationClarification",
        category: Some(Category::UserVerification),
        own: &[],
        since: R6,
        validator: response_is_a_bool,
    },
    ClarificationClass {
        name: "CustomClarification",
        category: Some(Category::Custom),
        own: &[
            required("name", KeyType::Str),
            OwnKey {
                key: "data",
                ty: KeyType::Dict,
                default: Some("{}"),
                since: W1,
            },
        ],
        since: W1,
        validator: accepts_any,
    },
];

/// Whether the base `Clarification` of a version has `key`: its run reference by that version's
/// name, and `source` from v0.4.0 (so at HEAD, as R6 is judged).
fn is_base_key(key: &str, sdk: Version) -> bool {
    match key {
        "id" | "category" | "response" | "step" | "user_guidance" | "resolved" => true,
        "source" => sdk == R6,
        other => other == ClarificationRules::of(sdk).run_ref.as_str(),
    }
}

/// The class pydantic's smart union loads a clarification as, in `sdk`: of the classes that
/// validate, the one with the most of its own keys set, then the one that needed no lax
/// coercion, then the first; whatever `category` says.
fn sdk_class(
    obj: &serde_json::Map<String, Value>,
    sdk: Version,
) -> Option<&'static ClarificationClass> {
    let mut best: Option<(&ClarificationClass, usize, bool)> = None;
    for class in CLASSES.iter().filter(|c| c.since <= sdk) {
        let mut set = 0;
        let mut exact = true;
        let mut valid = class.category.is_some() || obj.contains_key("category");
        for own in class.own.iter().filter(|k| k.since <= sdk) {
            match obj.get(own.key) {
                Some(value) => match fits(own.ty, value) {
                    Some(strict) => {
                        set += 1;
                        exact &= strict;
                    }
                    None => valid = false,
                },
                None if own.default.is_none() => valid = false,
                None => {}
            }
        }
        if !valid || !(class.validator)(obj) {
            continue;
        }
        let better = match best {
            None => true,
            Some((_, best_set, best_exact)) => {
                set > best_set || (set == best_set && exact && !best_exact)
            }
        };
        if better {
            best = Some((class, set, exact));
        }
    }
    best.map(|(class, _, _)| class)
}

/// `Some(strict)` when `value` validates as `ty` (strict: with no lax coercion), else `None`.
fn fits(ty: KeyType, value: &Value) -> Option<bool> {
    match ty {
        KeyType::Str => value.is_string().then_some(true),
        KeyType::Url => value.as_str().and_then(http_url).map(|_| true),
        KeyType::List => value.is_array().then_some(true),
        KeyType::Dict => value.is_object().then_some(true),
        KeyType::Bool => match value {
            Value::Bool(_) => Some(true),
            other => crate::scalar::bool_from_value(other).ok().map(|_| false),
        },
    }
}

/// `text` as pydantic's `HttpUrl` writes it back, or `None` when it refuses it (not `http` or
/// `https`, no host). Scheme and host are lowercased, a default port is left out and an empty
/// path is written `/`; the rest of its WHATWG normalisation (percent-encoding, IDNA) is not
/// repeated here, so a URL that needs it is taken as written.
fn http_url(text: &str) -> Option<String> {
    let (scheme, rest) = text.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => "80",
        "https" => "443",
        _ => return None,
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (user, host_port) = match authority.rsplit_once('@') {
        Some((user, host_port)) => (Some(user), host_port),
        None => (None, authority),
    };
    let (host, port) = match host_port.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => (host, Some(port)),
        _ => (host_port, None),
    };
    if host.is_empty() || text.len() > 2083 {
        return None;
    }
    let mut out = format!("{scheme}://");
    if let Some(user) = user {
        out.push_str(user);
        out.push('@');
    }
    out.push_str(&host.to_ascii_lowercase());
    if let Some(port) = port.filter(|p| !p.is_empty() && *p != default_port) {
        out.push(':');
        out.push_str(port);
    }
    if !tail.starts_with('/') {
        out.push('/');
    }
    out.push_str(tail);
    Some(out)
}

/// Python's `==` on JSON values: numbers by value, `true == 1`, `false == 0`.
fn py_eq(a: &Value, b: &Value) -> bool {
    let number = |v: &Value| match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Number(n) => n.as_f64(),
        _ => None,
    };
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| py_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => match (number(a), number(b)) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        },
    }
}

/// Reads a clarification as the union of `sdk` loads it ([`sdk_class`]), so that the run's
/// reader sees what the SDK keeps: the base class's keys and the chosen class's, its defaults
/// (the class's own category when the file has none), lax values canonical. An error says why
/// no class loads it.
fn load_as_class(obj: &mut serde_json::Map<String, Value>, sdk: Version) -> Result<(), String> {
    let who = sdk_name(sdk);
    if let Some(category) = obj.get("category") {
        let known = Category::ALL
            .into_iter()
            .find(|c| Some(c.as_str()) == category.as_str());
        if !known.is_some_and(|c| has_category(sdk, c)) {
            return Err(format!(
                "its category {category} is not one of {who}'s ClarificationCategory"
            ));
        }
    }
    let class = sdk_class(obj, sdk).ok_or_else(|| {
        let names: Vec<&str> = CLASSES
            .iter()
            .filter(|c| c.since <= sdk)
            .map(|c| c.name)
            .collect();
        format!(
            "none of {who}'s {} loads it (a key it requires is missing or has the wrong type)",
            names.join(", ")
        )
    })?;
    let own: Vec<&OwnKey> = class.own.iter().filter(|k| k.since <= sdk).collect();
    obj.retain(|key, _| is_base_key(key, sdk) || own.iter().any(|k| k.key == key));
    if let Some(category) = class.category {
        if !obj.contains_key("category") {
            obj.insert("category".to_owned(), category.as_str().into());
        }
    }
    // The class's own keys after the base class's, in its order, as its dump writes them.
    for key in &own {
        if let Some(value) = obj.shift_remove(key.key) {
            obj.insert(key.key.to_owned(), value);
        }
    }
    for key in own {
        match obj.get_mut(key.key) {
            Some(value) if key.ty == KeyType::Bool => {
                if let Ok(b) = crate::scalar::bool_from_value(value) {
                    *value = Value::Bool(b);
                }
            }
            Some(value) if key.ty == KeyType::Url => {
                if let Some(url) = value.as_str().and_then(http_url) {
                    *value = Value::String(url);
                }
            }
            Some(_) => {}
            None => {
                if let Some(default) = key.default {
                    let value = serde_json::from_str(default).expect("defaults are JSON");
                    obj.insert(key.key.to_owned(), value);
                }
            }
        }
    }
    Ok(())
}

/// A clarification as the SDK of `sdk` saves one it loaded: as the class of its union that loads
/// it, with its defaults (at HEAD, `source` and an absent run reference written `null`). The
/// form of a clarification in a HEAD store; `None` when no class of the union loads it.
pub(crate) fn clarification_as_saved(
    clarification: &Clarification,
    sdk: Version,
) -> Option<Clarification> {
    let Ok(Value::Object(mut obj)) = serde_json::to_value(clarification) else {
        return None;
    };
    load_as_class(&mut obj, sdk).ok()?;
    if sdk == R6 {
        for key in ["plan_run_id", "source"] {
            obj.entry(key).or_insert(Value::Null);
        }
    }
    serde_json::from_value(Value::Object(obj)).ok()
}

/// Whether the `ClarificationCategory` of the release `sdk` is judged as has `category`: the
/// categories of its version, less `Argument` in R1, which is judged as 0.1.10.
fn has_category(sdk: Version, category: Category) -> bool {
    let (versions, _) = category.era();
    versions.contains(sdk) && !(sdk == R1 && category == Category::Argument)
}
