//! The store's lock and its atomic file replacement.
//!
//! Every read-modify-write of a baseline holds an exclusive lock on `<baselines>/.lock`, so two
//! writers (processes or threads) never both read generation G and write G+1, losing one's
//! history. Readers take no lock: a baseline is only ever replaced by a rename, so a reader sees
//! either the old or the new file, whole.

use std::fs::{self, File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::error::Error;

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

/// The temporary file a write of `path` goes through: `.<name>.tmp.<pid>` next to it. The
/// leading dot keeps it out of `load_all`; the pid keeps writers of different processes apart.
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.tmp.{}", std::process::id()))
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

/// Replace `path` with `bytes` atomically: write a temporary file in the same directory, flush
/// it to disk, rename it over `path`, then flush the directory so the rename itself survives a
/// power loss. A failure at any point leaves the old file as it was.
///
/// # Errors
/// [`Error::Io`] naming the step and the file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    fs::create_dir_all(dir).map_err(|e| Error::io("create directory", dir, e))?;
    let tmp = temp_path(path);
    let result = write_then_rename(&tmp, path, bytes);
    if result.is_err() {
        // Best effort: the temp file is ignored by readers and removed by the next writer anyway.
        let _ = fs::remove_file(&tmp);
    }
    result?;
    sync_dir(dir)
}

fn write_then_rename(tmp: &Path, path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(tmp)
        .map_err(|e| Error::io("create", tmp, e))?;
    file.write_all(bytes).map_err(|e| Error::io("write", tmp, e))?;
    file.sync_all().map_err(|e| Error::io("sync", tmp, e))?;
    drop(file);
    fs::rename(tmp, path).map_err(|e| Error::io("rename temporary file onto", path, e))
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> Result<(), Error> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io("sync directory", dir, e))
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> Result<(), Error> {
    // Windows cannot open a directory as a file to flush it; the rename is durable enough there.
    Ok(())
}
