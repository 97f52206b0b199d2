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

/// For run file names sorted in byte order: the earlier name each one conflicts with, if any.
/// Two runs conflict when they map to the same V2 id (`wkfl-X.json` and `prun-X.json`); the name
/// that sorts first wins.
pub fn conflicts(sorted_runs: &[String]) -> Vec<Option<usize>> {
    let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    sorted_runs
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let key = run_key(name)?;
            if let Some(&winner) = first.get(key) {
                Some(winner)
            } else {
                first.insert(key, i);
                None
            }
        })
        .collect()
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
        let names: Vec<String> = ["pr-a.json", "prun-a.json", "prun-b.json", "wkfl-a.json"]
            .map(String::from)
            .to_vec();
        assert_eq!(conflicts(&names), vec![None, Some(0), None, Some(0)]);
    }
}
