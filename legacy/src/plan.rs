//! The legacy `Plan` in every variant of §3: keys that came and went by release (`Variable.value`,
//! `Step.condition`, `inputs`, `plan_inputs`) are kept present or absent exactly as read.

use std::fmt;

use indexmap::IndexMap;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::id::PlanId;

/// A plan: its query, tools and steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// `plan-<uuid>`; absent only in hand-made files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<PlanId>,
    /// The user's query and the tools the planner could use.
    pub plan_context: PlanContext,
    /// The steps, in order; `current_step_index` points into this list.
    pub steps: Vec<Step>,
    /// v0.3.2–v0.3.3 only: plan inputs under their first name (the SDK can no longer load these).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Vec<PlanInputV032>>,
    /// v0.3.4+: plan inputs with default values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_inputs: Option<Vec<PlanInput>>,
}

/// The planner's context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanContext {
    /// The user's request.
    pub query: String,
    /// Tool ids available to the planner; emitted sorted from 0.1.6, in any order before.
    pub tool_ids: Vec<String>,
}

/// A v0.3.2/v0.3.3 plan input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanInputV032 {
    /// The input's name.
    pub name: String,
    /// Required in this release.
    pub description: String,
}

/// A v0.3.4+ plan input; `value` is native JSON (not stringified).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanInput {
    /// The input's name, as the plan spells it (with or without `$`).
    pub name: String,
    /// Optional description.
    #[serde(default)]
    pub description: Option<String>,
    /// Default value.
    #[serde(default)]
    pub value: Value,
}

/// A step input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variable {
    /// A `$name` output of an earlier step, or a plan input name.
    pub name: String,
    /// Before v0.1.12 only: a constant value; `None` when the key is absent.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub value: Option<Value>,
    /// Required until v0.7.0, `""` by default after.
    #[serde(default)]
    pub description: String,
}

fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

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
