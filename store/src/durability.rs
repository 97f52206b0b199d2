//! How much of what a migration writes is made durable, and when: passed from the options down
//! to the file writes.

/// When a migration makes what it wrote durable, that is, able to survive an OS crash or a power
/// loss (a killed process loses nothing journaled in any mode: the page cache outlives it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// `--no-sync`: never; outputs and journal are left to the kernel's write-back, as `cp -r`
    /// leaves its copy. After an OS crash a `completed` line may name an output that did not
    /// reach the disk; `--resume` re-hashes every such output and redoes the ones that differ.
    None,
    /// The default: one `syncfs(2)` per group of finished chunks before their `completed` lines
    /// are written, and one at the end.
    #[default]
    Chunks,
    /// `--durable`: each output fsynced before it gets its name, each directory written into
    /// fsynced before the chunk is journaled, and the journal after every append.
    Files,
}

impl Durability {
    /// The mode of the `--durable` and `--no-sync` flags; `None` when both are given, since one
    /// fsyncs every file and the other nothing.
    pub fn from_flags(durable: bool, no_sync: bool) -> Option<Self> {
        match (durable, no_sync) {
            (true, true) => None,
            (true, false) => Some(Durability::Files),
            (false, true) => Some(Durability::None),
            (false, false) => Some(Durability::Chunks),
        }
    }

    /// Whether every file is fsynced on its own (`--durable`).
    pub fn per_file(self) -> bool {
        self == Durability::Files
    }

    /// Every mode, by its name in the Python API (`durability=`).
    pub const ALL: [Durability; 3] = [Durability::Chunks, Durability::Files, Durability::None];

    /// The mode's name: `chunks` (the default), `files` (`--durable`), `none` (`--no-sync`).
    pub fn as_str(self) -> &'static str {
        match self {
            Durability::None => "none",
            Durability::Chunks => "chunks",
            Durability::Files => "files",
        }
    }

    /// The mode named `name` (see [`Durability::as_str`]).
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|mode| mode.as_str() == name)
    }
}
