//! Checks on SRC and DST before a migration writes anything: whether SRC is a store, and whether
//! DST allows a fresh start or a resume of the same migration.

use std::io;
use std::path::{Component, Path, PathBuf};

use super::journal::{self, Line};
use super::options::{Options, Shard};
use super::{io_err, MigrateError, CONTROL_DIR, RESIDUE_DIR};

/// Why SRC, which holds no run file, is not a store: what a store holds, what SRC holds, and a
/// directory below it (two levels at most, symlinks not followed) that does hold run files.
pub(super) fn no_run_files(src: &Path) -> String {
    let patterns = crate::names::RUN_PREFIXES
        .map(|p| format!("{p}*.json"))
        .join(", ");
    let (dirs, json) = entries(src)
        .iter()
        .fold((0, 0), |(d, j), (name, is_dir)| match is_dir {
            true => (d + 1, j),
            false if name.ends_with(".json") => (d, j + 1),
            false => (d, j),
        });
    let mut said = format!(
        "no run files ({patterns}) in SRC {}; it holds {dirs} director{} and {json} JSON file{}",
        src.display(),
        if dirs == 1 { "y" } else { "ies" },
        if json == 1 { "" } else { "s" },
    );
    if let Some(store) = store_below(src, 2) {
        said.push_str(&format!(": did you mean {}?", store.display()));
    }
    said
}

/// The entries of `dir` that are directories or regular files (name, is it a directory), sorted;
/// none when it cannot be read.
pub(super) fn entries(dir: &Path) -> Vec<(String, bool)> {
    let mut found: Vec<(String, bool)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let kind = e.file_type().ok()?;
            let name = e.file_name().into_string().ok()?;
            (kind.is_dir() || kind.is_file()).then_some((name, kind.is_dir()))
        })
        .collect();
    found.sort();
    found
}

/// The first directory below `dir`, at most `depth` levels down and nearest first, that holds a
/// run file (of the first thousand directories of each level).
pub(super) fn store_below(dir: &Path, depth: usize) -> Option<PathBuf> {
    let mut level = vec![dir.to_owned()];
    for _ in 0..depth {
        let mut next = Vec::new();
        for parent in &level {
            for (name, is_dir) in entries(parent) {
                if is_dir {
                    next.push(parent.join(name));
                }
            }
        }
        // A hint, not a search: a huge tree is not walked.
        next.truncate(1000);
        if let Some(store) = next.iter().find(|d| {
            entries(d)
                .iter()
                .any(|(n, f)| !f && crate::names::is_run_file_name(n))
        }) {
            return Some(store.clone());
        }
        level = next;
    }
    None
}

/// An absolute path with every existing ancestor canonicalised (DST may not exist yet).
pub(super) fn absolute(path: &Path) -> io::Result<PathBuf> {
    let path = if path.is_absolute() {
        path.to_owned()
    } else {
        std::env::current_dir()?.join(path)
    };
    for ancestor in path.ancestors() {
        match std::fs::canonicalize(ancestor) {
            Ok(mut out) => {
                let rest = path
                    .strip_prefix(ancestor)
                    .expect("an ancestor is a prefix");
                for component in rest.components() {
                    match component {
                        Component::Normal(name) => out.push(name),
                        Component::ParentDir => {
                            out.pop();
                        }
                        _ => {}
                    }
                }
                return Ok(out);
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(err),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        "no existing ancestor",
    ))
}

pub(super) enum Start {
    Fresh,
    Resume,
}

/// Decides whether DST allows a fresh start or a resume, creating it when it does not exist.
pub(super) fn prepare(
    dst: &Path,
    journal: &Path,
    header: &Line,
    opts: &Options,
) -> Result<Start, MigrateError> {
    match std::fs::symlink_metadata(dst) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dst).map_err(io_err("cannot create DST", dst))?;
            return Ok(Start::Fresh);
        }
        Err(err) => return Err(io_err("cannot read DST", dst)(err)),
        Ok(meta) if !meta.is_dir() => {
            return Err(MigrateError::Usage(format!(
                "DST {} exists and is not a directory",
                dst.display()
            )))
        }
        Ok(_) => {}
    }
    if journal.exists() {
        let found = journal::read_header(journal).map_err(io_err("cannot read", journal))?;
        let Some(found) = found else {
            if !opts.resume {
                return Err(MigrateError::Usage(format!(
                    "DST holds a journal without a valid header ({}): pass --resume to start this shard over",
                    journal.display()
                )));
            }
            // Only a power loss right after creating the journal leaves it without a header;
            // nothing was written after it, so the shard starts over.
            std::fs::remove_file(journal).map_err(io_err("cannot remove", journal))?;
            return Ok(Start::Fresh);
        };
        let checks = [
            ("journal format", &found.format, &header.format),
            ("source store", &found.src, &header.src),
            ("shard", &found.shard, &header.shard),
            ("tool version", &found.tool, &header.tool),
            ("config (--config)", &found.config, &header.config),
            ("target (--to)", &found.target, &header.target),
        ];
        for (what, was, now) in checks {
            if was != now {
                return Err(MigrateError::Usage(format!(
                    "DST holds a migration with another {what} ({} there, {} now): choose a new DST",
                    was.as_deref().unwrap_or("none"),
                    now.as_deref().unwrap_or("none")
                )));
            }
        }
        if !opts.resume {
            return Err(MigrateError::Usage(format!(
                "DST {} holds an earlier migration of {} (journal {}): pass --resume to continue it, or choose a new DST",
                dst.display(),
                found.src.as_deref().unwrap_or("?"),
                journal.display()
            )));
        }
        return Ok(Start::Resume);
    }
    check_new(dst, header, opts.shard)?;
    Ok(Start::Fresh)
}

/// A fresh start needs DST empty, or (for a shard) holding only the work of sibling shards of
/// the same store and split.
pub(super) fn check_new(
    dst: &Path,
    header: &Line,
    shard: Option<Shard>,
) -> Result<(), MigrateError> {
    let not_new = || {
        MigrateError::Usage(format!(
            "DST {} is not empty and holds no migration of this store to resume: choose a new or empty directory",
            dst.display()
        ))
    };
    let mut others = false;
    for entry in std::fs::read_dir(dst).map_err(io_err("cannot list DST", dst))? {
        let entry = entry.map_err(io_err("cannot list DST", dst))?;
        others |= entry.file_name() != CONTROL_DIR;
    }
    let control = dst.join(CONTROL_DIR);
    let mut siblings = 0;
    if control.is_dir() {
        let suffix = shard.map(|s| format!("-of-{}", s.count));
        for entry in std::fs::read_dir(&control).map_err(io_err("cannot list", &control))? {
            let entry = entry.map_err(io_err("cannot list", &control))?;
            let name = entry.file_name();
            let name = name.to_str().unwrap_or("");
            if name.starts_with(crate::fsio::TEMP_PREFIX) {
                continue;
            }
            // Only a sharded migration shares DST, with the other shards of the same split.
            let Some(suffix) = suffix.as_deref() else {
                return Err(not_new());
            };
            if name == RESIDUE_DIR {
                continue;
            }
            let journal_of = name
                .strip_prefix("journal-")
                .and_then(|n| n.strip_suffix(".jsonl"));
            let report_of = name
                .strip_prefix("report-")
                .and_then(|n| n.strip_suffix(".json"));
            match (journal_of, report_of) {
                (Some(tag), _) if tag.ends_with(suffix) => {
                    let sibling = journal::read_header(&entry.path())
                        .map_err(io_err("cannot read", &entry.path()))?;
                    match sibling {
                        Some(h) if h.src == header.src => siblings += 1,
                        Some(h) => {
                            return Err(MigrateError::Usage(format!(
                                "DST holds shards of a migration of another store ({})",
                                h.src.as_deref().unwrap_or("?")
                            )))
                        }
                        // A sibling that is just starting.
                        None => siblings += 1,
                    }
                }
                (_, Some(tag)) if tag.ends_with(suffix) => {}
                _ => return Err(not_new()),
            }
        }
    }
    if others && siblings == 0 {
        return Err(not_new());
    }
    Ok(())
}
