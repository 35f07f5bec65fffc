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
pub(crate) const LOCK_FILE: &str = ".lock";

/// An exclusive lock on a baselines directory, released on drop (closing the file releases it,
/// also when the process dies, so a crashed writer never leaves the store locked).
#[derive(Debug)]
pub(crate) struct DirLock {
    _file: File,
}

/// How long a writer waits for the lock before it gives up (exit 3), unless
/// [`LOCK_TIMEOUT_ENV`] says otherwise. The lock is held only for a read-modify-write of a few
/// files, so a wait this long means a writer is stuck (or the store is on a file system whose
/// locks never come back).
pub(crate) const DEFAULT_LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// Seconds to wait for the store's lock (docs/baselines.md). The command layer reads it and hands
/// its value in ([`LockTimeout::from_setting`]); the store names it in its messages only.
pub const LOCK_TIMEOUT_ENV: &str = "CGP_GATE_LOCK_TIMEOUT_S";

/// How long a writer waits for the store's lock: [`DEFAULT_LOCK_TIMEOUT`], or the seconds the user
/// set in [`LOCK_TIMEOUT_ENV`], as the command layer read it (the store reads no environment
/// variable, issue 62). The value is checked when a writer has to wait, as when the store read
/// the variable itself: a bad one is a usage error then, and nothing before.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LockTimeout {
    setting: Option<String>,
}

impl LockTimeout {
    /// The value of [`LOCK_TIMEOUT_ENV`], `None` when it is not set.
    pub fn from_setting(setting: Option<String>) -> Self {
        Self { setting }
    }

    /// [`DEFAULT_LOCK_TIMEOUT`], or the seconds of the setting.
    fn get(&self) -> Result<std::time::Duration, Error> {
        match &self.setting {
            None => Ok(DEFAULT_LOCK_TIMEOUT),
            Some(v) => v
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|s| *s <= 7 * 24 * 3600)
                .map(std::time::Duration::from_secs)
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "{LOCK_TIMEOUT_ENV}=`{v}` is not a number of seconds (0 to 604800)"
                    ))
                }),
        }
    }
}

impl DirLock {
    /// Wait until this process holds the lock of `dir` (created if missing): at once when it is
    /// free; otherwise a message on stderr says who holds it, and after `timeout` the wait ends
    /// with an error naming the holder. The holder's pid is written into the lock file.
    ///
    /// # Errors
    /// [`Error::Input`] (exit 2) when `.lock` is not a regular file (a FIFO, a device, a link:
    /// opening a FIFO would block forever); [`Error::Environment`] (exit 3) when the wait times
    /// out; [`Error::Io`] when the directory or the lock file cannot be created or locked.
    pub(crate) fn acquire(dir: &Path, timeout: &LockTimeout) -> Result<Self, Error> {
        fs::create_dir_all(dir).map_err(|e| Error::io("create directory", dir, e))?;
        let path = dir.join(LOCK_FILE);
        let not_regular = |what: &str| {
            Error::input(
                &path,
                format!(
                    "the store's lock file is {what}, not a regular file; cgp-gate creates it as an empty file: remove it and run again"
                ),
            )
        };
        // No link is followed and a FIFO opens without waiting for a reader (ENXIO without one);
        // the kind is checked on what was opened, so nothing can be swapped in between.
        use std::os::unix::fs::OpenOptionsExt;
        let flags = nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK;
        let mut file = match OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .custom_flags(flags)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) if e.raw_os_error() == Some(nix::libc::ELOOP) => {
                return Err(not_regular("a symbolic link"));
            }
            Err(e) if e.raw_os_error() == Some(nix::libc::ENXIO) => return Err(not_regular("a FIFO")),
            Err(e) => return Err(Error::io("open lock file", &path, e)),
        };
        let meta = file
            .metadata()
            .map_err(|e| Error::io("inspect lock file", &path, e))?;
        if !meta.is_file() {
            return Err(not_regular(crate::foundation::fsutil::file_kind(&meta)));
        }
        wait_for(&file, &path, timeout)?;
        // Who holds it, for a writer that has to wait.
        use std::io::{Seek, Write};
        let _ = file.set_len(0);
        let _ = file.seek(std::io::SeekFrom::Start(0));
        let _ = writeln!(file, "pid {}", std::process::id());
        Ok(Self { _file: file })
    }
}

/// Take the lock on `file`, waiting up to the timeout with a message.
fn wait_for(file: &File, path: &Path, timeout: &LockTimeout) -> Result<(), Error> {
    match file.try_lock() {
        Ok(()) => return Ok(()),
        Err(fs::TryLockError::WouldBlock) => {}
        Err(fs::TryLockError::Error(e)) => return Err(Error::io("lock", path, e)),
    }
    let timeout = timeout.get()?;
    let holder = || {
        let text = crate::foundation::fsutil::read_text(path, 256).unwrap_or_default();
        let text = text.trim();
        if text.is_empty() {
            "another cgp-gate".to_owned()
        } else {
            format!("another cgp-gate ({})", crate::foundation::sanitize::line(text))
        }
    };
    crate::foundation::sanitize::eprint_line(&format!(
        "waiting for the baseline store's lock {}, held by {}; giving up after {} s ({LOCK_TIMEOUT_ENV})",
        path.display(),
        holder(),
        timeout.as_secs()
    ));
    let start = std::time::Instant::now();
    loop {
        std::thread::sleep(std::time::Duration::from_millis(100));
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(fs::TryLockError::WouldBlock) if start.elapsed() < timeout => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(Error::Environment(format!(
                    "gave up waiting for the baseline store's lock {} after {} s: it is held by {}; if that run is stuck, end it, or wait longer with {LOCK_TIMEOUT_ENV}=SECONDS",
                    path.display(),
                    timeout.as_secs(),
                    holder()
                )));
            }
            Err(fs::TryLockError::Error(e)) => return Err(Error::io("lock", path, e)),
        }
    }
}

/// Remove temporary files left next to `path` by writers that died mid-write. Only call with the
/// lock held: then no live writer can own one.
pub(crate) fn remove_stale_temps(path: &Path) -> Result<(), Error> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_timeout_is_the_default_or_the_setting_handed_in() {
        let secs = |s: Option<&str>| LockTimeout::from_setting(s.map(str::to_owned)).get();
        assert_eq!(secs(None).unwrap(), DEFAULT_LOCK_TIMEOUT);
        assert_eq!(secs(Some(" 5 ")).unwrap().as_secs(), 5);
        assert_eq!(secs(Some("604800")).unwrap().as_secs(), 604_800);
        for bad in ["soon", "-1", "604801", ""] {
            let e = secs(Some(bad)).unwrap_err().to_string();
            assert!(
                e.contains("CGP_GATE_LOCK_TIMEOUT_S") && e.contains("not a number of seconds"),
                "{bad}: {e}"
            );
        }
    }
}
