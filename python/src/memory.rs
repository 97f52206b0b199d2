//! A [`Store`] of documents held in memory, for `convert(run, plan=…, end_user=…,
//! agent_memory=…)`: the documents a caller passes, over an optional `DiskFileStorage` directory
//! for whatever it did not pass. The conversion then runs through `planrun_store::convert_entry`,
//! the same function `planrun migrate` calls for every run of a store.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use planrun_store::{DiskStore, Doc, Failure, Listing, Names, Store};

/// The entry name the run is read under. It is not shaped like a run file name, so no file name
/// is checked against the run's id (as for a line of `planrun convert -`).
pub(crate) const RUN_NAME: &str = "<run>";

/// One run and the documents it refers to, in memory, over an optional store directory.
#[derive(Debug)]
pub(crate) struct MemoryStore {
    /// The run document.
    pub(crate) run: Vec<u8>,
    /// The plan, returned whatever the id asked for: the converter rejects a plan that is not
    /// the run's.
    pub(crate) plan: Option<Vec<u8>>,
    /// The end user, returned whatever the id asked for: the converter rejects one that is not
    /// the run's.
    pub(crate) end_user: Option<Vec<u8>>,
    /// Agent-memory values by `<run id>/<output name>` or by output name alone.
    pub(crate) agent_memory: HashMap<String, Vec<u8>>,
    /// Where the rest is looked up (`store=`), and how failures name files.
    pub(crate) fallback: Option<DiskStore>,
}

impl MemoryStore {
    fn fall_back(&self, doc: Doc<'_>) -> Result<Option<Vec<u8>>, Failure> {
        self.fallback.as_ref().map_or(Ok(None), |s| s.read(doc))
    }
}

impl Store for MemoryStore {
    fn list(&self) -> io::Result<Listing> {
        Ok(Listing {
            runs: [RUN_NAME].into_iter().collect(),
            ignored: Vec::new(),
            documents: Names::default(),
        })
    }

    fn read(&self, doc: Doc<'_>) -> Result<Option<Vec<u8>>, Failure> {
        match doc {
            Doc::Run(_) => Ok(Some(self.run.clone())),
            Doc::Plan(_) => match &self.plan {
                Some(plan) => Ok(Some(plan.clone())),
                None => self.fall_back(doc),
            },
            Doc::EndUser(_) => match &self.end_user {
                Some(user) => Ok(Some(user.clone())),
                None => self.fall_back(doc),
            },
            Doc::Residue(_) => self.fall_back(doc),
            Doc::AgentMemory {
                run_id,
                output_name,
            } => {
                let held = self
                    .agent_memory
                    .get(&format!("{run_id}/{output_name}"))
                    .or_else(|| self.agent_memory.get(output_name));
                match held {
                    Some(value) => Ok(Some(value.clone())),
                    None => self.fall_back(doc),
                }
            }
        }
    }

    /// The run is `<run>`; other documents are named as in the fallback directory, or by their
    /// relative path when there is none.
    fn locate(&self, relative: &Path) -> PathBuf {
        if relative == Path::new(RUN_NAME) {
            return relative.to_owned();
        }
        self.fallback
            .as_ref()
            .map_or_else(|| relative.to_owned(), |s| s.locate(relative))
    }

    /// A plan not passed in memory was never saved only if there is a store to look in.
    fn holds_plans(&self) -> bool {
        self.plan.is_some() || self.fallback.is_some()
    }
}
