//! The SDK's `DiskFileStorage` layout on a local file system: a flat directory of
//! `plan-<uuid>.json` plans, `wkfl-…json` (W1), `pr-…json` (R0) and `prun-…json` (R1 and later)
//! runs, `<external_id>.json` end users (from v0.3.0) and `<prun-id>/<output_name>.json`
//! agent-memory values (from v0.1.12).
//!
//! Symlinks are never followed: every file is opened with `O_NOFOLLOW` (and `O_NONBLOCK`, so a
//! FIFO cannot hang a batch), and an agent-memory directory that is a link is refused.

use std::io;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use planrun_converter::residue::RESIDUE_DIR;

use crate::fsio::{changed_while_read, write_atomic, Dir, FileType, TempNamer};
use crate::names::is_run_file_name;
use crate::outcome::Class;
use crate::outcome::{Failure, FailureKind};
use crate::stamp::Seen;
use crate::store::{Doc, Listing, Sink, Stamped, Store};
use crate::Durability;

/// How many times a file that changed while it was read is read again before its run is
/// reported `in_flux`.
const READ_TRIES: u32 = 3;

/// A `DiskFileStorage` directory read as a [`Store`].
#[derive(Debug, Clone)]
pub struct DiskStore {
    dir: Arc<Dir>,
    /// Whether the store may hold residues (its residue directory is not missing), looked up
    /// once: a migration asks for every run's residue, and most stores have none.
    residues: OnceLock<bool>,
}

impl DiskStore {
    /// The store rooted at `dir` (nothing is opened yet).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        DiskStore {
            dir: Arc::new(Dir::new(dir)),
            residues: OnceLock::new(),
        }
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The store's directory, whose files are looked up relative to it.
    pub(crate) fn files(&self) -> &Dir {
        &self.dir
    }

    /// The first bytes of the store's file `name` (at most `buf.len()`), as [`Store::read`]
    /// would read them; `None` when it cannot be read.
    pub(crate) fn first_bytes<'b>(&self, name: &str, buf: &'b mut [u8]) -> Option<&'b [u8]> {
        let read = self.dir.read_start_nofollow(Path::new(name), buf).ok()?;
        Some(&buf[..read])
    }
}

impl Store for DiskStore {
    fn list(&self) -> io::Result<Listing> {
        list_store(self.dir.path())
    }

    fn read(&self, doc: Doc<'_>) -> Result<Option<Vec<u8>>, Failure> {
        self.read_stamped(doc)
            .map(|found| found.map(|(bytes, _)| bytes))
    }

    fn read_stamped(&self, doc: Doc<'_>) -> Result<Option<Stamped>, Failure> {
        if let Doc::Residue(_) = doc {
            let residues = self.residues.get_or_init(|| {
                let found = std::fs::symlink_metadata(self.dir.path().join(RESIDUE_DIR));
                !matches!(found, Err(err) if err.kind() == io::ErrorKind::NotFound)
            });
            if !residues {
                return Ok(None);
            }
        }
        if let Doc::AgentMemory { run_id, .. } = doc {
            let dir = self.dir.path().join(run_id);
            match std::fs::symlink_metadata(&dir) {
                Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
                Err(err) => return Err(io_failure(&err, &dir)),
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(Failure::rejected(
                        &dir,
                        FailureKind::Symlink,
                        "the agent-memory directory is a symlink: symlinks are never followed",
                    ))
                }
                Ok(meta) if !meta.is_dir() => return Ok(None),
                Ok(_) => {}
            }
        }
        let relative = doc.relative();
        let mut tries = 0;
        loop {
            let at = crate::stamp::now_ns();
            match self.dir.read_stamped(&relative) {
                Ok((bytes, stamp)) => {
                    let seen = Seen::read(stamp, &bytes, at);
                    return Ok(Some((bytes, Some(seen))));
                }
                Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
                Err(err) if changed_while_read(&err) && tries < READ_TRIES => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(5 << tries));
                }
                Err(err) if changed_while_read(&err) => {
                    return Err(Failure::new(
                        Class::InFlux,
                        &self.locate(&relative),
                        FailureKind::InFlux,
                        format!(
                            "the file changed while it was read, {} times in a row (a writer is \
                             saving it): nothing was written from it, and the next pass reads it \
                             again",
                            READ_TRIES + 1
                        ),
                    ))
                }
                Err(err) => return Err(io_failure(&err, &self.locate(&relative))),
            }
        }
    }

    fn locate(&self, relative: &Path) -> PathBuf {
        self.dir.path().join(relative)
    }
}

/// A destination directory written as a [`Sink`]: each file is written unnamed (`O_TMPFILE`)
/// and linked under its name, or written under a hidden temp name and renamed, so it appears
/// whole or not at all; with [`Durability::Files`], fsynced before it gets its name.
#[derive(Debug)]
pub struct DiskSink {
    dir: Dir,
    durability: Durability,
    temps: TempNamer,
}

impl DiskSink {
    /// A sink into `dir`; temp files are named after `shard_tag` (`all` when not sharded), so a
    /// resumed shard removes only its own.
    pub fn new(dir: impl Into<PathBuf>, durability: Durability, shard_tag: &str) -> Self {
        DiskSink {
            dir: Dir::new(dir),
            durability,
            temps: TempNamer::new(shard_tag),
        }
    }

    /// The destination directory, whose files the verify pass reads back.
    pub(crate) fn dir(&self) -> &Dir {
        &self.dir
    }
}

impl Sink for DiskSink {
    fn write(&self, relative: &Path, bytes: &[u8]) -> io::Result<()> {
        if relative.file_name().and_then(|n| n.to_str()).is_none() {
            return Err(io::Error::other("an output name must be UTF-8"));
        }
        if let Some(parent) = relative.parent().filter(|p| !p.as_os_str().is_empty()) {
            match std::fs::create_dir(self.dir.path().join(parent)) {
                Err(err) if err.kind() != io::ErrorKind::AlreadyExists => return Err(err),
                _ => {}
            }
        }
        write_atomic(&self.dir, relative, bytes, self.durability, &self.temps)
    }
}

/// The failure of reading `file`: a symlink (`ELOOP` from `O_NOFOLLOW`) or another I/O error.
pub(crate) fn io_failure(error: &io::Error, file: &Path) -> Failure {
    if rustix::io::Errno::from_io_error(error) == Some(rustix::io::Errno::LOOP) {
        Failure::rejected(
            file,
            FailureKind::Symlink,
            "a symlink: symlinks are never followed",
        )
    } else {
        Failure::rejected(file, FailureKind::Io, format!("cannot read: {error}"))
    }
}

/// Lists a store directory (names only; no file is opened).
pub fn list_store(dir: &Path) -> io::Result<Listing> {
    // Names go straight into their list, sorted there: a sorted copy of all entries first
    // doubled the names of a store of 100,000 runs.
    let mut listing = Listing::default();
    let fd = crate::fsio::open_dir_at(rustix::fs::CWD, dir)?;
    crate::fsio::each_entry(fd.as_fd(), |name, kind| {
        let Ok(text) = name.to_str() else {
            let name = std::ffi::OsStr::from_bytes(name.to_bytes());
            listing
                .ignored
                .push((dir.join(name), "the name is not UTF-8".to_owned()));
            return Ok(());
        };
        if is_run_file_name(text) {
            listing.runs.push(text);
        } else if kind == FileType::Symlink {
            listing.ignored.push((
                dir.join(text),
                "a symlink: symlinks are never followed".to_owned(),
            ));
        } else if !matches!(kind, FileType::RegularFile | FileType::Directory) {
            listing
                .ignored
                .push((dir.join(text), "not a regular file".to_owned()));
        } else if kind == FileType::RegularFile && text.ends_with(".json") {
            listing.documents.push(text);
        }
        Ok(())
    })?;
    listing.runs.sort();
    listing.documents.sort();
    listing
        .ignored
        .sort_unstable_by(|a, b| a.0.as_os_str().as_bytes().cmp(b.0.as_os_str().as_bytes()));
    Ok(listing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_takes_runs_and_documents_and_says_why_it_passes_over_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        let run = "prun-0ae60cd0-eabe-44be-87d5-dff710918009.json";
        for name in [run, "wkfl-1.json", "plan-1.json", "zoë.json", "notes.txt"] {
            std::fs::write(at(name), b"{}").unwrap();
        }
        // A run's name is a run whatever its type (rejected later, never skipped); an agent-memory
        // directory is not listed.
        std::fs::create_dir(at("pr-2.json")).unwrap();
        std::fs::create_dir(at("prun-0ae60cd0-eabe-44be-87d5-dff710918009")).unwrap();
        std::os::unix::fs::symlink(at("plan-1.json"), at("link.json")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            at("fifo.json").as_path(),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from(0o644),
            0,
        )
        .unwrap();
        let not_utf8 = std::ffi::OsStr::from_bytes(b"caf\xe9.json");
        std::fs::write(dir.path().join(not_utf8), b"{}").unwrap();

        let listing = list_store(dir.path()).unwrap();
        let runs: Vec<String> = listing.runs.iter().map(|n| n.to_string()).collect();
        assert_eq!(runs, ["pr-2.json", run, "wkfl-1.json"]);
        let documents: Vec<String> = listing.documents.iter().map(|n| n.to_string()).collect();
        assert_eq!(documents, ["plan-1.json", "zoë.json"]);
        assert_eq!(
            listing.ignored,
            [
                (
                    dir.path().join(not_utf8),
                    "the name is not UTF-8".to_owned()
                ),
                (at("fifo.json"), "not a regular file".to_owned()),
                (
                    at("link.json"),
                    "a symlink: symlinks are never followed".to_owned()
                ),
            ]
        );
    }
}
