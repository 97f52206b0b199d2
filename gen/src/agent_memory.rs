//! Agent memory (R2+): step outputs too long to keep inline go to `<prun-id>/<output_name>.json`
//! and the run keeps a reference with their summary, as the SDK does from v0.1.12.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use planrun_legacy::Version::{self, R2};
use planrun_legacy::{AgentMemoryValue, LocalDataValue, Output, RunId};
use planrun_wire::json::to_sdk_json;

use crate::summary::{FileKind, GenFile};
use crate::write::{at, write_new};

/// Values at least this long go to agent memory (R2+), like the SDK's default threshold of about
/// 1000 tokens.
const MEMORY_THRESHOLD: usize = 4000;

/// An output as the run stores it: inline, or a reference to an agent-memory file.
pub(crate) enum Produced {
    Local(LocalDataValue),
    Memory(AgentMemoryValue),
}

impl Produced {
    /// The output as R2+ runs store it.
    pub(crate) fn into_output(self) -> Output {
        match self {
            Produced::Local(local) => Output::Local(local),
            Produced::Memory(memory) => Output::AgentMemory(memory),
        }
    }

    /// The output as runs before R2 store it (always inline).
    pub(crate) fn into_local(self) -> LocalDataValue {
        match self {
            Produced::Local(local) => local,
            Produced::Memory(_) => unreachable!("agent memory exists from R2 on"),
        }
    }
}

/// The agent-memory values of one run, in step order.
pub(crate) struct AgentMemory {
    run: RunId,
    version: Version,
    values: Vec<(String, LocalDataValue)>,
}

impl AgentMemory {
    pub(crate) fn new(run: RunId, version: Version) -> Self {
        AgentMemory {
            run,
            version,
            values: Vec::new(),
        }
    }

    /// Keeps the output `name` inline, or (R2+, a long value not `forced_inline`) keeps the value
    /// here and returns the reference the run stores instead.
    pub(crate) fn place(
        &mut self,
        name: &str,
        local: LocalDataValue,
        forced_inline: bool,
    ) -> Produced {
        if self.version >= R2 && !forced_inline && local.value.len() >= MEMORY_THRESHOLD {
            let reference = AgentMemoryValue {
                output_name: name.to_owned(),
                plan_run_id: self.run,
                summary: local.summary.clone().unwrap_or_default(),
            };
            self.values.push((name.to_owned(), local));
            Produced::Memory(reference)
        } else {
            Produced::Local(local)
        }
    }

    /// Writes `<run-id>/<output_name>.json` for each value (no directory if there is none).
    pub(crate) fn write(self, out: &Path) -> io::Result<Vec<GenFile>> {
        if self.values.is_empty() {
            return Ok(Vec::new());
        }
        let dir = PathBuf::from(self.run.to_string());
        fs::create_dir(out.join(&dir)).map_err(|e| at(&out.join(&dir), e))?;
        self.values
            .into_iter()
            .map(|(name, value)| {
                write_new(
                    out,
                    dir.join(format!("{name}.json")),
                    &to_sdk_json(&value),
                    FileKind::AgentMemory,
                    self.version,
                )
            })
            .collect()
    }
}
