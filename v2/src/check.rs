//! A check that bytes are a [`PlanRunV2`](crate::PlanRunV2), with the verdict of reading them as
//! one, for callers that read many runs and keep none of them (a migration's verify pass). The
//! run is read key by key as the derived reader reads it, except that the plan, end user and
//! config, which the runs of one store share, are read as their type once per distinct text, and
//! the free-form values of step outputs and run inputs are checked without being built. A plan
//! or config whose text was accepted before is not even lexed: it is found where a pretty
//! printed run puts it, cut out, and the rest of the run is read with `{}` in its place.

use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use indexmap::IndexMap;
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use xxhash_rust::xxh3::{xxh3_128, Xxh3Builder};

use crate::output::{LocalDataValue, Output, StepOutputValue};
use crate::run::{LegacyResidue, PlanRunState, FIELDS};
use crate::{ids, int, wire, Clarification, Config, EndUser, PlanV2};

/// A key of the run, as the derived reader names it: its index in [`FIELDS`].
struct Field(usize);

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        wire::key_index(deserializer, &FIELDS, &FIELDS).map(Field)
    }
}

/// Reads the run's object key by key, as the derived reader does: an unknown, repeated or
/// missing key is an error, and so is anything but an object. A value standing exactly where a
/// [`Cut`] left its `{}` is taken as the accepted text it replaced; the visitor returns the id
/// and how many cuts it met so.
struct RunVisitor<'c> {
    checker: &'c Checker,
    cuts: &'c [Cut],
}

impl RunVisitor<'_> {
    /// Checks the value of the shared field `field` read as `raw`; whether it was a cut's `{}`.
    fn shared<T: DeserializeOwned, E: de::Error>(
        &self,
        field: usize,
        raw: &RawValue,
    ) -> Result<bool, E> {
        let at = raw.get().as_ptr() as usize;
        if self
            .cuts
            .iter()
            .any(|cut| cut.field == field && cut.at == at)
            && raw.get() == "{}"
        {
            return Ok(true);
        }
        self.checker.seen(field).check::<T, E>(raw).map(|()| false)
    }
}

impl<'de> Visitor<'de> for RunVisitor<'_> {
    type Value = (String, usize);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct PlanRunV2")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(String, usize), A::Error> {
        let mut seen = [false; FIELDS.len()];
        let mut id = None;
        let mut met = 0;
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
                3 => met += usize::from(self.shared::<PlanV2, _>(i, map.next_value()?)?),
                4 => met += usize::from(self.shared::<EndUser, _>(i, map.next_value()?)?),
                5 => {
                    map.next_value::<Vec<StepOutputValue>>()?;
                }
                6 => {
                    map.next_value::<FinalOutput>()?;
                }
                7 => {
                    map.next_value::<IndexMap<String, LocalDataValue>>()?;
                }
                8 => met += usize::from(self.shared::<Config, _>(i, map.next_value()?)?),
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
        Ok((id.expect("seen"), met))
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

/// Texts already read and accepted, remembered by their XXH3-128 hash rather than held (about
/// 20 bytes each), up to a number after which it forgets them all at once, so that memory
/// stays bounded. Two texts of one hash would be taken for one; among the 2^17 texts
/// remembered at most the odds of that are below 2^-93.
#[derive(Debug)]
struct Seen {
    hashes: Mutex<HashSet<u128, Xxh3Builder>>,
    capacity: usize,
}

impl Seen {
    /// A migration checks its runs by plan, so the runs that share a plan or a config come
    /// together: a few thousand keep every hit, without memory that grows with the store.
    const RECENT: usize = 1 << 12;
    /// End users recur across plans, and a store has far fewer of them than runs.
    const MANY: usize = 1 << 17;

    fn remembering(capacity: usize) -> Self {
        Seen {
            hashes: Mutex::default(),
            capacity,
        }
    }

    /// Whether `text` has passed before.
    fn contains(&self, text: &[u8]) -> bool {
        self.lock().contains(&xxh3_128(text))
    }

    /// Reads `raw` as `T`, unless a text equal to `raw`'s has passed before.
    fn check<T: DeserializeOwned, E: de::Error>(&self, raw: &RawValue) -> Result<(), E> {
        let hash = xxh3_128(raw.get().as_bytes());
        if self.lock().contains(&hash) {
            return Ok(());
        }
        read::<T>(raw).map_err(E::custom)?;
        let mut seen = self.lock();
        if seen.len() >= self.capacity {
            seen.clear();
        }
        seen.insert(hash);
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<u128, Xxh3Builder>> {
        self.hashes.lock().unwrap_or_else(PoisonError::into_inner)
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

/// Where a shared field's accepted text was cut out of a run: the field's index in [`FIELDS`]
/// and the address of the `{}` standing in for it in the shortened text.
struct Cut {
    field: usize,
    at: usize,
}

/// The fields whose text a run is searched for before it is read, in [`FIELDS`] order.
const SHARED: [usize; 2] = [3, 8];

/// Where a pretty printed run has the value of its field `key`: after the line's
/// `\n  "key": ` and before the `,\n  "` that starts the next field. Raw line breaks stand
/// only between tokens, and only fields of the run itself are indented by exactly two spaces,
/// so in such a run this finds the field's value; in any other text it may find anything,
/// which the reader then refuses to take for the field (see [`RunVisitor`]).
fn pretty_value(bytes: &[u8], from: usize, key: &str) -> Option<(usize, usize)> {
    let mut head = Vec::with_capacity(key.len() + 8);
    head.extend_from_slice(b"\n  \"");
    head.extend_from_slice(key.as_bytes());
    head.extend_from_slice(b"\": ");
    let start = from + memchr::memmem::find(&bytes[from..], &head)? + head.len();
    let end = start + memchr::memmem::find(&bytes[start..], b",\n  \"")?;
    Some((start, end))
}

/// Checks runs, remembering the plans, end users and configs it has accepted; best fed the runs
/// of one plan together. Shared by threads.
#[derive(Debug)]
pub struct Checker {
    plans: Seen,
    end_users: Seen,
    configs: Seen,
    cut_reads: AtomicU64,
}

impl Default for Checker {
    fn default() -> Self {
        Checker::new()
    }
}

impl Checker {
    /// A checker that has seen nothing.
    pub fn new() -> Self {
        Checker {
            plans: Seen::remembering(Seen::RECENT),
            end_users: Seen::remembering(Seen::MANY),
            configs: Seen::remembering(Seen::RECENT),
            cut_reads: AtomicU64::new(0),
        }
    }

    /// The run's id when `bytes` read as a [`PlanRunV2`](crate::PlanRunV2), else why not.
    /// Accepts exactly what `serde_json::from_slice::<PlanRunV2>` accepts; the error may be
    /// worded differently.
    pub fn check(&self, bytes: &[u8]) -> Result<String, serde_json::Error> {
        if let Some(id) = self.check_cut(bytes) {
            return Ok(id);
        }
        self.read(bytes, &[]).map(|(id, _)| id)
    }

    /// How many runs were accepted with a shared part cut out rather than lexed.
    pub fn cut_reads(&self) -> u64 {
        self.cut_reads.load(Ordering::Relaxed)
    }

    fn seen(&self, field: usize) -> &Seen {
        match field {
            3 => &self.plans,
            4 => &self.end_users,
            _ => &self.configs,
        }
    }

    /// Reads `bytes` as a run, taking the `{}` of each of `cuts` as accepted.
    fn read(&self, bytes: &[u8], cuts: &[Cut]) -> Result<(String, usize), serde_json::Error> {
        // Valid UTF-8 (every run planrun writes) is checked once, in bulk, rather than string by
        // string; anything else is read as bytes, for the verdict serde_json gives them.
        match std::str::from_utf8(bytes) {
            Ok(text) => self.read_from(serde_json::Deserializer::from_str(text), cuts),
            Err(_) => self.read_from(serde_json::Deserializer::from_slice(bytes), cuts),
        }
    }

    fn read_from<'de, R: serde_json::de::Read<'de>>(
        &self,
        mut de: serde_json::Deserializer<R>,
        cuts: &[Cut],
    ) -> Result<(String, usize), serde_json::Error> {
        wire::checking_values(|| {
            let found = de.deserialize_map(RunVisitor {
                checker: self,
                cuts,
            })?;
            de.end()?;
            Ok(found)
        })
    }

    /// The run's id when `bytes`, with the shared fields' texts accepted before cut out and
    /// replaced by `{}`, read as a run that takes every `{}` for its field. Then `bytes` read
    /// as a run too: the reader read the same bytes up to each `{}`, met it as the field's
    /// value, and would have met the accepted text there instead: an object, which ends where
    /// it ends whatever follows, read at the depth it was accepted at. `None` when nothing was
    /// cut, or the shortened text was refused or did not take every cut for its field: the
    /// whole read gives the verdict then.
    fn check_cut(&self, bytes: &[u8]) -> Option<String> {
        let mut parts = Vec::with_capacity(SHARED.len());
        let mut from = 0;
        for field in SHARED {
            let Some((start, end)) = pretty_value(bytes, from, FIELDS[field]) else {
                continue;
            };
            if self.seen(field).contains(&bytes[start..end]) {
                parts.push((field, start, end));
                from = end;
            }
        }
        if parts.is_empty() {
            return None;
        }
        let mut short = Vec::with_capacity(bytes.len());
        let mut offsets = Vec::with_capacity(parts.len());
        let mut done = 0;
        for &(field, start, end) in &parts {
            short.extend_from_slice(&bytes[done..start]);
            offsets.push((field, short.len()));
            short.extend_from_slice(b"{}");
            done = end;
        }
        short.extend_from_slice(&bytes[done..]);
        let base = short.as_ptr() as usize;
        let cuts: Vec<Cut> = offsets
            .into_iter()
            .map(|(field, offset)| Cut {
                field,
                at: base + offset,
            })
            .collect();
        match self.read(&short, &cuts) {
            Ok((id, met)) if met == cuts.len() => {
                self.cut_reads.fetch_add(1, Ordering::Relaxed);
                Some(id)
            }
            _ => None,
        }
    }
}
