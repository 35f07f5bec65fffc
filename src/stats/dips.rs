//! Clock dips and preemptions: repetitions that ran slow for reasons outside the code (a clock
//! drop, another process on the GPU). They only ever make a repetition slower (a duration
//! longer, a throughput lower), and on a side of 10 to 30 repetitions each one costs the rank
//! test a large part of its power: a slow repetition in the baseline outranks most of a truly
//! slower candidate. A stored baseline keeps its dips for as long as it lives (issue 12).
//!
//! The rule: on each side, separately, the repetitions beyond Tukey's fence on the SLOW side
//! (`Q3 + 1.5 IQR` when lower is better, `Q1 - 1.5 IQR` when higher is better) are left out of the
//! test and the interval, at most [`MAX_SHARE`] of the side. Fast-side outliers are kept: nothing
//! known makes a repetition spuriously fast. Both sides are treated alike, so under no change the
//! two trimmed samples still come from the same distribution; what is lost is a regression that
//! shows only in a few slow repetitions (fewer than [`MAX_SHARE`]), which a location test does
//! not see anyway. The reason of the row says how many were left out, and `SideSummary.outliers`
//! still lists every Tukey outlier. Measured effect: `docs/statistics.md`, section 6.

use super::order::quantile_sorted;
use super::outliers::TUKEY_K;

/// At most this share of a side is left out as slow outliers (rounded down).
pub const MAX_SHARE: f64 = 0.2;

/// Fewest samples on a side for the fence to be computed (as `tukey_outliers`).
const MIN_FOR_FENCE: usize = 4;

/// `sorted` (ascending, finite) without its slow-side outliers, and how many were left out.
/// `slow_high`: the slow side is the high end (lower is better).
pub fn trim_slow(sorted: &[f64], slow_high: bool) -> (Vec<f64>, usize) {
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
