//! The verdict's invariants as property tests: sample order, scale, identical sides, the
//! direction, and arbitrary finite input.

use proptest::prelude::*;

use super::*;

fn samples(n: std::ops::Range<usize>) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(1.0f64..1.0e6, n)
}

fn direction() -> impl Strategy<Value = Direction> {
    prop_oneof![Just(Direction::Lower), Just(Direction::Higher)]
}

/// A row's verdict and its change: the t test of few processes' logs sums them, so the order of
/// the values (or a power-of-two scale) may move the last bits of the change (a fixed number of
/// printed digits still differs where the rounding straddles a digit: 5.3156661565e-3).
fn verdict_of(b: &[f64], c: &[f64], t: &Threshold) -> (RowVerdict, Option<f64>) {
    let j = one(Some(b), c, t);
    (j.ruling.verdict, j.ruling.estimate.change())
}

/// The same verdict, and the same change to a relative 1e-9 (both absent, or both present).
fn same(a: (RowVerdict, Option<f64>), b: (RowVerdict, Option<f64>)) -> Result<(), TestCaseError> {
    prop_assert_eq!(a.0, b.0);
    match (a.1, b.1) {
        (None, None) => {}
        (Some(x), Some(y)) => prop_assert!(
            (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1e-12),
            "change {x:e} against {y:e}"
        ),
        (x, y) => prop_assert!(false, "change {x:?} against {y:?}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn verdict_ignores_sample_order(
        (b, pb) in samples(3..14).prop_flat_map(|v| (Just(v.clone()), Just(v).prop_shuffle())),
        (c, pc) in samples(3..14).prop_flat_map(|v| (Just(v.clone()), Just(v).prop_shuffle())),
        frac in 0.0f64..0.5,
        dir in direction(),
    ) {
        let t = rel(frac, dir);
        same(verdict_of(&b, &c, &t), verdict_of(&pb, &pc, &t))?;
    }

    #[test]
    fn scaling_both_sides_keeps_relative_verdicts(
        b in samples(3..14), c in samples(3..14), frac in 0.0f64..0.5, dir in direction(), k in -20i32..20,
    ) {
        // Powers of two scale exactly in binary floating point, so this tests the method, not rounding.
        let s = 2f64.powi(k);
        let t = rel(frac, dir);
        let sb: Vec<f64> = b.iter().map(|x| x * s).collect();
        let sc: Vec<f64> = c.iter().map(|x| x * s).collect();
        same(verdict_of(&b, &c, &t), verdict_of(&sb, &sc, &t))?;
    }

    #[test]
    fn identical_samples_never_regress(
        (b, pb) in samples(1..20).prop_flat_map(|v| (Just(v.clone()), Just(v).prop_shuffle())),
        frac in 0.0f64..0.5,
        dir in direction(),
        exact in any::<bool>(),
    ) {
        let t = if exact { Threshold { kind: ThresholdKind::Exact, direction: dir, min_effect: None } } else { rel(frac, dir) };
        let j = one(Some(&b), &pb, &t);
        prop_assert!(j.ruling.verdict != RowVerdict::Regression && j.ruling.verdict != RowVerdict::Improvement, "{}", j.ruling.reason);
    }

    #[test]
    fn swapping_direction_swaps_regression_and_improvement(
        b in samples(1..14), c in samples(1..14), frac in 0.0f64..0.5, exact in any::<bool>(),
    ) {
        // The slow side flips with the direction, so leaving out slow outliers would judge other
        // samples: the symmetry of the decision is checked on the untrimmed rule.
        let mk = |d| if exact { Threshold { kind: ThresholdKind::Exact, direction: d, min_effect: None } } else { rel(frac, d) };
        let cfg = Config { trim_dips: false, ..Config::default() };
        let judge1 = |t: &Threshold| judge(&Comparison { key: "k".into(), baseline: Some(&b), candidate: &c, threshold: t, history: &[], baseline_runs: &[], candidate_runs: &[] }, &cfg).ruling.verdict;
        let lower = judge1(&mk(Direction::Lower));
        let higher = judge1(&mk(Direction::Higher));
        // `exact` against a constant baseline compares every launch (issue 34): a candidate with
        // launches on both sides of it is worse in either direction, a regression both ways.
        let both_sides = b.iter().all(|x| x.total_cmp(&b[0]).is_eq()) && c.iter().any(|x| *x > b[0]) && c.iter().any(|x| *x < b[0]);
        if exact && both_sides {
            prop_assert_eq!((lower, higher), (RowVerdict::Regression, RowVerdict::Regression));
            return Ok(());
        }
        prop_assert_eq!(lower == RowVerdict::Regression, higher == RowVerdict::Improvement);
        prop_assert_eq!(lower == RowVerdict::Improvement, higher == RowVerdict::Regression);
    }

    #[test]
    fn arbitrary_finite_input_never_panics(
        b in prop::option::of(prop::collection::vec(prop::num::f64::ANY.prop_filter("finite", |x| x.is_finite()), 0..12)),
        c in prop::collection::vec(prop::num::f64::ANY, 0..12),
        value in prop::num::f64::ANY,
        which in 0u8..4,
        min_effect in prop::option::of(prop::num::f64::ANY),
        bootstrap in any::<bool>(),
    ) {
        let kind = match which {
            0 => ThresholdKind::Relative { fraction: value },
            1 => ThresholdKind::Exact,
            2 => ThresholdKind::Min { value },
            _ => ThresholdKind::Max { value },
        };
        let t = Threshold { kind, direction: Direction::Lower, min_effect: min_effect.map(|v| Quantity { value: v, unit: "ns".into() }) };
        let cfg = Config {
            interval: if bootstrap { IntervalMethod::Bootstrap } else { IntervalMethod::HodgesLehmann },
            resamples: 50,
            ..Config::default()
        };
        let rows = [
            Comparison { key: "a".into(), baseline: b.as_deref(), candidate: &c, threshold: &t, history: &[], baseline_runs: &[], candidate_runs: &[] },
            Comparison { key: "b".into(), baseline: Some(&c), candidate: &c, threshold: &t, history: &[], baseline_runs: &[], candidate_runs: &[] },
        ];
        let js = judge_all(&rows, &cfg);
        prop_assert_eq!(js.len(), 2);
        for j in &js {
            prop_assert!(!j.ruling.reason.is_empty());
            if let Some(p) = j.ruling.estimate.p_adjusted() { prop_assert!((0.0..=1.0).contains(&p)); }
        }
    }
}
