//! Clarifications a run raised, tagged by the SDK's own `category` strings.
//!
//! Every variant carries the base fields and an `extra` map. Category fields are nullable because
//! the SDK falls back to its base class when they are missing; a legacy file whose fields disagree
//! with its category keeps category, fields and unknown keys as they were (nothing is repaired).

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{self, CLARIFICATION_ID_PATTERN};
use crate::int;
use crate::wire::{self, Nullable};
use planrun_wire::serde_tagged;

/// A clarification: a question the run asked its user, and the answer once resolved.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
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
        #[serde(deserialize_with = "wire::nullable")]
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
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        source: Option<String>,
        /// The argument the clarification is about, if the file names one.
        #[serde(deserialize_with = "wire::nullable")]
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
        #[serde(deserialize_with = "wire::nullable")]
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
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        source: Option<String>,
        /// The URL the user must visit, as the SDK normalised it.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        action_url: Option<String>,
        /// Whether the user must confirm once done; `null` where the legacy file predates the field.
        #[serde(deserialize_with = "wire::nullable")]
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
        #[serde(deserialize_with = "wire::nullable")]
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
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        source: Option<String>,
        /// The argument the value is for.
        #[serde(deserialize_with = "wire::nullable")]
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
        #[serde(deserialize_with = "wire::nullable")]
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
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        source: Option<String>,
        /// The argument the choice is for.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        argument_name: Option<String>,
        /// The options offered (any JSON values).
        #[serde(deserialize_with = "wire::nullable")]
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
        #[serde(deserialize_with = "wire::nullable")]
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
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        source: Option<String>,
        /// The argument whose value is confirmed.
        #[serde(deserialize_with = "wire::nullable")]
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
        #[serde(deserialize_with = "wire::nullable")]
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
        #[serde(deserialize_with = "wire::nullable")]
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
        #[serde(deserialize_with = "wire::nullable")]
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
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        source: Option<String>,
        /// The application's name for this kind of clarification.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        name: Option<String>,
        /// The application's data for the clarification.
        #[serde(deserialize_with = "wire::nullable")]
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
        match self {
            ClarificationCategory::Argument => "Argument",
            ClarificationCategory::Action => "Action",
            ClarificationCategory::Input => "Input",
            ClarificationCategory::MultipleChoice => "Multiple Choice",
            ClarificationCategory::ValueConfirmation => "Value Confirmation",
            ClarificationCategory::UserVerification => "User Verification",
            ClarificationCategory::Custom => "Custom",
        }
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

serde_tagged!(Clarification => "category");
