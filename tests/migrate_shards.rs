//! Sharding, without a cluster: N shard processes (N = 2, 3, 8) started at the same moment on
//! one DST, random shards SIGKILLed and restarted with `--resume` until every shard finishes.
//! The final tree is byte for byte a single migration's; a second process on a running shard
//! is refused (the journal's flock) without touching that shard's journal; no shard removes
//! another shard's temp files or writes another shard's journal. And the two cluster examples
//! of docs/migration.md (a Kubernetes indexed Job, a Slurm array) run one and the same command
//! line.
//!
//! The kills are seeded: `PLANRUN_SHARD_SEEDS=7,8,9` replays (or adds) seeds; by default three
//! fixed seeds run. A failure names its seed.

use crate::migrate_support;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use migrate_support::*;
use planrun_store::migrate::Shard;
use serde_json::Value;

/// Runs in the generated store: a few chunks per shard at N = 2, less than one at N = 8.
const RUNS: usize = 2500;
const DEFAULT_SEEDS: [u64; 3] = [1, 2, 3];
const SHARD_COUNTS: [u64; 3] = [2, 3, 8];
/// A scenario that has not finished by then has hung.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(180);
const REFUSED: &str = "another planrun migrate is working on this shard of DST";

/// splitmix64: small, seedable, and the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn millis(&mut self, from: u64, to: u64) -> Duration {
        Duration::from_millis(from + self.below(to - from + 1))
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

fn seeds() -> Vec<u64> {
    match std::env::var("PLANRUN_SHARD_SEEDS") {
        Ok(text) if !text.trim().is_empty() => text
            .split([',', ' '])
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse()
                    .unwrap_or_else(|_| panic!("PLANRUN_SHARD_SEEDS: bad seed {s:?}"))
            })
            .collect(),
        _ => DEFAULT_SEEDS.to_vec(),
    }
}

/// Runs `planrun` to the end, killing it after `limit`: a hang fails the test instead of CI.
fn run_for(limit: Duration, mut cmd: Command) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drain the pipes on their own threads, so a chatty child never blocks on a full pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut bytes).map(|_| bytes)
    });
    let err = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut bytes).map(|_| bytes)
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output {
        status,
        stdout: out.join().unwrap().unwrap(),
        stderr: err.join().unwrap().unwrap(),
    }
}

/// `planrun` with `args`, for at most two minutes.
fn run_limited(args: &[std::ffi::OsString]) -> Output {
    let mut cmd = planrun();
    cmd.args(args);
    run_for(Duration::from_secs(120), cmd)
}

/// The store, its run names and a single-process migration of it.
struct Fixture {
    store: PathBuf,
    names: Vec<String>,
    reference: BTreeMap<String, Vec<u8>>,
    reference_report: Value,
}

fn fixture(tmp: &Path) -> Fixture {
    let store = tmp.join("store");
    let generated = run_limited(&args(&[
        &"gen",
        &"--runs",
        &RUNS.to_string(),
        &"--seed",
        &"15",
        &"--out",
        &store,
        &"-q",
    ]));
    assert_eq!(code(&generated), 0, "{}", show(&generated));
    let reference_dst = tmp.join("reference");
    let output = run_limited(&args(&[
        &"migrate",
        &store,
        &"--out",
        &reference_dst,
        &"--jobs",
        &"2",
        &"-q",
    ]));
    assert_eq!(code(&output), 0, "{}", show(&output));
    let reference_report = json(&reference_dst.join(".planrun/report.json"));
    assert_eq!(reference_report["runs"], RUNS);
    Fixture {
        names: run_files(&store),
        reference: tree(&reference_dst, &[".planrun"]),
        reference_report,
        store,
    }
}

/// One shard's processes over a scenario.
struct Worker {
    shard: Shard,
    journal: PathBuf,
    /// The run names of the shard.
    runs: BTreeSet<String>,
    child: Option<Child>,
    /// Processes started (the refused duplicates aside).
    starts: usize,
    /// Session lines the journal had when the current process started (its predecessors dead):
    /// once it has more, the current process holds the journal's lock.
    sessions_at_start: usize,
    /// When a killed shard is to be started again.
    restart_at: Option<Instant>,
    /// When the process that finished the shard was started.
    last_start: Instant,
    finished: bool,
    kills: usize,
}

fn journal_text(path: &Path) -> String {
    std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

fn sessions(text: &str) -> usize {
    text.matches(r#""event":"session""#).count()
}

/// The runs that have a `completed` or `failed` line (a torn last line aside).
fn settled(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line["event"] == "completed" || line["event"] == "failed")
        .filter_map(|line| line["run"].as_str().map(str::to_owned))
        .collect()
}

fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill {signal} {pid}");
}

/// Stops process `pid` and waits until every one of its threads is stopped: `kill` returns once
/// the signal is sent, and a thread on another core may still finish a journal write after.
fn stop(pid: u32) {
    signal(pid, "-STOP");
    let tasks = PathBuf::from(format!("/proc/{pid}/task"));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let all_stopped = std::fs::read_dir(&tasks).map_or(true, |entries| {
            entries.flatten().all(|task| {
                std::fs::read_to_string(task.path().join("stat")).map_or(true, |stat| {
                    // The state follows the command name's closing parenthesis.
                    stat.rsplit_once(") ")
                        .is_some_and(|(_, rest)| rest.starts_with(['T', 't', 'Z', 'X']))
                })
            })
        });
        if all_stopped || Instant::now() > deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The shards of one scenario, all on one DST. Dropping it kills whatever still runs.
struct Scenario<'a> {
    fixture: &'a Fixture,
    seed: u64,
    dst: PathBuf,
    logs: PathBuf,
    workers: Vec<Worker>,
    rng: Rng,
    log: Vec<String>,
}

impl Drop for Scenario<'_> {
    fn drop(&mut self) {
        for worker in &mut self.workers {
            if let Some(mut child) = worker.child.take() {
                let _ = Command::new("kill")
                    .args(["-CONT", &child.id().to_string()])
                    .status();
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        if std::thread::panicking() {
            eprintln!(
                "FAILED: seed {} with {} shards; replay with PLANRUN_SHARD_SEEDS={}\n  {}",
                self.seed,
                self.workers.len(),
                self.seed,
                self.log.join("\n  ")
            );
        }
    }
}

impl Scenario<'_> {
    fn what(&self) -> String {
        format!("seed {}, {} shards", self.seed, self.workers.len())
    }

    fn command(&self, shard: Shard, resume: bool, jobs: u64) -> Command {
        let mut cmd = planrun();
        cmd.args(args(&[
            &"migrate",
            &self.fixture.store,
            &"--out",
            &self.dst,
            &"--shard",
            &shard.to_string(),
            &"--jobs",
            &jobs.to_string(),
            &"-q",
        ]));
        if resume {
            cmd.arg("--resume");
        }
        cmd
    }

    fn start(&mut self, i: usize, resume: bool) {
        let jobs = 1 + self.rng.below(2);
        let worker = &self.workers[i];
        let log_path = self
            .logs
            .join(format!("{}-{}.log", worker.shard.index, worker.starts));
        let log = File::create(&log_path).unwrap();
        // Read before the spawn: every earlier process of the shard is dead by now.
        let sessions_at_start = sessions(&journal_text(&worker.journal));
        let child = self
            .command(worker.shard, resume, jobs)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let worker = &mut self.workers[i];
        worker.sessions_at_start = sessions_at_start;
        worker.child = Some(child);
        worker.starts += 1;
        worker.restart_at = None;
        worker.last_start = Instant::now();
    }

    /// Reaps finished processes: a shard must end with exit 0 (a generated store has no
    /// rejected or blocked runs), and nothing else may end it.
    fn reap(&mut self) {
        for worker in &mut self.workers {
            let Some(child) = worker.child.as_mut() else {
                continue;
            };
            if let Some(status) = child.try_wait().unwrap() {
                let log =
                    self.logs
                        .join(format!("{}-{}.log", worker.shard.index, worker.starts - 1));
                assert_eq!(
                    status.code(),
                    Some(0),
                    "seed {}: shard {} ended with {status}: {}",
                    self.seed,
                    worker.shard,
                    std::fs::read_to_string(log).unwrap_or_default()
                );
                worker.child = None;
                worker.finished = true;
            }
        }
    }

    /// SIGKILLs a random running shard, to be restarted with `--resume` soon.
    fn kill_one(&mut self) -> bool {
        let running: Vec<usize> = (0..self.workers.len())
            .filter(|&i| self.workers[i].child.is_some())
            .collect();
        if running.is_empty() {
            return false;
        }
        let i = running[self.rng.below(running.len() as u64) as usize];
        let delay = self.rng.millis(0, 150);
        let worker = &mut self.workers[i];
        let mut child = worker.child.take().unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        let text = journal_text(&worker.journal);
        self.log.push(format!(
            "SIGKILL shard {} (start {}) at {} of {} runs settled, {} journal lines; restart in {} ms",
            worker.shard,
            worker.starts,
            settled(&text).len(),
            worker.runs.len(),
            text.lines().count(),
            delay.as_millis()
        ));
        worker.kills += 1;
        worker.restart_at = Some(Instant::now() + delay);
        true
    }

    /// While shard `i`'s process holds its lock (it has written its session line) and has work
    /// left, a second process on the same shard must be refused (exit 2) and must not change
    /// the journal. The holder is stopped meanwhile, so it can neither finish nor let go.
    /// Whether the check could be made now.
    fn check_refusal(&mut self, i: usize) -> bool {
        let worker = &self.workers[i];
        let Some(child) = worker.child.as_ref() else {
            return false;
        };
        if sessions(&journal_text(&worker.journal)) <= worker.sessions_at_start {
            return false;
        }
        let pid = child.id();
        stop(pid);
        let before = journal_text(&worker.journal);
        let has_work_left = settled(&before).len() < worker.runs.len();
        let alive = self.workers[i]
            .child
            .as_mut()
            .unwrap()
            .try_wait()
            .unwrap()
            .is_none();
        if !alive || !has_work_left {
            signal(pid, "-CONT");
            return false;
        }
        let shard = self.workers[i].shard;
        // (A hang panics, and the holder is continued and killed when the scenario is dropped.)
        let output = run_for(Duration::from_secs(60), self.command(shard, true, 1));
        let after = journal_text(&self.workers[i].journal);
        signal(pid, "-CONT");
        assert_eq!(
            output.status.code(),
            Some(2),
            "{}: a second process on running shard {shard} was not refused: {}",
            self.what(),
            show(&output)
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(REFUSED), "{}: {stderr}", self.what());
        assert!(
            before == after,
            "{}: the refused process changed shard {shard}'s journal",
            self.what()
        );
        self.log.push(format!(
            "a second process on shard {shard} was refused ({} of {} runs settled)",
            settled(&before).len(),
            self.workers[i].runs.len()
        ));
        true
    }
}

impl Scenario<'_> {
    /// Whether decoy temp files may be planted now: every shard's journal exists (a fresh shard
    /// refuses a DST holding files that no sibling journal explains), and every running process
    /// has written its session line, so it is past its removal of stale temp files.
    fn may_plant(&self) -> bool {
        self.workers.iter().all(|w| {
            let text = journal_text(&w.journal);
            text.starts_with(r#"{"event":"header""#)
                && (w.child.is_none() || sessions(&text) > w.sessions_at_start)
        })
    }

    /// Plants a decoy temp file of every shard; when.
    fn plant(&mut self) -> Instant {
        for worker in &self.workers {
            std::fs::write(decoy(&self.dst, worker.shard), worker.shard.tag()).unwrap();
        }
        self.log
            .push("planted a temp file of every shard".to_owned());
        Instant::now()
    }
}

/// Temp files named for every shard, planted in DST while the shards run: a shard may remove
/// only its own (on resume), never another's.
fn decoy(dst: &Path, shard: Shard) -> PathBuf {
    dst.join(format!(".tmp-planrun-{}-4000000-0", shard.tag()))
}

fn scenario(fixture: &Fixture, tmp: &Path, seed: u64, count: u64) {
    let clock = Instant::now();
    let dst = tmp.join(format!("dst-{seed}-{count}"));
    let logs = tmp.join(format!("logs-{seed}-{count}"));
    std::fs::create_dir_all(&logs).unwrap();
    let workers = (0..count)
        .map(|index| {
            let shard = Shard { index, count };
            Worker {
                shard,
                journal: dst.join(format!(".planrun/journal-{}.jsonl", shard.tag())),
                runs: fixture
                    .names
                    .iter()
                    .filter(|n| shard.owns(n))
                    .cloned()
                    .collect(),
                child: None,
                starts: 0,
                sessions_at_start: 0,
                restart_at: None,
                last_start: clock,
                finished: false,
                kills: 0,
            }
        })
        .collect();
    let mut s = Scenario {
        fixture,
        seed,
        dst: dst.clone(),
        logs,
        workers,
        rng: Rng(seed.wrapping_mul(0x0100_0000_01b3) ^ count),
        log: Vec::new(),
    };

    // All at once; a fresh shard may or may not pass --resume (a retried job always does).
    for i in 0..s.workers.len() {
        let resume = s.rng.chance(50);
        s.start(i, resume);
    }
    let mut kills_left = 1 + s.rng.below(2 * count);
    let mut next_kill = Instant::now() + s.rng.millis(20, 300);
    let mut refused = false;
    let mut planted: Option<Instant> = None;
    let plant_at = clock + s.rng.millis(0, 400);
    loop {
        assert!(
            clock.elapsed() < SCENARIO_TIMEOUT,
            "{}: not finished after {:?}",
            s.what(),
            SCENARIO_TIMEOUT
        );
        s.reap();
        let now = Instant::now();
        for i in 0..s.workers.len() {
            if s.workers[i].restart_at.is_some_and(|at| at <= now) {
                s.start(i, true);
            }
        }
        if !refused {
            let i = s.rng.below(count) as usize;
            refused = s.check_refusal(i);
        }
        if planted.is_none() && now >= plant_at && s.may_plant() {
            planted = Some(s.plant());
        }
        if kills_left > 0 && now >= next_kill {
            if s.kill_one() {
                kills_left -= 1;
            }
            next_kill = now + s.rng.millis(10, 400);
        }
        if s.workers.iter().all(|w| w.finished) {
            break;
        }
        std::thread::sleep(Duration::from_millis(3));
    }
    // (Should every shard have finished first, every decoy must survive.)
    let planted = planted.unwrap_or_else(|| s.plant());
    let what = s.what();
    assert!(
        refused,
        "{what}: no shard could be caught running to try a second process on it"
    );

    // A shard removes its own stale temp files when it resumes, and never another's: the decoy
    // of a shard whose last process started after the planting is gone, every other one intact.
    for worker in &s.workers {
        let path = decoy(&dst, worker.shard);
        let resumed_after = worker.last_start > planted;
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                assert!(
                    !resumed_after,
                    "{what}: shard {} resumed but left its stale temp file",
                    worker.shard
                );
                assert_eq!(text, worker.shard.tag(), "{what}: a temp file was changed");
                std::fs::remove_file(&path).unwrap();
            }
            Err(_) => assert!(
                resumed_after,
                "{what}: shard {}'s temp file was removed by another shard",
                worker.shard
            ),
        }
    }

    let got = tree(&dst, &[".planrun"]);
    assert!(
        got == fixture.reference,
        "{what}: {}",
        first_difference(&fixture.reference, &got)
    );
    assert_eq!(temp_files(&dst), Vec::<String>::new(), "{what}");

    // Each journal is its own shard's, complete, with one session per process that got its lock.
    let mut control: Vec<String> = std::fs::read_dir(dst.join(".planrun"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    control.sort();
    let mut expected: Vec<String> = s
        .workers
        .iter()
        .flat_map(|w| {
            [
                format!("journal-{}.jsonl", w.shard.tag()),
                format!("report-{}.json", w.shard.tag()),
            ]
        })
        .collect();
    expected.sort();
    assert_eq!(control, expected, "{what}");
    for worker in &s.workers {
        let text = journal_text(&worker.journal);
        let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(header["shard"], worker.shard.to_string(), "{what}");
        let foreign = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|l| {
                l["run"]
                    .as_str()
                    .is_some_and(|run| !worker.runs.contains(run))
            })
            .count();
        assert_eq!(
            foreign, 0,
            "{what}: shard {}'s journal names runs of other shards",
            worker.shard
        );
        assert!(
            settled(&text) == worker.runs,
            "{what}: shard {}'s journal does not settle exactly its runs",
            worker.shard
        );
        let n = sessions(&text);
        assert!(
            (1..=worker.starts).contains(&n),
            "{what}: shard {}: {n} sessions from {} processes",
            worker.shard,
            worker.starts
        );
    }

    // The merge of the shard reports that docs/migration.md shows gives the single migration's
    // counts.
    let reports: Vec<PathBuf> = s
        .workers
        .iter()
        .map(|w| dst.join(format!(".planrun/report-{}.json", w.shard.tag())))
        .collect();
    let merged_path = tmp.join(format!("merged-{seed}-{count}.json"));
    let mut merge = planrun();
    merge.args(["report", "merge", "--out"]).arg(&merged_path);
    merge.args(&reports);
    let output = run_for(Duration::from_secs(60), merge);
    assert_eq!(code(&output), 0, "{what}: {}", show(&output));
    let merged = json(&merged_path);
    assert_eq!(merged["runs"], RUNS, "{what}");
    assert_eq!(
        outcomes(&merged),
        outcomes(&fixture.reference_report),
        "{what}"
    );

    let kills: usize = s.workers.iter().map(|w| w.kills).sum();
    let starts: usize = s.workers.iter().map(|w| w.starts).sum();
    eprintln!(
        "{what}: {kills} SIGKILLs, {starts} processes, {} ms",
        clock.elapsed().as_millis()
    );
    std::fs::remove_dir_all(&dst).unwrap();
}

#[test]
fn concurrent_shards_killed_and_resumed_give_the_bytes_of_one_migration() {
    let tmp = tempfile::tempdir().unwrap();
    let fixture = fixture(tmp.path());
    let seeds = seeds();
    eprintln!("seeds {seeds:?} (PLANRUN_SHARD_SEEDS)");
    for seed in seeds {
        for count in SHARD_COUNTS {
            scenario(&fixture, tmp.path(), seed, count);
        }
    }
}

/// The fenced code blocks of one section of a guide: (info string, body).
fn code_blocks(section: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in section.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => open = Some((info.trim().to_owned(), String::new())),
            (Some(_), Some("")) => blocks.push(open.take().unwrap()),
            (Some((_, body)), _) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    blocks
}

/// A shell command line as words: quotes removed, `\`-newline continuations joined. Enough for
/// the guide's one-liners (no expansions are performed; `$X` stays as written).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, '\\') if chars.peek() == Some(&'\n') => {
                chars.next();
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (_, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    assert!(quote.is_none(), "unclosed quote in {line:?}");
    words.extend(word);
    words
}

/// A guide's worker command, `planrun migrate … || [ $? -eq 1 ]`, with its paths and the
/// scheduler's variables replaced by what they stand for: `SRC`, `DST`, `INDEX`, and the given
/// shard count and job count for the variables that hold them.
fn normalised(line: &str, src: &str, dst: &str, vars: &[(&str, &str)]) -> Vec<String> {
    let mut text = line.to_owned();
    for (var, value) in vars {
        text = text.replace(var, value);
    }
    shell_words(&text)
        .into_iter()
        .map(|w| {
            if w == src {
                "SRC".to_owned()
            } else if w == dst {
                "DST".to_owned()
            } else {
                w
            }
        })
        .collect()
}

#[test]
fn the_migration_guide_kubernetes_job_and_slurm_array_run_the_same_command() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let guide = std::fs::read_to_string(root.join("docs/migration.md")).unwrap();
    let start = guide
        .find("\n## Sharding\n")
        .expect("a Sharding section in docs/migration.md");
    let section = &guide[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let blocks = code_blocks(section);
    let yaml = &blocks
        .iter()
        .find(|(info, _)| info == "yaml")
        .expect("a yaml block")
        .1;
    let slurm = &blocks
        .iter()
        .find(|(info, body)| {
            // `sh no-run`: the snippet check of the guides does not run it (it needs a cluster).
            info.split_whitespace().next() == Some("sh") && body.starts_with("#!/bin/bash\n")
        })
        .expect("a Slurm batch script")
        .1;

    // The Job, as Kubernetes reads it.
    let job: serde_norway::Value = serde_norway::from_str(yaml).expect("the Job is YAML");
    assert_eq!(job["apiVersion"].as_str(), Some("batch/v1"));
    assert_eq!(job["kind"].as_str(), Some("Job"));
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"));
    let completions = spec["completions"].as_u64().expect("completions");
    assert!(
        spec["backoffLimit"].as_u64().unwrap_or(0) > 0,
        "retries resume"
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"].as_str(), Some("Never"));
    let containers = pod["containers"].as_sequence().expect("containers");
    assert_eq!(containers.len(), 1);
    let container = &containers[0];
    assert_eq!(
        container["image"].as_str(),
        Some("registry.example.com/planrun:0.1"),
        "the image the Dockerfile builds"
    );
    let command: Vec<&str> = container["command"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(command, ["sh", "-c"]);
    let k8s_args = container["args"].as_sequence().unwrap();
    assert_eq!(k8s_args.len(), 1);
    let k8s_line = k8s_args[0].as_str().unwrap();
    let cpus = container["resources"]["requests"]["cpu"]
        .as_str()
        .expect("a CPU request");
    let mount = container["volumeMounts"][0]["mountPath"].as_str().unwrap();

    // The Slurm script: its #SBATCH options and its one command (continuations joined).
    let mut sbatch = BTreeMap::new();
    let mut slurm_line = String::new();
    for line in slurm.replace("\\\n", " ").lines() {
        if let Some(option) = line.strip_prefix("#SBATCH ") {
            let (key, value) = option.split_once('=').unwrap_or((option, ""));
            sbatch.insert(key.to_owned(), value.to_owned());
        } else if !line.starts_with('#') && !line.trim().is_empty() {
            assert!(slurm_line.is_empty(), "one command in the Slurm script");
            slurm_line = line.to_owned();
        }
    }
    assert!(
        sbatch.contains_key("--requeue"),
        "a killed task can be requeued"
    );
    let (first, last) = sbatch["--array"].split_once('-').expect("--array=0-K");
    let tasks = last.parse::<u64>().unwrap() + 1 - first.parse::<u64>().unwrap();
    assert_eq!(tasks, completions, "as many array tasks as Job completions");

    let k8s = normalised(
        k8s_line,
        &format!("{mount}/portia"),
        &format!("{mount}/portia-v2"),
        &[("$JOB_COMPLETION_INDEX", "INDEX")],
    );
    let count = tasks.to_string();
    let slurm_argv = normalised(
        &slurm_line,
        "/shared/portia",
        "/shared/portia-v2",
        &[
            ("${SLURM_ARRAY_TASK_ID}", "INDEX"),
            ("${SLURM_ARRAY_TASK_COUNT}", &count),
            ("$SLURM_CPUS_PER_TASK", &sbatch["--cpus-per-task"]),
        ],
    );
    assert_eq!(
        k8s, slurm_argv,
        "the Job and the Slurm array run different commands"
    );
    let expected_shard = format!("INDEX/{completions}");
    let expected: Vec<&str> = vec![
        "planrun",
        "migrate",
        "SRC",
        "--out",
        "DST",
        "--shard",
        &expected_shard,
        "--resume",
        "--jobs",
        cpus,
        "||",
        "[",
        "$?",
        "-eq",
        "1",
        "]",
    ];
    assert_eq!(k8s, expected);

    // The binary runs the command line as it stands (shard 0 of the example store).
    let dst = tempfile::tempdir().unwrap();
    let argv: Vec<std::ffi::OsString> = k8s[1..k8s.len() - 6]
        .iter()
        .map(|w| match w.as_str() {
            "SRC" => example_store().into_os_string(),
            "DST" => dst.path().join("v2").into_os_string(),
            w => w.replace("INDEX", "0").into(),
        })
        .collect();
    let output = run_limited(&argv);
    assert!(
        matches!(code(&output), 0 | 1),
        "{argv:?}: {}",
        show(&output)
    );

    // The image it names is the repository's Dockerfile: planrun on PATH, and a shell for `sh -c`.
    let dockerfile = std::fs::read_to_string(root.join("Dockerfile")).expect("a Dockerfile");
    assert!(dockerfile.contains("cargo build --release --locked -p planrun"));
    assert!(dockerfile.contains("/usr/local/bin/planrun"));
    assert!(
        section.contains("docker build -t registry.example.com/planrun:0.1 ."),
        "the guide says how to build the image"
    );
}
