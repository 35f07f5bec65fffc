//! `check --base REV` / `--base-dir DIR` (docs/confirm.md): where the base tree comes from (a
//! detached worktree of REV, built once with `--build` or `settings.build`, removed on every exit
//! path; or a tree the user built), and the paired stage over the rows the stored baselines left
//! doubtful, run as `ab` runs (`run::ab::run_ab`); `run::confirm` says which rows, at which levels,
//! and makes the results. Nothing doubtful: no worktree, no build, no base process.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::git;
use crate::foundation::error::{Error, Result};
use crate::outcome::results::{FailOn, Results};
use crate::run::confirm::{Base, Levels};
use crate::spec::{ConfirmMode, Spec, Target};

/// `--base`, `--base-dir`, `--build`, `--build-timeout`, `--confirm` as given.
#[derive(Debug, Clone, Default)]
pub(crate) struct BaseOptions {
    pub base: Option<String>,
    pub base_dir: Option<PathBuf>,
    pub build: Option<String>,
    pub build_timeout: Option<Duration>,
    pub confirm: Option<ConfirmMode>,
}

/// Where the base tree comes from.
enum Source {
    /// A commit of the spec's repository, checked out and built here.
    Commit {
        root: PathBuf,
        sha: String,
        build: Option<String>,
        timeout: Duration,
    },
    /// A tree the user built (`--base-dir`), and its commit when it is a git checkout.
    Dir { dir: PathBuf, sha: String },
}

/// Everything the paired stage needs, resolved before anything is measured (a revision that is
/// not there is invalid input, exit 2, before the GPU is touched).
pub(crate) struct Plan {
    source: Source,
    /// The spec's path inside the repository (or the head tree) and its text: the base tree runs
    /// the head's spec as if it lay at the same place there, as `ab` does.
    rel: PathBuf,
    text: String,
    pub mode: ConfirmMode,
    pub levels: Levels,
    /// The spec's own alpha, which the paired stage spends (per shard).
    alpha: f64,
    method: String,
}

impl Plan {
    /// The plan of `--base` / `--base-dir` for `spec` (loaded from `spec_path`), or `None`
    /// without them.
    ///
    /// # Errors
    /// [`Error::Usage`]: `--confirm` without a base, a revision that is not a commit, a spec
    /// outside the repository, a `--base-dir` that is not a folder.
    pub(crate) fn new(opts: &BaseOptions, spec: &Spec, spec_path: &Path) -> Result<Option<Self>> {
        let (base, base_dir) = (opts.base.as_deref(), opts.base_dir.as_deref());
        if base.is_none() && base_dir.is_none() {
            if opts.confirm.is_some() {
                return Err(Error::Usage(
                    "--confirm needs --base REV (or --base-dir DIR): the commit to confirm the rows against"
                        .to_owned(),
                ));
            }
            return Ok(None);
        }
        let mode = opts.confirm.unwrap_or(spec.settings.confirm);
        let (source, rel, text) = if let Some(rev) = base {
            let p = git::place(spec_path, "--base checks out a commit of the spec's repository")?;
            let sha = git::resolve(&p.root, rev, "--base")?;
            let build = opts.build.clone().or_else(|| spec.settings.build.clone());
            let timeout = opts.build_timeout.unwrap_or(git::DEFAULT_BUILD_TIMEOUT);
            (
                Source::Commit {
                    root: p.root,
                    sha,
                    build,
                    timeout,
                },
                p.rel,
                p.text,
            )
        } else {
            let dir = base_dir.unwrap_or(Path::new("."));
            if !dir.is_dir() {
                return Err(Error::Usage(format!(
                    "--base-dir {}: not a folder; give a built checkout of the base commit",
                    dir.display()
                )));
            }
            let dir = std::fs::canonicalize(dir).map_err(|e| Error::io("find", dir, e))?;
            let abs = std::fs::canonicalize(spec_path).map_err(|e| Error::io("find", spec_path, e))?;
            // The spec's place in its repository (else beside it): the same place in the base tree.
            let head_root = abs
                .parent()
                .and_then(|d| git::toplevel(d, "").ok())
                .and_then(|r| std::fs::canonicalize(r).ok())
                .unwrap_or_else(|| abs.parent().unwrap_or(Path::new("/")).to_owned());
            let rel = abs.strip_prefix(&head_root).unwrap_or(&abs).to_owned();
            let text = std::fs::read_to_string(&abs).map_err(|e| Error::io("read", &abs, e))?;
            let sha = crate::run::engine::git_head(&dir).unwrap_or_default();
            (Source::Dir { dir, sha }, rel, text)
        };
        let levels = Levels::of(spec.settings.confidence, mode);
        Ok(Some(Self {
            source,
            rel,
            text,
            mode,
            levels,
            alpha: spec.settings.alpha,
            method: levels.method(spec.settings.alpha, spec.settings.confidence, mode),
        }))
    }

    /// The base commit's full SHA (empty for a `--base-dir` outside git).
    pub(crate) fn commit(&self) -> &str {
        match &self.source {
            Source::Commit { sha, .. } | Source::Dir { sha, .. } => sha,
        }
    }

    fn base(&self, seconds: f64) -> Base<'_> {
        Base {
            commit: self.commit(),
            mode: self.mode,
            method: &self.method,
            seconds,
        }
    }
}

/// What the paired stage works with, from the screen's run.
pub(crate) struct Stage<'a> {
    /// The head's spec as loaded (its settings the user's, before the screen's pass level).
    pub spec: &'a Spec,
    pub targets: &'a [&'a Target],
    pub session: &'a crate::run::session::Session,
    pub fail_on: FailOn,
    pub allow_missing: bool,
    /// `--shard K/N`: the paired stage spends `alpha / N`, as the screen.
    pub shards: usize,
    pub progress: &'a mut dyn crate::run::progress::Progress,
}

/// Confirm the doubtful rows of `screen` against the base: nothing doubtful, nothing is checked
/// out, built or run; a base that cannot be checked out, built, started or run gives results
/// whose every doubtful row says the confirmation did not run, with a `base-failed` error (exit
/// 3). The worktree is removed before this returns (and on a signal, by `git::Worktrees`).
///
/// # Errors
/// What the paired stage cannot survive (a recorder's failure).
pub(crate) fn confirm(plan: &Plan, screen: Results, stage: Stage<'_>) -> Result<Results> {
    let sizes = crate::run::confirm::needed(&screen.rows, plan.mode);
    if sizes.is_empty() {
        return Ok(crate::run::confirm::not_needed(screen, &plan.base(0.0)));
    }
    let started = Instant::now();
    let head_spec = crate::run::confirm::at_level(
        stage.spec,
        plan.alpha / stage.shards.max(1) as f64,
        plan.levels.paired,
    );
    // The worktree lives until the paired stage is over (dropped here on every path).
    let mut trees = None;
    let base_spec = match base_tree(plan, &mut trees, &head_spec, stage.progress) {
        Ok(s) => s,
        Err(why) => {
            let secs = started.elapsed().as_secs_f64();
            return Ok(crate::run::confirm::not_run(screen, &plan.base(secs), &why));
        }
    };
    let names: Vec<&str> = stage.targets.iter().map(|t| t.name.as_str()).collect();
    let pick = |s: &Spec| {
        let ts: Vec<&Target> = s
            .targets
            .iter()
            .filter(|t| names.contains(&t.name.as_str()))
            .collect();
        crate::run::confirm::narrowed(&ts, &sizes)
    };
    let (mut head_owned, mut base_owned) = (pick(&head_spec), pick(&base_spec));
    for t in head_owned.iter_mut().chain(base_owned.iter_mut()) {
        crate::run::confirm::paired_plan(t);
    }
    let head_targets: Vec<&Target> = head_owned.iter().collect();
    let base_targets: Vec<&Target> = base_owned.iter().collect();
    let name = plan.commit().chars().take(12).collect::<String>();
    stage.progress.note(&format!(
        "confirming {} size(s) against base {name}: paired with its build in this job",
        sizes.len()
    ));
    let mut base_p = match super::open_profiler(None, &base_spec, &base_targets) {
        Ok(p) => p,
        Err(e) => {
            let secs = started.elapsed().as_secs_f64();
            return Ok(crate::run::confirm::not_run(
                screen,
                &plan.base(secs),
                &format!("the base tree's targets cannot start: {e}"),
            ));
        }
    };
    let mut head_p = super::open_profiler(None, &head_spec, &head_targets)?;
    let ci_commit = super::ci_commit();
    let opts = crate::run::ab::AbOptions {
        fail_on: stage.fail_on,
        allow_missing: stage.allow_missing,
        gpu: stage.session.gpu.as_deref(),
        manifest: None,
        // The head is this job's tree, the commit the CI names.
        ci_commit: ci_commit.as_deref(),
    };
    let mut watch = stage.session.watch(&head_spec.settings);
    let run = crate::run::ab::run_ab(
        &head_spec,
        &mut crate::run::ab::Sides {
            base: &mut crate::profile::Measuring::new(base_p.as_mut()),
            head: &mut crate::profile::Measuring::new(head_p.as_mut()),
            base_targets: &base_targets,
            head_targets: &head_targets,
        },
        None,
        watch.as_mut(),
        &opts,
        stage.progress,
    )?;
    drop(watch);
    let confirming: Vec<crate::outcome::results::Row> = screen
        .rows
        .iter()
        .filter(|r| crate::run::confirm::wants(r, plan.mode))
        .cloned()
        .collect();
    let same_sass = crate::run::confirm::same_machine_code(
        &confirming,
        (&head_spec, &head_targets),
        (&base_spec, &base_targets),
    );
    drop(trees);
    let pairs = crate::run::confirm::pairs_of(&run.order);
    let paired = crate::run::confirm::Paired {
        results: &run.results,
        pairs: &pairs,
        same_sass: &same_sass,
        processes: u32::try_from(run.order.len()).unwrap_or(u32::MAX),
    };
    let secs = started.elapsed().as_secs_f64();
    Ok(crate::run::confirm::apply(screen, &paired, &plan.base(secs)))
}

/// The base tree's spec (the head's text as if it lay at the same place there, at the paired
/// level): a worktree of the commit, built once, or the user's `--base-dir`. `Err`: why the
/// base cannot be measured (the checkout or the build failed, the spec does not load there),
/// naming the commit and the build.
fn base_tree(
    plan: &Plan,
    trees: &mut Option<git::Worktrees>,
    head: &Spec,
    progress: &mut dyn crate::run::progress::Progress,
) -> std::result::Result<Spec, String> {
    let dir = match &plan.source {
        Source::Dir { dir, .. } => dir.clone(),
        Source::Commit {
            root,
            sha,
            build,
            timeout,
        } => {
            let t = trees.insert(git::Worktrees::new(root).map_err(|e| e.to_string())?);
            let tree = t.add(sha)?;
            if let Some(cmd) = build {
                progress.note(&format!("building base {}", &sha[..sha.len().min(12)]));
                let spec_dir = tree.join(&plan.rel);
                let spec_dir = spec_dir.parent().unwrap_or(&tree);
                git::build(
                    spec_dir,
                    git::Build {
                        cmd,
                        timeout: *timeout,
                    },
                )?;
            }
            tree
        }
    };
    let mut spec = crate::spec::load_str(&plan.text, &dir.join(&plan.rel))
        .map_err(|e| format!("the spec does not load in the base tree: {e}"))?;
    spec.settings = head.settings.clone();
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_doubtful_mode_splits_the_pass_level_between_the_stages() {
        let l = Levels::of(0.95, ConfirmMode::Doubtful);
        assert!((l.screen - 0.975).abs() < 1e-12 && (l.paired - 0.975).abs() < 1e-12);
        // By the union bound a row at the threshold passes in at most 2.5 % one-sided.
        assert!(((1.0 - l.screen) / 2.0 + (1.0 - l.paired) / 2.0 - 0.025).abs() < 1e-12);
        let a = Levels::of(0.95, ConfirmMode::All);
        assert!((a.paired - 0.95).abs() < 1e-12);
    }
}
