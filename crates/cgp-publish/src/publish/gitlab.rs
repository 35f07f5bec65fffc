//! The sticky merge-request note on GitLab, through GitLab's REST API (v4).
//!
//! The same rule as the GitHub comment ([`crate::publish::comment`]): the note that carries this
//! spec's hidden marker is updated in place; otherwise one is created. Notes are listed page by
//! page (`X-Next-Page`), a bounded number of pages. 5xx, 429 and transport errors are retried
//! with backoff around the whole find-then-write, so that a create that succeeded behind a 5xx is
//! found and updated instead of duplicated; anything else is an error with advice (exit 3).
//!
//! The HTTP client is ureq (blocking, rustls with ring and the system's root certificates; no
//! proxy from the environment and no redirects followed, as before): octocrab speaks only
//! GitHub's API. The token goes in
//! `PRIVATE-TOKEN` (`GITLAB_TOKEN`: a project, group or personal access token with the `api`
//! scope) or `JOB-TOKEN` (`CI_JOB_TOKEN`), marked sensitive, and never appears in a message.

use std::time::Duration;

use http::{HeaderValue, Method, Request, StatusCode};

use crate::foundation::error::{Error, Result};
use crate::publish::github::Token;

/// The most pages of notes read (100 notes each): a merge request with more is not searched
/// further, and a new note is created.
const MAX_PAGES: u32 = 100;
/// The longest answer read from GitLab.
const MAX_RESPONSE_BYTES: u64 = 16 << 20;

/// How the token is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitlabToken {
    /// `GITLAB_TOKEN`, sent as `PRIVATE-TOKEN`.
    Private(Token),
    /// `CI_JOB_TOKEN`, sent as `JOB-TOKEN`.
    Job(Token),
}

impl GitlabToken {
    fn header(&self) -> (&'static str, &Token) {
        match self {
            Self::Private(t) => ("PRIVATE-TOKEN", t),
            Self::Job(t) => ("JOB-TOKEN", t),
        }
    }
}

/// The GitLab CI environment as far as the note needs it. Empty values count as unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitlabEnv {
    /// `CI_API_V4_URL`: `https://gitlab.example.com/api/v4`.
    pub api_url: Option<String>,
    /// `CI_PROJECT_ID`: the project the merge request belongs to (`CI_MERGE_REQUEST_PROJECT_ID`
    /// first, which differs for a fork's merge request).
    pub project: Option<String>,
    /// `CI_MERGE_REQUEST_IID`: the merge request's number within its project.
    pub mr_iid: Option<String>,
    /// `CI_MERGE_REQUEST_PROJECT_URL`, else `CI_PROJECT_URL`: for the note's link.
    pub project_url: Option<String>,
    /// `CI_JOB_URL`: the job, linked when the note is shortened.
    pub job_url: Option<String>,
    /// `GITLAB_TOKEN`, else `CI_JOB_TOKEN`.
    pub token: Option<GitlabToken>,
}

impl GitlabEnv {
    /// Read the process environment.
    pub fn from_env() -> Self {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// Build from any variable lookup (tests pass a map).
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Self {
        let get = |k: &str| get(k).filter(|v| !v.trim().is_empty());
        Self {
            api_url: get("CI_API_V4_URL"),
            project: get("CI_MERGE_REQUEST_PROJECT_ID").or_else(|| get("CI_PROJECT_ID")),
            mr_iid: get("CI_MERGE_REQUEST_IID"),
            project_url: get("CI_MERGE_REQUEST_PROJECT_URL").or_else(|| get("CI_PROJECT_URL")),
            job_url: get("CI_JOB_URL"),
            token: get("GITLAB_TOKEN")
                .map(|t| GitlabToken::Private(Token::new(t)))
                .or_else(|| get("CI_JOB_TOKEN").map(|t| GitlabToken::Job(Token::new(t)))),
        }
    }
}

/// Where and as whom to post. `Debug` never shows the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitlabConfig {
    /// The REST API root, `https://HOST/api/v4`.
    pub api_url: String,
    /// The project: its numeric id, or its path (`group/name`, encoded when sent).
    pub project: String,
    /// The merge request's IID (its number in the project).
    pub mr_iid: u64,
    /// The project's web address, for the note's link; `None` gives no link.
    pub project_url: Option<String>,
    pub token: GitlabToken,
    /// The hidden marker that identifies this spec's note (`markdown::comment_marker`).
    pub marker: String,
    /// Attempts in all for server errors (5xx, 429) and transport failures.
    pub tries: u32,
    /// Wait before the first retry; doubled for each further one.
    pub backoff: Duration,
    /// Time allowed for each request.
    pub timeout: Duration,
}

/// What [`post_note`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoteOutcome {
    Created { id: u64, url: Option<String> },
    Updated { id: u64, url: Option<String> },
}

impl GitlabConfig {
    /// The configuration from the GitLab CI environment, with explicit overrides.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the missing variable or flag.
    pub fn from_env(
        env: &GitlabEnv,
        api_url: Option<&str>,
        project: Option<&str>,
        mr_iid: Option<u64>,
        marker: impl Into<String>,
    ) -> Result<Self> {
        let api_url = api_url.map(str::to_owned).or_else(|| env.api_url.clone()).ok_or_else(|| {
            Error::Usage(
                "no GitLab API URL for the merge-request note: CI_API_V4_URL is unset; pass --api-url https://HOST/api/v4"
                    .to_owned(),
            )
        })?;
        let project = project.map(str::to_owned).or_else(|| env.project.clone()).ok_or_else(|| {
            Error::Usage(
                "no project for the merge-request note: CI_PROJECT_ID is unset; pass --project ID or --project GROUP/NAME"
                    .to_owned(),
            )
        })?;
        let mr_iid = match mr_iid {
            Some(n) => n,
            None => {
                let v = env.mr_iid.as_deref().ok_or_else(|| {
                    Error::Usage(
                        "no merge request for the note: CI_MERGE_REQUEST_IID is unset (not a merge-request pipeline?); pass --mr IID, or run the job with `rules: - if: $CI_PIPELINE_SOURCE == \"merge_request_event\"`"
                            .to_owned(),
                    )
                })?;
                v.trim()
                    .parse()
                    .map_err(|_| Error::Usage(format!("CI_MERGE_REQUEST_IID `{v}` is not a whole number")))?
            }
        };
        let token = env.token.clone().ok_or_else(|| {
            Error::Usage(
                "no token for the merge-request note: set GITLAB_TOKEN (a project access token with the `api` scope and at least the Reporter role) as a masked CI/CD variable"
                    .to_owned(),
            )
        })?;
        Ok(Self {
            api_url: api_url.trim_end_matches('/').to_owned(),
            project,
            mr_iid,
            project_url: env.project_url.clone(),
            token,
            marker: marker.into(),
            tries: 3,
            backoff: Duration::from_secs(2),
            timeout: Duration::from_secs(30),
        })
    }

    fn notes_url(&self) -> String {
        // A project path has its `/` encoded (`group%2Fname`); a numeric id is unchanged.
        let project =
            percent_encoding::utf8_percent_encode(&self.project, percent_encoding::NON_ALPHANUMERIC);
        format!(
            "{}/projects/{project}/merge_requests/{}/notes",
            self.api_url, self.mr_iid
        )
    }

    fn note_url(&self, id: u64) -> Option<String> {
        self.project_url.as_ref().map(|p| {
            format!(
                "{}/-/merge_requests/{}#note_{id}",
                p.trim_end_matches('/'),
                self.mr_iid
            )
        })
    }
}

/// Create or update this spec's note on the merge request.
///
/// # Errors
/// [`Error::Environment`] with advice when GitLab refuses, or stays unreachable after
/// `cfg.tries` attempts; [`Error::Usage`] for an API URL that is not a URL. No message contains
/// the token.
pub fn post_note(cfg: &GitlabConfig, body: &str) -> Result<NoteOutcome> {
    let redact = |s: String| {
        let secret = cfg.token.header().1.expose();
        if secret.is_empty() {
            s
        } else {
            s.replace(secret, "***")
        }
    };
    // Every message also loses a URL's password (`--api-url http://user:PASS@host`).
    let redact = |s: String| crate::foundation::sanitize::redact_urls(&redact(s)).into_owned();
    post_with_retries(cfg, body).map_err(|e| match e {
        Error::Environment(m) => Error::Environment(redact(m)),
        Error::Usage(m) => Error::Usage(redact(m)),
        other => other,
    })
}

enum Failure {
    Retryable(String),
    Fatal(String),
}

struct Api<'a> {
    cfg: &'a GitlabConfig,
    agent: ureq::Agent,
}

fn post_with_retries(cfg: &GitlabConfig, body: &str) -> Result<NoteOutcome> {
    let where_ = format!("merge request !{} of project {}", cfg.mr_iid, cfg.project);
    if !(cfg.api_url.starts_with("https://") || cfg.api_url.starts_with("http://"))
        || cfg.api_url.parse::<http::Uri>().is_err()
    {
        return Err(Error::Usage(format!(
            "GitLab API URL `{}` is not an http(s) URL; it looks like https://gitlab.example.com/api/v4",
            cfg.api_url
        )));
    }
    let api = Api {
        cfg,
        agent: agent(cfg.timeout)?,
    };
    let tries = cfg.tries.max(1);
    let outcome = crate::publish::retry::with_retries_blocking(
        tries,
        cfg.backoff,
        || api.upsert(body),
        |e| matches!(e, Failure::Retryable(_)),
    );
    match outcome {
        Ok(outcome) => Ok(outcome),
        Err(Failure::Fatal(msg)) => Err(Error::Environment(format!(
            "failed to post the note on {where_}: {msg}"
        ))),
        Err(Failure::Retryable(last)) => Err(Error::Environment(format!(
            "failed to post the note on {where_} after {tries} attempts: {last}; check that {} is reachable from the runner",
            cfg.api_url
        ))),
    }
}

/// One note as GitLab lists it (the fields used).
#[derive(serde::Deserialize)]
struct Note {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    system: bool,
}

impl Api<'_> {
    fn upsert(&self, body: &str) -> Result<NoteOutcome, Failure> {
        let notes_url = self.cfg.notes_url();
        let mut page: u32 = 1;
        let ours = loop {
            let url = format!("{notes_url}?per_page=100&page={page}&sort=asc&order_by=created_at");
            let (bytes, next) = self.send(Method::GET, &url, None, StatusCode::OK)?;
            let notes: Vec<Note> = serde_json::from_slice(&bytes).map_err(|e| {
                Failure::Fatal(format!(
                    "GitLab's list of notes is not the JSON expected ({e}); is {} a GitLab API v4 root?",
                    self.cfg.api_url
                ))
            })?;
            let found = notes
                .into_iter()
                .find(|n| !n.system && n.body.as_deref().is_some_and(|b| b.contains(&self.cfg.marker)))
                .map(|n| n.id);
            match next {
                Some(n) if found.is_none() && n > page && n <= MAX_PAGES => page = n,
                _ => break found,
            }
        };
        let payload = serde_json::json!({ "body": body }).to_string();
        match ours {
            Some(id) => {
                let url = format!("{notes_url}/{id}");
                let (bytes, _) = self.send(Method::PUT, &url, Some(payload), StatusCode::OK)?;
                let id = note_id(&bytes).unwrap_or(id);
                Ok(NoteOutcome::Updated {
                    id,
                    url: self.cfg.note_url(id),
                })
            }
            None => {
                let (bytes, _) = self.send(Method::POST, &notes_url, Some(payload), StatusCode::CREATED)?;
                let id = note_id(&bytes).ok_or_else(|| {
                    Failure::Fatal("GitLab created the note but its answer has no note id".to_owned())
                })?;
                Ok(NoteOutcome::Created {
                    id,
                    url: self.cfg.note_url(id),
                })
            }
        }
    }

    /// One request; the body and the `X-Next-Page` header of a `want` answer (200 also counts
    /// where 201 is wanted), a classified failure otherwise.
    fn send(
        &self,
        method: Method,
        url: &str,
        json: Option<String>,
        want: StatusCode,
    ) -> Result<(Vec<u8>, Option<u32>), Failure> {
        let (name, token) = self.cfg.token.header();
        let mut value = HeaderValue::from_str(token.expose()).map_err(|_| {
            Failure::Fatal(format!(
                "the token in {} has characters an HTTP header cannot carry; copy it again",
                if name == "JOB-TOKEN" {
                    "CI_JOB_TOKEN"
                } else {
                    "GITLAB_TOKEN"
                }
            ))
        })?;
        value.set_sensitive(true);
        let mut req = Request::builder()
            .method(method.clone())
            .uri(url)
            .header(name, value)
            .header("accept", "application/json");
        if json.is_some() {
            req = req.header("content-type", "application/json");
        }
        let req = req
            .body(json.unwrap_or_default())
            .map_err(|e| Failure::Fatal(format!("invalid request to {url}: {e}")))?;
        let what = format!(
            "{method} {}",
            crate::foundation::sanitize::redact_urls(strip_query(url))
        );
        let timeout = self.cfg.timeout;
        let mut res = self.agent.run(req).map_err(|e| match e {
            ureq::Error::Timeout(_) => Failure::Retryable(format!("{what}: no answer in {timeout:?}")),
            e => Failure::Retryable(format!("{what}: {e}")),
        })?;
        let status = res.status();
        let next = res
            .headers()
            .get("x-next-page")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u32>().ok());
        let body = res
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE_BYTES)
            .read_to_vec()
            .map_err(|e| match e {
                ureq::Error::Timeout(_) => {
                    Failure::Retryable(format!("{what}: the answer did not finish in {timeout:?}"))
                }
                e => Failure::Retryable(format!("{what}: reading the answer failed: {e}")),
            })?;
        if status == want || (status == StatusCode::OK && want == StatusCode::CREATED) {
            return Ok((body, next));
        }
        Err(classify(status, &body, &what))
    }
}

/// The HTTP client: every request ends within `timeout` (the answer included); answers of any
/// status come back as answers; redirects are not followed, and no proxy is read from the
/// environment; TLS verifies against the system's root certificates.
fn agent(timeout: Duration) -> Result<ureq::Agent> {
    let loaded = rustls_native_certs::load_native_certs();
    let roots: Vec<ureq::tls::Certificate<'static>> = loaded
        .certs
        .iter()
        .map(|c| ureq::tls::Certificate::from_der(c.as_ref()).to_owned())
        .collect();
    if roots.is_empty() {
        let why = loaded
            .errors
            .first()
            .map_or_else(|| "no certificates found".to_owned(), ToString::to_string);
        return Err(Error::Environment(format!(
            "failed to load the system's TLS root certificates for the GitLab API: {why}; install ca-certificates"
        )));
    }
    let tls = ureq::tls::TlsConfig::builder()
        .provider(ureq::tls::TlsProvider::Rustls)
        .root_certs(ureq::tls::RootCerts::new_with_certs(&roots))
        .build();
    Ok(ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .user_agent(concat!("cgp-gate/", env!("CARGO_PKG_VERSION")))
        .tls_config(tls)
        .build()
        .new_agent())
}

fn strip_query(url: &str) -> &str {
    url.split_once('?').map_or(url, |(u, _)| u)
}

fn note_id(bytes: &[u8]) -> Option<u64> {
    serde_json::from_slice::<serde_json::Value>(bytes)
        .ok()?
        .get("id")?
        .as_u64()
}

/// GitLab's own words for an error: `message` or `error` of its JSON answer, shortened.
fn gitlab_message(body: &[u8]) -> String {
    let v: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let m = v
        .as_ref()
        .and_then(|v| v.get("message").or_else(|| v.get("error")))
        .map(|m| match m {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default();
    if m.is_empty() {
        "no message".to_owned()
    } else {
        crate::foundation::sanitize::api_body(&m)
    }
}

fn classify(status: StatusCode, body: &[u8], what: &str) -> Failure {
    let msg = format!("{what}: {} {}", status.as_u16(), gitlab_message(body));
    match status.as_u16() {
        401 => Failure::Fatal(format!(
            "{msg}; GitLab did not accept the token: set GITLAB_TOKEN to a valid project access token with the `api` scope (masked CI/CD variable)"
        )),
        403 => Failure::Fatal(format!(
            "{msg}; the token may not write notes on this merge request: CI_JOB_TOKEN cannot write merge-request notes, so set GITLAB_TOKEN to a project access token with the `api` scope and at least the Reporter role"
        )),
        404 => Failure::Fatal(format!(
            "{msg}; no such project or merge request for this token: check CI_PROJECT_ID and CI_MERGE_REQUEST_IID (or --project and --mr), and that the token's project can see the merge request"
        )),
        429 => Failure::Retryable(msg),
        s if (500..600).contains(&s) => Failure::Retryable(msg),
        _ => Failure::Fatal(msg),
    }
}
