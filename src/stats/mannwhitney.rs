//! One-sided Mann-Whitney U test (Wilcoxon rank-sum) of candidate against baseline.
//!
//! Exact null distribution when there are no ties and the samples are small, otherwise the normal
//! approximation with tie and continuity correction from `statrs::stats_tests::mannwhitneyu`.
//!
//! Why not `MannWhitneyUMethod::Automatic` from statrs 0.19.1: it picks its exact method when
//! either side has at most 8 values and there are no ties, and that method (a) enumerates all
//! `C(n1 + n2, min(n1, n2))` splits, which never finishes for 5 candidate values against 1000
//! baseline values, and (b) returns the complement of the p-value whenever the first sample is not
//! the larger one (`calc_mwu_exact_pvalue` returns `1 - P(U >= u)` for `k == n1`; see the test
//! `statrs_exact_complements_when_first_sample_is_not_larger`). The exact distribution here is the
//! Gaussian binomial coefficient, computed in `O(m * m * n)` integer steps.

use std::collections::HashMap;

use statrs::stats_tests::Alternative;
use statrs::stats_tests::mannwhitneyu::{MannWhitneyUMethod, mannwhitneyu};

/// Largest pooled sample size for the exact distribution. `C(100, 50)` ~ 1.0e29 fits an `i128`
/// with room for the intermediate differences; the normal approximation is very good beyond it.
pub const EXACT_MAX_TOTAL: usize = 100;

/// Result of the two one-sided tests of one row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U statistic of the candidate: pairs where the candidate value is larger, ties counting 1/2.
    pub u: f64,
    /// P-value for "candidate values tend to be larger than baseline values".
    pub p_greater: f64,
    /// P-value for "candidate values tend to be smaller than baseline values".
    pub p_less: f64,
    /// Whether the exact null distribution was used (no ties, pooled size within the limit).
    pub exact: bool,
    /// Whether the pooled samples contain ties.
    pub ties: bool,
}

/// Null distributions computed so far, keyed by the two sample sizes (smaller first; the
/// distribution of U is the same either way round).
#[derive(Debug, Default)]
pub struct NullCache {
    cdf: HashMap<(usize, usize), Vec<f64>>,
}

impl NullCache {
    /// `P(U <= k)` for `k = 0..=m*n` under the null, or `None` when `m + n` is over the exact limit
    /// or either side is empty.
    pub fn cdf(&mut self, m: usize, n: usize) -> Option<&[f64]> {
        if m == 0 || n == 0 || m + n > EXACT_MAX_TOTAL {
            return None;
        }
        let key = (m.min(n), m.max(n));
        Some(
            self.cdf
                .entry(key)
                .or_insert_with(|| exact_null_cdf(key.0, key.1)),
        )
    }
}

/// Cumulative null distribution of U for sample sizes `m` and `n`: the coefficients of the
/// Gaussian binomial `[m + n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i)` count the
/// splits with each U. Callers keep `m + n <= EXACT_MAX_TOTAL`.
fn exact_null_cdf(m: usize, n: usize) -> Vec<f64> {
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

/// Mid-ranks of the pooled samples (candidate first) and whether any value ties.
#[expect(
    clippy::float_cmp,
    reason = "ties are exactly equal values; a margin would invent ties"
)]
fn pooled_rank_sum(candidate: &[f64], baseline: &[f64]) -> (f64, bool) {
    let mut pooled: Vec<(f64, bool)> = candidate
        .iter()
        .map(|&x| (x, true))
        .chain(baseline.iter().map(|&x| (x, false)))
        .collect();
    pooled.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut rank_sum = 0.0;
    let mut ties = false;
    let mut i = 0;
    while i < pooled.len() {
        let mut j = i + 1;
        while j < pooled.len() && pooled[j].0 == pooled[i].0 {
            j += 1;
        }
        if j - i > 1 {
            ties = true;
        }
        // Ranks i+1 ..= j share their mean.
        let mid = (i + 1 + j) as f64 / 2.0;
        rank_sum += mid * pooled[i..j].iter().filter(|(_, c)| *c).count() as f64;
        i = j;
    }
    (rank_sum, ties)
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
    let (rank_sum, ties) = pooled_rank_sum(candidate, baseline);
    let u = rank_sum - (m * (m + 1)) as f64 / 2.0;
    if !ties && let Some(cdf) = cache.cdf(m, n) {
        // Without ties U is an integer in 0..=m*n.
        let uu = u.round() as usize;
        let top = m * n;
        return Ok(MannWhitney {
            u,
            // P(U >= u) = P(U <= mn - u) by symmetry.
            p_greater: cdf[top - uu.min(top)],
            p_less: cdf[uu.min(top)],
            exact: true,
            ties,
        });
    }
    let asymptotic = |alt| {
        mannwhitneyu(
            candidate,
            baseline,
            MannWhitneyUMethod::AsymptoticInclContinuityCorrection,
            alt,
        )
        .map(|(_, p)| p)
        .map_err(|e| format!("mann-whitney failed: {e}"))
    };
    Ok(MannWhitney {
        u,
        p_greater: asymptotic(Alternative::Greater)?,
        p_less: asymptotic(Alternative::Less)?,
        exact: false,
        ties,
    })
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
    fn ties_use_the_corrected_normal_approximation() {
        // scipy: mannwhitneyu([1,2,3,4,5,6], [6,7,8,9,10], alternative="less") with the asymptotic
        // method is 0.010411098/2; here the candidate is the first sample.
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let y = [6.0, 7.0, 8.0, 9.0, 10.0];
        let r = mann_whitney(&x, &y, &mut NullCache::default()).unwrap();
        assert!(r.ties && !r.exact);
        assert_eq!(r.u, 0.5);
        assert!((r.p_less - 0.010_411_098_147_110_422 / 2.0).abs() < 1e-12);
        assert!(r.p_greater > 0.99);
    }

    #[test]
    fn large_samples_fall_back_to_the_approximation() {
        let base: Vec<f64> = (0..80).map(|i| f64::from(i) * 1.01).collect();
        let cand: Vec<f64> = (0..30).map(|i| f64::from(i) * 2.53 + 0.1).collect();
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
