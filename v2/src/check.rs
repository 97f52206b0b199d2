//! A check that bytes are a [`PlanRunV2`](crate::PlanRunV2), with the verdict of reading them as
//! one, for callers that read many runs and keep none of them (a migration's verify pass). The
//! run is read key by key as the derived reader reads it, except that the plan, end user and
//! config, which the runs of one store share, are read as their type once per distinct text, and
//! the free-form values of step outputs and run inputs are checked without being built.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Mutex, PoisonError};

use indexmap::IndexMap;
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use xxhash_rust::xxh3::Xxh3Builder;

use crate::output::{LocalDataValue, Output, StepOutputValue};
use crate::run::{LegacyResidue, PlanRunState, FIELDS};
use crate::{ids, int, wire, Clarification, Config, EndUser, PlanV2};

/// A key of the run, as the derived reader names it: its index in [`FIELDS`].
struct Field(usize);

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

struct FieldVisitor;

impl Visitor<'_> for FieldVisitor {
    type Value = Field;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("field identifier")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Field, E> {
        FIELDS
            .iter()
            .position(|f| *f == key)
            .map(Field)
            .ok_or_else(|| E::unknown_field(key, &FIELDS))
    }
}

/// Reads the run's object key by key, as the derived reader does: an unknown, repeated or
/// missing key is an error, and so is anything but an object.
struct RunVisitor<'c>(&'c Checker);

impl<'de> Visitor<'de> for RunVisitor<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct PlanRunV2")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<String, A::Error> {
        let checker = self.0;
        let mut seen = [false; FIELDS.len()];
        let mut id = None;
        while let Some(Field(i)) = map.next_key()? {
            if std::mem::replace(&mut seen[i], true) {
                return Err(de::Error::duplicate_field(FIELDS[i]));
            }
            match i {
                0 => id = Some(map.next_value::<Id>()?.0),
                1 => {
                    map.next_value::<PlanRunState>()?;
                }
                2 => {
                    map.next_value::<StepIndex>()?;
                }
                3 => checker.plans.check::<PlanV2, _>(map.next_value()?)?,
                4 => checker.end_users.check::<EndUser, _>(map.next_value()?)?,
                5 => {
                    map.next_value::<Vec<StepOutputValue>>()?;
                }
                6 => {
                    map.next_value::<FinalOutput>()?;
                }
                7 => {
                    map.next_value::<IndexMap<String, LocalDataValue>>()?;
                }
                8 => checker.configs.check::<Config, _>(map.next_value()?)?,
                9 => {
                    map.next_value::<Vec<Clarification>>()?;
                }
                _ => {
                    map.next_value::<Option<LegacyResidue>>()?;
                }
            }
        }
        if let Some(missing) = (0..FIELDS.len() - 1).find(|i| !seen[*i]) {
            return Err(de::Error::missing_field(FIELDS[missing]));
        }
        Ok(id.expect("seen"))
    }
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

    /// Reads `raw` as `T`, unless a text equal to `raw`'s has passed before.
    fn check<T: DeserializeOwned, E: de::Error>(&self, raw: &RawValue) -> Result<(), E> {
        let text = raw.get().as_bytes();
        let lock = || self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if lock().contains(text) {
            return Ok(());
        }
        read::<T>(raw).map_err(E::custom)?;
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
        wire::checking_values(|| {
            let mut de = serde_json::Deserializer::from_slice(bytes);
            let id = de.deserialize_map(RunVisitor(self))?;
            de.end()?;
            Ok(id)
        })
    }
}
