//! The "why" of a timing change end to end: `check` on the example recordings (SYNTHETIC
//! samples made by examples/synthesize_recording.rs). `matmul` has `explain: true`, so its
//! recordings and baseline carry the explanatory counters. In `pr-slowdown`, `matmul` n=1024 is
//! planted 6% slower with a 30% larger long-scoreboard stall share and its SM throughput lower
//! (71% -> 67%), instructions, bytes, registers and launch sizes unchanged: the why must name
//! the stalls (and the throughput), nothing else.

use crate::support::root;
use serde_json::Value;

fn check(recording: &str) -> (Value, String, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let p = |f: &str| dir.path().join(f);
    let out = crate::support::bin()
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
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
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
    let (r, md, html, text) = check("examples/recordings/pr-slowdown");
    let rows = r["rows"].as_array().unwrap();
    let slow = rows
        .iter()
        .find(|x| x["target"] == "matmul" && x["size"] == "n=1024" && x["metric"] == "gpu__time_duration.sum")
        .unwrap();
    assert_eq!(slow["verdict"], "regression");
    let why = &slow["why"];
    let changed = why["changed"].as_array().unwrap();
    let names: Vec<&str> = changed.iter().map(|c| c["metric"].as_str().unwrap()).collect();
    // The planted cause first (largest change), then the SM throughput the slowdown lowered;
    // nothing else: instructions, DRAM and L2 bytes, launch sizes, spills, occupancy and the
    // other stall reasons are the same in the recording.
    assert_eq!(
        names,
        [
            "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
            "sm__throughput.avg.pct_of_peak_sustained_elapsed"
        ],
        "{why}"
    );
    let c = &changed[0];
    for field in ["metric", "baseline", "candidate", "change"] {
        assert!(c.get(field).is_some(), "{field}: {c}");
    }
    assert!(c["candidate"].as_f64().unwrap() > c["baseline"].as_f64().unwrap());
    let change = c["change"].as_f64().unwrap();
    assert!((0.27..0.33).contains(&change), "planted +30%: {c}");
    let ci = c["change_ci"].as_array().unwrap();
    assert!(
        ci[0].as_f64().unwrap() > 0.0,
        "the interval excludes no change: {c}"
    );
    // Deterministic counters were compared exactly and did not change, so they are not listed;
    // the counters `explain: true` collects (not gated by the spec) were compared too.
    let compared: Vec<&str> = why["compared"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    for m in [
        "launch__registers_per_thread",
        "smsp__inst_executed.sum",
        "dram__bytes.sum",
        "lts__t_bytes.sum",
        "launch__grid_size",
        "sm__warps_active.avg.pct_of_peak_sustained_active",
    ] {
        assert!(compared.contains(&m), "{m} compared: {why}");
    }
    assert_eq!(
        why["reading"],
        "same instructions, +30% long-scoreboard stalls: memory latency"
    );
    // Rows that passed carry no why, and the ungated counters make no rows.
    assert!(
        rows.iter()
            .filter(|x| x["verdict"] == "pass")
            .all(|x| x.get("why").is_none())
    );
    assert!(!rows.iter().any(|x| x["metric"] == "smsp__inst_executed.sum"));
    // Console: one line per why.
    assert!(
        text.contains(
            "why matmul[n=1024] time: same instructions, +30% long-scoreboard stalls: memory latency"
        ),
        "{text}"
    );
    // Markdown: under the table, folded; HTML: a counter-diff table.
    assert!(
        md.contains(
            "**Why** `matmul[n=1024]` `time`: same instructions, +30% long-scoreboard stalls: memory latency"
        ),
        "{md}"
    );
    assert!(
        md.contains("<details><summary>2 counter(s) changed</summary>"),
        "{md}"
    );
    assert!(html.contains(
        "<div class=\"why\"><b>Why</b> matmul[n=1024] gpu__time_duration.sum: same instructions, +30% long-scoreboard stalls: memory latency"
    ), "{html}");
    assert!(
        html.contains(
            "<td>sm__throughput.avg.pct_of_peak_sustained_elapsed</td><td>70.940</td><td>66.735</td>"
        ),
        "{html}"
    );
    assert!(
        html.contains("<td>smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct</td>"),
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

/// `explain: remeasure`: `baseline update` stores the counters; `check` collects them only when
/// it re-measures a doubtful size (matmul n=1024) or explains a changed one (vector_add
/// n=1048576, 15% faster and not doubtful), so a run where nothing changed pays nothing.
#[test]
fn explain_remeasure_collects_the_counters_only_for_doubtful_or_changed_rows() {
    let dir = tempfile::tempdir().unwrap();
    let spec_text = std::fs::read_to_string(root().join("examples/cgp-gate.yaml"))
        .unwrap()
        .replace("    explain: true ", "    explain: remeasure ")
        .replace(
            "    kernel: vector_add\n",
            "    kernel: vector_add\n    explain: remeasure\n",
        );
    assert_eq!(spec_text.matches("explain: remeasure").count(), 2);
    let spec = dir.path().join("cgp-gate.yaml");
    std::fs::write(&spec, spec_text).unwrap();
    let store = dir.path().join("baselines");
    let run = |args: &[&str]| {
        let out = crate::support::bin()
            .current_dir(root())
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("GITHUB_OUTPUT")
            .args(args)
            .arg("--spec")
            .arg(&spec)
            .arg("--baselines")
            .arg(&store)
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (code, text) = run(&["baseline", "update", "--replay", "examples/recordings/main"]);
    assert_eq!(code, 0, "{text}");
    let stored = |target: &str| -> Value {
        serde_json::from_str(
            &std::fs::read_to_string(store.join(format!("synthetic-gpu-no-hardware/{target}.json"))).unwrap(),
        )
        .unwrap()
    };
    let va = stored("vector_add");
    let counters = va["counters"]
        .as_array()
        .expect("the baseline holds the counters");
    assert!(counters.iter().any(|c| c["metric"] == "smsp__inst_executed.sum"
        && c["size"] == "n=1048576"
        && c["samples"].as_array().unwrap().len() == 20));
    // Gated metrics stay entries, never counters; a target without `explain` has none.
    assert!(
        !counters
            .iter()
            .any(|c| c["metric"] == "launch__registers_per_thread")
    );
    assert!(stored("reduce").get("counters").is_none());

    let json = dir.path().join("r.json");
    let (code, text) = run(&[
        "check",
        "--replay",
        "examples/recordings/pr-slowdown",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("re-measuring 1 doubtful size(s)"), "{text}");
    assert!(
        text.contains("explaining 1 changed size(s): collecting the counters that say why"),
        "{text}"
    );
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let row = |target: &str, size: &str| {
        r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["target"] == target && x["size"] == size && x["metric"] == "gpu__time_duration.sum")
            .unwrap()
            .clone()
    };
    // The changed size: the explain pass (or a re-measurement) carried the counters.
    let slow = row("matmul", "n=1024");
    assert_eq!(slow["verdict"], "regression");
    assert_eq!(
        slow["why"]["reading"],
        "same instructions, +30% long-scoreboard stalls: memory latency"
    );
    // The improvement: the explain pass measured the counters; its verdict stands on the
    // first five runs.
    let fast = row("vector_add", "n=1048576");
    assert_eq!(fast["verdict"], "improvement");
    // Five runs of 3 launches, each dropping its warm-up launch.
    assert_eq!(fast["candidate"]["n"], 10, "{fast}");
    assert!(
        fast["why"]["compared"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m == "smsp__inst_executed.sum"),
        "{fast}"
    );
    // Nothing changed: no re-measurement of a changed row, no explain pass, no counters paid for.
    let (code, text) = run(&["check", "--replay", "examples/recordings/pr-same"]);
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("explaining"), "{text}");
}

/// Under GitHub Actions the regression's annotation carries the why's reading.
#[test]
fn the_regression_annotation_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let out = crate::support::bin()
        .current_dir(root())
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", dir.path().join("summary.md"))
        .env("GITHUB_OUTPUT", dir.path().join("output"))
        .args([
            "check",
            "--spec",
            "examples/cgp-gate.yaml",
            "--replay",
            "examples/recordings/pr-slowdown",
        ])
        .args(["--baselines", "examples/baselines"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("::error ") && l.contains("matmul[n=1024] gpu__time_duration.sum"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        // `%` is `%25` in a workflow command.
        line.ends_with(". Why: same instructions, +30%25 long-scoreboard stalls: memory latency"),
        "{line}"
    );
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(summary.contains("**Why** `matmul"), "{summary}");
}
