//! Tukey's fences: outliers are reported with every sample kept. A clock drop or a preempted
//! launch shows up here; the tests leave slow-side ones out by their own pooled fence
//! ([`super::dips`]), and the samples stored and reported stay whole.

use super::order::{quantile_sorted, sorted_finite};

/// Fence multiplier on the interquartile range (Tukey's "outside" fence).
pub(crate) const TUKEY_K: f64 = 1.5;

/// Indices (into `samples`) of values outside `[Q1 - 1.5 IQR, Q3 + 1.5 IQR]`, ascending.
/// Non-finite values are ignored; fewer than four finite values never have outliers (the quartiles
/// of three points say nothing about the tails).
pub fn tukey_outliers(samples: &[f64]) -> Vec<usize> {
    let sorted = sorted_finite(samples);
    if sorted.len() < 4 {
        return Vec::new();
    }
    let (Some(q1), Some(q3)) = (quantile_sorted(&sorted, 0.25), quantile_sorted(&sorted, 0.75)) else {
        return Vec::new();
    };
    let iqr = q3 - q1;
    let (lo, hi) = (q1 - TUKEY_K * iqr, q3 + TUKEY_K * iqr);
    samples
        .iter()
        .enumerate()
        .filter(|(_, x)| x.is_finite() && (**x < lo || **x > hi))
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_both_tails_by_index() {
        // Q1 = 10.125, Q3 = 11.875 (type 7), IQR 1.75, fences [7.5, 14.5].
        let x = [10.0, 11.0, 30.0, 10.5, 11.5, 12.0, 1.0, 10.0, 12.0, 11.0];
        assert_eq!(tukey_outliers(&x), vec![2, 6]);
    }

    #[test]
    fn values_on_the_fence_are_kept() {
        // Q1 = 2, Q3 = 3 -> fences [0.5, 4.5]; 4.5 is on the fence, not outside; 4.6 is.
        assert!(tukey_outliers(&[2.0, 3.0, 4.5, 2.0, 3.0]).is_empty());
        assert_eq!(tukey_outliers(&[2.0, 3.0, 4.6, 2.0, 3.0]), vec![2]);
    }

    #[test]
    fn small_or_constant_samples_have_none() {
        assert!(tukey_outliers(&[1.0, 100.0, 1000.0]).is_empty());
        assert!(tukey_outliers(&[5.0; 8]).is_empty());
        assert!(tukey_outliers(&[]).is_empty());
    }
}
