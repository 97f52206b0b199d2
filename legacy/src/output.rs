//! Step and final outputs: the old single `Output` (W1–R1) and the R2+ union of `LocalDataValue`
//! and `AgentMemoryValue`, which has no tag and is told apart by its keys.

use std::borrow::Cow;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::id::{PrunId, RunId};
use crate::scalar::stringified_value;
use planrun_wire::serde_object;

/// The W1–R1 `Output` and the R2+ `LocalDataValue`: a value stored inline, as a string, and an
/// optional summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "LocalDataValue")]
pub struct LocalDataValue {
    /// The SDK writes a string: it stringifies every value (`None` as `""`, numbers, lists and
    /// objects as their JSON text). Any JSON value is read and written back as that string.
    #[serde(default, deserialize_with = "stringified_value")]
    #[schemars(with = "serde_json::Value")]
    pub value: String,
    /// A summary of the value; `null` and `""` are different values and stay different.
    #[serde(default)]
    pub summary: Option<String>,
}

/// W1–R1 name of [`LocalDataValue`]; the wire is the same.
pub type OldOutput = LocalDataValue;

/// A reference to an output stored out of line, in `<prun-id>/<output_name>.json` (R2+).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "AgentMemoryValue")]
pub struct AgentMemoryValue {
    /// The output's name, with its `$`.
    pub output_name: String,
    /// The run whose agent memory holds the value (always a `prun-` run).
    #[serde(deserialize_with = "crate::id::prun")]
    #[schemars(with = "PrunId")]
    pub plan_run_id: RunId,
    /// A summary of the value; required and never null for agent-memory values.
    pub summary: String,
}

serde_object!(LocalDataValue, AgentMemoryValue);

/// An R2+ output: local or in agent memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Output {
    /// The value is inline.
    Local(LocalDataValue),
    /// The value lives in agent memory.
    AgentMemory(AgentMemoryValue),
}

impl Output {
    /// The summary, whichever kind this is.
    pub fn summary(&self) -> Option<&str> {
        match self {
            Output::Local(local) => local.summary.as_deref(),
            Output::AgentMemory(memory) => Some(&memory.summary),
        }
    }
}

impl From<LocalDataValue> for Output {
    fn from(local: LocalDataValue) -> Self {
        Output::Local(local)
    }
}

impl<'de> Deserialize<'de> for Output {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(OutputVisitor)
    }
}

struct OutputVisitor;

#[derive(Deserialize)]
struct Stringified(#[serde(deserialize_with = "stringified_value")] String);

impl<'de> Visitor<'de> for OutputVisitor {
    type Value = Output;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an output: {value, summary} or {output_name, plan_run_id, summary}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Output, A::Error> {
        let mut value: Option<String> = None;
        let mut summary: Option<Option<String>> = None;
        let mut output_name: Option<String> = None;
        let mut plan_run_id: Option<RunId> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "value" => value = Some(map.next_value::<Stringified>()?.0),
                "summary" => summary = Some(map.next_value()?),
                "output_name" => output_name = Some(map.next_value()?),
                "plan_run_id" => plan_run_id = Some(map.next_value::<PrunId>()?.0),
                other => {
                    return Err(de::Error::unknown_field(
                        other,
                        &["value", "summary", "output_name", "plan_run_id"],
                    ))
                }
            }
        }
        if output_name.is_none() && plan_run_id.is_none() {
            return Ok(Output::Local(LocalDataValue {
                value: value.unwrap_or_default(),
                summary: summary.flatten(),
            }));
        }
        if value.is_some() {
            return Err(de::Error::custom(
                "an output holds either `value` (LocalDataValue) or `output_name` and `plan_run_id` (AgentMemoryValue), not both",
            ));
        }
        Ok(Output::AgentMemory(AgentMemoryValue {
            output_name: output_name.ok_or_else(|| de::Error::missing_field("output_name"))?,
            plan_run_id: plan_run_id.ok_or_else(|| de::Error::missing_field("plan_run_id"))?,
            summary: summary
                .flatten()
                .ok_or_else(|| de::Error::custom("an AgentMemoryValue needs a string `summary`"))?,
        }))
    }
}

impl JsonSchema for Output {
    fn schema_name() -> Cow<'static, str> {
        "Output".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let local = generator.subschema_for::<LocalDataValue>();
        let memory = generator.subschema_for::<AgentMemoryValue>();
        json_schema!({
            "description": "A step or final output. The SDK's union has no tag: an object with `output_name` or `plan_run_id` is an AgentMemoryValue (R2 on), any other object a LocalDataValue (the W1–R1 `Output` has the same wire).",
            "oneOf": [local, memory]
        })
    }
}
