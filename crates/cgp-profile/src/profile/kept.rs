//! The one folder per run where a live run keeps what its messages cite (issue 59): a copy of
//! the output an error names (the work folder it was in is removed when the command ends), and
//! the output of the "run it by hand" lines its hints print, which write there instead of the
//! folder the user is in. `--keep-dir DIR`, else `$XDG_CACHE_HOME/cgp-gate/kept/<run>` (else
//! `~/.cache/...`, else the system's temporary folder), `<run>` being the run's start time and
//! process id. Made only when something is kept or a hint names it; cgp-gate never removes it,
//! and lists it at the end of the run ([`listing`]).
//!
//! A process is one run: the folder is chosen once, by the command line ([`choose`]), and every
//! backend's error path reaches it through [`folder`] and [`keep`] without a handle threaded
//! through each profiler (the work folders of `foundation::fsutil` are kept the same way).

use std::path::PathBuf;
use std::sync::Mutex;

#[derive(Default)]
struct Kept {
    /// `--keep-dir`, when given.
    chosen: Option<PathBuf>,
    /// The folder's path, once decided (absolute).
    planned: Option<PathBuf>,
    /// Whether it was made.
    made: bool,
    /// The files kept in it, in order.
    files: Vec<PathBuf>,
}

static KEPT: Mutex<Kept> = Mutex::new(Kept {
    chosen: None,
    planned: None,
    made: false,
    files: Vec::new(),
});

/// The run's folder is `dir` (`--keep-dir`) instead of one under the cache folder.
pub fn choose(dir: Option<PathBuf>) {
    if let Ok(mut k) = KEPT.lock() {
        k.chosen = dir;
        k.planned = None;
    }
}

fn lock() -> std::io::Result<std::sync::MutexGuard<'static, Kept>> {
    KEPT.lock()
        .map_err(|_| std::io::Error::other("the kept folder's lock is poisoned"))
}

/// Where the run's folder is (absolute), decided once; not made ([`folder`] makes it).
///
/// # Errors
/// A relative `--keep-dir` when the current folder cannot be read.
pub(crate) fn path() -> std::io::Result<PathBuf> {
    let mut k = lock()?;
    if let Some(p) = &k.planned {
        return Ok(p.clone());
    }
    let dir = match &k.chosen {
        Some(d) if d.is_absolute() => d.clone(),
        Some(d) => std::env::current_dir()?.join(d),
        None => default_parent().join(run_name()),
    };
    k.planned = Some(dir.clone());
    Ok(dir)
}

/// Where runs' folders go by default: `$XDG_CACHE_HOME/cgp-gate/kept` (an absolute path, as the
/// XDG spec requires), else `$HOME/.cache/cgp-gate/kept`, else the system's temporary folder.
fn default_parent() -> PathBuf {
    let absolute = |k: &str| std::env::var_os(k).map(PathBuf::from).filter(|p| p.is_absolute());
    absolute("XDG_CACHE_HOME")
        .or_else(|| absolute("HOME").map(|h| h.join(".cache")))
        .map_or_else(
            || std::env::temp_dir().join("cgp-gate-kept"),
            |c| c.join("cgp-gate").join("kept"),
        )
}

/// The run's name: its start (UTC, to the second) and the process id, so that runs sort by time
/// and two at once never share a folder.
fn run_name() -> String {
    let at = jiff::Timestamp::now().strftime("%Y-%m-%dT%H-%M-%SZ");
    format!("{at}-{}", std::process::id())
}

/// The run's folder, made on first use.
///
/// # Errors
/// When it cannot be made (or `--keep-dir` names something that is not a folder).
pub(crate) fn folder() -> std::io::Result<PathBuf> {
    let dir = path()?;
    std::fs::create_dir_all(&dir)?;
    if !std::fs::symlink_metadata(&dir)?.is_dir() {
        return Err(std::io::Error::other(format!(
            "{} is not a folder",
            dir.display()
        )));
    }
    lock()?.made = true;
    Ok(dir)
}

/// A new file `name` in the run's folder holding `bytes`; a name already there gets a number
/// (`name-2.csv`): nothing in the folder is replaced, and no link is written through.
///
/// # Errors
/// When the folder or the file cannot be made or written.
pub(crate) fn keep(name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    use std::io::Write;
    let dir = folder()?;
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) => (s.to_owned(), format!(".{e}")),
        None => (name.to_owned(), String::new()),
    };
    for n in 1..1000 {
        let candidate = if n == 1 {
            dir.join(name)
        } else {
            dir.join(format!("{stem}-{n}{ext}"))
        };
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(mut f) => {
                f.write_all(bytes)?;
                lock()?.files.push(candidate.clone());
                return Ok(candidate);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(format!(
        "{} holds too many files named {name}",
        dir.display()
    )))
}

/// A file name made of a run's names (`matmul`, `n=1024`): path separators, control characters
/// and leading dots become `_`, so the name stays one file in the folder.
pub(crate) fn file_name(parts: &[&str], extension: &str) -> String {
    let joined = parts.join("-");
    let clean: String = joined
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .take(120)
        .collect();
    let clean = clean.trim_start_matches('.');
    format!("{}.{extension}", if clean.is_empty() { "output" } else { clean })
}

/// What the end of the run says about its folder, when it made one: the folder and each file
/// kept in it (a folder kept empty is where the hints' commands write). `None` when nothing was.
pub fn listing() -> Option<String> {
    let k = KEPT.lock().ok()?;
    let dir = k.planned.as_ref().filter(|_| k.made)?;
    let mut s = format!(
        "kept for you to read in {} (cgp-gate never removes it: delete it when done)",
        dir.display()
    );
    if k.files.is_empty() {
        s.push_str(": nothing yet; the `run it by hand` lines above write their output there");
    }
    for f in &k.files {
        s.push_str(&format!("\n  {}", f.strip_prefix(dir).unwrap_or(f).display()));
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::file_name;

    #[test]
    fn file_names_stay_one_file() {
        assert_eq!(
            file_name(&["matmul", "n=1024", "rep0"], "csv"),
            "matmul-n=1024-rep0.csv"
        );
        assert_eq!(file_name(&["../x/y", "a\nb"], "csv"), "_x_y-a_b.csv");
        assert_eq!(file_name(&[".."], "csv"), "output.csv");
    }
}
