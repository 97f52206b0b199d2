//! `planrun downgrade FILE --out-dir DIR`: a PlanRunV2 back to the SDK's HEAD format: the R6 run,
//! its plan and its end user, written as the SDK writes them. Existing files are never
//! overwritten; data R6 cannot hold is refused unless `--allow-loss`.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::common::{Format, Globals, Outcome};
use planrun_converter::downgrade::downgrade;
use planrun_legacy::json::to_sdk_json;

/// Arguments of `downgrade`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A PlanRunV2 document.
    file: PathBuf,
    /// Directory to write `<prun-id>.json`, `<plan-id>.json` and `<external_id>.json` into.
    #[arg(long)]
    out_dir: PathBuf,
    /// Drop (and report) residue that an R6 run cannot hold instead of refusing.
    #[arg(long)]
    allow_loss: bool,
}

pub(crate) fn run(globals: &Globals, args: Args) -> anyhow::Result<Outcome> {
    let bytes = crate::common::read_file(&args.file)?;
    let v2: planrun_v2::PlanRunV2 = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not a PlanRunV2 document", args.file.display()))?;
    let down = match downgrade(&v2, args.allow_loss) {
        Ok(down) => down,
        Err(err) => {
            eprintln!("rejected: {}: {err}", args.file.display());
            return Ok(Outcome::Partial);
        }
    };
    let files = [
        (format!("{}.json", v2.id), to_sdk_json(&down.run)),
        (format!("{}.json", v2.plan.id), to_sdk_json(&down.plan)),
        (
            safe_name(&down.end_user.external_id)?,
            to_sdk_json(&down.end_user),
        ),
    ];
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
    for (name, text) in &files {
        write_new(&args.out_dir.join(name), text)?;
    }
    let mut err = std::io::stderr().lock();
    match globals.format {
        Format::Json => writeln!(err, "{}", serde_json::to_string(&down.report)?)?,
        Format::Text if !globals.quiet => write!(err, "{}", down.report)?,
        Format::Text => {}
    }
    Ok(Outcome::Success)
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
