//! What `--help` of each verb ends with: two or three commands to start from (runnable from a
//! clone, on the example store) and the exit codes.

/// `convert`.
pub(crate) const CONVERT: &str = "\
Examples:
  planrun convert examples/store/prun-4c8f0e3b-5d6a-4b7c-9e8f-0a1b2c3d4e5f.json
  planrun convert - --store examples/store < runs.jsonl > runs-v2.jsonl
  planrun --format json convert examples/store/wkfl-3b7e9d2a-4c5f-4a6b-8d7e-9f0a1b2c3d4e.json

Exit codes:
  0  converted (or already current)
  1  rejected or blocked (the reason is on stderr)
  2  usage or I/O error";

/// `migrate`.
pub(crate) const MIGRATE: &str = "\
Examples:
  planrun migrate examples/store --out /tmp/store-v2
  planrun migrate examples/store --out /tmp/store-head --to r6
  planrun migrate examples/store --out /tmp/store-v2 --resume --dry-run

Exit codes:
  0  every run converted or already current (and, on a resume, no conflict)
  1  some runs rejected, blocked or in flux, or outputs someone else changed kept (see the report)
  2  usage or I/O error, DST not new with nothing to resume, or the verify pass failed";

/// `report`.
pub(crate) const REPORT: &str = "\
Examples:
  planrun report merge /tmp/store-v2/.planrun/report-*-of-8.json
  planrun --format json report merge DST/.planrun/report-0-of-2.json DST/.planrun/report-1-of-2.json

Exit codes:
  0  merged; no run rejected or blocked
  1  merged; some runs rejected or blocked
  2  usage or I/O error, or reports that do not belong together";

/// `detect`.
pub(crate) const DETECT: &str = "\
Examples:
  planrun detect examples/store
  planrun --format json detect examples/store/plan-0a6f3c1e-2b4d-4e8f-9a0b-1c2d3e4f5a60.json

Exit codes:
  0  every file is a document planrun reads
  1  some file is not a legacy or V2 document
  2  usage or I/O error";

/// `check`.
pub(crate) const CHECK: &str = "\
Examples:
  planrun check examples/store
  planrun check examples/store --sdk v0.3.0
  planrun --format json check /tmp/store-head

Exit codes:
  0  that SDK loads every file
  1  some file would fail to load
  2  usage or I/O error";

/// `downgrade`.
pub(crate) const DOWNGRADE: &str = "\
Examples:
  planrun downgrade /tmp/store-v2 --out-dir /tmp/store-head
  planrun downgrade /tmp/store-v2/prun-4c8f0e3b-5d6a-4b7c-9e8f-0a1b2c3d4e5f.json --out-dir /tmp/one

Exit codes:
  0  written
  1  refused (it would drop what HEAD cannot hold; --allow-loss) or blocked
  2  usage or I/O error";

/// `versions`, `renames`, `schema`: no run is judged.
pub(crate) const TOOL: &str = "\
Examples:
  planrun versions
  planrun renames --markdown
  planrun schema export --out /tmp/schemas

Exit codes:
  0  done
  2  usage or I/O error";

/// `diff`.
pub(crate) const DIFF: &str = "\
Examples:
  planrun diff examples/store/plan-0a6f3c1e-2b4d-4e8f-9a0b-1c2d3e4f5a60.json examples/store/plan-1b7a4d2f-3c5e-4f90-8b1c-2d3e4f5a6b71.json
  planrun --format json diff a.json b.json

Exit codes:
  0  the documents are equal
  1  the documents differ
  2  usage or I/O error";

/// `validate`.
pub(crate) const VALIDATE: &str = "\
Examples:
  planrun validate /tmp/store-v2
  planrun validate examples/store/prun-4c8f0e3b-5d6a-4b7c-9e8f-0a1b2c3d4e5f.json --schema legacy/run.R1.schema.json

Exit codes:
  0  every document is valid
  1  some document is invalid
  2  usage or I/O error";

/// `gen`.
pub(crate) const GEN: &str = "\
Examples:
  planrun gen --runs 1000 --out /tmp/rehearsal
  planrun gen --runs 5000 --versions W1,R3,R6 --history --out /tmp/history

Exit codes:
  0  written
  2  usage or I/O error (OUT not new or empty)";
