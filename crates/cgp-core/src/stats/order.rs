//! Order statistics of samples: sorting the finite values, median, quantiles, MAD. The bottom of
//! the statistics: summaries, outlier fences and the verdict build on these.

/// Sorted copy of the finite values.
pub(crate) fn sorted_finite(samples: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Median of the finite values; `None` when there are none.
pub fn median(samples: &[f64]) -> Option<f64> {
    median_sorted(&sorted_finite(samples))
}

/// Median of sorted data; `None` when empty.
pub(crate) fn median_sorted(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    Some(if n % 2 == 1 {
        sorted[n / 2]
    } else {
        // Halve first so two huge values cannot overflow to infinity.
        sorted[n / 2 - 1] / 2.0 + sorted[n / 2] / 2.0
    })
}

/// Quantile of sorted data with linear interpolation between order statistics (Hyndman and Fan
/// type 7, the default of R and NumPy); `None` when empty.
pub(crate) fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil().min((n - 1) as f64) as usize;
    let frac = h - lo as f64;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

/// Median absolute deviation (unscaled) of sorted data.
pub(crate) fn mad_sorted(sorted: &[f64]) -> Option<f64> {
    let m = median_sorted(sorted)?;
    let mut dev: Vec<f64> = sorted.iter().map(|x| (x - m).abs()).collect();
    dev.sort_by(f64::total_cmp);
    median_sorted(&dev)
}
