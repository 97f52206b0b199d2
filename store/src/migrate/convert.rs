//! The conversion loop: each run converted and its outputs written on the pool, chunk by chunk,
//! and each chunk committed (synced, then journaled) in order; and the dry run.

use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::feed::joined;
use super::journal::{Event, Line, MemoryRecord, Writer};
use super::options::{Options, Progress, Summary, Target};
use super::order::{self, Ordered};
use super::report::Builder;
use super::{catch_up, check_output, content_hash, feed, head, io_err, Ctx, MigrateError};
use crate::loss::SharedCounts;
use crate::Durability;
use crate::{convert_entry, run_key, Failure, FailureKind, MemoryFile, RunResult, Sink};

/// The places `todo` in the order they are converted (by plan), saying so to `progress` first.
pub(super) fn ordered(
    ctx: &Ctx,
    todo: &[usize],
    pool: &rayon::ThreadPool,
    progress: &dyn Progress,
) -> Ordered {
    progress.ordering();
    order::by_plan(&ctx.store, ctx.runs, todo, pool)
}

/// Converts the runs `todo` chunk by chunk on the pool while a committer thread makes each
/// finished chunk durable and journals it, in chunk order, so conversion never waits for a
/// sync. The workers are at most a few chunks ahead of the committer (it has four journal
/// batches queued at most). A DST failure stops the batch once the chunks already started have
/// been committed.
pub(super) fn convert_all(
    ctx: &Ctx,
    opts: &Options,
    todo: &Ordered,
    pool: &rayon::ThreadPool,
    journal: &mut Writer,
    dst_dir: &File,
    progress: &dyn Progress,
) -> Result<(), MigrateError> {
    enum Batch {
        Started(Vec<Line>),
        Finished(Vec<Line>),
    }
    let journal_path = journal.path().to_owned();
    let (sender, receiver) = std::sync::mpsc::sync_channel::<Batch>(4);
    std::thread::scope(|scope| {
        let committer = scope.spawn(move || -> Result<(), MigrateError> {
            let write_err = |err| io_err("cannot write", &journal_path)(err);
            while let Ok(first) = receiver.recv() {
                // Every chunk finished by now shares one sync: the slower the disk, the more.
                let mut finished = Vec::new();
                for batch in std::iter::once(first).chain(receiver.try_iter()) {
                    match batch {
                        Batch::Started(lines) => {
                            journal.append(&lines, false).map_err(&write_err)?;
                        }
                        Batch::Finished(lines) => finished.extend(lines),
                    }
                }
                if !finished.is_empty() {
                    commit(ctx, dst_dir, &finished)?;
                    journal
                        .append(&finished, opts.durability.per_file())
                        .map_err(&write_err)?;
                    progress.advance(finished.len() as u64);
                }
            }
            Ok(())
        });
        let cancelled = AtomicBool::new(false);
        let mut stopped = Ok(());
        feed::chunks_in_order(
            pool,
            todo.items(),
            opts.chunk_size,
            |chunk| {
                if !still_wanted(progress, &cancelled) {
                    return false;
                }
                let started = chunk
                    .iter()
                    .map(|&i| Line {
                        event: Event::Started,
                        run: Some(ctx.runs.get(i).to_string()),
                        ..Line::default()
                    })
                    .collect();
                sender.send(Batch::Started(started)).is_ok()
            },
            |i| work(ctx, i),
            Result::is_err,
            |results| {
                let mut lines = Vec::with_capacity(results.len());
                for result in results {
                    match result {
                        Ok(line) => lines.push(line),
                        Err(err) => {
                            if stopped.is_ok() {
                                stopped = Err(err);
                            }
                        }
                    }
                }
                // A committer that stopped has its own error, returned below.
                let _ = sender.send(Batch::Finished(lines));
            },
        );
        if cancelled.into_inner() && stopped.is_ok() {
            stopped = Err(MigrateError::Cancelled);
        }
        drop(sender);
        let committed = joined(committer);
        committed.and(stopped)
    })
}

/// Whether the next chunk may start: not once the user has cancelled, which `cancelled`
/// records for the caller to report after the chunks in flight are done.
pub(super) fn still_wanted(progress: &dyn Progress, cancelled: &AtomicBool) -> bool {
    if progress.cancelled() {
        cancelled.store(true, Ordering::Relaxed);
    }
    !cancelled.load(Ordering::Relaxed)
}

pub(super) fn dry_run(
    ctx: &Ctx,
    opts: &Options,
    todo: &Ordered,
    pool: &rayon::ThreadPool,
    mut builder: Builder,
    progress: &dyn Progress,
) -> Result<Summary, MigrateError> {
    progress.begin(todo.places().len() as u64, 0);
    let mut verified = 0;
    let (cancelled, failed) = (AtomicBool::new(false), AtomicBool::new(false));
    let mut stopped = Ok(());
    feed::chunks_in_order(
        pool,
        todo.items(),
        opts.chunk_size,
        |_| still_wanted(progress, &cancelled) && !failed.load(Ordering::Relaxed),
        |i| work(ctx, i),
        Result::is_err,
        |lines| {
            if stopped.is_err() {
                return;
            }
            let count = lines.len() as u64;
            for line in lines {
                let added = line.and_then(|line| {
                    verified += u64::from(line.event == Event::Completed);
                    for shared in &line.groups {
                        builder.define(shared.key(), shared.counts());
                    }
                    builder.add(&line).map_err(|problem| MigrateError::Verify {
                        count: 1,
                        first: vec![problem],
                    })
                });
                if let Err(err) = added {
                    failed.store(true, Ordering::Relaxed);
                    stopped = Err(err);
                    return;
                }
            }
            progress.advance(count);
        },
    );
    stopped?;
    if cancelled.into_inner() {
        return Err(MigrateError::Cancelled);
    }
    builder.verified(verified);
    progress.end();
    Ok(Summary {
        report: builder.finish(),
        resumed: false,
        skipped: 0,
        temps_removed: 0,
        journal_cut: false,
        journal: None,
        report_file: None,
    })
}

/// Converts one run and writes its outputs (nothing in a dry run); the journal line to record.
/// Problems with the run are in the line; an error is a DST failure that stops the batch.
pub(super) fn work(ctx: &Ctx, index: usize) -> Result<Line, MigrateError> {
    let clock = Instant::now();
    let name = ctx.runs.get(index);
    let name = name.as_str();
    let path = ctx.src.join(name);
    let result = match ctx.conflict_winner(index) {
        Some(winner) => {
            let winner = ctx.runs.get(winner);
            RunResult {
                path: path.clone(),
                bytes_in: std::fs::symlink_metadata(&path).map_or(0, |m| m.len()),
                source_version: None,
                outcome: Err(Failure::rejected(
                    &path,
                    FailureKind::Conflict,
                    format!(
                        "{name} and {winner} map to the same V2 run prun-{}; {winner} sorts first and wins",
                        run_key(name).unwrap_or("?")
                    ),
                )),
                inputs: Vec::new(),
            }
        }
        None => convert_entry(&ctx.store, name, ctx.config, &ctx.refs),
    };
    // After every read (a HEAD store's end user is read later, and moves it): an input racily
    // clean against this moment was so at its read, and was hashed then (see `Seen::read`).
    let read_at = crate::stamp::now_ns();
    let mut inputs = result.inputs;
    if let Ok(out) = &result.outcome {
        inputs.extend(out.agent_memory.iter().map(|file| {
            crate::stamp::Input::seen(
                file.relative.to_string_lossy().into_owned(),
                file.seen.as_ref(),
            )
        }));
    }
    let mut line = Line {
        run: Some(name.to_owned()),
        version: result.source_version.clone(),
        bytes_in: Some(result.bytes_in),
        inputs: Some(inputs),
        read_at: Some(read_at),
        ..Line::default()
    };
    let outcome = match result.outcome {
        Ok(out) if ctx.target == Target::Head => {
            let at_head = head::outputs(&ctx.store, &ctx.refs, &ctx.plan_claims, &path, &out);
            line.read_at = Some(crate::stamp::now_ns());
            match at_head {
                Ok(mut at_head) => {
                    let inputs = line.inputs.get_or_insert_with(Vec::new);
                    for input in [Some(&at_head.end_user), at_head.plan.as_ref()]
                        .into_iter()
                        .flatten()
                    {
                        if inputs.iter().all(|i| i.path != input.path) {
                            inputs.push(input.clone());
                        }
                    }
                    // A shared file someone else changed in DST is kept, not written.
                    at_head.files.retain(|(relative, _)| {
                        !ctx.kept.contains(relative.to_string_lossy().as_ref())
                    });
                    let memory = write_outputs(
                        ctx,
                        &out.id,
                        &at_head.run,
                        &out.agent_memory,
                        &at_head.files,
                    )?;
                    let mut out = out;
                    out.report.extend(at_head.report);
                    out.bytes = at_head.run;
                    Ok((out, memory))
                }
                Err(failure) => Err(failure),
            }
        }
        Ok(out) => {
            let memory = write_outputs(ctx, &out.id, &out.bytes, &out.agent_memory, &[])?;
            Ok((out, memory))
        }
        Err(failure) => Err(failure),
    };
    let outcome = super::earlier::without_earlier_outputs(ctx, index, outcome)?;
    match outcome {
        Ok((out, memory)) => {
            line.event = Event::Completed;
            line.class = Some(out.class);
            line.bytes_out = Some(out.bytes.len() as u64);
            line.hash = Some(content_hash(&out.bytes));
            line.groups = out
                .report
                .shared()
                .map(|s| Arc::clone(s.counts()))
                .collect();
            let own = out.report.own_counts();
            if !own.is_empty() {
                line.groups.push(SharedCounts::new(own));
            }
            if !line.groups.is_empty() {
                line.shared = Some(line.groups.iter().map(|g| g.key().to_owned()).collect());
            }
            if !ctx.dry_run {
                line.outputs = Some(output_stamps(ctx, &out.id, &memory));
            }
            line.memory = Some(memory);
            line.id = Some(out.id);
        }
        Err(failure) => {
            line.event = Event::Failed;
            line.class = Some(failure.class);
            line.error = Some((&failure).into());
        }
    }
    line.micros = Some(u64::try_from(clock.elapsed().as_micros()).unwrap_or(u64::MAX));
    Ok(line)
}

/// The stamps of a run's own outputs just written (its document, then its agent memory and
/// residue; a HEAD store's shared files are judged apart): a later pass that finds the same
/// stamps knows the files are the ones written without reading them.
pub(super) fn output_stamps(
    ctx: &Ctx,
    id: &str,
    memory: &[MemoryRecord],
) -> Vec<crate::stamp::Input> {
    let document = planrun_wire::join!(id, ".json");
    let own = memory
        .iter()
        .map(|m| m.path.as_str())
        .filter(|path| !catch_up::is_shared(path));
    std::iter::once(document.as_str())
        .chain(own)
        .map(|path| crate::stamp::Input {
            path: path.to_owned(),
            stamp: ctx.sink.dir().stamp(Path::new(path)).ok().flatten(),
            hash: None,
        })
        .collect()
}

/// Copies the agent-memory files (their bytes as the conversion read and checked them), then
/// writes the V2 document; in a dry run, checks the document instead. An error is a DST failure.
pub(super) fn write_outputs(
    ctx: &Ctx,
    id: &str,
    bytes: &[u8],
    memory: &[MemoryFile],
    extra: &[(PathBuf, Vec<u8>)],
) -> Result<Vec<MemoryRecord>, MigrateError> {
    let mut records = Vec::with_capacity(memory.len());
    for file in memory {
        let content = &file.content;
        let relative = file.relative.to_string_lossy().into_owned();
        ctx.earlier.note_written(&relative);
        if !ctx.dry_run {
            ctx.sink
                .write(&file.relative, content)
                .map_err(io_err("cannot write", &ctx.dst.join(&file.relative)))?;
        }
        records.push(MemoryRecord {
            path: relative,
            bytes: content.len() as u64,
            hash: content_hash(content),
        });
    }
    for (relative, content) in extra {
        let path = relative.to_string_lossy().into_owned();
        let hash = content_hash(content);
        if !ctx.dry_run {
            ctx.shared_writes
                .write(&ctx.sink, &path, content, &hash)
                .map_err(io_err("cannot write", &ctx.dst.join(relative)))?;
        }
        records.push(MemoryRecord {
            path,
            bytes: content.len() as u64,
            hash,
        });
    }
    let name = planrun_wire::join!(id, ".json");
    if ctx.dry_run {
        check_output(ctx, bytes, id).map_err(|problem| MigrateError::Verify {
            count: 1,
            first: vec![format!("{name}: {problem}")],
        })?;
    } else {
        ctx.sink
            .write(Path::new(&name), bytes)
            .map_err(io_err("cannot write", &ctx.dst.join(&name)))?;
    }
    Ok(records)
}

/// Makes a chunk's outputs durable before its lines are journaled: one `syncfs`, or (per file)
/// an fsync of every directory the chunk wrote into (its files were fsynced before renaming),
/// or nothing (`--no-sync`).
pub(super) fn commit(ctx: &Ctx, dst_dir: &File, lines: &[Line]) -> Result<(), MigrateError> {
    match ctx.durability {
        Durability::None => return Ok(()),
        Durability::Chunks => {
            return crate::fsio::syncfs(dst_dir).map_err(io_err("cannot sync", &ctx.dst));
        }
        Durability::Files => {}
    }
    let mut dirs = BTreeSet::new();
    for line in lines.iter().filter(|l| l.event == Event::Completed) {
        for memory in line.memory.iter().flatten() {
            if let Some(parent) = Path::new(&memory.path).parent() {
                dirs.insert(ctx.dst.join(parent));
            }
        }
    }
    for dir in dirs.iter().chain([&ctx.dst]) {
        crate::fsio::fsync_dir(dir).map_err(io_err("cannot sync", dir))?;
    }
    Ok(())
}
