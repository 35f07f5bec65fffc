//! The sticky GitLab merge-request note: the real HTTP client against a wiremock GitLab (REST API
//! v4), and `cgp-gate gitlab-note` on the results of a real `check` run of the demo recordings
//! (SYNTHETIC data).

use std::path::Path;
use std::time::Duration;

use cgp_publish::publish::github::Token;
use cgp_publish::publish::gitlab::{GitlabConfig, GitlabEnv, GitlabToken, NoteOutcome, post_note};
use serde_json::{Value, json};
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

const TOKEN: &str = "glpat-s3cr3tT0kenValue";
const MARKER: &str = "<!-- cgp-gate:spec=cgp-gate.yaml -->";
const NOTES: &str = "/api/v4/projects/77/merge_requests/5/notes";

/// The mock GitLab ([`crate::support::MockApi`]).
struct Gitlab(crate::support::MockApi);

impl std::ops::Deref for Gitlab {
    type Target = crate::support::MockApi;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl Gitlab {
    fn start() -> Self {
        Self(crate::support::MockApi::start())
    }

    fn api(&self) -> String {
        format!("{}/api/v4", self.uri())
    }

    fn config(&self) -> GitlabConfig {
        GitlabConfig {
            api_url: self.api(),
            project: "77".into(),
            mr_iid: 5,
            project_url: Some("https://gitlab.example.com/acme/kernels".into()),
            token: GitlabToken::Private(Token::new(TOKEN)),
            marker: MARKER.into(),
            tries: 3,
            backoff: Duration::from_millis(5),
            timeout: Duration::from_secs(10),
        }
    }
}

fn note(id: u64, body: &str) -> Value {
    json!({
        "id": id, "type": null, "body": body, "attachment": null,
        "author": {"id": 1, "username": "project_77_bot", "name": "cgp-gate", "state": "active"},
        "created_at": "2026-11-24T12:00:00.000Z", "updated_at": "2026-11-24T12:00:00.000Z",
        "system": false, "noteable_id": 900, "noteable_type": "MergeRequest", "noteable_iid": 5,
        "resolvable": false, "confidential": false, "internal": false
    })
}

#[test]
fn creates_a_note_when_none_carries_the_marker() {
    let g = Gitlab::start();
    let body = format!("{MARKER}\nall good");
    g.mount(
        Mock::given(method("GET"))
            .and(path(NOTES))
            .and(header("PRIVATE-TOKEN", TOKEN))
            .and(query_param("per_page", "100"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!([note(1, "LGTM")])))
            .expect(1),
    );
    g.mount(
        Mock::given(method("POST"))
            .and(path(NOTES))
            .and(header("PRIVATE-TOKEN", TOKEN))
            .and(body_json(json!({ "body": body })))
            .respond_with(ResponseTemplate::new(201).set_body_json(note(31, &body)))
            .expect(1),
    );
    let out = post_note(&g.config(), &body).unwrap();
    assert_eq!(
        out,
        NoteOutcome::Created {
            id: 31,
            url: Some("https://gitlab.example.com/acme/kernels/-/merge_requests/5#note_31".into())
        }
    );
    g.verify();
}

#[test]
fn updates_the_note_with_the_marker_found_on_a_later_page() {
    let g = Gitlab::start();
    let page1: Vec<Value> = (1..=100).map(|i| note(i, "unrelated")).collect();
    // A system note that quotes the marker is not ours.
    let mut system = note(150, &format!("{MARKER} changed the description"));
    system["system"] = json!(true);
    g.mount(
        Mock::given(method("GET"))
            .and(path(NOTES))
            .and(query_param("page", "1"))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("x-next-page", "2")
                    .insert_header("x-page", "1")
                    .set_body_json(Value::Array(page1)),
            )
            .expect(1),
    );
    g.mount(
        Mock::given(method("GET"))
            .and(path(NOTES))
            .and(query_param("page", "2"))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("x-next-page", "")
                    .set_body_json(json!([system, note(200, &format!("{MARKER}\nold"))])),
            )
            .expect(1),
    );
    let body = format!("{MARKER}\nnew");
    g.mount(
        Mock::given(method("PUT"))
            .and(path(format!("{NOTES}/200")))
            .and(body_json(json!({ "body": body })))
            .respond_with(ResponseTemplate::new(200).set_body_json(note(200, &body)))
            .expect(1),
    );
    g.mount(
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(201))
            .expect(0),
    );
    let out = post_note(&g.config(), &body).unwrap();
    assert!(matches!(out, NoteOutcome::Updated { id: 200, .. }), "{out:?}");
    g.verify();
}

#[test]
fn server_errors_are_retried_then_succeed() {
    let g = Gitlab::start();
    g.mount(
        Mock::given(method("GET"))
            .and(path(NOTES))
            .respond_with(ResponseTemplate::new(502))
            .up_to_n_times(1)
            .expect(1),
    );
    g.mount(
        Mock::given(method("GET"))
            .and(path(NOTES))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
            .expect(1),
    );
    g.mount(
        Mock::given(method("POST"))
            .and(path(NOTES))
            .respond_with(ResponseTemplate::new(201).set_body_json(note(9, "x")))
            .expect(1),
    );
    let out = post_note(&g.config(), "x").unwrap();
    assert!(matches!(out, NoteOutcome::Created { id: 9, .. }));
    g.verify();
}

#[test]
fn refusals_are_exit_3_with_advice_and_never_show_the_token() {
    for (status, advice) in [
        (401, "did not accept the token"),
        (403, "CI_JOB_TOKEN cannot write merge-request notes"),
        (404, "check CI_PROJECT_ID and CI_MERGE_REQUEST_IID"),
        (422, "422"),
    ] {
        let g = Gitlab::start();
        // GitLab's answer echoes the token, to prove it is taken out of the message.
        g.mount(
            Mock::given(method("GET"))
                .and(path(NOTES))
                .respond_with(
                    ResponseTemplate::new(status)
                        .set_body_json(json!({"message": format!("{status} bad {TOKEN}")})),
                )
                .expect(1),
        );
        let e = post_note(&g.config(), "x").unwrap_err();
        assert_eq!(e.exit_code(), 3, "{status}");
        let msg = e.to_string();
        assert!(msg.contains(advice), "{status}: {msg}");
        assert!(!msg.contains(TOKEN), "{status}: {msg}");
        // Taken out by the sanitiser's API-body rule (`[redacted]`) or the exact token (`***`).
        assert!(
            msg.contains("***") || msg.contains("[redacted]"),
            "{status}: {msg}"
        );
        g.verify();
    }
    // Unreachable: bounded retries, then exit 3.
    let mut cfg = Gitlab::start().config();
    cfg.api_url = "http://127.0.0.1:9/api/v4".into();
    let e = post_note(&cfg, "x").unwrap_err();
    assert_eq!(e.exit_code(), 3);
    assert!(e.to_string().contains("after 3 attempts"), "{e}");
}

#[test]
fn the_job_token_goes_in_job_token_and_a_project_path_is_encoded() {
    let g = Gitlab::start();
    g.mount(
        Mock::given(method("GET"))
            .and(path("/api/v4/projects/acme%2Fkernels/merge_requests/5/notes"))
            .and(header("JOB-TOKEN", TOKEN))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
            .expect(1),
    );
    g.mount(
        Mock::given(method("POST"))
            .and(path("/api/v4/projects/acme%2Fkernels/merge_requests/5/notes"))
            .and(header("JOB-TOKEN", TOKEN))
            .respond_with(ResponseTemplate::new(201).set_body_json(note(4, "x")))
            .expect(1),
    );
    let mut cfg = g.config();
    cfg.project = "acme/kernels".into();
    cfg.token = GitlabToken::Job(Token::new(TOKEN));
    post_note(&cfg, "x").unwrap();
    for r in g.requests() {
        assert!(r.headers.get("private-token").is_none());
    }
    g.verify();
}

#[test]
fn config_comes_from_the_gitlab_ci_environment() {
    let vars = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned())
    };
    let env = GitlabEnv::from_vars(vars(&[
        ("CI_API_V4_URL", "https://gitlab.example.com/api/v4/"),
        ("CI_PROJECT_ID", "77"),
        ("CI_MERGE_REQUEST_IID", "5"),
        ("CI_JOB_TOKEN", "job"),
        ("GITLAB_TOKEN", TOKEN),
    ]));
    let cfg = GitlabConfig::from_env(&env, None, None, None, MARKER).unwrap();
    assert_eq!(cfg.api_url, "https://gitlab.example.com/api/v4");
    assert_eq!((cfg.project.as_str(), cfg.mr_iid), ("77", 5));
    assert_eq!(
        cfg.token,
        GitlabToken::Private(Token::new(TOKEN)),
        "GITLAB_TOKEN first"
    );
    assert!(!format!("{cfg:?}").contains(TOKEN));
    let no_token = GitlabEnv::from_vars(vars(&[
        ("CI_API_V4_URL", "https://gitlab.example.com/api/v4"),
        ("CI_PROJECT_ID", "77"),
        ("CI_MERGE_REQUEST_IID", "5"),
    ]));
    let e = GitlabConfig::from_env(&no_token, None, None, None, MARKER).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("set GITLAB_TOKEN"), "{e}");
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `cgp-gate gitlab-note` with the GitLab CI variables of merge request !5 of project 77.
fn gitlab_note(g: &Gitlab, results: &Path) -> std::process::Output {
    crate::support::bin()
        .env_remove("CI_JOB_TOKEN")
        .env_remove("CI_MERGE_REQUEST_PROJECT_ID")
        .env_remove("CI_MERGE_REQUEST_PROJECT_URL")
        .env("CI_API_V4_URL", g.api())
        .env("CI_PROJECT_ID", "77")
        .env("CI_MERGE_REQUEST_IID", "5")
        .env("CI_PROJECT_URL", "https://gitlab.example.com/acme/kernels")
        .env("CI_JOB_URL", "https://gitlab.example.com/acme/kernels/-/jobs/123")
        .env("GITLAB_TOKEN", TOKEN)
        .arg("gitlab-note")
        .arg("--from")
        .arg(results)
        .output()
        .unwrap()
}

#[test]
fn gitlab_note_posts_then_updates_the_note_of_a_real_check_run() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.json");
    let check = crate::support::bin()
        .current_dir(root())
        .env_remove("GITHUB_ACTIONS")
        .args([
            "check",
            "--spec",
            "examples/cgp-gate.yaml",
            "--baselines",
            "examples/baselines",
            "--replay",
            "examples/recordings/pr-slowdown",
        ])
        .arg("--json")
        .arg(&results)
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(1), "the slowdown recording regresses");

    // First run: no note carries the marker, so one is created.
    let g = Gitlab::start();
    g.mount(
        Mock::given(method("GET"))
            .and(path(NOTES))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!([note(1, "LGTM")]))),
    );
    g.mount(
        Mock::given(method("POST"))
            .and(path(NOTES))
            .and(header("PRIVATE-TOKEN", TOKEN))
            .respond_with(ResponseTemplate::new(201).set_body_json(note(31, "created")))
            .expect(1),
    );
    let out = gitlab_note(&g, &results);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("created the merge-request note 31 on !5: https://gitlab.example.com/acme/kernels/-/merge_requests/5#note_31"),
        "{stderr}"
    );
    let posted: Value = serde_json::from_slice(
        &g.requests()
            .into_iter()
            .find(|r| r.method.as_str() == "POST")
            .unwrap()
            .body,
    )
    .unwrap();
    let posted = posted["body"].as_str().unwrap().to_owned();
    assert!(posted.contains("<!-- cgp-gate:"), "the marker: {posted}");
    assert!(posted.contains("matmul"), "the report of the run: {posted}");
    g.verify();

    // Second run: the note created above is listed, so it is updated in place.
    g.reset();
    g.mount(
        Mock::given(method("GET")).and(path(NOTES)).respond_with(
            ResponseTemplate::new(200).set_body_json(json!([note(1, "LGTM"), note(31, &posted)])),
        ),
    );
    g.mount(
        Mock::given(method("PUT"))
            .and(path(format!("{NOTES}/31")))
            .and(body_json(json!({ "body": posted })))
            .respond_with(ResponseTemplate::new(200).set_body_json(note(31, &posted)))
            .expect(1),
    );
    g.mount(
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(201))
            .expect(0),
    );
    let out = gitlab_note(&g, &results);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("updated the merge-request note 31"), "{stderr}");
    g.verify();

    // A refusal: exit 3, advice, and the token nowhere in the output.
    g.reset();
    g.mount(
        Mock::given(method("GET"))
            .and(path(NOTES))
            .respond_with(ResponseTemplate::new(403).set_body_json(json!({"message": "403 Forbidden"}))),
    );
    let out = gitlab_note(&g, &results);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(3), "{all}");
    assert!(all.contains("project access token"), "{all}");
    assert!(!all.contains(TOKEN), "{all}");
}

#[test]
fn gitlab_note_outside_a_merge_request_posts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.json");
    crate::support::bin()
        .current_dir(root())
        .args([
            "check",
            "--spec",
            "examples/cgp-gate.yaml",
            "--baselines",
            "examples/baselines",
            "--replay",
            "examples/recordings/pr-same",
        ])
        .arg("--json")
        .arg(&results)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    crate::support::bin()
        .env_remove("CI_MERGE_REQUEST_IID")
        .env("CI_API_V4_URL", "http://127.0.0.1:9/api/v4")
        .arg("gitlab-note")
        .arg("--from")
        .arg(&results)
        .assert()
        .code(0)
        .stderr(predicates::str::contains("not a merge-request pipeline"));
}
