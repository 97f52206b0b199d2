//! Migration of stored Portia SDK runs: the chain W1 → R0 → … → R6 declared as data, the final
//! step to `PlanRunV2`, the downgrade back, loss reports, and the I/O behind the `planrun` CLI.

pub mod chain;
pub mod cloud;
pub mod diff;
pub mod downgrade;
pub mod head_store;
mod ids;
pub mod plan;
pub mod renames;
pub mod report;
pub mod residue;
pub mod run_context;
pub mod upgrade;

pub use plan::{plan_from_legacy, plan_to_legacy, PlanConversion};
pub use report::{Entry, EntryKind, LossReport};
