//! Compaction. A journal keeps every line each pass appends, so a store caught up again and again
//! (a live store resumed on a schedule) would make every later pass read more: a journal twice
//! its needed size made a no-op resume of 100,000 runs a third slower. After a pass, when at
//! least half of the journal's final lines are superseded (the run has a later one), the journal
//! is rewritten without them and without the `started` lines a later final line answers. Every
//! other line is kept byte for byte, in order: the header, sessions, `entries` definitions,
//! copied documents, each run's last final line and a `started` line still in flight. The shared
//! files a dropped line records having written (a HEAD store's plans and end users) are kept in
//! a `copied` line at the end, so a later pass still knows those bytes as this shard's; those a
//! V2 run wrote in a second one of class `already_current`, so a later pass still knows a V2
//! run wrote them (such a plan file stays while another shard's V2 runs name it).

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use super::catch_up::is_shared;
use super::journal::{line_of, tag_of, Event, Line, LineTag, MemoryRecord, Writer};
use super::{io_err, FinalLines, MigrateError};
use crate::Class;

/// Compacts the shard's journal when at least half of its final lines are superseded, through
/// `temp` (see [`Writer::replace`]); `finals` must have read every line of it. Whether it did.
pub(super) fn compact(
    journal: &mut Writer,
    finals: &mut FinalLines<'_>,
    temp: &Path,
) -> Result<bool, MigrateError> {
    let (all, settling) = finals.settling();
    if settling == 0 || all < 2 * settling {
        return Ok(false);
    }
    let path = journal.path().to_owned();
    let mut lines = BufReader::with_capacity(
        1 << 16,
        File::open(&path).map_err(io_err("cannot read", &path))?,
    );
    journal
        .replace(temp, |out| {
            // The shared files dropped lines wrote: by other runs, and by V2 runs.
            let mut shared = [BTreeSet::new(), BTreeSet::new()];
            let mut line = Vec::new();
            let mut index = 0u64;
            loop {
                line.clear();
                if lines.read_until(b'\n', &mut line)? == 0 {
                    break;
                }
                index += 1;
                let tag = tag_of(&line).ok_or_else(|| {
                    io::Error::other(format!("the journal's line {index} is not a journal line"))
                })?;
                if keeps(finals, &tag, index) {
                    out.write_all(&line)?;
                } else if matches!(tag.event, Event::Completed | Event::Conflict) {
                    let Some(dropped) = line_of(&line) else {
                        continue;
                    };
                    let by_v2 = dropped.class == Some(Class::AlreadyCurrent);
                    let memory = dropped.memory.into_iter().flatten();
                    for record in memory.filter(|r| is_shared(&r.path)) {
                        shared[usize::from(by_v2)].insert((record.path, record.bytes, record.hash));
                    }
                }
            }
            for (records, by_v2) in shared.into_iter().zip([false, true]) {
                if records.is_empty() {
                    continue;
                }
                let records = records
                    .into_iter()
                    .map(|(path, bytes, hash)| MemoryRecord { path, bytes, hash })
                    .collect();
                let kept = Line {
                    event: Event::Copied,
                    class: by_v2.then_some(Class::AlreadyCurrent),
                    memory: Some(records),
                    ..Line::default()
                };
                out.write_all(kept.to_jsonl().as_bytes())?;
            }
            Ok(())
        })
        .map_err(io_err("cannot compact", &path))?;
    Ok(true)
}

/// Whether the journal's line `index`, tagged `tag`, is one a later pass reads: anything but a
/// final line of a run that has a later one, or a `started` line a later final line answers.
fn keeps(finals: &mut FinalLines<'_>, tag: &LineTag, index: u64) -> bool {
    let Some(run) = tag.run.as_deref() else {
        return true;
    };
    let last = finals.last_of(run);
    match tag.event {
        Event::Started => last < index,
        event if event.is_final() => last == index,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Names;

    /// Compaction drops a run's superseded final line and the `started` lines answered, keeps
    /// every other line byte for byte and in order, and keeps the shared files the dropped lines
    /// wrote in `copied` lines at the end, those of V2 runs in one of their own.
    #[test]
    fn superseded_lines_go_and_what_they_wrote_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let header = Line {
            format: Some("planrun-journal/3".to_owned()),
            ..Line::default()
        };
        let mut journal = Writer::create(&path, &header).unwrap();
        let record = |path: &str, hash: &str| MemoryRecord {
            path: path.to_owned(),
            bytes: 1,
            hash: hash.to_owned(),
        };
        let run = |event, run: &str, memory: Vec<MemoryRecord>| Line {
            event,
            run: Some(run.to_owned()),
            memory: (!memory.is_empty()).then_some(memory),
            ..Line::default()
        };
        let shared = record("plan-x.json", "0000000000000001");
        let own = record("a/memory.json", "0000000000000002");
        let by_v2 = record("plan-y.json", "0000000000000003");
        let lines = [
            run(Event::Started, "a.json", vec![]),
            run(Event::Completed, "a.json", vec![shared.clone(), own]),
            run(Event::Started, "b.json", vec![]),
            run(Event::Failed, "b.json", vec![]),
            Line {
                event: Event::Session,
                read_at: Some(1),
                ..Line::default()
            },
            run(Event::Started, "a.json", vec![]),
            run(Event::Completed, "a.json", vec![]),
            run(Event::Started, "a.json", vec![]),
            run(Event::Completed, "a.json", vec![]),
            // In flight: no final line answers it.
            run(Event::Started, "b.json", vec![]),
            // A V2 run's dropped line: its plan file stays known as one a V2 run wrote.
            Line {
                class: Some(Class::AlreadyCurrent),
                ..run(Event::Completed, "c.json", vec![by_v2.clone()])
            },
            run(Event::Completed, "c.json", vec![]),
        ];
        journal.append(&lines, false).unwrap();
        let runs: Names = ["a.json", "b.json", "c.json"].into_iter().collect();
        let mut finals = FinalLines::read(&path, &runs, u64::MAX).unwrap();
        let temp = dir.path().join(".tmp-journal.jsonl");
        assert!(compact(&mut journal, &mut finals, &temp).unwrap());
        let kept = |line: &Line| line.to_jsonl();
        let copied = Line {
            event: Event::Copied,
            memory: Some(vec![shared]),
            ..Line::default()
        };
        let copied_by_v2 = Line {
            event: Event::Copied,
            class: Some(Class::AlreadyCurrent),
            memory: Some(vec![by_v2]),
            ..Line::default()
        };
        let want: String = [
            &header,
            &lines[3],
            &lines[4],
            &lines[8],
            &lines[9],
            &lines[11],
            &copied,
            &copied_by_v2,
        ]
        .into_iter()
        .map(kept)
        .collect();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), want);
        // One final line a run now: nothing more to compact.
        let mut finals = FinalLines::read(&path, &runs, u64::MAX).unwrap();
        assert!(!compact(&mut journal, &mut finals, &temp).unwrap());
    }
}
