//! Every legacy wire format of the Portia Python SDK: typed models of each run version (W1, R0–R6)
//! and of plans, outputs, clarifications, end users, tool calls and config; detection with
//! evidence; exact re-emission in the SDK's own `model_dump_json(indent=4)` format; and JSON
//! Schemas of every legacy wire type ([`schemas`]) that accept exactly what the models accept.
//!
//! With the `testkit` feature, [`strategies`] generates documents of every wire version for
//! property tests.
//!
//! ```
//! let bytes = br#"{"id": "prun-1742945e-63bf-4a2f-be54-b73e18e0a25e", "plan_id": "plan-5ccec58f-0e70-4378-a129-7842bc337b8d", "end_user_id": "local", "plan_run_inputs": {}}"#;
//! let parsed = planrun_legacy::parse(bytes).unwrap();
//! assert_eq!(parsed.detection.versions.to_string(), "R6");
//! assert!(parsed.to_sdk_json().starts_with("{\n    \"id\": \"prun-"));
//! ```

mod clarification;
mod config;
mod context;
mod detect;
mod document;
pub mod head;
mod id;
mod output;
mod plan;
mod run;
mod scalar;
mod schema;
pub mod sdk;
mod version;

#[cfg(feature = "testkit")]
pub mod strategies;

pub use clarification::{Category, Clarification, ClarificationRules, RunRefKey};
pub use config::Config;
pub use context::{
    EndUser, ExecutionContextR0, ExecutionContextR3, ExecutionContextR4, ExecutionContextW1,
    StepOutputValue, ToolCallRecord, ToolCallStatus,
};
pub use detect::{Detection, DocKind, Evidence};
pub use document::{
    detect, parse, parse_by_value, read, LegacyDocument, Normalization, Parsed, RunContextSnapshot,
    StepKey,
};
pub use id::{run_prefixes, ClarificationId, PlanId, Prefix, PrefixedId, RunId, UUID_PATTERN};
pub use output::{AgentMemoryValue, LocalDataValue, OldOutput, Output};
pub use plan::{Plan, PlanContext, PlanInput, PlanInputV032, Step, Variable};
use planrun_wire::json;
pub use planrun_wire::json::{ErrorKind, ParseError};
pub use planrun_wire::{RedactedUrl as SecretUrl, Secret, MASK};
pub use run::{
    LegacyRun, Outputs, RunR0, RunR1, RunR2, RunR3, RunR4, RunR5, RunR6, RunState, RunW1,
};
pub use scalar::{
    stringify, LaxBool, LaxInt, BOOL_STRING_PATTERN, INT_STRING_PATTERN, MAX_SAFE_INTEGER,
};
pub use schema::{schema_file, schemas, SCHEMA_BASE_URL};
pub use version::{Version, VersionInfo, VersionSet, REGISTRY};
