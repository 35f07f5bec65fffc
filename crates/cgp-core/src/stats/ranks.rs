//! Ranking of two samples in `O(n log n)` and the exact conditional null distribution of the
//! Mann-Whitney statistic when there are ties.
//!
//! Why not statrs: `statrs::stats_tests::mannwhitneyu` 0.19 ranks ties by comparing every pair
//! (quadratic: a 100k-sample row took 11.7 s, issue 13) and has no exact method with ties. Here
//! both sides are sorted once and merged; each run of equal values is a tie group.
//!
//! The exact distribution with ties is the permutation distribution of `2U` given the tie groups
//! (Lehmann, "Nonparametrics", ch. 1.4): which items of each group belong to which side is
//! random, the group sizes are fixed. It is computed by dynamic programming over the groups in
//! ascending order, state = (items of one side placed so far, partial `2U`), weights =
//! hypergeometric probabilities, with the two prunings of Mehta and Patel's network algorithm:
//! states that can no longer end in the tail are dropped, states that are certain to end in it
//! are added to the answer at once. Work is bounded ([`EXACT_WORK_LIMIT`]); beyond it the normal
//! approximation with tie and continuity correction is used, and the caller is told.

use statrs::distribution::{ContinuousCDF, Normal};
use statrs::function::factorial::ln_binomial;

/// Most DP cell updates one exact tail may take (about 0.1 s); beyond it: normal approximation.
pub(crate) const EXACT_WORK_LIMIT: u64 = 60_000_000;
/// Most DP cells (items of the picked side x reachable `2U` values) one exact tail may hold.
pub(crate) const EXACT_CELL_LIMIT: u64 = 4_000_000;

/// Two samples pooled: the tie groups in ascending order and the candidate's doubled U.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pooled {
    /// Candidate size.
    pub m: usize,
    /// Baseline size.
    pub n: usize,
    /// Per group of equal values, ascending: (candidate items, group size).
    pub groups: Vec<(u32, u32)>,
    /// `2 * U` of the candidate: pairs where the candidate is larger count 2, ties 1.
    pub w: u64,
}

impl Pooled {
    /// Whether any two pooled values are equal.
    pub(crate) fn ties(&self) -> bool {
        self.groups.iter().any(|g| g.1 > 1)
    }

    /// `sum(t^3 - t)` over the tie groups.
    fn tie_term(&self) -> f64 {
        self.groups
            .iter()
            .map(|&(_, t)| {
                let t = f64::from(t);
                t * t * t - t
            })
            .sum()
    }
}

/// Pool two ascending samples, the baseline mapped through `map` (monotone non-decreasing, e.g.
/// `b * 1.03` or `b + 500`), in one merge pass. Callers pass finite, sorted values.
#[expect(
    clippy::float_cmp,
    reason = "ties are exactly equal values; a margin would invent ties"
)]
pub(crate) fn pool_sorted(candidate: &[f64], baseline: &[f64], map: impl Fn(f64) -> f64) -> Pooled {
    let (m, n) = (candidate.len(), baseline.len());
    let mut groups: Vec<(u32, u32)> = Vec::new();
    let mut w: u64 = 0;
    let (mut i, mut j) = (0usize, 0usize);
    // Baseline items in earlier groups.
    let mut below: u64 = 0;
    while i < m || j < n {
        let bj = if j < n { map(baseline[j]) } else { f64::INFINITY };
        let v = if i < m && (j >= n || candidate[i] <= bj) {
            candidate[i]
        } else {
            bj
        };
        let (mut c, mut b) = (0u32, 0u32);
        while i < m && candidate[i] == v {
            c += 1;
            i += 1;
        }
        while j < n && map(baseline[j]) == v {
            b += 1;
            j += 1;
        }
        w += u64::from(c) * (2 * below + u64::from(b));
        below += u64::from(b);
        groups.push((c, c + b));
    }
    Pooled { m, n, groups, w }
}

/// Normal approximation with tie and continuity correction: (P(U >= u), P(U <= u)).
pub(crate) fn normal_tails(p: &Pooled) -> (f64, f64) {
    let (m, n) = (p.m as f64, p.n as f64);
    let big_n = m + n;
    let var = m * n / 12.0 * ((big_n + 1.0) - p.tie_term() / (big_n * (big_n - 1.0)));
    if var.is_nan() || var <= 0.0 {
        // Every value equal: no evidence either way.
        return (1.0, 1.0);
    }
    let sd = var.sqrt();
    let u = p.w as f64 / 2.0;
    let mean = m * n / 2.0;
    let normal = Normal::standard();
    let greater = normal.sf((u - mean - 0.5) / sd);
    let less = normal.cdf((u - mean + 0.5) / sd);
    (greater.min(1.0), less.min(1.0))
}

/// Exact conditional (P(U >= u), P(U <= u)) given the tie groups, or `None` when the work would
/// exceed the limits.
pub(crate) fn exact_tails(p: &Pooled) -> Option<(f64, f64)> {
    let mn2 = 2 * (p.m as u64) * (p.n as u64);
    // P(W_c >= w) = P(W_b <= 2mn - w): the baseline's doubled U is 2mn - W_c.
    let greater = lower_tail(p, false, mn2 - p.w)?;
    let less = lower_tail(p, true, p.w)?;
    Some((greater, less))
}

/// P(W_S <= x) for the side S (candidate when `cand`), taking the cheaper of the direct DP and
/// the complement through the other side.
fn lower_tail(p: &Pooled, cand: bool, x: u64) -> Option<f64> {
    let (k_s, k_o) = if cand { (p.m, p.n) } else { (p.n, p.m) };
    let mn2 = 2 * (p.m as u64) * (p.n as u64);
    if x >= mn2 {
        return Some(1.0);
    }
    if x <= mn2 / 2 {
        return lower_tail_dp(p, k_s, x);
    }
    // P(W_S <= x) = 1 - P(W_S >= x + 1) = 1 - P(W_O <= 2mn - x - 1); here that is >= 1/2, so the
    // complement loses no precision that matters.
    let other = lower_tail_dp(p, k_o, mn2 - x - 1)?;
    Some((1.0 - other).clamp(0.0, 1.0))
}

/// Dynamic programming over the tie groups for P(W_S <= x), S having `k` items (the groups are
/// the same whichever side S is; only its size matters).
fn lower_tail_dp(p: &Pooled, k: usize, x: u64) -> Option<f64> {
    let big_n = p.m + p.n;
    let others = (big_n - k) as u64;
    let width = x as usize + 1;
    if (k as u64 + 1) * (x + 1) > EXACT_CELL_LIMIT {
        return None;
    }
    // dp[d * width + s]: probability of having placed d items of S with partial 2U = s.
    let mut dp = vec![0.0f64; (k + 1) * width];
    dp[0] = 1.0;
    let mut done = 0.0f64;
    let mut placed_items: u64 = 0; // items in earlier groups
    let mut work: u64 = 0;
    let mut row = vec![0.0f64; width];
    // Smallest and largest d with any mass.
    let (mut d_lo, mut d_hi) = (0usize, 0usize);
    for &(_, t) in &p.groups {
        let t = t as usize;
        let remaining = big_n - placed_items as usize; // items in this and later groups
        // Hypergeometric P(d of this group's t items belong to S | r of the remaining belong to S).
        let ln_total = |r: usize| ln_binomial(remaining as u64, r as u64);
        let hyper = |r: usize, d: usize| -> f64 {
            if d > t || d > r || r - d > remaining - t {
                return 0.0;
            }
            (ln_binomial(t as u64, d as u64) + ln_binomial((remaining - t) as u64, (r - d) as u64)
                - ln_total(r))
            .exp()
        };
        let new_hi = (d_hi + t).min(k);
        // Descending over the target row so every source row (d_src < d_new, or the same cell
        // for d = 0) is read before it is overwritten.
        for d_new in (d_lo..=new_hi).rev() {
            let after_items = placed_items + t as u64;
            let r_after = (k - d_new) as u64;
            let nonpicks_before_next = after_items - d_new as u64;
            let min_future = 2 * r_after * nonpicks_before_next;
            let max_future = 2 * r_after * others;
            let d_min_src = d_new.saturating_sub(t).max(d_lo);
            let d_max_src = d_new.min(d_hi);
            row.fill(0.0);
            work += width as u64;
            for d_src in d_min_src..=d_max_src {
                let d = d_new - d_src;
                let h = hyper(k - d_src, d);
                if h == 0.0 {
                    continue;
                }
                let nonpicks_before = placed_items - d_src as u64;
                let inc = d as u64 * (2 * nonpicks_before + (t - d) as u64);
                if inc > x {
                    continue;
                }
                let src = &dp[d_src * width..(d_src + 1) * width];
                let inc = inc as usize;
                work += (width - inc) as u64;
                if work > EXACT_WORK_LIMIT {
                    return None;
                }
                for s in 0..width - inc {
                    let v = src[s];
                    if v != 0.0 {
                        row[s + inc] += v * h;
                    }
                }
            }
            let dst = &mut dp[d_new * width..(d_new + 1) * width];
            for (s, &v) in row.iter().enumerate() {
                let s64 = s as u64;
                if v == 0.0 || s64 + min_future > x {
                    dst[s] = 0.0;
                } else if s64 + max_future <= x {
                    // Every completion stays in the tail.
                    done += v;
                    dst[s] = 0.0;
                } else {
                    dst[s] = v;
                }
            }
        }
        placed_items += t as u64;
        d_hi = new_hi;
        // Rows below d_lo + ... keep mass only if they can still reach k; a row d needs
        // k - d <= items left.
        let left = big_n - placed_items as usize;
        d_lo = k.saturating_sub(left).max(d_lo);
    }
    Some((done + dp[k * width..].iter().sum::<f64>()).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// P(W_c >= w) and P(W_c <= w) by enumerating every split of the pooled values.
    #[expect(clippy::float_cmp, reason = "ties are exactly equal values")]
    fn brute(c: &[f64], b: &[f64]) -> (f64, f64) {
        let pooled: Vec<f64> = c.iter().chain(b).copied().collect();
        let (m, big_n) = (c.len(), pooled.len());
        let w_of = |cand: &[f64], base: &[f64]| -> u64 {
            let mut w = 0;
            for x in cand {
                for y in base {
                    w += if x > y {
                        2
                    } else if x == y {
                        1
                    } else {
                        0
                    };
                }
            }
            w
        };
        let w_obs = w_of(c, b);
        let (mut ge, mut le, mut total) = (0u64, 0u64, 0u64);
        for mask in 0u32..(1 << big_n) {
            if mask.count_ones() as usize != m {
                continue;
            }
            let (x, y): (Vec<f64>, Vec<f64>) = {
                let mut x = Vec::new();
                let mut y = Vec::new();
                for (i, v) in pooled.iter().enumerate() {
                    if mask & (1 << i) != 0 {
                        x.push(*v);
                    } else {
                        y.push(*v);
                    }
                }
                (x, y)
            };
            let w = w_of(&x, &y);
            total += 1;
            ge += u64::from(w >= w_obs);
            le += u64::from(w <= w_obs);
        }
        (ge as f64 / total as f64, le as f64 / total as f64)
    }

    fn sorted(v: &[f64]) -> Vec<f64> {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v
    }

    #[test]
    fn pooling_counts_ties_as_halves() {
        let p = pool_sorted(&[1.0, 2.0, 3.0], &[2.0, 2.0, 5.0], |x| x);
        // 1: below nothing; 2: ties with two baseline 2s (1 + 1); 3: above two.
        assert_eq!(p.w, 2 + 2 * 2);
        assert_eq!(p.groups, vec![(1, 1), (1, 3), (1, 1), (0, 1)]);
        assert!(p.ties());
        let scaled = pool_sorted(&[2.0, 4.0], &[1.0, 2.0], |x| x * 2.0);
        assert_eq!(scaled.groups, vec![(1, 2), (1, 2)]);
        assert_eq!(scaled.w, 1 + 2 + 1);
    }

    #[test]
    fn exact_tails_with_ties_match_enumeration() {
        let mut rng = crate::stats::rng::Rng::new(7);
        for case in 0..300 {
            let m = 1 + case % 6;
            let n = 1 + (case / 6) % 7;
            // Coarse values force ties, within and across the sides.
            let levels = 2 + case % 5;
            let draw = |rng: &mut crate::stats::rng::Rng| (rng.next_f64() * levels as f64).floor();
            let c: Vec<f64> = (0..m).map(|_| draw(&mut rng)).collect();
            let b: Vec<f64> = (0..n).map(|_| draw(&mut rng)).collect();
            let p = pool_sorted(&sorted(&c), &sorted(&b), |x| x);
            let (ge, le) = exact_tails(&p).unwrap();
            let (bge, ble) = brute(&c, &b);
            assert!((ge - bge).abs() < 1e-12, "case {case} {c:?} {b:?}: {ge} vs {bge}");
            assert!((le - ble).abs() < 1e-12, "case {case} {c:?} {b:?}: {le} vs {ble}");
        }
    }

    #[test]
    fn exact_tails_without_ties_match_the_gaussian_binomial() {
        let c: Vec<f64> = (0..9).map(|i| f64::from(i) * 1.7 + 0.3).collect();
        let b: Vec<f64> = (0..12).map(|i| f64::from(i) * 1.3).collect();
        let p = pool_sorted(&c, &b, |x| x);
        assert!(!p.ties());
        let (ge, le) = exact_tails(&p).unwrap();
        let cdf = super::super::mannwhitney::exact_null_cdf(9, 12);
        let u = (p.w / 2) as usize;
        assert!((le - cdf[u]).abs() < 1e-12);
        assert!((ge - cdf[108 - u]).abs() < 1e-12);
    }

    #[test]
    fn scipy_tie_example_exact_and_normal() {
        // x = [1..6], y = [6..10]: one tie across the sides. Enumeration is the reference for
        // the exact value.
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let y = [6.0, 7.0, 8.0, 9.0, 10.0];
        let p = pool_sorted(&x, &y, |v| v);
        let (_, le) = exact_tails(&p).unwrap();
        let (_, ble) = brute(&x, &y);
        assert!((le - ble).abs() < 1e-14);
        // The normal approximation with tie and continuity correction, as scipy computes it
        // (asymptotic, alternative "less"): 0.010411098147110422 / 2.
        let (_, nle) = normal_tails(&p);
        assert!((nle - 0.010_411_098_147_110_422 / 2.0).abs() < 1e-12);
    }

    #[test]
    fn large_samples_are_refused_not_slow() {
        let c: Vec<f64> = (0..3000).map(|i| f64::from(i / 2)).collect();
        let b: Vec<f64> = (0..3000).map(|i| f64::from(i / 2) + 0.5).collect();
        let p = pool_sorted(&c, &b, |x| x);
        assert!(exact_tails(&p).is_none());
        let (g, l) = normal_tails(&p);
        assert!(g > 0.0 && l > 0.0);
    }
}
