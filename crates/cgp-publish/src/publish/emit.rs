//! `cgp-gate report`: read a results file and write the requested reports. `check` calls [`emit`]
//! with the same options, so both commands produce the same files.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::foundation::error::{Error, Result};
use crate::outcome::results::Results;
use crate::publish::comment::{CommentOutcome, GithubConfig, post_comment, pr_from_event};
use crate::publish::github::{GithubEnv, StepOutputs, print_annotations, write_outputs, write_step_summary};
use crate::report::annotations::{Part, escape};
use crate::report::markdown::{MarkdownOptions, comment_marker, markdown};

/// The report flags `report`, `check` and `merge` share (`--junit`, `--markdown`, ...).
#[derive(Debug, Clone, Default)]
pub struct ReportFlags {
    /// Write JUnit XML here.
    pub junit: Option<PathBuf>,
    /// Write the Markdown report (the pull-request comment's text) here.
    pub markdown: Option<PathBuf>,
    /// Write the self-contained HTML report here.
    pub html: Option<PathBuf>,
    /// Create or update this spec's comment on the pull request (needs GITHUB_TOKEN).
    pub github_comment: bool,
    /// The repository for the comment, instead of GITHUB_REPOSITORY.
    pub repo: Option<String>,
    /// The pull-request number for the comment, instead of the one in GITHUB_EVENT_PATH.
    pub pr: Option<u64>,
    /// Do not write the step summary, step outputs and annotations even under GitHub Actions.
    pub no_github_actions: bool,
}

impl ReportFlags {
    /// The options these flags ask for in this environment.
    pub fn options(&self, env: &GithubEnv) -> ReportOptions {
        ReportOptions {
            junit: self.junit.clone(),
            markdown: self.markdown.clone(),
            html: self.html.clone(),
            github_comment: self.github_comment,
            github_actions: env.actions && !self.no_github_actions,
            repo: self.repo.clone(),
            pr: self.pr,
        }
    }
}

/// Which reports to produce.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportOptions {
    pub junit: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    pub html: Option<PathBuf>,
    /// Create or update the pull-request comment.
    pub github_comment: bool,
    /// Append the step summary, write step outputs and print annotations (where the
    /// environment has the variables).
    pub github_actions: bool,
    /// `owner/name` for the comment, overriding `GITHUB_REPOSITORY`.
    pub repo: Option<String>,
    /// Pull-request number for the comment, overriding the event payload.
    pub pr: Option<u64>,
}

/// Reports are written like baselines: atomically, so a crash never leaves half a report. The
/// directory must exist (a mistyped path is an error, not a new directory tree).
fn write_file(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(Error::io(
            "write",
            path,
            std::io::Error::new(std::io::ErrorKind::NotFound, "the directory does not exist"),
        ));
    }
    crate::foundation::fsutil::write_atomic(path, text.as_bytes())
}

/// Write the reports `opts` asks for. Annotations go to stdout, notes and warnings to stderr.
///
/// # Errors
/// The first failure to write a file, or a failed comment (not a 403, which is a warning). Every
/// other report is still written before a comment failure is returned.
pub fn emit(results: &Results, opts: &ReportOptions, env: &GithubEnv) -> Result<()> {
    let mut out = crate::foundation::pipe::QuietPipe::new(std::io::stdout().lock());
    let mut err = std::io::stderr().lock();
    emit_to(results, opts, env, &mut out, &mut err)
}

/// [`emit`] with its streams given (tests capture them).
///
/// # Errors
/// As [`emit`].
pub fn emit_to(
    results: &Results,
    opts: &ReportOptions,
    env: &GithubEnv,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    let note = |err: &mut dyn Write, msg: &str| {
        // A closed stderr must not turn a written report into a failure.
        // Notes quote GitHub's answers (a comment's URL, a refusal): sanitised.
        let _ = writeln!(err, "{}", crate::foundation::sanitize::block(msg));
    };
    if let Some(p) = &opts.junit {
        write_file(p, &crate::report::junit(results))?;
    }
    if let Some(p) = &opts.markdown {
        write_file(p, &markdown(results, &MarkdownOptions::default()))?;
    }
    if let Some(p) = &opts.html {
        write_file(p, &crate::report::html(results))?;
    }

    let mut comment_url = None;
    let mut comment_error = None;
    if opts.github_comment {
        match comment(results, opts, env) {
            Ok(Some(CommentOutcome::Created { url, .. })) => {
                note(err, &format!("created the pull-request comment: {url}"));
                comment_url = Some(url);
            }
            Ok(Some(CommentOutcome::Updated { url, .. })) => {
                note(err, &format!("updated the pull-request comment: {url}"));
                comment_url = Some(url);
            }
            Ok(Some(CommentOutcome::Forbidden { message })) => {
                note(err, &format!("warning: {message}"));
                if env.actions && opts.github_actions {
                    let _ = writeln!(
                        out,
                        "::warning title=cgp-gate comment::{}",
                        escape(&message, Part::Data)
                    );
                }
            }
            Ok(None) => note(
                err,
                "note: not a pull-request event and no --pr given; no comment posted",
            ),
            Err(e) => comment_error = Some(e),
        }
    }

    if opts.github_actions {
        let md = MarkdownOptions::default();
        write_step_summary(results, env, &md)?;
        let outputs = StepOutputs {
            junit: opts.junit.clone(),
            markdown: opts.markdown.clone(),
            html: opts.html.clone(),
            comment_url,
        };
        write_outputs(results, env, &outputs)?;
        if env.actions {
            print_annotations(results, out)?;
        }
    }
    match comment_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Post the comment; `Ok(None)` when there is no pull request to post on.
fn comment(results: &Results, opts: &ReportOptions, env: &GithubEnv) -> Result<Option<CommentOutcome>> {
    if opts.pr.is_none()
        && let Some(path) = &env.event_path
        && pr_from_event(path)?.is_none()
    {
        return Ok(None);
    }
    let cfg = GithubConfig::from_env(env, opts.repo.as_deref(), opts.pr, comment_marker(results))?;
    let md = MarkdownOptions {
        full_report_url: env.run_url(),
        ..MarkdownOptions::default()
    };
    post_comment(&cfg, &markdown(results, &md)).map(Some)
}
