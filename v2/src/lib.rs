//! The consolidated V2 run format of planrun-migrate: [`PlanRunV2`], [`PlanV2`] as a real wire
//! format, [`RunContext`] descriptors, and their JSON Schemas ([`schemas`]).
//!
//! Wire rules, the same for every type:
//! * unknown keys are rejected, and every key is required and always written (`null` where a
//!   field is nullable); the one optional key is `PlanRunV2.legacy`;
//! * unions are internally tagged (`type` for steps, `kind` for outputs, arguments and storage,
//!   `category` for clarifications, `by` for step references), never untagged;
//! * ids are `<prefix>-<lowercase uuid>`; integers are whole numbers in `i64` range, in any JSON
//!   notation (`3`, `3.0` and `3e0` read alike), exactly as the schemas say;
//! * only the plain JSON shapes are read: not the array form of a struct, variant indexes as
//!   tags, or `{"VALUE": null}` for an enum value, which serde's derives would also accept
//!   (see `planrun_wire::strict`; read through the `serde::Deserialize` trait, never
//!   `Type::deserialize`);
//! * secrets are only ever written redacted, by the same rule as the legacy crate's
//!   (`planrun_wire::secret`).
//!
//! With the `testkit` feature, [`agreement`] checks that serde and a schema agree on a document
//! and [`strategies`] generates valid values of every type for property tests.

pub mod check;
mod clarification;
mod config;
mod context;
mod end_user;
mod ids;
mod int;
mod output;
mod plan;
pub mod render;
mod run;
mod schema;
mod step;
mod wire;

#[cfg(feature = "testkit")]
pub mod agreement;
#[cfg(feature = "testkit")]
pub mod strategies;

pub use clarification::{Clarification, ClarificationCategory};
pub use config::{
    Config, ExecutionAgentType, GenerativeModelsConfig, LlmProvider, LogLevel, PlanningAgentType,
    StorageClass, AGENT_MEMORY_FEATURE_FLAG,
};
pub use context::{
    HooksDescriptor, RunContext, StorageDescriptor, TelemetryDescriptor, ToolRegistryDescriptor,
};
pub use end_user::EndUser;
pub use ids::{is_canonical, CLARIFICATION_ID_PATTERN, PLAN_ID_PATTERN, PLAN_RUN_ID_PATTERN};
pub use output::{LocalDataValue, Output, StepOutputValue};
pub use plan::{JsonSchemaObject, PlanInput, PlanV2};
pub use planrun_wire::{redact_url, RedactedUrl, Secret, MASK as REDACTED};
pub use run::{LegacyResidue, PlanRunState, PlanRunV2};
pub use schema::{schemas, SCHEMA_BASE_URL};
pub use step::{
    ArgValue, BlockClauseType, ConditionalBlock, LegacyVariable, LoopBlock, LoopStepType, LoopType,
    StepRef, StepV2, DEFAULT_TOOL_CALL_LIMIT,
};
