//! The store's lock and its atomic file replacement.
//!
//! Every read-modify-write of a baseline holds an exclusive lock on `<baselines>/.lock`, so two
//! writers (processes or threads) never both read generation G and write G+1, losing one's
//! history. Readers take no lock: a baseline is only ever replaced by a rename, so a reader sees
//! either the old or the new file, whole.

use std::fs::{self, File, OpenOptions};
use std::path::Path;

use crate::foundation::error::Error;

/// Name of the lock file inside the baselines directory.
pub const LOCK_FILE: &str = ".lock";

/// An exclusive lock on a baselines directory, released on drop (closing the file releases it,
/// also when the process dies, so a crashed writer never leaves the store locked).
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

impl DirLock {
    /// Block until this process holds the lock of `dir` (created if missing).
    ///
    /// # Errors
    /// [`Error::Io`] when the directory or the lock file cannot be created or locked.
    pub fn acquire(dir: &Path) -> Result<Self, Error> {
        fs::create_dir_all(dir).map_err(|e| Error::io("create directory", dir, e))?;
        let path = dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io("open lock file", &path, e))?;
        file.lock().map_err(|e| Error::io("lock", &path, e))?;
        Ok(Self { _file: file })
    }
}

/// Remove temporary files left next to `path` by writers that died mid-write. Only call with the
/// lock held: then no live writer can own one.
pub fn remove_stale_temps(path: &Path) -> Result<(), Error> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(());
    };
    let prefix = format!(".{}.tmp.", name.to_string_lossy());
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("list", dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("list", dir, e))?;
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let p = entry.path();
            fs::remove_file(&p).map_err(|e| Error::io("remove stale temporary file", &p, e))?;
        }
    }
    Ok(())
}

pub use crate::foundation::fsutil::write_atomic;
