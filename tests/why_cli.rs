//! The "why" of a timing change end to end: `check` on the example recordings (SYNTHETIC
//! samples made by examples/synthesize_recording.rs). In `pr-slowdown`, `matmul` n=1024 is
//! planted 6% slower with its SM throughput planted lower (`sm__throughput...` 71% -> 67%), and
//! its registers per thread unchanged: the why must name the throughput, not the registers.

use std::path::PathBuf;

use assert_cmd::Command;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn check(recording: &str) -> (Value, String, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let p = |f: &str| dir.path().join(f);
    let out = Command::cargo_bin("cgp-gate")
        .unwrap()
        .current_dir(root())
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .args(["check", "--spec", "examples/cgp-gate.yaml", "--replay", recording])
        .args(["--baselines", "examples/baselines", "--json"])
        .arg(p("r.json"))
        .arg("--markdown")
        .arg(p("r.md"))
        .arg("--html")
        .arg(p("r.html"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    let r = serde_json::from_str(&std::fs::read_to_string(p("r.json")).expect(&text)).unwrap();
    (
        r,
        std::fs::read_to_string(p("r.md")).unwrap(),
        std::fs::read_to_string(p("r.html")).unwrap(),
        text,
    )
}

#[test]
fn the_planted_slowdown_says_why() {
    let (r, md, html, _) = check("examples/recordings/pr-slowdown");
    let rows = r["rows"].as_array().unwrap();
    let slow = rows
        .iter()
        .find(|x| x["target"] == "matmul" && x["size"] == "n=1024" && x["metric"] == "gpu__time_duration.sum")
        .unwrap();
    assert_eq!(slow["verdict"], "regression");
    let why = &slow["why"];
    let changed = why["changed"].as_array().unwrap();
    assert_eq!(changed.len(), 1, "{why}");
    let c = &changed[0];
    assert_eq!(c["metric"], "sm__throughput.avg.pct_of_peak_sustained_elapsed");
    assert!(c["baseline"].as_f64().unwrap() > c["candidate"].as_f64().unwrap());
    assert!(c["change"].as_f64().unwrap() < -0.03, "{c}");
    let ci = c["change_ci"].as_array().unwrap();
    assert!(
        ci[1].as_f64().unwrap() < 0.0,
        "the interval excludes no change: {c}"
    );
    // Registers were compared and did not change, so they are not listed.
    assert!(
        why["compared"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m == "launch__registers_per_thread")
    );
    assert_eq!(why["reading"], "-5.9% SM throughput: the SMs do less per cycle");
    // Rows that passed carry no why.
    assert!(
        rows.iter()
            .filter(|x| x["verdict"] == "pass")
            .all(|x| x.get("why").is_none())
    );
    // Markdown: under the table, folded; HTML: a counter-diff table.
    assert!(
        md.contains(
            "**Why** matmul&#91;n&#61;1024&#93; time: &#45;5.9% SM throughput&#58; the SMs do less per cycle"
        ),
        "{md}"
    );
    assert!(
        md.contains("<details><summary>1 counter(s) changed</summary>"),
        "{md}"
    );
    assert!(html.contains(
        "<div class=\"why\"><b>Why</b> matmul[n=1024] gpu__time_duration.sum: -5.9% SM throughput"
    ));
    assert!(
        html.contains(
            "<td>sm__throughput.avg.pct_of_peak_sustained_elapsed</td><td>70.970</td><td>66.750</td>"
        ),
        "{html}"
    );
}

#[test]
fn identical_code_has_no_why() {
    let (r, md, html, _) = check("examples/recordings/pr-same");
    assert!(
        r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x.get("why").is_none())
    );
    assert!(!md.contains("**Why**"));
    assert!(!html.contains("class=\"why\""));
}
