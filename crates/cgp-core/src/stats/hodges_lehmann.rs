//! Hodges-Lehmann estimate of the shift with its distribution-free (Moses) interval, relative
//! (`c / b`) or absolute (`c - b`), computed without forming the `m * n` pairwise values.
//!
//! The model is a shift, on the log scale for the relative form: candidate = baseline x
//! (1 + change). The estimate is the median of the `m * n` pairwise ratios `c_j / b_i`, and the
//! interval lies between two order statistics of those ratios, at ranks taken from the null
//! distribution of the Mann-Whitney U statistic; it covers the true ratio with the stated
//! confidence whatever the noise distribution (Lehmann, "Nonparametrics", 1975, ch. 2.6).
//! Ratios rather than differences of logs keep the result exactly invariant when both sides are
//! scaled by a power of two.
//!
//! Selection (issue 13): with both sides sorted, the pairwise values form an implicit matrix
//! sorted along rows and columns, and the number of values `<= x` is counted in `O(m + n)` by
//! walking its staircase. The `k`-th smallest is found by bisection over the IEEE-754 values
//! themselves (their bit patterns are ordered), at most 64 counts, so a selection costs
//! `O(64 (m + n))` and the whole row `O(n log n)` for the sorts. This is exact: the answer is
//! one of the computed pairwise values, bit for bit the element a full sort would put at rank
//! `k` (rounding is monotone, so the computed values are still sorted along rows and columns).
//! It is simpler than Monahan's or Johnson and Mizoguchi's randomized selection in `X + Y` with
//! the same result; no crate provides selection over an implicit sorted matrix.

use statrs::distribution::{ContinuousCDF, Normal};

use super::mannwhitney::NullCache;

/// A change with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shift {
    /// Point estimate: candidate / baseline - 1 (relative) or candidate - baseline (absolute).
    pub change: f64,
    /// Interval of the change.
    pub ci: [f64; 2],
    /// Coverage the interval really has (the order statistics give discrete levels; with very few
    /// samples it is below the requested one).
    pub confidence: f64,
}

/// 1-based rank `k` such that `[d_(k), d_(mn+1-k)]` of the sorted pairwise values is the
/// interval at (at least) `confidence`, and the coverage it achieves. With too few samples for
/// that confidence, `k` is 1 (the full range) and the coverage is what the full range achieves.
pub(crate) fn moses_rank(m: usize, n: usize, confidence: f64, cache: &mut NullCache) -> (u64, f64) {
    let tail = (1.0 - confidence) / 2.0;
    if let Some(cdf) = cache.cdf(m, n) {
        // Largest k with P(U <= k - 1) <= tail.
        let k = cdf.iter().take_while(|&&p| p <= tail).count().max(1);
        return (k as u64, 1.0 - 2.0 * cdf[k - 1]);
    }
    let mn = m as f64 * n as f64;
    let sd = (mn * (m + n + 1) as f64 / 12.0).sqrt();
    let normal = Normal::standard();
    let z = normal.inverse_cdf(1.0 - tail);
    // P(U <= c) ~ Phi((c + 0.5 - mn/2) / sd) <= tail  <=>  c <= mn/2 - 0.5 - z sd.
    let c = (mn / 2.0 - 0.5 - z * sd).floor();
    let k = if c >= 0.0 { c as u64 + 1 } else { 1 };
    let achieved = 1.0 - 2.0 * normal.cdf(((k - 1) as f64 + 0.5 - mn / 2.0) / sd);
    (k, achieved)
}

/// Order-preserving map of finite `f64` to `u64` (the IEEE total order).
fn key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

fn unkey(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// A pairwise operation, non-decreasing in `c` and non-increasing in `b`, with a test
/// `gt(c, b, x)` that is exactly `op(c, b) > x` for the computed (rounded) value.
pub(crate) trait PairOp {
    fn op(&self, c: f64, b: f64) -> f64;
    fn gt(&self, c: f64, b: f64, x: f64) -> bool {
        self.op(c, b) > x
    }
}

/// `c / b` for positive values. The comparison first tries a multiplication (several times
/// faster than a division) with a margin far beyond its rounding error, and divides only when
/// the two are too close to call, so the answer is always that of the rounded quotient.
pub(crate) struct Ratio;

impl PairOp for Ratio {
    fn op(&self, c: f64, b: f64) -> f64 {
        c / b
    }
    fn gt(&self, c: f64, b: f64, x: f64) -> bool {
        let xb = x * b;
        if c > xb * (1.0 + 1e-12) {
            true
        } else if c < xb * (1.0 - 1e-12) {
            false
        } else {
            c / b > x
        }
    }
}

/// `c - b`.
pub(crate) struct Difference;

impl PairOp for Difference {
    fn op(&self, c: f64, b: f64) -> f64 {
        c - b
    }
}

impl<F: Fn(f64, f64) -> f64> PairOp for F {
    fn op(&self, c: f64, b: f64) -> f64 {
        self(c, b)
    }
}

/// How many `op(c_j, b_i)` are `<= x`, both sides sorted ascending.
fn count_le(c: &[f64], b: &[f64], x: f64, op: &impl PairOp) -> u64 {
    let n = b.len();
    let mut p = 0usize;
    let mut count = 0u64;
    for &cj in c {
        // {i : op(cj, b_i) <= x} is a suffix [p, n), and p only moves right as cj grows.
        while p < n && op.gt(cj, b[p], x) {
            p += 1;
        }
        count += (n - p) as u64;
    }
    count
}

/// The smallest `op(c_j, b_i)` that is `> x` (`None` when there is none), in `O(m + n)`.
fn next_above(c: &[f64], b: &[f64], x: f64, op: &impl PairOp) -> Option<f64> {
    let n = b.len();
    let mut p = 0usize;
    let mut best: Option<f64> = None;
    for &cj in c {
        while p < n && op.gt(cj, b[p], x) {
            p += 1;
        }
        // b[p - 1] is the largest b with op(cj, b) > x: the smallest such value for this cj.
        if p > 0 {
            let v = op.op(cj, b[p - 1]);
            best = Some(best.map_or(v, |w: f64| w.min(v)));
        }
    }
    best
}

/// The `k`-th smallest (1-based, `1 <= k <= m n`) of `op(c_j, b_i)` over sorted, non-empty
/// sides, without forming them.
pub(crate) fn select_kth(c: &[f64], b: &[f64], k: u64, op: &impl PairOp) -> f64 {
    let (Some(&c0), Some(&c1), Some(&b0), Some(&b1)) = (c.first(), c.last(), b.first(), b.last()) else {
        return f64::NAN;
    };
    let (mut lo, mut hi) = (key(op.op(c0, b1)), key(op.op(c1, b0)));
    // Invariant: count_le(unkey(hi)) >= k (hi is the largest value).
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if count_le(c, b, unkey(mid), op) >= k {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    // -0.0 and +0.0 compare equal, so the bisection stops at -0.0 when the value is a zero;
    // the pairwise values of non-negative-zero inputs are +0.0.
    let v = unkey(lo);
    if v == 0.0 { 0.0 } else { v }
}

/// Median, the `k`-th smallest and the `(mn + 1 - k)`-th smallest of the pairwise values.
fn estimate(c: &[f64], b: &[f64], k: u64, op: &impl PairOp) -> (f64, [f64; 2]) {
    let total = c.len() as u64 * b.len() as u64;
    let mid = if total % 2 == 1 {
        select_kth(c, b, total.div_ceil(2), op)
    } else {
        // The (total/2 + 1)-th is the same value when it repeats, else the next value above:
        // one count and one scan instead of a second selection.
        let a = select_kth(c, b, total / 2, op);
        let next = if count_le(c, b, a, op) > total / 2 {
            a
        } else {
            next_above(c, b, a, op).unwrap_or(a)
        };
        // As `median_sorted`: halve first so two huge values cannot overflow.
        a / 2.0 + next / 2.0
    };
    let k = k.clamp(1, total.div_ceil(2));
    let lo = select_kth(c, b, k, op);
    let hi = select_kth(c, b, total + 1 - k, op);
    (mid, [lo, hi])
}

fn sorted(v: &[f64]) -> Vec<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Hodges-Lehmann relative shift of sorted, positive, finite sides (callers check).
pub(crate) fn relative_shift_sorted(c: &[f64], b: &[f64], confidence: f64, cache: &mut NullCache) -> Shift {
    let (k, achieved) = moses_rank(c.len(), b.len(), confidence, cache);
    let (mid, [lo, hi]) = estimate(c, b, k, &Ratio);
    Shift {
        change: mid - 1.0,
        ci: [lo - 1.0, hi - 1.0],
        confidence: achieved,
    }
}

/// Hodges-Lehmann absolute shift (candidate - baseline) of sorted, finite sides.
pub(crate) fn absolute_shift_sorted(c: &[f64], b: &[f64], confidence: f64, cache: &mut NullCache) -> Shift {
    let (k, achieved) = moses_rank(c.len(), b.len(), confidence, cache);
    let (mid, ci) = estimate(c, b, k, &Difference);
    Shift {
        change: mid,
        ci,
        confidence: achieved,
    }
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
    Some(relative_shift_sorted(
        &sorted(candidate),
        &sorted(baseline),
        confidence,
        cache,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summary::median_sorted;
    use proptest::prelude::*;

    /// The textbook computation: form and sort every pairwise value.
    fn naive(c: &[f64], b: &[f64], k: u64, op: impl Fn(f64, f64) -> f64) -> (f64, [f64; 2]) {
        let mut all: Vec<f64> = c.iter().flat_map(|x| b.iter().map(|y| op(*x, *y))).collect();
        all.sort_by(f64::total_cmp);
        let total = all.len();
        let k = (k as usize).clamp(1, total.div_ceil(2));
        (median_sorted(&all).unwrap(), [all[k - 1], all[total - k]])
    }

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
        let (k_exact, _) = moses_rank(300, 300, 0.95, &mut c);
        let (k_approx, conf_approx) = moses_rank(400, 400, 0.95, &mut c);
        assert!(k_exact > 1 && k_approx > k_exact);
        assert!((conf_approx - 0.95).abs() < 0.001);
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
    fn keys_keep_the_order_of_floats() {
        let xs = [-1e300, -2.5, -0.0, 0.0, 1e-310, 3.0, 1e300];
        for w in xs.windows(2) {
            assert!(key(w[0]) <= key(w[1]), "{w:?}");
        }
        for x in xs {
            assert_eq!(unkey(key(x)).to_bits(), x.to_bits());
        }
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn selection_equals_sorting_every_pair(
            c in prop::collection::vec(0.001f64..1e6, 1..40),
            b in prop::collection::vec(0.001f64..1e6, 1..40),
            coarse in any::<bool>(),
            kq in 0.0f64..1.0,
        ) {
            // Coarse values make many equal pairwise values (ties), the hard case for selection.
            let round = |v: Vec<f64>| -> Vec<f64> {
                if coarse { v.into_iter().map(|x| (x / 1e5).ceil()).collect() } else { v }
            };
            let (c, b) = (sorted(&round(c)), sorted(&round(b)));
            let total = (c.len() * b.len()) as u64;
            let k = 1 + (kq * total as f64) as u64 % total;
            fn check(c: &[f64], b: &[f64], k: u64, op: &impl PairOp) -> Result<(), TestCaseError> {
                let (mid, ci) = estimate(c, b, k, op);
                let (want_mid, want_ci) = naive(c, b, k, |x, y| op.op(x, y));
                prop_assert_eq!(mid.to_bits(), want_mid.to_bits());
                prop_assert_eq!(ci[0].to_bits(), want_ci[0].to_bits());
                prop_assert_eq!(ci[1].to_bits(), want_ci[1].to_bits());
                // Every rank, not only the median and the interval ends.
                let mut all: Vec<f64> = c.iter().flat_map(|x| b.iter().map(|y| op.op(*x, *y))).collect();
                all.sort_by(f64::total_cmp);
                prop_assert_eq!(select_kth(c, b, k, op).to_bits(), all[k as usize - 1].to_bits());
                Ok(())
            }
            check(&c, &b, k, &Ratio)?;
            check(&c, &b, k, &Difference)?;
        }
    }
}
