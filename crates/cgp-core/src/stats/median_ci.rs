//! Distribution-free interval of one side's median (order statistics) and the sign test that goes
//! with it, for `min:`/`max:` thresholds.

use statrs::function::factorial::ln_binomial;

/// `P(B >= k)` for `B ~ Binomial(n, 1/2)`.
pub(crate) fn binomial_half_sf(n: usize, k: usize) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n {
        return 0.0;
    }
    let ln_half_n = n as f64 * std::f64::consts::LN_2;
    (k..=n)
        .map(|i| (ln_binomial(n as u64, i as u64) - ln_half_n).exp())
        .sum::<f64>()
        .min(1.0)
}

/// Interval `[x_(k), x_(n+1-k)]` of the median of sorted data at (at least) `confidence`, and the
/// coverage achieved. With too few values for that confidence it is the full range and its
/// coverage `1 - 2^(1-n)`. `None` when empty.
pub(crate) fn median_interval(sorted: &[f64], confidence: f64) -> Option<([f64; 2], f64)> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let tail = (1.0 - confidence) / 2.0;
    // x_(k) > median with probability P(B <= k - 1) = P(B >= n - k + 1); find the largest k whose
    // tail stays within `tail`.
    let mut k = 1;
    while k < n.div_ceil(2) && binomial_half_sf(n, n - k) <= tail {
        k += 1;
    }
    let coverage = 1.0 - 2.0 * binomial_half_sf(n, n - k + 1);
    Some(([sorted[k - 1], sorted[n - k]], coverage.max(0.0)))
}

/// The coverage of `[x_(k), x_(n+1-k)]` as an interval of the median of `n` values (`k` from 1).
pub(crate) fn coverage(n: usize, k: usize) -> f64 {
    (1.0 - 2.0 * binomial_half_sf(n, n + 1 - k.max(1))).max(0.0)
}

/// One-sided sign-test p-values of "the median is above `limit`" and "below `limit`". Values equal
/// to the limit carry no sign and are left out, the usual convention.
pub(crate) fn sign_test(samples: &[f64], limit: f64) -> (f64, f64) {
    let above = samples.iter().filter(|&&x| x > limit).count();
    let below = samples.iter().filter(|&&x| x < limit).count();
    let n = above + below;
    (binomial_half_sf(n, above), binomial_half_sf(n, below))
}

#[cfg(test)]
#[expect(
    clippy::float_cmp,
    reason = "order statistics are copies of the input and tails are exact"
)]
mod tests {
    use super::*;

    #[test]
    fn binomial_tail_values() {
        assert!((binomial_half_sf(10, 10) - 1.0 / 1024.0).abs() < 1e-12);
        assert!((binomial_half_sf(10, 9) - 11.0 / 1024.0).abs() < 1e-12);
        assert!((binomial_half_sf(4, 0) - 1.0).abs() < 1e-12);
        assert_eq!(binomial_half_sf(4, 5), 0.0);
    }

    #[test]
    fn median_interval_uses_standard_order_statistics() {
        // n = 10 at 95 %: [x_(2), x_(9)], coverage 1 - 2 * 11/1024 = 0.9785.
        let s: Vec<f64> = (1..=10).map(f64::from).collect();
        let (ci, cov) = median_interval(&s, 0.95).unwrap();
        assert_eq!(ci, [2.0, 9.0]);
        assert!((cov - (1.0 - 22.0 / 1024.0)).abs() < 1e-12);
        // n = 20 at 95 %: [x_(6), x_(15)] (coverage 0.9586).
        let s: Vec<f64> = (1..=20).map(f64::from).collect();
        let (ci, cov) = median_interval(&s, 0.95).unwrap();
        assert_eq!(ci, [6.0, 15.0]);
        assert!((cov - 0.958_610_534_667_968_8).abs() < 1e-9, "{cov}");
        // n = 5 cannot reach 95 %: full range, 1 - 2/32.
        let (ci, cov) = median_interval(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95).unwrap();
        assert_eq!(ci, [1.0, 5.0]);
        assert!((cov - 0.9375).abs() < 1e-12);
        assert!(median_interval(&[], 0.95).is_none());
    }

    #[test]
    fn sign_test_counts_sides() {
        let x = [5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0];
        let (above, below) = sign_test(&x, 4.0);
        assert!((above - 1.0 / 1024.0).abs() < 1e-12);
        assert!((below - 1.0).abs() < 1e-12);
        // Ties with the limit drop out: 9 above, 0 below.
        let (above, _) = sign_test(&x, 5.0);
        assert!((above - 1.0 / 512.0).abs() < 1e-12);
    }
}
