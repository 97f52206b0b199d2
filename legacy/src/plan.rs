//! The legacy `Plan` in every variant: keys that came and went by release (`Variable.value`,
//! `Step.condition`, `inputs`, `plan_inputs`) are kept present or absent exactly as read.

use std::borrow::Cow;
use std::fmt;

use indexmap::IndexMap;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::id::PlanId;
use planrun_wire::schema::with_description;
use planrun_wire::serde_object;
use planrun_wire::strict::present;

/// A legacy plan (every release's `Plan`): the user's query, the tools the planner could use and
/// the steps, plus the plan inputs of v0.3.2 on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "Plan")]
pub struct Plan {
    /// `plan-<uuid>`; absent only in hand-made files (the SDK would generate one).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "PlanId")]
    pub id: Option<PlanId>,
    /// The user's query and the tools the planner could use.
    pub plan_context: PlanContext,
    /// The steps, in order; `current_step_index` points into this list.
    pub steps: Vec<Step>,
    /// v0.3.2–v0.3.3 only: plan inputs under their first name (the SDK can no longer load these).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Vec<PlanInputV032>")]
    pub inputs: Option<Vec<PlanInputV032>>,
    /// v0.3.4+: plan inputs with default values.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Vec<PlanInput>")]
    pub plan_inputs: Option<Vec<PlanInput>>,
}

/// The planner's context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "PlanContext")]
pub struct PlanContext {
    /// The user's request.
    pub query: String,
    /// Tool ids available to the planner; emitted sorted from 0.1.6, in any order before.
    pub tool_ids: Vec<String>,
}

/// A v0.3.2/v0.3.3 plan input (unknown keys are ignored, as the SDK does).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self")]
#[schemars(rename = "PlanInputV032")]
pub struct PlanInputV032 {
    /// The input's name.
    pub name: String,
    /// Required in this release.
    pub description: String,
}

/// A v0.3.4+ plan input; `value` is native JSON (not stringified). Unknown keys are ignored, as
/// the SDK does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self")]
#[schemars(rename = "PlanInput")]
pub struct PlanInput {
    /// The input's name, as the plan spells it (with or without `$`).
    pub name: String,
    /// Optional description.
    #[serde(default)]
    pub description: Option<String>,
    /// Default value, native JSON (`null` when absent).
    #[serde(default)]
    pub value: Value,
}

/// A step input: a reference to an earlier step's output or to a plan input. Unknown keys are
/// ignored, as the SDK ignores them from 0.1.13 on (it refused them before).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self")]
#[schemars(rename = "Variable")]
pub struct Variable {
    /// A `$name` output of an earlier step, or a plan input name.
    pub name: String,
    /// Before v0.1.12 only: a constant value (any JSON, `null` included); kept absent when
    /// absent.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Value")]
    pub value: Option<Value>,
    /// Required until v0.7.0, `""` by default after.
    #[serde(default)]
    pub description: String,
}

serde_object!(Plan, PlanContext, PlanInputV032, PlanInput, Variable);

/// A plan step; `extra="allow"` from 0.1.7, so unknown keys are kept after the declared ones.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// What to do.
    pub task: String,
    /// Inputs from earlier steps or the plan's inputs.
    pub inputs: Vec<Variable>,
    /// The tool, if any.
    pub tool_id: Option<String>,
    /// The name the step's output is stored under (`$…`).
    pub output: String,
    /// 0.1.8+: `None` when the key is absent, `Some(None)` when null.
    pub condition: Option<Option<String>>,
    /// Unknown keys, in input order.
    pub extra: IndexMap<String, Value>,
}

impl Serialize for Step {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("task", &self.task)?;
        map.serialize_entry("inputs", &self.inputs)?;
        map.serialize_entry("tool_id", &self.tool_id)?;
        map.serialize_entry("output", &self.output)?;
        if let Some(condition) = &self.condition {
            map.serialize_entry("condition", condition)?;
        }
        for (key, value) in &self.extra {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(StepVisitor)
    }
}

struct StepVisitor;

impl<'de> Visitor<'de> for StepVisitor {
    type Value = Step;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a plan step object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Step, A::Error> {
        let (mut task, mut output) = (None, None);
        let mut inputs = Vec::new();
        let mut tool_id = None;
        let mut condition = None;
        let mut extra = IndexMap::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "task" => task = Some(map.next_value()?),
                "inputs" => inputs = map.next_value()?,
                "tool_id" => tool_id = map.next_value()?,
                "output" => output = Some(map.next_value()?),
                "condition" => condition = Some(map.next_value()?),
                "structured_output_schema" => return Err(de::Error::custom(
                    "`structured_output_schema` is never written by the SDK (it is a Python type)",
                )),
                _ => {
                    let value = map.next_value()?;
                    extra.insert(key, value);
                }
            }
        }
        Ok(Step {
            task: task.ok_or_else(|| de::Error::missing_field("task"))?,
            inputs,
            tool_id,
            output: output.ok_or_else(|| de::Error::missing_field("output"))?,
            condition,
            extra,
        })
    }
}

impl JsonSchema for Step {
    fn schema_name() -> Cow<'static, str> {
        "Step".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let inputs = generator.subschema_for::<Vec<Variable>>();
        json_schema!({
            "description": "A plan step. Unknown keys are allowed and kept after the declared ones (the SDK's `extra=\"allow\"`, 0.1.7 on), except `structured_output_schema`: a Python type the SDK never writes.",
            "type": "object",
            "properties": {
                "task": {"type": "string", "description": "What to do."},
                "inputs": with_description(inputs, "Inputs from earlier steps or the plan's inputs (`[]` when absent)."),
                "tool_id": {"type": ["string", "null"], "description": "The tool, if any."},
                "output": {"type": "string", "description": "The name the step's output is stored under (`$…`)."},
                "condition": {"type": ["string", "null"], "description": "0.1.8+: a condition in words; the step is skipped when it is false. Kept absent when absent."},
                "structured_output_schema": false
            },
            "required": ["task", "output"],
            "additionalProperties": true
        })
    }
}

/// The key the SDK's `Plan` validator keeps unique across a plan's steps (from 0.1.8; the
/// output alone from 0.1.6): `output + (condition or "")`.
pub(crate) fn validator_key(output: &str, condition: Option<&str>) -> String {
    format!("{output}{}", condition.unwrap_or_default())
}

/// The position and value of the first item equal to an earlier one, as the `Plan` validators
/// find a repeat; `None` items take part in neither side.
pub(crate) fn first_repeated<T: Eq + std::hash::Hash + Clone>(
    items: impl IntoIterator<Item = Option<T>>,
) -> Option<(usize, T)> {
    let mut seen = std::collections::HashSet::new();
    items.into_iter().enumerate().find_map(|(i, item)| {
        item.filter(|item| !seen.insert(item.clone()))
            .map(|item| (i, item))
    })
}
