//! What `bisect` and `check --base` ask of git: the commits between good and bad, their subjects,
//! detached worktrees under a temporary folder (the user's work tree, index and branches are never
//! touched; only the worktrees made here are removed, on every exit path: dropped, on an error,
//! and on a signal, through `foundation::cleanup`), and the `build:` command run in one, with a
//! timeout and without the CI job's credentials.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::foundation::error::{Error, Result};

/// How long a build may run when `--build-timeout` does not say (docs/bisect.md, docs/confirm.md).
pub(crate) const DEFAULT_BUILD_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// `git -C root ARGS`, its stdout trimmed, or its stderr as the error.
fn git(root: &Path, args: &[&str]) -> std::result::Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

/// The top of the repository that holds `dir`; `what` says who needs it, for the error.
pub(crate) fn toplevel(dir: &Path, what: &str) -> Result<PathBuf> {
    git(dir, &["rev-parse", "--show-toplevel"])
        .map(PathBuf::from)
        .map_err(|e| {
            Error::Usage(format!(
                "{} is not in a git repository ({e}); {what}: give a spec inside one",
                dir.display()
            ))
        })
}

/// The full SHA of a revision.
pub(crate) fn resolve(root: &Path, rev: &str, flag: &str) -> Result<String> {
    // A revision that reads as an option is no revision (`--output=...`).
    let bad = rev.is_empty() || rev.starts_with('-') || rev.chars().any(char::is_control);
    let found = if bad {
        Err(String::new())
    } else {
        git(
            root,
            &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")],
        )
    };
    found.map_err(|_| {
        Error::Usage(format!(
            "{flag} {}: no such commit in {}; give a commit, branch or tag of the spec's repository (a shallow clone may lack it: fetch it, e.g. `git fetch --depth=1 origin <sha>`)",
            crate::foundation::sanitize::line(rev),
            root.display()
        ))
    })
}

/// The commits after `good` up to and including `bad`, oldest first, and whether they are the
/// first-parent line (the range has merges: each merge is then one step, as the merges of main
/// are) rather than the ancestry path.
pub(crate) fn commits(root: &Path, good: &str, bad: &str) -> Result<(Vec<String>, bool)> {
    if git(root, &["merge-base", "--is-ancestor", good, bad]).is_err() {
        return Err(Error::Usage(format!(
            "--good {good} is not an ancestor of --bad {bad}; give an older commit as --good (the last one known to be good)"
        )));
    }
    let range = format!("{good}..{bad}");
    let merges = git(root, &["rev-list", "--merges", &range]).map_err(Error::Environment)?;
    let first_parent = !merges.is_empty();
    let mut args = vec!["rev-list", "--reverse", "--ancestry-path"];
    if first_parent {
        args.push("--first-parent");
    }
    args.push(&range);
    let list = git(root, &args).map_err(Error::Environment)?;
    Ok((list.lines().map(str::to_owned).collect(), first_parent))
}

/// A commit's subject line.
pub(crate) fn subject(root: &Path, sha: &str) -> String {
    git(root, &["log", "-1", "--format=%s", sha]).unwrap_or_default()
}

/// `git worktree remove --force` of each path, in `root`'s repository (best effort).
fn remove_all(root: &Path, paths: &[PathBuf]) {
    for p in paths {
        let _ = git(root, &["worktree", "remove", "--force", &p.to_string_lossy()]);
    }
}

/// Detached worktrees of one repository under a temporary folder; dropping it removes the
/// worktrees it added (and nothing else), and so does a signal that ends the process first
/// (the undo registered with `foundation::cleanup`, which the signal thread runs).
pub(crate) struct Worktrees {
    root: PathBuf,
    dir: tempfile::TempDir,
    /// Every worktree `add` started, from just before its `git worktree add` (a signal may come
    /// while git runs) until it is removed: shared with the signal's undo.
    added: Arc<Mutex<Vec<PathBuf>>>,
    undo: crate::foundation::cleanup::Registered,
}

impl Worktrees {
    pub(crate) fn new(root: &Path) -> Result<Self> {
        // The thread that undoes this on SIGTERM or Ctrl-C (installed once per process).
        crate::gpu::clocks::ensure_signal_thread().map_err(Error::Environment)?;
        let dir = crate::foundation::fsutil::signal_safe_temp_dir("cgp-gate-worktrees-")?;
        let added: Arc<Mutex<Vec<PathBuf>>> = Arc::default();
        let (r, list) = (root.to_owned(), Arc::clone(&added));
        let undo = crate::foundation::cleanup::register(move || {
            let paths = list.lock().map(|v| v.clone()).unwrap_or_default();
            remove_all(&r, &paths);
        });
        Ok(Self {
            root: root.to_owned(),
            dir,
            added,
            undo,
        })
    }

    fn list(&self) -> std::sync::MutexGuard<'_, Vec<PathBuf>> {
        self.added
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A detached worktree of `sha`.
    pub(crate) fn add(&mut self, sha: &str) -> std::result::Result<PathBuf, String> {
        let path = self.dir.path().join(&sha[..sha.len().min(12)]);
        if self.list().contains(&path) {
            return Ok(path);
        }
        self.list().push(path.clone());
        let p = path.to_string_lossy().into_owned();
        if let Err(e) = git(&self.root, &["worktree", "add", "--detach", "--quiet", &p, sha]) {
            self.remove(&path);
            return Err(format!("git worktree add failed: {e}"));
        }
        Ok(path)
    }

    /// Remove one worktree this made.
    pub(crate) fn remove(&mut self, path: &Path) {
        let taken = {
            let mut list = self.list();
            list.iter().position(|p| p == path).map(|at| list.remove(at))
        };
        if let Some(p) = taken {
            remove_all(&self.root, &[p]);
        }
    }
}

impl Drop for Worktrees {
    fn drop(&mut self) {
        let paths = std::mem::take(&mut *self.list());
        remove_all(&self.root, &paths);
        crate::foundation::cleanup::forget(self.undo);
        // The folder itself goes with `dir`; the signal path no longer needs to know it.
        crate::foundation::fsutil::forget_temp_dir(self.dir.path());
    }
}

/// A build command and how long it may run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Build<'a> {
    pub cmd: &'a str,
    pub timeout: Duration,
}

/// Run the build command (`sh -c CMD`) in `dir`, through the runner every program goes through:
/// its own process group (ended on timeout and on a signal), the CI job's credentials removed
/// from its environment (`foundation::secrets::is_credential`: the commit built may be a pull
/// request's). On failure, why, with the end of its output.
pub(crate) fn build(dir: &Path, b: Build<'_>) -> std::result::Result<(), String> {
    let logs = crate::foundation::fsutil::signal_safe_temp_dir("cgp-gate-build-")
        .map_err(|e| format!("cannot run the build command: {e}"))?;
    let inv = crate::ncu::runner::Invocation {
        program: PathBuf::from("sh"),
        args: vec!["-c".into(), b.cmd.into()],
        cwd: Some(dir.to_owned()),
        env: std::collections::BTreeMap::new(),
        timeout: b.timeout,
        stdout: logs.path().join("stdout"),
        stderr: logs.path().join("stderr"),
    };
    let outcome = crate::ncu::runner::run(&inv);
    let text = format!(
        "{}{}",
        tail_of(&logs.path().join("stdout")),
        tail_of(&logs.path().join("stderr"))
    );
    crate::foundation::fsutil::forget_temp_dir(logs.path());
    let outcome = outcome.map_err(|e| format!("cannot run the build command `{}`: {e}", b.cmd))?;
    let tail: Vec<&str> = text.lines().rev().take(5).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    let tail = crate::foundation::sanitize::line(&tail.join(" | "));
    if outcome.timed_out {
        return Err(format!(
            "the build command `{}` did not end within {} and was stopped (--build-timeout): {tail}",
            b.cmd,
            duration_text(b.timeout)
        ));
    }
    if outcome.code == Some(0) {
        return Ok(());
    }
    let status = match (outcome.code, outcome.signal) {
        (Some(c), _) => format!("exit status: {c}"),
        (None, Some(s)) => format!("signal {s}"),
        (None, None) => "no exit status".to_owned(),
    };
    Err(format!("the build command `{}` failed ({status}): {tail}", b.cmd))
}

/// The last 64 KiB of a log, as text (a build may print much, and not always UTF-8).
fn tail_of(path: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    const KEEP: u64 = 64 * 1024;
    let Ok(mut f) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(KEEP)));
    let mut bytes = Vec::new();
    let _ = f.take(KEEP).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `30m`, `90s`, `2h`: a duration as `--build-timeout` takes it.
pub(crate) fn duration_text(d: Duration) -> String {
    let s = d.as_secs();
    if s > 0 && s.is_multiple_of(3600) {
        format!("{}h", s / 3600)
    } else if s > 0 && s.is_multiple_of(60) {
        format!("{}m", s / 60)
    } else {
        format!("{}s", d.as_secs_f64())
    }
}
/// The repository, the spec's path inside it and its text.
pub(crate) struct Place {
    pub root: PathBuf,
    pub rel: PathBuf,
    pub text: String,
}

/// `what` says who needs the repository, for the error when there is none.
pub(crate) fn place(spec: &Path, what: &str) -> Result<Place> {
    let abs = std::fs::canonicalize(spec).map_err(|e| Error::io("find", spec, e))?;
    let dir = abs.parent().unwrap_or(Path::new("/"));
    let root = std::fs::canonicalize(toplevel(dir, what)?).map_err(|e| Error::io("find", dir, e))?;
    let rel = abs
        .strip_prefix(&root)
        .map_err(|_| {
            Error::Usage(format!(
                "the spec {} is not inside {}",
                spec.display(),
                root.display()
            ))
        })?
        .to_owned();
    let text = std::fs::read_to_string(&abs).map_err(|e| Error::io("read", &abs, e))?;
    Ok(Place { root, rel, text })
}
