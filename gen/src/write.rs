//! Writing the store: the output directory, files created without ever overwriting, and the
//! threads that build plans and runs in parallel while keeping their order (so the bytes do not
//! depend on the number of threads).

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use planrun_legacy::Version;

use crate::summary::{FileKind, GenFile};

pub(crate) fn prepare(out: &Path) -> io::Result<()> {
    match fs::read_dir(out) {
        Ok(mut entries) => match entries.next() {
            None => Ok(()),
            Some(_) => Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{} exists and is not empty (gen writes only into a new or empty directory)",
                    out.display()
                ),
            )),
        },
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            fs::create_dir_all(out).map_err(|e| at(out, e))
        }
        Err(err) => Err(at(out, err)),
    }
}

pub(crate) fn at(path: &Path, err: io::Error) -> io::Error {
    io::Error::new(err.kind(), format!("{}: {err}", path.display()))
}

/// Creates `dir/name` (never overwriting) with `text`, and describes it.
pub(crate) fn write_new(
    out: &Path,
    name: PathBuf,
    text: &str,
    kind: FileKind,
    version: Version,
) -> io::Result<GenFile> {
    let path = out.join(&name);
    let mut file = fs::File::create_new(&path).map_err(|e| at(&path, e))?;
    file.write_all(text.as_bytes()).map_err(|e| at(&path, e))?;
    Ok(GenFile {
        path: name,
        kind,
        version,
        bytes: text.len() as u64,
    })
}

/// Maps `f` over `items` on a few threads; results keep the order of `items`.
pub(crate) fn parallel<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> io::Result<R> + Sync,
) -> io::Result<Vec<R>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    if threads <= 1 || items.len() < 256 {
        return items.iter().map(&f).collect();
    }
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(items.len().div_ceil(threads))
            .map(|chunk| scope.spawn(move || chunk.iter().map(f).collect::<io::Result<Vec<R>>>()))
            .collect();
        let mut out = Vec::with_capacity(items.len());
        for handle in handles {
            let part = handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
            out.extend(part);
        }
        Ok(out)
    })
}
