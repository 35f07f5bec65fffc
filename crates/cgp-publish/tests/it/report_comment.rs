//! The sticky pull-request comment, with real octocrab against a wiremock GitHub.

use std::time::Duration;

use cgp_publish::publish::github::{GithubEnv, Token};
use cgp_publish::publish::{CommentOutcome, GithubConfig, post_comment};
use serde_json::{Value, json};
use wiremock::matchers::{bearer_token, body_json, method, path, query_param, query_param_is_missing};
use wiremock::{Mock, ResponseTemplate};

const TOKEN: &str = "ghs_s3cr3tT0kenValue";
const MARKER: &str = "<!-- cgp-gate:spec=cgp-gate.yaml -->";

/// The mock GitHub ([`cgp_test_support::MockApi`]).
struct Github(cgp_test_support::MockApi);

impl std::ops::Deref for Github {
    type Target = cgp_test_support::MockApi;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl Github {
    fn start() -> Self {
        Self(cgp_test_support::MockApi::start())
    }

    fn config(&self) -> GithubConfig {
        GithubConfig {
            api_url: self.uri(),
            owner: "acme".into(),
            repo: "kernels".into(),
            pr: 42,
            token: Token::new(TOKEN),
            marker: MARKER.into(),
            tries: 3,
            backoff: Duration::from_millis(5),
        }
    }
}

fn user() -> Value {
    let u = "https://api.github.com/users/github-actions%5Bbot%5D";
    json!({
        "login": "github-actions[bot]", "id": 41898282, "node_id": "MDM6Qm90NDE4OTgyODI=",
        "avatar_url": "https://avatars.githubusercontent.com/in/15368?v=4", "gravatar_id": "",
        "url": u, "html_url": "https://github.com/apps/github-actions",
        "followers_url": format!("{u}/followers"), "following_url": format!("{u}/following"),
        "gists_url": format!("{u}/gists"), "starred_url": format!("{u}/starred"),
        "subscriptions_url": format!("{u}/subscriptions"), "organizations_url": format!("{u}/orgs"),
        "repos_url": format!("{u}/repos"), "events_url": format!("{u}/events"),
        "received_events_url": format!("{u}/received_events"), "type": "Bot", "site_admin": false
    })
}

fn comment(id: u64, body: &str) -> Value {
    json!({
        "id": id,
        "node_id": format!("IC_{id}"),
        "url": format!("https://api.github.com/repos/acme/kernels/issues/comments/{id}"),
        "html_url": format!("https://github.com/acme/kernels/pull/42#issuecomment-{id}"),
        "body": body,
        "user": user(),
        "created_at": "2026-03-01T12:00:00Z",
        "updated_at": "2026-03-01T12:00:00Z"
    })
}

const LIST: &str = "/repos/acme/kernels/issues/42/comments";

#[test]
fn creates_a_comment_when_none_carries_the_marker() {
    let gh = Github::start();
    gh.mount(
        Mock::given(method("GET"))
            .and(path(LIST))
            .and(bearer_token(TOKEN))
            .and(query_param("per_page", "100"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!([
                comment(1, "LGTM"),
                comment(2, "<!-- cgp-gate:spec=other.yaml -->")
            ])))
            .expect(1),
    );
    let body = format!("### report\n\n{MARKER}\n");
    gh.mount(
        Mock::given(method("POST"))
            .and(path(LIST))
            .and(bearer_token(TOKEN))
            .and(body_json(json!({ "body": body })))
            .respond_with(ResponseTemplate::new(201).set_body_json(comment(99, &body)))
            .expect(1),
    );
    let out = post_comment(&gh.config(), &body).unwrap();
    assert_eq!(
        out,
        CommentOutcome::Created {
            id: 99,
            url: "https://github.com/acme/kernels/pull/42#issuecomment-99".into()
        }
    );
    gh.verify();
}

#[test]
fn updates_the_comment_with_the_marker_found_on_a_later_page() {
    let gh = Github::start();
    let next = format!("<{}{LIST}?per_page=100&page=2>; rel=\"next\"", gh.uri());
    gh.mount(
        Mock::given(method("GET"))
            .and(path(LIST))
            .and(query_param_is_missing("page"))
            .and(bearer_token(TOKEN))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("Link", next.as_str())
                    .set_body_json(json!(
                        (1..=100).map(|i| comment(i, "chatter")).collect::<Vec<_>>()
                    )),
            )
            .expect(1),
    );
    gh.mount(
        Mock::given(method("GET"))
            .and(path(LIST))
            .and(query_param("page", "2"))
            .and(bearer_token(TOKEN))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!([
                comment(101, "more chatter"),
                comment(555, &format!("old report\n{MARKER}\n"))
            ])))
            .expect(1),
    );
    let body = format!("new report\n{MARKER}\n");
    // octocrab updates with POST (GitHub accepts POST as well as PATCH).
    gh.mount(
        Mock::given(method("POST"))
            .and(path("/repos/acme/kernels/issues/comments/555"))
            .and(bearer_token(TOKEN))
            .and(body_json(json!({ "body": body })))
            .respond_with(ResponseTemplate::new(200).set_body_json(comment(555, &body)))
            .expect(1),
    );
    gh.mount(
        Mock::given(method("POST"))
            .and(path(LIST))
            .respond_with(ResponseTemplate::new(500))
            .expect(0),
    );
    let out = post_comment(&gh.config(), &body).unwrap();
    assert!(matches!(out, CommentOutcome::Updated { id: 555, .. }), "{out:?}");
    gh.verify();
}

#[test]
fn forbidden_is_a_warning_not_a_failure() {
    let gh = Github::start();
    gh.mount(
        Mock::given(method("GET"))
            .and(path(LIST))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
            .expect(1),
    );
    gh.mount(
        Mock::given(method("POST"))
            .and(path(LIST))
            .respond_with(ResponseTemplate::new(403).set_body_json(json!({
                "message": "Resource not accessible by integration",
                "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
                "status": "403"
            })))
            // Not retried: a read-only token stays read-only.
            .expect(1),
    );
    match post_comment(&gh.config(), "body").unwrap() {
        CommentOutcome::Forbidden { message } => {
            assert!(
                message.contains("Resource not accessible by integration"),
                "{message}"
            );
            assert!(message.contains("step summary"), "{message}");
            assert!(!message.contains(TOKEN));
        }
        other => panic!("{other:?}"),
    }
    gh.verify();
}

#[test]
fn server_errors_are_retried_then_succeed() {
    let gh = Github::start();
    gh.mount(
        Mock::given(method("GET"))
            .and(path(LIST))
            .respond_with(ResponseTemplate::new(502).set_body_json(json!({"message": "Bad Gateway"})))
            .up_to_n_times(2)
            .expect(2),
    );
    gh.mount(
        Mock::given(method("GET"))
            .and(path(LIST))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
            .expect(1),
    );
    gh.mount(
        Mock::given(method("POST"))
            .and(path(LIST))
            .respond_with(ResponseTemplate::new(201).set_body_json(comment(7, "x")))
            .expect(1),
    );
    assert!(matches!(
        post_comment(&gh.config(), "x").unwrap(),
        CommentOutcome::Created { id: 7, .. }
    ));
    gh.verify();
}

#[test]
fn retries_are_bounded_and_errors_never_show_the_token() {
    let gh = Github::start();
    gh.mount(
        Mock::given(method("GET"))
            .and(path(LIST))
            .respond_with(ResponseTemplate::new(503).set_body_json(json!({"message": "Service Unavailable"})))
            .expect(3),
    );
    let cfg = gh.config();
    let err = post_comment(&cfg, "x").unwrap_err();
    let text = format!("{err} {err:?}");
    assert!(text.contains("after 3 attempts"), "{text}");
    assert!(text.contains("503"), "{text}");
    assert!(!text.contains(TOKEN), "{text}");
    assert_eq!(
        err.exit_code(),
        cgp_core::foundation::exit_codes::PROFILER_FAILURE
    );
    assert!(!format!("{cfg:?}").contains(TOKEN));
    gh.verify();
}

#[test]
fn other_client_errors_fail_at_once() {
    let gh = Github::start();
    gh.mount(
        Mock::given(method("GET"))
            .and(path(LIST))
            .respond_with(ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})))
            .expect(1),
    );
    let err = post_comment(&gh.config(), "x").unwrap_err().to_string();
    assert!(
        err.contains("acme/kernels#42") && err.contains("404 Not Found"),
        "{err}"
    );
    gh.verify();
}

#[test]
fn enterprise_base_path_is_kept() {
    let gh = Github::start();
    gh.mount(
        Mock::given(method("GET"))
            .and(path(format!("/api/v3{LIST}")))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
            .expect(1),
    );
    gh.mount(
        Mock::given(method("POST"))
            .and(path(format!("/api/v3{LIST}")))
            .respond_with(ResponseTemplate::new(201).set_body_json(comment(3, "x")))
            .expect(1),
    );
    let mut cfg = gh.config();
    cfg.api_url = format!("{}/api/v3", gh.uri());
    assert!(matches!(
        post_comment(&cfg, "x").unwrap(),
        CommentOutcome::Created { id: 3, .. }
    ));
    gh.verify();
}

#[test]
fn config_comes_from_the_actions_environment() {
    let dir = tempfile::tempdir().unwrap();
    let event = dir.path().join("event.json");
    std::fs::write(
        &event,
        r#"{"action":"synchronize","number":42,"pull_request":{"number":42}}"#,
    )
    .unwrap();
    let vars = [
        ("GITHUB_REPOSITORY", "acme/kernels"),
        ("GITHUB_EVENT_PATH", event.to_str().unwrap()),
        ("GITHUB_API_URL", "https://ghe.example.com/api/v3"),
        ("GITHUB_TOKEN", TOKEN),
    ];
    let env = GithubEnv::from_vars(|k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned()));
    assert!(!format!("{env:?}").contains(TOKEN));
    let cfg = GithubConfig::from_env(&env, None, None, MARKER).unwrap();
    assert_eq!(
        (cfg.owner.as_str(), cfg.repo.as_str(), cfg.pr),
        ("acme", "kernels", 42)
    );
    assert_eq!(cfg.api_url, "https://ghe.example.com/api/v3");
    // Explicit values win.
    let cfg = GithubConfig::from_env(&env, Some("other/repo"), Some(7), MARKER).unwrap();
    assert_eq!((cfg.owner.as_str(), cfg.pr), ("other", 7));
    // A push event has no pull request: a clear error naming the way out.
    std::fs::write(&event, r#"{"ref":"refs/heads/main"}"#).unwrap();
    let err = GithubConfig::from_env(&env, None, None, MARKER)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no pull-request number") && err.contains("--pr"),
        "{err}"
    );
    std::fs::write(&event, "{not json").unwrap();
    let err = GithubConfig::from_env(&env, None, None, MARKER)
        .unwrap_err()
        .to_string();
    assert!(err.contains("event.json") && err.contains("line 1"), "{err}");
    let err = GithubConfig::from_env(&env, Some("no-slash"), Some(1), MARKER)
        .unwrap_err()
        .to_string();
    assert!(err.contains("OWNER/NAME"), "{err}");
    let no_token = GithubEnv { token: None, ..env };
    let err = GithubConfig::from_env(&no_token, None, Some(1), MARKER)
        .unwrap_err()
        .to_string();
    assert!(err.contains("GITHUB_TOKEN"), "{err}");
}
