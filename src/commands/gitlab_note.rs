//! `cgp-gate gitlab-note`: create or update this spec's note on a GitLab merge request, from a
//! results file (`check --json`, `merge --json`); the GitLab side of `--github-comment`.

use std::io::Write;
use std::path::PathBuf;

use crate::foundation::error::Result;
use crate::foundation::exit_codes::Exit;
use crate::publish::gitlab::{GitlabConfig, GitlabEnv, NoteOutcome, post_note};
use crate::report::markdown::{MarkdownOptions, comment_marker, markdown};

/// Everything `gitlab-note` needs from the command line.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub from: PathBuf,
    pub api_url: Option<String>,
    pub project: Option<String>,
    pub mr: Option<u64>,
}

/// Run `cgp-gate gitlab-note`. Exits 0 when the note is posted (or there is no merge request
/// to post on, which a line on stderr says): the verdict is `check`'s to give.
///
/// # Errors
/// An unreadable results file; missing settings (exit 2); GitLab refusing or unreachable
/// (exit 3, with advice).
pub(crate) fn run(args: &Options, err: &mut dyn Write) -> Result<Exit> {
    let results = crate::outcome::results::read(&args.from)?;
    let env = GitlabEnv::from_env();
    if args.mr.is_none() && env.mr_iid.is_none() {
        let _ = writeln!(
            err,
            "note: not a merge-request pipeline (CI_MERGE_REQUEST_IID is unset) and no --mr given; no note posted"
        );
        return Ok(Exit::Ok);
    }
    let cfg = GitlabConfig::from_env(
        &env,
        args.api_url.as_deref(),
        args.project.as_deref(),
        args.mr,
        comment_marker(&results),
    )?;
    let md = MarkdownOptions {
        full_report_url: env.job_url.clone(),
        // The history site's address (docs/history.md): each row links to its chart.
        history_url: std::env::var("CGP_GATE_HISTORY_URL")
            .ok()
            .filter(|u| !u.trim().is_empty()),
        ..MarkdownOptions::default()
    };
    let outcome = post_note(&cfg, &markdown(&results, &md))?;
    let (verb, id, url) = match outcome {
        NoteOutcome::Created { id, url } => ("created", id, url),
        NoteOutcome::Updated { id, url } => ("updated", id, url),
    };
    // The link is built from CI_PROJECT_URL: sanitised (a password in it redacted).
    let line = format!(
        "{verb} the merge-request note {id} on !{}: {}",
        cfg.mr_iid,
        url.as_deref().unwrap_or("(CI_PROJECT_URL unset: no link)")
    );
    let _ = writeln!(err, "{}", crate::foundation::sanitize::line(&line));
    Ok(Exit::Ok)
}
