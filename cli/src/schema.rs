//! `planrun schema export --out DIR`: writes every published JSON Schema (draft 2020-12) under
//! `DIR/v2/` and `DIR/legacy/`, pretty-printed, each file replaced atomically. The repository's
//! committed copies are regenerated with `cargo run -p planrun -- schema export --out schemas`.
//!
//! `--lang typescript|python` writes TypeScript declarations or pydantic v2 models instead, by
//! running json-schema-to-typescript's `json2ts` or datamodel-code-generator's
//! `datamodel-codegen` (see `planrun_schemas::export`); a generator that is not installed is a
//! usage error (exit 2) whose message says how to install it. `--from DIR` exports the schema
//! files of another directory (a committed copy, a release) instead of the built-in ones.
//!
//! `planrun schema compat OLD NEW`: see `super::compat`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use planrun_schemas as schemas;
use planrun_schemas::export::{self, Lang, Source};

use clap::ValueEnum;

use crate::common::{Format, Globals, Outcome};

/// Arguments of `schema`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: SchemaCommand,
}

#[derive(Debug, clap::Subcommand)]
enum SchemaCommand {
    /// Write every published schema under DIR (DIR/v2/…, DIR/legacy/…) as JSON Schema,
    /// TypeScript declarations or pydantic models (--lang); files of that kind that are no longer
    /// published are removed from those two directories.
    Export(ExportArgs),
    /// Classify the change from OLD to NEW schemas as BACKWARD, FORWARD, FULL or BREAKING
    /// compatible, listing every rule that fired (exit 0 when --require is met, 1 when not).
    Compat(crate::compat::Args),
}

#[derive(Debug, clap::Args)]
struct ExportArgs {
    /// The directory to write to (created if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// What to write: the JSON Schema files, TypeScript declarations (runs `json2ts`, or
    /// $PLANRUN_JSON2TS) or pydantic v2 models (runs `datamodel-codegen`, or
    /// $PLANRUN_DATAMODEL_CODEGEN).
    #[arg(long, value_enum, default_value_t = LangArg::JsonSchema)]
    lang: LangArg,
    /// Export the `*.schema.json` files of DIR/v2/ and DIR/legacy/ instead of the built-in schemas.
    #[arg(long, value_name = "DIR")]
    from: Option<PathBuf>,
}

/// The values of `--lang`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LangArg {
    /// JSON Schema (draft 2020-12) files.
    JsonSchema,
    /// TypeScript declarations, by json-schema-to-typescript.
    Typescript,
    /// pydantic v2 models, by datamodel-code-generator.
    Python,
}

impl From<LangArg> for Lang {
    fn from(lang: LangArg) -> Self {
        match lang {
            LangArg::JsonSchema => Lang::JsonSchema,
            LangArg::Typescript => Lang::TypeScript,
            LangArg::Python => Lang::Python,
        }
    }
}

pub(crate) fn run(globals: &Globals, args: Args) -> anyhow::Result<Outcome> {
    match args.command {
        SchemaCommand::Compat(compat) => crate::compat::run(globals, compat),
        SchemaCommand::Export(export)
            if export.lang != LangArg::JsonSchema || export.from.is_some() =>
        {
            export_lang(globals, &export)
        }
        SchemaCommand::Export(export) => {
            schemas::write_all(&export.out)
                .with_context(|| format!("cannot write schemas to {}", export.out.display()))?;
            if !globals.quiet {
                let names = schemas::names();
                let mut out = std::io::stdout().lock();
                match globals.format {
                    Format::Text => writeln!(
                        out,
                        "wrote {} schemas to {}",
                        names.len(),
                        export.out.display()
                    )?,
                    Format::Json => writeln!(
                        out,
                        "{}",
                        serde_json::json!({"out": export.out, "schemas": names})
                    )?,
                }
            }
            Ok(Outcome::Success)
        }
    }
}

/// `export --lang typescript|python`, or any language `--from` a directory.
fn export_lang(globals: &Globals, args: &ExportArgs) -> anyhow::Result<Outcome> {
    let source = match &args.from {
        Some(dir) => Source::Dir(dir.clone()),
        None => Source::Builtin,
    };
    let lang = Lang::from(args.lang);
    let exported = export::export(&source, lang, &args.out)
        .with_context(|| format!("cannot export to {}", args.out.display()))?;
    if !globals.quiet {
        let mut out = std::io::stdout().lock();
        match globals.format {
            Format::Text => writeln!(
                out,
                "wrote {} {} to {}",
                exported.files.len(),
                lang.describe(),
                args.out.display()
            )?,
            Format::Json => writeln!(
                out,
                "{}",
                serde_json::json!({
                    "out": args.out,
                    "lang": args.lang.to_possible_value().map(|v| v.get_name().to_owned()),
                    "files": exported.files,
                })
            )?,
        }
    }
    Ok(Outcome::Success)
}
