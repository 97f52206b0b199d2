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

/// Names in blocks, read in byte order: a store lists one name per run, the one structure of a
/// migration that grows with the store, so names are kept without a `String` each. A name that ends in a lowercase UUID and `.json`, as the SDK names runs and plans, is
/// kept as its head and the UUID's 16 bytes (21 for `prun-…json`), any other as its text, and
/// either with eight bytes of span. Blocks of a fixed size, rather than one growing buffer, are
/// never copied while the names are read.
#[derive(Debug, Clone, Default)]
pub struct Names {
    blocks: Vec<Vec<u8>>,
    /// Each name's block (high 23 bits), whether it is packed (next bit), start in the block
    /// (next 16 bits) and length there (low 24 bits), in byte order of the names once sorted.
    spans: Vec<u64>,
}

/// A name of [`Names`]: its text, borrowed, or rebuilt from its packed form.
#[derive(Clone, Copy)]
pub struct Name<'a>(Repr<'a>);

#[derive(Clone, Copy)]
enum Repr<'a> {
    Text(&'a str),
    Packed { text: [u8; Packed::TEXT], len: u8 },
}

impl Name<'_> {
    /// The name's text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Text(text) => text,
            Repr::Packed { .. } => std::str::from_utf8(self.as_bytes())
                .expect("a packed name is a UTF-8 head and ASCII"),
        }
    }

    /// The name's text as bytes, without checking again that a rebuilt name is UTF-8: names
    /// are compared with the runs a journal names once or twice a line.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Text(text) => text.as_bytes(),
            Repr::Packed { text, len } => &text[..usize::from(*len)],
        }
    }
}

impl std::ops::Deref for Name<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Name<'_> {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for Name<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq for Name<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Name<'_> {}

impl PartialEq<str> for Name<'_> {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for Name<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

/// The packed form of a name `<head><uuid>.json`: the head's text, then the UUID's 16 bytes.
/// The hexadecimal digits of a lowercase UUID sort as the values they stand for and its
/// hyphens stand at fixed places, so two names of one head sort as their 16 bytes do.
struct Packed;

impl Packed {
    /// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.json`.
    const TAIL: usize = 36 + ".json".len();
    /// The longest head packed: longer ones are kept as text.
    const HEAD: usize = 39;
    /// The longest text of a packed name.
    const TEXT: usize = Self::HEAD + Self::TAIL;

    /// The head and the UUID of `name`, if it has that form: a hyphenated UUID in lowercase
    /// (uppercase digits would not sort as their values).
    fn split(name: &str) -> Option<(&str, [u8; 16])> {
        let at = name.len().checked_sub(Self::TAIL)?;
        let (head, tail) = name.split_at_checked(at)?;
        let (uuid, json) = tail.as_bytes().split_at(36);
        if head.len() > Self::HEAD || json != b".json" || uuid.iter().any(u8::is_ascii_uppercase) {
            return None;
        }
        // 36 bytes parse only as the hyphenated 8-4-4-4-12 form.
        let uuid = uuid::Uuid::try_parse_ascii(uuid).ok()?;
        Some((head, uuid.into_bytes()))
    }

    /// The text of the name packed as `bytes`.
    fn unpack(bytes: &[u8]) -> Name<'static> {
        let (head, uuid) = bytes.split_at(bytes.len() - 16);
        let mut text = [0u8; Self::TEXT];
        text[..head.len()].copy_from_slice(head);
        let tail = &mut text[head.len()..head.len() + Self::TAIL];
        tail[..36].copy_from_slice(&Self::uuid_text(uuid));
        tail[36..].copy_from_slice(b".json");
        let len = u8::try_from(head.len() + Self::TAIL).expect("a packed name is short");
        Name(Repr::Packed { text, len })
    }

    /// Whether the name packed as `bytes` is `text`, without rebuilding it whole.
    fn is(bytes: &[u8], text: &str) -> bool {
        let (head, uuid) = bytes.split_at(bytes.len() - 16);
        text.as_bytes()
            .strip_prefix(head)
            .and_then(|rest| rest.strip_suffix(b".json"))
            == Some(&Self::uuid_text(uuid)[..])
    }

    /// A packed UUID's 16 bytes as the lowercase hyphenated text a name holds.
    fn uuid_text(uuid: &[u8]) -> [u8; 36] {
        let mut text = [0u8; 36];
        uuid::Uuid::from_slice(uuid)
            .expect("16 bytes")
            .hyphenated()
            .encode_lower(&mut text);
        text
    }
}

/// A name, and the bytes [`Names`] keeps it as: its head and UUID when [`Packed::split`] takes
/// it, else its text. Names are pushed and looked up through it, so both keep them alike.
struct Kept<'q> {
    text: &'q str,
    /// The head and UUID of a name [`Packed::split`] takes, and their length.
    packed: Option<([u8; Packed::HEAD + 16], usize)>,
}

impl<'q> Kept<'q> {
    fn new(text: &'q str) -> Self {
        let packed = Packed::split(text).map(|(head, uuid)| {
            let mut bytes = [0u8; Packed::HEAD + 16];
            bytes[..head.len()].copy_from_slice(head.as_bytes());
            bytes[head.len()..head.len() + 16].copy_from_slice(&uuid);
            (bytes, head.len() + 16)
        });
        Kept { text, packed }
    }

    /// The bytes the name is kept as, and whether they are packed.
    fn bytes(&self) -> (&[u8], bool) {
        match &self.packed {
            Some((bytes, len)) => (&bytes[..*len], true),
            None => (self.text.as_bytes(), false),
        }
    }
}

impl Names {
    const BLOCK: usize = 1 << 16;
    const LENGTH_BITS: u32 = 24;
    const START_BITS: u32 = 16;
    const PACKED: u64 = 1 << (Self::START_BITS + Self::LENGTH_BITS);
    const BLOCK_SHIFT: u32 = Self::START_BITS + Self::LENGTH_BITS + 1;

    /// Adds `name`; [`Names::sort`] puts the names in order.
    pub fn push(&mut self, name: &str) {
        let name = Kept::new(name);
        let (kept, packed) = name.bytes();
        let len = kept.len();
        let fits = self
            .blocks
            .last()
            .is_some_and(|block| block.len() < Self::BLOCK && block.len() + len <= Self::BLOCK);
        if !fits {
            // A name longer than a block has a block of its own.
            self.blocks.push(Vec::with_capacity(len.max(Self::BLOCK)));
        }
        let block = self.blocks.len() - 1;
        let bytes = &mut self.blocks[block];
        let start = bytes.len();
        bytes.extend_from_slice(kept);
        assert!(
            block < 1 << (64 - Self::BLOCK_SHIFT)
                && start < 1 << Self::START_BITS
                && len < 1 << Self::LENGTH_BITS,
            "{block} blocks of names, one of {len} bytes"
        );
        self.spans.push(
            (block as u64) << Self::BLOCK_SHIFT
                | if packed { Self::PACKED } else { 0 }
                | (start as u64) << Self::LENGTH_BITS
                | len as u64,
        );
    }

    /// Puts the names in byte order. Each is sorted with the first 16 bytes of its text, which
    /// decide almost every comparison of a store's names alone (a run's head and a dozen digits
    /// of its UUID); only names that share them are compared whole.
    pub fn sort(&mut self) {
        let blocks = &self.blocks;
        let mut keyed: Vec<(u128, u64)> = self
            .spans
            .iter()
            .map(|&span| (Self::text_start(blocks, span), span))
            .collect();
        keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| Self::compare(blocks, a.1, b.1)));
        for (slot, (_, span)) in self.spans.iter_mut().zip(keyed) {
            *slot = span;
        }
        self.spans.shrink_to_fit();
    }

    /// The first 16 bytes of the text of the name `span`, zero-padded, as a number that orders
    /// as they do: no name holds a NUL, so a shorter name sorts before the longer ones it starts.
    fn text_start(blocks: &[Vec<u8>], span: u64) -> u128 {
        let name = Self::name(blocks, span);
        let text = name.as_bytes();
        let mut start = [0u8; 16];
        let n = text.len().min(16);
        start[..n].copy_from_slice(&text[..n]);
        u128::from_be_bytes(start)
    }

    /// The bytes a name is kept as, and whether they are packed.
    fn bytes(blocks: &[Vec<u8>], span: u64) -> (&[u8], bool) {
        let block = (span >> Self::BLOCK_SHIFT) as usize;
        let start = ((span >> Self::LENGTH_BITS) & ((1 << Self::START_BITS) - 1)) as usize;
        let len = (span & ((1 << Self::LENGTH_BITS) - 1)) as usize;
        (&blocks[block][start..start + len], span & Self::PACKED != 0)
    }

    fn name(blocks: &[Vec<u8>], span: u64) -> Name<'_> {
        match Self::bytes(blocks, span) {
            (bytes, true) => Packed::unpack(bytes),
            (bytes, false) => Name(Repr::Text(
                std::str::from_utf8(bytes).expect("names are pushed as text"),
            )),
        }
    }

    /// Orders the names `a` and `b` by their text.
    fn compare(blocks: &[Vec<u8>], a: u64, b: u64) -> std::cmp::Ordering {
        Self::order(Self::bytes(blocks, a), Self::bytes(blocks, b), || {
            Self::name(blocks, a)
                .as_str()
                .cmp(Self::name(blocks, b).as_str())
        })
    }

    /// Orders the name `span` against `query` by their text.
    fn compare_to(blocks: &[Vec<u8>], span: u64, query: &Kept<'_>) -> std::cmp::Ordering {
        Self::order(Self::bytes(blocks, span), query.bytes(), || {
            Self::name(blocks, span).as_str().cmp(query.text)
        })
    }

    /// Orders two names by their text, given as the bytes each is kept as and whether those are
    /// packed. The kept bytes decide unless a packed name's head begins as the other name does,
    /// or both heads are equal; only then is `texts` asked to compare the rebuilt texts.
    fn order(
        (x, x_packed): (&[u8], bool),
        (y, y_packed): (&[u8], bool),
        texts: impl FnOnce() -> std::cmp::Ordering,
    ) -> std::cmp::Ordering {
        // Two texts, or two packed names of one length (heads of one length: the first byte
        // where they differ lies in the heads, which are text, or in the UUIDs, which sort as
        // their text), compare as their bytes.
        if x_packed == y_packed && (!x_packed || x.len() == y.len()) {
            return x.cmp(y);
        }
        let x_head = if x_packed { &x[..x.len() - 16] } else { x };
        let y_head = if y_packed { &y[..y.len() - 16] } else { y };
        if x_packed && y_packed && x_head == y_head {
            return x[x_head.len()..].cmp(&y[y_head.len()..]);
        }
        let n = x_head.len().min(y_head.len());
        match x_head[..n].cmp(&y_head[..n]) {
            std::cmp::Ordering::Equal => texts(),
            decided => decided,
        }
    }

    /// How many names.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The name at `at`, in byte order once sorted.
    pub fn get(&self, at: usize) -> Name<'_> {
        Self::name(&self.blocks, self.spans[at])
    }

    /// Whether the name at `at` is `text`; a packed name is compared without rebuilding its text.
    pub fn is(&self, at: usize, text: &str) -> bool {
        match Self::bytes(&self.blocks, self.spans[at]) {
            (bytes, false) => bytes == text.as_bytes(),
            (bytes, true) => Packed::is(bytes, text),
        }
    }

    /// The names, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Name<'_>> + '_ {
        self.spans
            .iter()
            .map(|span| Self::name(&self.blocks, *span))
    }

    /// The UUID of a packed name whose head is a run prefix, whose run key is that UUID's text
    /// (a number that orders as the text does).
    fn run_uuid(&self, at: usize) -> Option<u128> {
        let (bytes, packed) = Self::bytes(&self.blocks, self.spans[at]);
        let (head, uuid) = bytes.split_at(bytes.len().checked_sub(16).filter(|_| packed)?);
        RUN_PREFIXES
            .iter()
            .any(|prefix| prefix.as_bytes() == head)
            .then(|| u128::from_be_bytes(uuid.try_into().expect("16 bytes")))
    }

    /// The place of `name`, found by binary search: the names must be sorted.
    pub fn position(&self, name: &str) -> Option<usize> {
        let query = Kept::new(name);
        self.spans
            .binary_search_by(|span| Self::compare_to(&self.blocks, *span, &query))
            .ok()
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
        // Each run with its key's UUID where its name is packed (taken once: the sort compares
        // numbers), else compared by its key's text.
        let mut by_key: Vec<(Option<u128>, usize)> = (0..sorted_runs.len())
            .filter_map(|i| match sorted_runs.run_uuid(i) {
                Some(uuid) => Some((Some(uuid), i)),
                None => run_key(&sorted_runs.get(i)).map(|_| (None, i)),
            })
            .collect();
        let order = |a: &(Option<u128>, usize), b: &(Option<u128>, usize)| match (a.0, b.0) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => run_key(&sorted_runs.get(a.1)).cmp(&run_key(&sorted_runs.get(b.1))),
        };
        // Stable: runs of one key stay in their order, the winner first.
        by_key.sort_by(order);
        let mut losers = Vec::new();
        for group in by_key.chunk_by(|a, b| order(a, b).is_eq()) {
            losers.extend(group[1..].iter().map(|&(_, loser)| (loser, group[0].1)));
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
        let order: Vec<String> = names.iter().map(|name| name.to_string()).collect();
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
        assert!(names
            .iter()
            .map(|name| name.to_string())
            .eq(given.iter().cloned()));
        assert_eq!(
            names.position(&long).map(|at| names.get(at).to_string()),
            Some(long.clone())
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

    /// A UUID's text: lowercase, unless `upper`.
    fn uuid_text(bytes: &[u8; 16], upper: bool) -> String {
        let text = planrun_v2::strategies::uuid_text(u128::from_be_bytes(*bytes));
        if upper {
            text.to_uppercase()
        } else {
            text
        }
    }

    #[test]
    fn a_run_named_by_a_lowercase_uuid_takes_its_head_and_16_bytes() {
        let uuid = uuid_text(&[0x9a; 16], false);
        let names: Names = [
            format!("prun-{uuid}.json"),
            format!("{uuid}.json"),
            format!("prun-{}.json", uuid.to_uppercase()),
            format!("prun-{uuid}.jsonx"),
            format!("{}-{uuid}.json", "h".repeat(Packed::HEAD - 1)),
            format!("{}-{uuid}.json", "h".repeat(Packed::HEAD)),
        ]
        .into_iter()
        .collect();
        let mut kept: Vec<(usize, bool)> = names
            .spans
            .iter()
            .map(|&span| {
                let (bytes, packed) = Names::bytes(&names.blocks, span);
                (bytes.len(), packed)
            })
            .collect();
        kept.sort_unstable();
        // No head, `prun-`, a head of 39 bytes packed; uppercase, another suffix and a head of
        // 40 bytes kept as text.
        assert_eq!(
            kept,
            [
                (16, true),
                (21, true),
                (46, false),
                (47, false),
                (55, true),
                (81, false)
            ]
        );
    }

    proptest::proptest! {
        #[test]
        fn packed_names_sort_find_and_conflict_as_their_text(
            picks in proptest::collection::vec(
                (
                    0..7usize,
                    proptest::array::uniform16(proptest::sample::select(vec![
                        0x00u8, 0x09, 0x0a, 0x90, 0x9a, 0xa9, 0xff,
                    ])),
                    0..5usize,
                ),
                0..120,
            )
        ) {
            let heads = ["prun-", "pr-", "wkfl-", "plan-", "", "東京-", "prun-x"];
            let given: Vec<String> = picks
                .iter()
                .map(|(head, uuid, form)| {
                    let head = heads[*head];
                    match form {
                        0 | 1 => format!("{head}{}.json", uuid_text(uuid, false)),
                        2 => format!("{head}{}.json", uuid_text(uuid, true)),
                        3 => format!("{head}{}.json", uuid_text(uuid, false).replace('-', "_")),
                        _ => format!("{head}{}", uuid_text(uuid, false)),
                    }
                })
                .collect();
            let mut sorted = given.clone();
            sorted.sort();
            sorted.dedup();
            let names: Names = sorted.iter().rev().collect();
            proptest::prop_assert!(names.iter().map(|name| name.to_string()).eq(sorted.iter().cloned()));
            for (at, name) in sorted.iter().enumerate() {
                proptest::prop_assert_eq!(names.position(name), Some(at));
                let absent = format!("{}0.json", name.strip_suffix(".json").unwrap_or(name));
                proptest::prop_assert_eq!(names.position(&absent), None);
                // `is` answers as comparing the rebuilt text would.
                for (other_at, other) in sorted.iter().enumerate() {
                    proptest::prop_assert_eq!(names.is(at, other), at == other_at);
                }
                proptest::prop_assert!(!names.is(at, &absent));
                let upper = name.to_uppercase();
                proptest::prop_assert_eq!(names.is(at, &upper), *name == upper);
            }
            let conflicts = Conflicts::of(&names);
            let winners: Vec<_> = (0..names.len()).map(|i| conflicts.winner(i)).collect();
            proptest::prop_assert_eq!(winners, conflicts_by_map(&sorted));
        }

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
            proptest::prop_assert!(names.iter().map(|name| name.to_string()).eq(sorted.iter().cloned()));
            for name in &sorted {
                let at = names.position(name);
                proptest::prop_assert_eq!(at.map(|at| names.get(at).to_string()), Some(name.clone()));
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
