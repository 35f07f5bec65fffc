//! GitHub Actions: the job step summary, step outputs and workflow-command annotations.
//!
//! The environment is read once into [`GithubEnv`], so tests inject their own values and nothing
//! deep inside reads global state. The token lives in [`Token`], whose `Debug` never shows it.

use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::foundation::error::{Error, Result};
use crate::outcome::decide::Gate;
use crate::outcome::results::{Results, RowVerdict};
use crate::report::format::{case_name, change_with_ci, median, p_value};
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
    pub junit: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    pub html: Option<PathBuf>,
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
    let paths = [
        ("junit-path", &outputs.junit),
        ("markdown-path", &outputs.markdown),
        ("html-path", &outputs.html),
    ];
    for (k, p) in paths {
        if let Some(p) = p {
            pairs.push((k, p.display().to_string()));
        }
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

/// Where a text goes in a workflow command (`::error file=F,title=T::MESSAGE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The message after `::`.
    Data,
    /// A property value (`title=`, `file=`), which also ends at `,` and `::`.
    Property,
}

/// The annotations' one escaping function (workflow commands): control and bidi characters
/// shown as `<U+XXXX>`, `%`, `\r` and `\n` escaped everywhere, and in a property also `:` and `,`.
pub fn escape(s: &str, part: Part) -> String {
    // ESC, BEL and OSC sequences and bidi controls from kernel names must not reach the log raw
    // (shown as `<U+001B>`); `\r` and `\n` keep their workflow-command escapes.
    let shown: String = s
        .chars()
        .map(|c| match c {
            '\r' | '\n' => c.to_string(),
            c if crate::report::text::is_bidi_control(c) || c.is_control() => {
                crate::report::text::code_point(c)
            }
            c => c.to_string(),
        })
        .collect();
    let data = shown
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    match part {
        Part::Data => data,
        Part::Property => data.replace(':', "%3A").replace(',', "%2C"),
    }
}

/// The line of the spec where a row's metric is written under its target (`metrics:` of the
/// target), else the line of the target's `name:`; `None` when the target is not found. A plain
/// scan of the text: the spec was validated when the results were made, and an annotation
/// without a line is still an annotation.
pub fn spec_line(spec: &str, target: &str, metric: Option<&str>) -> Option<usize> {
    let is_name = |l: &str, name: &str| {
        let t = l.trim_start().trim_start_matches("- ").trim_start();
        t.strip_prefix("name:").is_some_and(|v| {
            let v = v.trim();
            let v = v.split(" #").next().unwrap_or(v).trim();
            v.trim_matches(|c| c == '"' || c == '\'') == name
        })
    };
    let lines: Vec<&str> = spec.lines().collect();
    let start = lines.iter().position(|l| is_name(l, target))?;
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.trim_start().starts_with("- name:"))
        .map_or(lines.len(), |k| start + 1 + k);
    let found = metric.and_then(|m| {
        let key = format!("{m}:");
        (start..end).find(|&k| {
            lines[k].match_indices(&key).any(|(i, _)| {
                i == 0 || !lines[k][..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.')
            })
        })
    });
    Some(found.unwrap_or(start) + 1)
}

/// The workflow commands for a run: `::error` per row that fails the gate (regression, missing
/// row the run should have measured, inconclusive under `--fail-on inconclusive`), row error and
/// run error, `::warning` per other inconclusive row. Each is one line, and names the spec file with the line of
/// the row's metric (or target) when the spec can be read.
pub fn annotations(results: &Results) -> Vec<String> {
    let spec_text = (!results.spec_path.is_empty())
        .then(|| {
            crate::foundation::fsutil::read_text(
                std::path::Path::new(&results.spec_path),
                crate::foundation::fsutil::limits::SPEC,
            )
            .ok()
        })
        .flatten();
    let file = |target: &str, metric: Option<&str>| {
        if results.spec_path.is_empty() {
            return String::new();
        }
        let line = spec_text
            .as_deref()
            .and_then(|t| spec_line(t, target, metric))
            .map_or_else(String::new, |l| format!("line={l},"));
        format!("file={},{line}", escape(&results.spec_path, Part::Property))
    };
    let mut out = Vec::new();
    for r in &results.rows {
        // The row's gate status, as every reporter shows it (crate::outcome::decide).
        let level = match crate::outcome::decide::row_gate(r, results.fail_on) {
            Gate::Fail | Gate::Error => "error",
            Gate::Warn => "warning",
            Gate::Pass => continue,
        };
        let title = format!(
            "cgp-gate {}: {} {}",
            r.verdict.as_str(),
            crate::measured::samples::target_size(&r.target, &r.size),
            r.metric
        );
        let mut message = format!(
            "{}: baseline {} -> candidate {}, change {}, threshold {}, p {}. {}",
            case_name(r),
            median(r.baseline.as_ref(), &r.unit),
            median(r.candidate.as_ref(), &r.unit),
            change_with_ci(r),
            crate::outcome::results::threshold_text(r),
            p_value(r.p_adjusted.or(r.p)),
            r.reason
        );
        // The why (docs/why.md): its reading; the counters are in the other reports.
        if let Some(w) = &r.why {
            message.push_str(&format!(". Why: {}", w.reading));
        }
        out.push(format!(
            "::{level} {}title={}::{}",
            file(&r.target, Some(&r.metric)),
            escape(&title, Part::Property),
            escape(&message, Part::Data)
        ));
    }
    for e in &results.errors {
        let at = match &e.size {
            Some(s) => format!("{}[{s}]", e.target),
            None => e.target.clone(),
        };
        out.push(format!(
            "::error {}title={}::{}",
            file(&e.target, None),
            escape(&format!("cgp-gate error ({}): {at}", e.kind), Part::Property),
            escape(&e.message, Part::Data)
        ));
    }
    out
}

/// Print [`annotations`] to `out` (stdout in the CLI).
///
/// # Errors
/// [`Error::Io`] when `out` cannot be written.
pub fn print_annotations(results: &Results, out: &mut dyn std::io::Write) -> Result<()> {
    for line in annotations(results) {
        writeln!(out, "{line}").map_err(|e| Error::io("write", "<stdout>", e))?;
    }
    Ok(())
}
