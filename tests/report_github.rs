//! GitHub Actions: step summary, step outputs and annotations, with an injected environment.

use std::collections::HashMap;
use std::path::Path;

use cgp_outcome::outcome::results::read as read_results;
use cgp_outcome::outcome::results::{Results, RowVerdict};
use cgp_publish::publish::emit::emit_to;
use cgp_publish::publish::github::{STEP_SUMMARY_LIMIT, write_outputs};
use cgp_publish::publish::{GithubEnv, ReportOptions, ReportPaths, write_step_summary};
use cgp_report::report::MarkdownOptions;
use cgp_report::report::annotations::{Part, annotations, escape};
use cgp_report::report::markdown::comment_marker;

fn fixture(name: &str) -> Results {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/results")
        .join(name);
    read_results(&p).unwrap()
}

fn env_in(dir: &Path) -> GithubEnv {
    let vars: HashMap<&str, String> = HashMap::from([
        ("GITHUB_ACTIONS", "true".to_owned()),
        (
            "GITHUB_STEP_SUMMARY",
            dir.join("summary.md").display().to_string(),
        ),
        ("GITHUB_OUTPUT", dir.join("output").display().to_string()),
        ("GITHUB_REPOSITORY", "acme/kernels".to_owned()),
        ("GITHUB_SERVER_URL", "https://github.com".to_owned()),
        ("GITHUB_RUN_ID", "123456".to_owned()),
        ("GITHUB_TOKEN", String::new()),
    ]);
    GithubEnv::from_vars(|k| vars.get(k).cloned())
}

/// Parse `$GITHUB_OUTPUT` the way the runner does: `name=value` lines and `name<<DELIM` blocks.
fn parse_outputs(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((name, delim)) = line.split_once("<<") {
            let mut value = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                value.push(l);
            }
            out.insert(name.to_owned(), value.join("\n"));
        } else if let Some((k, v)) = line.split_once('=') {
            out.insert(k.to_owned(), v.to_owned());
        }
    }
    out
}

#[test]
fn environment_is_read_through_the_struct() {
    let dir = tempfile::tempdir().unwrap();
    let env = env_in(dir.path());
    assert!(env.actions);
    assert!(env.token.is_none(), "an empty GITHUB_TOKEN counts as unset");
    assert_eq!(
        env.run_url().unwrap(),
        "https://github.com/acme/kernels/actions/runs/123456"
    );
    assert!(!GithubEnv::from_vars(|_| None).actions);
}

#[test]
fn outputs_use_heredoc_delimiters_that_survive_hostile_values() {
    let dir = tempfile::tempdir().unwrap();
    let env = env_in(dir.path());
    let r = fixture("mixed.json");
    let outputs = cgp_publish::publish::github::StepOutputs {
        paths: cgp_publish::publish::ReportPaths {
            junit: Some("out/junit.xml".into()),
            html: Some("evil\nverdict=pass\nEOF".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    assert!(write_outputs(&r, &env, &outputs).unwrap());
    let text = std::fs::read_to_string(dir.path().join("output")).unwrap();
    let o = parse_outputs(&text);
    assert_eq!(o["verdict"], "regression");
    assert_eq!(o["regressions"], "2");
    assert_eq!(o["inconclusive"], "1");
    assert_eq!(o["improvements"], "1");
    assert_eq!(o["errors"], "1");
    assert_eq!(o["junit-path"], "out/junit.xml");
    // A value with newlines cannot forge another output.
    assert_eq!(o["html-path"], "evil\nverdict=pass\nEOF");
    assert!(!o.contains_key("markdown-path"));
    // Appends: a second write keeps the first.
    write_outputs(&r, &env, &outputs).unwrap();
    let again = std::fs::read_to_string(dir.path().join("output")).unwrap();
    assert_eq!(again.matches("verdict<<").count(), 2);
}

#[test]
fn annotations_escape_workflow_command_syntax() {
    assert_eq!(escape("50%\r\nnext", Part::Data), "50%25%0D%0Anext");
    assert_eq!(escape("a:b,c%\n", Part::Property), "a%3Ab%2Cc%25%0A");
    let mut r = fixture("mixed.json");
    r.rows[0].key.size = "m=4096,n=4096::error::forged\nx".into();
    let lines = annotations(&r);
    // 2 regressions as errors, 1 inconclusive as a warning, 1 run error.
    assert_eq!(lines.iter().filter(|l| l.starts_with("::error ")).count(), 3);
    assert_eq!(lines.iter().filter(|l| l.starts_with("::warning ")).count(), 1);
    for l in &lines {
        assert!(!l.contains('\n') && !l.contains('\r'));
        // Exactly one `::` separates properties from the message; none can be injected.
        let props = &l[2..l[2..].find("::").unwrap() + 2];
        assert!(!props.contains("::"), "{l}");
    }
    let first = &lines[0];
    assert!(first.starts_with("::error file=cgp-gate.yaml,title=cgp-gate regression%3A gemm[m=4096%2Cn=4096%3A%3Aerror%3A%3Aforged%0Ax]"), "{first}");
    assert!(
        first.contains(
            "change +6.66%25 [+5.24%25, +8.67%25] (95%25 CI) (median base 2.482 ms → head 2.646 ms)"
        ),
        "{first}"
    );
}

#[test]
fn step_summary_appends_and_respects_the_one_mib_cap() {
    let dir = tempfile::tempdir().unwrap();
    let env = env_in(dir.path());
    let summary = dir.path().join("summary.md");
    // An earlier command of the step already wrote most of the budget.
    std::fs::write(&summary, "x".repeat(STEP_SUMMARY_LIMIT - 60_000)).unwrap();
    let mut r = fixture("mixed.json");
    let template = r.rows.clone();
    r.rows = (0..20_000)
        .map(|i| {
            let mut row = template[i % template.len()].clone();
            row.key.size = format!("n={i}");
            row.set_verdict(RowVerdict::Regression);
            row
        })
        .collect();
    assert!(write_step_summary(&r, &env, &MarkdownOptions::default()).unwrap());
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.len() <= STEP_SUMMARY_LIMIT, "{}", text.len());
    assert!(text.starts_with("xxx"), "appended, not overwritten");
    assert!(text.contains("This report was shortened"));
    assert!(text.contains("https://github.com/acme/kernels/actions/runs/123456"));
    assert!(text.contains(&comment_marker(&r)));
}

#[test]
fn step_summary_is_skipped_when_unset() {
    let r = fixture("pass.json");
    let env = GithubEnv::default();
    assert!(!write_step_summary(&r, &env, &MarkdownOptions::default()).unwrap());
}

#[test]
fn emit_writes_every_report_and_the_actions_files() {
    let dir = tempfile::tempdir().unwrap();
    let env = env_in(dir.path());
    let r = fixture("mixed.json");
    let opts = ReportOptions {
        paths: ReportPaths {
            junit: Some(dir.path().join("junit.xml")),
            markdown: Some(dir.path().join("report.md")),
            html: Some(dir.path().join("report.html")),
            json: None,
        },
        github_comment: false,
        github_actions: true,
        repo: None,
        pr: None,
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    emit_to(&r, &opts, &env, &mut out, &mut err).unwrap();
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(quick_junit::Report::deserialize_from_str(&junit).is_ok());
    assert!(
        std::fs::read_to_string(dir.path().join("report.md"))
            .unwrap()
            .contains("2 regressions")
    );
    assert!(
        std::fs::read_to_string(dir.path().join("report.html"))
            .unwrap()
            .starts_with("<!DOCTYPE html>")
    );
    assert!(
        std::fs::read_to_string(dir.path().join("summary.md"))
            .unwrap()
            .contains("2 regressions")
    );
    let outputs = parse_outputs(&std::fs::read_to_string(dir.path().join("output")).unwrap());
    assert_eq!(
        outputs["html-path"],
        dir.path().join("report.html").display().to_string()
    );
    let stdout = String::from_utf8(out).unwrap();
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("::error ")).count(),
        3,
        "{stdout}"
    );
}

#[test]
fn emit_reports_an_unwritable_path() {
    let dir = tempfile::tempdir().unwrap();
    let r = fixture("pass.json");
    let opts = ReportOptions {
        paths: ReportPaths {
            junit: Some(dir.path().join("missing-dir/junit.xml")),
            ..Default::default()
        },
        ..Default::default()
    };
    let err = emit_to(&r, &opts, &GithubEnv::default(), &mut Vec::new(), &mut Vec::new()).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with("failed to write ") && msg.contains("missing-dir/junit.xml"),
        "{msg}"
    );
}

#[test]
fn comment_outside_a_pull_request_is_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let event = dir.path().join("event.json");
    std::fs::write(&event, r#"{"ref":"refs/heads/main"}"#).unwrap();
    let env = GithubEnv {
        event_path: Some(event),
        ..env_in(dir.path())
    };
    let opts = ReportOptions {
        github_comment: true,
        ..Default::default()
    };
    let mut err = Vec::new();
    emit_to(&fixture("pass.json"), &opts, &env, &mut Vec::new(), &mut err).unwrap();
    assert!(
        String::from_utf8(err)
            .unwrap()
            .contains("not a pull-request event")
    );
}

/// Annotations name the spec with the line of the row's metric under its target (issue 24), on
/// a real check of the H100 planted recordings (tests/fixtures/h100-planted).
#[test]
fn annotations_name_the_line_of_the_metric_in_the_spec() {
    let fx = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100-planted");
    let spec_text = std::fs::read_to_string(fx.join("check.yaml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = crate::support::bin()
        .env_remove("GITHUB_ACTIONS")
        .args(["check", "--no-skip", "--replay"])
        .arg(fx.join("extra3"))
        .arg("--spec")
        .arg(fx.join("check.yaml"))
        .arg("--baselines")
        .arg(fx.join("baselines"))
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let r = cgp_outcome::outcome::results::read(&json).unwrap();
    let lines = annotations(&r);
    // The line where `gpu__time_duration.sum` is written under `matmul`.
    let matmul = spec_text
        .lines()
        .position(|l| l.contains("name: matmul"))
        .unwrap();
    let want = spec_text
        .lines()
        .enumerate()
        .skip(matmul)
        .find(|(_, l)| l.trim_start().starts_with("gpu__time_duration.sum:"))
        .unwrap()
        .0
        + 1;
    let a = lines
        .iter()
        .find(|l| l.contains("title=cgp-gate regression%3A matmul[n=1024] gpu__time_duration.sum"))
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert!(a.contains(&format!(",line={want},title=")), "{a}");
    // Every annotation of the run has a line.
    assert!(lines.iter().all(|l| l.contains(",line=")), "{lines:?}");
    // A spec that does not list the target: the file without a line.
    assert_eq!(
        cgp_report::report::annotations::spec_line("targets: []\n", "gemm", None),
        None
    );
    assert_eq!(
        cgp_report::report::annotations::spec_line(
            "targets:\n  - name: a\n    metrics: {x__y.sum: \"3%\"}\n  - name: b\n    metrics:\n      x__y.sum: \"3%\"\n",
            "b",
            Some("x__y.sum")
        ),
        Some(6)
    );
}
