//! Detection: what a document is, which versions could have written it, and why. Each fact found
//! in the file narrows the set of versions; facts that only hand-made files would break (a key the
//! SDK always writes) narrow it only when they agree with the rest.

use std::borrow::Cow;
use std::fmt;

use planrun_wire::join;
use serde::Serialize;
use serde_json::Value;

use crate::clarification::{Category, ClarificationRules, RunRefKey};
use crate::json::{escape_pointer_token, located, ErrorKind, Node, Object, ParseError};
use crate::plan::{first_repeated, validator_key};
use crate::version::{Version, VersionSet};
use Version::*;

/// What kind of document the bytes hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DocKind {
    /// A `Workflow`/`PlanRun`.
    Run,
    /// A legacy `Plan`.
    Plan,
    /// An `EndUser` file.
    EndUser,
    /// A stored output (`Output`/`LocalDataValue`/`AgentMemoryValue`), e.g. an agent-memory file.
    Output,
    /// A `ToolCallRecord`.
    ToolCall,
    /// A `Config`.
    Config,
    /// One `StepOutputValue` of a RunContext.
    StepOutputValue,
    /// A list of `StepOutputValue`s.
    StepOutputValues,
    /// The serialisable part of a legacy `RunContext`.
    RunContext,
}

impl DocKind {
    /// The kind's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            DocKind::Run => "run",
            DocKind::Plan => "plan",
            DocKind::EndUser => "end_user",
            DocKind::Output => "output",
            DocKind::ToolCall => "tool_call",
            DocKind::Config => "config",
            DocKind::StepOutputValue => "step_output_value",
            DocKind::StepOutputValues => "step_output_values",
            DocKind::RunContext => "run_context",
        }
    }
}

/// One fact about the document and the versions it allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// Where the fact was seen.
    pub pointer: Cow<'static, str>,
    /// The fact, in words.
    pub fact: Cow<'static, str>,
    /// The versions that write documents with this fact.
    pub versions: VersionSet,
    /// False when the fact disagreed with stronger evidence and was set aside.
    pub used: bool,
    /// The versions whose SDK loads a document with this fact. Most facts are kept by the
    /// model of the versions that write them and refused by the others (the SDK's models
    /// forbid unknown keys); a key a later model ignores loads in more versions than wrote it,
    /// and a soft fact (only hand-made files break it) refuses none.
    #[serde(skip)]
    pub loads: VersionSet,
}

/// The result of detection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Detection {
    /// What the document is.
    pub kind: DocKind,
    /// Every version that could have written it.
    pub versions: VersionSet,
    /// The facts behind `versions`.
    pub evidence: Vec<Evidence>,
}

impl Detection {
    /// The version the document is read and re-emitted as: the newest one the evidence allows.
    pub fn version(&self) -> Version {
        self.versions.newest().unwrap_or(Version::HEAD)
    }
}

impl Detection {
    /// The versions of `versions` whose SDK loads the document (every fact of it loads there).
    /// A run whose own keys allow several versions is judged with its plan: it was written by
    /// one that could load that plan, when one of them can; a plan saved again by a later
    /// release loads in none of them, and then the run's keys alone decide.
    pub fn loaded_by(&self, versions: VersionSet) -> VersionSet {
        VersionSet::matching(|v| {
            versions.contains(v) && self.evidence.iter().all(|e| e.loads.contains(v))
        })
    }
}

impl fmt::Display for Detection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind.as_str(), self.versions)?;
        let facts: Vec<&str> = self
            .evidence
            .iter()
            .filter(|e| e.used)
            .map(|e| &*e.fact)
            .collect();
        if !facts.is_empty() {
            write!(f, " ({})", facts.join("; "))?;
        }
        Ok(())
    }
}

/// Collects facts, hard (the SDK could not have written otherwise) and soft (only hand-made files
/// break them).
struct Facts<'a> {
    src: &'a [u8],
    hard: Vec<Evidence>,
    soft: Vec<Evidence>,
}

impl Facts<'_> {
    fn hard(
        &mut self,
        pointer: impl Into<Cow<'static, str>>,
        fact: impl Into<Cow<'static, str>>,
        versions: VersionSet,
    ) {
        self.hard_loading(pointer, fact, versions, versions);
    }

    /// A hard fact that more versions load than write (see [`Evidence::loads`]).
    fn hard_loading(
        &mut self,
        pointer: impl Into<Cow<'static, str>>,
        fact: impl Into<Cow<'static, str>>,
        versions: VersionSet,
        loads: VersionSet,
    ) {
        self.hard.push(Evidence {
            pointer: pointer.into(),
            fact: fact.into(),
            versions,
            used: true,
            loads,
        });
    }

    fn soft(
        &mut self,
        pointer: impl Into<Cow<'static, str>>,
        fact: impl Into<Cow<'static, str>>,
        versions: VersionSet,
    ) {
        self.soft.push(Evidence {
            pointer: pointer.into(),
            fact: fact.into(),
            versions,
            used: true,
            loads: VersionSet::ALL,
        });
    }

    fn conclude(self, kind: DocKind) -> Result<Detection, ParseError> {
        let mut versions = VersionSet::ALL;
        for (i, fact) in self.hard.iter().enumerate() {
            let narrowed = versions.intersect(fact.versions);
            if narrowed.is_empty() {
                let earlier: Vec<String> = self.hard[..i]
                    .iter()
                    .map(|e| format!("{} ({})", e.fact, e.versions))
                    .collect();
                return Err(located(
                    self.src,
                    fact.pointer.to_string(),
                    ErrorKind::Unrecognised,
                    format!(
                        "contradictory {}: {} says {}, but {} say {}",
                        kind.as_str(),
                        fact.fact,
                        fact.versions,
                        earlier.join(", "),
                        versions
                    ),
                ));
            }
            versions = narrowed;
        }
        let mut evidence = self.hard;
        for mut fact in self.soft {
            let narrowed = versions.intersect(fact.versions);
            if narrowed.is_empty() {
                fact.used = false;
            } else {
                versions = narrowed;
            }
            evidence.push(fact);
        }
        Ok(Detection {
            kind,
            versions,
            evidence,
        })
    }
}

fn all(first: Version, last: Version) -> VersionSet {
    VersionSet::range(first, last)
}

/// The versions from `first` to the newest one.
fn since(first: Version) -> VersionSet {
    VersionSet::since(first)
}

/// The newest version: a fact only the SDK at HEAD writes.
const HEAD: Version = Version::HEAD;

fn child(pointer: &str, key: &str) -> String {
    let token = escape_pointer_token(key);
    let mut child = String::with_capacity(pointer.len() + 1 + token.len());
    child.push_str(pointer);
    child.push('/');
    child.push_str(&token);
    child
}

/// Says what the document is and which versions could have written it.
pub(crate) fn detect_node(src: &[u8], tree: &Node) -> Result<Detection, ParseError> {
    let (kind, facts) = collect_facts(src, tree)?;
    facts.conclude(kind)
}

/// [`detect_node`] of a `Value`.
pub(crate) fn detect_tree(src: &[u8], tree: &Value) -> Result<Detection, ParseError> {
    detect_node(src, &Node::borrowed(tree))
}

/// What the document is and every fact found in it, before the facts are weighed against each
/// other: a document whose facts contradict each other (written by no one version) is still
/// judged fact by fact against one SDK version.
pub(crate) fn facts_of(src: &[u8], tree: &Value) -> Result<(DocKind, Vec<Evidence>), ParseError> {
    let (kind, facts) = collect_facts(src, &Node::borrowed(tree))?;
    Ok((kind, facts.hard.into_iter().chain(facts.soft).collect()))
}

fn collect_facts<'a>(src: &'a [u8], tree: &Node) -> Result<(DocKind, Facts<'a>), ParseError> {
    let mut facts = Facts {
        src,
        hard: Vec::new(),
        soft: Vec::new(),
    };
    let obj = match tree {
        Node::Object(obj) => obj,
        Node::Array(items) if !items.is_empty() && items.iter().all(is_step_output_value) => {
            facts.hard(
                "",
                "a list of RunContext.step_output_values (v0.8.0+)",
                since(HEAD),
            );
            return Ok((DocKind::StepOutputValues, facts));
        }
        other => return Err(unrecognised(src, other)),
    };
    let has = |key: &str| obj.has(key);
    let kind = if has("plan_id") {
        run_facts(&mut facts, obj);
        DocKind::Run
    } else if has("plan_context") || has("steps") {
        plan_facts(&mut facts, obj)?;
        DocKind::Plan
    } else if has("plan_run") && has("legacy_plan") {
        facts.hard("", "a legacy RunContext snapshot (v0.8.0+)", since(HEAD));
        DocKind::RunContext
    } else if has("external_id") {
        end_user_facts(&mut facts, obj);
        DocKind::EndUser
    } else if has("tool_name") {
        tool_call_facts(&mut facts, obj);
        DocKind::ToolCall
    } else if is_step_output_value(tree) {
        facts.hard("", "a RunContext StepOutputValue (v0.8.0+)", since(HEAD));
        DocKind::StepOutputValue
    } else if has("output_name") {
        facts.hard("/output_name", "an AgentMemoryValue", since(R2));
        DocKind::Output
    } else if !obj.is_empty() && obj.keys().all(|k| k == "value" || k == "summary") {
        facts.hard(
            "",
            "an Output/LocalDataValue (the same wire in every version)",
            VersionSet::ALL,
        );
        DocKind::Output
    } else if has("portia_api_endpoint")
        || has("llm_provider")
        || has("models")
        || has("storage_class")
    {
        facts.hard("", "a Config (the HEAD model)", since(HEAD));
        DocKind::Config
    } else {
        return Err(unrecognised(src, tree));
    };
    Ok((kind, facts))
}

fn is_step_output_value(value: &Node) -> bool {
    value
        .as_object()
        .is_some_and(|o| o.has("step_name") && o.has("step_num"))
}

fn unrecognised(src: &[u8], tree: &Node) -> ParseError {
    let shape = match tree {
        Node::Object(obj) if obj.is_empty() => "an empty object".to_owned(),
        Node::Object(obj) => format!(
            "an object with keys {}",
            obj.keys()
                .take(8)
                .map(|k| format!("{k:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Node::Array(_) => "an array".to_owned(),
        other => format!("a {}", json_type(other)),
    };
    located(
        src,
        String::new(),
        ErrorKind::Unrecognised,
        format!("not a legacy Portia document: found {shape}; expected a run (plan_id), plan (plan_context), end user (external_id), output (value/summary or output_name), tool call, config or step output value"),
    )
}

fn json_type(value: &Node) -> &'static str {
    match value {
        Node::Null => "null",
        Node::Bool(_) => "boolean",
        Node::Number(_) => "number",
        Node::String(_) => "string",
        Node::Array(_) => "array",
        Node::Object(_) => "object",
    }
}

/// `prun` of an id `"prun-…"`; `None` when the value is not a string with a prefix.
pub(crate) fn prefix_of(text: Option<&str>) -> Option<&str> {
    text?.split_once('-').map(|(p, _)| p)
}

fn run_prefix_fact(
    facts: &mut Facts,
    pointer: impl Into<Cow<'static, str>>,
    value: Option<&Node>,
    what: &str,
) {
    match prefix_of(value.and_then(Node::as_str)) {
        Some("wkfl") => facts.hard(pointer, join!(what, " prefix wkfl-"), all(W1, W1)),
        Some("pr") => facts.hard(pointer, join!(what, " prefix pr-"), all(R0, R0)),
        Some("prun") => facts.hard(pointer, join!(what, " prefix prun-"), since(R1)),
        _ => {}
    }
}

fn run_facts(facts: &mut Facts, obj: &Object) {
    run_prefix_fact(facts, "/id", obj.field("id"), "id");
    if obj.has("current_step_id") {
        facts.soft(
            "/current_step_id",
            "current_step_id dialect (read as current_step_index)",
            VersionSet::ALL,
        );
    }
    match obj.field("execution_context") {
        Some(ec) => {
            facts.hard("/execution_context", "has execution_context", all(W1, R5));
            if let Some(ec) = ec.as_object() {
                context_facts(facts, ec);
            }
        }
        None => facts.soft("", "no execution_context", since(HEAD)),
    }
    if obj.has("end_user_id") {
        facts.hard("/end_user_id", "top-level end_user_id", since(R4));
    } else {
        facts.hard("", "no top-level end_user_id", all(W1, R3));
    }
    if obj.has("plan_run_inputs") {
        facts.hard("/plan_run_inputs", "has plan_run_inputs", since(R5));
    } else {
        facts.soft("", "no plan_run_inputs", all(W1, R4));
    }
    let Some(outputs) = obj.field("outputs").and_then(Node::as_object) else {
        return;
    };
    let step_outputs = outputs.field("step_outputs").and_then(Node::as_object);
    let is_memory = |v: &Node| v.field("output_name").is_some();
    let memory = step_outputs
        .into_iter()
        .flatten()
        .find(|(_, v)| is_memory(v))
        .map(|(k, _)| Cow::Owned(child("/outputs/step_outputs", k)))
        .or_else(|| {
            (outputs.field("final_output").is_some_and(is_memory))
                .then_some(Cow::Borrowed("/outputs/final_output"))
        });
    if let Some(pointer) = memory {
        facts.hard(pointer, "an agent-memory output", since(R2));
    }
    for (i, clar) in outputs
        .field("clarifications")
        .and_then(Node::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(clar) = clar.as_object() {
            clarification_facts(facts, &join!("/outputs/clarifications/", i), clar);
        }
    }
}

fn context_facts(facts: &mut Facts, ec: &Object) {
    let p = |k: &str| child("/execution_context", k);
    let old_ext = [
        "planner_system_context_extension",
        "agent_system_context_extension",
    ];
    let new_ext = [
        "planning_agent_system_context_extension",
        "execution_agent_system_context_extension",
    ];
    if let Some(k) = old_ext.iter().find(|k| ec.has(k)) {
        facts.hard(p(k), join!("execution_context has ", k), all(W1, W1));
    } else if let Some(k) = new_ext.iter().find(|k| ec.has(k)) {
        facts.hard(p(k), join!("execution_context has ", k), all(R0, R2));
    } else {
        facts.soft(
            p(""),
            "execution_context has no system-context extensions",
            all(R3, R5),
        );
    }
    if ec.has("end_user_id") {
        facts.hard(
            p("end_user_id"),
            "execution_context has end_user_id",
            all(W1, R3),
        );
    } else {
        facts.soft(p(""), "execution_context has no end_user_id", all(R4, R5));
    }
}

fn clarification_facts(facts: &mut Facts, pointer: &str, clar: &Object) {
    if clar.has("workflow_id") {
        facts.hard(
            child(pointer, "workflow_id"),
            "clarification workflow_id",
            all(W1, W1),
        );
        run_prefix_fact(
            facts,
            child(pointer, "workflow_id"),
            clar.field("workflow_id"),
            "clarification workflow_id",
        );
    }
    if clar.has("plan_run_id") {
        facts.hard(
            child(pointer, "plan_run_id"),
            "clarification plan_run_id",
            since(R0),
        );
        run_prefix_fact(
            facts,
            child(pointer, "plan_run_id"),
            clar.field("plan_run_id"),
            "clarification plan_run_id",
        );
    }
    let run_ref = [RunRefKey::WorkflowId, RunRefKey::PlanRunId]
        .into_iter()
        .find_map(|key| clar.field(key.as_str()).map(|id| (key, id)));
    match run_ref {
        None => facts.hard(
            pointer.to_owned(),
            "clarification without its run reference (v0.7.0+)",
            ClarificationRules::run_ref_optional_in(),
        ),
        Some((key, Node::Null)) => facts.hard(
            child(pointer, key.as_str()),
            "clarification with a null run reference (v0.7.0+)",
            ClarificationRules::run_ref_optional_in(),
        ),
        Some(_) => {}
    }
    let category = clar
        .field("category")
        .and_then(Node::as_str)
        .and_then(|text| Category::ALL.into_iter().find(|c| c.as_str() == text));
    if let Some((versions, Some(when))) = category.map(Category::era) {
        facts.hard(
            child(pointer, "category"),
            format!(
                "category {:?} ({when})",
                category.map_or("", Category::as_str)
            ),
            versions,
        );
    }
    match clar.field("category").and_then(Node::as_str) {
        Some("Action") if clar.has("require_confirmation") => {
            facts.hard(
                child(pointer, "require_confirmation"),
                "Action clarification with require_confirmation (v0.3.0+)",
                since(R4),
            );
        }
        Some("Action") => facts.soft(
            pointer.to_owned(),
            "Action clarification without require_confirmation",
            all(W1, R3),
        ),
        _ => {}
    }
    if clar.has("source") {
        facts.hard(
            child(pointer, "source"),
            "clarification source (v0.4.0+)",
            since(HEAD),
        );
    }
}

fn plan_facts(facts: &mut Facts, obj: &Object) -> Result<(), ParseError> {
    let steps: Vec<&Object> = obj
        .field("steps")
        .and_then(Node::as_array)
        .into_iter()
        .flatten()
        .filter_map(Node::as_object)
        .collect();
    let declared = ["task", "inputs", "tool_id", "output", "condition"];
    let mut variables = 0;
    let mut with_value = None;
    let mut without_description = None;
    for (i, step) in steps.iter().enumerate() {
        for (j, var) in step
            .field("inputs")
            .and_then(Node::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            variables += 1;
            let p = join!("/steps/", i, "/inputs/", j);
            if var.field("value").is_some() && with_value.is_none() {
                with_value = Some(child(&p, "value"));
            }
            if var.field("description").is_none() && without_description.is_none() {
                without_description = Some(p);
            }
        }
        if let Some(extra) = step.keys().find(|k| !declared.contains(k)) {
            facts.hard(
                child(&join!("/steps/", i), extra),
                format!("step key {extra:?} kept by extra=\"allow\" (0.1.7+)"),
                since(R1),
            );
        }
    }
    match with_value {
        // Written until 0.1.11; from v0.1.12 Variable ignores it, so every later version loads it.
        Some(p) => facts.hard_loading(
            p,
            "Variable.value (removed in v0.1.12)",
            all(W1, R1),
            VersionSet::ALL,
        ),
        None if variables > 0 => facts.soft("/steps", "no Variable.value", since(R2)),
        None => {}
    }
    if let Some(p) = without_description {
        facts.hard(p, "Variable without description (v0.7.0+)", since(HEAD));
    }
    match steps.iter().position(|s| s.has("condition")) {
        Some(i) => facts.hard(
            join!("/steps/", i, "/condition"),
            "Step.condition (0.1.8+)",
            since(R1),
        ),
        None if !steps.is_empty() => facts.soft("/steps", "no Step.condition", all(W1, R1)),
        None => {}
    }
    if let Some(tools) = obj
        .field("plan_context")
        .and_then(|c| c.field("tool_ids"))
        .and_then(Node::as_array)
    {
        let names: Vec<&str> = tools.iter().filter_map(Node::as_str).collect();
        // Soft: the SDK sorts tool_ids only when it writes a plan (from 0.1.6) and reads them in
        // any order, so a plan another tool wrote (a downgrade of a V2 plan, say) may hold them
        // unsorted in any release.
        if names.windows(2).any(|w| w[0] > w[1]) {
            facts.soft(
                "/plan_context/tool_ids",
                "unsorted tool_ids (sorted from 0.1.6)",
                all(W1, R1),
            );
        }
    }
    if obj.has("inputs") {
        facts.hard("/inputs", "plan `inputs` (v0.3.2–v0.3.3)", all(R5, R5));
    } else if obj.has("plan_inputs") {
        facts.hard("/plan_inputs", "plan_inputs (v0.3.4+)", since(HEAD));
    } else {
        facts.soft("", "no plan inputs", all(W1, R4));
    }
    plan_validator_facts(facts, obj, &steps)
}

/// The SDK's `Plan` validators as facts. From 0.1.6 a plan's step outputs are unique, and from
/// 0.1.8 (when steps gained `condition`) each `output + (condition or "")` is, so a plan that
/// repeats one was written before 0.1.6, and one whose steps have `condition` was written by
/// no SDK and is refused. Plan input names are unique in every version that has plan inputs
/// (v0.3.2 on), so a plan that repeats one is refused too.
fn plan_validator_facts(
    facts: &mut Facts,
    obj: &Object,
    steps: &[&Object],
) -> Result<(), ParseError> {
    let conditioned = steps.iter().any(|s| s.has("condition"));
    let keys = steps.iter().map(|step| {
        let condition = step.field("condition").and_then(Node::as_str);
        let output = step.field("output").and_then(Node::as_str);
        output.map(|output| validator_key(output, condition))
    });
    if let Some((i, key)) = first_repeated(keys) {
        let pointer = join!("/steps/", i, "/output");
        if conditioned {
            return Err(located(
                facts.src,
                pointer,
                ErrorKind::Data,
                format!("the output + condition {key:?} is repeated; the SDK's Plan validator refuses that in every version whose steps have `condition` (0.1.8 on)"),
            ));
        }
        // Written until 0.1.5 (W1 to early R1); loaded only where R1 is not judged as 0.1.10,
        // whose validator refuses it ("Outputs must be unique", confirmed with 0.1.10's SDK).
        facts.hard_loading(
            pointer,
            format!("a repeated output {key:?} (refused by the Plan validator from 0.1.6)"),
            all(W1, R1),
            all(W1, R0),
        );
    }
    for key in ["inputs", "plan_inputs"] {
        let inputs = obj
            .field(key)
            .and_then(Node::as_array)
            .into_iter()
            .flatten();
        let names = inputs.map(|input| input.field("name").and_then(Node::as_str));
        if let Some((i, name)) = first_repeated(names) {
            return Err(located(
                facts.src,
                format!("/{key}/{i}/name"),
                ErrorKind::Data,
                format!("the plan input name {name:?} is repeated; the SDK's Plan validator refuses that in every version with plan inputs (v0.3.2 on)"),
            ));
        }
    }
    Ok(())
}

fn end_user_facts(facts: &mut Facts, obj: &Object) {
    facts.hard("", "an EndUser (v0.3.0+)", since(R4));
    if let Some((k, _)) = obj
        .field("additional_data")
        .and_then(Node::as_object)
        .and_then(|d| d.iter().find(|(_, v)| v.is_null()))
    {
        facts.hard(
            child("/additional_data", k),
            "null additional_data value (v0.3.5+)",
            since(HEAD),
        );
    }
}

fn tool_call_facts(facts: &mut Facts, obj: &Object) {
    if obj.has("workflow_id") {
        facts.hard("/workflow_id", "tool call workflow_id", all(W1, W1));
    }
    run_prefix_fact(
        facts,
        "/workflow_id",
        obj.field("workflow_id"),
        "workflow_id",
    );
    run_prefix_fact(
        facts,
        "/plan_run_id",
        obj.field("plan_run_id"),
        "plan_run_id",
    );
    if obj.has("additional_data") {
        facts.hard("/additional_data", "tool call additional_data", all(W1, R5));
    } else {
        facts.hard("", "tool call without additional_data", since(HEAD));
    }
}
