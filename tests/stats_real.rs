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

use cgp_core::foundation::threshold::{Direction, ThresholdKind};
use cgp_core::foundation::units::{Percent, percent};
use cgp_core::stats::{
    Method,
    verdict::{verdict_of_interval, verdict_of_limit},
};
use cgp_outcome::outcome::results::{Results, Row, read as read_results};

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

/// The sentence of a rank-test row whose samples give no interval that reaches the tolerance
/// at any level (the p-value floor of few samples, docs/statistics.md 2.8): the one exception.
const NO_INTERVAL_REACHES: &str = "no interval these samples give reaches it";

/// How a row disagrees with the rule, if it does. Rows the rule covers: the run-level model,
/// the rank test (`mann-whitney+...`), `ab`'s paired t (without `min_effect`), exact comparisons
/// and `min:`/`max:` limits (their median interval against the limit).
fn disagreement(row: &Row) -> Option<String> {
    let th = row.rule.threshold.as_ref()?;
    let direction = row.rule.direction.unwrap_or(Direction::Lower);
    let exact = matches!(th.kind, ThresholdKind::Exact);
    let shift_row = match row.method {
        Method::RunLevelT | Method::MannWhitneyHodgesLehmann | Method::MannWhitneyBootstrap => true,
        Method::PairedT => th.min_effect.is_none(),
        _ => false,
    };
    if shift_row {
        let tolerance = th.tolerance()?;
        let Some(ci) = row.estimate().change_ci() else {
            return Some(format!("{}: no interval", row.key()));
        };
        if row.reason.contains(NO_INTERVAL_REACHES) {
            return None;
        }
        let want = verdict_of_interval(ci, tolerance, direction, exact);
        let conf = row.estimate().confidence.unwrap_or(0.0);
        if want != row.verdict() || conf < 0.95 - 1e-12 || !row.reason.contains(&interval_text(ci)) {
            return Some(format!(
                "{}: {:?} but the {conf} interval {ci:?} against {tolerance} gives {want:?}; reason: {}",
                row.key(),
                row.verdict(),
                row.reason
            ));
        }
        return None;
    }
    match row.method {
        Method::Exact => {
            let c = row.estimate().change()?;
            let tolerance = th.tolerance()?;
            let want = verdict_of_interval([c, c], tolerance, direction, false);
            (want != row.verdict()).then(|| {
                format!(
                    "{}: exact {:?}, change {c} gives {want:?}",
                    row.key(),
                    row.verdict()
                )
            })
        }
        Method::SignTestMedianCi => {
            let (Some(ci), Some(limit)) = (row.estimate().median_ci(), th.limit()) else {
                return Some(format!(
                    "{}: a limit row without its interval or limit",
                    row.key()
                ));
            };
            if row.reason.contains(NO_INTERVAL_REACHES) {
                return None;
            }
            let is_max = matches!(th.kind, ThresholdKind::Max { .. });
            let want = verdict_of_limit(ci, limit, is_max);
            let conf = row.estimate().confidence.unwrap_or(0.0);
            // The full range of too few samples may cover less than the configured level.
            (want != row.verdict()).then(|| {
                format!(
                    "{}: {:?} but the {conf} median interval {ci:?} against the limit {limit} gives {want:?}; reason: {}",
                    row.key(),
                    row.verdict(),
                    row.reason
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
        .filter(|x| {
            matches!(
                x.method,
                Method::RunLevelT
                    | Method::PairedT
                    | Method::Exact
                    | Method::MannWhitneyHodgesLehmann
                    | Method::SignTestMedianCi
            )
        })
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
    row.set_verdict(cgp_outcome::outcome::results::RowVerdict::Regression);
    assert!(
        disagreement(&row).is_some(),
        "a planted regression on a passing interval"
    );
}

/// The durations of `metric` in one real ncu CSV, launch by launch.
fn durations(csv: &Path) -> Vec<f64> {
    let text = std::fs::read_to_string(csv).unwrap();
    let parsed = cgp_read::ncu_output::parse::parse(&text).unwrap();
    parsed
        .launches
        .iter()
        .filter_map(
            |l| match l.metrics.get("gpu__time_duration.sum").map(|m| &m.value) {
                Some(cgp_core::measured::samples::MetricValue::Number(v)) => Some(*v),
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
    let spec = cgp_spec::spec::load_str(
        "version: 1\ntargets:\n  - name: matmul\n    command: [./m]\n    repetitions: 1\n    max_repetitions: 3\n    baseline_repetitions: 10\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n",
        Path::new("cgp-gate.yaml"),
    )
    .unwrap();
    let key = cgp_core::measured::samples::SeriesKey {
        target: "matmul".into(),
        size: "n=1024".into(),
        kernel: "matmul_tiled".into(),
        metric: "gpu__time_duration.sum".into(),
    };
    // The first 30 processes of the pool (3 launches each, the warm-up dropped); `planted`:
    // process 12 ran 32 % slow throughout.
    let calibrate = |planted: bool| {
        let mut set = cgp_core::measured::samples::SampleSet::default();
        for rep in 0..30u32 {
            for v in durations(&pool.join(format!("{rep}.csv"))) {
                let v = if planted && rep == 12 { v * 1.32 } else { v };
                set.push(&key, "ns", v, rep);
            }
        }
        cgp_core::measured::samples::drop_warmup(&mut set, 1);
        let targets: Vec<&cgp_spec::spec::Target> = spec.targets.iter().collect();
        cgp_outcome::history::calibrate(
            &targets,
            &set,
            &spec.settings,
            "replay",
            false,
            &cgp_outcome::history::CalibrateOptions::default(),
        )
        .rows
        .remove(0)
    };
    let (clean, planted) = (calibrate(false), calibrate(true));
    let (n0, n1) = (clean.noise.unwrap(), planted.noise.unwrap());
    let (b0, b1) = (n0.between_cv, n1.between_cv);
    assert!((b1 - b0).abs() < 0.001, "between {b0} clean, {b1} planted");
    assert!(b1 < 0.01, "{b1}");
    assert_eq!(
        clean.reach.unwrap().suggested_threshold,
        planted.reach.unwrap().suggested_threshold
    );
    assert_eq!(n0.processes_needed, n1.processes_needed);
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

/// Does a judgement follow from the interval it shows (docs/statistics.md 2.8)? `None`: it does.
fn judgement_disagrees(
    j: &cgp_core::stats::Judgement,
    th: &cgp_core::foundation::threshold::Threshold,
) -> Option<String> {
    match j.ruling.method {
        // Few processes, one value each, are judged by the t test of their logs (issue 57).
        Method::MannWhitneyHodgesLehmann | Method::MannWhitneyBootstrap | Method::RunLevelT => {
            let (ci, tol) = (j.ruling.estimate.change_ci()?, j.bound?.tolerance()?);
            if j.ruling.reason.contains(NO_INTERVAL_REACHES) {
                return None;
            }
            let exact = matches!(th.kind, ThresholdKind::Exact);
            let mut want = verdict_of_interval(ci, tol, th.direction, exact);
            // A pass with something of the candidate's left out needs the processes' means with
            // nothing left out to pass too (issue 57).
            if want == cgp_core::stats::RowVerdict::Pass
                && j.ruling
                    .reason
                    .contains("but not with what was left out as outliers put back")
            {
                want = cgp_core::stats::RowVerdict::Inconclusive;
            }
            let shown = j.ruling.reason.contains(&interval_text(ci));
            (want != j.ruling.verdict || j.ruling.confidence() < 0.95 - 1e-12 || !shown).then(|| {
                format!(
                    "{:?} but the {} interval {ci:?} against {tol} gives {want:?}: {}",
                    j.ruling.verdict,
                    j.ruling.confidence(),
                    j.ruling.reason
                )
            })
        }
        Method::SignTestMedianCi => {
            let (ci, limit) = (j.ruling.estimate.median_ci()?, j.bound?.limit()?);
            if j.ruling.reason.contains(NO_INTERVAL_REACHES) {
                return None;
            }
            let is_max = matches!(th.kind, ThresholdKind::Max { .. });
            let want = verdict_of_limit(ci, limit, is_max);
            (want != j.ruling.verdict).then(|| {
                format!(
                    "{:?} but the {} median interval {ci:?} against {limit} gives {want:?}: {}",
                    j.ruling.verdict,
                    j.ruling.confidence(),
                    j.ruling.reason
                )
            })
        }
        _ => None,
    }
}

/// Rank-test rows (one sample per process: each process's median launch after the warm-up),
/// with and without `min_effect`, and `min:`/`max:` rows, judged on the REAL planted pools of the
/// H100 (validation-planted: the plain build's 10 baseline processes against the first 3, 5, 8
/// and 14 processes of the +1.6-2 %, +4 % and +8-11 % builds), one Holm family per check, at the
/// first and the last of 3 planned looks: every verdict follows from the interval it shows, at
/// the level its decision used. A planted flip of a verdict is caught.
#[test]
fn rank_and_limit_rows_of_real_pools_follow_from_the_interval_they_show() {
    use cgp_core::foundation::threshold::{Threshold, ThresholdKind};
    use cgp_core::foundation::units::Quantity;
    use cgp_core::stats::spending::LookAt;
    use cgp_core::stats::{Comparison, Config, RowVerdict, judge_all_at, median};
    let test = "rank_and_limit_rows_of_real_pools_follow_from_the_interval_they_show";
    let dir = tempfile::tempdir().unwrap();
    let archive = root().join("tests/fixtures/h100-2026-11-24/validation-planted.tar.gz");
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
    // Each process's median launch, the warm-up (launch 0) left out.
    let pool = |part: &str, target: &str, size: &str, n: usize| -> Vec<f64> {
        (0..n)
            .map_while(|rep| {
                let f = dir.path().join(format!("rec/{part}/{target}/{size}/{rep}.csv"));
                f.is_file().then(|| median(&durations(&f)[1..]).unwrap())
            })
            .collect()
    };
    let rel = |fraction: f64, min_effect: Option<f64>| Threshold {
        kind: ThresholdKind::Relative { fraction },
        direction: Direction::Lower,
        min_effect: min_effect.map(|value| Quantity {
            value,
            unit: "ns".into(),
        }),
    };
    let limit = |kind: ThresholdKind| Threshold {
        kind,
        direction: Direction::Lower,
        min_effect: None,
    };
    let mut kinds = std::collections::BTreeSet::new();
    let (mut covered, mut bad, mut exceptions) = (0usize, Vec::new(), 0usize);
    for (target, size) in [
        ("matmul", "n=1024"),
        ("reduce", "n=16777216"),
        ("vector_add", "n=16777216"),
    ] {
        let base = pool("baseline", target, size, 10);
        assert_eq!(base.len(), 10, "{target}");
        let m = median(&base).unwrap();
        let thresholds = [
            rel(0.03, None),
            rel(0.03, Some(0.05 * m)),
            limit(ThresholdKind::Max { value: 1.05 * m }),
            limit(ThresholdKind::Min { value: 0.99 * m }),
        ];
        for build in ["extra1-pool", "extra3-pool", "extra10-pool"] {
            let all = pool(build, target, size, 20);
            for k in [3usize, 5, 8, 14] {
                let cand = &all[..k.min(all.len())];
                let rows: Vec<Comparison<'_>> = thresholds
                    .iter()
                    .map(|th| Comparison {
                        key: format!("{target}/{build}"),
                        baseline: Some(&base),
                        candidate: cand,
                        threshold: th,
                        history: &[],
                        baseline_runs: &[],
                        candidate_runs: &[],
                    })
                    .collect();
                for done in [1u32, 3] {
                    let at = vec![
                        LookAt {
                            repetitions: 1,
                            max_repetitions: 3,
                            done,
                        };
                        rows.len()
                    ];
                    for (j, th) in judge_all_at(&rows, &Config::default(), &at)
                        .iter()
                        .zip(&thresholds)
                    {
                        assert!(
                            matches!(
                                j.ruling.method,
                                Method::MannWhitneyHodgesLehmann
                                    | Method::SignTestMedianCi
                                    | Method::RunLevelT
                            ),
                            "{:?}: {}",
                            j.ruling.method,
                            j.ruling.reason
                        );
                        covered += 1;
                        kinds.insert((j.ruling.method.as_str().to_owned(), j.ruling.verdict));
                        if let Some(why) = judgement_disagrees(j, th) {
                            bad.push(format!(
                                "{target} {build} {k} processes, look {done}, {th}: {why}"
                            ));
                        }
                        // The check can fail: a flipped verdict disagrees with its interval
                        // (outside the one exception, where no interval reaches the tolerance).
                        if j.ruling.reason.contains(NO_INTERVAL_REACHES) {
                            exceptions += 1;
                            // Only few samples hit the p-value floor.
                            assert!(k < 14, "{k} processes: {}", j.ruling.reason);
                            continue;
                        }
                        let mut flipped = j.clone();
                        flipped.ruling.verdict = if j.ruling.verdict == RowVerdict::Regression {
                            RowVerdict::Pass
                        } else {
                            RowVerdict::Regression
                        };
                        assert!(judgement_disagrees(&flipped, th).is_some(), "{}", j.ruling.reason);
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(covered >= 200, "{covered}");
    // The exception (3 to 8 processes: the smallest p-value of the sign test, 2^-n, or of the
    // U test may stay above Holm's level at its look)
    // stays a minority of the rows.
    assert!(exceptions * 5 < covered, "{exceptions} of {covered}");
    // Regressions, passes and inconclusive rows of every kind were checked: the rank test (14
    // processes), the t test of the processes' logs (3 to 8: the rank test's floor is too close to
    // the level, issue 57) and the limit rows.
    for (method, verdict) in [
        ("mann-whitney+hodges-lehmann", RowVerdict::Regression),
        ("mann-whitney+hodges-lehmann", RowVerdict::Pass),
        ("run-level-t", RowVerdict::Regression),
        ("run-level-t", RowVerdict::Pass),
        ("run-level-t", RowVerdict::Inconclusive),
        ("sign-test+median-ci", RowVerdict::Regression),
        ("sign-test+median-ci", RowVerdict::Pass),
    ] {
        assert!(
            kinds.contains(&(method.to_owned(), verdict)),
            "{method} {verdict:?}: {kinds:?}"
        );
    }
}
