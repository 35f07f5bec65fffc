//! Hodges-Lehmann estimate of the relative shift with its distribution-free (Moses) interval.
//!
//! The model is a shift on the log scale: candidate = baseline x (1 + change). Its Hodges-Lehmann
//! estimate is the median of the `m * n` pairwise ratios `c_j / b_i`, and the interval between two
//! order statistics of those ratios, at ranks taken from the null distribution of the Mann-Whitney
//! U statistic, covers the true ratio with the stated confidence whatever the noise distribution
//! (Lehmann, "Nonparametrics", 1975, ch. 2.6). Working on ratios, not differences of logs, makes
//! the result exactly invariant when both sides are scaled by a power of two and keeps it
//! independent of the sample order; no random numbers are involved.

use statrs::distribution::{ContinuousCDF, Normal};

use super::mannwhitney::NullCache;
use super::summary::median_sorted;

/// A relative change with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shift {
    /// Point estimate of candidate / baseline - 1.
    pub change: f64,
    /// Interval of the change.
    pub ci: [f64; 2],
    /// Coverage the interval really has (the order statistics give discrete levels; with very few
    /// samples it is below the requested one).
    pub confidence: f64,
}

/// 1-based rank `k` such that `[d_(k), d_(mn+1-k)]` of the sorted pairwise ratios is the
/// interval at (at least) `confidence`, and the coverage it achieves. With too few samples for
/// that confidence, `k` is 1 (the full range) and the coverage is what the full range achieves.
pub(crate) fn moses_rank(m: usize, n: usize, confidence: f64, cache: &mut NullCache) -> (usize, f64) {
    let tail = (1.0 - confidence) / 2.0;
    if let Some(cdf) = cache.cdf(m, n) {
        // Largest k with P(U <= k - 1) <= tail.
        let k = cdf.iter().take_while(|&&p| p <= tail).count().max(1);
        return (k, 1.0 - 2.0 * cdf[k - 1]);
    }
    let mn = (m * n) as f64;
    let sd = (mn * (m + n + 1) as f64 / 12.0).sqrt();
    let normal = Normal::standard();
    let z = normal.inverse_cdf(1.0 - tail);
    // P(U <= c) ~ Phi((c + 0.5 - mn/2) / sd) <= tail  <=>  c <= mn/2 - 0.5 - z sd.
    let c = (mn / 2.0 - 0.5 - z * sd).floor();
    let k = if c >= 0.0 { c as usize + 1 } else { 1 };
    let achieved = 1.0 - 2.0 * normal.cdf(((k - 1) as f64 + 0.5 - mn / 2.0) / sd);
    (k, achieved)
}

/// Hodges-Lehmann relative shift of `candidate` against `baseline` and its interval.
///
/// Returns `None` when a side is empty or any value is not finite and strictly positive (a ratio
/// needs a positive baseline; callers explain the reason).
pub fn relative_shift(
    candidate: &[f64],
    baseline: &[f64],
    confidence: f64,
    cache: &mut NullCache,
) -> Option<Shift> {
    let positive = |x: &f64| x.is_finite() && *x > 0.0;
    if candidate.is_empty()
        || baseline.is_empty()
        || !candidate.iter().all(positive)
        || !baseline.iter().all(positive)
    {
        return None;
    }
    let mut ratios: Vec<f64> = Vec::with_capacity(candidate.len() * baseline.len());
    for c in candidate {
        for b in baseline {
            ratios.push(c / b);
        }
    }
    ratios.sort_by(f64::total_cmp);
    let mid = median_sorted(&ratios)?;
    let (k, achieved) = moses_rank(candidate.len(), baseline.len(), confidence, cache);
    let total = ratios.len();
    let k = k.min(total.div_ceil(2));
    let lo = ratios[k - 1];
    let hi = ratios[total - k];
    Some(Shift {
        change: mid - 1.0,
        ci: [lo - 1.0, hi - 1.0],
        confidence: achieved,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_of_a_pure_scaling_is_exact() {
        let base = [100.0, 101.0, 99.5, 100.4, 100.9, 99.8, 100.2, 100.6];
        let cand: Vec<f64> = base.iter().map(|x| x * 1.05).collect();
        let s = relative_shift(&cand, &base, 0.95, &mut NullCache::default()).unwrap();
        assert!((s.change - 0.05).abs() < 0.002, "change {}", s.change);
        assert!(s.ci[0] < 0.05 && s.ci[1] > 0.05, "ci {:?}", s.ci);
        assert!(s.confidence >= 0.95);
    }

    #[test]
    fn moses_ranks_match_tables() {
        let mut c = NullCache::default();
        // Tables of the Wilcoxon rank-sum: for n1 = n2 = 10 the two-sided 5% critical U is 23,
        // so the 95% interval runs from the 24th to the 77th of the 100 ordered differences.
        let (k, conf) = moses_rank(10, 10, 0.95, &mut c);
        assert_eq!(k, 24);
        assert!((0.95..0.96).contains(&conf), "{conf}");
        // 3 v 3 cannot reach 95 %: the full range covers 1 - 2/20 = 90 %.
        let (k, conf) = moses_rank(3, 3, 0.95, &mut c);
        assert_eq!(k, 1);
        assert!((conf - 0.9).abs() < 1e-12);
        // The normal approximation for large samples lands close to the exact rank.
        let (k_exact, _) = moses_rank(50, 50, 0.95, &mut c);
        let (k_approx, conf_approx) = moses_rank(60, 60, 0.95, &mut c);
        assert!(k_exact > 1 && k_approx > k_exact);
        assert!((conf_approx - 0.95).abs() < 0.005);
    }

    #[test]
    fn non_positive_or_empty_sides_have_no_ratio() {
        let mut c = NullCache::default();
        assert!(relative_shift(&[1.0, 2.0], &[0.0, 1.0], 0.95, &mut c).is_none());
        assert!(relative_shift(&[-1.0, 2.0], &[1.0, 1.0], 0.95, &mut c).is_none());
        assert!(relative_shift(&[], &[1.0], 0.95, &mut c).is_none());
        assert!(relative_shift(&[1.0, f64::NAN], &[1.0], 0.95, &mut c).is_none());
    }

    #[test]
    fn covers_the_true_shift_at_the_stated_rate() {
        // Simulation check of the coverage claim: 400 synthetic log-normal pairs, 10 v 10.
        let mut rng = crate::stats::rng::Rng::new(99);
        let mut c = NullCache::default();
        let mut covered = 0;
        let trials = 400;
        for _ in 0..trials {
            let base: Vec<f64> = (0..10).map(|_| 1000.0 * (0.02 * rng.normal()).exp()).collect();
            let cand: Vec<f64> = (0..10).map(|_| 1030.0 * (0.02 * rng.normal()).exp()).collect();
            let s = relative_shift(&cand, &base, 0.95, &mut c).unwrap();
            if s.ci[0] <= 0.03 && 0.03 <= s.ci[1] {
                covered += 1;
            }
        }
        // Expected 95.x %; 400 trials give a standard error of ~1.1 %.
        assert!(covered >= 365, "covered {covered} of {trials}");
    }
}
