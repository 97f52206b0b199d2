//! What identifies one version of a file, so that a later pass over a live store can tell
//! whether a run's inputs changed since it was converted, and whether its outputs in DST are
//! still the ones written, with a `stat` instead of a read.
//!
//! A stamp is taken with `fstat` on the open file before it is read, and again after: a file
//! whose stamp differs between the two was written while it was read (the SDK saves with a plain
//! `open("w")`, so a reader can see it truncated), and the read is not used. Equal stamps prove
//! an unchanged file only when the file is not *racily clean* (git's term): a write within the
//! file system's timestamp granularity of the moment the stamp was taken can leave every field
//! equal. So a read whose file was racily clean also records the hash of the bytes read
//! ([`Seen`]), and every later pass that finds the same stamp compares contents as well.

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// How close to the moment a stamp was taken a file's own timestamps may be before an equal
/// stamp no longer proves the file unchanged, on a file system with sub-second timestamps:
/// ext4, XFS, Btrfs and tmpfs set them from the kernel's coarse clock, which ticks every 1 to
/// 10 ms, so a tenth of a second leaves a wide margin.
const RACY_WINDOW_NS: i64 = 100_000_000;

/// The same on a file system whose timestamps have whole seconds only (both times of the stamp
/// a whole second): FAT's have two.
const RACY_WINDOW_COARSE_NS: i64 = 2_000_000_000;

/// A file's identity when it was read: size, modification and change times (nanoseconds since
/// the epoch) and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Stamp {
    /// Size in bytes.
    pub len: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime: i64,
    /// Change time (any write or rename touches it), nanoseconds since the epoch.
    pub ctime: i64,
    /// Inode number.
    pub ino: u64,
}

impl Stamp {
    /// The stamp of a file's metadata.
    pub fn of(meta: &Metadata) -> Stamp {
        Stamp {
            len: meta.len(),
            mtime: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            ctime: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
            ino: meta.ino(),
        }
    }

    /// The stamp of what `stat(2)` returned.
    pub(crate) fn of_stat(stat: &rustix::fs::Stat) -> Stamp {
        Stamp {
            len: u64::try_from(stat.st_size).unwrap_or(0),
            mtime: stat.st_mtime * 1_000_000_000 + stat.st_mtime_nsec as i64,
            ctime: stat.st_ctime * 1_000_000_000 + stat.st_ctime_nsec as i64,
            ino: stat.st_ino,
        }
    }

    /// Whether a file whose stamp is still this one may nevertheless have changed since `at`,
    /// the moment (ns since the epoch) the stamp was taken: its times are within the file
    /// system's timestamp granularity of `at`.
    pub fn racy(&self, at: i64) -> bool {
        let coarse = self.mtime % 1_000_000_000 == 0 && self.ctime % 1_000_000_000 == 0;
        let window = if coarse {
            RACY_WINDOW_COARSE_NS
        } else {
            RACY_WINDOW_NS
        };
        self.mtime.max(self.ctime) >= at.saturating_sub(window)
    }
}

/// Now, in nanoseconds since the epoch (the clock file times are set from).
pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// The hash that identifies a file's content in the journal: XXH3-64 in hex, fast enough to
/// hash every output twice (when written and when verified).
pub fn content_hash(bytes: &[u8]) -> String {
    planrun_wire::join::hex16(xxhash_rust::xxh3::xxh3_64(bytes))
}

/// One version of a file as a read saw it: its stamp from before the read and, when that stamp
/// was racily clean at the read, the [`content_hash`] of the bytes read, which a later pass
/// that finds the same stamp compares rather than trusting the stamp alone.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Seen {
    /// The stamp before the read, equal to the one after it (a read whose stamps differ is not
    /// used; a write within the same tick may leave them equal, which is what `hash` is for).
    pub stamp: Stamp,
    /// Only for a racily clean file: its content's hash.
    pub hash: Option<String>,
}

impl Seen {
    /// What a read that began at `at` (ns since the epoch; any earlier moment errs on the safe
    /// side) saw: `bytes`, from a file whose stamp was `stamp`. The hash is taken only when
    /// the stamp could not prove the bytes unchanged later.
    pub fn read(stamp: Stamp, bytes: &[u8], at: i64) -> Seen {
        Seen {
            stamp,
            hash: stamp.racy(at).then(|| content_hash(bytes)),
        }
    }
}

/// One input of a run's conversion, as the journal records it: a file of SRC by its path
/// relative to SRC, with its stamp when it was read, or none when it did not exist (a plan never
/// saved, an end user without a file), and its content's hash when that stamp was racily clean.
/// The run is converted again when any input's stamp differs on a later pass, or, for a hashed
/// input, its content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    /// Relative to SRC.
    pub path: String,
    /// When read; `None`: the file did not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp: Option<Stamp>,
    /// The [`Seen::hash`] of the read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
}

impl Input {
    /// The input `path`, as a read saw it (`None`: the file did not exist).
    pub fn seen(path: String, seen: Option<&Seen>) -> Input {
        Input {
            path,
            stamp: seen.map(|s| s.stamp),
            hash: seen.and_then(|s| s.hash.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_is_racy_only_within_the_window_of_its_moment() {
        let at = 1_700_000_000_123_456_789;
        let stamp = Stamp {
            len: 1,
            mtime: at - RACY_WINDOW_NS,
            ctime: at - 2 * RACY_WINDOW_NS,
            ino: 1,
        };
        assert!(stamp.racy(at));
        assert!(!stamp.racy(at + 1));
        // Whole seconds: a file system that keeps no more, whose window is wider.
        let coarse = Stamp {
            mtime: 1_700_000_000_000_000_000,
            ctime: 1_700_000_000_000_000_000,
            ..stamp
        };
        assert!(coarse.racy(1_700_000_001_900_000_000));
        assert!(!coarse.racy(1_700_000_002_000_000_001));
    }

    #[test]
    fn a_read_keeps_the_content_hash_only_of_a_racily_clean_file() {
        let at = 1_700_000_000_123_456_789;
        let stamp = Stamp {
            len: 2,
            mtime: at - RACY_WINDOW_NS,
            ctime: at - RACY_WINDOW_NS,
            ino: 1,
        };
        let racy = Seen::read(stamp, b"{}", at);
        assert_eq!(racy.hash.as_deref(), Some(content_hash(b"{}").as_str()));
        assert_eq!(Seen::read(stamp, b"{}", at + 1).hash, None);
        let input = Input::seen("a.json".to_owned(), Some(&racy));
        assert_eq!((input.stamp, input.hash), (Some(stamp), racy.hash));
        let missing = Input::seen("b.json".to_owned(), None);
        assert_eq!((missing.stamp, missing.hash), (None, None));
    }
}
