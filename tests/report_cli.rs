//! `cgp-gate report` end to end.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/results")
        .join(name)
}

/// The binary with no GitHub Actions variables leaking in from the environment running the tests.
fn cgp_gate() -> Command {
    let mut c = crate::support::bin();
    for k in [
        "GITHUB_ACTIONS",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_OUTPUT",
        "GITHUB_EVENT_PATH",
        "GITHUB_REPOSITORY",
        "GITHUB_TOKEN",
        "GITHUB_API_URL",
    ] {
        c.env_remove(k);
    }
    c
}

#[test]
fn prints_the_table_regressions_first_when_no_file_is_asked_for() {
    let out = cgp_gate()
        .args(["report", "--from"])
        .arg(fixture("mixed.json"))
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("verdict"));
    assert!(
        lines[1].starts_with("regression") && lines[2].starts_with("regression"),
        "{stdout}"
    );
    assert!(
        // The unit with the metric, the medians bare as context; the change and the interval
        // the verdict used are separate columns (the interval can be left out).
        lines[1].contains("time (ms)")
            && lines[1].contains("2.482 → 2.646")
            && lines[1].contains("  +6.66%  [+5.24%, +8.67%]"),
        "{stdout}"
    );
    assert!(stdout.contains("error: attention[seq=8192,heads=32]: ncu did not finish"));
    assert!(
        stdout
            .trim_end()
            .ends_with("2 regressions, 1 error, 1 inconclusive, 1 improvement on NVIDIA H200")
    );
}

#[test]
fn writes_junit_markdown_and_html() {
    let dir = tempfile::tempdir().unwrap();
    let (j, m, h) = (
        dir.path().join("j.xml"),
        dir.path().join("m.md"),
        dir.path().join("r.html"),
    );
    cgp_gate()
        .args(["report", "--from"])
        .arg(fixture("mixed.json"))
        .arg("--junit")
        .arg(&j)
        .arg("--markdown")
        .arg(&m)
        .arg("--html")
        .arg(&h)
        .assert()
        .success()
        .stdout("");
    assert!(std::fs::read_to_string(j).unwrap().contains("<testsuites"));
    assert!(
        std::fs::read_to_string(m)
            .unwrap()
            .contains("<!-- cgp-gate:spec=cgp-gate.yaml -->")
    );
    assert!(std::fs::read_to_string(h).unwrap().contains("<svg "));
}

#[test]
fn annotations_and_outputs_under_github_actions() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out");
    cgp_gate()
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", &output)
        .args(["report", "--from"])
        .arg(fixture("mixed.json"))
        .arg("--junit")
        .arg(dir.path().join("j.xml"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "::error file=cgp-gate.yaml,title=cgp-gate regression%3A gemm[m=4096%2Cn=4096]",
        ));
    let text = std::fs::read_to_string(output).unwrap();
    assert!(text.contains("verdict<<ghadelimiter_"));
    assert!(text.contains("\nregression\n"));
}

#[test]
fn newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("pass.json")).unwrap().replacen(
        "\"schema_version\": 1",
        "\"schema_version\": 3",
        1,
    );
    let p = dir.path().join("new.json");
    std::fs::write(&p, text).unwrap();
    cgp_gate()
        .args(["report", "--from"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("schema_version 3 is newer")
                .and(predicate::str::contains("upgrade cgp-gate")),
        );
}

#[test]
fn corrupt_results_name_the_position() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.json");
    let text = std::fs::read_to_string(fixture("pass.json")).unwrap();
    std::fs::write(&p, &text[..text.len() / 2]).unwrap();
    cgp_gate()
        .args(["report", "--from"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.json: not valid JSON").and(predicate::str::contains("line")));
    // Valid JSON, wrong shape: still the position.
    std::fs::write(
        &p,
        text.replacen("\"verdict\": \"pass\"", "\"verdict\": \"fine\"", 1),
    )
    .unwrap();
    cgp_gate()
        .args(["report", "--from"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("invalid results: unknown variant `fine`")
                .and(predicate::str::contains("line 3")),
        );
    std::fs::write(&p, "{\"rows\": []}").unwrap();
    cgp_gate()
        .args(["report", "--from"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no `schema_version`"));
}

#[test]
fn missing_file_and_misused_flags() {
    cgp_gate()
        .args(["report", "--from", "/nonexistent/results.json"])
        .assert()
        // A results file that is not there is invalid input, as a missing spec is (issue 59).
        .code(2)
        .stderr(predicate::str::contains(
            "/nonexistent/results.json: there is no results file at this path",
        ));
    cgp_gate()
        .args(["report", "--from"])
        .arg(fixture("pass.json"))
        .args(["--pr", "3"])
        .assert()
        .code(2);
    // A comment without a token fails clearly, and says how to fix it.
    cgp_gate()
        .args(["report", "--from"])
        .arg(fixture("pass.json"))
        .args(["--github-comment", "--repo", "acme/kernels", "--pr", "3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("set GITHUB_TOKEN"));
}
