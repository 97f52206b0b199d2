//! Output values: local values, agent-memory references, and the outputs of plan steps.

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::ids::{self, PLAN_RUN_ID_PATTERN};
use crate::int;
use crate::wire::{self, Nullable};
use planrun_wire::serde_object;

/// The value of a step output or of the final output: held inline, or referenced in agent memory.
#[derive(Serialize, JsonSchema, Debug, Clone, PartialEq)]
#[cfg_attr(test, derive(Deserialize))]
#[serde(
    remote = "Self",
    tag = "kind",
    rename_all = "snake_case",
    deny_unknown_fields
)]
#[schemars(rename = "Output")]
pub enum Output {
    /// A value held inline (the SDK's `LocalDataValue`).
    Local {
        /// The value. Legacy values are strings (the SDK stringified every value) and stay strings.
        #[serde(deserialize_with = "wire::value")]
        value: serde_json::Value,
        /// The summary of the value; `null` and `""` are different values and both are kept.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        summary: Option<String>,
    },
    /// A value stored out of line in agent memory (the SDK's `AgentMemoryValue`), kept as a reference.
    AgentMemory {
        /// The name the value is stored under in agent memory, e.g. `$big_report`.
        output_name: String,
        /// The run whose agent memory holds the value.
        #[serde(deserialize_with = "ids::plan_run")]
        #[schemars(pattern(PLAN_RUN_ID_PATTERN))]
        plan_run_id: String,
        /// The summary stored beside the value (never null in the SDK).
        summary: String,
    },
}

/// A value with its summary, without a tag: the shape of a plan run input.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "LocalDataValue")]
pub struct LocalDataValue {
    /// The value. Legacy values are strings (the SDK stringified every value) and stay strings.
    #[serde(deserialize_with = "wire::value")]
    pub value: serde_json::Value,
    /// The summary of the value; `null` and `""` are different values and both are kept.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<String>")]
    pub summary: Option<String>,
}

/// One output of a run, tied to the plan step that produced it where one does.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "StepOutputValue")]
pub struct StepOutputValue {
    /// Index of the producing step in `plan.steps`; `null` when no plan step produces this output.
    #[serde(deserialize_with = "int::nullable")]
    #[schemars(with = "Nullable<i64>")]
    pub step_num: Option<i64>,
    /// `step_name` of the producing step; `null` when no plan step produces this output.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<String>")]
    pub step_name: Option<String>,
    /// The legacy output key, e.g. `$flights` or `$step_2_output`; kept so a downgrade restores it.
    pub output_name: String,
    /// What the output is, as the SDK's `StepOutputValue.description` (`""` when unknown).
    pub description: String,
    /// The output itself.
    pub output: Output,
}

serde_object!(LocalDataValue, StepOutputValue);

impl Serialize for Output {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Output::serialize(self, serializer)
    }
}

/// Reads an `Output` straight from its object, key by key. It accepts exactly what the derived
/// reader behind `serde_tagged!` accepts (an object whose string `kind` names a variant, with
/// that variant's keys and no others, each once), which is the published schema; but that reader
/// copies the object's text and buffers it before building the variant, and step outputs are
/// the largest texts of a run, read again by every migration's verify pass.
impl<'de> Deserialize<'de> for Output {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(OutputVisitor)
    }
}

const LOCAL_KEYS: &[&str] = &["kind", "value", "summary"];
const AGENT_MEMORY_KEYS: &[&str] = &["kind", "output_name", "plan_run_id", "summary"];
const KINDS: &[&str] = &["local", "agent_memory"];

/// Every key of either variant, in the order [`OutputKey`] numbers them.
const KEYS: [&str; 5] = ["kind", "value", "summary", "output_name", "plan_run_id"];

/// A key of an `Output` object: its index in [`KEYS`].
struct OutputKey(usize);

impl<'de> Deserialize<'de> for OutputKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        wire::key_index(deserializer, &KEYS, LOCAL_KEYS).map(OutputKey)
    }
}

/// The `kind` tag.
enum Kind {
    Local,
    AgentMemory,
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KindVisitor;
        impl Visitor<'_> for KindVisitor {
            type Value = Kind;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("`kind` as a string")
            }
            fn visit_str<E: de::Error>(self, kind: &str) -> Result<Kind, E> {
                match kind {
                    "local" => Ok(Kind::Local),
                    "agent_memory" => Ok(Kind::AgentMemory),
                    other => Err(E::unknown_variant(other, KINDS)),
                }
            }
        }
        deserializer.deserialize_str(KindVisitor)
    }
}

#[derive(Deserialize)]
struct ValueField(#[serde(deserialize_with = "wire::value")] serde_json::Value);

#[derive(Deserialize)]
struct RunIdField(#[serde(deserialize_with = "ids::plan_run")] String);

struct OutputVisitor;

impl<'de> Visitor<'de> for OutputVisitor {
    type Value = Output;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("internally tagged enum Output")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Output, A::Error> {
        let mut kind = None;
        let mut value = None;
        let mut summary: Option<Option<String>> = None;
        let mut output_name = None;
        let mut plan_run_id = None;
        let mut seen = [false; 5];
        while let Some(OutputKey(key)) = map.next_key()? {
            if std::mem::replace(&mut seen[key], true) {
                return Err(de::Error::duplicate_field(KEYS[key]));
            }
            match key {
                0 => kind = Some(map.next_value::<Kind>()?),
                1 => value = Some(map.next_value::<ValueField>()?.0),
                2 => summary = Some(map.next_value()?),
                3 => output_name = Some(map.next_value::<String>()?),
                _ => plan_run_id = Some(map.next_value::<RunIdField>()?.0),
            }
        }
        let missing = |name| de::Error::missing_field(name);
        match kind.ok_or_else(|| missing("kind"))? {
            Kind::Local => {
                if output_name.is_some() {
                    return Err(de::Error::unknown_field("output_name", LOCAL_KEYS));
                }
                if plan_run_id.is_some() {
                    return Err(de::Error::unknown_field("plan_run_id", LOCAL_KEYS));
                }
                Ok(Output::Local {
                    value: value.ok_or_else(|| missing("value"))?,
                    summary: summary.ok_or_else(|| missing("summary"))?,
                })
            }
            Kind::AgentMemory => {
                if value.is_some() {
                    return Err(de::Error::unknown_field("value", AGENT_MEMORY_KEYS));
                }
                let summary = summary.ok_or_else(|| missing("summary"))?.ok_or_else(|| {
                    de::Error::invalid_type(de::Unexpected::Unit, &"a string summary")
                })?;
                Ok(Output::AgentMemory {
                    output_name: output_name.ok_or_else(|| missing("output_name"))?,
                    plan_run_id: plan_run_id.ok_or_else(|| missing("plan_run_id"))?,
                    summary,
                })
            }
        }
    }
}

#[cfg(all(test, feature = "testkit"))]
mod tests {
    use super::Output;
    use crate::agreement::{assert_tagged_verdict, mutants, reversed};
    use crate::strategies::output;
    use proptest::prelude::*;

    fn same_verdict(text: &str) {
        assert_tagged_verdict(text, "kind", |r| Output::deserialize(r));
    }

    #[test]
    fn hand_picked_shapes_get_the_derived_readers_verdicts() {
        for text in [
            r#"{"kind": "local", "value": 1, "summary": null}"#,
            r#"{"value": [1, {"a": 2}], "summary": "s", "kind": "local"}"#,
            r#"{"kind": "local", "value": 1, "summary": null, "kind": "local"}"#,
            r#"{"kind": "local", "value": 1}"#,
            r#"{"kind": "local", "summary": null}"#,
            r#"{"kind": "Local", "value": 1, "summary": null}"#,
            r#"{"kind": 0, "value": 1, "summary": null}"#,
            r#"{"kind": "local", "value": 1, "summary": null, "output_name": "$x"}"#,
            r#"{"kind": "agent_memory", "output_name": "$x", "plan_run_id": "prun-00000000-0000-0000-0000-000000000000", "summary": "s"}"#,
            r#"{"kind": "agent_memory", "output_name": "$x", "plan_run_id": "prun-00000000-0000-0000-0000-000000000000", "summary": null}"#,
            r#"{"kind": "agent_memory", "output_name": "$x", "plan_run_id": "pr-00000000-0000-0000-0000-000000000000", "summary": "s"}"#,
            r#"{"kind": "agent_memory", "output_name": "$x", "plan_run_id": "prun-00000000-0000-0000-0000-000000000000", "summary": "s", "value": 1}"#,
            r#"{"kin\u0064": "loc\u0061l", "value": 18446744073709551616123, "summary": ""}"#,
            r#"["local", 1, null]"#,
            "{}",
            "null",
        ] {
            same_verdict(text);
        }
    }

    proptest! {
        #[test]
        fn generated_outputs_and_their_mutants_get_the_derived_readers_verdicts(out in output()) {
            let doc = serde_json::to_value(&out).unwrap();
            same_verdict(&serde_json::to_string(&doc).unwrap());
            same_verdict(&serde_json::to_string(&reversed(&doc)).unwrap());
            for mutant in mutants(&doc) {
                same_verdict(&serde_json::to_string(&mutant.doc).unwrap());
                same_verdict(&serde_json::to_string(&reversed(&mutant.doc)).unwrap());
            }
        }
    }
}
