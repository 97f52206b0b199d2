//! A check that bytes are a [`PlanRunV2`](crate::PlanRunV2), with the verdict of reading them as one, for callers
//! that read many runs and keep none of them (a migration's verify pass). The top level is read
//! as raw text and each value then as its type; the plan, end user and config, which the runs of
//! one store share, are read once per distinct text.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use indexmap::IndexMap;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::value::RawValue;
use xxhash_rust::xxh3::Xxh3Builder;

use crate::output::{LocalDataValue, Output, StepOutputValue};
use crate::run::{LegacyResidue, PlanRunState};
use crate::{ids, int, wire, Clarification, Config, EndUser, PlanV2};

/// The keys of a [`PlanRunV2`](crate::PlanRunV2), each value as its raw text. Its reader rejects what
/// [`PlanRunV2`](crate::PlanRunV2)'s rejects at the top level: an unknown, repeated or missing key, or anything
/// but an object.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Parts<'a> {
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    state: &'a RawValue,
    #[serde(borrow)]
    current_step_index: &'a RawValue,
    #[serde(borrow)]
    plan: &'a RawValue,
    #[serde(borrow)]
    end_user: &'a RawValue,
    #[serde(borrow)]
    step_output_values: &'a RawValue,
    #[serde(borrow)]
    final_output: &'a RawValue,
    #[serde(borrow)]
    plan_run_inputs: &'a RawValue,
    #[serde(borrow)]
    config: &'a RawValue,
    #[serde(borrow)]
    clarifications: &'a RawValue,
    #[serde(default, borrow)]
    legacy: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Id(#[serde(deserialize_with = "ids::plan_run")] String);

#[derive(Deserialize)]
#[allow(dead_code, reason = "read for its verdict only")]
struct StepIndex(#[serde(deserialize_with = "int::exact")] i64);

#[derive(Deserialize)]
#[allow(dead_code, reason = "read for its verdict only")]
struct FinalOutput(#[serde(deserialize_with = "wire::nullable")] Option<Output>);

/// Texts already read and accepted; forgets them all when full, so memory stays bounded.
#[derive(Debug, Default)]
struct Seen(Mutex<HashSet<Box<[u8]>, Xxh3Builder>>);

impl Seen {
    const CAPACITY: usize = 1024;

    fn check<T: DeserializeOwned>(&self, raw: &RawValue) -> Result<(), serde_json::Error> {
        let text = raw.get().as_bytes();
        let lock = || self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if lock().contains(text) {
            return Ok(());
        }
        read::<T>(raw)?;
        let mut seen = lock();
        if seen.len() >= Self::CAPACITY {
            seen.clear();
        }
        seen.insert(text.into());
        Ok(())
    }
}

/// Reads a top-level value as `T` one level down, inside `[…]`, so that it nests exactly as deep
/// as it does in the whole document and meets serde_json's depth limit at the same place.
fn read<T: DeserializeOwned>(raw: &RawValue) -> Result<T, serde_json::Error> {
    let text = raw.get();
    let mut wrapped = String::with_capacity(text.len() + 2);
    wrapped.push('[');
    wrapped.push_str(text);
    wrapped.push(']');
    serde_json::from_str::<(T,)>(&wrapped).map(|(value,)| value)
}

/// Checks runs, remembering the plans, end users and configs it has accepted. Shared by threads.
#[derive(Debug, Default)]
pub struct Checker {
    plans: Seen,
    end_users: Seen,
    configs: Seen,
}

impl Checker {
    /// A checker that has seen nothing.
    pub fn new() -> Self {
        Checker::default()
    }

    /// The run's id when `bytes` read as a [`PlanRunV2`](crate::PlanRunV2), else why not. Accepts exactly what
    /// `serde_json::from_slice::<PlanRunV2>` accepts; the error may be worded differently.
    pub fn check(&self, bytes: &[u8]) -> Result<String, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let parts = Parts::deserialize(planrun_wire::strict::MapOnly(&mut de))?;
        de.end()?;
        let Id(id) = read(parts.id)?;
        read::<PlanRunState>(parts.state)?;
        read::<StepIndex>(parts.current_step_index)?;
        self.plans.check::<PlanV2>(parts.plan)?;
        self.end_users.check::<EndUser>(parts.end_user)?;
        read::<Vec<StepOutputValue>>(parts.step_output_values)?;
        read::<FinalOutput>(parts.final_output)?;
        read::<IndexMap<String, LocalDataValue>>(parts.plan_run_inputs)?;
        self.configs.check::<Config>(parts.config)?;
        read::<Vec<Clarification>>(parts.clarifications)?;
        if let Some(legacy) = parts.legacy {
            read::<Option<LegacyResidue>>(legacy)?;
        }
        Ok(id)
    }
}
