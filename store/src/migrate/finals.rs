//! Which journal line settles each run: the last `completed`/`failed`/`removed`/`conflict`
//! line of every run, found by reading the lines' tags (event and run) only.

use std::path::Path;

use super::journal::{Event, Line, LineTag, Reader};
use super::{io_err, MigrateError};
use crate::Names;

/// For every run of a listing, the (1-based) index of its last `completed`/`failed` journal
/// line, by the run's place in the listing: eight bytes a run, where a map by name took about
/// ninety (9 MB at 100,000 runs).
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
    /// The places of the runs of the latest lines, most recent first, that the next line's run
    /// is looked up beside first ([`Names::position_near`]): one per worker's chunk.
    recent: [usize; 4],
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
        let mut index = self.lines;
        while index < limit {
            let Some(line) = reader.next_tag().map_err(io_err("cannot read", journal))? else {
                break;
            };
            index += 1;
            self.absorb(line, index);
        }
        self.lines = index;
        Ok(())
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
            recent: [0; 4],
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

    /// The place of `run` in the listing, looked for beside the runs of the latest lines first.
    fn locate(&mut self, run: &str) -> Option<usize> {
        let at = self.runs.position_near(run, &self.recent)?;
        let seen = self.recent.iter().position(|&r| r == at || r + 1 == at);
        let end = seen.unwrap_or(self.recent.len() - 1);
        self.recent.copy_within(..end, 1);
        self.recent[0] = at;
        Some(at)
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
        (self.lines.last[at] == index && runs.get(at) == *run).then_some(at)
    }
}
