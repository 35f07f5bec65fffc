//! The Wilcoxon signed-rank test and its Hodges-Lehmann (Walsh average) interval: the paired
//! rank test the t test replaced, kept for reference.

use statrs::distribution::{ContinuousCDF, Normal};

use crate::stats::finite::Finite;

/// Exact null distribution up to this many non-zero differences (2^50 fits an f64 exactly).
const EXACT_MAX: usize = 50;

/// Result of a signed-rank test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignedRank {
    /// Sum of the ranks of the positive differences.
    pub t_plus: f64,
    /// P(T+ >= observed) under H0: the alternative "shifted up".
    pub p_greater: f64,
    /// P(T+ <= observed) under H0.
    pub p_less: f64,
    /// Exact distribution (no ties, at most 50 non-zero differences) or normal approximation.
    pub exact: bool,
    /// Non-zero differences used.
    pub n: usize,
}

/// Counts of each value of T+ for `n` untied ranks: `counts[t]` = subsets of `1..=n` summing to `t`.
pub(super) fn null_counts(n: usize) -> Vec<f64> {
    let max = n * (n + 1) / 2;
    let mut c = vec![0.0_f64; max + 1];
    c[0] = 1.0;
    for k in 1..=n {
        for t in (k..=max).rev() {
            c[t] += c[t - k];
        }
    }
    c
}

/// Ranks of `|x|` (average ranks for ties) and whether there were ties.
fn abs_ranks(x: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut idx: Vec<usize> = (0..x.len()).collect();
    idx.sort_by(|&a, &b| x[a].abs().total_cmp(&x[b].abs()));
    let mut ranks = vec![0.0; x.len()];
    let mut groups = Vec::new();
    let mut i = 0;
    while i < idx.len() {
        let mut j = i + 1;
        #[expect(clippy::float_cmp, reason = "ties are exact equality by definition")]
        while j < idx.len() && x[idx[j]].abs() == x[idx[i]].abs() {
            j += 1;
        }
        let r = (i + j + 1) as f64 / 2.0;
        for &k in &idx[i..j] {
            ranks[k] = r;
        }
        if j - i > 1 {
            groups.push(j - i);
        }
        i = j;
    }
    (ranks, groups)
}

/// Wilcoxon signed-rank test of "symmetric about 0".
pub fn signed_rank(d: Finite<'_>) -> Option<SignedRank> {
    let nz: Vec<f64> = d.values().iter().copied().filter(|v| *v != 0.0).collect();
    let n = nz.len();
    if n == 0 {
        return Some(SignedRank {
            t_plus: 0.0,
            p_greater: 1.0,
            p_less: 1.0,
            exact: true,
            n: 0,
        });
    }
    let (ranks, ties) = abs_ranks(&nz);
    let t_plus: f64 = nz
        .iter()
        .zip(&ranks)
        .filter(|(v, _)| **v > 0.0)
        .map(|(_, r)| r)
        .sum();
    if ties.is_empty() && n <= EXACT_MAX {
        let c = null_counts(n);
        let total = 2f64.powi(n as i32);
        let t = t_plus.round() as usize;
        let ge: f64 = c[t..].iter().sum();
        let le: f64 = c[..=t].iter().sum();
        return Some(SignedRank {
            t_plus,
            p_greater: (ge / total).min(1.0),
            p_less: (le / total).min(1.0),
            exact: true,
            n,
        });
    }
    let nf = n as f64;
    let mean = nf * (nf + 1.0) / 4.0;
    let tie_term: f64 = ties.iter().map(|&t| (t * t * t - t) as f64).sum::<f64>() / 48.0;
    let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - tie_term;
    let sd = var.max(f64::MIN_POSITIVE).sqrt();
    let z = Normal::standard();
    Some(SignedRank {
        t_plus,
        p_greater: 1.0 - z.cdf((t_plus - mean - 0.5) / sd),
        p_less: z.cdf((t_plus - mean + 0.5) / sd),
        exact: false,
        n,
    })
}

/// Hodges-Lehmann estimate of the centre of `d` with its distribution-free interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WalshInterval {
    pub estimate: f64,
    pub ci: [f64; 2],
    /// Coverage achieved (discrete; below the request when there are too few pairs).
    pub confidence: f64,
}

/// Median of the Walsh averages and the interval between the `k`-th smallest and largest of
/// them, `k` from the signed-rank null distribution (normal approximation above 50 pairs).
pub fn walsh_interval(d: Finite<'_>, confidence: f64) -> Option<WalshInterval> {
    let (n, d) = (d.len(), d.values());
    if n == 0 {
        return None;
    }
    let mut w = Vec::with_capacity(n * (n + 1) / 2);
    for i in 0..n {
        for j in i..n {
            w.push(d[i] / 2.0 + d[j] / 2.0);
        }
    }
    w.sort_by(f64::total_cmp);
    let m = w.len();
    let estimate = if m % 2 == 1 {
        w[m / 2]
    } else {
        w[m / 2 - 1] / 2.0 + w[m / 2] / 2.0
    };
    let tail = (1.0 - confidence) / 2.0;
    let (k, achieved) = if n <= EXACT_MAX {
        let c = null_counts(n);
        let total = 2f64.powi(n as i32);
        // cdf[t] = P(T+ <= t); largest k with P(T+ <= k - 1) <= tail.
        let mut acc = 0.0;
        let mut k = 0;
        for (t, cnt) in c.iter().enumerate() {
            acc += cnt;
            if acc / total <= tail {
                k = t + 1;
            } else {
                break;
            }
        }
        let k = k.max(1);
        let below: f64 = c[..k].iter().sum::<f64>() / total;
        (k, 1.0 - 2.0 * below)
    } else {
        let nf = n as f64;
        let mean = nf * (nf + 1.0) / 4.0;
        let sd = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
        let z = Normal::standard();
        let crit = (mean - 0.5 - z.inverse_cdf(1.0 - tail) * sd).floor();
        let k = if crit >= 0.0 { crit as usize + 1 } else { 1 };
        (k, 1.0 - 2.0 * z.cdf(((k - 1) as f64 + 0.5 - mean) / sd))
    };
    let k = k.min(m.div_ceil(2));
    Some(WalshInterval {
        estimate,
        ci: [w[k - 1], w[m - k]],
        confidence: achieved,
    })
}
