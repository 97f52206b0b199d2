//! Names in a store: which files are runs, the V2 id two run files collide on, the stable hash
//! of shard assignment, and the check that a name built from data stays a single path component.

/// The file-name prefixes of runs: W1 `wkfl-`, R0 `pr-`, R1 and later `prun-`.
pub const RUN_PREFIXES: [&str; 3] = ["wkfl-", "pr-", "prun-"];

/// Whether a file name is a run's (`wkfl-…json`, `pr-…json`, `prun-…json`).
pub fn is_run_file_name(name: &str) -> bool {
    name.ends_with(".json") && RUN_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The key two run files collide on: the part of the name after the run prefix. `wkfl-X.json`,
/// `pr-X.json` and `prun-X.json` all become the V2 run `prun-X`.
pub fn run_key(name: &str) -> Option<&str> {
    let stem = name.strip_suffix(".json")?;
    RUN_PREFIXES.iter().find_map(|p| stem.strip_prefix(p))
}

pub use planrun_wire::hash::fnv1a64;

/// Why a name built from data cannot name a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnsafeName {
    /// `""`.
    #[error("it is empty")]
    Empty,
    /// `.` or `..`.
    #[error("it is a relative directory reference")]
    Dots,
    /// `/`, `\` or NUL.
    #[error("it holds a path separator or NUL")]
    Separator,
}

/// Accepts only a single normal path component: not empty, not `.`/`..`, no `/`, `\` or NUL.
pub fn safe_component(name: &str) -> Result<(), UnsafeName> {
    if name.is_empty() {
        Err(UnsafeName::Empty)
    } else if name == "." || name == ".." {
        Err(UnsafeName::Dots)
    } else if name.contains(['/', '\\', '\0']) {
        Err(UnsafeName::Separator)
    } else {
        Ok(())
    }
}

/// Names in blocks of text, read in byte order: a store lists one name per run, and a `String`
/// each took 72 bytes for a 46-byte run name, where this takes the name and eight. Blocks of a
/// fixed size, rather than one growing buffer, are never copied while the names are read.
#[derive(Debug, Clone, Default)]
pub struct Names {
    blocks: Vec<String>,
    /// Each name's block (high 24 bits), start in it (next 16 bits) and length (low 24 bits), in
    /// byte order of the names once sorted.
    spans: Vec<u64>,
}

impl Names {
    const BLOCK: usize = 1 << 16;
    const LENGTH_BITS: u32 = 24;
    const START_BITS: u32 = 16;

    /// Adds `name`; [`Names::sort`] puts the names in order.
    pub fn push(&mut self, name: &str) {
        let fits = self.blocks.last().is_some_and(|block| {
            block.len() < Self::BLOCK && block.len() + name.len() <= Self::BLOCK
        });
        if !fits {
            // A name longer than a block has a block of its own.
            self.blocks
                .push(String::with_capacity(name.len().max(Self::BLOCK)));
        }
        let block = self.blocks.len() - 1;
        let text = &mut self.blocks[block];
        let start = text.len();
        text.push_str(name);
        assert!(
            block < 1 << (64 - Self::START_BITS - Self::LENGTH_BITS)
                && start < 1 << Self::START_BITS
                && name.len() < 1 << Self::LENGTH_BITS,
            "{block} blocks of names, one of {} bytes",
            name.len()
        );
        self.spans.push(
            (block as u64) << (Self::START_BITS + Self::LENGTH_BITS)
                | (start as u64) << Self::LENGTH_BITS
                | name.len() as u64,
        );
    }

    /// Puts the names in byte order.
    pub fn sort(&mut self) {
        let blocks = &self.blocks;
        self.spans
            .sort_unstable_by(|a, b| Self::slice(blocks, *a).cmp(Self::slice(blocks, *b)));
        self.spans.shrink_to_fit();
    }

    fn slice(blocks: &[String], span: u64) -> &str {
        let block = (span >> (Self::START_BITS + Self::LENGTH_BITS)) as usize;
        let start = ((span >> Self::LENGTH_BITS) & ((1 << Self::START_BITS) - 1)) as usize;
        let len = (span & ((1 << Self::LENGTH_BITS) - 1)) as usize;
        &blocks[block][start..start + len]
    }

    /// How many names.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The names, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.spans
            .iter()
            .map(|span| Self::slice(&self.blocks, *span))
    }

    /// The place of `name`, found by binary search: the names must be sorted.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.spans
            .binary_search_by(|span| Self::slice(&self.blocks, *span).cmp(name))
            .ok()
    }
}

impl std::ops::Index<usize> for Names {
    type Output = str;

    fn index(&self, at: usize) -> &str {
        Self::slice(&self.blocks, self.spans[at])
    }
}

impl PartialEq for Names {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for Names {}

impl<S: AsRef<str>> FromIterator<S> for Names {
    /// The names, sorted.
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut names = Names::default();
        for name in iter {
            names.push(name.as_ref());
        }
        names.sort();
        names
    }
}

/// The runs of a store that lose to an earlier one: two runs conflict when they map to the same
/// V2 id (`wkfl-X.json` and `prun-X.json`), and the name that sorts first wins. Few stores have
/// any, so only the losers are held.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Conflicts {
    /// (loser, winner), places in the sorted runs, by loser.
    losers: Vec<(usize, usize)>,
}

impl Conflicts {
    /// The conflicts among `sorted_runs`.
    pub fn of(sorted_runs: &Names) -> Self {
        let mut by_key: Vec<usize> = (0..sorted_runs.len())
            .filter(|&i| run_key(&sorted_runs[i]).is_some())
            .collect();
        // Stable: runs of one key stay in their order, the winner first.
        by_key.sort_by(|&a, &b| run_key(&sorted_runs[a]).cmp(&run_key(&sorted_runs[b])));
        let mut losers = Vec::new();
        for group in by_key.chunk_by(|&a, &b| run_key(&sorted_runs[a]) == run_key(&sorted_runs[b]))
        {
            losers.extend(group[1..].iter().map(|&loser| (loser, group[0])));
        }
        losers.sort_unstable();
        Conflicts { losers }
    }

    /// The earlier run the run at `place` loses to, if any.
    pub fn winner(&self, place: usize) -> Option<usize> {
        let at = self
            .losers
            .binary_search_by_key(&place, |&(loser, _)| loser)
            .ok()?;
        Some(self.losers[at].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_single_normal_components_are_safe() {
        for ok in ["local", "user-123", "$big_report", "a.b", "...", "ünïcode"] {
            assert_eq!(safe_component(ok), Ok(()), "{ok}");
        }
        assert_eq!(safe_component(""), Err(UnsafeName::Empty));
        assert_eq!(safe_component("."), Err(UnsafeName::Dots));
        assert_eq!(safe_component(".."), Err(UnsafeName::Dots));
        for bad in ["../../etc/passwd", "a/b", "a\\b", "a\0b", "/abs"] {
            assert_eq!(safe_component(bad), Err(UnsafeName::Separator), "{bad:?}");
        }
    }

    #[test]
    fn run_names_map_to_one_key_and_the_first_name_wins() {
        assert!(is_run_file_name("wkfl-1.json"));
        assert!(is_run_file_name("pr-1.json"));
        assert!(!is_run_file_name("plan-1.json"));
        assert!(!is_run_file_name("prun-1.txt"));
        assert_eq!(run_key("wkfl-abc.json"), Some("abc"));
        assert_eq!(run_key("pr-abc.json"), Some("abc"));
        assert_eq!(run_key("prun-abc.json"), Some("abc"));
        let names: Names = ["wkfl-a.json", "prun-b.json", "pr-a.json", "prun-a.json"]
            .into_iter()
            .collect();
        let order: Vec<&str> = names.iter().collect();
        assert_eq!(
            order,
            ["pr-a.json", "prun-a.json", "prun-b.json", "wkfl-a.json"]
        );
        let conflicts = Conflicts::of(&names);
        let winners: Vec<_> = (0..names.len()).map(|i| conflicts.winner(i)).collect();
        assert_eq!(winners, vec![None, Some(0), None, Some(0)]);
        assert_eq!(names.position("prun-b.json"), Some(2));
        assert_eq!(names.position("prun-c.json"), None);
    }

    #[test]
    fn names_longer_than_a_block_and_empty_names_keep_their_place() {
        let long = "x".repeat(Names::BLOCK + 7);
        let mut given: Vec<String> = (0..3000).map(|i| format!("prun-{i:05}.json")).collect();
        given.extend([long.clone(), String::new(), "y".repeat(Names::BLOCK)]);
        given.reverse();
        let names: Names = given.iter().collect();
        given.sort();
        assert!(names.iter().eq(given.iter().map(String::as_str)));
        assert_eq!(
            names.position(&long).map(|at| &names[at]),
            Some(long.as_str())
        );
        assert_eq!(names.position(""), Some(0));
    }

    /// The conflicts as first written: a map from each key to the first run that has it.
    fn conflicts_by_map(sorted_runs: &[String]) -> Vec<Option<usize>> {
        let mut first = std::collections::HashMap::new();
        sorted_runs
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let key = run_key(name)?;
                Some(*first.entry(key).or_insert(i)).filter(|&winner| winner != i)
            })
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn names_read_back_sorted_and_conflicts_agree_with_a_map(
            picks in proptest::collection::vec(
                (0..4usize, "[a-c]{0,3}", proptest::bool::ANY),
                0..200,
            )
        ) {
            let given: Vec<String> = picks
                .iter()
                .map(|(prefix, key, json)| {
                    let prefix = ["wkfl-", "pr-", "prun-", "plan-"][*prefix];
                    format!("{prefix}{key}{}", if *json { ".json" } else { "" })
                })
                .collect();
            let names: Names = given.iter().collect();
            let mut sorted = given.clone();
            sorted.sort();
            proptest::prop_assert!(names.iter().eq(sorted.iter().map(String::as_str)));
            for name in &sorted {
                let at = names.position(name);
                proptest::prop_assert_eq!(at.map(|at| &names[at]), Some(name.as_str()));
            }
            // A run file name is listed once, as a directory lists it.
            sorted.dedup();
            let runs: Names = sorted.iter().collect();
            let conflicts = Conflicts::of(&runs);
            let winners: Vec<_> = (0..runs.len()).map(|i| conflicts.winner(i)).collect();
            proptest::prop_assert_eq!(winners, conflicts_by_map(&sorted));
        }
    }
}
