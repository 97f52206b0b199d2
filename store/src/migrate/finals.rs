//! Which journal line settles each run: the last `completed`/`failed`/`removed`/`conflict`
//! line of every run, found by reading the lines' tags (event and run) only.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use xxhash_rust::xxh3::xxh3_64;

use super::journal::{Event, Line, LineTag, Reader};
use super::{io_err, MigrateError};
use crate::Names;

/// For every run of a listing, the (1-based) index of its last `completed`/`failed` journal
/// line, by the run's place in the listing: about thirty bytes a run with the index by name's
/// hash, where a map by name took about ninety.
#[derive(Debug)]
pub(super) struct FinalLines<'a> {
    pub(super) runs: &'a Names,
    /// By place in `runs`; 0 for a run without a final line.
    pub(super) last: Vec<u64>,
    /// By place in `runs`: whether a `started` line follows the run's last final line (it was
    /// being converted again when a pass stopped, so its outputs may be newer than the journal).
    pub(super) in_flight: Vec<bool>,
    /// The runs the journal has a final line for that are not in `runs` (gone from SRC, or of
    /// another shard), each with the index and event of its last final line.
    pub(super) strays: std::collections::BTreeMap<String, (u64, Event)>,
    /// Whether every pass synced its outputs: after one under `--no-sync`, an output's stamp
    /// may have survived an OS crash that lost its bytes, so outputs are read, not trusted.
    pub(super) stamps_trusted: bool,
    /// The place of the run of each final line, in journal order ([`FinalLines::ELSEWHERE`]
    /// for one not in `runs`): four bytes a line, so that a second reading of the journal finds
    /// each line's run without looking its name up again.
    pub(super) places: Vec<u32>,
    /// How many lines were read.
    pub(super) lines: u64,
    /// Each run's place by its name's hash, to find the run of each line: made when the first
    /// line is read, so that a `FinalLines` that reads none costs no pass over the names.
    by_name: Option<Arc<ByName>>,
}

impl<'a> FinalLines<'a> {
    /// In `places`: a run not in the listing (or at a place beyond `u32`).
    pub(super) const ELSEWHERE: u32 = u32::MAX;

    /// Reads only the tags of the first `limit` lines: the callers read the lines again in
    /// full, and stop where one is invalid. `runs` is in byte order,
    /// as a [`Listing`](crate::store::Listing) is.
    pub(super) fn read(journal: &Path, runs: &'a Names, limit: u64) -> Result<Self, MigrateError> {
        let mut found = FinalLines::new(runs);
        found.read_on(journal, 0, limit)?;
        Ok(found)
    }

    /// [`FinalLines::read`] of every line, in up to `stretches` stretches of the journal read
    /// at once on `pool`: a no-op resume waits for this reading with a core idle otherwise.
    pub(super) fn read_all(
        journal: &Path,
        runs: &'a Names,
        stretches: usize,
        pool: &rayon::ThreadPool,
    ) -> Result<Self, MigrateError> {
        use rayon::prelude::*;
        let bounds = line_bounds(journal, stretches).map_err(io_err("cannot read", journal))?;
        if bounds.len() <= 2 {
            return Self::read(journal, runs, u64::MAX);
        }
        let by_name = Arc::new(ByName::of(runs));
        let read: Vec<Result<(Self, bool), MigrateError>> = pool.install(|| {
            bounds
                .par_windows(2)
                .map(|stretch| {
                    let mut found = FinalLines::new(runs);
                    found.by_name = Some(Arc::clone(&by_name));
                    let whole = found.read_stretch(journal, stretch[0], stretch[1])?;
                    Ok((found, whole))
                })
                .collect()
        });
        let mut read = read.into_iter();
        let (mut found, mut whole) = read.next().expect("two bounds make a stretch")?;
        for later in read {
            let (later, later_whole) = later?;
            // Lines after a torn or invalid one are not the journal's.
            if !whole {
                break;
            }
            found.append(later);
            whole = later_whole;
        }
        Ok(found)
    }

    /// Takes in the tags of the lines from byte `start` (a line's start) to byte `end` (the
    /// end of a line or of the file), numbered on from the lines taken in before; whether
    /// every line up to `end` read.
    fn read_stretch(&mut self, journal: &Path, start: u64, end: u64) -> Result<bool, MigrateError> {
        let mut reader =
            Reader::open_between(journal, start, end).map_err(io_err("cannot read", journal))?;
        self.take_tags(&mut reader, journal, u64::MAX)?;
        Ok(reader.good_len == end)
    }

    /// Takes in the tags `reader` reads, numbered on from the lines taken in before, up to line
    /// `limit`; `journal` names the file in errors.
    fn take_tags<R: std::io::BufRead>(
        &mut self,
        reader: &mut Reader<R>,
        journal: &Path,
        limit: u64,
    ) -> Result<(), MigrateError> {
        while self.lines < limit {
            let Some(line) = reader.next_tag().map_err(io_err("cannot read", journal))? else {
                break;
            };
            self.lines += 1;
            self.absorb(line, self.lines);
        }
        Ok(())
    }

    /// Takes in what a reading of the lines right after this one's found.
    fn append(&mut self, later: FinalLines<'a>) {
        for (at, (&last, &in_flight)) in later.last.iter().zip(&later.in_flight).enumerate() {
            if last != 0 {
                self.last[at] = self.lines + last;
            }
            // The later reading decides, unless it saw nothing of the run.
            if last != 0 || in_flight {
                self.in_flight[at] = in_flight;
            }
        }
        for (run, (index, event)) in later.strays {
            self.strays.insert(run, (self.lines + index, event));
        }
        self.stamps_trusted &= later.stamps_trusted;
        self.places.extend(later.places);
        self.lines += later.lines;
    }

    /// Takes in the tags of the journal's lines after the `lines` read so far, which end at
    /// byte `offset`, up to line `limit`.
    pub(super) fn read_on(
        &mut self,
        journal: &Path,
        offset: u64,
        limit: u64,
    ) -> Result<(), MigrateError> {
        let mut reader =
            Reader::open_at(journal, offset).map_err(io_err("cannot read", journal))?;
        self.take_tags(&mut reader, journal, limit)
    }

    /// Nothing read yet.
    pub(super) fn new(runs: &'a Names) -> Self {
        FinalLines {
            runs,
            last: vec![0; runs.len()],
            in_flight: vec![false; runs.len()],
            stamps_trusted: true,
            strays: std::collections::BTreeMap::new(),
            places: Vec::new(),
            lines: 0,
            by_name: None,
        }
    }

    /// Takes in the journal's line `index`, read after every line before it.
    pub(super) fn absorb(&mut self, line: LineTag, index: u64) {
        if line.event == Event::Session {
            self.stamps_trusted &= line.synced != Some(false);
        }
        if line.event == Event::Started {
            if let Some(at) = line.run.as_deref().and_then(|run| self.locate(run)) {
                self.in_flight[at] = true;
            }
            return;
        }
        if !line.is_final() {
            return;
        }
        let at = line.run.as_deref().and_then(|run| self.locate(run));
        if let Some(at) = at {
            self.in_flight[at] = false;
        }
        match (at, line.run) {
            (Some(at), _) => self.last[at] = index,
            (None, Some(run)) => {
                self.strays.insert(run, (index, line.event));
            }
            (None, None) => {}
        }
        let place = at.and_then(|at| u32::try_from(at).ok());
        self.places.push(place.unwrap_or(Self::ELSEWHERE));
    }

    /// The place of `run` in the listing.
    fn locate(&mut self, run: &str) -> Option<usize> {
        let runs = self.runs;
        self.by_name
            .get_or_insert_with(|| Arc::new(ByName::of(runs)))
            .find(runs, run)
    }

    /// The index of the last final line of `run` (in the listing or not), 0 for none.
    pub(super) fn last_of(&mut self, run: &str) -> u64 {
        match self.locate(run) {
            Some(at) => self.last[at],
            None => self.strays.get(run).map_or(0, |(index, _)| *index),
        }
    }

    /// How many final lines there are, and how many of them settle a run (the last of each).
    pub(super) fn settling(&self) -> (usize, usize) {
        let listed = self.last.iter().filter(|&&index| index != 0).count();
        (self.places.len(), listed + self.strays.len())
    }

    /// The first run (by name) the journal settles that is not in `runs` and whose outputs a
    /// resume did not remove: a run this shard should not have.
    pub(super) fn stray(&self) -> Option<&str> {
        self.strays
            .iter()
            .find(|(_, (_, event))| *event != Event::Removed)
            .map(|(run, _)| run.as_str())
    }

    /// A reading of the journal's lines again, in order, that tells which settle a run.
    pub(super) fn in_journal_order(&self) -> InJournalOrder<'_, 'a> {
        self.in_journal_order_after(0)
    }

    /// [`FinalLines::in_journal_order`] from the line after the first `finals` final lines.
    pub(super) fn in_journal_order_after(&self, finals: usize) -> InJournalOrder<'_, 'a> {
        InJournalOrder {
            lines: self,
            next: finals,
        }
    }
}

/// Offsets that cut the journal into up to `stretches` stretches of about equal size, each
/// starting where a line does: 0, the start of the first line after each even cut, and the
/// file's length. Stretches under 64 KiB are not worth a thread.
fn line_bounds(journal: &Path, stretches: usize) -> std::io::Result<Vec<u64>> {
    const LEAST: u64 = 64 << 10;
    let mut file = BufReader::new(std::fs::File::open(journal)?);
    let len = file.get_ref().metadata()?.len();
    let count = (stretches as u64).clamp(1, (len / LEAST).max(1));
    let mut bounds = vec![0];
    let mut skipped = Vec::new();
    for k in 1..count {
        let cut = len / count * k;
        if cut <= *bounds.last().expect("bounds start with 0") {
            continue;
        }
        file.seek(SeekFrom::Start(cut))?;
        skipped.clear();
        let n = file.read_until(b'\n', &mut skipped)? as u64;
        if skipped.last() == Some(&b'\n') && cut + n < len {
            bounds.push(cut + n);
        }
    }
    bounds.push(len);
    bounds.dedup();
    Ok(bounds)
}

/// The places of a listing's runs by a hash of their names. A journal names its runs in the
/// order they were converted (by plan), not the listing's, so each line's run would otherwise
/// cost a binary search of the listing: half of a no-op resume's reading of the tags, at about
/// sixteen bytes a run.
#[derive(Debug)]
struct ByName(HashMap<u64, u32, BuildHasherDefault<Prehashed>>);

/// The hasher of a map whose keys are hashes already: it passes a `u64` key through, where
/// SipHash of it cost as much as the name's own hash.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is called for a `u64` key; any other key is folded in all the same.
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

impl ByName {
    /// In the map: two runs whose names have the same hash (or a place beyond `u32`), looked up
    /// by binary search instead.
    const SHARED: u32 = u32::MAX;

    fn of(runs: &Names) -> Self {
        let mut places =
            HashMap::with_capacity_and_hasher(runs.len(), BuildHasherDefault::default());
        for (at, name) in runs.iter().enumerate() {
            let place = u32::try_from(at).unwrap_or(Self::SHARED);
            places
                .entry(xxh3_64(name.as_str().as_bytes()))
                .and_modify(|taken| *taken = Self::SHARED)
                .or_insert(place);
        }
        ByName(places)
    }

    /// The place of `run` in `runs`, the listing this was made of.
    fn find(&self, runs: &Names, run: &str) -> Option<usize> {
        match *self.0.get(&xxh3_64(run.as_bytes()))? {
            Self::SHARED => runs.position(run),
            place => {
                let at = place as usize;
                runs.is(at, run).then_some(at)
            }
        }
    }
}

/// [`FinalLines`] read in step with the journal.
pub(super) struct InJournalOrder<'f, 'a> {
    pub(super) lines: &'f FinalLines<'a>,
    /// How many final lines have been read.
    pub(super) next: usize,
}

impl InJournalOrder<'_, '_> {
    /// The place of the run of `line`, the journal's line `index`, when that is the run's last
    /// final line. Every line must be passed, in journal order; the line's run is checked
    /// against its place, not trusted.
    pub(super) fn position(&mut self, line: &Line, index: u64) -> Option<usize> {
        if !line.event.is_final() {
            return None;
        }
        let place = *self.lines.places.get(self.next)?;
        self.next += 1;
        let runs = self.lines.runs;
        let run = line.run.as_deref()?;
        let at = match place {
            FinalLines::ELSEWHERE => runs.position(run)?,
            place => usize::try_from(place).ok()?,
        };
        (self.lines.last[at] == index && runs.is(at, run)).then_some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a reading of the tags found, to compare two readings.
    fn found(lines: &FinalLines<'_>) -> impl PartialEq + std::fmt::Debug {
        (
            lines.last.clone(),
            lines.in_flight.clone(),
            lines.strays.clone(),
            lines.stamps_trusted,
            lines.places.clone(),
            lines.lines,
        )
    }

    /// Reading the tags in stretches at once finds what one reading from the start finds: the
    /// same last final line and in-flight state of every run (a run's lines fall in several
    /// stretches), the same strays and places, and nothing after a line that does not read.
    #[test]
    fn stretches_read_at_once_find_what_one_reading_finds() {
        let names: Vec<String> = (0..40)
            .map(|i| format!("prun-{i}.json"))
            .chain(["with \"escape\".json".to_owned()])
            .collect();
        let runs: Names = names.iter().collect();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("journal.jsonl");
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        for damaged in [None, Some(1_500), Some(2_900)] {
            let mut text = String::new();
            for at in 0..3_000 {
                if Some(at) == damaged {
                    text.push_str("not a journal line\n");
                    continue;
                }
                let event = match next(10) {
                    0..=3 => Event::Started,
                    4..=6 => Event::Completed,
                    7 => Event::Failed,
                    8 => Event::Removed,
                    _ => Event::Session,
                };
                let run = match next(50) {
                    // Runs gone from SRC: strays.
                    41.. => format!("gone-{}.json", next(5)),
                    i => names[i as usize].clone(),
                };
                let line = Line {
                    event,
                    synced: (event == Event::Session).then(|| next(20) != 0),
                    run: (event != Event::Session).then_some(run),
                    // About 250 bytes a line: 750 kB, so up to eleven stretches of 64 KiB.
                    id: Some("x".repeat(200)),
                    ..Line::default()
                };
                text.push_str(&line.to_jsonl());
            }
            std::fs::write(&journal, &text).unwrap();
            let whole = FinalLines::read(&journal, &runs, u64::MAX).unwrap();
            assert!(whole.lines > 1_000, "{damaged:?}: {}", whole.lines);
            assert!(whole.strays.len() > 1 && !whole.stamps_trusted);
            for stretches in [1, 2, 3, 7, 20] {
                let bounds = line_bounds(&journal, stretches).unwrap();
                assert_eq!(bounds.len(), stretches.min(11) + 1, "{bounds:?}");
                let apart = FinalLines::read_all(&journal, &runs, stretches, &pool).unwrap();
                assert_eq!(
                    found(&apart),
                    found(&whole),
                    "{stretches} stretches, {damaged:?}"
                );
            }
        }
    }

    #[test]
    fn a_run_is_found_by_its_name_and_by_search_when_hashes_are_shared() {
        let names = [
            "prun-1683dd35-9612-43ae-be6e-eb9b84688a26.json",
            "pr-62662af2-56bc-451d-95d2-44c4f9b55edf.json",
            "wkfl-0.json",
            "müller.json",
        ];
        let runs: Names = names.iter().collect();
        let index = ByName::of(&runs);
        // Every hash shared: each lookup falls back to the binary search.
        let shared = ByName(index.0.keys().map(|&hash| (hash, ByName::SHARED)).collect());
        for by_name in [&index, &shared] {
            for name in names {
                let at = by_name.find(&runs, name).expect(name);
                assert_eq!(runs.get(at).as_str(), name);
            }
            assert_eq!(by_name.find(&runs, "prun-0.json"), None);
        }
        // A name whose hash is taken by a listed run's is not taken for it.
        let listed = xxh3_64(names[2].as_bytes());
        let collision = ByName([(listed, 0)].into_iter().collect());
        assert_eq!(collision.find(&runs, names[2]), None);
    }
}
