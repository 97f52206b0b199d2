//! The verify pass: every run of the shard has a final journal line, and every output this pass
//! wrote is read back with a fresh reader and checked against its line.

use std::path::Path;

use planrun_v2::check::Checker;

use super::finals::FinalLines;
use super::journal::{Event, Line, Reader};
use super::options::{Progress, Target};
use super::report::Builder;
use super::{catch_up, content_hash, feed, head, io_err, Ctx, MigrateError};
use crate::fsio::Dir;
use crate::safe_component;

/// A V2 document read back with a fresh reader, holding the id its file is named by: the
/// verdict of a strict serde read into `PlanRunV2` (which accepts exactly what the published
/// schema accepts, as the test suite proves), given by a [`Checker`] that reads each distinct
/// plan, end user and config once per migration instead of once per run.
pub(super) fn check_document(checker: &Checker, bytes: &[u8], id: &str) -> Result<(), String> {
    let found = checker
        .check(bytes)
        .map_err(|e| format!("not a PlanRunV2: {e}"))?;
    if found != id {
        return Err(format!("holds run {found}"));
    }
    Ok(())
}

/// [`check_document`] for V2 output, the HEAD run check for `--to r6`.
pub(super) fn check_output(ctx: &Ctx, bytes: &[u8], id: &str) -> Result<(), String> {
    match ctx.target {
        Target::V2 => check_document(&ctx.checker, bytes, id),
        Target::Head => head::check_document(bytes, id),
    }
}

/// Checks a completed run's files against its journal line: sizes and hashes.
pub(super) fn check_files(dst: &Dir, line: &Line) -> Result<Vec<u8>, String> {
    let id = line.id.as_deref().ok_or("no id journaled")?;
    safe_component(id).map_err(|why| format!("bad id {id:?}: {why}"))?;
    let name = planrun_wire::join!(id, ".json");
    let bytes = dst
        .read_nofollow(Path::new(&name))
        .map_err(|e| format!("{name}: {e}"))?;
    if Some(bytes.len() as u64) != line.bytes_out || Some(content_hash(&bytes)) != line.hash {
        return Err(format!("{name}: not the bytes the journal recorded"));
    }
    // A HEAD store's shared plans and end users are other runs' outputs too, rewritten by
    // later runs and kept when someone else changed them: a catch-up judges them on their own.
    for memory in line
        .memory
        .iter()
        .flatten()
        .filter(|m| !catch_up::is_shared(&m.path))
    {
        let content = dst
            .read_nofollow(Path::new(&memory.path))
            .map_err(|e| format!("{}: {e}", memory.path))?;
        if content.len() as u64 != memory.bytes || content_hash(&content) != memory.hash {
            return Err(format!(
                "{}: not the bytes the journal recorded",
                memory.path
            ));
        }
    }
    Ok(bytes)
}

/// What the journal's final lines say is wrong with the shard: a run it should not have, runs
/// without a final line.
fn unsettled(ctx: &Ctx<'_>, last: &FinalLines<'_>) -> Vec<String> {
    let mine = ctx.mine;
    let mut problems = Vec::new();
    let outside =
        (0..ctx.runs.len()).find(|i| last.last[*i] != 0 && mine.binary_search(i).is_err());
    let outside = outside.map(|i| ctx.runs.get(i));
    if let Some(stray) = last.stray().or(outside.as_deref()) {
        problems.push(format!(
            "the journal records {stray}, which is not a run of this shard of SRC (did SRC change?)"
        ));
    }
    let unsettled = mine.iter().filter(|&&i| last.last[i] == 0).count();
    if unsettled > 0 {
        problems.push(format!(
            "{unsettled} run(s) of the shard have no final journal line"
        ));
    }
    problems
}

/// The verify pass: every run of the shard has a final journal line; every completed run's
/// output is re-read from disk and checked. Feeds the report; returns how many outputs passed.
/// After a catch-up (`so_far`), only the lines after those it read are read: it checked and
/// reported the outputs of the runs it found up to date.
pub(super) fn verify<'a>(
    ctx: &Ctx<'a>,
    journal: &Path,
    so_far: Option<catch_up::ReadSoFar<'a>>,
    pool: &rayon::ThreadPool,
    builder: &mut Builder,
    chunk_size: usize,
    progress: &dyn Progress,
) -> Result<(u64, FinalLines<'a>), MigrateError> {
    let so_far = so_far.unwrap_or_else(|| catch_up::ReadSoFar {
        finals: FinalLines::new(ctx.runs),
        offset: 0,
        index: 0,
        completed: 0,
        problems: Vec::new(),
    });
    let mut last = so_far.finals;
    // The catch-up stops reading where its tags did (see `catch_up::catch_up`).
    debug_assert_eq!(last.lines, so_far.index, "the tags end where the lines do");
    let finals_before = last.places.len();
    let mut problems: Vec<String> = so_far.problems;
    last.read_on(journal, so_far.offset, u64::MAX)?;
    problems.extend(unsettled(ctx, &last));
    let mut settling = last.in_journal_order_after(finals_before);
    let mut reader =
        Reader::open_at(journal, so_far.offset).map_err(io_err("cannot read", journal))?;
    let mut index = so_far.index;
    let mut batch: Vec<Line> = Vec::with_capacity(chunk_size);
    let mut verified = so_far.completed;
    let mut completed = so_far.completed;
    let check = |line: &Line| {
        let bytes = check_files(ctx.sink.dir(), line)?;
        check_output(ctx, &bytes, line.id.as_deref().unwrap_or(""))
            .map_err(|e| format!("{}.json: {e}", line.id.as_deref().unwrap_or("?")))
    };
    // The pool's threads take the batches of completed lines as this thread reads them from the
    // journal; a failed check is kept with its batch and place, to be reported in journal order.
    type Checked = (u64, Vec<(usize, usize, String)>);
    let (read, checked) = feed::fed_by(
        pool,
        |send| -> Result<(), MigrateError> {
            let mut batches = 0;
            while let Some(line) = reader.next_line().map_err(io_err("cannot read", journal))? {
                index += 1;
                if let (Event::Entries, Some(key), Some(counts)) =
                    (line.event, &line.key, &line.entries)
                {
                    builder.define(key, counts);
                    continue;
                }
                if settling.position(&line, index).is_none() {
                    continue;
                }
                if let Err(problem) = builder.add(&line) {
                    problems.push(format!("the journal's line {index}: {problem}"));
                }
                if line.event == Event::Completed {
                    completed += 1;
                    batch.push(line);
                    if batch.len() == chunk_size {
                        if progress.cancelled() {
                            return Err(MigrateError::Cancelled);
                        }
                        let full = Vec::with_capacity(chunk_size);
                        send((batches, std::mem::replace(&mut batch, full)));
                        batches += 1;
                    }
                }
            }
            send((batches, std::mem::take(&mut batch)));
            Ok(())
        },
        |(passed, failed): &mut Checked, (number, lines): (usize, Vec<Line>)| {
            for (position, line) in lines.iter().enumerate() {
                match check(line) {
                    Ok(()) => *passed += 1,
                    Err(problem) => failed.push((number, position, problem)),
                }
            }
        },
    );
    read?;
    let mut failed = Vec::new();
    for (passed, failures) in checked {
        verified += passed;
        failed.extend(failures);
    }
    failed.sort_unstable_by_key(|&(number, position, _)| (number, position));
    problems.extend(failed.into_iter().map(|(_, _, problem)| problem));
    if reader.torn {
        problems.push(format!(
            "the journal's line {} is not a journal line",
            index + 1
        ));
    }
    if verified != completed && problems.is_empty() {
        problems.push(format!(
            "{completed} completed runs, {verified} verified outputs"
        ));
    }
    if problems.is_empty() {
        Ok((verified, last))
    } else {
        Err(MigrateError::Verify {
            count: problems.len(),
            first: problems.into_iter().take(5).collect(),
        })
    }
}
