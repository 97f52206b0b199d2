//! Law 5 under SIGKILL: a migration of ~3000 generated runs, killed at several points (by time
//! and by journal length, and once more during its own resume), then resumed, leaves a DST tree
//! byte-identical to an uninterrupted migration's, with no temp or partial file. At every kill,
//! each run the journal calls `completed` already has its whole output in place.

use crate::migrate_support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use migrate_support::*;
use serde_json::Value;

#[derive(Debug, Clone, Copy)]
enum Kill {
    /// SIGKILL this long after the start.
    After(Duration),
    /// SIGKILL once the journal has this many lines.
    JournalLines(usize),
}

fn journal_lines(dst: &Path) -> usize {
    std::fs::read(dst.join(".planrun/journal.jsonl"))
        .map_or(0, |b| b.iter().filter(|c| **c == b'\n').count())
}

fn spawn(store: &Path, dst: &Path, resume: bool) -> Child {
    let mut cmd = planrun();
    cmd.args(args(&[&"migrate", &store, &"--out", &dst, &"--jobs", &"2"]));
    if resume {
        cmd.arg("--resume");
    }
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Counts a growing journal's lines, reading only what was appended since the last look.
struct LineCounter {
    offset: u64,
    lines: usize,
}

impl LineCounter {
    fn lines(&mut self, dst: &Path) -> usize {
        use std::io::{Read, Seek, SeekFrom};
        if let Ok(mut file) = std::fs::File::open(dst.join(".planrun/journal.jsonl")) {
            let mut fresh = Vec::new();
            if file.seek(SeekFrom::Start(self.offset)).is_ok()
                && file.read_to_end(&mut fresh).is_ok()
            {
                self.offset += fresh.len() as u64;
                self.lines += fresh.iter().filter(|c| **c == b'\n').count();
            }
        }
        self.lines
    }
}

/// Waits for the kill point, then SIGKILLs; whether the process had already exited.
fn kill_at(child: &mut Child, kill: Kill, dst: &Path) -> bool {
    let start = Instant::now();
    let mut counter = LineCounter {
        offset: 0,
        lines: 0,
    };
    loop {
        if child.try_wait().unwrap().is_some() {
            return true;
        }
        let due = match kill {
            Kill::After(after) => start.elapsed() >= after,
            Kill::JournalLines(n) => counter.lines(dst) >= n,
        };
        if due {
            child.kill().unwrap();
            child.wait().unwrap();
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Every run whose last journal line is `completed` has exactly its reference output in place.
fn completed_runs_are_in_place(dst: &Path, reference: &BTreeMap<String, Vec<u8>>) -> usize {
    let Ok(text) = std::fs::read_to_string(dst.join(".planrun/journal.jsonl")) else {
        return 0;
    };
    let mut last: BTreeMap<String, Value> = BTreeMap::new();
    for line in text.lines() {
        // The last line may be torn by the kill.
        let Ok(line) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if line["event"] == "completed" || line["event"] == "failed" {
            last.insert(line["run"].as_str().unwrap().to_owned(), line);
        }
    }
    let mut completed = 0;
    for line in last.values().filter(|l| l["event"] == "completed") {
        let name = format!("{}.json", line["id"].as_str().unwrap());
        let written = std::fs::read(dst.join(&name)).unwrap_or_default();
        assert!(
            Some(&written) == reference.get(&name),
            "{name} is journaled completed but not in place"
        );
        for memory in line["memory"].as_array().unwrap() {
            let rel = memory["path"].as_str().unwrap();
            assert!(
                std::fs::read(dst.join(rel)).ok().as_ref() == reference.get(rel),
                "{rel}"
            );
        }
        completed += 1;
    }
    completed
}

#[test]
fn a_killed_migration_resumes_to_the_bytes_of_an_uninterrupted_one() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let generated = run(args(&[
        &"gen", &"--runs", &"3000", &"--seed", &"5", &"--out", &store,
    ]));
    assert_eq!(code(&generated), 0, "{}", show(&generated));
    let before = fingerprint(&store);

    let reference_dst = tmp.path().join("reference");
    let clock = Instant::now();
    let output = run(args(&[
        &"migrate",
        &store,
        &"--out",
        &reference_dst,
        &"--jobs",
        &"2",
    ]));
    let full = clock.elapsed();
    assert_eq!(code(&output), 0, "{}", show(&output));
    let reference = tree(&reference_dst, &[".planrun"]);
    let reference_report = json(&reference_dst.join(".planrun/report.json"));
    assert_eq!(reference_report["runs"], 3000);
    let total_lines = journal_lines(&reference_dst);
    eprintln!(
        "uninterrupted: {} ms, {} journal lines, {} files",
        full.as_millis(),
        total_lines,
        reference.len()
    );

    let ms = Duration::from_millis;
    let scenarios: Vec<Vec<Kill>> = vec![
        vec![Kill::After(ms(50))],
        vec![Kill::After(ms(150))],
        vec![Kill::After(ms(400))],
        vec![Kill::JournalLines(300)],
        vec![Kill::JournalLines(total_lines / 2)],
        vec![Kill::JournalLines(total_lines - 100)],
        // After the last journal line: during the verify pass or the report.
        vec![Kill::JournalLines(total_lines)],
        // The resume is killed as well.
        vec![
            Kill::JournalLines(total_lines / 4),
            Kill::JournalLines(total_lines * 3 / 4),
        ],
    ];
    for (n, kills) in scenarios.iter().enumerate() {
        let dst = tmp.path().join(format!("crash-{n}"));
        let mut log = Vec::new();
        for (k, kill) in kills.iter().enumerate() {
            let clock = Instant::now();
            let mut child = spawn(&store, &dst, k > 0);
            let finished = kill_at(&mut child, *kill, &dst);
            let completed = completed_runs_are_in_place(&dst, &reference);
            log.push(format!(
                "{kill:?}: {} after {} ms, {} journal lines, {completed} runs completed",
                if finished { "finished" } else { "killed" },
                clock.elapsed().as_millis(),
                journal_lines(&dst),
            ));
        }
        let clock = Instant::now();
        let resumed = run(args(&[
            &"migrate",
            &store,
            &"--out",
            &dst,
            &"--jobs",
            &"2",
            &"--resume",
        ]));
        assert_eq!(
            code(&resumed),
            0,
            "scenario {n} {log:?}: {}",
            show(&resumed)
        );
        log.push(format!("resume: {} ms", clock.elapsed().as_millis()));
        eprintln!("scenario {n}: {}", log.join("; "));
        let got = tree(&dst, &[".planrun"]);
        assert!(
            got == reference,
            "scenario {n} {log:?}: {}",
            first_difference(&reference, &got)
        );
        assert_eq!(temp_files(&dst), Vec::<String>::new(), "scenario {n}");
        let report = json(&dst.join(".planrun/report.json"));
        assert_eq!(
            outcomes(&report),
            outcomes(&reference_report),
            "scenario {n}"
        );
        assert_eq!(
            report["entries"], reference_report["entries"],
            "scenario {n}"
        );
        assert_eq!(report["verified"], 3000);
    }

    // Stale temp files (of this shard; any process) and a torn journal tail are cleaned up.
    let dst = tmp.path().join("crash-0");
    let memory_dir = std::fs::read_dir(&dst)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir() && !p.ends_with(".planrun"))
        .expect("the store has agent memory");
    for stale in [
        dst.join(".tmp-planrun-all-1-0"),
        memory_dir.join(".tmp-planrun-all-2-5"),
        dst.join(".planrun/.tmp-planrun-all-3-1"),
    ] {
        std::fs::write(stale, b"{\"half\": ").unwrap();
    }
    let sibling = dst.join(".tmp-planrun-0-of-2-1-0");
    std::fs::write(&sibling, b"a shard's").unwrap();
    let mut journal = std::fs::OpenOptions::new()
        .append(true)
        .open(dst.join(".planrun/journal.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut journal, br#"{"event":"completed","run":"prun-"#).unwrap();
    drop(journal);
    let resumed = run(args(&[&"migrate", &store, &"--out", &dst, &"--resume"]));
    assert_eq!(code(&resumed), 0, "{}", show(&resumed));
    let said = String::from_utf8_lossy(&resumed.stdout);
    assert!(said.contains("resumed: 3000 runs up to date (inputs unchanged, outputs verified, skipped), 3 stale temp files removed, a torn journal line cut off"), "{said}");
    assert_eq!(
        temp_files(&dst),
        vec![".tmp-planrun-0-of-2-1-0".to_owned()],
        "only this shard's temps are removed"
    );
    std::fs::remove_file(sibling).unwrap();
    assert!(tree(&dst, &[".planrun"]) == reference);

    // A damaged line in the middle of the journal whose head still reads (its rest does not):
    // the journal ends before it, so the runs it and the later lines settled are converted
    // again, and DST is still the reference.
    let journal_path = dst.join(".planrun/journal.jsonl");
    let text = std::fs::read_to_string(&journal_path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (at, _) = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with(r#"{"event":"completed","run":""#))
        .nth(2000)
        .expect("3000 completed lines");
    let later = lines[at..]
        .iter()
        .filter(|l| l.starts_with(r#"{"event":"completed""#))
        .count();
    let mut damaged: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    damaged[at] = damaged[at].replacen(r#""class":""#, r#""class":"x"#, 1);
    assert_ne!(damaged[at], lines[at]);
    std::fs::write(&journal_path, damaged.join("\n") + "\n").unwrap();
    let resumed = run(args(&[&"migrate", &store, &"--out", &dst, &"--resume"]));
    assert_eq!(code(&resumed), 0, "{}", show(&resumed));
    let said = String::from_utf8_lossy(&resumed.stdout);
    assert!(said.contains("a torn journal line cut off"), "{said}");
    let report = json(&dst.join(".planrun/report.json"));
    assert_eq!(report["catch_up"]["new"], later as u64, "{report}");
    assert_eq!(report["verified"], 3000);
    assert!(tree(&dst, &[".planrun"]) == reference);

    // A completed output that was damaged afterwards is redone on resume.
    let victim = dst.join(
        reference
            .keys()
            .find(|k| k.ends_with(".json") && !k.contains('/'))
            .unwrap(),
    );
    std::fs::write(&victim, b"{}").unwrap();
    let resumed = run(args(&[&"migrate", &store, &"--out", &dst, &"--resume"]));
    assert_eq!(code(&resumed), 0, "{}", show(&resumed));
    assert!(
        String::from_utf8_lossy(&resumed.stdout).contains("resumed: 2999 runs up to date"),
        "{}",
        show(&resumed)
    );
    assert!(tree(&dst, &[".planrun"]) == reference);

    assert_eq!(fingerprint(&store), before, "SRC changed");
}
