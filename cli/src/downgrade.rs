//! `planrun downgrade FILE|STORE --out-dir DIR`: PlanRunV2 back to the SDK's HEAD format: each
//! R6 run, its plan, its end user and its agent-memory files, exactly as the SDK at HEAD writes
//! them, so DIR is a store HEAD loads completely.
//!
//! For one file, existing files are never overwritten and data HEAD cannot hold is refused unless
//! `--allow-loss`. For a V2 store (a directory, e.g. what `planrun migrate` wrote), DIR must be
//! new or empty; shared plans and end users are written once (see
//! `planrun_converter::head_store`), and whatever HEAD cannot hold is kept in
//! `DIR/.planrun/residue/`, which the SDK never reads.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::common::{Format, Globals, Outcome};
use planrun_converter::downgrade::downgrade_to_head;
use planrun_wire::json::to_sdk_json;

/// Arguments of `downgrade`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A PlanRunV2 document, or a directory of them (a V2 store).
    file: PathBuf,
    /// Directory to write `<prun-id>.json`, `<plan-id>.json` and `<external_id>.json` into.
    #[arg(long)]
    out_dir: PathBuf,
    /// Drop (and report) residue that an R6 run cannot hold instead of refusing.
    #[arg(long)]
    allow_loss: bool,
}

pub(crate) fn run(globals: &Globals, args: Args) -> anyhow::Result<Outcome> {
    if std::fs::metadata(&args.file).is_ok_and(|m| m.is_dir()) {
        return store(globals, &args);
    }
    let bytes = crate::common::read_file(&args.file)?;
    let v2: planrun_v2::PlanRunV2 = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not a PlanRunV2 document", args.file.display()))?;
    let down = match downgrade_to_head(&v2, args.allow_loss) {
        Ok(down) => down,
        Err(err) => {
            eprintln!("rejected: {}: {err}", args.file.display());
            return Ok(Outcome::Partial);
        }
    };
    let mut files = vec![(format!("{}.json", v2.id), to_sdk_json(&down.run))];
    // A rebuilt plan (the SDK never saved one) gets no file, as the SDK left the run.
    if let Some(plan) = &down.plan {
        files.push((format!("{}.json", v2.plan.id), to_sdk_json(plan)));
    }
    files.push((
        safe_name(&down.end_user.external_id)?,
        to_sdk_json(&down.end_user),
    ));
    match agent_memory(&args.file, &v2)? {
        Ok(memory) => files.extend(memory),
        Err(missing) => {
            eprintln!(
                "blocked: {}: agent-memory file {} not found beside it; the SDK could not load \
                 that output's value",
                args.file.display(),
                missing.display()
            );
            return Ok(Outcome::Partial);
        }
    }
    std::fs::create_dir_all(&args.out_dir)
        .with_context(|| format!("cannot create {}", args.out_dir.display()))?;
    for (name, _) in &files {
        let path = args.out_dir.join(name);
        if path.exists() {
            bail!(
                "{} exists; downgrade never overwrites a file",
                path.display()
            );
        }
    }
    write_all(&args.out_dir, &files)?;
    let mut err = std::io::stderr().lock();
    match globals.format {
        Format::Json => writeln!(err, "{}", serde_json::to_string(&down.report)?)?,
        Format::Text if !globals.quiet => write!(err, "{}", down.report)?,
        Format::Text => {}
    }
    Ok(Outcome::Success)
}

/// A whole V2 store to one HEAD store (see the module docs).
fn store(globals: &Globals, args: &Args) -> anyhow::Result<Outcome> {
    if std::fs::read_dir(&args.out_dir).is_ok_and(|mut d| d.next().is_some()) {
        bail!(
            "{} is not empty; a store is downgraded into a new or empty directory",
            args.out_dir.display()
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(&args.file)
        .with_context(|| format!("cannot list {}", args.file.display()))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("prun-") && n.ends_with(".json"))
        .collect();
    names.sort();
    let mut runs = Vec::new();
    let mut memory = Vec::new();
    let mut failed = Vec::new();
    for name in &names {
        let path = args.file.join(name);
        let bytes = crate::common::read_file(&path)?;
        let v2: planrun_v2::PlanRunV2 = match serde_json::from_slice(&bytes) {
            Ok(v2) => v2,
            Err(err) => {
                failed.push(format!(
                    "rejected: {}: not a PlanRunV2: {err}",
                    path.display()
                ));
                continue;
            }
        };
        let down = match downgrade_to_head(&v2, true) {
            Ok(down) => down,
            Err(err) => {
                failed.push(format!("rejected: {}: {err}", path.display()));
                continue;
            }
        };
        match agent_memory(&path, &v2)? {
            Ok(files) => memory.extend(files),
            Err(missing) => {
                failed.push(format!(
                    "blocked: {}: agent-memory file {} not found",
                    path.display(),
                    missing.display()
                ));
                continue;
            }
        }
        runs.push((v2, down));
    }
    let head = planrun_converter::head_store::assemble(&mut runs);
    let mut files: Vec<(String, String)> = head.files.into_iter().collect();
    files.extend(memory);
    for (name, _) in &files {
        // Names built from data (ids, end users, output names) stay single path components.
        let data_part = name.strip_prefix(".planrun/residue/").unwrap_or(name);
        for part in data_part.split('/') {
            safe_name(part)?;
        }
    }
    let report = serde_json::json!({
        "runs": runs.len(),
        "files": files.len(),
        "conflicts": head.conflicts,
        "failures": failed,
        "reports": runs
            .iter()
            .map(|(v2, d)| (v2.id.clone(), serde_json::to_value(&d.report).unwrap_or_default()))
            .collect::<serde_json::Map<_, _>>(),
    });
    let mut report_text = serde_json::to_string_pretty(&report)?;
    report_text.push('\n');
    files.push((".planrun/report.json".to_owned(), report_text));
    write_all(&args.out_dir, &files)?;
    let mut err = std::io::stderr().lock();
    for line in &failed {
        writeln!(err, "{line}")?;
    }
    if !globals.quiet {
        writeln!(
            err,
            "downgraded {} of {} runs into {} files; {} shared-file conflicts; report: {}",
            runs.len(),
            names.len(),
            files.len(),
            head.conflicts.len(),
            args.out_dir.join(".planrun/report.json").display()
        )?;
    }
    if globals.format == Format::Json {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", serde_json::to_string(&report)?)?;
    }
    Ok(if failed.is_empty() {
        Outcome::Success
    } else {
        Outcome::Partial
    })
}

/// The agent-memory files the run's outputs point at, `<run id>/<output name>.json`, read from
/// beside the V2 document (where `planrun migrate` puts them) and written back byte for byte;
/// the path of the first one that is missing.
fn agent_memory(
    file: &Path,
    v2: &planrun_v2::PlanRunV2,
) -> anyhow::Result<Result<Vec<(String, String)>, PathBuf>> {
    let dir = file.parent().unwrap_or_else(|| Path::new("."));
    let mut memory = Vec::new();
    for (plan_run_id, output_name) in v2.agent_memory() {
        let name = format!(
            "{}/{}",
            safe_name(plan_run_id)?.trim_end_matches(".json"),
            safe_name(output_name)?
        );
        let path = dir.join(&name);
        match std::fs::read_to_string(&path) {
            Ok(text) => memory.push((name, text)),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Err(path)),
            Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
        }
    }
    memory.sort();
    memory.dedup();
    Ok(Ok(memory))
}

/// `<external_id>.json`, refusing an id that would leave the directory.
fn safe_name(external_id: &str) -> anyhow::Result<String> {
    let ok = !external_id.is_empty()
        && !external_id.starts_with('.')
        && !external_id.contains(['/', '\\', '\0']);
    if !ok {
        bail!("end-user id {external_id:?} cannot be a file name in the output directory");
    }
    Ok(format!("{external_id}.json"))
}

/// Writes each `(name, text)` under `dir`, creating the directories a name needs.
fn write_all(dir: &Path, files: &[(String, String)]) -> anyhow::Result<()> {
    for (name, text) in files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        write_new(&path, text)?;
    }
    Ok(())
}

/// Writes a new file atomically: a temp file beside it, then a rename that fails if it exists.
fn write_new(path: &Path, text: &str) -> anyhow::Result<()> {
    let tmp = path.with_file_name(format!(
        ".tmp-{}",
        path.file_name().unwrap_or_default().to_string_lossy()
    ));
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::hard_link(&tmp, path).with_context(|| format!("cannot create {}", path.display()))?;
    std::fs::remove_file(&tmp).with_context(|| format!("cannot remove {}", tmp.display()))?;
    Ok(())
}
