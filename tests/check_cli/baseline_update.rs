//! `baseline update` end to end: from a check's results without profiling, a regression kept out
//! unless accepted, a failed run or a bad series never overwriting a baseline, and more
//! repetitions stored than a check takes.

use super::*;

#[test]
fn baselines_from_a_checks_results_need_no_profiling() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    bin()
        .args([
            "check",
            "--spec",
            "examples/cgp-gate.yaml",
            "--replay",
            "examples/recordings/pr-same",
            "--allow-no-baselines",
            "--baselines",
        ])
        .arg(dir.path().join("none"))
        .arg("--json")
        .arg(&json)
        .assert()
        .code(0);
    let store = dir.path().join("baselines");
    bin()
        .args(["baseline", "update", "--spec", "examples/cgp-gate.yaml", "--from"])
        .arg(&json)
        .arg("--baselines")
        .arg(&store)
        .env("CGP_GATE_NCU", "/nonexistent/ncu")
        .assert()
        .code(0)
        .stdout(predicate::str::contains("matmul.json (8 series)"));
    // The new baselines judge the same recording as identical.
    let (code, r, _) = check("examples/recordings/pr-same", &store, &[]);
    assert_eq!(code, 0);
    assert!(
        r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["verdict"] == "pass")
    );
    bin()
        .args(["baseline", "show", "--baselines"])
        .arg(&store)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("gpu__time_duration.sum"))
        .stdout(predicate::str::contains("Synthetic GPU"));
}

/// Issue 46: results holding a regression do not become the baseline without a word. Refused
/// (exit 2, nothing written) by default; stored with `--accept-regressions`, each row named.
#[test]
fn results_with_a_regression_become_a_baseline_only_when_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("baselines");
    copy_dir(&root().join("examples/baselines"), &store);
    let json = dir.path().join("r.json");
    bin()
        .args([
            "check",
            "--spec",
            "examples/cgp-gate.yaml",
            "--replay",
            "examples/recordings/pr-slowdown",
        ])
        .arg("--baselines")
        .arg(&store)
        .arg("--json")
        .arg(&json)
        .assert()
        .code(1);
    let file = store.join("synthetic-gpu-no-hardware/matmul.json");
    let before = std::fs::read(&file).unwrap();
    let update = |extra: &[&str]| {
        bin()
            .args(["baseline", "update", "--spec", "examples/cgp-gate.yaml", "--from"])
            .arg(&json)
            .arg("--baselines")
            .arg(&store)
            .args(extra)
            .env("CGP_GATE_NCU", "/nonexistent/ncu")
            .output()
            .unwrap()
    };
    let out = update(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "these results hold 1 regression(s) (matmul[n=1024] void matmul_tiled<32> gpu__time_duration.sum)"
        ),
        "{err}"
    );
    assert!(
        err.contains("Nothing was written") && err.contains("`--accept-regressions`"),
        "{err}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before, "nothing is written");
    let out = update(&["--accept-regressions"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: --accept-regressions: the regression of matmul[n=1024] void matmul_tiled<32> gpu__time_duration.sum becomes the baseline"),
        "{err}"
    );
    assert_ne!(
        std::fs::read(&file).unwrap(),
        before,
        "the accepted results are stored"
    );
    // The same recording now passes against the accepted baseline.
    let (code, _, out) = check("examples/recordings/pr-slowdown", &store, &[]);
    assert_eq!(code, 0, "{out}");
    // The flag means nothing without --from.
    bin()
        .args([
            "baseline",
            "update",
            "--spec",
            "examples/cgp-gate.yaml",
            "--accept-regressions",
        ])
        .assert()
        .code(2);
}

#[test]
fn a_failed_run_never_overwrites_a_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("baselines");
    copy_dir(&root().join("examples/baselines"), &store);
    let before = std::fs::read(store.join("synthetic-gpu-no-hardware/reduce.json")).unwrap();
    // A recording with a repetition missing: the run fails part-way.
    let rec = dir.path().join("rec");
    copy_dir(&root().join("examples/recordings/pr-slowdown"), &rec);
    std::fs::remove_file(rec.join("reduce/n=16777216/3.csv")).unwrap();
    update_from_recording(&rec, &store)
        .code(3)
        .stderr(predicate::str::contains("no baseline was written"));
    assert_eq!(
        std::fs::read(store.join("synthetic-gpu-no-hardware/reduce.json")).unwrap(),
        before
    );
    // A results file of a failed check is refused too.
    let json = dir.path().join("r.json");
    bin()
        .args(["check", "--spec", "examples/cgp-gate.yaml", "--replay"])
        .arg(&rec)
        .arg("--baselines")
        .arg(&store)
        .arg("--json")
        .arg(&json)
        .assert()
        .code(3);
    bin()
        .args(["baseline", "update", "--spec", "examples/cgp-gate.yaml", "--from"])
        .arg(&json)
        .arg("--baselines")
        .arg(&store)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("samples are incomplete"));
    assert_eq!(
        std::fs::read(store.join("synthetic-gpu-no-hardware/reduce.json")).unwrap(),
        before
    );
}

#[test]
fn a_bad_series_in_one_target_leaves_every_baseline_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("baselines");
    let rec = dir.path().join("rec");
    copy_dir(&root().join("examples/recordings/main"), &rec);
    // The reduce kernel launched once, renamed, in every repetition: a series of fewer than
    // 2 samples in the last target.
    for rep in 0..5 {
        let p = rec.join(format!("reduce/n=16777216/{rep}.csv"));
        let t = std::fs::read_to_string(&p).unwrap();
        let mut n = 0;
        let t: String = t
            .lines()
            .map(|l| {
                if l.starts_with("\"0\"") && rep == 0 {
                    n += 1;
                    l.replace("reduce_sum<256>", "reduce_sum_once")
                } else {
                    l.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert!(rep > 0 || n == 1);
        std::fs::write(&p, t + "\n").unwrap();
    }
    update_from_recording(&rec, &store)
        .code(2)
        .stderr(predicate::str::contains("refusing to write"));
    assert!(
        !store.join("synthetic-gpu-no-hardware/vector_add.json").exists(),
        "nothing is written when one target is bad"
    );
}

/// Distinct repetitions stored per baseline entry, over every baseline file under `store`.
fn stored_reps(store: &Path) -> Vec<usize> {
    let mut out = Vec::new();
    let mut dirs = vec![store.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
                for entry in v["entries"].as_array().unwrap() {
                    let mut reps: Vec<u64> = entry["reps"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|r| r.as_u64().unwrap())
                        .collect();
                    reps.dedup();
                    out.push(reps.len());
                }
            }
        }
    }
    out
}

#[test]
fn baseline_update_stores_more_repetitions_than_a_check_takes() {
    // The example spec checks with 5 repetitions; a baseline stores up to 30 by default, and the
    // recording holds 10: replay stores the 10 it has and does not fail.
    let store = tempfile::tempdir().unwrap();
    update_from_recording(&root().join("examples/recordings/main"), store.path()).success();
    let reps = stored_reps(store.path());
    assert!(!reps.is_empty());
    assert!(reps.iter().all(|n| *n == 10), "{reps:?}");
    // `baseline_repetitions` is a spec setting: 7 stores 7.
    let dir = tempfile::tempdir().unwrap();
    let spec = std::fs::read_to_string(root().join("examples/cgp-gate.yaml"))
        .unwrap()
        .replace(
            "  max_repetitions: 10",
            "  max_repetitions: 10\n  baseline_repetitions: 7",
        );
    std::fs::write(dir.path().join("cgp-gate.yaml"), spec).unwrap();
    let store = tempfile::tempdir().unwrap();
    bin()
        .args(["baseline", "update", "--spec"])
        .arg(dir.path().join("cgp-gate.yaml"))
        .arg("--replay")
        .arg(root().join("examples/recordings/main"))
        .arg("--baselines")
        .arg(store.path())
        .assert()
        .success();
    let reps = stored_reps(store.path());
    assert!(!reps.is_empty() && reps.iter().all(|n| *n == 7), "{reps:?}");
}
