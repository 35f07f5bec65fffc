//! The results store from the command line (docs/store.md): which store a command uses
//! (`--store URL`, else `CGP_GATE_STORE`, else the spec's `settings.store`), the branch and the
//! CI job a run is stored under, and the push that `check`, `ab`, `merge` and `baseline update`
//! make when a store is configured. `cgp-gate store ...` itself is [`cmd`].
//!
//! The URL's password is shown nowhere: the store's `Display` replaces it, every message of the
//! drivers passes through its `scrub`, and `CGP_GATE_STORE` is a credential the program under
//! test never receives (`foundation::secrets`).

mod baseline;
pub(crate) mod cmd;

pub(crate) use baseline::{measured_results, newest_run, replay_baselines};

use std::io::Write;
use std::path::Path;

use cgp_store::store::{Access, Filter, Origin, Pushed, Store, StoreUrl, StoredRun};

use crate::foundation::error::{Error, Result};
use crate::outcome::results::Results;

/// The environment variable that names the store (a CI secret when it holds a password).
pub(crate) const STORE_ENV: &str = "CGP_GATE_STORE";

/// `--store URL` and `--branch NAME` of a command that pushes or reads runs.
#[derive(Debug, Clone, Default)]
pub(crate) struct StoreOptions {
    pub store: Option<String>,
    pub branch: Option<String>,
}

impl StoreOptions {
    /// The store configured: `--store`, else `CGP_GATE_STORE`, else `settings` (the spec's
    /// `settings.store`); `None` when none is, and the command works from files as before.
    ///
    /// # Errors
    /// A URL that is not a store's (exit 2, without its password).
    pub(crate) fn url(&self, settings: Option<&str>) -> Result<Option<StoreUrl>> {
        let env = std::env::var(STORE_ENV).ok().filter(|v| !v.trim().is_empty());
        let Some((text, from)) = self
            .store
            .as_deref()
            .map(|s| (s.to_owned(), "--store"))
            .or(env.map(|e| (e, STORE_ENV)))
            .or(settings.map(|s| (s.to_owned(), "settings.store")))
        else {
            return Ok(None);
        };
        let url = StoreUrl::parse(&text).map_err(|e| match e {
            Error::Usage(m) => Error::Usage(format!("{from}: {m}")),
            other => other,
        })?;
        Ok(Some(url.with_password_from(std::env::var("PGPASSWORD").ok())))
    }

    /// The store a reading command was asked for: `--store`, or `CGP_GATE_STORE` when no files
    /// were given (`files_given`); `None`: read the files.
    ///
    /// # Errors
    /// `--store` with files (which would be left out), a malformed URL.
    pub(crate) fn reading(&self, files_given: bool) -> Result<Option<StoreUrl>> {
        if self.store.is_some() && files_given {
            return Err(Error::Usage(
                "--store reads the runs from the store: pass either results files or --store, not both"
                    .to_owned(),
            ));
        }
        if files_given {
            return Ok(None);
        }
        self.url(None)
    }

    /// The store a `cgp-gate store ...` command needs.
    ///
    /// # Errors
    /// No store given; a malformed URL.
    pub(crate) fn required(&self) -> Result<StoreUrl> {
        self.url(None)?.ok_or_else(|| {
            Error::Usage(format!(
                "no store: pass --store URL (sqlite:PATH or postgres://USER@HOST:PORT/DB) or set {STORE_ENV}"
            ))
        })
    }
}

/// `--store`, `--branch` and `--since` of a command that reads runs (`history`, `changes`).
#[derive(Debug, Clone, Default)]
pub(crate) struct ReadOptions {
    pub store: StoreOptions,
    pub since: Option<String>,
}

impl ReadOptions {
    /// The store and the filter to read, or `None` to read the files (see
    /// [`StoreOptions::reading`]); `--branch` and `--since` without a store are refused.
    ///
    /// # Errors
    /// As [`StoreOptions::reading`]; a bad `--since`.
    pub(crate) fn reading(&self, files_given: bool) -> Result<Option<(StoreUrl, Filter)>> {
        let Some(url) = self.store.reading(files_given)? else {
            if self.store.branch.is_some() || self.since.is_some() {
                return Err(Error::Usage(
                    "--branch and --since choose runs of a store: pass --store URL (or set CGP_GATE_STORE and no files)".to_owned(),
                ));
            }
            return Ok(None);
        };
        Ok(Some((
            url,
            filter(self.store.branch.as_deref(), self.since.as_deref())?,
        )))
    }
}

/// `--since DATE`: a day (`2026-03-01`, from its start in UTC) or an RFC 3339 time.
///
/// # Errors
/// Anything else (exit 2).
pub(crate) fn since(text: Option<&str>) -> Result<Option<String>> {
    let Some(t) = text.map(str::trim) else {
        return Ok(None);
    };
    if let Ok(ts) = t.parse::<jiff::Timestamp>() {
        return Ok(Some(ts.to_string()));
    }
    if let Ok(d) = t.parse::<jiff::civil::Date>()
        && let Ok(z) = d.to_zoned(jiff::tz::TimeZone::UTC)
    {
        return Ok(Some(z.timestamp().to_string()));
    }
    Err(Error::Usage(format!(
        "--since `{}` is neither a day (2026-03-01) nor an RFC 3339 time (2026-03-01T12:00:00Z)",
        crate::foundation::sanitize::line(t)
    )))
}

/// A reading command's filter.
pub(crate) fn filter(branch: Option<&str>, since_text: Option<&str>) -> Result<Filter> {
    Ok(Filter {
        branch: branch.map(str::to_owned),
        since: since(since_text)?,
        run_id: None,
    })
}

/// The branch a run is stored under: `--branch`, else the CI's (a pull request's source
/// branch first), else git's in `dir`; empty when none says.
pub(crate) fn branch(flag: Option<&str>, dir: &Path) -> String {
    if let Some(b) = flag {
        return b.to_owned();
    }
    let env = |k: &str| {
        std::env::var(k)
            .ok()
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    for k in [
        "GITHUB_HEAD_REF",
        "GITHUB_REF_NAME",
        "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME",
        "CI_COMMIT_BRANCH",
        "CI_COMMIT_REF_NAME",
    ] {
        if let Some(v) = env(k) {
            return v;
        }
    }
    std::process::Command::new("git")
        .args(["rev-parse", "--abbrev-ref", "HEAD"])
        .current_dir(dir)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|b| !b.is_empty() && b != "HEAD")
        .unwrap_or_default()
}

/// Who pushes: the command, the branch, the machine, the CI job's ids.
pub(crate) fn origin(kind: &str, branch_flag: Option<&str>, dir: &Path) -> Origin {
    let env = |k: &str| {
        std::env::var(k)
            .ok()
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let runner = env("RUNNER_NAME")
        .or_else(|| env("CI_RUNNER_DESCRIPTION"))
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|h| h.trim().to_owned())
        })
        .unwrap_or_default();
    let mut ci = std::collections::BTreeMap::new();
    for (key, vars) in [
        ("repo", &["GITHUB_REPOSITORY", "CI_PROJECT_PATH"][..]),
        ("workflow_id", &["GITHUB_RUN_ID", "CI_PIPELINE_ID"][..]),
        ("run_attempt", &["GITHUB_RUN_ATTEMPT"][..]),
        ("job_id", &["CI_JOB_ID"][..]),
    ] {
        if let Some(v) = vars.iter().find_map(|k| env(k)) {
            ci.insert(key.to_owned(), v);
        }
    }
    Origin {
        branch: branch(branch_flag, dir),
        kind: kind.to_owned(),
        runner: crate::foundation::sanitize::line(&runner),
        ci,
        file: None,
    }
}

/// Where a command's run goes: the store found when the command started (so that a malformed
/// URL stops it before it measures), and who pushes.
pub(crate) struct Pusher {
    url: Option<StoreUrl>,
    opts: StoreOptions,
    kind: &'static str,
    dir: std::path::PathBuf,
}

impl Pusher {
    /// The store of `opts` (`--store`, `CGP_GATE_STORE`, else `settings_store`) for a `kind` of
    /// run (`check`, `ab`, `merge`, `baseline`), whose git branch is read in `dir`.
    ///
    /// # Errors
    /// A malformed URL (exit 2).
    pub(crate) fn new(
        opts: &StoreOptions,
        settings_store: Option<&str>,
        kind: &'static str,
        dir: &Path,
    ) -> Result<Self> {
        Ok(Self {
            url: opts.url(settings_store)?,
            opts: opts.clone(),
            kind,
            dir: dir.to_path_buf(),
        })
    }

    /// The store, when one is configured.
    pub(crate) fn url(&self) -> Option<&StoreUrl> {
        self.url.as_ref()
    }

    /// Push `results` (what `--json`, given as `file`, holds); a note on stderr says where it
    /// went. Nothing happens without a store.
    ///
    /// # Errors
    /// The store cannot be opened or written (exit 3; the reports are already written).
    pub(crate) fn push(&self, results: &Results, file: Option<&Path>) -> Result<()> {
        let Some(url) = &self.url else {
            return Ok(());
        };
        let mut who = origin(self.kind, self.opts.branch.as_deref(), &self.dir);
        who.file = file.map(|f| f.display().to_string());
        let run = StoredRun::from_results(results, who).map_err(|m| Error::Output {
            what: "the run for the store",
            message: m,
        })?;
        let mut store = Store::open(url, Access::Write)?;
        let pushed = store.push(&run)?;
        let _ = writeln!(std::io::stderr(), "{}", pushed_line(url, &run, &pushed));
        Ok(())
    }
}

/// What a push says: `stored run 3f9a1c7e5b2d (12 rows, branch main) in sqlite:perf.db`.
pub(crate) fn pushed_line(url: &StoreUrl, run: &StoredRun, pushed: &Pushed) -> String {
    let id = &run.id[..12];
    let line = match pushed {
        Pushed::Stored(n) => format!(
            "stored run {id} ({n} row{}, branch {}) in {url}",
            if *n == 1 { "" } else { "s" },
            shown_branch(&run.origin.branch)
        ),
        Pushed::Already { branch } => format!(
            "run {id} is already in {url} (branch {}): nothing written",
            shown_branch(branch)
        ),
    };
    crate::foundation::sanitize::line(&line)
}

fn shown_branch(b: &str) -> &str {
    if b.is_empty() { "unknown" } else { b }
}

/// The runs of a store as `history` and `changes` read results files, oldest first.
///
/// # Errors
/// The store's; no run in it for the filter (exit 2).
pub(crate) fn history_inputs(url: &StoreUrl, filter: &Filter) -> Result<Vec<(std::path::PathBuf, Results)>> {
    let mut store = Store::open(url, Access::Read)?;
    let inputs = store.history(filter)?;
    if inputs.is_empty() {
        return Err(Error::Usage(format!(
            "the store {url} holds no run{}{}; push runs first, or widen --branch/--since",
            filter
                .branch
                .as_deref()
                .map(|b| format!(" on branch `{}`", crate::foundation::sanitize::line(b)))
                .unwrap_or_default(),
            filter
                .since
                .as_deref()
                .map(|s| format!(" since {s}"))
                .unwrap_or_default()
        )));
    }
    Ok(inputs)
}
