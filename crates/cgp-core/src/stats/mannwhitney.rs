//! One-sided Mann-Whitney U tests (Wilcoxon rank-sum) of candidate against baseline, optionally
//! against the baseline shifted by the threshold (`baseline x 1.03`, `baseline + 500 ns`).
//!
//! p-values are exact whenever that is affordable: without ties from the Gaussian binomial
//! coefficient (cached per sample-size pair), with ties from the exact conditional distribution
//! given the tie groups ([`super::ranks`]). Beyond the work limits the normal approximation with
//! tie and continuity correction is used, and `exact` says so. Ranking is one sort and a merge,
//! `O(n log n)`.
//!
//! Why not statrs 0.19.1's `mannwhitneyu`: its `Automatic` method enumerates all
//! `C(n1 + n2, min(n1, n2))` splits when a side has at most 8 values (5 against 1000 never
//! finishes) and returns the complement of the p-value when the first sample is not the larger
//! one (`statrs_exact_complements_when_first_sample_is_not_larger` pins this); its tie handling
//! compares every pair of values (quadratic, issue 13) and it has no exact method with ties.

use std::collections::HashMap;

use super::ranks::{Pooled, exact_tails, normal_tails, pool_sorted};

/// Largest pooled sample size for the exact integer (`i128`) distribution without ties.
pub(crate) const EXACT_MAX_TOTAL: usize = 100;
/// Largest `min(m, n) * m * n` (the work of the Gaussian binomial) for the floating-point exact
/// distribution without ties above [`EXACT_MAX_TOTAL`]: 300 v 300 takes about 30 ms, once per
/// size pair.
pub(crate) const EXACT_MAX_WORK: usize = 30_000_000;
/// Largest pooled size for the floating-point distribution (`C(1000, 500)` ~ 2.7e299 fits f64).
pub(crate) const EXACT_MAX_TOTAL_F64: usize = 1000;

/// Result of the two one-sided tests of one row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U statistic of the candidate: pairs where the candidate value is larger, ties counting 1/2.
    pub u: f64,
    /// P-value for "candidate values tend to be larger than baseline values".
    pub p_greater: f64,
    /// P-value for "candidate values tend to be smaller than baseline values".
    pub p_less: f64,
    /// Whether the p-values are exact (without ties: the null distribution; with ties: the
    /// conditional one given the tie groups).
    pub exact: bool,
    /// Whether the pooled samples contain ties.
    pub ties: bool,
}

/// Null distributions (no ties) computed so far, keyed by the two sample sizes (smaller first;
/// the distribution of U is the same either way round).
#[derive(Debug, Default)]
pub struct NullCache {
    cdf: HashMap<(usize, usize), Vec<f64>>,
}

impl NullCache {
    /// `P(U <= k)` for `k = 0..=m*n` under the null without ties, or `None` when that is beyond
    /// the exact limits or either side is empty.
    pub(crate) fn cdf(&mut self, m: usize, n: usize) -> Option<&[f64]> {
        let key = (m.min(n), m.max(n));
        if key.0 == 0 {
            return None;
        }
        let total = m + n;
        let work = key.0.saturating_mul(m.saturating_mul(n));
        if total > EXACT_MAX_TOTAL && (total > EXACT_MAX_TOTAL_F64 || work > EXACT_MAX_WORK) {
            return None;
        }
        Some(self.cdf.entry(key).or_insert_with(|| {
            if total <= EXACT_MAX_TOTAL {
                exact_null_cdf(key.0, key.1)
            } else {
                exact_null_cdf_f64(key.0, key.1)
            }
        }))
    }
}

/// Cumulative null distribution of U for sample sizes `m` and `n`: the coefficients of the
/// Gaussian binomial `[m + n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i)` count the
/// splits with each U. Callers keep `m + n <= EXACT_MAX_TOTAL`.
pub(crate) fn exact_null_cdf(m: usize, n: usize) -> Vec<f64> {
    let top = m * n;
    let mut a = vec![0i128; top + 1];
    a[0] = 1;
    for i in 1..=m {
        // Multiply by (1 - q^(n+i)), high coefficients first so each reads the old value. Terms
        // above degree m*n are dropped: the final polynomial has none, and truncated power-series
        // multiplication and division never feed high terms into low ones.
        let s = n + i;
        for k in (s..=top).rev() {
            a[k] -= a[k - s];
        }
        // Divide by (1 - q^i): b[k] = a[k] + b[k - i].
        for k in i..=top {
            a[k] += a[k - i];
        }
    }
    let total: i128 = a.iter().sum();
    let mut acc = 0i128;
    a.iter()
        .map(|c| {
            acc += c;
            acc as f64 / total as f64
        })
        .collect()
}

/// The same recursion in `f64` for pooled sizes above 100 (the counts overflow `i128`). The lower
/// half of the cdf is summed from the small end and the upper half taken by symmetry, so tail
/// probabilities keep their relative precision.
fn exact_null_cdf_f64(m: usize, n: usize) -> Vec<f64> {
    let top = m * n;
    let mut a = vec![0f64; top + 1];
    a[0] = 1.0;
    for i in 1..=m {
        let s = n + i;
        for k in (s..=top).rev() {
            a[k] -= a[k - s];
        }
        for k in i..=top {
            a[k] += a[k - i];
        }
    }
    // Round-off can leave tiny negative counts where the true count is small but positive.
    for v in &mut a {
        *v = v.max(0.0);
    }
    let total: f64 = a.iter().sum();
    let mut cdf = vec![0.0; top + 1];
    let mut acc = 0.0;
    for k in 0..=top / 2 {
        acc += a[k];
        cdf[k] = acc / total;
    }
    // P(U <= k) = 1 - P(U <= top - k - 1) by symmetry.
    for k in top / 2 + 1..top {
        cdf[k] = 1.0 - cdf[top - k - 1];
    }
    cdf[top] = 1.0;
    cdf
}

/// Both one-sided tests from pooled samples.
fn tests_of(p: &Pooled, cache: &mut NullCache) -> MannWhitney {
    let u = p.w as f64 / 2.0;
    let ties = p.ties();
    if !ties && let Some(cdf) = cache.cdf(p.m, p.n) {
        // Without ties U is an integer in 0..=m*n.
        let uu = (p.w / 2) as usize;
        let top = p.m * p.n;
        return MannWhitney {
            u,
            // P(U >= u) = P(U <= mn - u) by symmetry.
            p_greater: cdf[top - uu.min(top)],
            p_less: cdf[uu.min(top)],
            exact: true,
            ties,
        };
    }
    if ties && let Some((p_greater, p_less)) = exact_tails(p) {
        return MannWhitney {
            u,
            p_greater,
            p_less,
            exact: true,
            ties,
        };
    }
    let (p_greater, p_less) = normal_tails(p);
    MannWhitney {
        u,
        p_greater,
        p_less,
        exact: false,
        ties,
    }
}

/// Both one-sided tests of sorted, finite, non-empty `candidate` against sorted `baseline`
/// mapped through `map` (monotone non-decreasing: `|b| b * 1.03` tests "candidate larger than
/// baseline x 1.03").
pub(crate) fn mann_whitney_sorted(
    candidate: &[f64],
    baseline: &[f64],
    map: impl Fn(f64) -> f64,
    cache: &mut NullCache,
) -> MannWhitney {
    tests_of(&pool_sorted(candidate, baseline, map), cache)
}

/// Both one-sided Mann-Whitney tests of `candidate` against `baseline`.
///
/// # Errors
/// A reason when a side is empty or a value is not finite (callers check both first; this keeps
/// the function safe on its own).
pub fn mann_whitney(
    candidate: &[f64],
    baseline: &[f64],
    cache: &mut NullCache,
) -> Result<MannWhitney, String> {
    let (m, n) = (candidate.len(), baseline.len());
    if m == 0 || n == 0 {
        return Err("mann-whitney needs samples on both sides".to_owned());
    }
    if candidate.iter().chain(baseline).any(|x| !x.is_finite()) {
        return Err("mann-whitney needs finite samples".to_owned());
    }
    let mut c = candidate.to_vec();
    let mut b = baseline.to_vec();
    c.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    Ok(mann_whitney_sorted(&c, &b, |x| x, cache))
}

#[cfg(test)]
#[expect(clippy::float_cmp, reason = "U statistics are exact integers or halves")]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn exact_distribution_matches_hand_counts() {
        // m=2, n=3: [5 choose 2]_q = 1 + q + 2q^2 + 2q^3 + 2q^4 + q^5 + q^6.
        let cdf = exact_null_cdf(2, 3);
        let want = [1.0, 2.0, 4.0, 6.0, 8.0, 9.0, 10.0].map(|c| c / 10.0);
        assert_eq!(cdf.len(), 7);
        for (got, want) in cdf.iter().zip(want) {
            assert!(close(*got, want), "{got} vs {want}");
        }
        // 10 v 10: P(U <= 0) = 1 / C(20, 10).
        let cdf = exact_null_cdf(10, 10);
        assert!(close(cdf[0], 1.0 / 184_756.0));
        assert!(close(cdf[100], 1.0));
        // The largest supported case still sums to one and is symmetric.
        let cdf = exact_null_cdf(50, 50);
        assert!(close(cdf[2500], 1.0));
        assert!((cdf[1249] - (1.0 - cdf[1250])).abs() < 1e-12);
    }

    #[test]
    fn matches_scipy_exact_values() {
        // scipy.stats.mannwhitneyu([5,2,7,8,9,3,11,12], [1,6,10,4], method="exact"):
        // U = 21, greater 0.23030303, less 0.81616162.
        let x = [5.0, 2.0, 7.0, 8.0, 9.0, 3.0, 11.0, 12.0];
        let y = [1.0, 6.0, 10.0, 4.0];
        let mut cache = NullCache::default();
        let r = mann_whitney(&x, &y, &mut cache).unwrap();
        assert!(r.exact && !r.ties);
        assert_eq!(r.u, 21.0);
        assert!((r.p_greater - 0.230_303_030_303_030_3).abs() < 1e-12);
        assert!((r.p_less - 0.816_161_616_161_616_1).abs() < 1e-12);
        // Swapping the sides swaps the alternatives.
        let s = mann_whitney(&y, &x, &mut cache).unwrap();
        assert!(close(s.p_greater, r.p_less) && close(s.p_less, r.p_greater));
    }

    #[test]
    fn complete_separation_gives_the_smallest_p() {
        let base: Vec<f64> = (0..10).map(|i| 100.0 + f64::from(i)).collect();
        let cand: Vec<f64> = base.iter().map(|x| x + 50.0).collect();
        let r = mann_whitney(&cand, &base, &mut NullCache::default()).unwrap();
        assert_eq!(r.u, 100.0);
        assert!(close(r.p_greater, 1.0 / 184_756.0));
        assert!(close(r.p_less, 1.0));
    }

    #[test]
    fn ties_get_the_exact_conditional_p_value() {
        // One tie across the sides: the p-value is exact (enumeration in ranks.rs checks the
        // method); it is smaller than the normal approximation's 0.010411098147110422 / 2.
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let y = [6.0, 7.0, 8.0, 9.0, 10.0];
        let r = mann_whitney(&x, &y, &mut NullCache::default()).unwrap();
        assert!(r.ties && r.exact);
        assert_eq!(r.u, 0.5);
        // Enumerating the C(11, 6) = 462 splits of the pooled values: 2 have U <= 0.5.
        assert!(close(r.p_less, 2.0 / 462.0), "{}", r.p_less);
        assert!(r.p_greater > 0.99);
    }

    #[test]
    fn floating_point_distribution_matches_the_integer_one() {
        let exact = exact_null_cdf(40, 60);
        let float = exact_null_cdf_f64(40, 60);
        for (k, (a, b)) in exact.iter().zip(&float).enumerate() {
            let tol = 1e-9 * a.min(1.0 - a).max(1e-300) + 1e-15;
            assert!((a - b).abs() <= tol.max(a * 1e-9), "k {k}: {a} vs {b}");
        }
        // Beyond the integer limit: sums to one, symmetric, a tiny but positive smallest tail
        // (1 / C(260, 60)); sizes beyond the work limit have no exact distribution.
        let mut c = NullCache::default();
        let cdf = c.cdf(60, 200).unwrap().to_vec();
        assert!(close(cdf[12_000], 1.0));
        assert!((cdf[5999] - (1.0 - cdf[6000])).abs() < 1e-9);
        assert!(cdf[0] > 0.0 && cdf[0] < 1e-50);
        assert!(c.cdf(400, 400).is_none());
    }

    #[test]
    fn large_samples_fall_back_to_the_approximation() {
        let base: Vec<f64> = (0..800).map(|i| f64::from(i) * 1.01).collect();
        let cand: Vec<f64> = (0..300).map(|i| f64::from(i) * 2.53 + 0.1).collect();
        let r = mann_whitney(&cand, &base, &mut NullCache::default()).unwrap();
        assert!(!r.exact);
        assert!(r.p_greater > 0.0 && r.p_greater < 1.0);
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let mut c = NullCache::default();
        assert!(mann_whitney(&[], &[1.0], &mut c).is_err());
        assert!(mann_whitney(&[1.0, f64::NAN], &[1.0], &mut c).is_err());
    }

    #[test]
    fn statrs_exact_complements_when_first_sample_is_not_larger() {
        use statrs::stats_tests::Alternative;
        use statrs::stats_tests::mannwhitneyu::{MannWhitneyUMethod, mannwhitneyu};
        // Why the exact path is our own: x entirely below y, so P(U1 >= 0) is 1 for "greater", but
        // statrs 0.19.1 returns its complement when len(x) <= len(y). If this starts failing, statrs
        // fixed it and the workaround can be revisited.
        let (_, p) = mannwhitneyu(
            &[1.0, 2.0],
            &[3.0, 4.0],
            MannWhitneyUMethod::Exact,
            Alternative::Greater,
        )
        .unwrap();
        assert!(p < 0.01, "statrs exact gave {p}");
        let ours = mann_whitney(&[1.0, 2.0], &[3.0, 4.0], &mut NullCache::default()).unwrap();
        assert!(close(ours.p_greater, 1.0));
    }
}
