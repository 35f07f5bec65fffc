//! The sticky pull-request comment, through octocrab.
//!
//! A pull-request comment is an issue comment on the same number. The comment that carries this
//! spec's hidden marker is updated; otherwise one is created. A 403 (the read-only token of a fork's
//! pull request) is a warning that points to the step summary, never a failed gate; 5xx and
//! transport errors are retried with backoff, a bounded number of times; anything else is an error.

use std::path::Path;
use std::time::Duration;

use octocrab::Octocrab;
use octocrab::models::CommentId;

use crate::foundation::error::{Error, Result};
use crate::publish::github::{GithubEnv, Token};

/// Where and as whom to post. `Debug` never shows the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GithubConfig {
    /// The REST API root: `https://api.github.com` or `https://HOST/api/v3` (GitHub Enterprise).
    pub api_url: String,
    pub owner: String,
    pub repo: String,
    /// The pull-request number.
    pub pr: u64,
    pub token: Token,
    /// The hidden marker that identifies this spec's comment (see `markdown::comment_marker`).
    pub marker: String,
    /// Attempts in all for server errors (5xx) and transport failures.
    pub tries: u32,
    /// Wait before the first retry; doubled for each further one.
    pub backoff: Duration,
}

/// What [`post_comment`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommentOutcome {
    Created {
        id: u64,
        url: String,
    },
    Updated {
        id: u64,
        url: String,
    },
    /// GitHub answered 403: the token may not write (a fork's pull request). Not a failure of the
    /// gate; the message says where the report is instead.
    Forbidden {
        message: String,
    },
}

impl GithubConfig {
    /// The configuration from the Actions environment, with explicit overrides.
    ///
    /// `repo` (`owner/name`) overrides `GITHUB_REPOSITORY`; `pr` overrides the number in the
    /// event at `GITHUB_EVENT_PATH` (`pull_request.number`, else `number`).
    ///
    /// # Errors
    /// [`Error::Usage`] naming the missing variable or flag; [`Error::Input`] for an unreadable
    /// or malformed event file.
    pub fn from_env(
        env: &GithubEnv,
        repo: Option<&str>,
        pr: Option<u64>,
        marker: impl Into<String>,
    ) -> Result<Self> {
        let full = repo.or(env.repository.as_deref()).ok_or_else(|| {
            Error::Usage(
                "no repository for the pull-request comment: set GITHUB_REPOSITORY or pass --repo OWNER/NAME"
                    .to_owned(),
            )
        })?;
        let (owner, name) = full
            .split_once('/')
            .filter(|(o, n)| !o.is_empty() && !n.is_empty() && !n.contains('/'))
            .ok_or_else(|| Error::Usage(format!("repository `{full}` is not of the form OWNER/NAME")))?;
        let pr = match pr {
            Some(n) => n,
            None => {
                let path = env.event_path.as_deref().ok_or_else(|| {
                    Error::Usage(
                        "no pull request for the comment: GITHUB_EVENT_PATH is unset; pass --pr NUMBER"
                            .to_owned(),
                    )
                })?;
                pr_from_event(path)?.ok_or_else(|| {
                    Error::input(
                        path,
                        "the event has no pull-request number (not a pull_request event?); pass --pr NUMBER or drop --github-comment",
                    )
                })?
            }
        };
        let token = env.token.clone().ok_or_else(|| {
            Error::Usage(
                "no token for the pull-request comment: set GITHUB_TOKEN (with pull-requests: write)"
                    .to_owned(),
            )
        })?;
        Ok(Self {
            api_url: env
                .api_url
                .clone()
                .unwrap_or_else(|| "https://api.github.com".to_owned()),
            owner: owner.to_owned(),
            repo: name.to_owned(),
            pr,
            token,
            marker: marker.into(),
            tries: 3,
            backoff: Duration::from_secs(2),
        })
    }
}

/// The pull-request number from an Actions event payload, `None` when the event is not about a
/// pull request (a `push`, a `schedule`).
///
/// # Errors
/// [`Error::Input`] when the file cannot be read or is not JSON.
pub(crate) fn pr_from_event(path: &Path) -> Result<Option<u64>> {
    let text = crate::foundation::fsutil::read_text(path, crate::foundation::fsutil::limits::RESULTS)
        .map_err(|e| {
            Error::input(
                path,
                format!("failed to read the event payload: {}", e.message("event payload")),
            )
        })?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::input(path, format!("event payload is not valid JSON: {e}")))?;
    Ok(v.pointer("/pull_request/number")
        .or_else(|| v.get("number"))
        .and_then(serde_json::Value::as_u64))
}

/// Create or update this spec's comment on the pull request. Runs its own current-thread Tokio
/// runtime, so callers stay synchronous.
///
/// # Errors
/// [`Error::Environment`] when GitHub refuses for any reason but 403, or stays unreachable after
/// `cfg.tries` attempts. The message never contains the token.
pub fn post_comment(cfg: &GithubConfig, body: &str) -> Result<CommentOutcome> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Error::Environment(format!(
                "failed to start the async runtime for the GitHub API: {e}"
            ))
        })?;
    rt.block_on(post_with_retries(cfg, body))
}

enum Failure {
    Forbidden(String),
    Retryable(String),
    Fatal(String),
}

async fn post_with_retries(cfg: &GithubConfig, body: &str) -> Result<CommentOutcome> {
    let where_ = format!("{}/{}#{}", cfg.owner, cfg.repo, cfg.pr);
    let crab = Octocrab::builder()
        .base_uri(cfg.api_url.as_str())
        .map_err(|e| {
            Error::Usage(format!(
                "GitHub API URL `{}` is not a valid URI: {e}",
                cfg.api_url
            ))
        })?
        .personal_token(cfg.token.expose().to_owned())
        // Retries are ours (`publish::retry`): bounded, with backoff, and around the whole
        // find-then-write so that a create that succeeded behind a 5xx is found and updated
        // instead of duplicated. octocrab is built without its `retry` feature: it retries nothing.
        .set_connect_timeout(Some(Duration::from_secs(10)))
        .set_read_timeout(Some(Duration::from_secs(30)))
        .build()
        .map_err(|e| Error::Environment(format!("failed to set up the GitHub client: {e}")))?;
    let tries = cfg.tries.max(1);
    let outcome = crate::publish::retry::with_retries(
        tries,
        cfg.backoff,
        || upsert(&crab, cfg, body),
        |e| matches!(e, Failure::Retryable(_)),
    );
    match outcome.await {
        Ok(outcome) => Ok(outcome),
        Err(Failure::Forbidden(msg)) => Ok(CommentOutcome::Forbidden {
            message: format!(
                "GitHub refused to write the comment on {where_} (403: {msg}); a fork's pull request gets a read-only token. The report is in the job's step summary."
            ),
        }),
        Err(Failure::Fatal(msg)) => Err(Error::Environment(format!(
            "failed to post the comment on {where_}: {msg}"
        ))),
        Err(Failure::Retryable(last)) => Err(Error::Environment(format!(
            "failed to post the comment on {where_} after {tries} attempts: {last}"
        ))),
    }
}

async fn upsert(crab: &Octocrab, cfg: &GithubConfig, body: &str) -> Result<CommentOutcome, Failure> {
    let issues = crab.issues(&cfg.owner, &cfg.repo);
    let first = issues
        .list_comments(cfg.pr)
        .per_page(100)
        .send()
        .await
        .map_err(classify)?;
    let comments = crab.all_pages(first).await.map_err(classify)?;
    let ours = comments
        .iter()
        .find(|c| c.body.as_deref().is_some_and(|b| b.contains(&cfg.marker)));
    match ours {
        Some(c) => {
            let updated = issues
                .update_comment(CommentId(c.id.0), body)
                .await
                .map_err(classify)?;
            Ok(CommentOutcome::Updated {
                id: updated.id.0,
                url: updated.html_url.to_string(),
            })
        }
        None => {
            let created = issues.create_comment(cfg.pr, body).await.map_err(classify)?;
            Ok(CommentOutcome::Created {
                id: created.id.0,
                url: created.html_url.to_string(),
            })
        }
    }
}

fn classify(e: octocrab::Error) -> Failure {
    match &e {
        octocrab::Error::GitHub { source, .. } => {
            let status = source.status_code;
            // The body's message may echo the request (a proxy's Authorization header) and be of
            // any size: redacted and bounded before it reaches an error or a `::warning`.
            let message = crate::foundation::sanitize::api_body(&source.message);
            let msg = format!("{} {message}", status.as_u16());
            if status.as_u16() == 403 {
                Failure::Forbidden(message)
            } else if status.is_server_error() || status.as_u16() == 429 {
                Failure::Retryable(msg)
            } else {
                Failure::Fatal(msg)
            }
        }
        // No HTTP answer (connection refused, reset, timeout): worth another try.
        octocrab::Error::Hyper { .. } | octocrab::Error::Service { .. } => {
            Failure::Retryable(crate::foundation::sanitize::api_body(&e.to_string()))
        }
        _ => Failure::Fatal(crate::foundation::sanitize::api_body(&e.to_string())),
    }
}
