//! Loss reports: every datum of the legacy source, classified by what the conversion did with it,
//! with JSON pointers on both sides.
//!
//! Source pointers point into one virtual document that holds every legacy input of a conversion:
//! `{"run": …, "plan": …, "end_user": …, "config": …}` (so `/run/execution_context` or
//! `/plan/steps/0/custom_key`). Target pointers point into the V2 document.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use planrun_wire::join;

use crate::renames::{Op, Row};

/// What happened to one datum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// Same value, new name.
    Renamed,
    /// Same value, new place (including the `legacy` residue of a V2 document).
    Moved,
    /// A new value computed from the source (e.g. `step_num` from a plan step).
    Derived,
    /// The source had nothing; a documented default was used.
    Defaulted,
    /// The value was rewritten (a prefix, a canonical spelling, a redacted secret).
    Coerced,
    /// The value is gone: the target cannot hold it and it was not kept anywhere.
    Dropped,
}

impl EntryKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [EntryKind; 6] = [
        EntryKind::Renamed,
        EntryKind::Moved,
        EntryKind::Derived,
        EntryKind::Defaulted,
        EntryKind::Coerced,
        EntryKind::Dropped,
    ];

    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Renamed => "renamed",
            EntryKind::Moved => "moved",
            EntryKind::Derived => "derived",
            EntryKind::Defaulted => "defaulted",
            EntryKind::Coerced => "coerced",
            EntryKind::Dropped => "dropped",
        }
    }
}

/// One report entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// What happened.
    pub kind: EntryKind,
    /// Where the datum was in the legacy source (absent for defaults).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Where it is in the target (absent for drops).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Why, in words (the rename table's text where a table row applies).
    pub note: Cow<'static, str>,
    /// The value concerned, for drops and defaults; secrets are never recorded here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
}

/// All entries of one conversion, in the order they happened.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LossReport {
    /// The entries.
    pub entries: Vec<Entry>,
}

impl LossReport {
    /// Records an entry.
    pub fn push(
        &mut self,
        kind: EntryKind,
        from: Option<String>,
        to: Option<String>,
        note: impl Into<Cow<'static, str>>,
        value: Option<Value>,
    ) {
        self.entries.push(Entry {
            kind,
            from,
            to,
            note: note.into(),
            value,
        });
    }

    /// Records that the target's `to` got `value`, a default: the source had nothing there.
    pub fn defaulted(
        &mut self,
        to: impl Into<String>,
        note: impl Into<Cow<'static, str>>,
        value: Value,
    ) {
        self.push(
            EntryKind::Defaulted,
            None,
            Some(to.into()),
            note,
            Some(value),
        );
    }

    /// Records that the source's `from`, which held `value`, has no place in the target.
    pub fn dropped(
        &mut self,
        from: impl Into<String>,
        note: impl Into<Cow<'static, str>>,
        value: Value,
    ) {
        self.push(
            EntryKind::Dropped,
            Some(from.into()),
            None,
            note,
            Some(value),
        );
    }

    /// Records the entry a mapping row of the rename table describes, at the row's own paths
    /// (each with `under` appended: a key's escaped pointer, or nothing), so an entry cannot
    /// drift from the row it cites. `note` is the row's note, bare or as the chain cites it.
    pub(crate) fn push_mapping(
        &mut self,
        kind: EntryKind,
        row: &'static Row,
        under: &str,
        note: &'static str,
    ) {
        let Op::Mapping { from, to } = row.op else {
            unreachable!("{} is not a mapping row", row.id)
        };
        let at = |path: &str| Some(join!(path, under));
        self.push(kind, at(from), at(to), note, None);
    }

    /// Whether anything was dropped for good.
    pub fn has_loss(&self) -> bool {
        self.entries.iter().any(|e| e.kind == EntryKind::Dropped)
    }

    /// Number of entries of a kind.
    pub fn count(&self, kind: EntryKind) -> usize {
        self.entries.iter().filter(|e| e.kind == kind).count()
    }

    /// Appends another report's entries.
    pub fn extend(&mut self, other: LossReport) {
        self.entries.extend(other.entries);
    }
}

impl fmt::Display for LossReport {
    /// One line per entry: `moved     /run/execution_context -> /legacy/entries/… (why)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for entry in &self.entries {
            write!(f, "{:<9} ", entry.kind.as_str())?;
            match (&entry.from, &entry.to) {
                (Some(from), Some(to)) => write!(f, "{from} -> {to}")?,
                (Some(from), None) => write!(f, "{from}")?,
                (None, Some(to)) => write!(f, "-> {to}")?,
                (None, None) => {}
            }
            writeln!(f, " ({})", entry.note)?;
        }
        Ok(())
    }
}
