//! The order a migration converts its runs in. A store lists its runs by name, and run names are
//! random UUIDs, so the runs of one plan lie far apart there; converted in that order, each
//! would read and convert its plan again. Taken by plan, the runs of one plan come one after the
//! other and share one read and one conversion of it (see [`crate::References`]).

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use super::feed::Items;
use crate::disk::DiskStore;
use crate::names::Names;

/// How much of a run file is read to find its plan id. The SDK writes a run's `plan_id` right
/// after its `id`, within the first hundred bytes, at every version.
pub(super) const HEAD: usize = 512;

/// Runs to convert, in the order they are converted.
#[derive(Debug)]
pub(crate) struct Ordered {
    /// Places in the listing.
    places: Vec<usize>,
    /// Whether the run at each position names the plan of the run before it, and so is
    /// converted by the thread that converts that one.
    joined: Vec<bool>,
}

impl Ordered {
    /// The places to convert, in order.
    pub(crate) fn places(&self) -> &[usize] {
        &self.places
    }

    /// The places, with the runs of one plan joined, for [`chunks_in_order`](super::feed::chunks_in_order).
    pub(crate) fn items(&self) -> Items<'_> {
        Items::joined(&self.places, &self.joined)
    }
}

/// The places `todo` of `runs`, ordered by the plan id each run file names, then by place. Only
/// the start of each file is read, on the threads of `pool`. A run whose plan id is not found
/// there goes with the others of no plan: the order decides only how often a plan is read,
/// never what a run converts to, which its whole file decides when it is converted.
pub(crate) fn by_plan(
    store: &DiskStore,
    runs: &Names,
    todo: &[usize],
    pool: &rayon::ThreadPool,
) -> Ordered {
    // 16 bytes a run while sorting: the place as `u32` (a listing of more runs is left in
    // its order), the hash 0 for no plan id.
    if u32::try_from(runs.len()).is_err() {
        return Ordered {
            places: todo.to_vec(),
            joined: vec![false; todo.len()],
        };
    }
    let mut keyed: Vec<(u64, u32)> = pool.install(|| {
        todo.par_iter()
            .map_init(
                || [0u8; HEAD],
                |buf, &place| {
                    let plan = store.first_bytes(&runs.get(place), buf).and_then(plan_id);
                    let place = u32::try_from(place).expect("checked above");
                    (plan.map_or(0, |id| xxh3_64(id).max(1)), place)
                },
            )
            .collect()
    });
    keyed.sort_unstable();
    let joined = keyed
        .iter()
        .enumerate()
        .map(|(i, &(plan, _))| i > 0 && plan != 0 && keyed[i - 1].0 == plan)
        .collect();
    // Collected from `keyed` in place, the places would keep its 16 bytes a run to the end of
    // the conversion (1.6 MB at 100,000 runs) where they need eight.
    let places = keyed.iter().map(|&(_, place)| place as usize).collect();
    Ordered { places, joined }
}

/// The `"id"` that opens the first `"plan"` object in `head` (a V2 run's embedded plan), when
/// the string ends within `head`.
pub(super) fn v2_plan_id(head: &[u8]) -> Option<&[u8]> {
    let plan = after_key(head, b"\"plan\"")?
        .strip_prefix(b"{")?
        .trim_ascii_start();
    string_value(plan.strip_prefix(b"\"id\"")?)
}

/// The value of the first `"plan_id"` key in `head` (a legacy run's plan), when the string
/// ends within `head`.
pub(super) fn plan_id(head: &[u8]) -> Option<&[u8]> {
    string_value(head.get(key_end(head, b"\"plan_id\"")?..)?)
}

/// Where the first `key` (with its quotes) in `head` ends.
fn key_end(head: &[u8], key: &[u8]) -> Option<usize> {
    Some(head.windows(key.len()).position(|w| w == key)? + key.len())
}

/// What follows the first `key` of `head` and its colon, from its first non-blank byte.
fn after_key<'h>(head: &'h [u8], key: &[u8]) -> Option<&'h [u8]> {
    let rest = head[key_end(head, key)?..].trim_ascii_start();
    Some(rest.strip_prefix(b":")?.trim_ascii_start())
}

/// The string after a key's end in `rest` (`: "value"`, blanks allowed around the colon), when
/// it ends within `rest`.
fn string_value(rest: &[u8]) -> Option<&[u8]> {
    let value = rest
        .trim_ascii_start()
        .strip_prefix(b":")?
        .trim_ascii_start()
        .strip_prefix(b"\"")?;
    let end = value.iter().position(|&b| b == b'"')?;
    Some(&value[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_id_is_found_in_compact_and_indented_runs() {
        let plan = b"plan-2c8b5e30-4d6f-4a01-9c2d-3e4f5a6b7c82".as_slice();
        for head in [
            br#"{"id":"prun-1","plan_id":"plan-2c8b5e30-4d6f-4a01-9c2d-3e4f5a6b7c82","#.as_slice(),
            b"{\n  \"id\": \"prun-1\",\n  \"plan_id\" :\t\"plan-2c8b5e30-4d6f-4a01-9c2d-3e4f5a6b7c82\"\n}",
        ] {
            assert_eq!(plan_id(head), Some(plan));
        }
    }

    #[test]
    fn the_runs_of_one_plan_come_together_and_are_joined() {
        let dir = tempfile::tempdir().unwrap();
        let plans = [
            "plan-a", "plan-b", "plan-a", "plan-c", "plan-b", "", "plan-a",
        ];
        let runs: Names = (0..plans.len()).map(|i| format!("prun-{i}.json")).collect();
        for (i, plan) in plans.iter().enumerate() {
            let text = if plan.is_empty() {
                format!(r#"{{"id": "prun-{i}"}}"#)
            } else {
                format!(r#"{{"id": "prun-{i}", "plan_id": "{plan}"}}"#)
            };
            std::fs::write(dir.path().join(format!("prun-{i}.json")), text).unwrap();
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let store = DiskStore::new(dir.path());
        // Run 4 is left out, as a resumed migration leaves out the runs it has done.
        let ordered = by_plan(&store, &runs, &[0, 1, 2, 3, 5, 6], &pool);
        let places = ordered.places();
        let mut sorted = places.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, [0, 1, 2, 3, 5, 6]);
        let plan_of = |place: usize| plans[place];
        let first_a = places.iter().position(|&p| plan_of(p) == "plan-a").unwrap();
        assert_eq!(places[first_a..first_a + 3], [0, 2, 6], "{places:?}");
        for (i, &place) in places.iter().enumerate() {
            let joined =
                i > 0 && !plan_of(place).is_empty() && plan_of(places[i - 1]) == plan_of(place);
            assert_eq!(ordered.joined[i], joined, "at {i} of {places:?}");
        }
    }

    #[test]
    fn every_corpus_run_names_its_plan_in_its_head() {
        // Pins the SDK's field order, W1 to HEAD: a stored run's `plan_id` follows its `id`.
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
        let mut todo = vec![corpus
            .canonicalize()
            .expect("the corpus beside the project")];
        let mut runs = 0;
        while let Some(dir) = todo.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    todo.push(path);
                    continue;
                }
                let bytes = std::fs::read(&path).unwrap();
                let Some(run) = planrun_legacy::parse(&bytes)
                    .ok()
                    .and_then(|p| p.as_run().map(|run| run.plan_id().to_string()))
                else {
                    continue;
                };
                let head = &bytes[..bytes.len().min(HEAD)];
                assert_eq!(plan_id(head), Some(run.as_bytes()), "{}", path.display());
                runs += 1;
            }
        }
        assert!(runs > 100, "only {runs} corpus runs");
    }

    #[test]
    fn a_v2_runs_plan_id_is_its_embedded_plans() {
        let plan = b"plan-2c8b5e30-4d6f-4a01-9c2d-3e4f5a6b7c82".as_slice();
        for head in [
            br#"{"id":"prun-1","state":"COMPLETE","current_step_index":1,"plan":{"id":"plan-2c8b5e30-4d6f-4a01-9c2d-3e4f5a6b7c82","#.as_slice(),
            b"{\n  \"id\": \"prun-1\",\n  \"plan\": {\n    \"id\": \"plan-2c8b5e30-4d6f-4a01-9c2d-3e4f5a6b7c82\",",
        ] {
            assert_eq!(v2_plan_id(head), Some(plan), "{}", String::from_utf8_lossy(head));
        }
        for head in [
            br#"{"id": "prun-1", "plan": {"steps": []}}"#.as_slice(),
            br#"{"id": "prun-1", "plan_id": "plan-2c8b5e30-4d6f-4a01-9c2d-3e4f5a6b7c82"}"#,
        ] {
            assert_eq!(v2_plan_id(head), None, "{}", String::from_utf8_lossy(head));
        }
    }

    #[test]
    fn a_plan_id_not_whole_in_the_head_is_none() {
        for head in [
            br#"{"id": "prun-1", "plan_id": "plan-2c8b5e30"#.as_slice(),
            br#"{"id": "prun-1", "plan_id": null}"#,
            br#"{"id": "prun-1", "plan_"#,
            b"",
        ] {
            assert_eq!(plan_id(head), None, "{}", String::from_utf8_lossy(head));
        }
    }
}
