//! `planrun check`: every file of a store judged as the SDK of one version would load it
//! ([`planrun_legacy::sdk::check`]), and the one JSON form of each verdict.

use std::io;
use std::path::{Path, PathBuf};

use planrun_legacy::sdk::Verdict;
use planrun_legacy::{Normalization, Version};
use serde_json::{json, Value};

use crate::migrate::CONTROL_DIR;

/// One file and what the SDK would do with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// The file.
    pub path: PathBuf,
    /// The SDK's verdict.
    pub verdict: Verdict,
}

impl Checked {
    /// `{"path", "loads", "fails", "changes_on_save"}`: one line of `planrun --format json check`.
    /// A file that SDK never reads has `"loads": null` and says why under `"unread"`.
    pub fn to_json(&self) -> Value {
        let mut line = json!({
            "path": self.path,
            "loads": self.verdict.fails.is_empty(),
            "fails": self.verdict.fails,
            "changes_on_save": self.verdict.changes.iter().map(change_json).collect::<Vec<_>>(),
        });
        if let Some(why) = &self.verdict.unread {
            line["loads"] = Value::Null;
            line["unread"] = why.as_str().into();
        }
        line
    }
}

/// Every JSON file under each of `paths` (each one itself if it is a file), sorted, without
/// `.planrun/`, judged as the SDK of `sdk` would load it. An I/O error names its path.
pub fn check_paths(paths: &[PathBuf], sdk: Version) -> Result<Vec<Checked>, (io::Error, PathBuf)> {
    let mut files = Vec::new();
    for path in paths {
        json_files(path, &mut files).map_err(|e| (e, path.clone()))?;
    }
    files.retain(|f| !f.components().any(|c| c.as_os_str() == CONTROL_DIR));
    files
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).map_err(|e| (e, path.clone()))?;
            let verdict = planrun_legacy::sdk::check(&bytes, in_run_dir(&path), sdk);
            Ok(Checked { path, verdict })
        })
        .collect()
}

/// Every `.json` file under `path` (itself if it is a file), sorted; symlinks are not followed.
pub fn json_files(path: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    if meta.is_file() {
        out.push(path.to_owned());
    } else if meta.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            let child = entry.path();
            let kind = entry.file_type()?;
            if kind.is_dir() || (kind.is_file() && child.extension().is_some_and(|e| e == "json")) {
                json_files(&child, out)?;
            }
        }
    }
    Ok(())
}

/// Whether `file` is `<run id>/<output name>.json`: an agent-memory file.
fn in_run_dir(file: &Path) -> bool {
    file.parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("prun-"))
}

/// A change HEAD makes on a save, in the JSON form of a verdict.
fn change_json(change: &Normalization) -> Value {
    match change {
        Normalization::Defaulted { pointer, value } => {
            json!({"kind": "defaulted", "pointer": pointer, "value": value})
        }
        Normalization::Dropped { pointer, value } => {
            json!({"kind": "dropped", "pointer": pointer, "value": value})
        }
        Normalization::Coerced { pointer, from, to } => {
            json!({"kind": "coerced", "pointer": pointer, "from": from, "to": to})
        }
        Normalization::Reformatted => json!({"kind": "reformatted"}),
    }
}
