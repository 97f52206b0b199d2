//! A run's loss report as the batch keeps it: the entries of resolving the config and of
//! converting the plan are the same for every run that shares them, so they are held once,
//! with their counts per kind and field made once, and a run's report refers to them.

use std::fmt;
use std::sync::Arc;

use serde::ser::{SerializeStruct, Serializer};
use serde::Serialize;
use serde_json::Value;

use planrun_converter::report::{Entry, EntryKind, LossReport};

/// Whether `token` names a map container whose keys are data (step output names, input names,
/// …), not field names.
fn keyed(token: &str) -> bool {
    matches!(
        token,
        "step_outputs" | "plan_run_inputs" | "additional_data" | "entries" | "extra" | "fields"
    )
}

/// The field a pointer names: array indexes and map keys replaced by `*`
/// (`/run/outputs/step_outputs/$flights` → `/run/outputs/step_outputs/*`).
pub fn field_of(pointer: &str) -> String {
    let mut out = String::with_capacity(pointer.len());
    write_field(&mut out, pointer);
    out
}

/// Writes [`field_of`] `pointer` to `out`.
fn write_field(out: &mut String, pointer: &str) {
    let mut prev = "";
    // The tokens after each `/`, found by byte and sliced at those (ASCII) bytes: neither a
    // searcher nor a UTF-8 check per token, on every entry of every run. The tokens kept as
    // they are between two replaced ones are copied in one piece.
    let mut slashes = pointer.bytes().enumerate().filter(|(_, b)| *b == b'/');
    let Some((first, _)) = slashes.next() else {
        return;
    };
    let mut next = Some(first);
    let mut kept_from = first;
    while let Some(at) = next {
        next = slashes.next().map(|(at, _)| at);
        let end = next.unwrap_or(pointer.len());
        let token = &pointer[at + 1..end];
        let index = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit());
        if index || keyed(prev) {
            out.push_str(&pointer[kept_from..=at]);
            out.push('*');
            kept_from = end;
        }
        prev = token;
    }
    out.push_str(&pointer[kept_from..]);
}

/// Entries counted per kind and field, sorted by kind, then field.
type Counts = Vec<(EntryKind, String, u64)>;

/// Adds `entries` to `counts`, keeping it sorted; a field is copied once per distinct (kind,
/// field), not once per entry.
fn count<'a>(counts: &mut Counts, entries: impl IntoIterator<Item = &'a Entry>) {
    // Room for a typical field at once, rather than growing four times on the first one.
    let mut field = String::with_capacity(96);
    for entry in entries {
        let pointer = entry.from.as_deref().or(entry.to.as_deref()).unwrap_or("");
        field.clear();
        write_field(&mut field, pointer);
        add(counts, entry.kind, &field, 1);
    }
}

fn add(counts: &mut Counts, kind: EntryKind, field: &str, n: u64) {
    let key = (kind, field);
    match counts.binary_search_by(|(kind, field, _)| (*kind, field.as_str()).cmp(&key)) {
        Ok(at) => counts[at].2 += n,
        Err(at) => counts.insert(at, (kind, field.to_owned(), n)),
    }
}

/// Loss-report entry counts named by a key, so that a journal writes them once and its lines
/// name them by the key: equal counts (the plans of one shape, the runs of one shape) have one.
#[derive(Debug, PartialEq)]
pub struct SharedCounts {
    counts: Counts,
    key: String,
}

impl SharedCounts {
    /// Names `counts`, sorted by kind, then field, as a run report's counts are.
    pub fn new(counts: Vec<(EntryKind, String, u64)>) -> Arc<Self> {
        let key = planrun_wire::join::hex16(key_of(&counts));
        Arc::new(SharedCounts { counts, key })
    }

    /// The counts per kind and field, sorted.
    pub fn counts(&self) -> &[(EntryKind, String, u64)] {
        &self.counts
    }

    /// The counts' key: 16 hex digits of the XXH3-64 of their encoding (see `key_of`).
    pub fn key(&self) -> &str {
        &self.key
    }
}

/// XXH3-64 of an unambiguous encoding of `counts`: each kind's and field's length and bytes,
/// then the number. Hashed once per run, so cheaper than writing the counts as JSON.
fn key_of(counts: &Counts) -> u64 {
    let mut bytes = Vec::with_capacity(counts.iter().map(|(_, f, _)| f.len() + 32).sum());
    for (kind, field, n) in counts {
        for text in [kind.as_str(), field] {
            bytes.extend_from_slice(&(text.len() as u64).to_le_bytes());
            bytes.extend_from_slice(text.as_bytes());
        }
        bytes.extend_from_slice(&n.to_le_bytes());
    }
    xxhash_rust::xxh3::xxh3_64(&bytes)
}

/// Entries that many runs share (a config's, a plan conversion's), with their counts made once
/// and named by a key.
#[derive(Debug, PartialEq)]
pub struct SharedEntries {
    report: LossReport,
    counts: Arc<SharedCounts>,
    /// Whether an entry dropped something for good, known once for every run sharing them.
    has_loss: bool,
}

impl SharedEntries {
    /// Holds `report` to be shared.
    pub fn new(report: LossReport) -> Arc<Self> {
        let mut counts = Counts::new();
        count(&mut counts, &report.entries);
        Arc::new(SharedEntries {
            has_loss: report.entries.iter().any(|e| e.kind == EntryKind::Dropped),
            report,
            counts: SharedCounts::new(counts),
        })
    }

    /// The entries.
    pub fn report(&self) -> &LossReport {
        &self.report
    }

    /// The entries counted per kind and field, with their key.
    pub fn counts(&self) -> &Arc<SharedCounts> {
        &self.counts
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Own(Vec<Entry>),
    Shared(Arc<SharedEntries>),
}

/// A run's loss report: its own entries and the shared ones, in the order they happened.
/// Written (`Serialize`, `Display`) exactly as the [`LossReport`] holding all of them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunReport {
    parts: Vec<Part>,
}

impl RunReport {
    /// Appends shared entries.
    pub fn share(&mut self, shared: &Arc<SharedEntries>) {
        if !shared.report.entries.is_empty() {
            self.parts.push(Part::Shared(Arc::clone(shared)));
        }
    }

    /// Appends entries of the run's own.
    pub fn extend(&mut self, report: LossReport) {
        if report.entries.is_empty() {
            return;
        }
        match self.parts.last_mut() {
            Some(Part::Own(entries)) => entries.extend(report.entries),
            _ => self.parts.push(Part::Own(report.entries)),
        }
    }

    /// Records an entry of the run's own (see [`LossReport::push`]).
    pub fn push(
        &mut self,
        kind: EntryKind,
        from: Option<String>,
        to: Option<String>,
        note: &'static str,
        value: Option<Value>,
    ) {
        let mut report = LossReport::default();
        report.push(kind, from, to, note, value);
        self.extend(report);
    }

    /// Every entry, in order.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.parts.iter().flat_map(|part| match part {
            Part::Own(entries) => entries.as_slice(),
            Part::Shared(shared) => shared.report.entries.as_slice(),
        })
    }

    /// Whether anything was dropped for good.
    pub fn has_loss(&self) -> bool {
        self.parts.iter().any(|part| match part {
            Part::Own(entries) => entries.iter().any(|e| e.kind == EntryKind::Dropped),
            Part::Shared(shared) => shared.has_loss,
        })
    }

    /// The report as one [`LossReport`].
    pub fn to_loss_report(&self) -> LossReport {
        LossReport {
            entries: self.entries().cloned().collect(),
        }
    }

    /// The run's own entries (not the shared ones) counted per kind and field, sorted: the
    /// `entries` of its journal line.
    pub fn own_counts(&self) -> Vec<(EntryKind, String, u64)> {
        let mut counts = Counts::new();
        for part in &self.parts {
            if let Part::Own(entries) = part {
                count(&mut counts, entries);
            }
        }
        counts
    }

    /// The shared entries the report holds, in order.
    pub fn shared(&self) -> impl Iterator<Item = &Arc<SharedEntries>> {
        self.parts.iter().filter_map(|part| match part {
            Part::Shared(shared) => Some(shared),
            Part::Own(_) => None,
        })
    }

    /// Every entry counted per kind and field, sorted: [`RunReport::own_counts`] and the
    /// counts of each shared part, added up.
    pub fn counts(&self) -> Vec<(EntryKind, String, u64)> {
        let mut counts = self.own_counts();
        for shared in self.shared() {
            for (kind, field, n) in shared.counts.counts() {
                add(&mut counts, *kind, field, *n);
            }
        }
        counts
    }
}

impl Serialize for RunReport {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Entries<'a>(&'a RunReport);
        impl Serialize for Entries<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.0.entries())
            }
        }
        let mut report = serializer.serialize_struct("LossReport", 1)?;
        report.serialize_field("entries", &Entries(self))?;
        report.end()
    }
}

impl fmt::Display for RunReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_loss_report(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_generalise_indexes_and_keys() {
        assert_eq!(
            field_of("/run/outputs/step_outputs/$flights"),
            "/run/outputs/step_outputs/*"
        );
        assert_eq!(
            field_of("/run/outputs/clarifications/3/plan_run_id"),
            "/run/outputs/clarifications/*/plan_run_id"
        );
        assert_eq!(
            field_of("/run/execution_context/additional_data/team"),
            "/run/execution_context/additional_data/*"
        );
        assert_eq!(field_of("/config"), "/config");
        assert_eq!(field_of(""), "");
        assert_eq!(field_of("/"), "/");
        assert_eq!(field_of("//a/"), "//a/");
        assert_eq!(field_of("run/3/é/step_outputs/x"), "/*/é/step_outputs/*");
    }

    /// The rule of [`field_of`] token by token, as plainly as it can be written.
    fn field_by_tokens(pointer: &str) -> String {
        let Some((_, rest)) = pointer.split_once('/') else {
            return String::new();
        };
        let mut out = String::new();
        let mut prev = "";
        for token in rest.split('/') {
            out.push('/');
            let index = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit());
            out.push_str(if index || keyed(prev) { "*" } else { token });
            prev = token;
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn fields_are_the_token_by_token_rule(
            tokens in proptest::collection::vec(
                "(|[0-9]{1,3}|step_outputs|plan_run_inputs|extra|x|\\$é|[a-z~0-9]{1,6})",
                0..8,
            ),
            head in "(|run)",
        ) {
            let pointer = tokens.iter().fold(head, |pointer, token| pointer + "/" + token);
            proptest::prop_assert_eq!(field_of(&pointer), field_by_tokens(&pointer));
        }
    }

    fn report(entries: &[(EntryKind, Option<&str>, Option<&str>)]) -> LossReport {
        let mut report = LossReport::default();
        for (kind, from, to) in entries {
            report.push(
                *kind,
                from.map(str::to_owned),
                to.map(str::to_owned),
                "why",
                None,
            );
        }
        report
    }

    /// The counts of all entries, made the plain way: one (kind, field) key per entry.
    fn reference(report: &LossReport) -> Counts {
        let mut counts = std::collections::BTreeMap::new();
        for entry in &report.entries {
            let pointer = entry.from.as_deref().or(entry.to.as_deref()).unwrap_or("");
            *counts.entry((entry.kind, field_of(pointer))).or_insert(0) += 1;
        }
        counts
            .into_iter()
            .map(|((kind, field), n)| (kind, field, n))
            .collect()
    }

    #[test]
    fn entries_are_counted_per_kind_and_field_in_order() {
        let own = report(&[
            (EntryKind::Moved, Some("/run/outputs/step_outputs/$b"), None),
            (EntryKind::Dropped, Some("/plan/steps/0/x"), None),
            (EntryKind::Moved, Some("/run/outputs/step_outputs/$a"), None),
            (EntryKind::Defaulted, None, Some("/run/end_user_id")),
            (EntryKind::Moved, Some("/plan/id"), None),
            (EntryKind::Dropped, Some("/plan/steps/12/x"), None),
            (EntryKind::Defaulted, None, None),
        ]);
        let mut run = RunReport::default();
        run.extend(own.clone());
        assert_eq!(run.counts(), reference(&own));
        assert_eq!(
            run.counts()[0],
            (EntryKind::Moved, "/plan/id".to_owned(), 1)
        );
    }

    #[test]
    fn shared_entries_read_as_if_the_run_held_them() {
        let config = report(&[(EntryKind::Derived, Some("/config"), Some("/config"))]);
        let before = report(&[
            (EntryKind::Moved, Some("/run/plan_id"), Some("/plan/id")),
            (EntryKind::Dropped, Some("/plan/steps/0/x"), None),
        ]);
        let plan = report(&[
            (EntryKind::Dropped, Some("/plan/steps/3/x"), None),
            (EntryKind::Renamed, Some("/plan/plan_context/query"), None),
        ]);
        let after = report(&[(EntryKind::Defaulted, None, Some("/run/plan_run_inputs"))]);
        let mut run = RunReport::default();
        run.share(&SharedEntries::new(config.clone()));
        run.extend(before.clone());
        run.share(&SharedEntries::new(plan.clone()));
        run.share(&SharedEntries::new(LossReport::default()));
        run.extend(after.clone());
        let mut own = before.clone();
        own.extend(after.clone());
        let mut whole = config;
        whole.extend(before);
        whole.extend(plan);
        whole.extend(after);
        assert_eq!(run.to_loss_report(), whole);
        assert_eq!(run.counts(), reference(&whole));
        assert_eq!(
            run.counts().last(),
            Some(&(EntryKind::Dropped, "/plan/steps/*/x".to_owned(), 2))
        );
        assert_eq!(
            serde_json::to_string(&run).unwrap(),
            serde_json::to_string(&whole).unwrap()
        );
        assert_eq!(run.to_string(), whole.to_string());
        assert!(run.has_loss());
        assert!(!RunReport::default().has_loss());

        // A drop is a loss whether the run's own entries or shared ones hold it.
        let kept = report(&[(EntryKind::Moved, Some("/run/plan_id"), Some("/plan/id"))]);
        let mut own_only = RunReport::default();
        own_only.share(&SharedEntries::new(kept.clone()));
        assert!(!own_only.has_loss());
        own_only.extend(report(&[(EntryKind::Dropped, Some("/run/x"), None)]));
        assert!(own_only.has_loss());
        let mut shared_only = RunReport::default();
        shared_only.extend(kept);
        shared_only.share(&SharedEntries::new(report(&[(
            EntryKind::Dropped,
            Some("/plan/steps/3/x"),
            None,
        )])));
        assert!(shared_only.has_loss());
    }

    #[test]
    fn equal_counts_have_one_key_and_other_counts_another() {
        let plan = |step: &str| {
            SharedEntries::new(report(&[
                (EntryKind::Dropped, Some(step), None),
                (EntryKind::Renamed, Some("/plan/plan_context/query"), None),
            ]))
        };
        let (a, b) = (plan("/plan/steps/3/x"), plan("/plan/steps/7/x"));
        assert_ne!(a.report(), b.report());
        let key = |shared: &SharedEntries| shared.counts().key().to_owned();
        assert_eq!(key(&a), key(&b), "the same counts");
        assert_eq!(key(&a).len(), 16);
        assert!(key(&a)
            .bytes()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(key(&a), key(&plan("/plan/steps/3/y")));
    }

    #[test]
    fn a_key_tells_apart_counts_that_differ_in_any_kind_field_or_number() {
        let key = |counts: &[(EntryKind, &str, u64)]| {
            let counts = counts.iter().map(|(k, f, n)| (*k, (*f).to_owned(), *n));
            SharedCounts::new(counts.collect()).key().to_owned()
        };
        let one = [(EntryKind::Moved, "/run/a", 1)];
        assert_eq!(key(&one), key(&one));
        for other in [
            &[(EntryKind::Moved, "/run/a", 2)][..],
            &[(EntryKind::Dropped, "/run/a", 1)],
            &[(EntryKind::Moved, "/run/b", 1)],
            &[
                (EntryKind::Moved, "/run/a", 1),
                (EntryKind::Moved, "/run/b", 1),
            ],
            &[(EntryKind::Moved, "/run/a/run/b", 1)],
            &[],
        ] {
            assert_ne!(key(&one), key(other), "{other:?}");
        }
    }
}
