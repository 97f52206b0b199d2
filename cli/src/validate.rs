//! `planrun validate FILE… [--schema NAME]`: checks documents against the published JSON Schemas
//! and reports every violation with its file and JSON pointer. Without `--schema`, a V2 document
//! is checked against the schema of its shape and a legacy one against the schema of its
//! detected kind and version. A file that is not JSON, or that detection cannot place, is
//! invalid. Directories stand for every `.json` file below them.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use planrun_schemas::validate::{schema_for_document, validate, Violation};
use planrun_wire::json::parse_value;

use crate::common::{Format, Globals, Outcome};

/// Arguments of `validate`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Files or directories.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Check every file against this schema (e.g. `legacy/run.R4.schema.json`,
    /// `v2/PlanRunV2.schema.json`) instead of the one its shape or detection picks.
    #[arg(long, value_name = "NAME")]
    schema: Option<String>,
}

/// The verdict on one file.
struct Checked {
    schema: Option<String>,
    violations: Vec<Violation>,
}

pub(crate) fn run(globals: &Globals, args: Args) -> anyhow::Result<Outcome> {
    if let Some(name) = &args.schema {
        validate(&serde_json::Value::Null, name)?;
    }
    let mut files = Vec::new();
    for path in &args.paths {
        crate::common::collect(path, &mut files)
            .with_context(|| format!("cannot read {}", path.display()))?;
    }
    let mut out = std::io::stdout().lock();
    let mut invalid = 0;
    for file in &files {
        let bytes = crate::common::read_file(file)?;
        let checked = check(&bytes, args.schema.as_deref())?;
        let valid = checked.violations.is_empty();
        invalid += usize::from(!valid);
        if globals.quiet && valid {
            continue;
        }
        match globals.format {
            Format::Text if valid => writeln!(
                out,
                "{}: valid ({})",
                file.display(),
                checked.schema.as_deref().unwrap_or("-")
            )?,
            Format::Text => {
                for violation in &checked.violations {
                    writeln!(out, "{}: {violation}", file.display())?;
                }
            }
            Format::Json => writeln!(
                out,
                "{}",
                serde_json::json!({
                    "path": file,
                    "schema": checked.schema,
                    "valid": valid,
                    "violations": checked.violations,
                })
            )?,
        }
    }
    if !globals.quiet && globals.format == Format::Text && files.len() > 1 {
        writeln!(out, "{:>8}  valid", files.len() - invalid)?;
        writeln!(out, "{invalid:>8}  invalid")?;
    }
    Ok(if invalid > 0 {
        Outcome::Partial
    } else {
        Outcome::Success
    })
}

fn check(bytes: &[u8], schema: Option<&str>) -> anyhow::Result<Checked> {
    let doc = match parse_value(bytes) {
        Ok(doc) => doc,
        Err(e) => {
            return Ok(Checked {
                schema: schema.map(str::to_owned),
                violations: vec![Violation {
                    pointer: e.pointer.clone(),
                    message: format!(
                        "not a JSON document ({}:{}): {}",
                        e.line, e.column, e.message
                    ),
                }],
            })
        }
    };
    let name = match schema {
        Some(name) => name.to_owned(),
        None => match schema_for_document(bytes, &doc) {
            Ok(name) => name,
            Err(violation) => {
                return Ok(Checked {
                    schema: None,
                    violations: vec![violation],
                })
            }
        },
    };
    let violations = validate(&doc, &name)?;
    Ok(Checked {
        schema: Some(name),
        violations,
    })
}
