//! The store abstraction: where the documents of a legacy store come from and where converted
//! ones go, so that another backend (an object store, a table of JSON rows) is one new module
//! beside [`crate::disk`], not a change to the conversion or the batch engine.

use std::io;
use std::path::{Path, PathBuf};

use crate::names::Names;
use crate::outcome::Failure;
use crate::stamp::Seen;

/// A document a conversion reads, named as the SDK's `DiskFileStorage` names it. Every name in
/// it was checked to be a single normal path component ([`crate::safe_component`]) before it
/// reaches a store, so a backend may use the names as file or object names as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doc<'a> {
    /// A run, by its entry name in the listing (`prun-….json`).
    Run(&'a str),
    /// A plan, by its id (`plan-…`).
    Plan(&'a str),
    /// An end user, by its `external_id`.
    EndUser(&'a str),
    /// The residue planrun keeps of a run of a HEAD store (`--to r6`), by the run's id.
    Residue(&'a str),
    /// A stored output: the value of an agent-memory output of a run.
    AgentMemory {
        /// The run the output belongs to (`prun-…`).
        run_id: &'a str,
        /// The output's name.
        output_name: &'a str,
    },
}

impl Doc<'_> {
    /// The document's path relative to the store's root in the `DiskFileStorage` layout:
    /// `<name>.json` at the top, `<run id>/<output name>.json` for agent memory.
    pub fn relative(&self) -> PathBuf {
        match self {
            Doc::Run(name) => PathBuf::from(name),
            Doc::Plan(id) | Doc::EndUser(id) => PathBuf::from(planrun_wire::join!(id, ".json")),
            Doc::Residue(id) => PathBuf::from(planrun_converter::residue::residue_path(id)),
            Doc::AgentMemory {
                run_id,
                output_name,
            } => Path::new(run_id).join(planrun_wire::join!(output_name, ".json")),
        }
    }
}

/// The entries of a store, sorted by name (byte order), split into what a migration reads: run
/// entries and everything else it does not convert.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// Names of run entries (`wkfl-`/`pr-`/`prun-` … `.json`), whatever their type: a symlink or
    /// directory of that name is a run that will be rejected, never skipped.
    pub runs: Names,
    /// Entries a migration does not read by itself, with why: symlinks, special files and
    /// non-UTF-8 names. Plans, end users and agent-memory directories are not listed.
    pub ignored: Vec<(PathBuf, String)>,
    /// The store's other documents, by name: top-level `.json` regular files that are not runs
    /// (plans, end users). A migration to V2 reads them through the runs that refer to them; one
    /// to a HEAD store (`--to r6`) also carries over those no run refers to.
    pub documents: Names,
}

/// A store of legacy documents that conversions read and batch migrations list.
pub trait Store: Sync {
    /// Every run entry (names only: nothing is read), and the entries that will not be read.
    fn list(&self) -> io::Result<Listing>;

    /// The bytes of a document, `Ok(None)` when the store has none of that name. A link is never
    /// followed: it is a `rejected` failure, as is a document that cannot be read.
    fn read(&self, doc: Doc<'_>) -> Result<Option<Vec<u8>>, Failure>;

    /// How failures and reports name the document at `relative` ([`Doc::relative`]): for a
    /// directory, its path.
    fn locate(&self, relative: &Path) -> PathBuf;

    /// [`Store::read`], with the file's version as the read saw it when the store has files.
    fn read_stamped(&self, doc: Doc<'_>) -> Result<Option<Stamped>, Failure> {
        self.read(doc).map(|found| found.map(|bytes| (bytes, None)))
    }

    /// Whether a plan [`Store::read`] does not find was never saved (so a run's plan is
    /// rebuilt from the run), rather than never looked for (so the run is blocked on it). True
    /// for a store directory; false for a single run given without its plan or a store.
    fn holds_plans(&self) -> bool {
        true
    }
}

/// A document's bytes as read, with its file's version as the read saw it (`None` when the
/// store has no files).
pub type Stamped = (Vec<u8>, Option<Seen>);

/// A destination that converted documents are written to, each one atomically: it appears whole
/// under its name or not at all.
pub trait Sink: Sync {
    /// Writes `bytes` as `relative` (`<id>.json` or `<run id>/<output name>.json`), replacing
    /// any document of that name.
    fn write(&self, relative: &Path, bytes: &[u8]) -> io::Result<()>;
}
