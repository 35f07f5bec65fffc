//! Per-side summaries: median, range, robust CV and outliers.

use super::row::SideSummary;

use super::outliers::tukey_outliers;

/// MAD-to-sigma factor for normally distributed data (1 / Phi^-1(3/4)).
const MAD_TO_SIGMA: f64 = 1.4826;

pub use super::order::median;
pub(crate) use super::order::{mad_sorted, median_sorted, sorted_finite};

/// Summarise one side's samples.
///
/// Non-finite values are left out of every statistic and out of `samples` (JSON cannot carry them);
/// the verdict reports them as an error, so nothing disappears unnoticed. For an empty (or
/// all-non-finite) input, `n` is 0 and `median`, `min` and `max` are 0: read them only when `n > 0`.
/// `cv` is the robust coefficient of variation `1.4826 * MAD / median`, `None` with fewer than two
/// values or a zero median.
pub fn summarize(samples: &[f64]) -> SideSummary {
    let finite: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    let sorted = sorted_finite(&finite);
    let median = median_sorted(&sorted).unwrap_or(0.0);
    let cv = if sorted.len() >= 2 && median != 0.0 {
        mad_sorted(&sorted).map(|mad| MAD_TO_SIGMA * mad / median.abs())
    } else {
        None
    };
    SideSummary {
        n: finite.len(),
        runs: None,
        median,
        min: sorted.first().copied().unwrap_or(0.0),
        max: sorted.last().copied().unwrap_or(0.0),
        cv,
        outliers: tukey_outliers(&finite),
        samples: finite,
    }
}

#[cfg(test)]
#[expect(clippy::float_cmp, reason = "min and max are copies of the input")]
mod tests {
    use super::*;
    use crate::stats::order::quantile_sorted;

    #[test]
    fn median_and_quantiles_follow_type_7() {
        let s = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(median_sorted(&s), Some(2.5));
        assert_eq!(median_sorted(&[5.0]), Some(5.0));
        assert_eq!(median_sorted(&[]), None);
        // NumPy: np.quantile([1,2,3,4], 0.25) == 1.75
        assert_eq!(quantile_sorted(&s, 0.25), Some(1.75));
        assert_eq!(quantile_sorted(&s, 1.0), Some(4.0));
        assert_eq!(median_sorted(&[f64::MAX, f64::MAX]), Some(f64::MAX));
    }

    #[test]
    fn summary_of_kernel_durations() {
        // 10 repetitions of a ~406 us kernel with one clock-drop outlier at index 7.
        let ns = [
            406_240.0, 406_900.0, 405_880.0, 406_510.0, 407_020.0, 406_330.0, 405_990.0, 452_000.0,
            406_700.0, 406_150.0,
        ];
        let s = summarize(&ns);
        assert_eq!(s.n, 10);
        assert_eq!(s.min, 405_880.0);
        assert_eq!(s.max, 452_000.0);
        assert!((s.median - 406_420.0).abs() < 1e-9, "median {}", s.median);
        assert_eq!(s.outliers, vec![7]);
        assert_eq!(s.samples, ns.to_vec(), "samples keep their order and the outlier");
        let cv = s.cv.unwrap();
        // MAD of these is 355 ns -> robust CV ~ 0.12 %, unaffected by the outlier.
        assert!((cv - 1.4826 * 355.0 / 406_420.0).abs() < 1e-9, "cv {cv}");
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        let e = summarize(&[]);
        assert_eq!((e.n, e.cv, e.outliers.len()), (0, None, 0));
        let one = summarize(&[3.0]);
        assert_eq!((one.n, one.median, one.cv), (1, 3.0, None));
        let zeros = summarize(&[0.0, 0.0, 0.0]);
        assert_eq!(zeros.cv, None);
        let nan = summarize(&[1.0, f64::NAN, 2.0, f64::INFINITY]);
        assert_eq!(nan.n, 2);
        assert_eq!(nan.samples, vec![1.0, 2.0]);
    }
}
