//! The JSON report of a migration (`DST/.planrun/report[-i-of-n].json`, and `--report FILE`):
//! counts per outcome and per source version, loss-report entry totals per kind and per field,
//! the slowest and largest runs, every rejected or blocked run with where and why, and the store
//! entries a migration does not read. Shard reports merge into one ([`merge`]).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use indexmap::{IndexMap, IndexSet};
use serde::{Deserialize, Serialize};

use super::journal::Line;
use super::{Fast, Shard};
use crate::Class;
use planrun_converter::report::EntryKind;

/// Counts by name, in first-seen order.
pub type Counts = IndexMap<String, u64, Fast>;

/// The `format` of a report.
pub const REPORT_FORMAT: &str = "planrun-migrate-report/1";

/// How many runs the `slowest` and `largest` lists hold.
pub const TOP: usize = 10;

/// A migration report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchReport {
    /// [`REPORT_FORMAT`].
    pub format: String,
    /// The canonical source store.
    pub src: String,
    /// The destination (`null` for a dry run).
    pub dst: Option<String>,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// How many shards the store is split into (1: not sharded).
    pub shard_count: u64,
    /// The shards this report covers.
    pub shards: Vec<u64>,
    /// Runs covered.
    pub runs: u64,
    /// Runs per outcome class.
    pub outcomes: Counts,
    /// Runs per source version (`W1`, `R1–R2`, `V2`, `unknown` when unreadable) and class.
    pub source_versions: IndexMap<String, Counts, Fast>,
    /// Loss-report entry totals.
    pub entries: EntryTotals,
    /// Agent-memory files copied.
    pub agent_memory_files: u64,
    /// With `--to r6`: the store's plans and end users carried over in HEAD's form, whether a
    /// run refers to them or not (each shard carries those its name hash owns).
    #[serde(default)]
    pub documents_copied: u64,
    /// Outputs re-read and checked by the verify pass.
    pub verified: u64,
    /// The slowest runs, slowest first.
    pub slowest: Vec<RunStat>,
    /// The largest run files, largest first.
    pub largest: Vec<RunStat>,
    /// Every rejected or blocked run, by path.
    pub failures: Vec<FailureEntry>,
    /// Store entries a migration does not read (symlinks, special files, non-UTF-8 names).
    pub ignored: Vec<Ignored>,
    /// A resume: what DST lacked to correspond to SRC as it is now, and what it did about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catch_up: Option<super::CatchUpCounts>,
}

/// Loss-report entry totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EntryTotals {
    /// Per entry kind (`renamed`, `moved`, `derived`, `defaulted`, `coerced`, `dropped`).
    pub per_kind: Counts,
    /// Per field (the entry's source pointer, else its target, with array indexes and map keys
    /// replaced by `*`), then per kind.
    pub per_field: IndexMap<String, Counts, Fast>,
}

/// One run in the `slowest`/`largest` lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunStat {
    /// The run file.
    pub path: String,
    /// Its V2 id, when converted.
    pub id: Option<String>,
    /// Its outcome.
    pub class: Class,
    /// Its source versions, when known.
    pub version: Option<String>,
    /// Microseconds spent on it.
    pub micros: u64,
    /// Size of the run file.
    pub bytes_in: u64,
    /// Size of its V2 document, when converted.
    pub bytes_out: Option<u64>,
}

/// A rejected or blocked run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureEntry {
    /// The run file.
    pub path: String,
    /// `rejected` or `blocked`.
    pub class: Class,
    /// The file at fault (the run, its plan, end user or agent-memory file), or the missing file.
    pub file: String,
    /// JSON pointer into `file`, when known.
    pub pointer: Option<String>,
    /// 1-based line in `file`; 0 when unknown.
    pub line: usize,
    /// 1-based column in `file`; 0 when unknown.
    pub column: usize,
    /// The failure kind (`syntax`, `unrecognised`, `missing_plan`, `unsafe_name`, `symlink`, …).
    pub kind: String,
    /// What is wrong.
    pub message: String,
}

/// A store entry a migration does not read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ignored {
    /// The entry.
    pub path: String,
    /// Why it is not read.
    pub reason: String,
}

/// Builds a report from the final journal line of every run.
#[derive(Debug, Clone)]
pub struct Builder {
    report: BatchReport,
    src_dir: String,
    /// The shared entry counts journaled so far, by key, each field as its index in `fields`: a
    /// large store has thousands of distinct sets of counts over a few hundred fields.
    shared: HashMap<String, Vec<(EntryKind, u32, u64)>, Fast>,
    /// The fields the shared counts name.
    fields: IndexSet<String, Fast>,
    /// How many runs name each key: a key's counts are added once per key, times this.
    runs_sharing: Counts,
    /// The last of `slowest` and of `largest` when they were last cut to [`TOP`]: its time or
    /// size and its run's name. A run that does not beat it can never be listed, and is not
    /// added to the list (which would cost it a copy of its path, id and version).
    floors: [Option<(u64, String)>; 2],
}

impl Builder {
    /// An empty report.
    pub fn new(src: &Path, dst: Option<&Path>, dry_run: bool, shard: Option<Shard>) -> Self {
        let src_dir = src.to_string_lossy().into_owned();
        Builder {
            report: BatchReport {
                format: REPORT_FORMAT.to_owned(),
                src: src_dir.clone(),
                dst: dst.map(|d| d.to_string_lossy().into_owned()),
                dry_run,
                shard_count: shard.map_or(1, |s| s.count),
                shards: vec![shard.map_or(0, |s| s.index)],
                runs: 0,
                outcomes: Class::ALL
                    .iter()
                    .map(|c| (c.as_str().to_owned(), 0))
                    .collect(),
                source_versions: IndexMap::default(),
                entries: EntryTotals {
                    per_kind: EntryKind::ALL
                        .iter()
                        .map(|k| (k.as_str().to_owned(), 0))
                        .collect(),
                    per_field: IndexMap::default(),
                },
                agent_memory_files: 0,
                documents_copied: 0,
                verified: 0,
                slowest: Vec::new(),
                largest: Vec::new(),
                failures: Vec::new(),
                ignored: Vec::new(),
                catch_up: None,
            },
            src_dir,
            shared: HashMap::default(),
            fields: IndexSet::default(),
            runs_sharing: Counts::default(),
            floors: [None, None],
        }
    }

    /// Records the shared entry counts `key` names (an `entries` journal line).
    pub fn define(&mut self, key: &str, counts: &[(EntryKind, String, u64)]) {
        if self.shared.contains_key(key) {
            return;
        }
        let fields = &mut self.fields;
        let counts = counts
            .iter()
            .map(|(kind, field, n)| {
                let at = match fields.get_index_of(field.as_str()) {
                    Some(at) => at,
                    None => fields.insert_full(field.clone()).0,
                };
                (
                    *kind,
                    u32::try_from(at).expect("fewer than 2^32 fields"),
                    *n,
                )
            })
            .collect();
        self.shared.insert(key.to_owned(), counts);
    }

    /// Adds a run's final (`completed` or `failed`) line; refuses one that names shared counts
    /// not defined before it.
    pub fn add(&mut self, line: &Line) -> Result<(), String> {
        let (Some(run), Some(class)) = (line.run.as_deref(), line.class) else {
            return Ok(());
        };
        for key in line.shared.iter().flatten() {
            if !self.shared.contains_key(key) {
                return Err(format!(
                    "{run} names loss-report entries {key:?}, which no earlier line defines"
                ));
            }
        }
        for key in line.shared.iter().flatten() {
            bump(&mut self.runs_sharing, key, 1);
        }
        let report = &mut self.report;
        let path = || planrun_wire::join!(self.src_dir, "/", run);
        report.runs += 1;
        // Counted without allocating keys that are already there: this runs once per run.
        bump(&mut report.outcomes, class.as_str(), 1);
        let version = line.version.as_deref().unwrap_or("unknown");
        bump_nested(&mut report.source_versions, version, class.as_str(), 1);
        for (kind, field, n) in line.entries.iter().flatten() {
            bump(&mut report.entries.per_kind, kind.as_str(), *n);
            bump_nested(&mut report.entries.per_field, field, kind.as_str(), *n);
        }
        // With `--to r6` a run's files also hold its plan, end user and residue; agent memory is
        // what lies in the run's own directory.
        report.agent_memory_files += line
            .memory
            .iter()
            .flatten()
            .filter(|m| m.path.contains('/') && !m.path.starts_with(super::CONTROL_DIR))
            .count() as u64;
        let (micros, bytes_in) = (line.micros.unwrap_or(0), line.bytes_in.unwrap_or(0));
        let beats = |floor: &Option<(u64, String)>, value: u64| {
            floor.as_ref().is_none_or(|(least, name)| {
                value > *least || (value == *least && run < name.as_str())
            })
        };
        let (slow, large) = (
            beats(&self.floors[0], micros),
            beats(&self.floors[1], bytes_in),
        );
        if slow || large {
            let stat = RunStat {
                path: path(),
                id: line.id.clone(),
                class,
                version: line.version.clone(),
                micros,
                bytes_in,
                bytes_out: line.bytes_out,
            };
            match (slow, large) {
                (true, true) => {
                    report.slowest.push(stat.clone());
                    report.largest.push(stat);
                }
                (true, false) => report.slowest.push(stat),
                _ => report.largest.push(stat),
            }
        }
        if report.slowest.len().max(report.largest.len()) > 8 * TOP {
            top(&mut report.slowest, &mut report.largest);
            let name = |stat: &RunStat| stat.path[self.src_dir.len() + 1..].to_owned();
            self.floors = [
                (report.slowest.get(TOP - 1)).map(|slow| (slow.micros, name(slow))),
                (report.largest.get(TOP - 1)).map(|large| (large.bytes_in, name(large))),
            ];
        }
        if let Some(error) = &line.error {
            report.failures.push(FailureEntry {
                path: path(),
                class,
                file: error.file.clone(),
                pointer: error.pointer.clone(),
                line: error.line,
                column: error.column,
                kind: error.kind.clone(),
                message: error.message.clone(),
            });
        }
        Ok(())
    }

    /// Records a store entry the migration does not read.
    pub fn ignore(&mut self, path: &Path, reason: &str) {
        self.report.ignored.push(Ignored {
            path: path.to_string_lossy().into_owned(),
            reason: reason.to_owned(),
        });
    }

    /// Records what a resume's catch-up found.
    pub fn catch_up(&mut self, counts: super::CatchUpCounts) {
        self.report.catch_up = Some(counts);
    }

    /// Records how many outputs the verify pass checked.
    pub fn verified(&mut self, n: u64) {
        self.report.verified = n;
    }

    /// Records how many of the store's other documents were carried over (`--to r6`).
    pub fn documents_copied(&mut self, n: u64) {
        self.report.documents_copied = n;
    }

    /// The finished report, every list in its documented order.
    pub fn finish(mut self) -> BatchReport {
        let totals = &mut self.report.entries;
        for (key, runs) in &self.runs_sharing {
            for (kind, field, n) in &self.shared[key] {
                bump(&mut totals.per_kind, kind.as_str(), n.saturating_mul(*runs));
                bump_nested(
                    &mut totals.per_field,
                    &self.fields[*field as usize],
                    kind.as_str(),
                    n.saturating_mul(*runs),
                );
            }
        }
        for kinds in self.report.entries.per_field.values_mut() {
            kinds.sort_keys();
        }
        normalise(&mut self.report);
        self.report
    }
}

/// Adds `n` to the count of `key`, allocating the key only when it is new.
fn bump(map: &mut Counts, key: &str, n: u64) {
    match map.get_mut(key) {
        Some(count) => *count += n,
        None => {
            map.insert(key.to_owned(), n);
        }
    }
}

/// [`bump`] for the count of `inner` within `outer`.
fn bump_nested(map: &mut IndexMap<String, Counts, Fast>, outer: &str, inner: &str, n: u64) {
    if let Some(counts) = map.get_mut(outer) {
        bump(counts, inner, n);
    } else {
        let mut counts = Counts::default();
        counts.insert(inner.to_owned(), n);
        map.insert(outer.to_owned(), counts);
    }
}

fn top(slowest: &mut Vec<RunStat>, largest: &mut Vec<RunStat>) {
    slowest.sort_by(|a, b| b.micros.cmp(&a.micros).then_with(|| a.path.cmp(&b.path)));
    slowest.truncate(TOP);
    largest.sort_by(|a, b| {
        b.bytes_in
            .cmp(&a.bytes_in)
            .then_with(|| a.path.cmp(&b.path))
    });
    largest.truncate(TOP);
}

/// Orders source versions as the registry does (a range by its oldest version), then `V2`,
/// then anything else (`unknown`).
fn version_rank(version: &str) -> (usize, &str) {
    let legacy = planrun_legacy::Version::ALL;
    let rank = legacy
        .iter()
        .position(|v| version.starts_with(v.as_str()))
        .or_else(|| version.starts_with("V2").then_some(legacy.len()))
        .unwrap_or(legacy.len() + 1);
    (rank, version)
}

fn normalise(report: &mut BatchReport) {
    top(&mut report.slowest, &mut report.largest);
    report
        .source_versions
        .sort_by(|a, _, b, _| version_rank(a).cmp(&version_rank(b)));
    for classes in report.source_versions.values_mut() {
        classes.sort_by(|a, _, b, _| class_rank(a).cmp(&class_rank(b)));
    }
    report.entries.per_field.sort_keys();
    report.failures.sort_by(|a, b| a.path.cmp(&b.path));
    report.ignored.sort_by(|a, b| a.path.cmp(&b.path));
    report.ignored.dedup();
    report.shards.sort_unstable();
}

fn class_rank(name: &str) -> usize {
    Class::ALL
        .iter()
        .position(|c| c.as_str() == name)
        .unwrap_or(Class::ALL.len())
}

/// Shard reports cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no reports to merge")]
    Empty,
    /// Not all from one store.
    #[error("the reports are of different stores: {0} and {1}")]
    Sources(String, String),
    /// Different splits.
    #[error("the reports split the store differently: into {0} and into {1} shards")]
    ShardCounts(u64, u64),
    /// A shard twice.
    #[error("shard {0} is in more than one report")]
    Duplicate(u64),
    /// Not a report of this version.
    #[error("not a {REPORT_FORMAT} report: {0}")]
    Format(String),
}

/// Merges the reports of the shards of one store into one.
pub fn merge(reports: Vec<BatchReport>) -> Result<BatchReport, MergeError> {
    let mut reports = reports.into_iter();
    let mut merged = reports.next().ok_or(MergeError::Empty)?;
    if merged.format != REPORT_FORMAT {
        return Err(MergeError::Format(merged.format));
    }
    for report in reports {
        if report.format != REPORT_FORMAT {
            return Err(MergeError::Format(report.format));
        }
        if report.src != merged.src {
            return Err(MergeError::Sources(merged.src, report.src));
        }
        if report.shard_count != merged.shard_count {
            return Err(MergeError::ShardCounts(
                merged.shard_count,
                report.shard_count,
            ));
        }
        for shard in &report.shards {
            if merged.shards.contains(shard) {
                return Err(MergeError::Duplicate(*shard));
            }
            merged.shards.push(*shard);
        }
        if merged.dst != report.dst {
            merged.dst = None;
        }
        merged.dry_run |= report.dry_run;
        merged.runs += report.runs;
        add_counts(&mut merged.outcomes, report.outcomes);
        for (version, classes) in report.source_versions {
            add_counts(merged.source_versions.entry(version).or_default(), classes);
        }
        add_counts(&mut merged.entries.per_kind, report.entries.per_kind);
        for (field, kinds) in report.entries.per_field {
            add_counts(merged.entries.per_field.entry(field).or_default(), kinds);
        }
        merged.agent_memory_files += report.agent_memory_files;
        merged.documents_copied += report.documents_copied;
        merged.verified += report.verified;
        merged.slowest.extend(report.slowest);
        merged.largest.extend(report.largest);
        merged.failures.extend(report.failures);
        merged.ignored.extend(report.ignored);
        if let Some(counts) = &report.catch_up {
            merged
                .catch_up
                .get_or_insert_with(Default::default)
                .merge(counts);
        }
    }
    normalise(&mut merged);
    Ok(merged)
}

fn add_counts(into: &mut Counts, from: Counts) {
    for (key, n) in from {
        *into.entry(key).or_default() += n;
    }
}

impl BatchReport {
    /// Runs that were rejected, blocked or in flux, and outputs kept in conflict: what makes
    /// a migration exit 1.
    pub fn failed(&self) -> u64 {
        let classes: u64 = [Class::Rejected, Class::Blocked, Class::InFlux]
            .iter()
            .map(|c| self.outcomes.get(c.as_str()).copied().unwrap_or(0))
            .sum();
        classes + self.catch_up.as_ref().map_or(0, |c| c.conflicts)
    }

    /// The report as the text `migrate` and `report merge` print: counts, then one line per
    /// rejected or blocked run (`path: class (kind) file:line:column at pointer: message`, or
    /// `path:line:column: class (kind) at pointer: message` when the file at fault is the run).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let shards = if self.shard_count > 1 {
            let list: Vec<String> = self.shards.iter().map(u64::to_string).collect();
            format!(" (shard {} of {})", list.join(","), self.shard_count)
        } else {
            String::new()
        };
        let verb = if self.dry_run {
            "dry run of"
        } else {
            "migrated"
        };
        let dst = self
            .dst
            .as_deref()
            .map(|d| format!(" -> {d}"))
            .unwrap_or_default();
        let runs = if self.runs == 1 { "run" } else { "runs" };
        let _ = writeln!(
            out,
            "{verb} {}{dst}{shards}: {} {runs}",
            self.src, self.runs
        );
        for (class, n) in &self.outcomes {
            let _ = writeln!(out, "{n:>10}  {class}");
        }
        let versions: Vec<String> = self
            .source_versions
            .iter()
            .map(|(v, classes)| format!("{v} {}", classes.values().sum::<u64>()))
            .collect();
        let _ = writeln!(out, "  source versions: {}", versions.join(", "));
        if let Some(range) = self.source_versions.keys().find(|v| v.contains('–')) {
            let _ = writeln!(
                out,
                "    ({range}: a range; the runs' keys fit every version in it, as the releases \
                 between them wrote the same shape; each is read as the newest)"
            );
        }
        let kinds: Vec<String> = self
            .entries
            .per_kind
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        let _ = writeln!(out, "  loss-report entries: {}", kinds.join(", "));
        let _ = writeln!(
            out,
            "  agent-memory files copied: {}; outputs verified: {}",
            self.agent_memory_files, self.verified
        );
        if let Some(c) = &self.catch_up {
            let _ = writeln!(
                out,
                "  catch-up: {} up to date, {} changed, {} new, {} retried, {} removed, {} conflicts",
                c.up_to_date, c.changed, c.new, c.retried, c.removed, c.conflicts
            );
            for (kind, names) in &c.names {
                let _ = writeln!(out, "    {kind}: {}", names.join(", "));
            }
        }
        if self.documents_copied > 0 {
            let _ = writeln!(
                out,
                "  plans and end users carried over in HEAD's form: {}",
                self.documents_copied
            );
        }
        out.push_str(&self.failures_text());
        for ignored in &self.ignored {
            let _ = writeln!(out, "{}: ignored: {}", ignored.path, ignored.reason);
        }
        out
    }

    /// One line per run that failed (rejected, blocked, in flux, or a kept conflict): what
    /// `--quiet` prints.
    pub fn failures_text(&self) -> String {
        let mut out = String::new();
        for failure in &self.failures {
            let at = if failure.line > 0 {
                format!(":{}:{}", failure.line, failure.column)
            } else {
                String::new()
            };
            let pointer = match failure.pointer.as_deref() {
                Some("") => " at (document root)".to_owned(),
                Some(p) => format!(" at {p}"),
                None => String::new(),
            };
            // The file at fault is most often the run itself: its path is then said once, with
            // the position on it.
            let _ = if failure.file == failure.path {
                writeln!(
                    out,
                    "{}{at}: {} ({}){pointer}: {}",
                    failure.path, failure.class, failure.kind, failure.message
                )
            } else {
                writeln!(
                    out,
                    "{}: {} ({}) {}{at}{pointer}: {}",
                    failure.path, failure.class, failure.kind, failure.file, failure.message
                )
            };
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migrate::journal::{ErrorRecord, Event};

    fn line(run: &str, class: Class, micros: u64, bytes_in: u64) -> Line {
        Line {
            event: if class.is_success() {
                Event::Completed
            } else {
                Event::Failed
            },
            run: Some(run.into()),
            class: Some(class),
            version: Some("R4".into()),
            micros: Some(micros),
            bytes_in: Some(bytes_in),
            entries: Some(vec![(EntryKind::Moved, "/run/plan_id".into(), 1)]),
            error: (!class.is_success()).then(|| ErrorRecord {
                file: run.into(),
                pointer: Some("/x".into()),
                line: 2,
                column: 3,
                kind: "data".into(),
                message: "bad".into(),
            }),
            ..Line::default()
        }
    }

    #[test]
    fn the_summary_counts_one_run_in_the_singular() {
        let mut builder = Builder::new(Path::new("/src"), None, true, None);
        builder
            .add(&line("prun-01.json", Class::Rejected, 1, 1))
            .unwrap();
        let text = builder.finish().to_text();
        assert!(text.starts_with("dry run of /src: 1 run\n"), "{text}");
    }

    #[test]
    fn a_failure_line_says_the_runs_path_once() {
        let src = Path::new("/src");
        let mut builder = Builder::new(src, None, false, None);
        let mut own = line("prun-01.json", Class::Rejected, 1, 1);
        own.error.as_mut().unwrap().file = "/src/prun-01.json".into();
        builder.add(&own).unwrap();
        let mut plan = line("prun-02.json", Class::Rejected, 1, 1);
        plan.error.as_mut().unwrap().file = "/src/plan-1.json".into();
        builder.add(&plan).unwrap();
        let text = builder.finish().to_text();
        assert!(
            text.contains("\n/src/prun-01.json:2:3: rejected (data) at /x: bad\n"),
            "{text}"
        );
        assert!(
            text.contains("\n/src/prun-02.json: rejected (data) /src/plan-1.json:2:3 at /x: bad\n"),
            "{text}"
        );
    }

    #[test]
    fn shard_reports_merge_into_the_report_of_the_whole() {
        let lines: Vec<Line> = (0..30)
            .map(|i| {
                let class = if i % 7 == 0 {
                    Class::Rejected
                } else {
                    Class::Converted
                };
                line(&format!("prun-{i:02}.json"), class, i * 10, 1000 - i)
            })
            .collect();
        let src = Path::new("/src");
        let mut whole = Builder::new(src, None, false, None);
        let mut shards = [
            Builder::new(src, None, false, Some(Shard { index: 0, count: 2 })),
            Builder::new(src, None, false, Some(Shard { index: 1, count: 2 })),
        ];
        for (i, l) in lines.iter().enumerate() {
            whole.add(l).unwrap();
            shards[i % 2].add(l).unwrap();
        }
        let whole = whole.finish();
        let [a, b] = shards.map(Builder::finish);
        let mut merged = merge(vec![b.clone(), a.clone()]).unwrap();
        assert_eq!(merged.shards, vec![0, 1]);
        merged.shards = vec![0];
        merged.shard_count = 1;
        assert_eq!(merged, whole);
        assert_eq!(whole.failed(), 5);
        assert_eq!(whole.slowest[0].micros, 290);
        assert_eq!(whole.largest[0].bytes_in, 1000);
        assert_eq!(whole.slowest.len(), TOP);
        assert!(matches!(
            merge(vec![a.clone(), a]),
            Err(MergeError::Duplicate(0))
        ));
        assert!(whole
            .to_text()
            .contains("/src/prun-07.json: rejected (data) prun-07.json:2:3 at /x: bad"));
    }

    proptest::proptest! {
        /// The lists keep only runs that beat the last of a cut list; they still list what
        /// sorting every run would.
        #[test]
        fn the_slowest_and_largest_are_those_of_all_runs(
            stats in proptest::collection::vec((0..6u64, 0..6u64), 0..400)
        ) {
            let src = Path::new("/src");
            let mut builder = Builder::new(src, None, false, None);
            let mut all = Vec::new();
            for (i, &(micros, bytes_in)) in stats.iter().enumerate() {
                let run = format!("prun-{:05}.json", i * 7919 % 10007);
                builder.add(&line(&run, Class::Converted, micros, bytes_in)).unwrap();
                all.push((format!("/src/{run}"), micros, bytes_in));
            }
            let report = builder.finish();
            let listed = |list: &[RunStat]| {
                list.iter().map(|s| (s.path.clone(), s.micros, s.bytes_in)).collect::<Vec<_>>()
            };
            all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            proptest::prop_assert_eq!(listed(&report.slowest), all[..all.len().min(TOP)].to_vec());
            all.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
            proptest::prop_assert_eq!(listed(&report.largest), all[..all.len().min(TOP)].to_vec());
        }
    }

    #[test]
    fn shared_counts_add_up_as_if_each_run_held_them() {
        let plan = vec![
            (EntryKind::Moved, "/plan/steps/*/condition".to_owned(), 2),
            (EntryKind::Moved, "/run/plan_id".to_owned(), 1),
        ];
        let config = vec![(EntryKind::Defaulted, "/config".to_owned(), 1)];
        let src = Path::new("/src");
        let (mut inline, mut shared) = (
            Builder::new(src, None, false, None),
            Builder::new(src, None, false, None),
        );
        shared.define("a", &plan);
        shared.define("b", &config);
        for i in 0..5 {
            let mut own = line(&format!("prun-{i}.json"), Class::Converted, i, i);
            let mut all = own.clone();
            let mut held = own.entries.take().unwrap();
            held.extend(plan.iter().cloned());
            held.extend(config.iter().cloned());
            all.entries = Some(held);
            inline.add(&all).unwrap();
            own.entries = Some(vec![(EntryKind::Moved, "/run/plan_id".into(), 1)]);
            own.shared = Some(vec!["a".into(), "b".into()]);
            shared.add(&own).unwrap();
        }
        let (inline, shared) = (inline.finish(), shared.finish());
        assert_eq!(shared, inline);
        assert_eq!(
            shared.entries.per_field["/run/plan_id"]["moved"], 10,
            "own and shared counts of one field add up"
        );

        let mut unknown = line("prun-x.json", Class::Converted, 0, 0);
        unknown.shared = Some(vec!["c".into()]);
        let mut builder = Builder::new(src, None, false, None);
        let problem = builder.add(&unknown).unwrap_err();
        assert!(problem.contains("\"c\""), "{problem}");
        assert_eq!(builder.finish().runs, 0, "a refused line is not counted");
    }
}
