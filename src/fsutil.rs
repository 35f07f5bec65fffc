//! Small file-system helpers.

use std::io::Write;
use std::path::Path;

use crate::error::Error;

/// Write a file atomically: a temporary file in the same directory, fsync, rename, fsync the
/// directory. Readers see the old content or the new, never a torn file.
///
/// # Errors
/// [`Error::Io`] naming the path.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(
            ".{}.tmp.",
            path.file_name().and_then(|n| n.to_str()).unwrap_or("file")
        ))
        .tempfile_in(dir)
        .map_err(|e| Error::io("create a temporary file in", dir, e))?;
    tmp.write_all(bytes)
        .map_err(|e| Error::io("write", tmp.path().to_path_buf(), e))?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| Error::io("sync", tmp.path().to_path_buf(), e))?;
    tmp.persist(path)
        .map_err(|e| Error::io("rename into place", path, e.error))?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
