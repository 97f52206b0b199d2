//! Reading any legacy document from bytes (detect, then parse as the detected version) and
//! writing it back exactly as the SDK would.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::context::{EndUser, StepOutputValue, ToolCallRecord};
use crate::detect::{detect_node, detect_tree, Detection, DocKind};
use crate::id::{Prefix, PrefixedId, RunId};
use crate::json::{
    located, parse_value, to_sdk_json, writes_as_sdk, Difference, ErrorKind, Node, ParseError, Tree,
};
use crate::output::Output;
use crate::plan::Plan;
use crate::run::{LegacyRun, RunR1, RunR2, RunR3, RunR4, RunR5, RunR6, RunW1};
use crate::version::Version;
use crate::{Clarification, Config};
use planrun_wire::serde_object;

/// The serialisable part of the HEAD `RunContext`; the SDK never
/// wrote one, so its key order is this toolkit's. `plan` (PlanV2) is not part of it: the SDK
/// cannot serialise PlanV2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "RunContextSnapshot")]
pub struct RunContextSnapshot {
    /// The legacy plan the run executes.
    pub legacy_plan: Plan,
    /// The run, in its HEAD form.
    pub plan_run: RunR6,
    /// The run's end user.
    pub end_user: EndUser,
    /// Step results with native values.
    #[serde(default)]
    pub step_output_values: Vec<StepOutputValue>,
    /// The run's configuration (secrets masked on output).
    pub config: Config,
}

serde_object!(RunContextSnapshot);

/// Any legacy document.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum LegacyDocument {
    /// A run.
    Run(LegacyRun),
    /// A plan.
    Plan(Plan),
    /// An end user.
    EndUser(EndUser),
    /// A stored output.
    Output(Output),
    /// A tool call record.
    ToolCall(ToolCallRecord),
    /// A config.
    Config(Box<Config>),
    /// One step output value.
    StepOutputValue(StepOutputValue),
    /// A list of step output values.
    StepOutputValues(Vec<StepOutputValue>),
    /// A RunContext snapshot.
    RunContext(Box<RunContextSnapshot>),
}

/// Which key a run used for its step position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StepKey {
    /// `current_step_index`, as the SDK writes it.
    #[default]
    Index,
    /// `current_step_id`, the dialect of the user's own design.
    Id,
}

/// How the SDK's writer would change a document that was not written by it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Normalization {
    /// A key was absent; the SDK writes its default.
    Defaulted {
        /// Where.
        pointer: String,
        /// The default written.
        value: Value,
    },
    /// A key the SDK model ignores; it is not written back.
    Dropped {
        /// Where.
        pointer: String,
        /// What was there.
        value: Value,
    },
    /// A value read leniently and written canonically (`"1"` → `1`, an uppercase UUID, …).
    Coerced {
        /// Where.
        pointer: String,
        /// As read.
        from: Value,
        /// As written.
        to: Value,
    },
    /// Same values, but key order or layout differs from the SDK's.
    Reformatted,
}

/// A parsed document with its detection and what re-emission changes.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The typed document.
    pub document: LegacyDocument,
    /// What it is and which versions could have written it.
    pub detection: Detection,
    /// Which step-position key a run used.
    pub step_key: StepKey,
    /// Differences between the input and its re-emission; empty for every file the SDK wrote.
    pub normalizations: Vec<Normalization>,
}

impl Parsed {
    /// Writes the document back in the SDK's format (`model_dump_json(indent=4)`).
    pub fn to_sdk_json(&self) -> String {
        match self.step_key {
            StepKey::Index => to_sdk_json(&self.document),
            StepKey::Id => {
                let tree = serde_json::to_value(&self.document).expect("documents are JSON");
                to_sdk_json(&rename_key(tree, "current_step_index", "current_step_id"))
            }
        }
    }

    /// Whether [`Parsed::to_sdk_json`] gives exactly `src` (checked without building the text
    /// when the run uses the SDK's step key).
    fn writes_back_as(&self, src: &[u8]) -> bool {
        match self.step_key {
            StepKey::Index => writes_as_sdk(&self.document, src),
            StepKey::Id => self.to_sdk_json().as_bytes() == src,
        }
    }

    /// The run, if the document is one.
    pub fn as_run(&self) -> Option<&LegacyRun> {
        match &self.document {
            LegacyDocument::Run(run) => Some(run),
            _ => None,
        }
    }
}

/// Detects and parses a legacy document.
pub fn parse(src: &[u8]) -> Result<Parsed, ParseError> {
    parse_by(src, detect_and_read)
}

/// [`parse`] by the reference reader: the text parsed into a `serde_json::Value`, detection and
/// the typed read done on that tree. [`parse`] gives the same result from a lighter tree; the
/// tests hold the two to each other.
pub fn parse_by_value(src: &[u8]) -> Result<Parsed, ParseError> {
    parse_by(src, detect_and_read_value)
}

type Reader = fn(&[u8]) -> Result<(Detection, LegacyDocument, StepKey), ParseError>;

fn parse_by(src: &[u8], read: Reader) -> Result<Parsed, ParseError> {
    let (detection, document, step_key) = read(src)?;
    let mut parsed = Parsed {
        document,
        detection,
        step_key,
        normalizations: Vec::new(),
    };
    if !parsed.writes_back_as(src) {
        // The tree went into the document; a file the SDK did not write pays for a second parse.
        let input = parse_value(src)?;
        let emitted = parsed.to_sdk_json();
        let out: Value = serde_json::from_str(&emitted).expect("re-emitted JSON parses");
        parsed.normalizations = normalizations(&input, &out);
        if parsed.normalizations.is_empty() {
            parsed.normalizations.push(Normalization::Reformatted);
        }
    }
    Ok(parsed)
}

/// Detects and reads a document without checking that writing it back gives its bytes: for a
/// file that is kept as it is, never rewritten, so nothing it holds can be lost on the way.
pub fn read(src: &[u8]) -> Result<(Detection, LegacyDocument), ParseError> {
    let (detection, document, _) = detect_and_read(src)?;
    Ok((detection, document))
}

/// What `src` is, and the document read from it as that version, through a [`Node`] tree;
/// text that tree does not parse is left to [`detect_and_read_value`], which locates its error.
fn detect_and_read(src: &[u8]) -> Result<(Detection, LegacyDocument, StepKey), ParseError> {
    let Some(input) = Node::from_bytes(src) else {
        return detect_and_read_value(src);
    };
    let detection = detect_node(src, &input)?;
    let (document, step_key) = read_document(src, input, detection.kind, detection.version())?;
    Ok((detection, document, step_key))
}

/// [`detect_and_read`] through a `serde_json::Value` tree.
fn detect_and_read_value(src: &[u8]) -> Result<(Detection, LegacyDocument, StepKey), ParseError> {
    let input = parse_value(src)?;
    let detection = detect_tree(src, &input)?;
    let (document, step_key) = read_document(src, input, detection.kind, detection.version())?;
    Ok((detection, document, step_key))
}

/// Only detects: what the document is and which versions could have written it.
pub fn detect(src: &[u8]) -> Result<Detection, ParseError> {
    match Node::from_bytes(src) {
        Some(input) => detect_node(src, &input),
        None => detect_tree(src, &parse_value(src)?),
    }
}

/// Reads a document of `kind`; a run as `version`.
pub(crate) fn read_document(
    src: &[u8],
    input: impl Tree,
    kind: DocKind,
    version: Version,
) -> Result<(LegacyDocument, StepKey), ParseError> {
    let document = match kind {
        DocKind::Run => return read_run(src, input, version),
        DocKind::Plan => LegacyDocument::Plan(input.read(src)?),
        DocKind::EndUser => LegacyDocument::EndUser(input.read(src)?),
        DocKind::Output => LegacyDocument::Output(input.read::<Output>(src)?),
        DocKind::ToolCall => LegacyDocument::ToolCall(input.read(src)?),
        DocKind::Config => LegacyDocument::Config(input.read(src)?),
        DocKind::StepOutputValue => LegacyDocument::StepOutputValue(input.read(src)?),
        DocKind::StepOutputValues => LegacyDocument::StepOutputValues(input.read(src)?),
        DocKind::RunContext => LegacyDocument::RunContext(input.read(src)?),
    };
    Ok((document, StepKey::Index))
}

fn read_run(
    src: &[u8],
    input: impl Tree,
    version: Version,
) -> Result<(LegacyDocument, StepKey), ParseError> {
    if !input.has("current_step_id") {
        return Ok((
            LegacyDocument::Run(read_run_as(src, input, version)?),
            StepKey::Index,
        ));
    }
    if input.has("current_step_index") {
        return Err(located(
            src,
            "/current_step_id".into(),
            ErrorKind::Data,
            "a run has current_step_index or its dialect name current_step_id, not both".into(),
        ));
    }
    // Read from the renamed tree as borrowed: an error is located in that tree, not in `src`'s.
    let renamed = rename_key(input.into_owned(), "current_step_id", "current_step_index");
    Ok((
        LegacyDocument::Run(read_run_as(src, &renamed, version)?),
        StepKey::Id,
    ))
}

/// Reads a run as `version` by that version's reader, whatever version wrote it; `tree` names
/// its step `current_step_index`.
pub(crate) fn read_run_as(
    src: &[u8],
    tree: impl Tree,
    version: Version,
) -> Result<LegacyRun, ParseError> {
    let mut run = match version {
        Version::W1 => LegacyRun::W1(tree.read::<RunW1>(src)?),
        Version::R0 => LegacyRun::R0(tree.read::<RunR1>(src)?),
        Version::R1 => LegacyRun::R1(tree.read::<RunR1>(src)?),
        Version::R2 => LegacyRun::R2(tree.read::<RunR2>(src)?),
        Version::R3 => LegacyRun::R3(tree.read::<RunR3>(src)?),
        Version::R4 => LegacyRun::R4(tree.read::<RunR4>(src)?),
        Version::R5 => LegacyRun::R5(tree.read::<RunR5>(src)?),
        Version::R6 => LegacyRun::R6(tree.read::<RunR6>(src)?),
    };
    settle_run_ids(&mut run);
    Ok(run)
}

/// Ids given as `{"uuid": …}` objects carry no prefix; they take the run version's prefix, as the
/// SDK's typed field does. String ids already agree with the version (detection checked them).
fn settle_run_ids(run: &mut LegacyRun) {
    let prefix = run.version().run_prefix();
    let fix = |id: &mut RunId| *id = RunId(id.0.with_prefix(prefix));
    macro_rules! settle {
        ($r:expr) => {{
            if let Some(id) = $r.id.as_mut() {
                fix(id);
            }
            for clar in &mut $r.outputs.clarifications {
                settle_clarification(clar, prefix);
            }
        }};
    }
    match run {
        LegacyRun::W1(r) => settle!(r),
        LegacyRun::R0(r) | LegacyRun::R1(r) => settle!(r),
        LegacyRun::R2(r) => settle!(r),
        LegacyRun::R3(r) => settle!(r),
        LegacyRun::R4(r) => settle!(r),
        LegacyRun::R5(r) => settle!(r),
        LegacyRun::R6(r) => settle!(r),
    }
}

fn settle_clarification(clar: &mut Clarification, prefix: Prefix) {
    if let Some((_, Some(id))) = clar.run_ref.as_mut() {
        *id = RunId(id.0.with_prefix(prefix));
    }
}

fn rename_key(tree: Value, from: &str, to: &str) -> Value {
    match tree {
        Value::Object(obj) => Value::Object(
            obj.into_iter()
                .map(|(k, v)| {
                    if k == from {
                        (to.to_owned(), v)
                    } else {
                        (k, v)
                    }
                })
                .collect::<Map<String, Value>>(),
        ),
        other => other,
    }
}

/// Re-emission's differences from the input, as normalisations: what the SDK's writer drops,
/// fills in or rewrites.
pub(crate) fn normalizations(input: &Value, output: &Value) -> Vec<Normalization> {
    crate::json::diff(input, output)
        .into_iter()
        .map(|d| match d {
            Difference::Removed { pointer, value } => Normalization::Dropped { pointer, value },
            Difference::Added { pointer, value } => Normalization::Defaulted { pointer, value },
            Difference::Changed { pointer, from, to } => {
                Normalization::Coerced { pointer, from, to }
            }
        })
        .collect()
}

impl From<PrefixedId> for RunId {
    fn from(id: PrefixedId) -> Self {
        RunId(id)
    }
}
