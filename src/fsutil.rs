//! Small file-system helpers.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

use crate::error::Error;

/// The temporary file a write of `path` goes through: `.<name>.tmp.<pid>` next to it. The
/// leading dot keeps it out of `load_all`; the pid keeps writers of different processes apart.
pub fn temp_path(path: &Path) -> std::path::PathBuf {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.tmp.{}", std::process::id()))
}

/// Replace `path` with `bytes` atomically: write a temporary file in the same directory, flush
/// it to disk, rename it over `path`, then flush the directory so the rename itself survives a
/// power loss. A failure at any point leaves the old file as it was.
///
/// # Errors
/// [`Error::Io`] naming the step and the file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    // A bare file name has the parent "", which cannot be opened to sync: use ".".
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
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
