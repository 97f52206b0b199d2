//! RunContext: a run plus serialisable descriptors of the services it ran with (never live objects).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::run::PlanRunV2;
use crate::wire::{self, Nullable};
use planrun_wire::{serde_object, serde_tagged};

/// Everything the SDK's in-memory `RunContext` holds, as data: the run and descriptors of its
/// storage, tool registry, execution hooks and telemetry.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "RunContext")]
pub struct RunContext {
    /// The run, with its plan, end user, outputs and config.
    pub plan_run: PlanRunV2,
    /// The storage the run is kept in.
    pub storage: StorageDescriptor,
    /// The tools the run could use.
    pub tool_registry: ToolRegistryDescriptor,
    /// The execution hooks the run was set up with.
    pub execution_hooks: HooksDescriptor,
    /// Telemetry settings.
    pub telemetry: TelemetryDescriptor,
}

/// The kind of storage a run is kept in, with its settings; tagged by `kind`.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(
    remote = "Self",
    tag = "kind",
    rename_all = "snake_case",
    deny_unknown_fields
)]
#[schemars(rename = "StorageDescriptor")]
pub enum StorageDescriptor {
    /// In process memory (the SDK's `InMemoryStorage`).
    Memory {},
    /// JSON files in a directory (the SDK's `DiskFileStorage`).
    Disk {
        /// The storage directory; `null` for the SDK's default `.portia`.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        dir: Option<String>,
    },
    /// Portia Cloud (the SDK's `PortiaCloudStorage`).
    Cloud {
        /// The API endpoint; `null` for the configured `portia_api_endpoint`.
        #[serde(deserialize_with = "wire::nullable")]
        #[schemars(with = "Nullable<String>")]
        endpoint: Option<String>,
    },
}

/// The tool registry a run used, described by the ids of its tools.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "ToolRegistryDescriptor")]
pub struct ToolRegistryDescriptor {
    /// The ids of every tool in the registry, in registry order.
    pub tool_ids: Vec<String>,
}

/// The execution hooks a run was set up with, described by name.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "HooksDescriptor")]
pub struct HooksDescriptor {
    /// The names of the hooks (e.g. the Python callables' names), in order.
    pub hooks: Vec<String>,
}

/// Whether telemetry is sent, and where.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
#[serde(remote = "Self", deny_unknown_fields)]
#[schemars(rename = "TelemetryDescriptor")]
pub struct TelemetryDescriptor {
    /// Whether telemetry is sent.
    pub enabled: bool,
    /// Where telemetry is sent; `null` for the SDK's default.
    #[serde(deserialize_with = "wire::nullable")]
    #[schemars(with = "Nullable<String>")]
    pub endpoint: Option<String>,
}

serde_object!(
    RunContext,
    ToolRegistryDescriptor,
    HooksDescriptor,
    TelemetryDescriptor
);
serde_tagged!(StorageDescriptor => "kind");
