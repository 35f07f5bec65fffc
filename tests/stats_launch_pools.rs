//! Issue 43 on the REAL 30-launch H100 pools (tests/fixtures/h100-30launch-pools), through the
//! binary: a slowdown that hits a share of the launches is a regression, never a pass, and what
//! a row leaves out is the machine's only when the baseline has as many.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{self, bin, root};

const TIME: &str = "gpu__time_duration.sum";

/// The pools extracted into a temporary folder, with `base.yaml` (10 processes) and
/// `check.yaml` (1 then up to 3) made from the archive's spec, and the baseline stored in `B`.
pub(crate) fn pools(test: &str) -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().unwrap();
    let archive = root().join("tests/fixtures/h100-30launch-pools/h100-30launch-pools.tar.gz");
    match std::process::Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(dir.path())
        .output()
    {
        Ok(o) => assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr)),
        Err(_) => {
            support::skip(test, "tar is not installed");
            return None;
        }
    }
    let spec = std::fs::read_to_string(dir.path().join("spec.yaml"))
        .unwrap()
        .replace("regex:^matmul_tiled", "regex:matmul_tiled");
    let with = |reps: u32, max: u32| {
        spec.replace("  repetitions: 3\n", &format!("  repetitions: {reps}\n"))
            .replace("  max_repetitions: 6\n", &format!("  max_repetitions: {max}\n"))
    };
    std::fs::write(dir.path().join("base.yaml"), with(10, 10)).unwrap();
    std::fs::write(dir.path().join("check.yaml"), with(1, 3)).unwrap();
    // The planted pools were recorded in the baseline's job (the pools' README names only
    // `aa-pool` as another job): no drift between jobs assumed for them.
    let same_job = with(1, 3).replacen("version: 1\n", "version: 1\nsettings:\n  job_spread: \"0%\"\n", 1);
    assert!(
        same_job.contains("job_spread"),
        "the archive's spec has no `version: 1` line"
    );
    std::fs::write(dir.path().join("check-same-job.yaml"), same_job).unwrap();
    let out = bin()
        .current_dir(dir.path())
        .args([
            "baseline",
            "update",
            "--spec",
            "base.yaml",
            "--replay",
            "rec/baseline",
            "--baselines",
            "B",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    Some(dir)
}

/// Multiply the duration of every `every`-th launch after the warm-up (launches 1, 1 + every,
/// ...) by `factor` in each ncu CSV of the recording `rec`.
pub(crate) fn plant(rec: &Path, every: usize, factor: f64) {
    for target in std::fs::read_dir(rec)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
    {
        for size in std::fs::read_dir(target.path()).unwrap().flatten() {
            for csv in std::fs::read_dir(size.path()).unwrap().flatten() {
                slow_launches(&csv.path(), every, factor);
            }
        }
    }
}

/// Multiply the duration of launches 1, 1 + every, ... (after the warm-up) of one raw-page CSV.
pub(crate) fn slow_launches(file: &Path, every: usize, factor: f64) {
    crate::reliability_samples::map_cells(file, TIME, |launch, cell| {
        (launch >= 1 && (launch - 1) % every == 0).then(|| {
            let v: f64 = cell.parse().unwrap();
            format!("{}", (v * factor).round())
        })
    });
}

pub(crate) fn check(dir: &Path, rec: &str) -> (i32, Value, String) {
    check_with(dir, "check.yaml", rec)
}

pub(crate) fn check_with(dir: &Path, spec: &str, rec: &str) -> (i32, Value, String) {
    let json = dir.join(format!("{spec}-{rec}.json").replace('/', "_"));
    let out = bin()
        .current_dir(dir)
        .args([
            "check",
            "--color",
            "never",
            "--spec",
            spec,
            "--baselines",
            "B",
            "--replay",
            rec,
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let v = serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{e}: {text}")))
        .unwrap();
    (out.status.code().unwrap(), v, text)
}

pub(crate) fn time_rows(v: &Value) -> Vec<&Value> {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"] == TIME)
        .collect()
}

#[test]
fn a_slowdown_of_every_fourth_launch_is_a_regression_and_says_why() {
    let Some(dir) = pools("a_slowdown_of_every_fourth_launch_is_a_regression_and_says_why") else {
        return;
    };
    // Unchanged code from another job: no time row is a regression.
    let (code, v, text) = check(dir.path(), "rec/aa-pool");
    assert_ne!(code, 1, "{text}");
    assert!(
        time_rows(&v).iter().all(|r| r["verdict"] != "regression"),
        "{text}"
    );
    // 8 of the 29 launches after the warm-up of every process at 2x: the mean is +27.6 %.
    // The old fences left them all out (half a process may go) and passed the rows at +0 %.
    let planted = dir.path().join("planted");
    copy(&dir.path().join("rec/aa-pool"), &planted);
    plant(&planted, 4, 2.0);
    let (code, v, text) = check(dir.path(), "planted");
    assert_eq!(code, 1, "{text}");
    let rows = time_rows(&v);
    assert_eq!(rows.len(), 3, "{text}");
    for r in rows {
        assert_eq!(r["verdict"], "regression", "{r}");
        assert!(r["change"].as_f64().unwrap() > 0.15, "{r}");
        // Kept as the code's: the baseline has no such launches, the candidate 8 of 29 a process
        // (and the odd slow-side dip).
        let kept = &r["left_out"]["kept_as_code"];
        let runs = r["candidate"]["runs"].as_u64().unwrap();
        assert!(kept["launches"].as_u64().unwrap() >= 8 * runs, "{r}");
        assert!(kept["p"].as_f64().unwrap() < 1e-4, "{r}");
        assert_eq!(r["left_out"]["launches"], serde_json::json!([0, 0]), "{r}");
        assert!(
            r["reason"].as_str().unwrap().contains("kept as the code's"),
            "{r}"
        );
    }
    // The console says it too, for each row.
    let said = |l: &&str| l.starts_with("left out ") && l.contains(TIME) && l.contains("kept as the code's");
    assert_eq!(text.lines().filter(said).count(), 3, "{text}");
}

#[test]
fn one_slow_launch_of_a_process_is_the_machine_and_is_named() {
    let Some(dir) = pools("one_slow_launch_of_a_process_is_the_machine_and_is_named") else {
        return;
    };
    // One launch at 2x in the first process (a preemption): left out as the machine's, named.
    let one = dir.path().join("one");
    copy(&dir.path().join("rec/aa-pool"), &one);
    for t in ["matmul/n=1024", "vector_add/n=16777216", "reduce/n=16777216"] {
        slow_launches(&one.join(t).join("0.csv"), 100, 2.0);
    }
    let (_, v, text) = check(dir.path(), "one");
    for r in time_rows(&v) {
        assert_ne!(r["verdict"], "regression", "{r}");
        // The baseline's own slow-side dips are left out alike; the candidate's far launch is
        // one of its launches left out.
        assert!(r["left_out"]["launches"][1].as_u64().unwrap() >= 1, "{r}");
        assert!(r["left_out"]["kept_as_code"].is_null(), "{r}");
        assert!(
            r["reason"]
                .as_str()
                .unwrap()
                .contains("far launches left out: candidate repetition 0"),
            "{r}: {text}"
        );
    }
}

/// Copy a recording folder (two levels of target and size folders and the manifest).
pub(crate) fn copy(from: &Path, to: &Path) {
    for e in walk(from) {
        let rel = e.strip_prefix(from).unwrap();
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&e, &dest).unwrap();
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn the_real_pools_keep_their_verdicts_against_a_baseline_of_another_job() {
    let Some(dir) = pools("the_real_pools_keep_their_verdicts_against_a_baseline_of_another_job") else {
        return;
    };
    // The first 1 to 3 processes of each pool, the default job spread prior (0.3 %).
    for (pool, ok) in [
        ("aa-pool", &["pass"][..]),
        ("extra1-pool", &["pass", "inconclusive"][..]),
        // +3.5 to +4 % against a 3 % threshold and a baseline from another job: undecidable
        // (docs/statistics.md 2.3), and never a pass.
        ("extra3-pool", &["inconclusive", "regression"][..]),
        ("extra10-pool", &["regression"][..]),
    ] {
        let (_, v, text) = check(dir.path(), &format!("rec/{pool}"));
        let rows = time_rows(&v);
        assert_eq!(rows.len(), 3, "{pool}: {text}");
        for r in rows {
            let verdict = r["verdict"].as_str().unwrap();
            assert!(ok.contains(&verdict), "{pool}: {r}");
        }
    }
}

#[test]
fn the_planted_pools_of_the_baselines_job_decide_three_percent() {
    let Some(dir) = pools("the_planted_pools_of_the_baselines_job_decide_three_percent") else {
        return;
    };
    // With the baseline's job taken as the check's (`job_spread: "0%"`), 30 launches a process
    // decide what 3 did not (docs/statistics.md 6.4, 6.5): +3.7 % vector_add is a regression;
    // reduce's +4.0 % (a regression in every check of the three time rows alone, 6.5) and
    // matmul's +3.6 % over a two-mode baseline may stay inconclusive in this spec's family of
    // nine tests, and neither passes.
    let verdict = |v: &Value, t: &str| -> String {
        time_rows(v)
            .into_iter()
            .find(|r| r["target"] == t)
            .map(|r| r["verdict"].as_str().unwrap().to_owned())
            .unwrap()
    };
    let (_, v, text) = check_with(dir.path(), "check-same-job.yaml", "rec/extra3-pool");
    assert_eq!(verdict(&v, "vector_add"), "regression", "{text}");
    assert_ne!(verdict(&v, "reduce"), "pass", "{text}");
    assert_ne!(verdict(&v, "matmul"), "pass", "{text}");
    let (_, v, text) = check_with(dir.path(), "check-same-job.yaml", "rec/extra1-pool");
    assert!(
        time_rows(&v).iter().all(|r| r["verdict"] != "regression"),
        "{text}"
    );
}
