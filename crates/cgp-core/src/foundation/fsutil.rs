//! Small file-system helpers.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

use crate::foundation::error::Error;

/// The temporary file a write of `path` goes through: `.<name>.tmp.<pid>` next to it. The
/// leading dot keeps it out of `load_all`; the pid keeps writers of different processes apart.
pub(crate) fn temp_path(path: &Path) -> std::path::PathBuf {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.tmp.{}", std::process::id()))
}

/// Replace `path` with `bytes` atomically: write a temporary file in the same directory, flush
/// it to disk, rename it over `path`, then flush the directory so the rename itself survives a
/// power loss. A failure at any point leaves the old file as it was.
///
/// What `path` names decides how: a symbolic link is followed to its target (the link stays a
/// link, its target is replaced atomically, or created when it does not exist yet); a device,
/// FIFO or socket (`--json /dev/stdout` into a pipe, `/dev/null`) is written directly, as a
/// shell redirection would, since it cannot be renamed over (renaming a temporary file there
/// once replaced `/dev/full` with a regular file and sent nothing down the pipe). A FIFO blocks
/// until a reader opens it, as with `>`.
///
/// # Errors
/// [`Error::Io`] naming the step and the file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    if let Ok(m) = fs::metadata(path)
        && !m.is_file()
        && !m.is_dir()
    {
        return write_direct(path, bytes);
    }
    replace_atomically(&follow_links(path)?, bytes)
}

/// The path that names standard output where a command writes a file the user names
/// (`--json -`, `--markdown -`, `init -o -`), as in every Unix tool. A file named `-` is written
/// as `./-`.
pub const STDOUT: &str = "-";

/// Whether `path` is [`STDOUT`].
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == STDOUT
}

/// Write an output the user named: [`STDOUT`] to standard output (a reader that has gone ends the
/// output, not the command: `foundation::pipe`), any other path atomically ([`write_atomic`]).
///
/// # Errors
/// [`Error::Io`] naming the path, or standard output.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    if !is_stdout(path) {
        return write_atomic(path, bytes);
    }
    let mut out = crate::foundation::pipe::QuietPipe::new(std::io::stdout().lock());
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| Error::io("write", "standard output", e))
}

/// The file a chain of symbolic links ends at (`path` itself when it is not a link), which may
/// not exist yet. Relative link targets are relative to the link's folder.
fn follow_links(path: &Path) -> Result<std::path::PathBuf, Error> {
    let mut p = path.to_path_buf();
    // Linux's own limit on links followed in one lookup.
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&p).map_err(|e| Error::io("read the symbolic link", &p, e))?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(Error::io(
        "follow the symbolic links of",
        path,
        std::io::Error::other("more than 40 levels of symbolic links (a loop?)"),
    ))
}

/// Write a device, FIFO or socket in place (never atomic: it cannot be).
fn write_direct(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let mut f = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| Error::io("open (a device or FIFO, written directly)", path, e))?;
    f.write_all(bytes)
        .and_then(|()| f.flush())
        .map_err(|e| Error::io("write (a device or FIFO, written directly)", path, e))
}

fn replace_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
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

/// The most bytes cgp-gate reads from one input file of each kind. An input larger than this is
/// refused with a message, never read until memory runs out (a symlink to `/dev/zero` is not a
/// regular file and is refused before reading).
pub mod limits {
    /// `cgp-gate.yaml`.
    pub const SPEC: u64 = 16 << 20;
    /// One ncu CSV output (a recorded repetition, a live log, `cgp-gate parse FILE`).
    pub const NCU_CSV: u64 = 256 << 20;
    /// A recording's `manifest.json`.
    pub const MANIFEST: u64 = 64 << 20;
    /// One baseline file.
    pub const BASELINE: u64 = 256 << 20;
    /// A results file (`check --json`).
    pub const RESULTS: u64 = 512 << 20;
    /// What an error message quotes of the application's output: the end of each stream.
    pub const OUTPUT_TAIL: u64 = 64 << 10;
}

/// Why a bounded read failed.
#[derive(Debug)]
pub enum ReadError {
    /// The file could not be opened or read (`NotFound` included).
    Io(std::io::Error),
    /// Not a regular file: a FIFO, a device, a socket or a directory (the kind is named).
    NotRegular(&'static str),
    /// Larger than the limit for its kind.
    TooLarge { size: u64, limit: u64 },
    /// Not UTF-8: where the first invalid byte is (1-based line and column, in characters).
    NotUtf8 { line: usize, column: usize, byte: u8 },
}

impl ReadError {
    /// The file does not exist (callers for which absence is normal check this first).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }

    /// The message without the path: `is a FIFO, not a regular file; ...`.
    pub fn message(&self, what: &str) -> String {
        match self {
            Self::Io(e) => format!("cannot read the {what}: {e}"),
            Self::NotRegular(kind) => {
                format!("is {kind}, not a regular file; cgp-gate reads a {what} from regular files only")
            }
            Self::TooLarge { size, limit } => format!(
                "is {size} bytes, more than cgp-gate reads for a {what} ({limit} bytes); is it the right file?"
            ),
            Self::NotUtf8 { line, column, byte } => format!(
                "line {line}, column {column}: not UTF-8 text (byte 0x{byte:02x}); a {what} must be UTF-8"
            ),
        }
    }

    /// As a command error: damaged or wrong input, and an input that is not there, is
    /// [`Error::Input`] (exit 2, as `validate` says of a missing spec; issue 59); a failure to
    /// read an existing file is [`Error::Io`] (exit 3).
    pub fn into_error(self, path: &Path, what: &str) -> Error {
        match self {
            _ if self.is_not_found() => {
                Error::input(path, format!("there is no {what} at this path; check it"))
            }
            Self::Io(e) if e.kind() != std::io::ErrorKind::InvalidData => Error::io("read", path, e),
            other => Error::input(path, other.message(what)),
        }
    }
}

/// Read a regular file of at most `limit` bytes. A FIFO is refused without blocking (the file is
/// opened non-blocking and checked before any read), as are devices and directories.
///
/// # Errors
/// [`ReadError`].
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    use std::io::Read;
    let mut opts = OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(nix::libc::O_NONBLOCK);
    }
    let file = opts.open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(file_kind(&meta)));
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge {
            size: meta.len(),
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // The file may grow while it is read: never take more than the limit.
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// [`read_bounded`], as UTF-8 text.
///
/// # Errors
/// [`ReadError`]; [`ReadError::NotUtf8`] names the line and column of the first invalid byte.
pub fn read_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    let bytes = read_bounded(path, limit)?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        utf8_error_at(bytes, at)
    })
}

/// Where invalid UTF-8 starts, as a [`ReadError::NotUtf8`].
pub(crate) fn utf8_error_at(bytes: &[u8], at: usize) -> ReadError {
    let before = &bytes[..at.min(bytes.len())];
    let line_start = before.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    // `before` is valid UTF-8 up to `at`, so its last line counts in characters.
    let column = String::from_utf8_lossy(&before[line_start..]).chars().count() + 1;
    ReadError::NotUtf8 {
        line,
        column,
        byte: bytes.get(at).copied().unwrap_or(0),
    }
}

/// The last `max_bytes` of a file (for error messages; a 2 GB output costs no more than that).
/// Empty when the file cannot be read or is not a regular file.
pub fn read_tail(path: &Path, max_bytes: u64) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = File::open(path) else {
        return Vec::new();
    };
    let Ok(meta) = file.metadata() else {
        return Vec::new();
    };
    if !meta.is_file() {
        return Vec::new();
    }
    let start = meta.len().saturating_sub(max_bytes);
    if file.seek(SeekFrom::Start(start)).is_err() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let _ = file.take(max_bytes).read_to_end(&mut out);
    out
}

/// What a file that is not a regular one is, for messages ("a FIFO (named pipe)", "a device", ...).
pub fn file_kind(meta: &fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Temporary folders of this process (ncu's work folder, a recording being staged): removed by
/// [`remove_temp_dirs`] when a signal ends the process, since `process::exit` runs no destructor.
static TEMP_DIRS: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

/// A new temporary folder named `PREFIX…` in the system's temporary directory, removed when
/// dropped and also on a terminating signal (a profiler's work folder).
///
/// # Errors
/// When the folder cannot be made.
pub fn signal_safe_temp_dir(prefix: &str) -> Result<tempfile::TempDir, crate::Error> {
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|e| crate::Error::io("create a temporary directory in", std::env::temp_dir(), e))?;
    remember_temp_dir(dir.path());
    Ok(dir)
}

/// Register a temporary folder for removal on a signal.
pub fn remember_temp_dir(path: &Path) {
    if let Ok(mut v) = TEMP_DIRS.lock() {
        v.push(path.to_path_buf());
    }
}

/// Whether `path` lies in a registered temporary folder (removed when the command ends).
pub fn in_temp_dir(path: &Path) -> bool {
    TEMP_DIRS
        .lock()
        .is_ok_and(|v| v.iter().any(|d| path.starts_with(d)))
}

/// The folder was removed (or kept on purpose) by its owner.
pub fn forget_temp_dir(path: &Path) {
    if let Ok(mut v) = TEMP_DIRS.lock() {
        v.retain(|p| p != path);
    }
}

/// Remove every registered temporary folder (best effort): the last thing before a signal ends
/// the process.
pub fn remove_temp_dirs() {
    let dirs: Vec<std::path::PathBuf> = TEMP_DIRS
        .lock()
        .map(|mut v| std::mem::take(&mut *v))
        .unwrap_or_default();
    for d in dirs {
        let _ = fs::remove_dir_all(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_directories_are_refused_without_reading() {
        let d = tempfile::tempdir().unwrap();
        let link = d.path().join("zero.csv");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert!(matches!(
            read_bounded(&link, 1 << 20),
            Err(ReadError::NotRegular("a device"))
        ));
        let fifo = d.path().join("fifo.csv");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        // Would block forever without O_NONBLOCK (no writer ever opens it).
        assert!(matches!(
            read_bounded(&fifo, 1 << 20),
            Err(ReadError::NotRegular("a FIFO (named pipe)"))
        ));
        assert!(matches!(
            read_bounded(d.path(), 10),
            Err(ReadError::NotRegular("a directory"))
        ));
    }

    #[cfg(unix)]
    #[test]
    fn writes_follow_symbolic_links_and_write_devices_and_fifos_in_place() {
        use std::os::unix::fs::{FileTypeExt, symlink};
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        // A link (relative, through a second link) to a file: the file is replaced, the links
        // stay links.
        std::fs::write(d.join("real.json"), "old").unwrap();
        symlink("real.json", d.join("one")).unwrap();
        symlink(d.join("one"), d.join("two")).unwrap();
        write_atomic(&d.join("two"), b"new").unwrap();
        assert_eq!(std::fs::read_to_string(d.join("real.json")).unwrap(), "new");
        for l in ["one", "two"] {
            assert!(
                std::fs::symlink_metadata(d.join(l))
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
        }
        // A dangling link: its target is created.
        symlink("later.json", d.join("dangling")).unwrap();
        write_atomic(&d.join("dangling"), b"x").unwrap();
        assert_eq!(std::fs::read_to_string(d.join("later.json")).unwrap(), "x");
        assert!(
            std::fs::symlink_metadata(d.join("dangling"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // A link to a device: written in place, the link and the device stay.
        symlink("/dev/null", d.join("null")).unwrap();
        write_atomic(&d.join("null"), b"gone").unwrap();
        assert!(
            std::fs::symlink_metadata(d.join("null"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            std::fs::metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
        // A FIFO: the reader gets the bytes, and it is still a FIFO.
        let fifo = d.join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_atomic(&fifo, b"through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        // A loop of links is an error, not a hang.
        symlink("b", d.join("a")).unwrap();
        symlink("a", d.join("b")).unwrap();
        assert!(write_atomic(&d.join("a"), b"x").is_err());
    }

    #[test]
    fn size_limit_and_utf8_position() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, b"abc\nd\xc3\xa9f\xff\n").unwrap();
        assert!(matches!(
            read_bounded(&p, 3),
            Err(ReadError::TooLarge { size: 10, limit: 3 })
        ));
        match read_text(&p, 100) {
            Err(ReadError::NotUtf8 { line, column, byte }) => assert_eq!((line, column, byte), (2, 4, 0xff)),
            other => panic!("{other:?}"),
        }
        assert!(
            read_bounded(&d.path().join("none"), 10)
                .unwrap_err()
                .is_not_found()
        );
    }

    #[test]
    fn the_tail_is_bounded() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out");
        std::fs::write(&p, "x".repeat(10_000) + "end").unwrap();
        let t = read_tail(&p, 100);
        assert_eq!(t.len(), 100);
        assert!(t.ends_with(b"end"));
    }
}
