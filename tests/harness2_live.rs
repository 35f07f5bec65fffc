//! Live runs of the second batch of harness formats (issue 61; docs/harnesses.md): each
//! `profiler:` runs its program (the SYNTHETIC stand-in tests/standins/harness2.py, writing the
//! tool's own file where the live run looks: the flags cgp-gate appends, `CGP_GATE_OUTPUT`,
//! `CRITERION_HOME`, asv's `results_dir`), `baseline update` then `check` passes (exit 0) and a 10 %
//! slower program fails (exit 1); `ab` of two trees does the same.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{bin, root};

/// Each format, the metric gated, and the baseline and candidate repetitions: formats of one
/// value per process need more processes for the rank test to reach alpha.
const FORMATS: &[(&str, &str, u32, u32)] = &[
    ("hyperfine", "time", 5, 3),
    ("tritonbench", "latency", 10, 4),
    ("pytorch-rows", "latency", 5, 3),
    ("criterion", "time", 5, 3),
    ("asv", "time", 5, 3),
    ("vllm", "ttft/median", 10, 4),
];

fn spec(dir: &Path, kind: &str, metric: &str, base: u32, reps: u32) -> PathBuf {
    let standin = root().join("tests/standins/harness2.py");
    let command = if kind == "asv" {
        format!("[python3, {:?}, asv, run]", standin.display().to_string())
    } else {
        format!("[python3, {:?}, {kind}]", standin.display().to_string())
    };
    let path = dir.join("cgp-gate.yaml");
    std::fs::write(
        &path,
        format!(
            "version: 1\ntargets:\n  - name: reduce\n    profiler: {kind}\n    command: {command}\n    repetitions: {reps}\n    baseline_repetitions: {base}\n    metrics:\n      {metric}: \"5%\"\n"
        ),
    )
    .unwrap();
    path
}

fn run(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> (i32, String) {
    let mut c = bin();
    c.current_dir(dir).args(args);
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

#[test]
fn live_baseline_update_then_check_passes_and_a_10_percent_slowdown_fails() {
    for &(kind, metric, base, reps) in FORMATS {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        spec(d, kind, metric, base, reps);
        let log = d.join("runs.log");
        let logged = ("CGP_STANDIN_LOG", log.to_str().unwrap());
        let (code, out) = run(&["baseline", "update", "--baselines", "b"], d, &[logged]);
        assert_eq!(code, 0, "{kind}: {out}");
        // The program ran once per baseline repetition.
        let runs = std::fs::read_to_string(&log).unwrap().lines().count();
        assert_eq!(runs, base as usize, "{kind}: {out}");
        let (code, out) = run(&["check", "--baselines", "b", "--json", "same.json"], d, &[]);
        assert_eq!(code, 0, "{kind}: {out}");
        let (code, out) = run(
            &["check", "--baselines", "b", "--json", "slow.json"],
            d,
            &[("CGP_STANDIN_SLOWDOWN", "1.10")],
        );
        assert_eq!(code, 1, "{kind} x1.10: {out}");
        let r: Value = serde_json::from_slice(&std::fs::read(d.join("slow.json")).unwrap()).unwrap();
        let rows = r["rows"].as_array().unwrap();
        // Two benchmarks; vLLM's file is one run.
        assert_eq!(rows.len(), if kind == "vllm" { 1 } else { 2 }, "{kind}: {rows:?}");
        assert!(
            rows.iter().all(|row| row["verdict"] == "regression"),
            "{kind}: {rows:?}"
        );
        // The device the file names is the fingerprint's GPU, where the format records one.
        if kind == "pytorch-rows" {
            assert_eq!(r["fingerprint"]["gpu_name"], "SYNTHETIC stand-in GPU");
        }
        assert_eq!(r["fingerprint"]["profiler"], kind);
    }
}

/// A failed run of the benchmarked command (hyperfine's `exit_codes`) fails the run (exit 3),
/// saying so; vLLM's per-request rows read from a `--save-detailed` run, its quantile rows
/// judged between processes.
#[test]
fn a_failing_command_fails_the_run_and_detailed_vllm_runs_give_quantile_rows() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    spec(d, "hyperfine", "time", 3, 3);
    let (code, out) = run(
        &["baseline", "update", "--baselines", "b"],
        d,
        &[("CGP_STANDIN_FAIL", "1")],
    );
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("1 of 20 runs failed (exit status 1)"), "{out}");

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    spec(d, "vllm", "ttft/p90", 10, 4);
    let detailed = ("CGP_STANDIN_DETAILED", "1");
    let (code, out) = run(&["baseline", "update", "--baselines", "b"], d, &[detailed]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = run(&["check", "--baselines", "b", "--json", "r.json"], d, &[detailed]);
    assert_eq!(code, 0, "{out}");
    let r: Value = serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    let row = &r["rows"][0];
    assert_eq!(row["metric"], "ttft/p90", "{row}");
    // One value per process: the reason says it is compared between processes, after the
    // sentence that decided the row (issue 59).
    let reason = row["reason"].as_str().unwrap();
    assert!(reason.contains("; one value per process"), "{row}");
    assert!(!reason.starts_with("one value per process"), "{row}");
}

/// `ab` of a base and a head tree, each running its own program: A/A passes, a 10 % slower head
/// fails.
#[test]
fn live_ab_passes_a_a_and_fails_a_10_percent_slowdown() {
    let standin = root().join("tests/standins/harness2.py");
    for (kind, metric) in [("hyperfine", "time"), ("criterion", "time")] {
        for (slow, want) in [("1.0", 0), ("1.10", 1)] {
            let dir = tempfile::tempdir().unwrap();
            for (tree, factor) in [("base", "1.0"), ("head", slow)] {
                let t = dir.path().join(tree);
                std::fs::create_dir_all(&t).unwrap();
                std::fs::write(
                    t.join("bench.py"),
                    format!(
                        "import os, runpy, sys\nos.environ['CGP_STANDIN_SLOWDOWN'] = {factor:?}\nsys.argv = [{s:?}] + sys.argv[1:]\nrunpy.run_path({s:?}, run_name='__main__')\n",
                        s = standin.display().to_string()
                    ),
                )
                .unwrap();
            }
            std::fs::write(
                dir.path().join("head/cgp-gate.yaml"),
                format!("version: 1\ntargets:\n  - name: reduce\n    profiler: {kind}\n    command: [python3, bench.py, {kind}]\n    repetitions: 6\n    max_repetitions: 12\n    metrics:\n      {metric}: \"5%\"\n"),
            )
            .unwrap();
            let head = dir.path().join("head");
            let (code, out) = run(
                &[
                    "ab",
                    "--spec",
                    "cgp-gate.yaml",
                    "--base-dir",
                    "../base",
                    "--head-dir",
                    ".",
                    "--json",
                    "ab.json",
                ],
                &head,
                &[],
            );
            assert_eq!(code, want, "{kind} x{slow}: {out}");
            let r: Value = serde_json::from_slice(&std::fs::read(head.join("ab.json")).unwrap()).unwrap();
            let verdict = if want == 0 { "pass" } else { "regression" };
            assert!(
                r["rows"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|row| row["verdict"] == verdict),
                "{kind} x{slow}: {out}"
            );
        }
    }
}

/// Triton kernels gated per repetition through the wheel's helper, `cgp_gate.triton.bench`
/// (`python/cgp_gate/triton.py`), with a SYNTHETIC `triton.testing.do_bench`
/// (tests/standins/fake_triton: no GPU here) returning every repetition's time: the rows it
/// writes to `CGP_GATE_OUTPUT` are samples; a 10 % slower kernel fails.
#[test]
fn triton_kernels_gate_per_sample_through_the_helper() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("bench_softmax.py"),
        "from cgp_gate.triton import bench\nbench('softmax', lambda: None, backend='triton', state={'n': 4096}, rep=50)\nbench('softmax', lambda: None, backend='aten', state={'n': 4096}, rep=50)\n",
    )
    .unwrap();
    std::fs::write(
        d.join("cgp-gate.yaml"),
        "version: 1\ntargets:\n  - name: softmax\n    profiler: pytorch-rows\n    command: [python3, bench_softmax.py]\n    repetitions: 3\n    baseline_repetitions: 5\n    metrics:\n      latency: \"5%\"\n",
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        root().join("python").display(),
        root().join("tests/standins/fake_triton").display()
    );
    let py = ("PYTHONPATH", path.as_str());
    let (code, out) = run(&["baseline", "update", "--baselines", "b"], d, &[py]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = run(&["check", "--baselines", "b", "--json", "r.json"], d, &[py]);
    assert_eq!(code, 0, "{out}");
    let r: Value = serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    let rows = r["rows"].as_array().unwrap();
    let kernels: Vec<&str> = rows.iter().map(|row| row["kernel"].as_str().unwrap()).collect();
    assert_eq!(kernels.len(), 2, "{kernels:?}");
    assert!(
        kernels.contains(&"softmax [backend=triton,mode=n=4096]"),
        "{kernels:?}"
    );
    // Every repetition of do_bench is a sample (50 per process), in 3 runs: the run-level model.
    let n = rows[0]["candidate"]["n"].as_u64().unwrap();
    assert!(
        n > 100 && rows[0]["candidate"]["runs"] == 3 && rows[0]["method"] == "run-level-t",
        "{}",
        rows[0]
    );
    let (code, out) = run(
        &["check", "--baselines", "b"],
        d,
        &[py, ("CGP_STANDIN_SLOWDOWN", "1.10")],
    );
    assert_eq!(code, 1, "{out}");
}
