//! GitHub Actions, the writing side: the environment ([`GithubEnv`], read once so tests inject
//! their own values and nothing deep inside reads global state), the job step summary, the step
//! outputs and the annotations on stdout. What they say is rendered in `crate::report`
//! (`markdown`, `annotations`). The token lives in [`Token`], whose `Debug` never shows it.

use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::foundation::error::{Error, Result};
use crate::outcome::results::{Results, RowVerdict};
use crate::report::annotations::annotations;
use crate::report::export::ExportType;
use crate::report::markdown::{MarkdownOptions, markdown_fitting};

/// GitHub's limit for one step's summary: "each step is restricted to a maximum size of 1MiB".
pub const STEP_SUMMARY_LIMIT: usize = 1024 * 1024;

/// A secret that is never printed: `Debug` and `Display` show `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    pub fn new(secret: impl Into<String>) -> Self {
        Self(secret.into())
    }

    /// The secret itself, for the one place that sends it.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// The GitHub Actions environment as far as reports need it. Empty values count as unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GithubEnv {
    /// `GITHUB_ACTIONS == "true"`: print workflow commands (annotations).
    pub actions: bool,
    /// `GITHUB_STEP_SUMMARY`: the file the step summary is appended to.
    pub step_summary: Option<PathBuf>,
    /// `GITHUB_OUTPUT`: the file step outputs are appended to.
    pub output: Option<PathBuf>,
    /// `GITHUB_EVENT_PATH`: the event payload (JSON).
    pub event_path: Option<PathBuf>,
    /// `GITHUB_REPOSITORY`: `owner/name`.
    pub repository: Option<String>,
    /// `GITHUB_API_URL`: `https://api.github.com`, or `https://HOST/api/v3` on GitHub Enterprise.
    pub api_url: Option<String>,
    /// `GITHUB_SERVER_URL`, for links to the run.
    pub server_url: Option<String>,
    /// `GITHUB_RUN_ID`, for links to the run.
    pub run_id: Option<String>,
    /// `GITHUB_TOKEN`.
    pub token: Option<Token>,
    /// `CGP_GATE_HISTORY_URL`: the history site's address (docs/history.md); the comment and the
    /// step summary link each row to its chart there.
    pub history_url: Option<String>,
}

impl GithubEnv {
    /// Read the process environment.
    pub fn from_env() -> Self {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// Build from any variable lookup (tests pass a map).
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Self {
        let get = |k: &str| get(k).filter(|v| !v.trim().is_empty());
        Self {
            actions: get("GITHUB_ACTIONS").is_some_and(|v| v == "true"),
            step_summary: get("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            output: get("GITHUB_OUTPUT").map(PathBuf::from),
            event_path: get("GITHUB_EVENT_PATH").map(PathBuf::from),
            repository: get("GITHUB_REPOSITORY"),
            api_url: get("GITHUB_API_URL"),
            server_url: get("GITHUB_SERVER_URL"),
            run_id: get("GITHUB_RUN_ID"),
            token: get("GITHUB_TOKEN").map(Token::new),
            history_url: get("CGP_GATE_HISTORY_URL"),
        }
    }

    /// The URL of this workflow run's page, where the step summary is shown.
    pub fn run_url(&self) -> Option<String> {
        Some(format!(
            "{}/{}/actions/runs/{}",
            self.server_url.as_deref()?.trim_end_matches('/'),
            self.repository.as_deref()?,
            self.run_id.as_deref()?
        ))
    }
}

/// Append the Markdown report to `$GITHUB_STEP_SUMMARY`, shortened so that the step's summary
/// stays under 1 MiB counting what earlier commands of the step wrote. Returns whether a summary
/// was written (false when the variable is unset).
///
/// # Errors
/// [`Error::Io`] when the file cannot be read or appended to.
pub fn write_step_summary(results: &Results, env: &GithubEnv, opts: &MarkdownOptions) -> Result<bool> {
    let Some(path) = &env.step_summary else {
        return Ok(false);
    };
    let existing = match std::fs::metadata(path) {
        Ok(m) => usize::try_from(m.len()).unwrap_or(usize::MAX),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
        Err(e) => return Err(Error::io("read", path, e)),
    };
    // 4 KiB of headroom for a separator and for whatever other steps' tools append after us.
    let budget = STEP_SUMMARY_LIMIT.saturating_sub(existing).saturating_sub(4096);
    let mut opts = opts.clone();
    if opts.full_report_url.is_none() {
        opts.full_report_url = env.run_url();
    }
    if opts.history_url.is_none() {
        opts.history_url.clone_from(&env.history_url);
    }
    let body = markdown_fitting(results, &opts, &|s: &str| s.len() <= budget);
    if body.len() > budget {
        // Not even the headline fits: leave the summary alone rather than fail its upload.
        return Ok(false);
    }
    append(path, format!("{body}\n").as_bytes())?;
    Ok(true)
}

fn append(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| Error::io("open", path, e))?;
    f.write_all(bytes).map_err(|e| Error::io("append to", path, e))
}

/// Step outputs written to `$GITHUB_OUTPUT`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepOutputs {
    /// The reports written (`junit-path`, `markdown-path`, `html-path`; the results file has no
    /// step output).
    pub paths: crate::publish::ReportPaths,
    pub comment_url: Option<String>,
}

/// Append `verdict`, `regressions`, `inconclusive`, `improvements`, `errors` and the report paths
/// to `$GITHUB_OUTPUT` in the `name<<DELIMITER` form, which is safe for any value. Returns whether
/// anything was written.
///
/// # Errors
/// [`Error::Io`] when the file cannot be appended to.
pub fn write_outputs(results: &Results, env: &GithubEnv, outputs: &StepOutputs) -> Result<bool> {
    let Some(path) = &env.output else {
        return Ok(false);
    };
    let mut pairs: Vec<(&str, String)> = vec![
        ("verdict", results.verdict.as_str().to_owned()),
        ("regressions", results.count(RowVerdict::Regression).to_string()),
        (
            "inconclusive",
            results.count(RowVerdict::Inconclusive).to_string(),
        ),
        ("improvements", results.count(RowVerdict::Improvement).to_string()),
        (
            "errors",
            (results.count(RowVerdict::Error) + results.errors.len()).to_string(),
        ),
    ];
    for (ty, p) in outputs.paths.requested() {
        let name = match ty {
            ExportType::Json => continue,
            ExportType::Junit => "junit-path",
            ExportType::Markdown => "markdown-path",
            ExportType::Html => "html-path",
        };
        pairs.push((name, p.display().to_string()));
    }
    if let Some(u) = &outputs.comment_url {
        pairs.push(("comment-url", u.clone()));
    }
    let mut text = String::new();
    for (k, v) in pairs {
        text.push_str(&output_entry(k, &v));
    }
    append(path, text.as_bytes())?;
    Ok(true)
}

/// One `name<<DELIM\nvalue\nDELIM\n` entry with a delimiter that does not occur in the value.
pub(crate) fn output_entry(name: &str, value: &str) -> String {
    let mut seed = random_seed();
    loop {
        let delim = format!("ghadelimiter_{seed:016x}");
        if !value.contains(&delim) && !name.contains(&delim) {
            return format!("{name}<<{delim}\n{value}\n{delim}\n");
        }
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    }
}

/// An unpredictable 64-bit value from the standard library's per-process random hash keys and
/// the clock; good enough for a delimiter that is also checked against the value.
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    if let Ok(d) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(d.as_nanos());
    }
    h.write_u32(std::process::id());
    h.finish()
}

/// Print [`annotations`] to `out` (stdout in the CLI).
///
/// # Errors
/// [`Error::Io`] when `out` cannot be written.
pub(crate) fn print_annotations(results: &Results, out: &mut dyn std::io::Write) -> Result<()> {
    for line in annotations(results) {
        writeln!(out, "{line}").map_err(|e| Error::io("write", "<stdout>", e))?;
    }
    Ok(())
}
