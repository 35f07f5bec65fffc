//! Harness targets (`profiler: nvbench`, `gbench`, `pytest-benchmark`; docs/harnesses.md) end to
//! end through the binary, live on this machine without a GPU or NVML: the SYNTHETIC stand-in
//! benchmark program tests/standins/harness.py writes each harness's real file format, and
//! `baseline update` then `check` gate it.

use std::path::Path;

use serde_json::Value;

use crate::support::{bin, root};

/// The metric each kind gates in these tests.
const KINDS: &[(&str, &str)] = &[
    ("nvbench", "nv/cold/time/gpu"),
    ("gbench", "real_time"),
    ("pytest-benchmark", "time"),
];

fn spec(dir: &Path, kind: &str, metric: &str) -> std::path::PathBuf {
    let standin = root().join("tests/standins/harness.py");
    let path = dir.join("cgp-gate.yaml");
    std::fs::write(
        &path,
        format!(
            "version: 1\ntargets:\n  - name: reduce\n    profiler: {kind}\n    command: [python3, {standin:?}]\n    repetitions: 3\n    baseline_repetitions: 5\n    metrics:\n      {metric}: \"5%\"\n",
            standin = standin.display().to_string()
        ),
    )
    .unwrap();
    path
}

fn run(args: &[&str], spec: &Path, store: &Path, env: &[(&str, &str)]) -> (i32, String) {
    let mut c = bin();
    c.args(args).arg("--spec").arg(spec).arg("--baselines").arg(store);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// Lines of the stand-in's run log (one per process it ran), emptied.
fn runs_logged(log: &Path) -> usize {
    let n = std::fs::read_to_string(log).map_or(0, |t| t.lines().count());
    let _ = std::fs::remove_file(log);
    n
}

#[test]
fn baseline_update_then_check_passes_and_a_10_percent_slowdown_fails() {
    // Live, on this machine without a GPU or NVML: the device is the one the harness file names.
    for (kind, metric) in KINDS {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec(dir.path(), kind, metric);
        let store = dir.path().join("baselines");
        let log = dir.path().join("runs.log");
        let log_env = ("CGP_STANDIN_LOG", log.to_str().unwrap());
        let (code, out) = run(&["baseline", "update"], &spec, &store, &[log_env]);
        assert_eq!(code, 0, "{kind}: {out}");
        // The program ran once per baseline repetition: the probe that names the device is the
        // first of them, not an extra run.
        assert_eq!(runs_logged(&log), 5, "{kind}: {out}");
        // Keyed by the harness's device, by name.
        let stored = store.join("synthetic-stand-in-gpu/reduce.json");
        let b: Value = serde_json::from_slice(&std::fs::read(&stored).unwrap()).unwrap();
        assert_eq!(b["fingerprint"]["gpu_name"], "SYNTHETIC stand-in GPU", "{kind}");
        assert_eq!(b["fingerprint"]["profiler"], *kind, "{kind}");
        let json = dir.path().join("r.json");
        let (code, out) = run(
            &["check", "--json", json.to_str().unwrap()],
            &spec,
            &store,
            &[log_env],
        );
        assert_eq!(code, 0, "{kind}: {out}");
        assert!(runs_logged(&log) >= 3, "{kind}: {out}");
        let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(r["fingerprint"]["gpu_name"], "SYNTHETIC stand-in GPU", "{kind}");
        assert!(
            !r["source"].to_string().contains("replay"),
            "{kind}: {}",
            r["source"]
        );
        let rows = r["rows"].as_array().unwrap();
        // One row per benchmark x state of the file (two states), for the one metric.
        assert_eq!(rows.len(), 2, "{kind}: {rows:?}");
        assert!(
            rows.iter()
                .all(|row| row["metric"] == *metric && row["verdict"] == "pass"),
            "{kind}: {rows:?}"
        );
        // Per-sample rows (nvbench with --jsonbin): not summaries.
        assert!(
            rows.iter().all(|row| !row["reason"]
                .as_str()
                .unwrap_or_default()
                .contains("summary only")),
            "{kind}: {rows:?}"
        );
        let (code, out) = run(
            &["check"],
            &spec,
            &store,
            &[log_env, ("CGP_STANDIN_SLOWDOWN", "1.10")],
        );
        assert_eq!(code, 1, "{kind}: {out}");
        assert!(runs_logged(&log) >= 3, "{kind}: {out}");
        // Another device, by the harness's own record: reported as any other GPU is.
        let (code, out) = run(
            &["check"],
            &spec,
            &store,
            &[("CGP_STANDIN_GPU", "SYNTHETIC other GPU")],
        );
        assert_eq!(code, 3, "{kind}: {out}");
        assert!(
            out.contains("no baseline of `reduce` for this GPU (`SYNTHETIC other GPU`")
                && out.contains("synthetic-stand-in-gpu/reduce.json"),
            "{kind}: {out}"
        );
    }
}

#[test]
fn a_failing_benchmark_or_no_file_is_exit_3_with_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), "nvbench", "nv/cold/time/gpu");
    let store = dir.path().join("baselines");
    let (code, out) = run(
        &["check", "--allow-no-baselines"],
        &spec,
        &store,
        &[("CGP_STANDIN_EXIT", "4")],
    );
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("exited with status 4"), "{out}");
    let (code, out) = run(
        &["check", "--allow-no-baselines"],
        &spec,
        &store,
        &[("CGP_STANDIN_NO_FILE", "1")],
    );
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("wrote no nvbench file") && out.contains("stand-in: told to write no file"),
        "{out}"
    );
}

#[test]
fn harness_specs_validate_and_refuse_what_they_cannot_gate() {
    let dir = tempfile::tempdir().unwrap();
    for (kind, metric) in KINDS {
        let spec = spec(dir.path(), kind, metric);
        let out = bin().args(["validate", "--spec"]).arg(&spec).output().unwrap();
        assert!(
            out.status.success(),
            "{kind}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let spec = spec(dir.path(), "pytest-benchmark", "real_time");
    let out = bin().args(["validate", "--spec"]).arg(&spec).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("pytest-benchmark's file has one measurement per round, `time`")
    );
    // An ncu-only key on a harness target is refused, not ignored.
    let text = std::fs::read_to_string(&spec).unwrap().replace(
        "metrics:\n      real_time",
        "launch_count: 2\n    metrics:\n      time",
    );
    std::fs::write(&spec, text).unwrap();
    let out = bin().args(["validate", "--spec"]).arg(&spec).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("`launch_count` of target `reduce` only applies"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_state_missing_from_a_later_live_run_is_invalid_input_naming_file_benchmark_and_state() {
    for (kind, metric, bench, state) in [
        (
            "nvbench",
            "nv/cold/time/gpu",
            "`reduce`",
            "state `T=I32,Elements=2^24`",
        ),
        (
            "gbench",
            "real_time",
            "`BM_reduce<I32>`",
            "state `16777216/manual_time`",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec(dir.path(), kind, metric);
        let store = dir.path().join("baselines");
        let (code, out) = run(&["baseline", "update"], &spec, &store, &[]);
        assert_eq!(code, 0, "{kind}: {out}");
        let drop = [("CGP_STANDIN_DROP_STATE", "16777216")];
        let json = dir.path().join("r.json");
        let (code, out) = run(&["check", "--json", json.to_str().unwrap()], &spec, &store, &drop);
        assert_eq!(code, 2, "{kind}: {out}");
        let file = store.join("synthetic-stand-in-gpu/reduce.json");
        assert!(
            out.contains(&format!("{}: benchmark {bench}", file.display()))
                && out.contains(state)
                && out.contains("is in the baseline, and the")
                && out.contains("cgp-gate baseline update"),
            "{kind}: {out}"
        );
        let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let verdicts: Vec<&str> = r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["verdict"].as_str().unwrap())
            .collect();
        assert!(
            verdicts.contains(&"pass") && verdicts.contains(&"error"),
            "{kind}: {verdicts:?}"
        );
        // Accepted on purpose, it is the `missing` row it was.
        let (code, out) = run(&["check", "--allow-missing"], &spec, &store, &drop);
        assert_eq!(code, 0, "{kind}: {out}");
    }
}

/// Base and head trees for a live `ab` of a harness target: each tree's `bench.py` runs the
/// stand-in with its own knob (`CGP_STANDIN_SLOWDOWN=1.10`, ...); the head holds the spec.
fn ab_trees(kind: &str, metric: &str, base_knob: &str, head_knob: &str, log: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let standin = root().join("tests/standins/harness.py");
    for (tree, knob) in [("base", base_knob), ("head", head_knob)] {
        let d = dir.path().join(tree);
        std::fs::create_dir_all(&d).unwrap();
        let (var, value) = knob.split_once('=').unwrap();
        std::fs::write(
            d.join("bench.py"),
            format!(
                "import os, runpy, sys\nos.environ[{var:?}] = {value:?}\nwith open({log:?}, 'a') as f:\n    f.write({tree:?} + '\\n')\nsys.argv[0] = {s:?}\nrunpy.run_path({s:?}, run_name='__main__')\n",
                log = log.display().to_string(),
                s = standin.display().to_string()
            ),
        )
        .unwrap();
    }
    std::fs::write(
        dir.path().join("head/cgp-gate.yaml"),
        format!(
            "version: 1\ntargets:\n  - name: reduce\n    profiler: {kind}\n    command: [python3, bench.py]\n    repetitions: 6\n    max_repetitions: 12\n    metrics:\n      {metric}: \"5%\"\n"
        ),
    )
    .unwrap();
    dir
}

#[test]
fn live_ab_of_harness_targets_passes_a_a_and_fails_a_10_percent_slowdown() {
    for (kind, metric) in KINDS {
        for (head_slow, want) in [("1.0", 0), ("1.10", 1)] {
            let log_dir = tempfile::tempdir().unwrap();
            let log = log_dir.path().join("sides.log");
            let dir = ab_trees(
                kind,
                metric,
                "CGP_STANDIN_SLOWDOWN=1.0",
                &format!("CGP_STANDIN_SLOWDOWN={head_slow}"),
                &log,
            );
            let head = dir.path().join("head");
            let out = bin()
                .current_dir(&head)
                .args([
                    "ab",
                    "--spec",
                    "cgp-gate.yaml",
                    "--base-dir",
                    "../base",
                    "--head-dir",
                    ".",
                    "--json",
                    "ab.json",
                ])
                .output()
                .unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(out.status.code(), Some(want), "{kind} x{head_slow}: {text}");
            // Each tree's own program ran, live, at least once per pair.
            let sides = std::fs::read_to_string(&log).unwrap();
            let count = |s: &str| sides.lines().filter(|l| *l == s).count();
            assert!(count("base") >= 6 && count("head") >= 6, "{kind}: {sides}");
            let r: Value = serde_json::from_slice(&std::fs::read(head.join("ab.json")).unwrap()).unwrap();
            let rows = r["rows"].as_array().unwrap();
            assert_eq!(rows.len(), 2, "{kind}: {rows:?}");
            let verdict = if want == 0 { "pass" } else { "regression" };
            assert!(
                rows.iter().all(|row| row["verdict"] == verdict),
                "{kind} x{head_slow}: {rows:?}"
            );
            assert_eq!(r["fingerprint"]["gpu_name"], "SYNTHETIC stand-in GPU", "{kind}");
            // nvbench's regressions are confirmed in cycles against the base tree's.
            if *kind == "nvbench" && want == 1 {
                assert!(
                    rows.iter()
                        .all(|row| row["reason"].as_str().unwrap().starts_with("code: ")),
                    "{rows:?}"
                );
            }
        }
    }
}

#[test]
fn nvbench_clock_samples_tell_a_slower_clock_from_slower_code() {
    // The stand-in's --jsonbin sidecars (SYNTHETIC, labelled): per-sample times and SM clocks.
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), "nvbench", "nv/cold/time/gpu");
    let store = dir.path().join("baselines");
    let (code, out) = run(&["baseline", "update"], &spec, &store, &[]);
    assert_eq!(code, 0, "{out}");
    // The baseline keeps the cycles beside the gated time.
    let b: Value =
        serde_json::from_slice(&std::fs::read(store.join("synthetic-stand-in-gpu/reduce.json")).unwrap())
            .unwrap();
    let counters = b["counters"].as_array().unwrap();
    assert_eq!(counters.len(), 2, "{counters:?}");
    assert!(counters.iter().all(|c| c["metric"] == "nv/cold/cycles/gpu"));
    let reasons = |env: &[(&str, &str)]| -> (i32, Vec<(String, String)>, String) {
        let json = dir.path().join("r.json");
        let (code, out) = run(&["check", "--json", json.to_str().unwrap()], &spec, &store, env);
        let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let rows = r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| {
                (
                    row["verdict"].as_str().unwrap().to_owned(),
                    row["reason"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        (code, rows, out)
    };
    // 10 % longer at a clock 1/1.1 as high: the same cycles, the clock's doing.
    let (code, rows, out) = reasons(&[("CGP_STANDIN_CLOCK", "0.9090909")]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(rows.len(), 2, "{rows:?}");
    for (verdict, reason) in &rows {
        assert_eq!(verdict, "inconclusive", "{reason}");
        assert!(reason.starts_with("clock: the time grew +"), "{reason}");
        assert!(reason.contains("the SM clock ran -9."), "{reason}");
    }
    // 10 % longer at the same clock: the code's doing.
    let (code, rows, out) = reasons(&[("CGP_STANDIN_SLOWDOWN", "1.10")]);
    assert_eq!(code, 1, "{out}");
    for (verdict, reason) in &rows {
        assert_eq!(verdict, "regression", "{reason}");
        assert!(
            reason.starts_with("code: the slowdown persists in SM cycles"),
            "{reason}"
        );
    }
}

#[test]
fn live_ab_of_nvbench_tells_the_head_s_lower_clock_from_slower_code() {
    // The head tree's stand-in runs at a clock 1/1.1 as high: 10 % longer times, the same
    // cycles (SYNTHETIC sidecars). Its rows are the clock's, not regressions.
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("sides.log");
    let dir = ab_trees(
        "nvbench",
        "nv/cold/time/gpu",
        "CGP_STANDIN_CLOCK=1.0",
        "CGP_STANDIN_CLOCK=0.9090909",
        &log,
    );
    let head = dir.path().join("head");
    let out = bin()
        .current_dir(&head)
        .args([
            "ab",
            "--spec",
            "cgp-gate.yaml",
            "--base-dir",
            "../base",
            "--head-dir",
            ".",
            "--json",
            "ab.json",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{text}");
    let r: Value = serde_json::from_slice(&std::fs::read(head.join("ab.json")).unwrap()).unwrap();
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    for row in rows {
        let reason = row["reason"].as_str().unwrap();
        assert_eq!(row["verdict"], "inconclusive", "{reason}");
        assert!(reason.starts_with("clock: the time grew +"), "{reason}");
    }
}
