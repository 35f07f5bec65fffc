//! The PyTorch example (examples/pytorch, docs/pytorch.md) on its real H100 recording: a bf16
//! cuBLAS GEMM and an fp16 layer norm, recorded with ncu 2025.3.1 on 2026-11-24, and the same
//! GEMM captured live when cuBLAS switched to a CUTLASS kernel (K not a multiple of 8).

use std::path::{Path, PathBuf};

use crate::support::{copy_dir, root};
use assert_cmd::Command;
use serde_json::Value;

fn example(p: &str) -> PathBuf {
    root().join("examples/pytorch").join(p)
}

fn bin() -> Command {
    let mut c = crate::support::bin();
    c.env("NO_COLOR", "1");
    c
}

const NVJET: &str = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT";
const CUTLASS: &str = "void Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_128x256_64x3_nn_align2>";

/// `check --replay` with the given spec, recording and baselines: (exit code, results, output).
fn check(spec: &Path, recording: &Path, baselines: &Path, extra: &[&str]) -> (i32, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = bin()
        .arg("check")
        .arg("--spec")
        .arg(spec)
        .arg("--replay")
        .arg(recording)
        .arg("--baselines")
        .arg(baselines)
        .arg("--json")
        .arg(&json)
        .args(extra)
        .output()
        .unwrap();
    let results = std::fs::read_to_string(&json)
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (
        out.status.code().unwrap(),
        results,
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// The recording with every repetition of gemm n=2048 replaced by the live capture of the
/// CUTLASS kernel cuBLAS switched to (the same program, `PLANT_PCT=5`: K = 2150).
fn switched() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&example("recording"), dir.path());
    let capture = std::fs::read(example("switch/gemm-n2048-cutlass.csv")).unwrap();
    for rep in 0..5 {
        std::fs::write(dir.path().join(format!("gemm/n=2048/{rep}.csv")), &capture).unwrap();
    }
    dir
}

fn rows<'a>(r: &'a Value, size: &str) -> Vec<&'a Value> {
    r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["target"] == "gemm" && x["size"] == size)
        .collect()
}

#[test]
fn the_real_recording_passes_against_its_baseline() {
    let (code, r, out) = check(
        &example("cgp-gate.yaml"),
        &example("recording"),
        &example("baselines"),
        &[],
    );
    assert_eq!(code, 0, "{out}");
    let all = r["rows"].as_array().unwrap();
    assert_eq!(all.len(), 6, "{out}");
    assert!(all.iter().all(|x| x["verdict"] == "pass"), "{out}");
    // The regex filters select cuBLAS's kernel and PyTorch's layer norm by their demangled names.
    assert!(all.iter().any(|x| x["kernel"] == NVJET), "{out}");
    assert!(
        all.iter()
            .any(|x| x["kernel"] == "void unnamed>::vectorized_layer_norm_kernel<Half, float, 0>"),
        "{out}"
    );
    assert_eq!(r["fingerprint"]["gpu_name"], "NVIDIA H100 80GB HBM3");
}

#[test]
fn a_cublas_kernel_switch_is_missing_and_new_per_kernel() {
    let rec = switched();
    let (code, r, out) = check(&example("cgp-gate.yaml"), rec.path(), &example("baselines"), &[]);
    assert_eq!(code, 1, "a gate finding, never a profiler failure: {out}");
    let n2048 = rows(&r, "n=2048");
    assert!(
        n2048
            .iter()
            .any(|x| x["verdict"] == "missing" && x["kernel"] == NVJET),
        "{out}"
    );
    assert!(
        n2048
            .iter()
            .any(|x| x["verdict"] == "new" && x["kernel"] == CUTLASS),
        "{out}"
    );
    // One line names both kernels.
    let line = out
        .lines()
        .find(|l| l.contains("kernel switch"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains(NVJET) && line.contains(CUTLASS), "{line}");
    // The other sizes and targets are untouched.
    assert!(rows(&r, "n=4096").iter().all(|x| x["verdict"] == "pass"), "{out}");
    // Allowed, the switch passes (its new rows have no baseline to compare with).
    let (code, _, out) = check(
        &example("cgp-gate.yaml"),
        rec.path(),
        &example("baselines"),
        &["--allow-missing"],
    );
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_filter_that_misses_the_new_kernel_is_missing_rows_not_a_tool_failure() {
    // A spec that names only cuBLAS's Hopper kernels: after the switch it selects none of the
    // kernels that ran. Live, ncu says "No kernels were profiled"; either way the baseline's
    // kernel is gone, and the report names the one that ran instead.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("cgp-gate.yaml");
    let text = std::fs::read_to_string(example("cgp-gate.yaml"))
        .unwrap()
        .replace(
            "kernel: regex:nvjet|gemm|xmma|cutlass",
            "kernel: regex:nvjet_sm90_",
        );
    assert!(text.contains("regex:nvjet_sm90_"));
    std::fs::write(&spec, text).unwrap();
    let rec = switched();
    let (code, r, out) = check(&spec, rec.path(), &example("baselines"), &[]);
    assert_eq!(code, 1, "{out}");
    let n2048 = rows(&r, "n=2048");
    assert!(
        !n2048.is_empty() && n2048.iter().all(|x| x["verdict"] == "missing"),
        "{out}"
    );
    assert!(
        n2048[0]["reason"].as_str().unwrap().contains(CUTLASS),
        "{}",
        n2048[0]["reason"]
    );
    assert!(r["errors"].as_array().unwrap().is_empty(), "{out}");
}

#[test]
fn an_operation_row_compares_the_gemm_whichever_kernel_runs() {
    // Baselines of the operation rows, from the real recording.
    let store = tempfile::tempdir().unwrap();
    bin()
        .args(["baseline", "update", "--spec"])
        .arg(example("cgp-gate.ops.yaml"))
        .arg("--replay")
        .arg(example("recording"))
        .arg("--baselines")
        .arg(store.path())
        .assert()
        .code(0);
    let (code, r, out) = check(
        &example("cgp-gate.ops.yaml"),
        &example("recording"),
        store.path(),
        &[],
    );
    assert_eq!(code, 0, "{out}");
    let all = r["rows"].as_array().unwrap();
    assert_eq!(all.len(), 2, "one row per size: {out}");
    let reason = all[0]["reason"].as_str().unwrap();
    assert!(reason.contains(NVJET), "the kernels behind the row: {reason}");

    let rec = switched();
    let (code, r, out) = check(&example("cgp-gate.ops.yaml"), rec.path(), store.path(), &[]);
    let n2048 = rows(&r, "n=2048");
    assert_eq!(n2048.len(), 1, "{out}");
    let row = n2048[0];
    // Still one row, compared: the CUTLASS kernel (with 5% more K) takes about 3x as long.
    assert_eq!(row["verdict"], "regression", "{out}");
    assert_eq!(code, 1, "{out}");
    let reason = row["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("now runs `{CUTLASS}` instead of `{NVJET}`")),
        "{reason}"
    );
    let note = out
        .lines()
        .find(|l| l.contains("the operation now runs"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(note.contains(CUTLASS) && note.contains(NVJET), "{note}");
    assert!(rows(&r, "n=4096")[0]["verdict"] == "pass", "{out}");
}

#[test]
fn operation_rows_refuse_counters_that_do_not_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("cgp-gate.yaml");
    for (metric, says) in [
        ("launch__registers_per_thread: exact", "launch attribute"),
        (
            "sm__warps_active.avg.pct_of_peak_sustained_active: {min: 50}",
            "percentage",
        ),
        ("dram__bytes_read.sum.per_second: \"3%\"", "rate"),
        (
            "sm__throughput.avg: { relative: \"3%\", direction: higher }",
            "not a `.sum` counter",
        ),
    ] {
        let text = std::fs::read_to_string(example("cgp-gate.ops.yaml"))
            .unwrap()
            .replace(
                "      gpu__time_duration.sum: { relative: \"3%\", min_effect: 1us }\n",
                &format!(
                    "      gpu__time_duration.sum: {{ relative: \"3%\", min_effect: 1us }}\n      {metric}\n"
                ),
            );
        std::fs::write(&spec, &text).unwrap();
        let line = text.lines().position(|l| l.contains(metric)).unwrap() + 1;
        let out = bin().arg("validate").arg("--spec").arg(&spec).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{metric}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("cgp-gate.yaml:{line}:7:")),
            "{metric}: {err}"
        );
        assert!(
            err.contains(says) && err.contains("kernels: sum"),
            "{metric}: {err}"
        );
    }
}

#[test]
fn the_dry_run_shows_the_demangled_name_base_for_regex_filters() {
    let out = bin()
        .args(["profile", "--dry-run", "--spec"])
        .arg(example("cgp-gate.yaml"))
        .env("CGP_GATE_NCU", root().join("tests/does-not-exist/ncu"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let gemm = text
        .lines()
        .find(|l| l.starts_with("gemm[n=2048]"))
        .unwrap_or_else(|| panic!("{text}"));
    // What the live run passes, so that ncu selects what a replay of its CSV selects; quoted,
    // so the line can be pasted into a shell.
    assert!(
        gemm.contains("--kernel-name-base demangled --kernel-name 'regex:nvjet|gemm|xmma|cutlass'"),
        "{gemm}"
    );
}

#[test]
fn the_sass_cache_says_once_per_run_that_it_does_not_apply_to_a_script() {
    let store = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["baseline", "update", "--spec"])
        .arg(example("cgp-gate.yaml"))
        .arg("--replay")
        .arg(example("recording"))
        .arg("--baselines")
        .arg(store.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("SASS")).collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(
        lines[0].contains("`gemm`, `layernorm`") && lines[0].contains("`python3` is an interpreter"),
        "{text}"
    );
    assert!(!text.contains("cuobjdump"), "{text}");
}

/// The commands that profile a script say nothing about the SASS cache per target: `check`
/// compares no hashes (its baselines hold none), `profile` and `ab` do not use the cache, and
/// none of them runs cuobjdump on the interpreter. (`baseline update` says it once: above.)
#[test]
fn check_profile_and_ab_on_a_script_say_nothing_per_target_about_the_sass_cache() {
    let quiet = |what: &str, code: i32, text: &str| {
        assert_eq!(code, 0, "{what}: {text}");
        assert!(
            !text.contains("SASS") && !text.contains("cuobjdump") && !text.contains("machine code"),
            "{what}: {text}"
        );
    };
    let (code, _, text) = check(
        &example("cgp-gate.yaml"),
        &example("recording"),
        &example("baselines"),
        &[],
    );
    quiet("check", code, &text);

    let out = bin()
        .args(["profile", "--spec"])
        .arg(example("cgp-gate.yaml"))
        .arg("--replay")
        .arg(example("recording"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    quiet("profile", out.status.code().unwrap(), &text);

    // The real recording as both trees of an A/B run (no manifest: the order is not known).
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&example("recording"), &dir.path().join("base"));
    copy_dir(&example("recording"), &dir.path().join("head"));
    let out = bin()
        .args(["ab", "--spec"])
        .arg(example("cgp-gate.yaml"))
        .arg("--replay")
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    quiet("ab", out.status.code().unwrap(), &text);
}

/// Issue 46: `profile` names the kernels behind an operation row (`kernels: sum`), not only
/// "(sum of selected kernels)": the real recording's nvjet kernel, and the CUTLASS kernel where
/// cuBLAS switched.
#[test]
fn profile_names_the_kernels_of_an_operation_row() {
    let profile = |rec: &Path| {
        let out = bin()
            .args(["profile", "--spec"])
            .arg(example("cgp-gate.ops.yaml"))
            .arg("--replay")
            .arg(rec)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = profile(&example("recording"));
    for size in ["n=2048", "n=4096"] {
        let head = format!("gemm[{size}] (sum of selected kernels: {NVJET})\n");
        assert!(text.contains(&head), "{head}{text}");
    }
    let rec = switched();
    let text = profile(rec.path());
    let head = format!("gemm[n=2048] (sum of selected kernels: {CUTLASS})\n");
    assert!(text.contains(&head), "{head}{text}");
}
