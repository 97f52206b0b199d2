//! Scans a DiskFileStorage directory: what each file is, which versions could have written it,
//! and whether it re-emits byte for byte. Exit code 0 when every file was read, 1 when some were
//! rejected, 2 on a usage or I/O error.
#![allow(
    clippy::print_stdout,
    reason = "a command-line example: its output is what it prints"
)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            json_files(&path, out)?;
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: scan <store-dir>");
        return ExitCode::from(2);
    };
    let mut files = Vec::new();
    if let Err(err) = json_files(&dir, &mut files) {
        eprintln!("error: cannot read {}: {err}", dir.display());
        return ExitCode::from(2);
    }
    let mut rejected = 0;
    for path in &files {
        let shown = path.strip_prefix(&dir).unwrap_or(path).display();
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(err) => {
                eprintln!("error: cannot read {}: {err}", path.display());
                return ExitCode::from(2);
            }
        };
        match planrun_legacy::parse(&bytes) {
            Ok(parsed) => {
                let exact = if parsed.normalizations.is_empty() {
                    "re-emits exactly".to_owned()
                } else {
                    format!(
                        "{} normalisations on re-emission",
                        parsed.normalizations.len()
                    )
                };
                println!(
                    "{shown:<60} {:<10} {:<6} {exact}",
                    parsed.detection.kind.as_str(),
                    parsed.detection.versions.to_string()
                );
            }
            Err(err) => {
                rejected += 1;
                eprintln!("rejected: {}", err.in_file(path));
            }
        }
    }
    println!(
        "{} files, {} read, {rejected} rejected",
        files.len(),
        files.len() - rejected
    );
    if rejected > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
