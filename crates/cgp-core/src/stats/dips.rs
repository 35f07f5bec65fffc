//! Clock dips and preemptions: repetitions that ran slow for reasons outside the code (a clock
//! drop, another process on the GPU). They only ever make a repetition slower (a duration
//! longer, a throughput lower), and on a side of 10 to 30 repetitions each one costs the rank
//! test a large part of its power: a slow repetition in the baseline outranks most of a truly
//! slower candidate. A stored baseline keeps its dips for as long as it lives (issue 12).
//!
//! The rule: repetitions beyond Tukey's fence on the SLOW side (`Q3 + 1.5 IQR` when lower is
//! better, `Q1 - 1.5 IQR` when higher is better) are left out, at most [`MAX_SHARE`] of a side.
//! Fast-side outliers are kept: nothing known makes a repetition spuriously fast.
//! - Each U test ([`trim_pooled`]) takes its fence from the pooled sample of that test (the
//!   candidate and the baseline moved to the test's boundary), a function of the pooled values
//!   alone, so the test keeps its level under its null hypothesis.
//! - The Hodges-Lehmann estimate and its interval ([`trim_slow`]) use each side's own fence.
//!
//! What is lost: a regression that shows only in a few slow repetitions (fewer than
//! [`MAX_SHARE`]), which a location test barely sees anyway. The reason of the row says how many
//! were left out, and `SideSummary.outliers` still lists every Tukey outlier. Measured effect:
//! `docs/statistics.md`, section 6.1.

use super::order::quantile_sorted;
use super::outliers::TUKEY_K;

/// At most this share of a side is left out as slow outliers (rounded down).
pub(crate) const MAX_SHARE: f64 = 0.2;

/// Fewest samples on a side for the fence to be computed (as `tukey_outliers`).
const MIN_FOR_FENCE: usize = 4;

/// `sorted` (ascending, finite) without its slow-side outliers, and how many were left out.
/// `slow_high`: the slow side is the high end (lower is better).
pub(crate) fn trim_slow(sorted: &[f64], slow_high: bool) -> (Vec<f64>, usize) {
    let n = sorted.len();
    if n < MIN_FOR_FENCE {
        return (sorted.to_vec(), 0);
    }
    let (Some(q1), Some(q3)) = (quantile_sorted(sorted, 0.25), quantile_sorted(sorted, 0.75)) else {
        return (sorted.to_vec(), 0);
    };
    let iqr = q3 - q1;
    let cap = (n as f64 * MAX_SHARE).floor() as usize;
    if slow_high {
        let fence = q3 + TUKEY_K * iqr;
        let beyond = sorted.iter().rev().take_while(|x| **x > fence).count().min(cap);
        (sorted[..n - beyond].to_vec(), beyond)
    } else {
        let fence = q1 - TUKEY_K * iqr;
        let beyond = sorted.iter().take_while(|x| **x < fence).count().min(cap);
        (sorted[beyond..].to_vec(), beyond)
    }
}

/// For one test of the candidate against the baseline moved to a boundary (`map`, increasing):
/// the fence comes from the POOLED sample (candidate and moved baseline together), so it is a
/// function of the pooled values alone, not of which side each came from. Under the null
/// hypothesis of that test the labels of the values kept are still exchangeable and the U test
/// on them keeps its level; a fence from each side's own quartiles does not (it is noisier on
/// the smaller side, which then keeps more of its dips: measured 1.1-1.25x the nominal level).
/// At most [`MAX_SHARE`] of each side is left out (a guard that binds only when one side is far
/// slower than the other: a real regression is never trimmed away). Returns the kept candidate,
/// the kept baseline (unmoved), and how many of each were left out.
pub(crate) fn trim_pooled(
    c_sorted: &[f64],
    b_sorted: &[f64],
    map: &dyn Fn(f64) -> f64,
    slow_high: bool,
) -> (Vec<f64>, Vec<f64>, usize, usize) {
    let untouched = || (c_sorted.to_vec(), b_sorted.to_vec(), 0, 0);
    if c_sorted.len() + b_sorted.len() < MIN_FOR_FENCE {
        return untouched();
    }
    let mut pooled: Vec<f64> = c_sorted
        .iter()
        .copied()
        .chain(b_sorted.iter().map(|x| map(*x)))
        .collect();
    pooled.sort_by(f64::total_cmp);
    let (Some(q1), Some(q3)) = (quantile_sorted(&pooled, 0.25), quantile_sorted(&pooled, 0.75)) else {
        return untouched();
    };
    let iqr = q3 - q1;
    let cap = |n: usize| (n as f64 * MAX_SHARE).floor() as usize;
    if slow_high {
        let fence = q3 + TUKEY_K * iqr;
        let c_out = c_sorted
            .iter()
            .rev()
            .take_while(|x| **x > fence)
            .count()
            .min(cap(c_sorted.len()));
        let b_out = b_sorted
            .iter()
            .rev()
            .take_while(|x| map(**x) > fence)
            .count()
            .min(cap(b_sorted.len()));
        (
            c_sorted[..c_sorted.len() - c_out].to_vec(),
            b_sorted[..b_sorted.len() - b_out].to_vec(),
            c_out,
            b_out,
        )
    } else {
        let fence = q1 - TUKEY_K * iqr;
        let c_out = c_sorted
            .iter()
            .take_while(|x| **x < fence)
            .count()
            .min(cap(c_sorted.len()));
        let b_out = b_sorted
            .iter()
            .take_while(|x| map(**x) < fence)
            .count()
            .min(cap(b_sorted.len()));
        (
            c_sorted[c_out..].to_vec(),
            b_sorted[b_out..].to_vec(),
            c_out,
            b_out,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_out_slow_outliers_only_on_the_slow_side() {
        // Q1 = 100.625, Q3 = 101.875 (type 7), IQR 1.25: fences [98.75, 103.75].
        let mut x = vec![
            90.0, 100.0, 100.5, 101.0, 101.0, 101.5, 102.0, 106.0, 130.0, 101.0,
        ];
        x.sort_by(f64::total_cmp);
        let (kept, left) = trim_slow(&x, true);
        assert_eq!(left, 2);
        assert_eq!(kept.last(), Some(&102.0));
        assert_eq!(kept.first(), Some(&90.0), "a fast outlier is kept");
        // Higher is better: the slow side is the low end.
        let (kept, left) = trim_slow(&x, false);
        assert_eq!(left, 1);
        assert_eq!(kept.first(), Some(&100.0));
        assert_eq!(kept.last(), Some(&130.0));
    }

    #[test]
    fn the_pooled_fence_does_not_depend_on_which_side_a_value_came_from() {
        // SYNTHETIC: two sides of one distribution, each with a slow outlier.
        let a = [100.0, 100.4, 100.8, 101.0, 101.3, 99.7, 99.9, 100.2, 112.0, 100.6];
        let b = [
            100.1, 100.5, 99.8, 100.9, 101.1, 100.3, 100.0, 99.6, 100.7, 100.2, 109.0, 100.4,
        ];
        let (mut a, mut b) = (a.to_vec(), b.to_vec());
        a.sort_by(f64::total_cmp);
        b.sort_by(f64::total_cmp);
        let id = |x: f64| x;
        let (ak, bk, a_out, b_out) = trim_pooled(&a, &b, &id, true);
        let (bk2, ak2, b_out2, a_out2) = trim_pooled(&b, &a, &id, true);
        assert_eq!((a_out, b_out), (1, 1));
        assert_eq!((a_out, b_out), (a_out2, b_out2));
        assert_eq!((ak, bk), (ak2, bk2));
        // Moving the baseline moves its values against the same pooled fence.
        let (_, _, c_out, _) = trim_pooled(&a, &b, &|x| x * 1.03, true);
        assert_eq!(c_out, 1, "112 is still far beyond the pooled sample");
    }

    #[test]
    fn a_real_regression_is_never_trimmed_away() {
        // SYNTHETIC: 10 candidate samples 2x slower than 40 baseline samples: the pooled fence
        // lies below all of them, but at most a fifth of a side is left out.
        let b: Vec<f64> = (0..40).map(|i| 100.0 + 0.05 * f64::from(i)).collect();
        let c: Vec<f64> = (0..10).map(|i| 200.0 + 0.1 * f64::from(i)).collect();
        let (ck, bk, c_out, b_out) = trim_pooled(&c, &b, &|x| x, true);
        assert_eq!((c_out, b_out), (2, 0));
        assert_eq!((ck.len(), bk.len()), (8, 40));
        assert!(ck.iter().all(|x| *x >= 200.0));
    }

    #[test]
    fn leaves_out_at_most_a_fifth_and_nothing_from_tiny_sides() {
        // 20 values, 5 beyond the fence (Q3 = 10.355, IQR 0.3075, fence 10.82): only 4 (a
        // fifth) are left out.
        let mut x: Vec<f64> = (0..15).map(|i| 10.0 + 0.01 * f64::from(i)).collect();
        x.extend([11.0; 5]);
        let (kept, left) = trim_slow(&x, true);
        assert_eq!((kept.len(), left), (16, 4));
        assert_eq!(trim_slow(&[1.0, 1.0, 100.0], true), (vec![1.0, 1.0, 100.0], 0));
        assert_eq!(trim_slow(&[5.0; 8], true).1, 0);
    }
}
