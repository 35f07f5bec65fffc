//! `cgp-gate report`: read a results file and write the requested reports. `check` calls [`emit`]
//! with the same options, so both commands produce the same files.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::foundation::error::{Error, Result};
use crate::outcome::results::Results;
use crate::publish::comment::{CommentOutcome, GithubConfig, post_comment, pr_from_event};
use crate::publish::github::{GithubEnv, StepOutputs, print_annotations, write_outputs, write_step_summary};
use crate::report::annotations::{Part, escape};
use crate::report::export::ExportType;
use crate::report::markdown::{MarkdownOptions, comment_marker, markdown};

/// Where the results and their reports go (`--json`, `--junit`, `--markdown`, `--html`): one
/// path per [`ExportType`]. `report` has no `--json`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportPaths {
    pub json: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    pub html: Option<PathBuf>,
}

impl ReportPaths {
    /// The path asked for `ty`.
    pub(crate) fn get(&self, ty: ExportType) -> Option<&Path> {
        match ty {
            ExportType::Json => self.json.as_deref(),
            ExportType::Junit => self.junit.as_deref(),
            ExportType::Markdown => self.markdown.as_deref(),
            ExportType::Html => self.html.as_deref(),
        }
    }

    /// Each format asked for, with its path, in [`ExportType::ALL`]'s order.
    pub fn requested(&self) -> impl Iterator<Item = (ExportType, &Path)> {
        ExportType::ALL
            .into_iter()
            .filter_map(|t| self.get(t).map(|p| (t, p)))
    }

    /// Whether any report (not `--json`) is asked for.
    pub fn any_report(&self) -> bool {
        self.requested().any(|(t, _)| t.is_report())
    }
}

/// The report flags `report`, `check`, `merge` and `ab` share (`--junit`, `--markdown`, ...).
#[derive(Debug, Clone, Default)]
pub struct ReportFlags {
    /// The files to write.
    pub paths: ReportPaths,
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
            paths: self.paths.clone(),
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
    /// The report files (`emit` writes those of [`ExportType::is_report`]).
    pub paths: ReportPaths,
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
    if crate::foundation::fsutil::is_stdout(path) {
        return crate::foundation::fsutil::write_output(path, text.as_bytes());
    }
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

/// Write the reports `opts` asks for. Annotations go to stdout (to stderr when a report does:
/// `-`), notes and warnings to stderr.
///
/// # Errors
/// The first failure to write a file, or a failed comment (not a 403, which is a warning). Every
/// other report is still written before a comment failure is returned.
pub fn emit(results: &Results, opts: &ReportOptions, env: &GithubEnv) -> Result<()> {
    let mut err = std::io::stderr().lock();
    if opts
        .paths
        .requested()
        .any(|(_, p)| crate::foundation::fsutil::is_stdout(p))
    {
        // A report goes to standard output (`--markdown -`): the annotations go to stderr, which
        // the runner reads for workflow commands too, and the report stays whole.
        let mut annotations = std::io::stderr();
        return emit_to(results, opts, env, &mut annotations, &mut err);
    }
    let mut out = crate::foundation::pipe::QuietPipe::new(std::io::stdout().lock());
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
    for (ty, p) in opts.paths.requested().filter(|(t, _)| t.is_report()) {
        write_file(p, &ty.exporter().render(results.into())?)?;
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
            paths: opts.paths.clone(),
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
        history_url: env.history_url.clone(),
        ..MarkdownOptions::default()
    };
    post_comment(&cfg, &markdown(results, &md)).map(Some)
}
