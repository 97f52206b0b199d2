//! Clarifications a run raised, tagged by the SDK's own `category` strings.
//!
//! Every variant carries the base fields and an `extra` map. Category fields are nullable because
//! the SDK falls back to its base class when they are missing; a legacy file whose fields disagree
//! with its category keeps category, fields and unknown keys as they were (nothing is repaired).

use std::fmt;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::ids::{self, CLARIFICATION_ID_PATTERN};
use crate::int;
use crate::wire::Nullable;

/// A clarification: a question the run asked its user, and the answer once resolved.
#[derive(Serialize, JsonSchema, Debug, Clone, PartialEq)]
#[cfg_attr(test, derive(Deserialize))]
#[serde(remote = "Self", tag = "category", deny_unknown_fields)]
#[schemars(rename = "Clarification")]
pub enum Clarification {
    /// An argument clarification (W1 only; the SDK wrote it without `argument_name`).
    #[serde(rename = "Argument")]
    Argument {
        /// The clarification id, `clar-<uuid>`.
        #[serde(deserialize_with = "ids::clarification")]
        #[schemars(pattern(CLARIFICATION_ID_PATTERN))]
        id: String,
        /// The run the clarification belongs to, as the legacy file named it (not checked).
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        plan_run_id: Option<String>,
        /// The user's answer (native JSON); `null` while unanswered.
        response: Value,
        /// Index of the plan step that raised it, if known.
        #[serde(deserialize_with = "int::nullable")]
        #[schemars(with = "Nullable<i64>")]
        step: Option<i64>,
        /// The question or instruction shown to the user.
        user_guidance: String,
        /// Whether the user has answered.
        resolved: bool,
        /// What raised the clarification (an agent, a tool id), if recorded.
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        source: Option<String>,
        /// The argument the clarification is about, if the file names one.
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        argument_name: Option<String>,
        /// Keys of the legacy object this format has no field for, kept verbatim.
        extra: IndexMap<String, Value>,
    },
    /// The user must do something outside the run, such as authenticate at a URL.
    #[serde(rename = "Action")]
    Action {
        /// The clarification id, `clar-<uuid>`.
        #[serde(deserialize_with = "ids::clarification")]
        #[schemars(pattern(CLARIFICATION_ID_PATTERN))]
        id: String,
        /// The run the clarification belongs to, as the legacy file named it (not checked).
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        plan_run_id: Option<String>,
        /// The user's answer (native JSON); `null` while unanswered.
        response: Value,
        /// Index of the plan step that raised it, if known.
        #[serde(deserialize_with = "int::nullable")]
        #[schemars(with = "Nullable<i64>")]
        step: Option<i64>,
        /// The question or instruction shown to the user.
        user_guidance: String,
        /// Whether the user has answered.
        resolved: bool,
        /// What raised the clarification (an agent, a tool id), if recorded.
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        source: Option<String>,
        /// The URL the user must visit, as the SDK normalised it.
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        action_url: Option<String>,
        /// Whether the user must confirm once done; `null` where the legacy file predates the field.
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<bool>")]
        require_confirmation: Option<bool>,
        /// Keys of the legacy object this format has no field for, kept verbatim.
        extra: IndexMap<String, Value>,
    },
    /// The user must supply a value for an argument.
    #[serde(rename = "Input")]
    Input {
        /// The clarification id, `clar-<uuid>`.
        #[serde(deserialize_with = "ids::clarification")]
        #[schemars(pattern(CLARIFICATION_ID_PATTERN))]
        id: String,
        /// The run the clarification belongs to, as the legacy file named it (not checked).
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        plan_run_id: Option<String>,
        /// The user's answer (native JSON); `null` while unanswered.
        response: Value,
        /// Index of the plan step that raised it, if known.
        #[serde(deserialize_with = "int::nullable")]
        #[schemars(with = "Nullable<i64>")]
        step: Option<i64>,
        /// The question or instruction shown to the user.
        user_guidance: String,
        /// Whether the user has answered.
        resolved: bool,
        /// What raised the clarification (an agent, a tool id), if recorded.
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        source: Option<String>,
        /// The argument the value is for.
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        argument_name: Option<String>,
        /// Keys of the legacy object this format has no field for, kept verbatim.
        extra: IndexMap<String, Value>,
    },
    /// The user must pick one of a list of options.
    #[serde(rename = "Multiple Choice")]
    MultipleChoice {
        /// The clarification id, `clar-<uuid>`.
        #[serde(deserialize_with = "ids::clarification")]
        #[schemars(pattern(CLARIFICATION_ID_PATTERN))]
        id: String,
        /// The run the clarification belongs to, as the legacy file named it (not checked).
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        plan_run_id: Option<String>,
        /// The user's answer (native JSON); `null` while unanswered.
        response: Value,
        /// Index of the plan step that raised it, if known.
        #[serde(deserialize_with = "int::nullable")]
        #[schemars(with = "Nullable<i64>")]
        step: Option<i64>,
        /// The question or instruction shown to the user.
        user_guidance: String,
        /// Whether the user has answered.
        resolved: bool,
        /// What raised the clarification (an agent, a tool id), if recorded.
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        source: Option<String>,
        /// The argument the choice is for.
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        argument_name: Option<String>,
        /// The options offered (any JSON values).
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<Vec<Value>>")]
        options: Option<Vec<Value>>,
        /// Keys of the legacy object this format has no field for, kept verbatim.
        extra: IndexMap<String, Value>,
    },
    /// The user must confirm a value the agent is about to use.
    #[serde(rename = "Value Confirmation")]
    ValueConfirmation {
        /// The clarification id, `clar-<uuid>`.
        #[serde(deserialize_with = "ids::clarification")]
        #[schemars(pattern(CLARIFICATION_ID_PATTERN))]
        id: String,
        /// The run the clarification belongs to, as the legacy file named it (not checked).
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        plan_run_id: Option<String>,
        /// The user's answer (native JSON); `null` while unanswered.
        response: Value,
        /// Index of the plan step that raised it, if known.
        #[serde(deserialize_with = "int::nullable")]
        #[schemars(with = "Nullable<i64>")]
        step: Option<i64>,
        /// The question or instruction shown to the user.
        user_guidance: String,
        /// Whether the user has answered.
        resolved: bool,
        /// What raised the clarification (an agent, a tool id), if recorded.
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        source: Option<String>,
        /// The argument whose value is confirmed.
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        argument_name: Option<String>,
        /// Keys of the legacy object this format has no field for, kept verbatim.
        extra: IndexMap<String, Value>,
    },
    /// The user must approve before the run goes on (from SDK v0.4.0).
    #[serde(rename = "User Verification")]
    UserVerification {
        /// The clarification id, `clar-<uuid>`.
        #[serde(deserialize_with = "ids::clarification")]
        #[schemars(pattern(CLARIFICATION_ID_PATTERN))]
        id: String,
        /// The run the clarification belongs to, as the legacy file named it (not checked).
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        plan_run_id: Option<String>,
        /// The user's answer (native JSON; the SDK expects a bool); `null` while unanswered.
        response: Value,
        /// Index of the plan step that raised it, if known.
        #[serde(deserialize_with = "int::nullable")]
        #[schemars(with = "Nullable<i64>")]
        step: Option<i64>,
        /// The question or instruction shown to the user.
        user_guidance: String,
        /// Whether the user has answered.
        resolved: bool,
        /// What raised the clarification (an agent, a tool id), if recorded.
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        source: Option<String>,
        /// Keys of the legacy object this format has no field for, kept verbatim.
        extra: IndexMap<String, Value>,
    },
    /// A clarification defined by the application, with its own name and data.
    #[serde(rename = "Custom")]
    Custom {
        /// The clarification id, `clar-<uuid>`.
        #[serde(deserialize_with = "ids::clarification")]
        #[schemars(pattern(CLARIFICATION_ID_PATTERN))]
        id: String,
        /// The run the clarification belongs to, as the legacy file named it (not checked).
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        plan_run_id: Option<String>,
        /// The user's answer (native JSON); `null` while unanswered.
        response: Value,
        /// Index of the plan step that raised it, if known.
        #[serde(deserialize_with = "int::nullable")]
        #[schemars(with = "Nullable<i64>")]
        step: Option<i64>,
        /// The question or instruction shown to the user.
        user_guidance: String,
        /// Whether the user has answered.
        resolved: bool,
        /// What raised the clarification (an agent, a tool id), if recorded.
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        source: Option<String>,
        /// The application's name for this kind of clarification.
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        name: Option<String>,
        /// The application's data for the clarification.
        #[serde(deserialize_with = "crate::wire::nullable")]
        #[schemars(with = "Nullable<IndexMap<String, Value>>")]
        data: Option<IndexMap<String, Value>>,
        /// Keys of the legacy object this format has no field for, kept verbatim.
        extra: IndexMap<String, Value>,
    },
}

/// The category of a clarification, with the SDK's strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClarificationCategory {
    /// `"Argument"` (W1 only).
    Argument,
    /// `"Action"`.
    Action,
    /// `"Input"`.
    Input,
    /// `"Multiple Choice"`.
    MultipleChoice,
    /// `"Value Confirmation"`.
    ValueConfirmation,
    /// `"User Verification"`.
    UserVerification,
    /// `"Custom"`.
    Custom,
}

impl ClarificationCategory {
    /// Every category, in the SDK's order.
    pub const ALL: [ClarificationCategory; 7] = [
        ClarificationCategory::Argument,
        ClarificationCategory::Action,
        ClarificationCategory::Input,
        ClarificationCategory::MultipleChoice,
        ClarificationCategory::ValueConfirmation,
        ClarificationCategory::UserVerification,
        ClarificationCategory::Custom,
    ];

    /// The SDK's category string, which is also the `category` tag on the wire.
    pub fn as_str(self) -> &'static str {
        CATEGORY_NAMES[self.index()]
    }

    /// The category's place in [`ClarificationCategory::ALL`].
    fn index(self) -> usize {
        self as usize
    }

    /// The category for an SDK category string, if it is one.
    pub fn from_sdk(text: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|category| category.as_str() == text)
    }
}

/// Expands to a `match` that binds one field present in every variant of [`Clarification`].
macro_rules! each_clarification {
    ($clarification:expr, $field:ident) => {
        match $clarification {
            Clarification::Argument { $field, .. }
            | Clarification::Action { $field, .. }
            | Clarification::Input { $field, .. }
            | Clarification::MultipleChoice { $field, .. }
            | Clarification::ValueConfirmation { $field, .. }
            | Clarification::UserVerification { $field, .. }
            | Clarification::Custom { $field, .. } => $field,
        }
    };
}

impl Clarification {
    /// The clarification's category.
    pub fn category(&self) -> ClarificationCategory {
        match self {
            Clarification::Argument { .. } => ClarificationCategory::Argument,
            Clarification::Action { .. } => ClarificationCategory::Action,
            Clarification::Input { .. } => ClarificationCategory::Input,
            Clarification::MultipleChoice { .. } => ClarificationCategory::MultipleChoice,
            Clarification::ValueConfirmation { .. } => ClarificationCategory::ValueConfirmation,
            Clarification::UserVerification { .. } => ClarificationCategory::UserVerification,
            Clarification::Custom { .. } => ClarificationCategory::Custom,
        }
    }

    /// The clarification id.
    pub fn id(&self) -> &str {
        each_clarification!(self, id)
    }

    /// The run id the clarification names, if any.
    pub fn plan_run_id(&self) -> Option<&str> {
        each_clarification!(self, plan_run_id).as_deref()
    }

    /// The user's answer (`null` while unanswered).
    pub fn response(&self) -> &Value {
        each_clarification!(self, response)
    }

    /// Index of the plan step that raised it, if known.
    pub fn step(&self) -> Option<i64> {
        *each_clarification!(self, step)
    }

    /// The question or instruction shown to the user.
    pub fn user_guidance(&self) -> &str {
        each_clarification!(self, user_guidance)
    }

    /// Whether the user has answered.
    pub fn resolved(&self) -> bool {
        *each_clarification!(self, resolved)
    }

    /// What raised the clarification, if recorded.
    pub fn source(&self) -> Option<&str> {
        each_clarification!(self, source).as_deref()
    }

    /// Keys of the legacy object this format has no field for.
    pub fn extra(&self) -> &IndexMap<String, Value> {
        each_clarification!(self, extra)
    }

    /// The argument the clarification is about, for the categories that have one.
    pub fn argument_name(&self) -> Option<&str> {
        match self {
            Clarification::Argument { argument_name, .. }
            | Clarification::Input { argument_name, .. }
            | Clarification::MultipleChoice { argument_name, .. }
            | Clarification::ValueConfirmation { argument_name, .. } => argument_name.as_deref(),
            Clarification::Action { .. }
            | Clarification::UserVerification { .. }
            | Clarification::Custom { .. } => None,
        }
    }
}

impl Serialize for Clarification {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Clarification::serialize(self, serializer)
    }
}

/// Reads a `Clarification` straight from its object, key by key. It accepts exactly what the
/// derived reader behind `serde_tagged!` accepts (an object whose string `category` names a
/// variant, with that variant's keys and no others, each once), which is the published schema;
/// but that reader copies the object's text and buffers every value before building the
/// variant, which made clarifications the costliest part of a run to check.
impl<'de> Deserialize<'de> for Clarification {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ClarificationVisitor)
    }
}

/// Every key of any variant, in the order [`Key`] numbers them.
const KEYS: [&str; 15] = [
    "category",
    "id",
    "plan_run_id",
    "response",
    "step",
    "user_guidance",
    "resolved",
    "source",
    "argument_name",
    "action_url",
    "require_confirmation",
    "options",
    "name",
    "data",
    "extra",
];

/// The keys every category has, with the category's own ones before `extra`.
macro_rules! variant_keys {
    ($($own:literal),*) => {
        &[
            "category",
            "id",
            "plan_run_id",
            "response",
            "step",
            "user_guidance",
            "resolved",
            "source",
            $($own,)*
            "extra",
        ]
    };
}

/// The keys of each category, as [`ClarificationCategory::ALL`] orders them.
const VARIANT_KEYS: [&[&str]; 7] = [
    variant_keys!("argument_name"),
    variant_keys!("action_url", "require_confirmation"),
    variant_keys!("argument_name"),
    variant_keys!("argument_name", "options"),
    variant_keys!("argument_name"),
    variant_keys!(),
    variant_keys!("name", "data"),
];

/// The SDK's category strings, in the order of [`ClarificationCategory::ALL`].
const CATEGORY_NAMES: [&str; 7] = [
    "Argument",
    "Action",
    "Input",
    "Multiple Choice",
    "Value Confirmation",
    "User Verification",
    "Custom",
];

/// A key of a `Clarification` object: its index in [`KEYS`].
struct Key(usize);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::wire::key_index(deserializer, &KEYS, &KEYS).map(Key)
    }
}

impl<'de> Deserialize<'de> for ClarificationCategory {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CategoryVisitor;
        impl Visitor<'_> for CategoryVisitor {
            type Value = ClarificationCategory;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("`category` as a string")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<ClarificationCategory, E> {
                ClarificationCategory::from_sdk(text)
                    .ok_or_else(|| E::unknown_variant(text, &CATEGORY_NAMES))
            }
        }
        deserializer.deserialize_str(CategoryVisitor)
    }
}

#[derive(Deserialize)]
struct IdField(#[serde(deserialize_with = "ids::clarification")] String);

#[derive(Deserialize)]
struct StepField(#[serde(deserialize_with = "int::nullable")] Option<i64>);

/// The values read so far, one slot per key of [`KEYS`].
#[derive(Default)]
struct Slots {
    category: Option<ClarificationCategory>,
    id: Option<String>,
    plan_run_id: Option<Option<String>>,
    response: Option<Value>,
    step: Option<Option<i64>>,
    user_guidance: Option<String>,
    resolved: Option<bool>,
    source: Option<Option<String>>,
    argument_name: Option<Option<String>>,
    action_url: Option<Option<String>>,
    require_confirmation: Option<Option<bool>>,
    options: Option<Option<Vec<Value>>>,
    name: Option<Option<String>>,
    data: Option<Option<IndexMap<String, Value>>>,
    extra: Option<IndexMap<String, Value>>,
}

struct ClarificationVisitor;

impl<'de> Visitor<'de> for ClarificationVisitor {
    type Value = Clarification;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("internally tagged enum Clarification")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Clarification, A::Error> {
        let mut s = Slots::default();
        let mut seen = [false; KEYS.len()];
        while let Some(Key(key)) = map.next_key()? {
            if std::mem::replace(&mut seen[key], true) {
                return Err(de::Error::duplicate_field(KEYS[key]));
            }
            match key {
                0 => s.category = Some(map.next_value()?),
                1 => s.id = Some(map.next_value::<IdField>()?.0),
                2 => s.plan_run_id = Some(map.next_value()?),
                3 => s.response = Some(map.next_value()?),
                4 => s.step = Some(map.next_value::<StepField>()?.0),
                5 => s.user_guidance = Some(map.next_value()?),
                6 => s.resolved = Some(map.next_value()?),
                7 => s.source = Some(map.next_value()?),
                8 => s.argument_name = Some(map.next_value()?),
                9 => s.action_url = Some(map.next_value()?),
                10 => s.require_confirmation = Some(map.next_value()?),
                11 => s.options = Some(map.next_value()?),
                12 => s.name = Some(map.next_value()?),
                13 => s.data = Some(map.next_value()?),
                _ => s.extra = Some(map.next_value()?),
            }
        }
        let category = s
            .category
            .ok_or_else(|| de::Error::missing_field("category"))?;
        let allowed = VARIANT_KEYS[category.index()];
        if let Some(key) = (0..KEYS.len()).find(|k| seen[*k] && !allowed.contains(&KEYS[*k])) {
            return Err(de::Error::unknown_field(KEYS[key], allowed));
        }
        if let Some(key) = allowed
            .iter()
            .find(|k| !seen[KEYS.iter().position(|x| x == *k).expect("a key")])
        {
            return Err(de::Error::missing_field(key));
        }
        let (id, plan_run_id, response, step, user_guidance, resolved, source, extra) = (
            s.id.expect("present"),
            s.plan_run_id.expect("present"),
            s.response.expect("present"),
            s.step.expect("present"),
            s.user_guidance.expect("present"),
            s.resolved.expect("present"),
            s.source.expect("present"),
            s.extra.expect("present"),
        );
        macro_rules! variant {
            ($name:ident { $($field:ident),* }) => {
                Clarification::$name {
                    id,
                    plan_run_id,
                    response,
                    step,
                    user_guidance,
                    resolved,
                    source,
                    $($field: s.$field.expect("present"),)*
                    extra,
                }
            };
        }
        Ok(match category {
            ClarificationCategory::Argument => variant!(Argument { argument_name }),
            ClarificationCategory::Action => variant!(Action {
                action_url,
                require_confirmation
            }),
            ClarificationCategory::Input => variant!(Input { argument_name }),
            ClarificationCategory::MultipleChoice => variant!(MultipleChoice {
                argument_name,
                options
            }),
            ClarificationCategory::ValueConfirmation => {
                variant!(ValueConfirmation { argument_name })
            }
            ClarificationCategory::UserVerification => variant!(UserVerification {}),
            ClarificationCategory::Custom => variant!(Custom { name, data }),
        })
    }
}

#[cfg(all(test, feature = "testkit"))]
mod tests {
    use proptest::prelude::*;
    use serde_json::Value;

    use super::Clarification;
    use crate::agreement::{assert_tagged_verdict, mutants, reversed};
    use crate::strategies::clarification;

    fn same_verdict(text: &str) {
        assert_tagged_verdict(text, "category", |r| Clarification::deserialize(r));
    }

    /// `doc` under every category's name in turn.
    fn recategorised(doc: &Value) -> Vec<Value> {
        super::ClarificationCategory::ALL
            .iter()
            .map(|c| {
                let mut other = doc.clone();
                other["category"] = Value::from(c.as_str());
                other
            })
            .collect()
    }

    #[test]
    fn each_category_has_its_place_and_its_name() {
        for (i, category) in super::ClarificationCategory::ALL.into_iter().enumerate() {
            assert_eq!(category.index(), i);
            assert_eq!(
                super::ClarificationCategory::from_sdk(category.as_str()),
                Some(category)
            );
        }
    }

    #[test]
    fn hand_picked_shapes_get_the_derived_readers_verdicts() {
        let base = r#""id": "clar-00000000-0000-0000-0000-000000000000", "plan_run_id": null, "response": null, "step": null, "user_guidance": "g", "resolved": false, "source": null, "extra": {}"#;
        for text in [
            format!(r#"{{"category": "Argument", {base}, "argument_name": null}}"#),
            format!(r#"{{{base}, "argument_name": "a", "category": "Input"}}"#),
            format!(
                r#"{{"category": "Input", {base}, "argument_name": "a", "category": "Input"}}"#
            ),
            format!(r#"{{"category": "Input", {base}}}"#),
            format!(r#"{{"category": "input", {base}, "argument_name": null}}"#),
            format!(r#"{{"category": 2, {base}, "argument_name": null}}"#),
            format!(r#"{{"category": null, {base}, "argument_name": null}}"#),
            format!(r#"{{{base}, "argument_name": null}}"#),
            format!(r#"{{"category": "User Verification", {base}, "argument_name": null}}"#),
            format!(r#"{{"category": "User Verification", {base}, "surprise": 1}}"#),
            format!(
                r#"{{"category": "Custom", {base}, "name": "n", "data": {{"k": [1, 2.5e3, 18446744073709551616123]}}}}"#
            ),
            format!(r#"{{"category": "Custom", {base}, "name": "n", "data": []}}"#),
            format!(
                r#"{{"category": "Multiple Choice", {base}, "argument_name": null, "options": [1, "x", null]}}"#
            ),
            format!(
                r#"{{"category": "Action", {base}, "action_url": "https://example.com", "require_confirmation": 1}}"#
            ),
            format!(
                r#"{{"categor\u0079": "Action", {base}, "action_url": null, "require_confirmation": true}}"#
            ),
            format!(
                r#"{{"category": "Value Confirmation", {}, "argument_name": "a"}}"#,
                base.replace(r#""step": null"#, r#""step": 3.0"#)
            ),
            format!(
                r#"{{"category": "Value Confirmation", {}, "argument_name": "a"}}"#,
                base.replace(r#""step": null"#, r#""step": 3.5"#)
            ),
            r#"["Argument"]"#.to_owned(),
            "{}".to_owned(),
            "null".to_owned(),
        ] {
            same_verdict(&text);
        }
    }

    proptest! {
        #[test]
        fn generated_clarifications_and_their_mutants_get_the_derived_readers_verdicts(
            clar in clarification()
        ) {
            let doc = serde_json::to_value(&clar).unwrap();
            for doc in recategorised(&doc) {
                same_verdict(&serde_json::to_string(&doc).unwrap());
                same_verdict(&serde_json::to_string(&reversed(&doc)).unwrap());
            }
            for mutant in mutants(&doc) {
                same_verdict(&serde_json::to_string(&mutant.doc).unwrap());
                same_verdict(&serde_json::to_string(&reversed(&mutant.doc)).unwrap());
            }
        }
    }
}
