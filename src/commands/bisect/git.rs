//! What `bisect` asks of git: the commits between good and bad, their subjects, and detached
//! worktrees under a temporary folder (the user's work tree is never touched; only the worktrees
//! made here are removed), and the `build:` command run in one.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::foundation::error::{Error, Result};

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

/// The top of the repository that holds `dir`.
pub(crate) fn toplevel(dir: &Path) -> Result<PathBuf> {
    git(dir, &["rev-parse", "--show-toplevel"])
        .map(PathBuf::from)
        .map_err(|e| {
            Error::Usage(format!(
                "{} is not in a git repository ({e}); bisect checks out the commits of the spec's repository: give a spec inside one",
                dir.display()
            ))
        })
}

/// The full SHA of a revision.
pub(crate) fn resolve(root: &Path, rev: &str, flag: &str) -> Result<String> {
    git(
        root,
        &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")],
    )
    .map_err(|_| {
        Error::Usage(format!(
            "{flag} {rev}: no such commit in {}; give a commit, branch or tag of the spec's repository",
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

/// Detached worktrees of one repository under a temporary folder; dropping it removes the
/// worktrees it added (and nothing else).
pub(crate) struct Worktrees {
    root: PathBuf,
    dir: tempfile::TempDir,
    added: Vec<PathBuf>,
}

impl Worktrees {
    pub(crate) fn new(root: &Path) -> Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("cgp-gate-bisect-")
            .tempdir()
            .map_err(|e| Error::io("create", std::env::temp_dir(), e))?;
        Ok(Self {
            root: root.to_owned(),
            dir,
            added: Vec::new(),
        })
    }

    /// A detached worktree of `sha`.
    pub(crate) fn add(&mut self, sha: &str) -> std::result::Result<PathBuf, String> {
        let path = self.dir.path().join(&sha[..sha.len().min(12)]);
        if self.added.contains(&path) {
            return Ok(path);
        }
        let p = path.to_string_lossy().into_owned();
        git(&self.root, &["worktree", "add", "--detach", "--quiet", &p, sha])
            .map_err(|e| format!("git worktree add failed: {e}"))?;
        self.added.push(path.clone());
        Ok(path)
    }

    /// Remove one worktree this made.
    pub(crate) fn remove(&mut self, path: &Path) {
        if let Some(at) = self.added.iter().position(|p| p == path) {
            let p = self.added.remove(at);
            let _ = git(
                &self.root,
                &["worktree", "remove", "--force", &p.to_string_lossy()],
            );
        }
    }
}

impl Drop for Worktrees {
    fn drop(&mut self) {
        for p in std::mem::take(&mut self.added) {
            let _ = git(
                &self.root,
                &["worktree", "remove", "--force", &p.to_string_lossy()],
            );
        }
    }
}

/// Run the build command (`sh -c CMD`) in `dir`; on failure, why, with the end of its output.
pub(crate) fn build(dir: &Path, cmd: &str) -> std::result::Result<(), String> {
    let out = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run the build command: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let tail: Vec<&str> = text.lines().rev().take(5).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(format!(
        "the build command `{cmd}` failed ({}): {}",
        out.status,
        crate::foundation::sanitize::line(&tail.join(" | "))
    ))
}
