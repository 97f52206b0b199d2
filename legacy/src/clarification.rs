//! Clarifications of every category in every version. The SDK's list type is an untagged union
//! whose reload ignores `category` and drops unknown keys; here `category` is the tag and every key
//! the file holds is kept and written back.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use indexmap::IndexMap;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{json, Map, Value};

use crate::id::{run_prefixes, ClarificationId, OptionalRunIdSeed, RunId};
use crate::scalar::{lax_opt_int, LaxBool, LaxBoolValue, LaxInt};
use crate::version::{Version, VersionSet};
use planrun_wire::schema::with_description;
use planrun_wire::serde_unit;

/// A clarification's category: the SDK's category strings of every version (`Argument` until
/// 0.1.0, `User Verification` from v0.4.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self")]
#[schemars(rename = "Category")]
pub enum Category {
    /// W1 (until 0.1.0): serialized as the base class, so `argument_name` is lost by the SDK.
    #[serde(rename = "Argument")]
    Argument,
    /// An OAuth-style action the user must take.
    #[serde(rename = "Action")]
    Action,
    /// A missing argument value.
    #[serde(rename = "Input")]
    Input,
    /// A choice among `options`.
    #[serde(rename = "Multiple Choice")]
    MultipleChoice,
    /// A value the user must confirm.
    #[serde(rename = "Value Confirmation")]
    ValueConfirmation,
    /// A yes/no verification (v0.4.0+).
    #[serde(rename = "User Verification")]
    UserVerification,
    /// Anything else, with `name` and `data`.
    #[serde(rename = "Custom")]
    Custom,
}

serde_unit!(Category);

impl Category {
    /// Every category, in the SDK's declaration order (`Argument` first, as in W1).
    pub const ALL: [Category; 7] = [
        Category::Argument,
        Category::Action,
        Category::Input,
        Category::MultipleChoice,
        Category::ValueConfirmation,
        Category::UserVerification,
        Category::Custom,
    ];

    /// The subtype keys this category's SDK class declares, in emitted order.
    pub fn subtype_keys(self) -> &'static [&'static str] {
        match self {
            Category::Argument | Category::UserVerification => &[],
            Category::Input | Category::ValueConfirmation => &["argument_name"],
            Category::Action => &["action_url", "require_confirmation"],
            Category::MultipleChoice => &["argument_name", "options"],
            Category::Custom => &["name", "data"],
        }
    }

    /// The run versions whose SDK has this category in its enum, with when it came or went:
    /// `Argument` until the 0.1.0 release (W1 to R1), `User Verification` from v0.4.0 (R6 on).
    /// The one statement of which version has which category: the reader, the per-version
    /// schemas and detection all read it.
    pub fn era(self) -> (VersionSet, Option<&'static str>) {
        match self {
            Category::Argument => (
                VersionSet::range(Version::W1, Version::R1),
                Some("removed in 0.1.0"),
            ),
            Category::UserVerification => (VersionSet::since(Version::R6), Some("v0.4.0+")),
            _ => (VersionSet::ALL, None),
        }
    }

    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Argument => "Argument",
            Category::Action => "Action",
            Category::Input => "Input",
            Category::MultipleChoice => "Multiple Choice",
            Category::ValueConfirmation => "Value Confirmation",
            Category::UserVerification => "User Verification",
            Category::Custom => "Custom",
        }
    }
}

/// Which key names the run a clarification belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunRefKey {
    /// `workflow_id` (W1).
    WorkflowId,
    /// `plan_run_id` (R0+).
    PlanRunId,
}

impl RunRefKey {
    /// The key as written.
    pub fn as_str(self) -> &'static str {
        match self {
            RunRefKey::WorkflowId => "workflow_id",
            RunRefKey::PlanRunId => "plan_run_id",
        }
    }
}

/// What the clarifications of one run version must be, where versions differ: the categories
/// its SDK's enum has, the key naming the run, and whether that key may be absent or `null`
/// (from v0.7.0, so in R6 only). A run read as a version is read by its rules, so a file is
/// judged as that version's SDK judged it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClarificationRules {
    /// The version the rules are of.
    pub version: Version,
    /// The key naming the run: `workflow_id` in W1, `plan_run_id` from R0.
    pub run_ref: RunRefKey,
    /// Whether the run reference may be absent or `null` (v0.7.0+).
    pub run_ref_optional: bool,
    /// The version whose categories are kept besides this version's own: itself, except for a
    /// run the migration chain brought here from an older version (see [`Self::carried`]).
    pub categories_of: Version,
}

impl ClarificationRules {
    /// The rules of `version`.
    pub fn of(version: Version) -> Self {
        ClarificationRules {
            version,
            run_ref: if version == Version::W1 {
                RunRefKey::WorkflowId
            } else {
                RunRefKey::PlanRunId
            },
            run_ref_optional: version >= Version::R6,
            categories_of: version,
        }
    }

    /// The rules of `version` for a run the migration chain brought there from `source`: its
    /// clarifications keep the categories of `source` (W1's `Argument` has its own V2 form), and
    /// only a HEAD store maps them to one of `version`.
    pub fn carried(source: Version, version: Version) -> Self {
        ClarificationRules {
            categories_of: source,
            ..ClarificationRules::of(version)
        }
    }

    /// The versions whose clarifications may leave out their run reference or write it `null`.
    pub fn run_ref_optional_in() -> VersionSet {
        VersionSet::matching(|v| ClarificationRules::of(v).run_ref_optional)
    }

    /// The categories of this version, in the SDK's declaration order.
    pub fn categories(self) -> impl Iterator<Item = Category> {
        Category::ALL.into_iter().filter(move |c| self.has(*c))
    }

    fn has(self, category: Category) -> bool {
        let (versions, _) = category.era();
        versions.contains(self.version) || versions.contains(self.categories_of)
    }

    fn check_category(self, category: Category) -> Result<(), String> {
        if self.has(category) {
            return Ok(());
        }
        let names: Vec<&str> = self.categories().map(Category::as_str).collect();
        Err(format!(
            "{:?} is not a clarification category of {} (SDK {}), which has {}",
            category.as_str(),
            self.version,
            self.version.info().releases,
            names.join(", ")
        ))
    }

    fn check_run_ref(self, key: RunRefKey, id: Option<&RunId>) -> Result<(), String> {
        if key != self.run_ref {
            return Err(format!(
                "a clarification of {} names its run `{}`, not `{}`",
                self.version,
                self.run_ref.as_str(),
                key.as_str()
            ));
        }
        if id.is_none() && !self.run_ref_optional {
            return Err(format!(
                "`{}` is null, which the SDK allows from v0.7.0 (R6) only, not in {}",
                key.as_str(),
                self.version
            ));
        }
        Ok(())
    }
}

/// One clarification. Keys that are optional by SDK release (`source`, `require_confirmation`, the
/// run reference after v0.7.0) are kept present or absent exactly as read.
#[derive(Debug, Clone, PartialEq)]
pub struct Clarification {
    /// `clar-…`; absent only in hand-made files (the SDK would generate one).
    pub id: Option<ClarificationId>,
    /// The run reference key and value (`null` allowed from v0.7.0).
    pub run_ref: Option<(RunRefKey, Option<RunId>)>,
    /// The tag; the only reliable one.
    pub category: Category,
    /// Native JSON, never stringified.
    pub response: Value,
    /// The plan step index, or null.
    pub step: Option<i64>,
    /// The question put to the user.
    pub user_guidance: String,
    /// Whether the user answered.
    pub resolved: bool,
    /// `source` (v0.4.0+): `None` when the key is absent, `Some(None)` when it is `null`.
    pub source: Option<Option<String>>,
    /// The category's own keys that are present (see [`Category::subtype_keys`]), in class order.
    pub fields: IndexMap<String, Value>,
    /// Every other key, in input order; the SDK drops them, this toolkit keeps them.
    pub extra: IndexMap<String, Value>,
}

impl Serialize for Clarification {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(id) = &self.id {
            map.serialize_entry("id", id)?;
        }
        if let Some((key, id)) = &self.run_ref {
            map.serialize_entry(key.as_str(), id)?;
        }
        map.serialize_entry("category", &self.category)?;
        map.serialize_entry("response", &self.response)?;
        map.serialize_entry("step", &self.step)?;
        map.serialize_entry("user_guidance", &self.user_guidance)?;
        map.serialize_entry("resolved", &self.resolved)?;
        if let Some(source) = &self.source {
            map.serialize_entry("source", source)?;
        }
        for (key, value) in self.fields.iter().chain(&self.extra) {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Clarification {
    /// Reads a clarification of any version; a run's clarifications are read by their
    /// version's rules instead (see [`ClarificationRules`]).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ClarificationVisitor(None))
    }
}

/// Reads a clarification by one version's rules; an error points at the offending key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClarificationSeed(pub(crate) ClarificationRules);

impl<'de> DeserializeSeed<'de> for ClarificationSeed {
    type Value = Clarification;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Clarification, D::Error> {
        deserializer.deserialize_map(ClarificationVisitor(Some(self.0)))
    }
}

/// A list of clarifications read by one version's rules.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClarificationsSeed(pub(crate) ClarificationRules);

impl<'de> DeserializeSeed<'de> for ClarificationsSeed {
    type Value = Vec<Clarification>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ClarificationsSeed {
    type Value = Vec<Clarification>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of clarifications")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(clarification) = seq.next_element_seed(ClarificationSeed(self.0))? {
            out.push(clarification);
        }
        Ok(out)
    }
}

/// Reads a value with the seed `S` and checks it, so that an error is raised at the value's own
/// position.
struct Checked<S, F>(S, F);

impl<'de, S: DeserializeSeed<'de>, F: FnOnce(&S::Value) -> Result<(), String>> DeserializeSeed<'de>
    for Checked<S, F>
{
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        let value = self.0.deserialize(deserializer)?;
        (self.1)(&value).map_err(de::Error::custom)?;
        Ok(value)
    }
}

fn checked<T, F: FnOnce(&T) -> Result<(), String>>(check: F) -> Checked<PhantomData<T>, F> {
    Checked(PhantomData, check)
}

struct ClarificationVisitor(Option<ClarificationRules>);

#[derive(Deserialize)]
struct LaxOptInt(#[serde(deserialize_with = "lax_opt_int")] Option<i64>);

impl<'de> Visitor<'de> for ClarificationVisitor {
    type Value = Clarification;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a clarification object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Clarification, A::Error> {
        let mut id = None;
        let mut run_ref: Option<(RunRefKey, Option<RunId>)> = None;
        let mut category: Option<Category> = None;
        let mut response = Value::Null;
        let mut step = None;
        let mut user_guidance = None;
        let mut resolved = false;
        let mut source = None;
        let mut rest: IndexMap<String, Value> = IndexMap::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "id" => id = Some(map.next_value()?),
                "workflow_id" | "plan_run_id" => {
                    let ref_key = if key == "workflow_id" {
                        RunRefKey::WorkflowId
                    } else {
                        RunRefKey::PlanRunId
                    };
                    if run_ref.is_some() {
                        return Err(de::Error::custom(
                            "a clarification names its run once: `workflow_id` (W1) or `plan_run_id` (R0+), not both",
                        ));
                    }
                    let id: Option<RunId> = match self.0 {
                        Some(rules) => map.next_value_seed(Checked(
                            OptionalRunIdSeed(run_prefixes(rules.version)),
                            |id: &Option<RunId>| rules.check_run_ref(ref_key, id.as_ref()),
                        ))?,
                        None => map.next_value()?,
                    };
                    run_ref = Some((ref_key, id));
                }
                "category" => {
                    category = Some(match self.0 {
                        Some(rules) => {
                            map.next_value_seed(checked(|c: &Category| rules.check_category(*c)))?
                        }
                        None => map.next_value()?,
                    });
                }
                "response" => response = map.next_value()?,
                "step" => step = map.next_value::<LaxOptInt>()?.0,
                "user_guidance" => user_guidance = Some(map.next_value()?),
                "resolved" => resolved = map.next_value::<LaxBoolValue>()?.0,
                "source" => source = Some(map.next_value()?),
                _ => {
                    let value = map.next_value()?;
                    rest.insert(key, value);
                }
            }
        }
        let category = category.ok_or_else(|| de::Error::missing_field("category"))?;
        if let Some(rules) = self.0 {
            if run_ref.is_none() && !rules.run_ref_optional {
                return Err(de::Error::custom(format!(
                    "missing field `{}`: a clarification names its run in {} (optional from v0.7.0, R6, only)",
                    rules.run_ref.as_str(),
                    rules.version
                )));
            }
        }
        let mut fields = IndexMap::new();
        for key in category.subtype_keys() {
            if let Some(value) = rest.shift_remove(*key) {
                check_field::<A::Error>(category, key, &value)?;
                fields.insert((*key).to_owned(), value);
            }
        }
        Ok(Clarification {
            id,
            run_ref,
            category,
            response,
            step,
            user_guidance: user_guidance
                .ok_or_else(|| de::Error::missing_field("user_guidance"))?,
            resolved,
            source,
            fields,
            extra: rest,
        })
    }
}

/// The JSON type [`check_field`] requires of a category field, with its description.
fn field_schema(key: &str) -> Value {
    match key {
        "argument_name" => {
            json!({"type": "string", "description": "The name of the argument a value is needed for (required by the SDK)."})
        }
        "action_url" => {
            json!({"type": "string", "description": "The URL of the action the user must take, as pydantic's `HttpUrl` normalised it (required by the SDK)."})
        }
        "require_confirmation" => {
            json!({"type": "boolean", "description": "Whether the user must confirm once the action is done (v0.3.0+)."})
        }
        "options" => {
            json!({"type": "array", "description": "The options to choose from, native JSON (required by the SDK)."})
        }
        "name" => {
            json!({"type": "string", "description": "The custom clarification's name (required by the SDK)."})
        }
        "data" => {
            json!({"type": "object", "description": "Free-form data of a custom clarification."})
        }
        other => unreachable!("no category field {other}"),
    }
}

impl JsonSchema for Clarification {
    fn schema_name() -> Cow<'static, str> {
        "Clarification".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let id = generator.subschema_for::<ClarificationId>();
        let run = generator.subschema_for::<Option<RunId>>();
        let category = generator.subschema_for::<Category>();
        let step = generator.subschema_for::<Option<LaxInt>>();
        let resolved = generator.subschema_for::<LaxBool>();
        let mut branches = Vec::new();
        for cat in Category::ALL {
            if cat.subtype_keys().is_empty() {
                continue;
            }
            let properties: Map<String, Value> = cat
                .subtype_keys()
                .iter()
                .map(|key| ((*key).to_owned(), field_schema(key)))
                .collect();
            branches.push(json!({
                "if": {
                    "properties": {"category": {"const": cat.as_str()}},
                    "required": ["category"]
                },
                "then": {"properties": properties}
            }));
        }
        json_schema!({
            "description": "A clarification: a question put to the user. Dispatched on `category` (the SDK's own union ignores it); the SDK requires each category's own keys, this toolkit reads them when present and checks their type. Unknown keys are allowed and kept (the SDK's models ignore them).",
            "type": "object",
            "properties": {
                "id": with_description(id, "The clarification id; absent only in hand-made files."),
                "workflow_id": with_description(run.clone(), "W1: the run the clarification belongs to."),
                "plan_run_id": with_description(run, "R0 on: the run the clarification belongs to; `null` allowed from v0.7.0."),
                "category": with_description(category, "The category; decides which further keys the clarification has."),
                "response": {"description": "The user's response, native JSON (never stringified)."},
                "step": with_description(step, "The plan step the clarification belongs to, or null."),
                "user_guidance": {"type": "string", "description": "The question put to the user."},
                "resolved": with_description(resolved, "Whether the user answered (`false` when absent)."),
                "source": {"type": ["string", "null"], "description": "v0.4.0+: what raised the clarification (a tool or agent name); kept absent when absent."}
            },
            "required": ["category", "user_guidance"],
            "not": {
                "description": "A clarification names its run once: `workflow_id` (W1) or `plan_run_id` (R0 on), not both.",
                "required": ["workflow_id", "plan_run_id"]
            },
            "allOf": branches,
            "additionalProperties": true
        })
    }
}

/// Holds the `Clarification` and `Category` definitions of a run schema to one version's rules
/// (see [`ClarificationRules`]), as the run's reader holds its clarifications: only that
/// version's categories, the run named by its key alone, required and not `null` before v0.7.0.
pub(crate) fn restrict_clarifications(schema: &mut Value, version: Version) {
    let rules = ClarificationRules::of(version);
    let defs = &mut schema["$defs"];
    let categories: Vec<&str> = rules.categories().map(Category::as_str).collect();
    if let Some(Value::Array(branches)) = defs["Category"].get_mut("oneOf") {
        branches.retain(|b| b["const"].as_str().is_some_and(|c| categories.contains(&c)));
    }
    defs["Category"]["description"] = format!(
        "A clarification's category: the category strings of the SDK that wrote {version} ({}).",
        version.info().releases
    )
    .into();
    let clarification = &mut defs["Clarification"];
    let (key, other) = match rules.run_ref {
        RunRefKey::WorkflowId => (RunRefKey::WorkflowId, RunRefKey::PlanRunId),
        RunRefKey::PlanRunId => (RunRefKey::PlanRunId, RunRefKey::WorkflowId),
    };
    let properties = &mut clarification["properties"];
    properties[other.as_str()] = Value::Bool(false);
    let run = &mut properties[key.as_str()];
    if rules.run_ref_optional {
        run["description"] =
            "The run the clarification belongs to; absent or `null` allowed from v0.7.0.".into();
    } else {
        let mut id = run["anyOf"][0].take();
        id["description"] =
            "The run the clarification belongs to (required, and not `null`, before v0.7.0)."
                .into();
        *run = id;
        if let Some(Value::Array(required)) = clarification.get_mut("required") {
            required.insert(0, key.as_str().into());
        }
    }
}

/// Checks a category field's JSON type; `action_url` is kept as written (the SDK normalises it
/// with pydantic's `HttpUrl` on load, which a stored file already reflects).
fn check_field<E: de::Error>(category: Category, key: &str, value: &Value) -> Result<(), E> {
    let ok = match key {
        "argument_name" | "action_url" | "name" => value.is_string(),
        "require_confirmation" => value.is_boolean(),
        "options" => value.is_array(),
        "data" => value.is_object(),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(E::custom(format!(
            "`{key}` of a {:?} clarification has the wrong type: {value}",
            category.as_str()
        )))
    }
}
