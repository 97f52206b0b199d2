//! The end user a run was executed for.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use planrun_wire::serde_object;

/// The end user a run was executed for (the SDK's `EndUser`, every field written).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "EndUser")]
pub struct EndUser {
    /// The caller's own id for the user; the SDK's default end user is `portia:default_user`.
    pub external_id: String,
    /// Display name (`""` when unknown).
    pub name: String,
    /// E-mail address (`""` when unknown).
    pub email: String,
    /// Phone number (`""` when unknown).
    pub phone_number: String,
    /// Free-form data about the user; a `null` value marks a key the SDK removed.
    pub additional_data: IndexMap<String, Option<String>>,
}

impl EndUser {
    /// An end user with this external id and every other field empty, as the SDK makes one
    /// for an id it has no record of.
    pub fn bare(external_id: &str) -> Self {
        EndUser {
            external_id: external_id.to_owned(),
            name: String::new(),
            email: String::new(),
            phone_number: String::new(),
            additional_data: IndexMap::new(),
        }
    }
}

serde_object!(EndUser);
