//! The file-system primitives of the batch engine: atomic writes (unnamed or hidden temp files),
//! group commit with one `syncfs`, per-file `fsync` for `--durable`, the journal lock, and the
//! removal of stale temp files on resume.

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Every temp file of the engine starts with this; the shard tag and the process id follow, so a
/// resumed shard removes only its own leftovers, never a sibling shard's work in progress.
pub(crate) const TEMP_PREFIX: &str = ".tmp-planrun-";

/// Names temp files: `.tmp-planrun-<shard tag>-<pid>-<counter>`; short, so a long final name
/// (an agent-memory output name) never makes the temp name too long.
#[derive(Debug)]
pub(crate) struct TempNamer {
    prefix: String,
    counter: AtomicU64,
}

impl TempNamer {
    /// A namer for one shard (`all` when the store is not sharded).
    pub(crate) fn new(shard_tag: &str) -> Self {
        TempNamer {
            prefix: format!("{TEMP_PREFIX}{shard_tag}-{}-", std::process::id()),
            counter: AtomicU64::new(0),
        }
    }

    fn next(&self) -> String {
        format!(
            "{}{}",
            self.prefix,
            self.counter.fetch_add(1, Ordering::Relaxed)
        )
    }
}

/// The prefix of every temp file a shard's processes create.
pub(crate) fn shard_temp_prefix(shard_tag: &str) -> String {
    format!("{TEMP_PREFIX}{shard_tag}-")
}

/// Writes `bytes` to `dir/name` atomically: a reader sees the old file or the whole new one,
/// never a part. The file is written unnamed (`O_TMPFILE`) and linked under its name when
/// complete: one directory update instead of a create and a rename, and nothing left behind by
/// a crash. Where that is not possible (a file system without `O_TMPFILE`, no `/proc`, or a
/// file already at `name`), it goes through a hidden temp file in `dir` renamed over `name`.
/// With `durable`, the file is fsynced before it gets its name (the caller fsyncs `dir`).
pub(crate) fn write_atomic(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    durable: bool,
    temps: &TempNamer,
) -> io::Result<()> {
    static NO_TMPFILE: AtomicBool = AtomicBool::new(false);
    if !NO_TMPFILE.load(Ordering::Relaxed) {
        match write_linked(dir, name, bytes, durable) {
            Ok(()) => return Ok(()),
            Err(Unlinked::Exists) => {}
            Err(Unlinked::Unsupported) => NO_TMPFILE.store(true, Ordering::Relaxed),
            Err(Unlinked::Io(err)) => return Err(err),
        }
    }
    write_renamed(dir, name, bytes, durable, temps)
}

/// Why [`write_linked`] did not write the file.
enum Unlinked {
    /// `name` exists: linking cannot replace it.
    Exists,
    /// This system or file system cannot do it at all.
    Unsupported,
    /// The write itself failed.
    Io(io::Error),
}

fn write_linked(dir: &Path, name: &str, bytes: &[u8], durable: bool) -> Result<(), Unlinked> {
    // A kernel without O_TMPFILE opens the directory itself (EISDIR); a file system without it
    // says EOPNOTSUPP.
    let mut file = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .mode(0o666)
        .open(dir)
        .map_err(|err| match err.raw_os_error() {
            Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL) => Unlinked::Unsupported,
            _ => Unlinked::Io(err),
        })?;
    file.write_all(bytes).map_err(Unlinked::Io)?;
    if durable {
        file.sync_all().map_err(Unlinked::Io)?;
    }
    let from = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .expect("no NUL in a /proc path");
    let to = CString::new(dir.join(name).into_os_string().into_vec())
        .map_err(|err| Unlinked::Io(io::Error::new(io::ErrorKind::InvalidInput, err)))?;
    // SAFETY: both paths are NUL-terminated and outlive the call; `file` keeps the descriptor
    // named by `from` open until after it.
    let rc = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    // No /proc (ENOENT) or a policy against linking through it (EPERM): use the other way.
    Err(match err.raw_os_error() {
        Some(libc::EEXIST) => Unlinked::Exists,
        Some(libc::ENOENT | libc::EPERM | libc::EOPNOTSUPP) => Unlinked::Unsupported,
        _ => Unlinked::Io(err),
    })
}

/// The portable way: a new hidden temp file in `dir` (so the rename stays on one file system),
/// renamed over `name`.
fn write_renamed(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    durable: bool,
    temps: &TempNamer,
) -> io::Result<()> {
    let temp = dir.join(temps.next());
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        if durable {
            file.sync_all()?;
        }
        drop(file);
        std::fs::rename(&temp, dir.join(name))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// One `syncfs(2)` on the file system that holds `dir`: every dirty page and inode of that file
/// system reaches the disk (the group commit of a chunk).
pub(crate) fn syncfs(dir: &File) -> io::Result<()> {
    // SAFETY: `syncfs` only reads the descriptor, which `dir` keeps open for the whole call.
    let rc = unsafe { libc::syncfs(dir.as_raw_fd()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `fsync` of a directory, so the renames and creations in it are durable.
pub(crate) fn fsync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Takes an exclusive, non-blocking `flock` on `file`; `false` when another process holds it.
/// The kernel releases it when the process ends, SIGKILL included.
pub(crate) fn try_lock(file: &File) -> io::Result<bool> {
    // SAFETY: `flock` only reads the descriptor, which `file` keeps open for the whole call.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(err)
    }
}

/// Removes the temp files whose name starts with `prefix` from `dst` and from its immediate
/// subdirectories (agent-memory directories and `.planrun/`); returns how many it removed.
pub(crate) fn remove_temps(dst: &Path, prefix: &str) -> io::Result<usize> {
    let mut removed = 0;
    for entry in std::fs::read_dir(dst)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let name = entry.file_name();
        if kind.is_file() && name.to_str().is_some_and(|n| n.starts_with(prefix)) {
            std::fs::remove_file(entry.path())?;
            removed += 1;
        } else if kind.is_dir() {
            for inner in std::fs::read_dir(entry.path())? {
                let inner = inner?;
                let inner_name = inner.file_name();
                if inner.file_type()?.is_file()
                    && inner_name.to_str().is_some_and(|n| n.starts_with(prefix))
                {
                    std::fs::remove_file(inner.path())?;
                    removed += 1;
                }
            }
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_writes_leave_only_the_final_file_and_temps_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let temps = TempNamer::new("0-of-2");
        write_atomic(dir.path(), "a.json", b"one", false, &temps).unwrap();
        write_atomic(dir.path(), "a.json", b"two", true, &temps).unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.json")]);
        assert_eq!(std::fs::read(dir.path().join("a.json")).unwrap(), b"two");

        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join(".tmp-planrun-0-of-2-1-7"), b"x").unwrap();
        std::fs::write(dir.path().join("sub/.tmp-planrun-0-of-2-9-0"), b"x").unwrap();
        std::fs::write(dir.path().join("sub/.tmp-planrun-1-of-2-9-0"), b"x").unwrap();
        assert_eq!(
            remove_temps(dir.path(), &shard_temp_prefix("0-of-2")).unwrap(),
            2
        );
        assert!(
            dir.path().join("sub/.tmp-planrun-1-of-2-9-0").exists(),
            "a sibling's temp stays"
        );
        syncfs(&File::open(dir.path()).unwrap()).unwrap();
        fsync_dir(dir.path()).unwrap();
    }

    #[test]
    fn both_ways_of_writing_give_the_same_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let temps = TempNamer::new("all");
        match write_linked(dir.path(), "linked.json", b"{}", false) {
            Ok(()) => {}
            Err(Unlinked::Unsupported) => {
                eprintln!("no O_TMPFILE here: only the rename way is used");
                return;
            }
            Err(Unlinked::Exists | Unlinked::Io(_)) => panic!("writing an unnamed file failed"),
        }
        assert!(matches!(
            write_linked(dir.path(), "linked.json", b"{}", false),
            Err(Unlinked::Exists)
        ));
        write_renamed(dir.path(), "renamed.json", b"{}", true, &temps).unwrap();
        let mode = |name: &str| {
            let meta = std::fs::metadata(dir.path().join(name)).unwrap();
            meta.permissions().mode() & 0o777
        };
        assert_eq!(mode("linked.json"), mode("renamed.json"));
        for name in ["linked.json", "renamed.json"] {
            assert_eq!(std::fs::read(dir.path().join(name)).unwrap(), b"{}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn the_lock_is_exclusive_between_open_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        std::fs::write(&path, b"").unwrap();
        let first = File::open(&path).unwrap();
        let second = File::open(&path).unwrap();
        assert!(try_lock(&first).unwrap());
        assert!(!try_lock(&second).unwrap());
        drop(first);
        assert!(try_lock(&second).unwrap());
    }
}
