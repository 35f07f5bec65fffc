//! Behaviour of the verdict on realistic rows; its invariants as property tests are in
//! `properties`, launches grouped in runs in `runs`.

use super::RowVerdict;
use super::*;
use crate::foundation::threshold::{Direction, Threshold, ThresholdKind};
use crate::foundation::units::Quantity;

fn rel(fraction: f64, direction: Direction) -> Threshold {
    Threshold {
        kind: ThresholdKind::Relative { fraction },
        direction,
        min_effect: None,
    }
}

fn kind(kind: ThresholdKind) -> Threshold {
    Threshold {
        kind,
        direction: Direction::Lower,
        min_effect: None,
    }
}

/// Ten durations (ns) of a ~406 us kernel with ~0.5 % spread, scaled by `factor`.
fn durations(factor: f64) -> Vec<f64> {
    [
        406_240.0, 408_100.0, 404_880.0, 406_510.0, 407_020.0, 405_330.0, 404_990.0, 407_700.0, 406_700.0,
        405_150.0,
    ]
    .iter()
    .map(|x| x * factor)
    .collect()
}

/// Another draw of the same kernel (different noise), so the two sides are not the same numbers.
fn durations_b(factor: f64) -> Vec<f64> {
    [
        405_910.0, 407_480.0, 406_020.0, 404_700.0, 408_330.0, 406_090.0, 405_620.0, 406_880.0, 405_270.0,
        407_150.0,
    ]
    .iter()
    .map(|x| x * factor)
    .collect()
}

fn one(baseline: Option<&[f64]>, candidate: &[f64], t: &Threshold) -> Judgement {
    judge(
        &Comparison {
            key: "gemm/n=4096/gemm_kernel/gpu__time_duration.sum".into(),
            baseline,
            candidate,
            threshold: t,
            history: &[],
            baseline_runs: &[],
            candidate_runs: &[],
        },
        &Config::default(),
    )
}

#[test]
fn clear_slowdown_is_a_regression() {
    let t = rel(0.03, Direction::Lower);
    let (b, c) = (durations(1.0), durations_b(1.08));
    let j = one(Some(&b), &c, &t);
    assert_eq!(j.ruling.verdict, RowVerdict::Regression, "{}", j.ruling.reason);
    assert_eq!(j.ruling.method.as_str(), "mann-whitney+hodges-lehmann");
    let ch = j.ruling.estimate.change().unwrap();
    assert!((ch - 0.08).abs() < 0.005, "change {ch}");
    let [lo, hi] = j.ruling.estimate.change_ci().unwrap();
    assert!(lo > 0.06 && hi < 0.10 && lo < ch && ch < hi);
    // Complete separation of 10 v 10: the exact one-sided p is 1 / C(20, 10).
    assert!((j.ruling.estimate.p().unwrap() - 1.0 / 184_756.0).abs() < 1e-12);
    assert_eq!(
        j.ruling.estimate.p(),
        j.ruling.estimate.p_adjusted(),
        "a family of one is not adjusted"
    );
    assert!(j.ruling.reason.contains("+8."), "{}", j.ruling.reason);
}

#[test]
fn same_kernel_measured_twice_passes() {
    let t = rel(0.03, Direction::Lower);
    let j = one(Some(&durations(1.0)), &durations_b(1.0), &t);
    assert_eq!(j.ruling.verdict, RowVerdict::Pass, "{}", j.ruling.reason);
    let [lo, hi] = j.ruling.estimate.change_ci().unwrap();
    assert!(lo < 0.0 && hi > 0.0 && hi < 0.03);
}

#[test]
fn speedup_is_an_improvement_and_direction_matters() {
    let (b, c) = (durations(1.0), durations_b(0.9));
    assert_eq!(
        one(Some(&b), &c, &rel(0.03, Direction::Lower)).ruling.verdict,
        RowVerdict::Improvement
    );
    // The same numbers as a throughput: lower is now worse.
    let j = one(Some(&b), &c, &rel(0.03, Direction::Higher));
    assert_eq!(j.ruling.verdict, RowVerdict::Regression, "{}", j.ruling.reason);
}

#[test]
fn change_under_the_threshold_is_never_a_regression() {
    // A real 1.5 % slowdown, clearly significant, with a 3 % threshold.
    let t = rel(0.03, Direction::Lower);
    let j = one(Some(&durations(1.0)), &durations_b(1.015), &t);
    assert_eq!(j.ruling.verdict, RowVerdict::Pass, "{}", j.ruling.reason);
    // The test is against the threshold: candidate vs baseline x 1.03 is not significant.
    assert!(
        j.ruling.estimate.p().unwrap() > 0.5,
        "{:?}",
        j.ruling.estimate.p()
    );
}

#[test]
fn min_effect_guards_tiny_kernels() {
    // A 2 us kernel 10 % slower is 200 ns: under a 500 ns minimum effect.
    let t = Threshold {
        kind: ThresholdKind::Relative { fraction: 0.03 },
        direction: Direction::Lower,
        min_effect: Some(Quantity::parse("500ns").unwrap()),
    };
    let (b, c) = (
        durations(2000.0 / 406_000.0),
        durations_b(1.1 * 2000.0 / 406_000.0),
    );
    let j = one(Some(&b), &c, &t);
    assert_ne!(j.ruling.verdict, RowVerdict::Regression, "{}", j.ruling.reason);
    assert!(j.ruling.reason.contains("min effect"), "{}", j.ruling.reason);
    // 40 % slower (800 ns) is beyond it.
    let c = durations_b(1.4 * 2000.0 / 406_000.0);
    assert_eq!(one(Some(&b), &c, &t).ruling.verdict, RowVerdict::Regression);
}

#[test]
fn deterministic_counters_compare_exactly() {
    let exact = kind(ThresholdKind::Exact);
    let regs = |v: f64| vec![v; 5];
    let j = one(Some(&regs(32.0)), &regs(40.0), &exact);
    assert_eq!(
        (j.ruling.verdict, j.ruling.method.as_str()),
        (RowVerdict::Regression, "exact")
    );
    assert_eq!(j.ruling.estimate.change(), Some(0.25));
    assert_eq!(
        one(Some(&regs(40.0)), &regs(32.0), &exact).ruling.verdict,
        RowVerdict::Improvement
    );
    assert_eq!(
        one(Some(&regs(32.0)), &regs(32.0), &exact).ruling.verdict,
        RowVerdict::Pass
    );
    // `exact` declares determinism: one repetition per side is enough.
    assert_eq!(
        one(Some(&[32.0]), &[40.0], &exact).ruling.verdict,
        RowVerdict::Regression
    );
    // A relative threshold is the tolerance: 2 % more instructions passes a 3 % threshold.
    let t = rel(0.03, Direction::Lower);
    assert_eq!(
        one(Some(&regs(1e6)), &regs(1.02e6), &t).ruling.verdict,
        RowVerdict::Pass
    );
    assert_eq!(
        one(Some(&regs(1e6)), &regs(1.05e6), &t).ruling.verdict,
        RowVerdict::Regression
    );
    // New local-memory spills: from zero, the relative change is undefined but the move is not.
    let j = one(Some(&regs(0.0)), &regs(16.0), &t);
    assert_eq!(
        (j.ruling.verdict, j.ruling.estimate.change()),
        (RowVerdict::Regression, None)
    );
    assert!(j.ruling.reason.contains("from zero"), "{}", j.ruling.reason);
}

#[test]
fn limits_judge_the_candidate_median() {
    let max = kind(ThresholdKind::Max { value: 420_000.0 });
    let j = one(None, &durations(1.0), &max);
    assert_eq!(
        (j.ruling.verdict, j.ruling.method.as_str()),
        (RowVerdict::Pass, "sign-test+median-ci"),
        "{}",
        j.ruling.reason
    );
    let [lo, hi] = j.ruling.estimate.median_ci().unwrap();
    assert!(lo <= j.candidate.median && j.candidate.median <= hi);
    let j = one(None, &durations(1.1), &max);
    assert_eq!(j.ruling.verdict, RowVerdict::Regression, "{}", j.ruling.reason);
    assert!((j.ruling.estimate.p().unwrap() - 1.0 / 1024.0).abs() < 1e-12);
    // Straddling the limit.
    let j = one(
        None,
        &durations(1.0),
        &kind(ThresholdKind::Max { value: 406_300.0 }),
    );
    assert_eq!(j.ruling.verdict, RowVerdict::Inconclusive, "{}", j.ruling.reason);
    // A minimum on a throughput, and a deterministic value.
    let min = kind(ThresholdKind::Min { value: 1e12 });
    assert_eq!(
        one(None, &[1.2e12, 1.3e12, 1.25e12, 1.22e12], &min)
            .ruling
            .verdict,
        RowVerdict::Pass
    );
    assert_eq!(
        one(None, &[64.0, 64.0], &kind(ThresholdKind::Max { value: 48.0 }))
            .ruling
            .verdict,
        RowVerdict::Regression
    );
    assert_eq!(
        one(None, &[1.0, 2.0], &max).ruling.verdict,
        RowVerdict::Inconclusive
    );
}

#[test]
fn missing_or_broken_data_gets_a_reason_never_a_panic() {
    let t = rel(0.03, Direction::Lower);
    let j = one(None, &durations(1.0), &t);
    assert_eq!(j.ruling.verdict, RowVerdict::New);
    let j = one(Some(&durations(1.0)), &[], &t);
    assert_eq!(j.ruling.verdict, RowVerdict::Error);
    assert_eq!(j.candidate.n, 0);
    let j = one(Some(&durations(1.0)), &[1.0, f64::NAN, 2.0, 3.0], &t);
    assert_eq!(j.ruling.verdict, RowVerdict::Error);
    assert!(j.ruling.reason.contains("#1 = NaN"), "{}", j.ruling.reason);
    let j = one(Some(&[1.0, f64::INFINITY, 2.0]), &[1.0, 2.0, 3.0], &t);
    assert!(
        j.ruling.reason.starts_with("baseline has 1 non-finite"),
        "{}",
        j.ruling.reason
    );
    let j = one(Some(&[1.0, 2.0]), &[1.0, 2.0, 3.0], &t);
    assert_eq!(j.ruling.verdict, RowVerdict::Inconclusive);
    assert!(
        j.ruling.reason.starts_with("not enough data"),
        "{}",
        j.ruling.reason
    );
    let j = one(Some(&[0.0, 1.0, 2.0]), &[1.0, 2.0, 3.0], &t);
    assert_eq!(j.ruling.verdict, RowVerdict::Inconclusive);
    assert!(j.ruling.reason.contains("positive"), "{}", j.ruling.reason);
    let bad = rel(f64::NAN, Direction::Lower);
    assert_eq!(
        one(Some(&[1.0; 3]), &[1.0; 3], &bad).ruling.verdict,
        RowVerdict::Error
    );
    let cfg = Config {
        alpha: 1.5,
        ..Config::default()
    };
    let rows = [Comparison {
        key: "k".into(),
        baseline: None,
        candidate: &[1.0],
        threshold: &t,
        history: &[],
        baseline_runs: &[],
        candidate_runs: &[],
    }];
    let j = judge_all(&rows, &cfg);
    assert_eq!(j[0].ruling.verdict, RowVerdict::Error);
    assert!(j[0].ruling.reason.contains("alpha 1.5"), "{}", j[0].ruling.reason);
}

#[test]
fn a_clear_row_of_few_processes_decides_in_a_large_run() {
    // 5 v 5 processes, one value each, +10 % with complete separation. The rank test's smallest
    // p is 1/252 ~ 0.004: under alpha 0.01 alone, but Holm over 20 rows needs 0.0005, which no
    // 5 v 5 ranking gives, so the row could never decide (issue 57). Such rows are judged by the
    // t test of their logs, which has no floor.
    let t = rel(0.03, Direction::Lower);
    let b = [100.0, 101.0, 100.5, 99.8, 100.2];
    let c = [110.0, 111.0, 110.5, 109.8, 110.2];
    let alone = one(Some(&b), &c, &t);
    assert_eq!(
        alone.ruling.verdict,
        RowVerdict::Regression,
        "{}",
        alone.ruling.reason
    );
    let null_c = [100.1, 100.9, 100.4, 99.9, 100.3];
    let mut rows = vec![Comparison {
        key: "slow".into(),
        baseline: Some(&b),
        candidate: &c,
        threshold: &t,
        history: &[],
        baseline_runs: &[],
        candidate_runs: &[],
    }];
    for i in 0..19 {
        rows.push(Comparison {
            key: format!("null{i}"),
            baseline: Some(&b),
            candidate: &null_c,
            threshold: &t,
            history: &[],
            baseline_runs: &[],
            candidate_runs: &[],
        });
    }
    let js = judge_all(&rows, &Config::default());
    assert_eq!(js.len(), 20);
    let r = &js[0].ruling;
    assert_eq!(r.verdict, RowVerdict::Regression, "{}", r.reason);
    assert_eq!(r.method, crate::stats::Method::RunLevelT);
    assert!(
        r.estimate.p_adjusted().unwrap() <= 0.01,
        "{:?}",
        r.estimate.p_adjusted()
    );
    assert!(
        r.reason.contains("holm over 20 tests") && r.reason.contains("judged by the t test of their logs"),
        "{}",
        r.reason
    );
    // Unchanged rows pass, none is a regression.
    assert!(
        js[1..].iter().all(|j| j.ruling.verdict == RowVerdict::Pass),
        "{js:?}"
    );
    // With many samples the rank test keeps them (its floor is far below the level).
    let big_b: Vec<f64> = (0..40).map(|i| 100.0 + f64::from(i % 7) * 0.1).collect();
    let big_c: Vec<f64> = (0..20).map(|i| 110.0 + f64::from(i % 5) * 0.1).collect();
    let big = one(Some(&big_b), &big_c, &t);
    assert_eq!(big.ruling.method, crate::stats::Method::MannWhitneyHodgesLehmann);
}

#[test]
fn bootstrap_interval_is_seeded_by_row_key() {
    let cfg = Config {
        interval: IntervalMethod::Bootstrap,
        ..Config::default()
    };
    let t = rel(0.03, Direction::Lower);
    let (b, c) = (durations(1.0), durations_b(1.08));
    let row = |key: &str| Comparison {
        key: key.into(),
        baseline: Some(&b),
        candidate: &c,
        threshold: &t,
        history: &[],
        baseline_runs: &[],
        candidate_runs: &[],
    };
    let a1 = judge(&row("a"), &cfg);
    let a2 = judge(&row("a"), &cfg);
    assert_eq!(a1, a2);
    assert_eq!(a1.ruling.verdict, RowVerdict::Regression);
    assert_eq!(a1.ruling.method.as_str(), "mann-whitney+bootstrap");
    let other = judge(&row("b"), &cfg);
    assert_ne!(
        a1.ruling.estimate.change_ci(),
        other.ruling.estimate.change_ci(),
        "different rows draw different resamples"
    );
}

/// SYNTHETIC durations: a log-normal body with CV `cv` around `mu`, from a seeded stream.
fn lognormal(seed: u64, n: usize, mu: f64, cv: f64) -> Vec<f64> {
    let mut rng = crate::stats::rng::Rng::new(seed);
    (0..n).map(|_| mu * (cv * rng.normal()).exp()).collect()
}

fn row<'a>(key: String, b: &'a [f64], c: &'a [f64], t: &'a Threshold) -> Comparison<'a> {
    Comparison {
        key,
        baseline: Some(b),
        candidate: c,
        threshold: t,
        history: &[],
        baseline_runs: &[],
        candidate_runs: &[],
    }
}

#[test]
fn uniform_shift_under_the_threshold_never_fails_the_run() {
    // Issue 12: a 2 % move of every metric (a compiler or header change) under a 3 % threshold
    // failed 44.6 % of runs when the test was against zero. 50 metrics, 30 baseline and 10
    // candidate samples at CV 1 %: no regression, and most rows pass outright.
    let t = rel(0.03, Direction::Lower);
    let data: Vec<(Vec<f64>, Vec<f64>)> = (0..50)
        .map(|i| {
            (
                lognormal(1000 + i, 30, 50_000.0, 0.01),
                lognormal(2000 + i, 10, 50_000.0 * 1.02, 0.01),
            )
        })
        .collect();
    let rows: Vec<Comparison<'_>> = data
        .iter()
        .enumerate()
        .map(|(i, (b, c))| row(format!("m{i}"), b, c, &t))
        .collect();
    // The test against the threshold alone (no job drift assumed): most rows pass outright.
    let js = judge_all(
        &rows,
        &Config {
            job_prior: NO_JOB_PRIOR,
            ..Config::default()
        },
    );
    let count =
        |js: &[crate::stats::Judgement], v: RowVerdict| js.iter().filter(|j| j.ruling.verdict == v).count();
    assert_eq!(count(&js, RowVerdict::Regression), 0);
    assert!(
        count(&js, RowVerdict::Pass) >= 30,
        "{} pass",
        count(&js, RowVerdict::Pass)
    );
    assert_eq!(
        count(&js, RowVerdict::Pass) + count(&js, RowVerdict::Inconclusive),
        50
    );
    // With the default job drift prior (0.3 % per job, issue 43) the intervals are wider: fewer
    // rows pass from 10 samples, and still none is a regression.
    let drift = judge_all(&rows, &Config::default());
    assert_eq!(count(&drift, RowVerdict::Regression), 0);
    assert!(count(&drift, RowVerdict::Pass) < count(&js, RowVerdict::Pass));
}

#[test]
fn slowdowns_beyond_the_threshold_regress() {
    let t = rel(0.03, Direction::Lower);
    for (i, shift) in [0.045, 0.05, 0.08, 0.10, 0.30].into_iter().enumerate() {
        let b = lognormal(10 + i as u64, 30, 80_000.0, 0.005);
        let c = lognormal(20 + i as u64, 10, 80_000.0 * (1.0 + shift), 0.005);
        let j = one(Some(&b), &c, &t);
        assert_eq!(
            j.ruling.verdict,
            RowVerdict::Regression,
            "{shift}: {}",
            j.ruling.reason
        );
        assert!(
            j.ruling.estimate.change_ci().unwrap()[0] > 0.03,
            "{shift}: {:?}",
            j.ruling.estimate.change_ci()
        );
        assert!(j.ruling.reason.contains("baseline x 1.03"), "{}", j.ruling.reason);
    }
}

#[test]
fn shift_straddling_the_threshold_is_inconclusive_with_a_note() {
    // A true 3.6 % slowdown against a 3 % threshold at CV 1 %: the interval reaches both sides of
    // the threshold. Before, significance against zero plus an estimate beyond 3 % failed it.
    let t = rel(0.03, Direction::Lower);
    let b = lognormal(31, 30, 20_000.0, 0.01);
    let c = lognormal(32, 10, 20_000.0 * 1.036, 0.01);
    let j = one(Some(&b), &c, &t);
    assert_eq!(j.ruling.verdict, RowVerdict::Inconclusive, "{}", j.ruling.reason);
    let [lo, hi] = j.ruling.estimate.change_ci().unwrap();
    assert!(lo < 0.03 && hi > 0.03, "{lo} {hi}");
    assert!(
        j.ruling.estimate.change().unwrap() > 0.03,
        "{:?}",
        j.ruling.estimate.change()
    );
    assert!(j.ruling.reason.contains("straddles"), "{}", j.ruling.reason);
    assert!(
        j.ruling
            .reason
            .contains("note: the estimate is beyond the 3.00% threshold and significant against no change"),
        "{}",
        j.ruling.reason
    );
}

#[test]
fn between_job_spread_widens_the_interval_and_warns() {
    let t = rel(0.03, Direction::Lower);
    let b = lognormal(41, 30, 10_000.0, 0.003);
    let c = lognormal(42, 10, 10_000.0 * 1.05, 0.003);
    assert_eq!(one(Some(&b), &c, &t).ruling.verdict, RowVerdict::Regression);
    // Ten earlier baselines whose medians move about 2 % from job to job.
    let history: Vec<f64> = lognormal(43, 10, 10_000.0, 0.02);
    let cmp = Comparison {
        key: "k".into(),
        baseline: Some(&b),
        candidate: &c,
        threshold: &t,
        history: &history,
        baseline_runs: &[],
        candidate_runs: &[],
    };
    let j = judge(&cmp, &Config::default());
    let spread = j.job_spread.unwrap();
    assert!(spread > 0.01, "{spread}");
    assert_ne!(j.ruling.verdict, RowVerdict::Regression, "{}", j.ruling.reason);
    assert!(
        j.ruling.reason.contains("between-job spread"),
        "{}",
        j.ruling.reason
    );
    assert!(
        j.ruling
            .reason
            .contains("warning: the job drift is too large for the 3.00% threshold")
            && j.ruling.reason.contains("`cgp-gate ab`"),
        "{}",
        j.ruling.reason
    );
    // A steady history changes nothing.
    let steady = vec![b[0]; 10];
    let j = judge(
        &Comparison {
            history: &steady,
            baseline_runs: &[],
            candidate_runs: &[],
            ..cmp
        },
        &Config::default(),
    );
    assert_eq!(j.ruling.verdict, RowVerdict::Regression, "{}", j.ruling.reason);
}

#[test]
fn rows_beyond_the_sample_bound_are_errors() {
    let t = rel(0.03, Direction::Lower);
    let big: Vec<f64> = (0..=MAX_SAMPLES).map(|i| 100.0 + (i % 7) as f64).collect();
    let j = one(Some(&big), &durations(1.0), &t);
    assert_eq!(j.ruling.verdict, RowVerdict::Error);
    assert!(
        j.ruling.reason.contains("too many samples"),
        "{}",
        j.ruling.reason
    );
}

/// A run of 50 rows (SYNTHETIC, CV 1 %): row 0 has a 30-sample baseline with two clock dips (6 %
/// and 8 % slow) and a preemption (1.3x), and a 20-sample candidate `shift` slower; the other 49
/// are unchanged.
fn run_with_dipped_baseline(shift: f64, direction: Direction, trim_dips: bool) -> Vec<Judgement> {
    let t = rel(0.03, direction);
    let slow = |x: f64, f: f64| {
        if direction == Direction::Lower {
            x * f
        } else {
            x / f
        }
    };
    let data: Vec<(Vec<f64>, Vec<f64>)> = (0..50)
        .map(|i| {
            let mut b = lognormal(7000 + i, 30, 50_000.0, 0.01);
            let s = if i == 0 { shift } else { 0.0 };
            let c: Vec<f64> = lognormal(8000 + i, 20, 50_000.0, 0.01)
                .into_iter()
                .map(|x| slow(x, 1.0 + s))
                .collect();
            if i == 0 {
                b[3] = slow(b[3], 1.06);
                b[17] = slow(b[17], 1.08);
                b[24] = slow(b[24], 1.30);
            }
            (b, c)
        })
        .collect();
    let rows: Vec<Comparison<'_>> = data
        .iter()
        .enumerate()
        .map(|(i, (b, c))| row(format!("m{i}"), b, c, &t))
        .collect();
    judge_all(
        &rows,
        &Config {
            trim_dips,
            // The dips alone: no job drift assumed (the prior's cost is its own test).
            job_prior: NO_JOB_PRIOR,
            ..Config::default()
        },
    )
}

/// No between-job spread assumed: for tests of another part of the rule.
const NO_JOB_PRIOR: crate::stats::jobspread::Prior = crate::stats::jobspread::Prior { spread: 0.0, df: 0.0 };

#[test]
fn clock_dips_in_a_stored_baseline_no_longer_blind_the_metric() {
    // Issue 12: two clock-dip outliers in a stored baseline blinded that metric for as long as
    // the baseline lived. Slow outliers are left out of the test on both sides, so a 5 % slowdown
    // against a 3 % threshold is found, in both directions.
    for direction in [Direction::Lower, Direction::Higher] {
        let js = run_with_dipped_baseline(0.05, direction, true);
        assert_eq!(
            js[0].ruling.verdict,
            RowVerdict::Regression,
            "{}",
            js[0].ruling.reason
        );
        assert!(
            js[0]
                .ruling
                .reason
                .contains("left out of the test: 3 of 30 baseline"),
            "{}",
            js[0].ruling.reason
        );
        assert!(js[1..].iter().all(|j| j.ruling.verdict != RowVerdict::Regression));
        // The same data with the dips kept: each dip outranks the whole slower candidate.
        let kept = run_with_dipped_baseline(0.05, direction, false);
        let (p_trim, p_kept) = (
            js[0].ruling.estimate.p().unwrap(),
            kept[0].ruling.estimate.p().unwrap(),
        );
        assert!(p_kept > 10.0 * p_trim, "{p_trim} vs {p_kept}");
    }
}

#[test]
fn leaving_out_dips_does_not_make_a_change_under_the_threshold_a_regression() {
    for direction in [Direction::Lower, Direction::Higher] {
        for shift in [0.0, 0.02] {
            let js = run_with_dipped_baseline(shift, direction, true);
            assert!(
                js.iter().all(|j| j.ruling.verdict != RowVerdict::Regression),
                "{shift}: {}",
                js[0].ruling.reason
            );
        }
    }
}

#[test]
fn ab_and_check_judge_deterministic_values_alike() {
    // Registers and counters: `ab`'s constant rows and `check`'s exact rows share one rule.
    let effect = |t: Threshold, q: &str| Threshold {
        min_effect: Some(Quantity::parse(q).unwrap()),
        ..t
    };
    let cases = [
        (38.0, 38.0, kind(ThresholdKind::Exact)),
        (38.0, 40.0, kind(ThresholdKind::Exact)),
        (40.0, 38.0, kind(ThresholdKind::Exact)),
        (0.0, 2.0, kind(ThresholdKind::Exact)),
        (100.0, 102.0, rel(0.03, Direction::Lower)),
        (100.0, 104.0, rel(0.03, Direction::Lower)),
        (100.0, 104.0, rel(0.03, Direction::Higher)),
        (100.0, 104.0, effect(kind(ThresholdKind::Exact), "5")),
    ];
    let mut verdicts = Vec::new();
    for (b, c, t) in &cases {
        let j = one(Some(&[*b, *b, *b]), &[*c, *c, *c], t);
        let p = paired::judge_constant(*b, *c, t, 3);
        assert_eq!(j.ruling.method.as_str(), "exact");
        assert_eq!(
            (p.ruling.verdict, p.ruling.estimate.change(), &p.ruling.reason),
            (j.ruling.verdict, j.ruling.estimate.change(), &j.ruling.reason)
        );
        verdicts.push(j.ruling.verdict);
    }
    use RowVerdict::{Improvement as I, Pass as P, Regression as R};
    assert_eq!(verdicts, [P, R, I, R, P, R, I, P]);
}

mod properties;
mod runs;
