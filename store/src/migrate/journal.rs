//! The journal: append-only JSON Lines in `DST/.planrun/journal[-i-of-n].jsonl`.
//!
//! The first line is the header (`event: header`): the journal format, the tool version, the
//! canonical SRC path, the shard and the config fingerprint; a resume must match all of them.
//! Each session (a start or a resume) adds a `session` line. Per run: `started` when its chunk
//! begins, then `completed` (with what the report needs: class, source version, V2 id, sizes, an
//! XXH3-64 hash of each output, the time taken and the loss-report totals) or `failed` (with the
//! failure). The last `completed`/`failed` line of a run is its state; a run with only `started`
//! was in flight when the process ended and is redone.
//!
//! A run's loss-report totals are named under `shared` by the keys of `entries` lines: the
//! totals of its config's entries, of its plan's, and of its own. Each distinct set of totals is
//! written once per session, before the first line that names it, instead of once per run: the
//! runs of one plan share its totals, and most runs of a store have the same own totals as some
//! earlier run. (Journals of earlier versions hold a run's own totals in its line's `entries`;
//! they are still read.)
//!
//! Lines are written whole, one `write(2)` per group; after a SIGKILL or a power loss the last
//! line may be torn. A reader stops at the first line that is not complete, valid JSON, and a
//! resume truncates the journal there (the runs behind it are redone).

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use planrun_converter::report::EntryKind;
use planrun_wire::text::plain_len;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::loss::SharedCounts;
use crate::stamp::{Input, Stamp};
use crate::{Class, Failure};

/// The `format` of a journal header.
pub const JOURNAL_FORMAT: &str = "planrun-journal/3";

/// What a journal line records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// The first line: what the journal is about.
    #[default]
    Header,
    /// A start or resume of the migration.
    Session,
    /// A run's chunk began.
    Started,
    /// A run's output is in place (and, by default, synced).
    Completed,
    /// A run was rejected or blocked.
    Failed,
    /// Loss-report entry totals that completed lines name by their key.
    Entries,
    /// A resume removed the outputs of a run that is gone from SRC.
    Removed,
    /// A resume kept an output that someone else changed in DST since it was written (the
    /// line repeats the run's `completed` line, so a later pass can judge it again).
    Conflict,
    /// With `--to r6`: the store's plans and end users written in HEAD's form, under `memory`.
    Copied,
}

impl Event {
    /// Every event a journal line can record.
    pub const ALL: [Event; 9] = [
        Event::Header,
        Event::Session,
        Event::Started,
        Event::Completed,
        Event::Failed,
        Event::Entries,
        Event::Removed,
        Event::Conflict,
        Event::Copied,
    ];

    /// Whether a line of this event settles a run (completed, failed, removed or conflict).
    pub fn is_final(self) -> bool {
        matches!(
            self,
            Event::Completed | Event::Failed | Event::Removed | Event::Conflict
        )
    }

    /// The event's name in a journal line.
    pub fn as_str(self) -> &'static str {
        match self {
            Event::Header => "header",
            Event::Session => "session",
            Event::Started => "started",
            Event::Completed => "completed",
            Event::Failed => "failed",
            Event::Entries => "entries",
            Event::Removed => "removed",
            Event::Conflict => "conflict",
            Event::Copied => "copied",
        }
    }
}

/// An agent-memory file copied for a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryRecord {
    /// `<prun-id>/<output_name>.json`, relative to DST.
    pub path: String,
    /// Its size.
    pub bytes: u64,
    /// XXH3-64 of its bytes, 16 hex digits.
    pub hash: String,
}

/// A failure as journaled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorRecord {
    /// The file at fault (or missing).
    pub file: String,
    /// JSON pointer into it, when known.
    pub pointer: Option<String>,
    /// 1-based line; 0 when unknown.
    pub line: usize,
    /// 1-based column; 0 when unknown.
    pub column: usize,
    /// The failure kind (`syntax`, `missing_plan`, `symlink`, …).
    pub kind: String,
    /// What is wrong.
    pub message: String,
}

impl From<&Failure> for ErrorRecord {
    fn from(f: &Failure) -> Self {
        ErrorRecord {
            file: f.file.to_string_lossy().into_owned(),
            pointer: f.pointer.clone(),
            line: f.line,
            column: f.column,
            kind: f.kind.as_str().to_owned(),
            message: f.message.clone(),
        }
    }
}

/// One journal line. A flat struct with optional fields (not a tagged enum: with serde_json's
/// `arbitrary_precision`, numbers inside internally tagged enums do not read back).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// What the line records.
    pub event: Event,
    /// Header: [`JOURNAL_FORMAT`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Header: the tool and its version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Header: the canonical SRC path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<String>,
    /// Header: `i/n`, or `all`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// Header: the config fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// Header: what DST becomes when it is not a V2 store (`r6`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Session: whether it resumed an earlier one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<bool>,
    /// Session: `false` under `--no-sync`, whose outputs an OS crash may lose while their
    /// stamps survive, so no later pass trusts an output by its stamp alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synced: Option<bool>,
    /// Run lines: the run's file name in SRC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// Completed/failed: the outcome class. Copied, as compaction writes it: `already_current`
    /// for the shared files V2 runs wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<Class>,
    /// Completed/failed: the source versions (`R4`, `R1–R2`, `V2`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Completed: the V2 run id (the output is `<id>.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Completed/failed: the run file's size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_in: Option<u64>,
    /// Completed: the output's size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_out: Option<u64>,
    /// Completed: XXH3-64 of the output, 16 hex digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// Completed/failed: microseconds spent on the run (conversion and writing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub micros: Option<u64>,
    /// Completed: the agent-memory files copied (and, with `--to r6`, the shared files and
    /// residue written). Copied: the plans and end users written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Vec<MemoryRecord>>,
    /// Entries: the counts the key names, `[kind, field, count]`. Completed, in journals of
    /// earlier versions: the run's own counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<(EntryKind, String, u64)>>,
    /// Completed: the keys of the `entries` lines whose counts make up the run's report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared: Option<Vec<String>>,
    /// Entries: the key completed lines name the counts by (16 hex digits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Failed: why. Conflict: the file someone else changed, as `file`, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorRecord>,
    /// Completed/failed: the files of SRC the conversion read, with their stamps (and the
    /// content hashes of racily clean ones), so that a later pass converts the run again when
    /// any of them changed. Copied: the SRC file of each document written, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Vec<Input>>,
    /// Completed/failed/copied: a moment just after the inputs were read (ns since the epoch). An
    /// input without a hash that is racily clean against it (see [`crate::stamp`]) was
    /// journaled by a planrun that kept no hashes, and counts as changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_at: Option<i64>,
    /// Completed: the run's own outputs with their stamps just after they were written, so a
    /// later pass that finds the same stamps need not read them again. Copied: each document's
    /// stamp in DST just after it was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Vec<Input>>,
    /// Not journaled: the counts `shared` names, for the writer to journal before the line the
    /// first time a session names them.
    #[serde(skip)]
    pub groups: Vec<Arc<SharedCounts>>,
}

impl Line {
    /// The `entries` line that defines `shared`'s key.
    pub fn defining(shared: &SharedCounts) -> Line {
        Line {
            event: Event::Entries,
            key: Some(shared.key().to_owned()),
            entries: Some(shared.counts().to_vec()),
            ..Line::default()
        }
    }

    /// The JSON Lines form (one line, `\n`-terminated).
    pub fn to_jsonl(&self) -> String {
        let mut text = Vec::new();
        self.write_jsonl(&mut text);
        String::from_utf8(text).expect("journal lines are UTF-8")
    }

    /// Appends [`Line::to_jsonl`] to `out`, without a string of its own.
    fn write_jsonl(&self, out: &mut Vec<u8>) {
        serde_json::to_writer(&mut *out, self).expect("journal lines are JSON");
        out.push(b'\n');
    }
}

/// The fields of a [`Line`] that say which run it settles, read without the rest.
#[derive(Debug, Deserialize)]
pub struct LineTag {
    /// What the line records.
    pub event: Event,
    /// Run lines: the run's file name in SRC.
    #[serde(default)]
    pub run: Option<String>,
    /// Session lines: see [`Line::synced`].
    #[serde(default)]
    pub synced: Option<bool>,
}

impl LineTag {
    /// Whether this line settles a run (completed or failed).
    pub fn is_final(&self) -> bool {
        self.event.is_final()
    }

    /// The tag of a line as [`Line::to_jsonl`] writes a run line, `{"event":"…","run":"…",`
    /// or a whole `started` line, taken from its first bytes without reading the rest; `None`
    /// when the line does not start so (a header, a session or entries line, a name with
    /// escapes), and it has to be read as JSON. (An entries line's tag is not taken from its
    /// first bytes: a `run` key could follow them.)
    fn from_prefix(line: &[u8]) -> Option<LineTag> {
        let (event, run, rest) = run_prefix(line)?;
        (rest.first() == Some(&b',') || rest == b"}\n").then(|| LineTag {
            event,
            run: Some(run.to_owned()),
            synced: None,
        })
    }
}

/// The event and run of a run line as [`Line::to_jsonl`] writes it, `{"event":"…","run":"…"`,
/// when the name needs no escape, with the bytes after the name's closing quote.
fn run_prefix(line: &[u8]) -> Option<(Event, &str, &[u8])> {
    let rest = line.strip_prefix(b"{\"event\":\"")?;
    let (event, rest) = [Event::Started, Event::Completed, Event::Failed]
        .into_iter()
        .find_map(|event| Some((event, rest.strip_prefix(event.as_str().as_bytes())?)))?;
    let rest = rest.strip_prefix(b"\",\"run\":\"")?;
    let end = plain_len(rest);
    if rest.get(end) != Some(&b'"') {
        return None;
    }
    let run = std::str::from_utf8(&rest[..end]).ok()?;
    Some((event, run, &rest[end + 1..]))
}

impl Line {
    /// A line exactly as [`Line::to_jsonl`] writes it, read field by field in the writer's
    /// order without the JSON reader, which cost the verify pass's one reading thread more than
    /// the rest of its work. `None` for any other bytes (a string with an escape, keys in
    /// another order, a number the writer would not write): those are read as JSON. It accepts
    /// only the bytes the writer writes for the line it returns, so its verdict is serde_json's.
    pub fn canonical(bytes: &[u8]) -> Option<Line> {
        let text = simdutf8::basic::from_utf8(bytes).ok()?;
        let mut at = Canonical(text.strip_prefix("{\"event\":")?);
        let event = at.word()?;
        let event = Event::ALL.into_iter().find(|e| e.as_str() == event)?;
        let mut line = Line {
            event,
            format: at.field("format", Canonical::text)?,
            tool: at.field("tool", Canonical::text)?,
            src: at.field("src", Canonical::text)?,
            shard: at.field("shard", Canonical::text)?,
            config: at.field("config", Canonical::text)?,
            target: at.field("target", Canonical::text)?,
            resume: at.field("resume", Canonical::boolean)?,
            synced: at.field("synced", Canonical::boolean)?,
            run: at.field("run", Canonical::text)?,
            ..Line::default()
        };
        line.class = at.field("class", |at| {
            let word = at.word()?;
            Class::ALL.into_iter().find(|c| c.as_str() == word)
        })?;
        line.version = at.field("version", Canonical::text)?;
        line.id = at.field("id", Canonical::text)?;
        line.bytes_in = at.field("bytes_in", Canonical::int)?;
        line.bytes_out = at.field("bytes_out", Canonical::int)?;
        line.hash = at.field("hash", Canonical::text)?;
        line.micros = at.field("micros", Canonical::int)?;
        line.memory = at.field("memory", |at| {
            at.list(|at| {
                at.tag("{\"path\":")?;
                let path = at.text()?;
                at.tag(",\"bytes\":")?;
                let bytes = at.int()?;
                at.tag(",\"hash\":")?;
                let hash = at.text()?;
                at.tag("}")?;
                Some(MemoryRecord { path, bytes, hash })
            })
        })?;
        line.entries = at.field("entries", |at| {
            at.list(|at| {
                at.tag("[")?;
                let kind = at.word()?;
                let kind = EntryKind::ALL.into_iter().find(|k| k.as_str() == kind)?;
                at.tag(",")?;
                let field = at.text()?;
                at.tag(",")?;
                let n = at.int()?;
                at.tag("]")?;
                Some((kind, field, n))
            })
        })?;
        line.shared = at.field("shared", |at| at.list(Canonical::text))?;
        line.key = at.field("key", Canonical::text)?;
        line.error = at.field("error", |at| {
            at.tag("{\"file\":")?;
            let file = at.text()?;
            at.tag(",\"pointer\":")?;
            let pointer = match at.tag("null") {
                Some(()) => None,
                None => Some(at.text()?),
            };
            at.tag(",\"line\":")?;
            let line = usize::try_from(at.int()?).ok()?;
            at.tag(",\"column\":")?;
            let column = usize::try_from(at.int()?).ok()?;
            at.tag(",\"kind\":")?;
            let kind = at.text()?;
            at.tag(",\"message\":")?;
            let message = at.text()?;
            at.tag("}")?;
            Some(ErrorRecord {
                file,
                pointer,
                line,
                column,
                kind,
                message,
            })
        })?;
        line.inputs = at.field("inputs", Canonical::inputs)?;
        line.read_at = at.field("read_at", Canonical::signed)?;
        line.outputs = at.field("outputs", Canonical::inputs)?;
        (at.0 == "}\n").then_some(line)
    }
}

/// The text of a journal line not read yet, read as [`Line::to_jsonl`] writes it. The line's
/// UTF-8 is checked once, in bulk; its strings are cut from it at their quotes.
struct Canonical<'a>(&'a str);

impl<'a> Canonical<'a> {
    /// Takes `text`, if it comes next.
    fn tag(&mut self, text: &str) -> Option<()> {
        self.0 = self.0.strip_prefix(text)?;
        Some(())
    }

    /// An optional field: `Some(None)` when `,"key":` does not come next, `None` when it does
    /// and `value` cannot read what follows.
    fn field<T>(
        &mut self,
        key: &str,
        value: impl FnOnce(&mut Self) -> Option<T>,
    ) -> Option<Option<T>> {
        let Some(rest) = self
            .0
            .strip_prefix(",\"")
            .and_then(|rest| rest.strip_prefix(key))
            .and_then(|rest| rest.strip_prefix("\":"))
        else {
            return Some(None);
        };
        self.0 = rest;
        value(self).map(Some)
    }

    /// A string that needs no escape, borrowed.
    fn word(&mut self) -> Option<&'a str> {
        let rest = self.0.strip_prefix('"')?;
        let end = plain_len(rest.as_bytes());
        if rest.as_bytes().get(end) != Some(&b'"') {
            return None;
        }
        self.0 = &rest[end + 1..];
        Some(&rest[..end])
    }

    /// A string that needs no escape.
    fn text(&mut self) -> Option<String> {
        self.word().map(str::to_owned)
    }

    /// An integer as `itoa` writes a `u64`: digits, no leading zero.
    fn int(&mut self) -> Option<u64> {
        let bytes = self.0.as_bytes();
        let (n, digits) = leading_digits(bytes);
        if digits == 0 || (digits > 1 && bytes[0] == b'0') {
            return None;
        }
        self.0 = &self.0[digits..];
        n
    }

    /// `true` or `false`.
    fn boolean(&mut self) -> Option<bool> {
        [true, false]
            .into_iter()
            .find(|&b| self.tag(if b { "true" } else { "false" }).is_some())
    }

    /// A list of files with their stamps, as serde writes `Vec<Input>`.
    fn inputs(&mut self) -> Option<Vec<Input>> {
        self.list(|at| {
            at.tag("{\"path\":")?;
            let path = at.text()?;
            let stamp = at.field("stamp", |at| {
                at.tag("{\"len\":")?;
                let len = at.int()?;
                at.tag(",\"mtime\":")?;
                let mtime = at.signed()?;
                at.tag(",\"ctime\":")?;
                let ctime = at.signed()?;
                at.tag(",\"ino\":")?;
                let ino = at.int()?;
                at.tag("}")?;
                Some(Stamp {
                    len,
                    mtime,
                    ctime,
                    ino,
                })
            })?;
            let hash = at.field("hash", Canonical::text)?;
            at.tag("}")?;
            Some(Input { path, stamp, hash })
        })
    }

    /// An integer as `itoa` writes an `i64`: an optional `-`, then [`Canonical::int`]'s digits.
    fn signed(&mut self) -> Option<i64> {
        let negative = self.tag("-").is_some();
        let n = self.int()?;
        if negative {
            // `-0` is not what the writer writes; i64::MIN's magnitude is one past i64::MAX.
            (n > 0).then(|| 0i64.checked_sub_unsigned(n))?
        } else {
            i64::try_from(n).ok()
        }
    }

    /// `[item,item,…]`.
    fn list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        self.tag("[")?;
        let mut items = Vec::new();
        if self.tag("]").is_some() {
            return Some(items);
        }
        loop {
            items.push(item(self)?);
            if self.tag("]").is_some() {
                return Some(items);
            }
            self.tag(",")?;
        }
    }
}

/// The ASCII digits `bytes` starts with: their value (`None` past `u64::MAX`) and how many.
/// Most journal numbers are nanosecond times of 19 digits, so up to 19 are found and read eight
/// bytes at a time (where eight more bytes can be read); longer ones one by one, with checks.
fn leading_digits(bytes: &[u8]) -> (Option<u64>, usize) {
    const POW10: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];
    let mut n = 0u64;
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let chunk = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        // A byte's high bit is set unless it is a digit; the lowest such byte is exact (a
        // carry only runs from a byte already marked into the ones after it).
        let offset = chunk ^ ZEROS;
        let not_digit =
            (offset.wrapping_add(0x7676_7676_7676_7676) | offset) & 0x8080_8080_8080_8080;
        let digits = (not_digit.trailing_zeros() / 8) as usize;
        // After 16 digits, 3 more fit in a `u64` whatever they are; a 20th may not.
        if at == 16 && digits > 3 {
            break;
        }
        if digits == 8 {
            n = n * 100_000_000 + eight_digits(chunk);
            at += 8;
            continue;
        }
        if digits > 0 {
            // The digits moved to the chunk's end, after zeros: the same value, read as eight.
            let padded = (chunk << (8 * (8 - digits))) | (ZEROS >> (8 * digits));
            n = n * POW10[digits] + eight_digits(padded);
        }
        return (Some(n), at + digits);
    }
    let mut value = Some(n);
    while let Some(digit) = bytes.get(at).filter(|b| b.is_ascii_digit()) {
        value = value.and_then(|n| n.checked_mul(10)?.checked_add(u64::from(digit - b'0')));
        at += 1;
    }
    (value, at)
}

/// Eight ASCII `0` digits in a word.
const ZEROS: u64 = 0x3030_3030_3030_3030;

/// The value of eight ASCII digits read as a little-endian word (the first digit in its lowest
/// byte), in three multiplications: digits combined in pairs, then fours, then eights.
fn eight_digits(chunk: u64) -> u64 {
    let v = chunk - ZEROS;
    let v = (v * 10 + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    let v = (v * 100 + (v >> 16)) & 0x0000_ffff_0000_ffff;
    (v * 10_000 + (v >> 32)) & 0xffff_ffff
}

/// Reads a journal line by line, stopping at the first torn or invalid line. Reads a file by
/// default; [`Reader::new`] reads any buffered source (the journal fuzzer reads bytes).
pub struct Reader<R = BufReader<File>> {
    inner: R,
    /// Bytes of complete, valid lines read so far.
    pub good_len: u64,
    /// Whether reading stopped at a torn or invalid line (rather than at the end).
    pub torn: bool,
    buf: Vec<u8>,
}

impl Reader {
    /// Opens a journal for reading (a fresh handle: the reader of the verify pass).
    pub fn open(path: &Path) -> io::Result<Self> {
        Ok(Reader::new(BufReader::with_capacity(
            1 << 16,
            File::open(path)?,
        )))
    }
}

impl Reader {
    /// Opens a journal for reading from byte `offset`, the end of a line read before.
    pub fn open_at(path: &Path, offset: u64) -> io::Result<Self> {
        use std::io::{Seek, SeekFrom};
        let mut file = File::open(path)?;
        file.seek(SeekFrom::Start(offset))?;
        let mut reader = Reader::new(BufReader::with_capacity(1 << 16, file));
        reader.good_len = offset;
        Ok(reader)
    }
}

impl Reader<BufReader<io::Take<File>>> {
    /// Opens a journal for reading from byte `start`, the end of a line read before (or 0), to
    /// byte `end`.
    pub fn open_between(path: &Path, start: u64, end: u64) -> io::Result<Self> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = File::open(path)?;
        file.seek(SeekFrom::Start(start))?;
        let stretch = file.take(end.saturating_sub(start));
        let mut reader = Reader::new(BufReader::with_capacity(1 << 16, stretch));
        reader.good_len = start;
        Ok(reader)
    }
}

impl<R: BufRead> Reader<R> {
    /// Reads the journal held by `inner`.
    pub fn new(inner: R) -> Self {
        Reader {
            inner,
            good_len: 0,
            torn: false,
            buf: Vec::new(),
        }
    }

    /// The next valid line, `None` at the end or at a torn line.
    pub fn next_line(&mut self) -> io::Result<Option<Line>> {
        self.next_with(read_line)
    }

    /// [`Reader::next_line`], but `Some(None)` for a `started` line as the writer writes it
    /// (`{"event":"started","run":"…"}`), whose bytes are checked and nothing more is built: a
    /// catch-up takes nothing from such a line that the tag pass did not.
    pub fn next_line_unless_started(&mut self) -> io::Result<Option<Option<Box<Line>>>> {
        self.next_with(|line| match run_prefix(line) {
            Some((Event::Started, _, b"}\n")) => Some(None),
            _ => read_line(line).map(|line| Some(Box::new(line))),
        })
    }

    /// The [`LineTag`] of the next line, read from its first bytes where it can be: unlike
    /// `next_as::<LineTag>()` this does not check that the rest of a run line is valid JSON, so a
    /// caller that needs the lines to be valid reads them again with [`Reader::next_line`]
    /// (and sees it stop at an invalid one).
    pub fn next_tag(&mut self) -> io::Result<Option<LineTag>> {
        self.next_with(read_tag)
    }

    /// Reads the next line as `T`, a [`Line`] or a cheaper view of some of its fields.
    pub fn next_as<T: DeserializeOwned>(&mut self) -> io::Result<Option<T>> {
        self.next_with(read)
    }

    /// The next line as `read` reads it; `None` at the end, or at a line it cannot read, where
    /// the reader stops for good (`torn`).
    fn next_with<T>(&mut self, read: impl FnOnce(&[u8]) -> Option<T>) -> io::Result<Option<T>> {
        if self.torn {
            return Ok(None);
        }
        // A line whole in the buffer is read where it lies; one that runs past the buffer's
        // end (or a torn tail) is copied out first.
        let buffered = self.inner.fill_buf()?;
        if let Some(end) = memchr::memchr(b'\n', buffered) {
            let line = whole_line(&buffered[..=end], read);
            self.inner.consume(end + 1);
            return Ok(self.took(line, end + 1));
        }
        self.buf.clear();
        let n = self.inner.read_until(b'\n', &mut self.buf)?;
        if n == 0 {
            return Ok(None);
        }
        let line = whole_line(&self.buf, read);
        Ok(self.took(line, n))
    }

    /// Counts a line of `len` bytes read, or stops for good at one that could not be read.
    fn took<T>(&mut self, line: Option<T>, len: usize) -> Option<T> {
        if line.is_some() {
            self.good_len += len as u64;
        } else {
            self.torn = true;
        }
        line
    }
}

/// The `line` as `read` reads it, when it is whole: one JSON object as `Line::to_jsonl` writes
/// it, ending in its line break. Anything else is invalid, the array form of a struct included:
/// serde would read `["header","x"]` as a Line with `format: "x"` but as a LineTag with
/// `run: "x"`.
fn whole_line<T>(line: &[u8], read: impl FnOnce(&[u8]) -> Option<T>) -> Option<T> {
    if line.last() != Some(&b'\n') || line.first() != Some(&b'{') {
        return None;
    }
    read(line)
}

/// The [`LineTag`] of one journal line's bytes (ending in its line break), as
/// [`Reader::next_tag`] reads it.
pub(super) fn tag_of(line: &[u8]) -> Option<LineTag> {
    whole_line(line, read_tag)
}

/// A whole journal line's [`LineTag`]: from its first bytes where it can be, else as JSON.
fn read_tag(line: &[u8]) -> Option<LineTag> {
    LineTag::from_prefix(line).or_else(|| read(line))
}

/// One journal line's bytes (ending in its line break) as [`Reader::next_line`] reads them.
pub(super) fn line_of(line: &[u8]) -> Option<Line> {
    whole_line(line, read_line)
}

/// A journal line's bytes read as a [`Line`]: by [`Line::canonical`], else as JSON.
fn read_line(bytes: &[u8]) -> Option<Line> {
    Line::canonical(bytes).or_else(|| read(bytes))
}

/// A line read as `T`, if it is one. Valid UTF-8 is checked once, in bulk, rather than string by
/// string; anything else is read as bytes, for the verdict serde_json gives them.
fn read<T: DeserializeOwned>(line: &[u8]) -> Option<T> {
    match simdutf8::basic::from_utf8(line) {
        Ok(text) => serde_json::from_str(text).ok(),
        Err(_) => serde_json::from_slice(line).ok(),
    }
}

/// The header line of a journal, if it has a valid one.
pub fn read_header(path: &Path) -> io::Result<Option<Line>> {
    let mut reader = Reader::open(path)?;
    Ok(reader.next_line()?.filter(|l| l.event == Event::Header))
}

/// A journal open for appending, locked against a second writer of the same shard.
#[derive(Debug)]
pub struct Writer {
    file: File,
    path: PathBuf,
    /// The keys of the `entries` lines this writer has written.
    defined: HashSet<String>,
}

/// Why a journal cannot be opened for writing.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Another process holds the lock.
    #[error("another planrun migrate is writing {} (its lock is held)", .0.display())]
    Locked(PathBuf),
    /// The file system said no.
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl Writer {
    /// Creates a new journal (it must not exist) and writes its header.
    pub fn create(path: &Path, header: &Line) -> Result<Self, OpenError> {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .open(path)?;
        let mut writer = Writer::locked(file, path)?;
        writer.append(std::slice::from_ref(header), false)?;
        Ok(writer)
    }

    /// Opens an existing journal to append to it, taking the lock. The caller reads it and cuts
    /// a torn tail off ([`Writer::cut_to`]) before appending, so new lines never follow a
    /// partial one.
    pub fn reopen(path: &Path) -> Result<Self, OpenError> {
        let file = OpenOptions::new().read(true).append(true).open(path)?;
        Writer::locked(file, path)
    }

    /// Cuts the journal after its first `good_len` bytes, where a [`Reader`] found a torn or
    /// invalid line, before anything is appended; whether there was anything after them.
    pub fn cut_to(&self, good_len: u64) -> io::Result<bool> {
        let cut = good_len < self.file.metadata()?.len();
        if cut {
            // O_APPEND: the next write goes to the new end.
            self.file.set_len(good_len)?;
        }
        Ok(cut)
    }

    fn locked(file: File, path: &Path) -> Result<Self, OpenError> {
        if !crate::fsio::try_lock(&file)? {
            return Err(OpenError::Locked(path.to_owned()));
        }
        // A pass that compacted the journal renamed a new file over it ([`Writer::replace`]):
        // the file opened before that is no longer the journal, and its lock says nothing.
        if !same_file(&file, path)? {
            return Err(OpenError::Locked(path.to_owned()));
        }
        Ok(Writer {
            file,
            path: path.to_owned(),
            defined: HashSet::new(),
        })
    }

    /// Appends lines with one `write(2)`, each after the `entries` lines of the counts it is the
    /// first of this writer's lines to name; with `sync`, then `fdatasync`s the
    /// journal.
    pub fn append(&mut self, lines: &[Line], sync: bool) -> io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let mut text = Vec::new();
        for line in lines {
            for shared in &line.groups {
                if !self.defined.contains(shared.key()) {
                    self.defined.insert(shared.key().to_owned());
                    Line::defining(shared).write_jsonl(&mut text);
                }
            }
            line.write_jsonl(&mut text);
        }
        self.file.write_all(&text)?;
        if sync {
            self.file.sync_data()?;
        }
        Ok(())
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Replaces the journal with what `write` writes: first into `temp`, which is locked,
    /// synced and then renamed over the journal (whose directory is synced), so a reader finds
    /// the old journal or the new one, whole, and no other pass can take the new one's lock.
    pub fn replace(
        &mut self,
        temp: &Path,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(temp)?;
        if !crate::fsio::try_lock(&file)? {
            return Err(io::Error::other(format!("{} is locked", temp.display())));
        }
        let mut out = io::BufWriter::with_capacity(1 << 16, &file);
        write(&mut out)?;
        out.flush()?;
        drop(out);
        file.sync_all()?;
        std::fs::rename(temp, &self.path)?;
        if let Some(dir) = self.path.parent() {
            crate::fsio::fsync_dir(dir)?;
        }
        self.file = file;
        Ok(())
    }
}

/// Whether `path` names the file `file` has open.
fn same_file(file: &File, path: &Path) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let (open, named) = (file.metadata()?, std::fs::metadata(path)?);
    Ok((open.dev(), open.ino()) == (named.dev(), named.ino()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z0-9._/-]{0,24}",
            proptest::collection::vec(any::<char>(), 0..12).prop_map(String::from_iter),
        ]
    }

    fn some<T: std::fmt::Debug>(
        value: impl Strategy<Value = T>,
    ) -> impl Strategy<Value = Option<T>> {
        proptest::option::of(value)
    }

    fn line() -> impl Strategy<Value = Line> {
        let event = proptest::sample::select(Event::ALL.to_vec());
        let class = proptest::sample::select(Class::ALL.to_vec());
        let kind = proptest::sample::select(EntryKind::ALL.to_vec());
        let memory = (text(), any::<u64>(), text()).prop_map(|(path, bytes, hash)| MemoryRecord {
            path,
            bytes,
            hash,
        });
        let error = (
            text(),
            some(text()),
            any::<usize>(),
            any::<usize>(),
            text(),
            text(),
        )
            .prop_map(|(file, pointer, line, column, kind, message)| ErrorRecord {
                file,
                pointer,
                line,
                column,
                kind,
                message,
            });
        let header = (
            event,
            some(text()),
            some(text()),
            some(text()),
            some(text()),
            some(text()),
            some(text()),
            some(any::<bool>()),
            some(any::<bool>()),
        );
        let run = (
            some(text()),
            some(class),
            some(text()),
            some(text()),
            some(any::<u64>()),
            some(any::<u64>()),
            some(text()),
            some(any::<u64>()),
        );
        let rest = (
            some(proptest::collection::vec(memory, 0..3)),
            some(proptest::collection::vec(
                (kind, text(), any::<u64>()),
                0..3,
            )),
            some(proptest::collection::vec(text(), 0..3)),
            some(text()),
            some(error),
            some(inputs()),
            some(any::<i64>()),
            some(inputs()),
        );
        (header, run, rest).prop_map(
            |(
                (event, format, tool, src, shard, config, target, resume, synced),
                (run, class, version, id, bytes_in, bytes_out, hash, micros),
                (memory, entries, shared, key, error, inputs, read_at, outputs),
            )| Line {
                event,
                format,
                tool,
                src,
                shard,
                config,
                target,
                resume,
                synced,
                run,
                class,
                version,
                id,
                bytes_in,
                bytes_out,
                hash,
                micros,
                memory,
                entries,
                shared,
                key,
                error,
                inputs,
                read_at,
                outputs,
                groups: Vec::new(),
            },
        )
    }

    /// Files with stamps, some without (a file that did not exist), some with a content hash
    /// (a racily clean file).
    fn inputs() -> impl Strategy<Value = Vec<Input>> {
        proptest::collection::vec(
            (
                text(),
                proptest::option::of((any::<u64>(), any::<i64>(), any::<i64>(), any::<u64>())),
                proptest::option::of(text()),
            )
                .prop_map(|(path, stamp, hash)| Input {
                    path,
                    stamp: stamp.map(|(len, mtime, ctime, ino)| Stamp {
                        len,
                        mtime,
                        ctime,
                        ino,
                    }),
                    hash,
                }),
            0..3,
        )
    }

    /// The numbers at the edges of the word-at-a-time reading: 16, 19 and 20 digits, the
    /// largest `u64` and one past it.
    #[test]
    fn leading_digits_at_the_edges_of_a_word_and_of_u64() {
        let cases: [(&str, Option<u64>, usize); 6] = [
            ("1234567890123456,\"x\":1", Some(1_234_567_890_123_456), 16),
            ("1796647498507557832}", Some(1_796_647_498_507_557_832), 19),
            (
                "1796647498507557832,\"outputs\":[]",
                Some(1_796_647_498_507_557_832),
                19,
            ),
            ("18446744073709551615,\"a\"", Some(u64::MAX), 20),
            ("18446744073709551616,\"a\"", None, 20),
            ("7", Some(7), 1),
        ];
        for (text, value, digits) in cases {
            assert_eq!(leading_digits(text.as_bytes()), (value, digits), "{text}");
        }
    }

    proptest! {
        /// The word-at-a-time reading of a number's digits agrees with reading them one by one,
        /// whatever follows them and however close the line's end is.
        #[test]
        fn leading_digits_read_as_one_by_one_does(
            digits in "[0-9]{0,24}",
            tail in proptest::collection::vec(any::<u8>(), 0..10),
        ) {
            let mut bytes = digits.into_bytes();
            bytes.extend(tail);
            let count = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            let value = bytes[..count].iter().try_fold(0u64, |n, &b| {
                n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
            });
            prop_assert_eq!(leading_digits(&bytes), (value, count));
        }
    }

    proptest! {
        #[test]
        fn a_line_the_writer_wrote_is_read_without_the_json_reader_unless_it_has_an_escape(
            line in line()
        ) {
            let jsonl = line.to_jsonl();
            let plain = !jsonl.contains('\\');
            prop_assert_eq!(Line::canonical(jsonl.as_bytes()), plain.then_some(line));
        }

        /// A line is read the same whether it lies whole in the reader's buffer or runs past
        /// its end (and is copied out), and a torn tail stops the reader at the same byte.
        #[test]
        fn lines_read_the_same_whatever_the_buffer_holds(
            lines in prop::collection::vec(line(), 1..6),
            capacity in 1usize..300,
            torn in 0usize..40,
        ) {
            let mut text: Vec<u8> = lines.iter().flat_map(|l| l.to_jsonl().into_bytes()).collect();
            let tail = lines[0].to_jsonl();
            text.extend_from_slice(&tail.as_bytes()[..torn.min(tail.len() - 1)]);
            let read_all = |mut reader: Reader<&mut dyn BufRead>| {
                let mut read = Vec::new();
                while let Some(line) = reader.next_line().unwrap() {
                    read.push(line);
                }
                (read, reader.good_len, reader.torn)
            };
            let whole = read_all(Reader::new(&mut &text[..]));
            let mut small = BufReader::with_capacity(capacity, &text[..]);
            prop_assert_eq!(read_all(Reader::new(&mut small)), whole.clone());
            prop_assert_eq!(whole.0, lines);
            prop_assert_eq!(whole.2, torn > 0);
        }
    }

    /// The reader without JSON takes only what serde_json takes, as the same line: every line
    /// here with one byte changed, taken out or put in, is read by both or only by serde_json.
    #[test]
    fn a_line_changed_by_a_byte_is_read_without_the_json_reader_only_as_serde_reads_it() {
        let lines = [
            Line {
                memory: Some(vec![MemoryRecord {
                    path: "prun-1/out.json".into(),
                    bytes: 10,
                    hash: "00ff".into(),
                }]),
                entries: Some(vec![(EntryKind::Dropped, "/a".into(), 20)]),
                shared: Some(vec!["k1".into(), "k2".into()]),
                bytes_in: Some(0),
                micros: Some(u64::MAX),
                class: Some(Class::ConvertedWithLoss),
                id: Some("prun-1".into()),
                ..run_line(Event::Completed, "pr-1.json")
            },
            Line {
                error: Some(ErrorRecord {
                    file: "pr-2.json".into(),
                    pointer: None,
                    line: 3,
                    column: 40,
                    kind: "syntax".into(),
                    message: "ü".into(),
                }),
                memory: Some(Vec::new()),
                class: Some(Class::Rejected),
                ..run_line(Event::Failed, "pr-2.json")
            },
            Line {
                resume: Some(true),
                ..Line::default()
            },
            Line {
                format: Some(JOURNAL_FORMAT.into()),
                shard: Some("1/2".into()),
                ..Line::default()
            },
            run_line(Event::Started, "prun-3.json"),
        ];
        let bytes = [
            b'0', b'1', b'9', b'-', b'.', b'e', b'"', b'\\', b',', b':', b'{', b'}', b'[', b']',
            b' ', b'\n', b'a', b'n', 0x7f, 0xc3, 0xff,
        ];
        let mut tried = 0;
        for line in lines {
            let jsonl = line.to_jsonl().into_bytes();
            assert_eq!(Line::canonical(&jsonl).as_ref(), Some(&line));
            let mut changed = Vec::new();
            for at in 0..jsonl.len() {
                let mut cut = jsonl.clone();
                cut.remove(at);
                changed.push(cut);
                for &b in &bytes {
                    let mut other = jsonl.clone();
                    other[at] = b;
                    changed.push(other);
                    let mut longer = jsonl.clone();
                    longer.insert(at, b);
                    changed.push(longer);
                }
            }
            for bytes in changed {
                // A catch-up's reading that skips `started` lines stops where a whole reading
                // does, and skips only what that reading reads as a plain `started` line.
                let whole = Reader::new(&bytes[..]).next_line().unwrap();
                match Reader::new(&bytes[..]).next_line_unless_started().unwrap() {
                    Some(None) => {
                        let started = whole.expect("a started line");
                        assert_eq!(started.event, Event::Started);
                        let first = bytes.split_inclusive(|&b| b == b'\n').next();
                        assert_eq!(Some(started.to_jsonl().as_bytes()), first);
                    }
                    Some(Some(line)) => assert_eq!(whole, Some(*line)),
                    None => assert_eq!(whole, None),
                }
                if let Some(fast) = Line::canonical(&bytes) {
                    tried += 1;
                    let text = String::from_utf8_lossy(&bytes);
                    assert_eq!(read::<Line>(&bytes).as_ref(), Some(&fast), "{text}");
                    assert_eq!(fast.to_jsonl().as_bytes(), &bytes[..], "{text}");
                }
            }
        }
        // Digits changed in numbers and letters in names still read: the check saw some.
        assert!(tried > 100, "{tried}");
    }

    fn run_line(event: Event, run: &str) -> Line {
        Line {
            event,
            run: Some(run.into()),
            ..Line::default()
        }
    }

    #[test]
    fn a_line_that_is_not_utf8_gets_the_verdict_serde_json_gives_its_bytes() {
        // serde_json skips an unknown key's string without checking its UTF-8, so a line whose
        // only bad bytes are there reads; a bad byte in a known field's string does not.
        let ignored = b"{\"event\":\"session\",\"resume\":true,\"x\":\"\xff\"}\n";
        let known = b"{\"event\":\"started\",\"run\":\"\xff.json\"}\n";
        for (bytes, reads) in [(&ignored[..], true), (&known[..], false)] {
            assert_eq!(
                serde_json::from_slice::<Line>(&bytes[..bytes.len() - 1]).is_ok(),
                reads
            );
            let mut reader = Reader::new(bytes);
            assert_eq!(reader.next_line().unwrap().is_some(), reads);
            assert_eq!(reader.torn, !reads);
        }
    }

    #[test]
    fn lines_round_trip_and_a_torn_tail_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let header = Line {
            event: Event::Header,
            src: Some("/src".into()),
            ..Line::default()
        };
        let mut writer = Writer::create(&path, &header).unwrap();
        let done = Line {
            class: Some(Class::ConvertedWithLoss),
            bytes_out: Some(u64::MAX),
            entries: Some(vec![(EntryKind::Dropped, "/run/x".into(), 2)]),
            ..run_line(Event::Completed, "prun-a.json")
        };
        writer
            .append(
                &[run_line(Event::Started, "prun-a.json"), done.clone()],
                true,
            )
            .unwrap();
        assert!(matches!(Writer::reopen(&path), Err(OpenError::Locked(_))));
        drop(writer);
        let whole = std::fs::metadata(&path).unwrap().len();
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(br#"{"event":"started","run":"prun-b"#)
            .unwrap();
        drop(file);

        let mut reader = Reader::open(&path).unwrap();
        let mut lines = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            lines.push(line);
        }
        assert!(reader.torn);
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[2], done);
        assert_eq!(read_header(&path).unwrap(), Some(header));

        let mut writer = Writer::reopen(&path).unwrap();
        assert!(writer.cut_to(reader.good_len).unwrap());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), whole);
        writer
            .append(&[run_line(Event::Failed, "prun-b.json")], false)
            .unwrap();
        let mut reader = Reader::open(&path).unwrap();
        let mut n = 0;
        while reader.next_line().unwrap().is_some() {
            n += 1;
        }
        assert_eq!((n, reader.torn), (4, false));
    }

    /// A journal replaced by a compacted one is locked before it takes the journal's name, and a
    /// file opened before the replacement is no longer taken for the journal once its lock is
    /// free: a pass that opened it then would append to a file nobody reads.
    #[test]
    fn a_replaced_journal_is_locked_and_the_file_it_replaced_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let header = Line::default();
        let mut writer = Writer::create(&path, &header).unwrap();
        let before = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .unwrap();
        let temp = dir.path().join(".tmp-journal.jsonl");
        writer
            .replace(&temp, |out| out.write_all(header.to_jsonl().as_bytes()))
            .unwrap();
        assert!(!temp.exists());
        assert!(matches!(Writer::reopen(&path), Err(OpenError::Locked(_))));
        drop(writer);
        assert!(matches!(
            Writer::locked(before, &path),
            Err(OpenError::Locked(_))
        ));
        assert!(Writer::reopen(&path).is_ok());
    }

    /// Regression of a fuzzer finding: serde reads a struct from a JSON array too, field by
    /// field, so `["header","x"]` read as a Line with `format: "x"` but as a LineTag (the view a
    /// resume reads first) with `run: "x"`. A line that is not an object is invalid in both.
    #[test]
    fn a_tag_read_from_the_first_bytes_is_the_tag_serde_reads() {
        let names = [
            "prun-a.json",
            "",
            "ünïcode.json",
            "with \"quote\".json",
            "back\\slash.json",
            "tab\t.json",
        ];
        let mut text = Line {
            event: Event::Header,
            src: Some("/src".into()),
            ..Line::default()
        }
        .to_jsonl();
        text.push_str(
            &Line {
                event: Event::Session,
                resume: Some(false),
                ..Line::default()
            }
            .to_jsonl(),
        );
        for event in [Event::Started, Event::Completed, Event::Failed] {
            for name in names {
                let line = Line {
                    class: Some(Class::Converted),
                    entries: Some(vec![(EntryKind::Moved, "/run/x".into(), 1)]),
                    ..run_line(event, name)
                };
                let jsonl = line.to_jsonl();
                let fast = LineTag::from_prefix(jsonl.as_bytes());
                let plain = !name.contains(['"', '\\', '\t']);
                assert_eq!(fast.is_some(), plain, "{jsonl}");
                if let Some(fast) = fast {
                    assert_eq!((fast.event, fast.run.as_deref()), (event, Some(name)));
                }
                text.push_str(&jsonl);
            }
        }
        for name in names {
            let jsonl = run_line(Event::Started, name).to_jsonl();
            let fast = LineTag::from_prefix(jsonl.as_bytes());
            let plain = !name.contains(['"', '\\', '\t']);
            assert_eq!(fast.is_some(), plain, "{jsonl}");
            let line = Line::canonical(jsonl.as_bytes());
            assert_eq!(line.is_some(), plain, "{jsonl}");
            if let Some(line) = line {
                assert_eq!(Some(line), read::<Line>(jsonl.as_bytes()));
            }
            text.push_str(&jsonl);
        }
        let entries = Line::defining(&SharedCounts::new(vec![(
            EntryKind::Moved,
            "/run/x".into(),
            1,
        )]))
        .to_jsonl();
        text.push_str(&entries);
        // Valid JSON, though no writer makes it: its tag is the run it names.
        text.push_str("{\"event\":\"entries\",\"run\":\"x\"}\n");
        text.push_str("{\"event\":\"started\",\"run\":\"x\",}\n");
        let mut reader = Reader::new(text.as_bytes());
        let mut tags = Vec::new();
        while let Some(tag) = reader.next_tag().unwrap() {
            tags.push((tag.event, tag.run));
        }
        assert!(!reader.torn);
        let mut reader = Reader::new(text.as_bytes());
        let mut serde_tags = Vec::new();
        while let Some(tag) = reader.next_as::<LineTag>().unwrap() {
            serde_tags.push((tag.event, tag.run));
        }
        assert!(reader.torn);
        // The invalid last line passes the prefix: only a full read stops there.
        assert_eq!(tags.len(), 4 * names.len() + 5);
        assert_eq!(tags[..tags.len() - 1], serde_tags[..]);
    }

    #[test]
    fn a_line_that_is_not_an_object_is_invalid_in_every_view() {
        let text = b"[\"header\",\"x\"]\n";
        let mut lines = Reader::new(&text[..]);
        assert_eq!(lines.next_line().unwrap(), None);
        assert!(lines.torn && lines.good_len == 0);
        let mut tags = Reader::new(&text[..]);
        assert!(tags.next_as::<LineTag>().unwrap().is_none());
        assert!(tags.torn && tags.good_len == 0);
        let mut tags = Reader::new(&text[..]);
        assert!(tags.next_tag().unwrap().is_none());
        assert!(tags.torn && tags.good_len == 0);
    }

    #[test]
    fn shared_counts_are_defined_once_per_writer_before_the_first_line_naming_them() {
        use crate::loss::SharedEntries;
        use planrun_converter::report::LossReport;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let mut plan = LossReport::default();
        plan.push(
            EntryKind::Moved,
            Some("/plan/steps/0/condition".into()),
            None,
            "why",
            None,
        );
        let plan = Arc::clone(SharedEntries::new(plan).counts());
        let naming = |run: &str| Line {
            shared: Some(vec![plan.key().to_owned()]),
            groups: vec![Arc::clone(&plan)],
            ..run_line(Event::Completed, run)
        };
        let header = Line::default();
        let mut writer = Writer::create(&path, &header).unwrap();
        writer
            .append(&[naming("prun-a.json"), naming("prun-b.json")], false)
            .unwrap();
        writer.append(&[naming("prun-c.json")], false).unwrap();
        drop(writer);
        let mut writer = Writer::reopen(&path).unwrap();
        writer.append(&[naming("prun-d.json")], false).unwrap();
        drop(writer);

        let mut reader = Reader::open(&path).unwrap();
        let mut events = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            if line.event == Event::Entries {
                assert_eq!(line, Line::defining(&plan));
                assert_eq!(line.key.as_deref(), Some(plan.key()));
                assert_eq!(line.entries.as_deref(), Some(plan.counts()));
            } else {
                assert!(line.groups.is_empty(), "groups are not journaled");
            }
            events.push((line.event, line.run));
        }
        let entries = (Event::Entries, None);
        let done = |run: &str| (Event::Completed, Some(run.to_owned()));
        assert_eq!(
            events,
            [
                (Event::Header, None),
                entries.clone(),
                done("prun-a.json"),
                done("prun-b.json"),
                done("prun-c.json"),
                entries,
                done("prun-d.json"),
            ]
        );
    }
}
