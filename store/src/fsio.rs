//! The file-system primitives of the batch engine: directories whose files are opened
//! relative to them, atomic writes (unnamed or hidden temp files), group commit with one
//! `syncfs`, per-file `fsync` for `--durable`, the journal lock, and the removal of stale temp
//! files on resume.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

use rustix::fs::{self, AtFlags, FlockOperation, Mode, OFlags};
use rustix::io::Errno;

use crate::stamp::Stamp;
use crate::Durability;

/// A directory whose files are opened relative to it (`openat`): it is opened once, with
/// `O_PATH`, so for each of a store's files the kernel resolves only the file's own name rather
/// than every component of the directory's path again. Where it cannot be opened so, files are
/// opened by their whole path, as before.
#[derive(Debug)]
pub(crate) struct Dir {
    path: PathBuf,
    fd: OnceLock<Option<OwnedFd>>,
}

impl Dir {
    /// The directory at `path`; it is opened when a file in it is first wanted.
    pub(crate) fn new(path: impl Into<PathBuf>) -> Self {
        Dir {
            path: path.into(),
            fd: OnceLock::new(),
        }
    }

    /// The directory's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn fd(&self) -> Option<BorrowedFd<'_>> {
        let fd = self.fd.get_or_init(|| {
            fs::open(
                &self.path,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok()
        });
        fd.as_ref().map(AsFd::as_fd)
    }

    /// Opens `relative` (a path inside the directory) with `flags` and `mode`.
    fn open_at(&self, relative: &Path, flags: OFlags, mode: Mode) -> io::Result<File> {
        let Some(dir) = self.fd() else {
            return open_path(&self.path.join(relative), flags, mode);
        };
        Ok(File::from(fs::openat(
            dir,
            relative,
            flags | OFlags::CLOEXEC,
            mode,
        )?))
    }

    /// Reads the regular file `relative` as [`read_nofollow`] does.
    pub(crate) fn read_nofollow(&self, relative: &Path) -> io::Result<Vec<u8>> {
        read_whole(&self.open_at(relative, READ_NOFOLLOW, Mode::empty())?).map(|(bytes, _)| bytes)
    }

    /// [`Dir::read_nofollow`], with the file's stamp from before the read; an error that
    /// [`changed_while_read`] recognises when the file changed during the read.
    pub(crate) fn read_stamped(&self, relative: &Path) -> io::Result<(Vec<u8>, Stamp)> {
        read_whole(&self.open_at(relative, READ_NOFOLLOW, Mode::empty())?)
    }

    /// Reads the start of the file `relative` into `buf`, with one `read(2)`, opened as
    /// [`read_nofollow`] opens files: the number of bytes read, at most `buf.len()`.
    pub(crate) fn read_start_nofollow(&self, relative: &Path, buf: &mut [u8]) -> io::Result<usize> {
        self.open_at(relative, READ_NOFOLLOW, Mode::empty())?
            .read(buf)
    }

    /// The stamp of `relative` as it is now, without following a symlink at its last
    /// component; `None` when there is no such file. Looked up relative to the directory
    /// (`fstatat`), as files are opened: a catch-up stats every input and output of a store,
    /// and a lookup of the whole path each time cost more than the rest of its work.
    pub(crate) fn stamp(&self, relative: &Path) -> io::Result<Option<Stamp>> {
        let found = match self.fd() {
            Some(dir) => fs::statat(dir, relative, AtFlags::SYMLINK_NOFOLLOW)
                .map(|stat| Stamp::of_stat(&stat))
                .map_err(io::Error::from),
            None => std::fs::symlink_metadata(self.path.join(relative)).map(|m| Stamp::of(&m)),
        };
        match found {
            Ok(stamp) => Ok(Some(stamp)),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err),
        }
    }
}

/// How a store's files are opened to be read: a symlink at the last component is refused
/// (`ELOOP`), and a FIFO cannot block the read.
const READ_NOFOLLOW: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK);

/// Reads a regular file without following a symlink at its last component (`ELOOP` if it is
/// one) and without blocking on a FIFO.
pub fn read_nofollow(path: &Path) -> io::Result<Vec<u8>> {
    read_whole(&open_path(path, READ_NOFOLLOW, Mode::empty())?).map(|(bytes, _)| bytes)
}

/// Why a read was not used: the file's stamp differed after the read from before it.
#[derive(Debug)]
struct ChangedWhileRead;

impl std::fmt::Display for ChangedWhileRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the file changed while it was read")
    }
}

impl std::error::Error for ChangedWhileRead {}

/// Whether `err` says a file changed while it was read.
pub(crate) fn changed_while_read(err: &io::Error) -> bool {
    err.get_ref()
        .is_some_and(<dyn std::error::Error + Send + Sync>::is::<ChangedWhileRead>)
}

/// Opens `path` with `open(2)`'s `flags` and `mode`.
fn open_path(path: &Path, flags: OFlags, mode: Mode) -> io::Result<File> {
    Ok(File::from(fs::open(path, flags | OFlags::CLOEXEC, mode)?))
}

/// The whole content of `file`, which must be a regular file, with its stamp from before the
/// read; a [`ChangedWhileRead`] error when its stamp after the read differs, or its size is not
/// what was read (a writer truncated or extended it meanwhile).
fn read_whole(file: &File) -> io::Result<(Vec<u8>, Stamp)> {
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    // Sized by the one fstat above (File's own read_to_end would stat and seek again) and read
    // through `Take`, whose read_to_end is Read's default one and which, like File, fills spare
    // capacity without zeroing it first (a reader with only `read` gets it zeroed). The extra
    // byte lets the second read see the end; a file that grew meanwhile is still read whole.
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0) + 1);
    file.take(u64::MAX).read_to_end(&mut bytes)?;
    let before = Stamp::of(&metadata);
    let after = Stamp::of(&file.metadata()?);
    if after != before || bytes.len() as u64 != after.len {
        return Err(io::Error::other(ChangedWhileRead));
    }
    Ok((bytes, before))
}

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

/// Writes `bytes` to `relative` in `dir` atomically: a reader sees the old file or the whole
/// new one, never a part. The file is written unnamed (`O_TMPFILE`) and linked under its name
/// when complete: one directory update instead of a create and a rename, and nothing left
/// behind by a crash. Where that is not possible (a file system without `O_TMPFILE`, no
/// `/proc`, or a file already at `relative`), it goes through a hidden temp file beside it,
/// renamed over it. With [`Durability::Files`], the file is fsynced before it gets its name
/// (the caller fsyncs its directory).
pub(crate) fn write_atomic(
    dir: &Dir,
    relative: &Path,
    bytes: &[u8],
    durability: Durability,
    temps: &TempNamer,
) -> io::Result<()> {
    let durable = durability.per_file();
    static NO_TMPFILE: AtomicBool = AtomicBool::new(false);
    if !NO_TMPFILE.load(Ordering::Relaxed) {
        match write_linked(dir, relative, bytes, durable) {
            Ok(()) => return Ok(()),
            Err(Unlinked::Exists) => {}
            Err(Unlinked::Unsupported) => NO_TMPFILE.store(true, Ordering::Relaxed),
            Err(Unlinked::Io(err)) => return Err(err),
        }
    }
    let target = dir.path().join(relative);
    let parent = target.parent().unwrap_or(dir.path());
    write_renamed(&target, parent, bytes, durable, temps)
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

fn write_linked(dir: &Dir, relative: &Path, bytes: &[u8], durable: bool) -> Result<(), Unlinked> {
    let parent = match relative.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    // A kernel without O_TMPFILE opens the directory itself (EISDIR); a file system without it
    // says EOPNOTSUPP.
    let mut file = dir
        .open_at(parent, OFlags::WRONLY | OFlags::TMPFILE, Mode::from(0o666))
        .map_err(|err| match Errno::from_io_error(&err) {
            Some(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL) => Unlinked::Unsupported,
            _ => Unlinked::Io(err),
        })?;
    file.write_all(bytes).map_err(Unlinked::Io)?;
    if durable {
        file.sync_all().map_err(Unlinked::Io)?;
    }
    let whole;
    let (to_dir, to) = if let Some(fd) = dir.fd() {
        (fd, relative)
    } else {
        whole = dir.path().join(relative);
        (fs::CWD, whole.as_path())
    };
    // No /proc (ENOENT) or a policy against linking through it (EPERM): use the other way.
    link_unnamed(&file, to_dir, to).map_err(|errno| match errno {
        Errno::EXIST => Unlinked::Exists,
        Errno::NOENT | Errno::PERM | Errno::OPNOTSUPP => Unlinked::Unsupported,
        _ => Unlinked::Io(errno.into()),
    })
}

/// Gives the unnamed `file` the name `to` (relative to `to_dir`). The descriptor itself is
/// linked where the kernel allows it (Linux 6.10 and later for the process that opened it, or
/// with `CAP_DAC_READ_SEARCH`), which spares the walk through `/proc/self/fd`; elsewhere the
/// file is linked through that path.
fn link_unnamed(file: &File, to_dir: BorrowedFd<'_>, to: &Path) -> Result<(), Errno> {
    static NO_EMPTY_PATH: AtomicBool = AtomicBool::new(false);
    if !NO_EMPTY_PATH.load(Ordering::Relaxed) {
        match link_descriptor(file, to_dir, to) {
            Err(Errno::NOENT | Errno::PERM | Errno::INVAL) => {}
            linked => return linked,
        }
    }
    let linked = link_through_proc(file, to_dir, to);
    if linked.is_ok() {
        // The /proc path could be linked where the descriptor could not: this kernel does not
        // allow the latter, so it is not asked again.
        NO_EMPTY_PATH.store(true, Ordering::Relaxed);
    }
    linked
}

/// `linkat(file, "", to_dir, to, AT_EMPTY_PATH)`.
fn link_descriptor(file: &File, to_dir: BorrowedFd<'_>, to: &Path) -> Result<(), Errno> {
    fs::linkat(file, c"", to_dir, to, AtFlags::EMPTY_PATH)
}

/// `linkat` of `/proc/self/fd/<file>`, following that link to the file.
fn link_through_proc(file: &File, to_dir: BorrowedFd<'_>, to: &Path) -> Result<(), Errno> {
    let from = format!("/proc/self/fd/{}", file.as_raw_fd());
    fs::linkat(fs::CWD, from.as_str(), to_dir, to, AtFlags::SYMLINK_FOLLOW)
}

/// The portable way: a new hidden temp file in `dir`, the directory of `target` (so the rename
/// stays on one file system), renamed over `target`.
fn write_renamed(
    target: &Path,
    dir: &Path,
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
        std::fs::rename(&temp, target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// One `syncfs(2)` on the file system that holds `dir`: every dirty page and inode of that file
/// system reaches the disk (the group commit of a chunk).
pub(crate) fn syncfs(dir: &File) -> io::Result<()> {
    Ok(fs::syncfs(dir)?)
}

/// `fsync` of a directory, so the renames and creations in it are durable.
pub(crate) fn fsync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Takes an exclusive, non-blocking `flock` on `file`; `false` when another process holds it.
/// The kernel releases it when the process ends, SIGKILL included.
pub(crate) fn try_lock(file: &File) -> io::Result<bool> {
    match fs::flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(Errno::WOULDBLOCK) => Ok(false),
        Err(errno) => Err(errno.into()),
    }
}

/// The kind of a directory entry, as [`each_entry`] gives it.
pub(crate) use rustix::fs::FileType;

/// Calls `each` with the name and kind of every entry of the directory `dir` but `.` and
/// `..`, in the order the file system gives them. The entries are read with `getdents64` into
/// one buffer, where `std::fs::read_dir` allocates twice an entry: a store's directory holds an
/// entry per run, and every pass lists it. An entry that vanishes before its kind is known (on
/// a file system that does not say it while listing) is passed over, as if listed later.
pub(crate) fn each_entry(
    dir: BorrowedFd<'_>,
    mut each: impl FnMut(&std::ffi::CStr, FileType) -> io::Result<()>,
) -> io::Result<()> {
    let mut buf = Vec::with_capacity(1 << 16);
    let mut entries = fs::RawDir::new(dir, buf.spare_capacity_mut());
    while let Some(entry) = entries.next() {
        let entry = entry?;
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        let kind = match entry.file_type() {
            FileType::Unknown => match fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) => FileType::from_raw_mode(stat.st_mode),
                Err(Errno::NOENT) => continue,
                Err(errno) => return Err(errno.into()),
            },
            kind => kind,
        };
        each(name, kind)?;
    }
    Ok(())
}

/// Opens the directory `name` in `dir` (or the path `name` when `dir` is [`fs::CWD`]) to be
/// listed, without following a symlink.
pub(crate) fn open_dir_at(
    dir: BorrowedFd<'_>,
    name: impl rustix::path::Arg,
) -> io::Result<OwnedFd> {
    Ok(fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Removes the temp files whose name starts with `prefix` from `dst` and every directory below
/// it (agent-memory directories, `.planrun/` and its residues); returns how many it removed.
pub(crate) fn remove_temps(dst: &Path, prefix: &str) -> io::Result<usize> {
    remove_temps_in(open_dir_at(fs::CWD, dst)?.as_fd(), prefix.as_bytes())
}

fn remove_temps_in(dir: BorrowedFd<'_>, prefix: &[u8]) -> io::Result<usize> {
    let mut removed = 0;
    each_entry(dir, |name, kind| {
        match kind {
            FileType::RegularFile if name.to_bytes().starts_with(prefix) => {
                fs::unlinkat(dir, name, AtFlags::empty())?;
                removed += 1;
            }
            // A directory removed while DST is walked holds nothing.
            FileType::Directory => match open_dir_at(dir, name) {
                Ok(sub) => removed += remove_temps_in(sub.as_fd(), prefix)?,
                Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                Err(err) => return Err(err),
            },
            _ => {}
        }
        Ok(())
    })?;
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_writes_leave_only_the_final_file_and_temps_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let temps = TempNamer::new("0-of-2");
        let out = Dir::new(dir.path());
        write_atomic(
            &out,
            Path::new("a.json"),
            b"one",
            Durability::Chunks,
            &temps,
        )
        .unwrap();
        write_atomic(&out, Path::new("a.json"), b"two", Durability::Files, &temps).unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.json")]);
        assert_eq!(std::fs::read(dir.path().join("a.json")).unwrap(), b"two");

        std::fs::create_dir(dir.path().join("sub")).unwrap();
        write_atomic(
            &out,
            Path::new("sub/b.json"),
            b"three",
            Durability::Chunks,
            &temps,
        )
        .unwrap();
        assert_eq!(
            out.read_nofollow(Path::new("sub/b.json")).unwrap(),
            b"three"
        );
        std::fs::write(dir.path().join(".tmp-planrun-0-of-2-1-7"), b"x").unwrap();
        std::fs::write(dir.path().join("sub/.tmp-planrun-0-of-2-9-0"), b"x").unwrap();
        std::fs::write(dir.path().join("sub/.tmp-planrun-1-of-2-9-0"), b"x").unwrap();
        // A residue's temp lies two levels down (`.planrun/residue/`).
        std::fs::create_dir_all(dir.path().join(".planrun/residue")).unwrap();
        std::fs::write(
            dir.path().join(".planrun/residue/.tmp-planrun-0-of-2-3-1"),
            b"x",
        )
        .unwrap();
        assert_eq!(
            remove_temps(dir.path(), &shard_temp_prefix("0-of-2")).unwrap(),
            3
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
        let out = Dir::new(dir.path());
        match write_linked(&out, Path::new("linked.json"), b"{}", false) {
            Ok(()) => {}
            Err(Unlinked::Unsupported) => {
                eprintln!("no O_TMPFILE here: only the rename way is used");
                return;
            }
            Err(Unlinked::Exists | Unlinked::Io(_)) => panic!("writing an unnamed file failed"),
        }
        assert!(matches!(
            write_linked(&out, Path::new("linked.json"), b"{}", false),
            Err(Unlinked::Exists)
        ));
        write_renamed(
            &dir.path().join("renamed.json"),
            dir.path(),
            b"{}",
            true,
            &temps,
        )
        .unwrap();
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
    fn both_ways_of_linking_an_unnamed_file_name_it() {
        let dir = tempfile::tempdir().unwrap();
        let out = Dir::new(dir.path());
        let fd = out.fd().expect("a directory opens with O_PATH");
        type Link = fn(&File, BorrowedFd<'_>, &Path) -> Result<(), Errno>;
        let ways: [(&str, Link); 2] = [
            ("descriptor.json", link_descriptor),
            ("proc.json", link_through_proc),
        ];
        for (name, link) in ways {
            let mut file = out
                .open_at(
                    Path::new("."),
                    OFlags::WRONLY | OFlags::TMPFILE,
                    Mode::from(0o666),
                )
                .unwrap();
            file.write_all(name.as_bytes()).unwrap();
            let to = Path::new(name);
            if let Err(errno) = link(&file, fd, to) {
                // A kernel before 6.10 refuses the descriptor way without CAP_DAC_READ_SEARCH;
                // a sandbox may hide /proc. The writer then uses the other way.
                eprintln!("{name}: {errno}");
                continue;
            }
            assert_eq!(
                std::fs::read(dir.path().join(name)).unwrap(),
                name.as_bytes()
            );
            assert_eq!(
                link(&file, fd, to),
                Err(Errno::EXIST),
                "a second link to {name}"
            );
        }
    }

    #[test]
    fn a_directory_that_cannot_be_opened_is_read_by_whole_paths() {
        let dir = tempfile::tempdir().unwrap();
        let missing = Dir::new(dir.path().join("later"));
        assert_eq!(
            missing
                .read_nofollow(Path::new("a.json"))
                .unwrap_err()
                .kind(),
            io::ErrorKind::NotFound
        );
        assert!(missing.fd().is_none());
        std::fs::create_dir(dir.path().join("later")).unwrap();
        std::fs::write(dir.path().join("later/a.json"), b"a").unwrap();
        // Opened once, not again: the whole path is used from then on.
        assert_eq!(missing.read_nofollow(Path::new("a.json")).unwrap(), b"a");
        let temps = TempNamer::new("all");
        write_atomic(
            &missing,
            Path::new("b.json"),
            b"b",
            Durability::Chunks,
            &temps,
        )
        .unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("later/b.json")).unwrap(),
            b"b"
        );

        std::os::unix::fs::symlink("a.json", dir.path().join("later/link.json")).unwrap();
        let opened = Dir::new(dir.path().join("later"));
        for out in [&missing, &opened] {
            let err = out.read_nofollow(Path::new("link.json")).unwrap_err();
            assert_eq!(
                Errno::from_io_error(&err),
                Some(Errno::LOOP),
                "symlinks are not followed"
            );
        }
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
