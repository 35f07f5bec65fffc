//! The statistics of issue 35 on REAL H100 data (nothing here is synthetic):
//! - every row of `check --replay` on the real recordings (examples/recordings/h100 against
//!   examples/baselines-h100, tests/fixtures/h100-planted, tests/fixtures/h100-torch, the
//!   PyTorch example) and of `ab --replay` on the real PyTorch captures shows the interval its
//!   verdict followed from (docs/statistics.md 2.8): the rule `stats::verdict_of_interval` gives
//!   each run-level, paired and exact row's verdict from its `change_ci` and tolerance, and its
//!   reason shows that interval;
//! - `calibrate` on the real 54-process pool of unchanged code with one process planted +32 %
//!   (a preemption) reports the process and gives the advice of the other processes.

use std::path::Path;
use std::process::Command;

use cgp_gate::foundation::threshold::{Direction, ThresholdKind};
use cgp_gate::foundation::units::{Percent, percent};
use cgp_gate::outcome::results::{Results, Row, read as read_results};
use cgp_gate::stats::{Method, verdict::verdict_of_interval};

use crate::support;
use crate::support::{copy_dir, root};

fn bin() -> assert_cmd::Command {
    let mut c = support::bin();
    c.env("NO_COLOR", "1");
    c
}

/// `args` then `--json`: the results the command wrote.
fn results(args: &[&str], cwd: &Path) -> Results {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = bin()
        .current_dir(cwd)
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    read_results(&json).unwrap_or_else(|e| {
        panic!(
            "{args:?} wrote no results ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn interval_text(ci: [f64; 2]) -> String {
    format!(
        "[{}, {}]",
        percent(ci[0], Percent::Signed2),
        percent(ci[1], Percent::Signed2)
    )
}

/// How a row disagrees with the rule, if it does. Rows the rule covers: the run-level model,
/// `ab`'s paired t (without `min_effect`) and exact comparisons.
fn disagreement(row: &Row) -> Option<String> {
    let th = row.threshold.as_ref()?;
    let direction = row.direction.unwrap_or(Direction::Lower);
    let exact = matches!(th.kind, ThresholdKind::Exact);
    let tolerance = th.tolerance?;
    match row.method {
        Method::RunLevelT | Method::PairedT if th.min_effect.is_none() => {
            let Some(ci) = row.estimate.change_ci else {
                return Some(format!("{}: no interval", row.key()));
            };
            let want = verdict_of_interval(ci, tolerance, direction, exact);
            let conf = row.estimate.confidence.unwrap_or(0.0);
            if want != row.verdict() || conf < 0.95 - 1e-12 || !row.reason.contains(&interval_text(ci)) {
                return Some(format!(
                    "{}: {:?} but the {conf} interval {ci:?} against {tolerance} gives {want:?}; reason: {}",
                    row.key(),
                    row.verdict(),
                    row.reason
                ));
            }
            None
        }
        Method::Exact => {
            let c = row.estimate.change?;
            let want = verdict_of_interval([c, c], tolerance, direction, false);
            (want != row.verdict()).then(|| {
                format!(
                    "{}: exact {:?}, change {c} gives {want:?}",
                    row.key(),
                    row.verdict()
                )
            })
        }
        _ => None,
    }
}

/// Every row of `r` follows the rule; returns how many rows it covered.
fn all_follow(what: &str, r: &Results) -> usize {
    let bad: Vec<String> = r.rows.iter().filter_map(disagreement).collect();
    assert!(bad.is_empty(), "{what}:\n{}", bad.join("\n"));
    r.rows
        .iter()
        .filter(|x| matches!(x.method, Method::RunLevelT | Method::PairedT | Method::Exact))
        .count()
}

#[test]
fn every_verdict_of_the_real_replays_follows_from_the_interval_it_shows() {
    let cwd = root();
    let mut covered = 0;
    let mut verdicts = std::collections::BTreeSet::new();
    let checks: [(&str, &str, &str); 8] = [
        (
            "examples/recordings/h100/check.yaml",
            "examples/recordings/h100/aa-live",
            "examples/baselines-h100",
        ),
        (
            "examples/recordings/h100/check.yaml",
            "examples/recordings/h100/badlaunch",
            "examples/baselines-h100",
        ),
        (
            "examples/recordings/h100/check.yaml",
            "examples/recordings/h100/baseline",
            "examples/baselines-h100",
        ),
        (
            "tests/fixtures/h100-planted/check.yaml",
            "tests/fixtures/h100-planted/extra3",
            "tests/fixtures/h100-planted/baselines",
        ),
        (
            "tests/fixtures/h100-planted/check.yaml",
            "tests/fixtures/h100-planted/extra10",
            "tests/fixtures/h100-planted/baselines",
        ),
        (
            "tests/fixtures/h100-planted/check.yaml",
            "tests/fixtures/h100-planted/badlaunch",
            "tests/fixtures/h100-planted/baselines",
        ),
        (
            "tests/fixtures/h100-torch/spec.yaml",
            "tests/fixtures/h100-torch/rec",
            "tests/fixtures/h100-torch/baselines",
        ),
        (
            "examples/pytorch/cgp-gate.yaml",
            "examples/pytorch/recording",
            "examples/pytorch/baselines",
        ),
    ];
    for (spec, rec, base) in checks {
        let r = results(
            &[
                "check",
                "--color",
                "never",
                "--spec",
                spec,
                "--replay",
                rec,
                "--baselines",
                base,
            ],
            &cwd,
        );
        covered += all_follow(rec, &r);
        verdicts.extend(
            r.rows
                .iter()
                .filter(|x| x.method == Method::RunLevelT)
                .map(|x| x.verdict()),
        );
    }
    // `ab`: the real PyTorch captures of the example (base) against those of the fixture (head).
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&cwd.join("examples/pytorch/recording"), &dir.path().join("base"));
    copy_dir(
        &cwd.join("tests/fixtures/h100-torch/rec"),
        &dir.path().join("head"),
    );
    let spec = cwd.join("examples/pytorch/cgp-gate.yaml");
    let r = results(
        &[
            "ab",
            "--color",
            "never",
            "--spec",
            spec.to_str().unwrap(),
            "--replay",
            dir.path().to_str().unwrap(),
        ],
        &cwd,
    );
    let paired = r.rows.iter().filter(|x| x.method == Method::PairedT).count();
    covered += all_follow("ab on the PyTorch captures", &r);
    assert!(
        paired > 0,
        "ab judged no paired row: {:?}",
        r.rows.iter().map(|x| &x.reason).collect::<Vec<_>>()
    );
    // The replays hold passes, regressions and inconclusive rows of the model: the rule was
    // checked on each kind.
    assert!(covered > 30, "{covered} rows");
    assert!(verdicts.len() >= 2, "{verdicts:?}");
}

/// A row the rule does not give is caught: the check above can fail.
#[test]
fn a_verdict_that_disagrees_with_its_interval_is_caught() {
    let r = results(
        &[
            "check",
            "--color",
            "never",
            "--spec",
            "examples/recordings/h100/check.yaml",
            "--replay",
            "examples/recordings/h100/aa-live",
            "--baselines",
            "examples/baselines-h100",
        ],
        &root(),
    );
    let mut row = r
        .rows
        .iter()
        .find(|x| x.method == Method::RunLevelT)
        .cloned()
        .expect("a run-level row");
    assert!(disagreement(&row).is_none());
    row.set_verdict(cgp_gate::outcome::results::RowVerdict::Regression);
    assert!(
        disagreement(&row).is_some(),
        "a planted regression on a passing interval"
    );
}

/// The durations of `metric` in one real ncu CSV, launch by launch.
fn durations(csv: &Path) -> Vec<f64> {
    let text = std::fs::read_to_string(csv).unwrap();
    let parsed = cgp_gate::ncu::parse::parse(&text).unwrap();
    parsed
        .launches
        .iter()
        .filter_map(
            |l| match l.metrics.get("gpu__time_duration.sum").map(|m| &m.value) {
                Some(cgp_gate::measured::samples::MetricValue::Number(v)) => Some(*v),
                _ => None,
            },
        )
        .collect()
}

#[test]
fn calibrate_leaves_out_one_preempted_process_of_a_real_pool() {
    let test = "calibrate_leaves_out_one_preempted_process_of_a_real_pool";
    let dir = tempfile::tempdir().unwrap();
    let archive = root().join("tests/fixtures/h100-2026-11-24/validation-aa.tar.gz");
    match Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(dir.path())
        .output()
    {
        Ok(o) => assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr)),
        Err(_) => return support::skip(test, "tar is not installed"),
    }
    let pool = dir.path().join("rec/plain-pool/matmul/n=1024");
    let spec = cgp_gate::spec::load_str(
        "version: 1\ntargets:\n  - name: matmul\n    command: [./m]\n    repetitions: 1\n    max_repetitions: 3\n    baseline_repetitions: 10\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n",
        Path::new("cgp-gate.yaml"),
    )
    .unwrap();
    let key = cgp_gate::measured::samples::SeriesKey {
        target: "matmul".into(),
        size: "n=1024".into(),
        kernel: "matmul_tiled".into(),
        metric: "gpu__time_duration.sum".into(),
    };
    // The first 30 processes of the pool (3 launches each, the warm-up dropped); `planted`:
    // process 12 ran 32 % slow throughout.
    let calibrate = |planted: bool| {
        let mut set = cgp_gate::measured::samples::SampleSet::default();
        for rep in 0..30u32 {
            for v in durations(&pool.join(format!("{rep}.csv"))) {
                let v = if planted && rep == 12 { v * 1.32 } else { v };
                set.push(&key, "ns", v, rep);
            }
        }
        cgp_gate::measured::samples::drop_warmup(&mut set, 1);
        let targets: Vec<&cgp_gate::spec::Target> = spec.targets.iter().collect();
        cgp_gate::history::calibrate::calibrate(
            &targets,
            &set,
            &spec.settings,
            "replay",
            false,
            &cgp_gate::history::calibrate::Options::default(),
        )
        .rows
        .remove(0)
    };
    let (clean, planted) = (calibrate(false), calibrate(true));
    let (b0, b1) = (clean.between_cv.unwrap(), planted.between_cv.unwrap());
    assert!((b1 - b0).abs() < 0.001, "between {b0} clean, {b1} planted");
    assert!(b1 < 0.01, "{b1}");
    assert_eq!(clean.suggested_threshold, planted.suggested_threshold);
    assert_eq!(clean.processes_needed, planted.processes_needed);
    assert!(!clean.note.contains("disturbed"), "{}", clean.note);
    // The process is named with its level against the median process (+32 % of its own level,
    // about +31 % of the median's).
    let named = planted
        .note
        .split("as disturbed (+")
        .nth(1)
        .and_then(|t| t.split('%').next())
        .and_then(|x| x.parse::<f64>().ok());
    assert!(planted.note.contains("1 of 30 runs left out"), "{}", planted.note);
    assert!(
        named.is_some_and(|x| (29.0..35.0).contains(&x)),
        "{}",
        planted.note
    );
}
