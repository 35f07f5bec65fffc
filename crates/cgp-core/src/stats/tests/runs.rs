//! Launches grouped in runs (processes): the run-level model decides, alpha spent over the
//! looks.

use super::*;

/// SYNTHETIC launches grouped in runs: `runs` processes of `launches` launches, within-run sd
/// `w`, between-run sd `b` (log scale), level `level` ns.
fn grouped_runs(seed: u64, runs: u32, launches: usize, level: f64, w: f64, b: f64) -> (Vec<f64>, Vec<u32>) {
    let mut rng = super::rng::Rng::new(seed);
    let mut v = Vec::new();
    let mut r = Vec::new();
    for run in 0..runs {
        let off = b * rng.normal();
        for _ in 0..launches {
            v.push(level * (off + w * rng.normal()).exp());
            r.push(run);
        }
    }
    (v, r)
}

fn judge_runs(b: &(Vec<f64>, Vec<u32>), c: &(Vec<f64>, Vec<u32>), t: &Threshold, cfg: &Config) -> Judgement {
    judge(
        &Comparison {
            key: "k".into(),
            baseline: Some(&b.0),
            candidate: &c.0,
            threshold: t,
            history: &[],
            baseline_runs: &b.1,
            candidate_runs: &c.1,
        },
        cfg,
    )
}

#[test]
fn one_process_of_30_launches_decides_a_clear_row_against_stored_runs() {
    // H100-like noise: within a run 0.5 %, between runs 0.2 %; 10 stored baseline runs.
    let t = rel(0.03, Direction::Lower);
    let cfg = Config::default();
    let base = grouped_runs(1, 10, 29, 100_000.0, 0.005, 0.002);
    let slow = grouped_runs(2, 1, 29, 110_000.0, 0.005, 0.002);
    let j = judge_runs(&base, &slow, &t, &cfg);
    assert_eq!(j.ruling.verdict, RowVerdict::Regression, "{}", j.ruling.reason);
    assert_eq!(j.ruling.method.as_str(), "run-level-t");
    assert_eq!(j.candidate.runs, Some(1));
    assert_eq!(j.candidate.n, 29);
    assert_eq!(j.baseline.as_ref().and_then(|b| b.runs), Some(10));
    assert!(
        j.ruling.reason.contains("10 baseline and 1 candidate runs"),
        "{}",
        j.ruling.reason
    );
    let same = grouped_runs(3, 1, 29, 100_000.0, 0.005, 0.002);
    let j = judge_runs(&base, &same, &t, &cfg);
    assert_eq!(j.ruling.verdict, RowVerdict::Pass, "{}", j.ruling.reason);
    // +1.5 % under a 3 % threshold: never a regression.
    let small = grouped_runs(4, 1, 29, 101_500.0, 0.005, 0.002);
    assert_ne!(
        judge_runs(&base, &small, &t, &cfg).ruling.verdict,
        RowVerdict::Regression
    );
}

#[test]
fn one_run_a_side_cannot_estimate_the_noise_between_runs() {
    let t = rel(0.03, Direction::Lower);
    let base = grouped_runs(5, 1, 29, 100_000.0, 0.005, 0.002);
    let cand = grouped_runs(6, 1, 29, 120_000.0, 0.005, 0.002);
    let j = judge_runs(&base, &cand, &t, &Config::default());
    assert_eq!(j.ruling.verdict, RowVerdict::Inconclusive);
    assert!(j.ruling.reason.contains("at least 2 runs"), "{}", j.ruling.reason);
}

#[test]
fn launches_are_not_counted_as_processes_when_runs_differ() {
    // SYNTHETIC, no change: between-run noise 1 %, within 0.1 %, 3 candidate runs of 30
    // launches against 10 stored runs, exact threshold (a test against no change).
    // The run-level model keeps false alarms near alpha = 0.01; the same launches taken as 390
    // independent processes (the rank test) call many rows a worsening (100 rows).
    let t = kind(ThresholdKind::Exact);
    let (mut nested, mut flat) = (0, 0);
    for seed in 0..100 {
        let base = grouped_runs(1000 + seed, 10, 30, 100_000.0, 0.001, 0.01);
        let cand = grouped_runs(5000 + seed, 3, 30, 100_000.0, 0.001, 0.01);
        if judge_runs(&base, &cand, &t, &Config::default()).ruling.verdict == RowVerdict::Regression {
            nested += 1;
        }
        let j = judge(
            &Comparison {
                key: "k".into(),
                baseline: Some(&base.0),
                candidate: &cand.0,
                threshold: &t,
                history: &[],
                baseline_runs: &[],
                candidate_runs: &[],
            },
            // No job drift assumed, as the run-level side has none to estimate.
            &Config {
                job_prior: NO_JOB_PRIOR,
                ..Config::default()
            },
        );
        if j.ruling.verdict == RowVerdict::Regression {
            flat += 1;
        }
    }
    assert!(nested <= 4, "run-level false alarms {nested} of 100");
    assert!(flat >= 30, "launch-level false alarms {flat} of 100");
}

#[test]
fn alpha_is_split_over_the_looks() {
    let t = rel(0.03, Direction::Lower);
    let base = grouped_runs(9, 10, 29, 100_000.0, 0.005, 0.002);
    let cand = grouped_runs(10, 1, 29, 104_200.0, 0.005, 0.002);
    let one = judge_runs(&base, &cand, &t, &Config::default());
    let p = one.ruling.estimate.p_adjusted().unwrap();
    // Choose alpha so that this row is a regression at one look and not at three.
    let cfg = Config {
        alpha: p * 2.0,
        ..Config::default()
    };
    assert_eq!(
        judge_runs(&base, &cand, &t, &cfg).ruling.verdict,
        RowVerdict::Regression
    );
    let three = Config { looks: 3, ..cfg };
    assert_ne!(
        judge_runs(&base, &cand, &t, &three).ruling.verdict,
        RowVerdict::Regression
    );
}
