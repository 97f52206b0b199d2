//! Clarifications of every category in every version. The SDK's list type is an untagged union
//! whose reload ignores `category` and drops unknown keys; here `category` is the tag and every key
//! the file holds is kept and written back.

use std::borrow::Cow;
use std::fmt;

use indexmap::IndexMap;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{json, Map, Value};

use crate::id::{ClarificationId, RunId};
use crate::scalar::{lax_opt_int, LaxBool, LaxBoolValue, LaxInt};
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

impl Clarification {
    /// A category field as a string, if present and a string.
    pub fn field_str(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }
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
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ClarificationVisitor)
    }
}

struct ClarificationVisitor;

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
                    run_ref = Some((ref_key, map.next_value()?));
                }
                "category" => category = Some(map.next_value()?),
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
