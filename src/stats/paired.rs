//! Paired comparison for `ab`: base and head measured in alternation on one GPU, pair `i` being
//! the `i`-th repetition of each side.
//!
//! Each pair gives a log ratio `d_i = ln(head_i / base_i)` of the two runs' (processes') levels,
//! each the median of that run's launches after its warm-up; whatever slowed both runs of a pair
//! (clock state, temperature, a neighbour on the machine) cancels in it. The test is the paired
//! t test on the `d_i` (mean, standard error `sd / sqrt(n)`, `n - 1` degrees of freedom), after
//! leaving out pairs beyond Tukey's fences on either side (at most a fifth, from 5 pairs on: a
//! process that ran slow on one side only). Unlike the signed-rank test it replaced (kept below
//! for reference), its p-value has no floor of `2^-n`: 8 pairs whose shift interval is
//! [+11.2 %, +11.7 %] are a regression against a 3 % threshold (docs/statistics.md, 2.7).
//!
//! The decision is against the threshold `T`, not zero: a regression needs the t test of
//! `d - ln(1 + T)` to be significant after Holm over the run (equivalently, the one-sided
//! interval lies beyond `T`); a pass needs the two-sided interval to lie within `T`; an
//! improvement mirrors the regression with `ln(1 - T)`. Everything else is inconclusive.

use statrs::distribution::{ContinuousCDF, Normal};

use super::row::{Method, RowVerdict};
use crate::foundation::units::{Percent, percent};

use super::multiple::holm;

/// Fewer pairs than this: no test.
pub const MIN_PAIRS: usize = 3;

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
fn null_counts(n: usize) -> Vec<f64> {
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

/// Wilcoxon signed-rank test of "symmetric about 0". `None` for non-finite input.
pub fn signed_rank(d: &[f64]) -> Option<SignedRank> {
    if d.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let nz: Vec<f64> = d.iter().copied().filter(|v| *v != 0.0).collect();
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
pub fn walsh_interval(d: &[f64], confidence: f64) -> Option<WalshInterval> {
    let n = d.len();
    if n == 0 || d.iter().any(|v| !v.is_finite()) {
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

/// One paired row to judge.
#[derive(Debug, Clone)]
pub struct PairedRow<'a> {
    /// Per-pair values of the base side (one per repetition, e.g. the repetition's median).
    pub base: &'a [f64],
    /// Per-pair values of the head side, same length and order as `base`.
    pub head: &'a [f64],
    /// Relative tolerance `T`: the threshold.
    pub tolerance: f64,
    /// `min_effect` in the pairs' unit (0: none). As in `check`, a regression (improvement) must
    /// be beyond both `T` and `min_effect`: the absolute differences `head - base` are tested
    /// against it too (intersection-union), and a row passes when either interval rules a
    /// change beyond its bound out.
    pub min_effect: f64,
    /// How `T` is described in reasons, e.g. `3% threshold`.
    pub tolerance_text: String,
    /// True when lower is better (durations), false when higher is better (throughputs).
    pub lower_is_better: bool,
    /// `exact` threshold on a noisy metric: judged by the test against zero alone.
    pub exact_kind: bool,
}

/// The verdict of one paired row.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedJudgement {
    pub verdict: RowVerdict,
    /// `paired-t`, `exact` (both sides constant) or `none`.
    pub method: Method,
    /// Hodges-Lehmann estimate of head / base - 1.
    pub change: Option<f64>,
    pub change_ci: Option<[f64; 2]>,
    pub confidence: f64,
    /// One-sided p-value in the regression direction, against the threshold, unadjusted.
    pub p: Option<f64>,
    pub p_adjusted: Option<f64>,
    pub reason: String,
    pub pairs: usize,
}

struct Prepared {
    j: PairedJudgement,
    /// p of "worse than T", p of "better than T".
    p: Option<(f64, f64)>,
    /// Interval of d in log space.
    ci: [f64; 2],
    estimate: f64,
    up: f64,
    down: f64,
    lower_is_better: bool,
    exact_kind: bool,
    tolerance_text: String,
    /// Pairs left out as outliers of the differences.
    left_out: usize,
    /// `min_effect` and the interval of the absolute differences `head - base`, when set.
    effect: Option<(f64, WalshInterval)>,
}

/// The paired t statistic of log ratios: their mean, standard error and degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedT {
    pub mean: f64,
    pub se: f64,
    pub df: f64,
}

impl PairedT {
    fn dist(&self) -> Option<statrs::distribution::StudentsT> {
        statrs::distribution::StudentsT::new(0.0, 1.0, self.df.max(1.0)).ok()
    }

    /// P(mean this large or larger | true mean `at`).
    pub fn p_greater(&self, at: f64) -> f64 {
        if self.se == 0.0 {
            return if self.mean > at { 0.0 } else { 1.0 };
        }
        self.dist()
            .map_or(1.0, |d| 1.0 - d.cdf((self.mean - at) / self.se))
    }

    /// P(mean this small or smaller | true mean `at`).
    pub fn p_less(&self, at: f64) -> f64 {
        if self.se == 0.0 {
            return if self.mean < at { 0.0 } else { 1.0 };
        }
        self.dist().map_or(1.0, |d| d.cdf((self.mean - at) / self.se))
    }

    /// Two-sided interval of the mean at `confidence`.
    pub fn interval(&self, confidence: f64) -> [f64; 2] {
        let q = self
            .dist()
            .map_or(f64::INFINITY, |d| d.inverse_cdf(0.5 + confidence / 2.0));
        let h = if self.se == 0.0 { 0.0 } else { q * self.se };
        [self.mean - h, self.mean + h]
    }
}

/// One-sample t of `d` (at least 2 finite values).
pub fn paired_t(d: &[f64]) -> Option<PairedT> {
    let n = d.len();
    if n < 2 || d.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let nf = n as f64;
    let mean = d.iter().sum::<f64>() / nf;
    let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (nf - 1.0);
    Some(PairedT {
        mean,
        se: (var / nf).sqrt(),
        df: nf - 1.0,
    })
}

/// `d` without the values beyond Tukey's fences (both tails), at most a fifth of them, from 5
/// values on; and how many were left out.
fn trim_pairs(d: &[f64]) -> (Vec<f64>, usize) {
    let n = d.len();
    if n < 5 {
        return (d.to_vec(), 0);
    }
    let mut s = d.to_vec();
    s.sort_by(f64::total_cmp);
    let (Some(q1), Some(q3)) = (
        super::order::quantile_sorted(&s, 0.25),
        super::order::quantile_sorted(&s, 0.75),
    ) else {
        return (d.to_vec(), 0);
    };
    let k = super::outliers::TUKEY_K * (q3 - q1);
    let (lo, hi) = (q1 - k, q3 + k);
    let centre = (q1 + q3) / 2.0;
    let cap = (n as f64 * 0.2).floor() as usize;
    let mut out: Vec<usize> = (0..n).filter(|&i| d[i] < lo || d[i] > hi).collect();
    // The farthest first.
    out.sort_by(|&a, &b| (d[b] - centre).abs().total_cmp(&(d[a] - centre).abs()));
    out.truncate(cap);
    let kept = (0..n).filter(|i| !out.contains(i)).map(|i| d[i]).collect();
    (kept, out.len())
}

fn done(verdict: RowVerdict, reason: String, pairs: usize, confidence: f64) -> Prepared {
    Prepared {
        j: PairedJudgement {
            verdict,
            method: Method::None,
            change: None,
            change_ci: None,
            confidence,
            p: None,
            p_adjusted: None,
            reason,
            pairs,
        },
        p: None,
        ci: [0.0, 0.0],
        estimate: 0.0,
        up: 0.0,
        down: 0.0,
        lower_is_better: true,
        exact_kind: false,
        tolerance_text: String::new(),
        left_out: 0,
        effect: None,
    }
}

fn prepare(row: &PairedRow<'_>, confidence: f64) -> Prepared {
    let n = row.base.len().min(row.head.len());
    if row.base.len() != row.head.len() {
        return done(
            RowVerdict::Error,
            format!(
                "internal: {} base and {} head values cannot be paired",
                row.base.len(),
                row.head.len()
            ),
            n,
            confidence,
        );
    }
    let positive = |x: &f64| x.is_finite() && *x > 0.0;
    if !row.base.iter().chain(row.head).all(|x| x.is_finite()) {
        return done(
            RowVerdict::Error,
            "non-finite values in the pairs; check the profiler output".to_owned(),
            n,
            confidence,
        );
    }
    if !(row.tolerance.is_finite() && row.tolerance >= 0.0) {
        return done(
            RowVerdict::Error,
            format!("invalid tolerance {}", row.tolerance),
            n,
            confidence,
        );
    }
    if n < MIN_PAIRS {
        return done(
            RowVerdict::Inconclusive,
            format!("not enough data: need at least {MIN_PAIRS} pairs, have {n}; raise repetitions"),
            n,
            confidence,
        );
    }
    if !row.base.iter().chain(row.head).all(positive) {
        return done(
            RowVerdict::Inconclusive,
            "a ratio needs positive values and this metric has values <= 0; use a min/max threshold"
                .to_owned(),
            n,
            confidence,
        );
    }
    let d_all: Vec<f64> = row.base.iter().zip(row.head).map(|(b, h)| (h / b).ln()).collect();
    // A pair where one side's process ran slow (a clock dip, a neighbour) is an outlier of the
    // differences on either side: Tukey's fences on both tails, at most a fifth of the pairs,
    // from 5 pairs on. Symmetric, so under no change it removes as much on each side.
    let (d, left_out) = trim_pairs(&d_all);
    let Some(tt) = paired_t(&d) else {
        return done(
            RowVerdict::Error,
            "internal: no interval".to_owned(),
            n,
            confidence,
        );
    };
    let w = WalshInterval {
        estimate: tt.mean,
        ci: tt.interval(confidence),
        confidence,
    };
    let t = if row.exact_kind { 0.0 } else { row.tolerance };
    let up = t.ln_1p();
    let down = if t < 1.0 { (-t).ln_1p() } else { f64::NEG_INFINITY };
    // Worse-than-T and better-than-T, each a one-sided t test against the shifted null.
    let (bad_shift, good_shift) = if row.lower_is_better {
        (up, down)
    } else {
        (down, up)
    };
    let test = |shift: f64, worse_is_up: bool| -> f64 {
        if !shift.is_finite() {
            return 1.0;
        }
        if worse_is_up {
            tt.p_greater(shift)
        } else {
            tt.p_less(shift)
        }
    };
    let mut p_bad = test(bad_shift, row.lower_is_better);
    let mut p_good = test(good_shift, !row.lower_is_better);
    // Intersection-union with `min_effect`, as `check` tests it: beyond the threshold AND beyond
    // the absolute effect needs both tests.
    let effect = if row.min_effect > 0.0 && row.min_effect.is_finite() {
        let a: Vec<f64> = row.base.iter().zip(row.head).map(|(b, h)| h - b).collect();
        // The same paired t as the ratios (no 2^-n floor), on the absolute differences.
        let at = paired_t(&a);
        let abs_test = |shift: f64, greater: bool| {
            at.map_or(1.0, |t| {
                if greater {
                    t.p_greater(shift)
                } else {
                    t.p_less(shift)
                }
            })
        };
        let e = row.min_effect;
        let (pb, pg) = if row.lower_is_better {
            (abs_test(e, true), abs_test(-e, false))
        } else {
            (abs_test(-e, false), abs_test(e, true))
        };
        p_bad = p_bad.max(pb);
        p_good = p_good.max(pg);
        at.map(|t| {
            (
                e,
                WalshInterval {
                    estimate: t.mean,
                    ci: t.interval(confidence),
                    confidence,
                },
            )
        })
    } else {
        None
    };
    let mut p = done(RowVerdict::Inconclusive, String::new(), n, w.confidence);
    p.j.method = Method::PairedT;
    p.left_out = left_out;
    p.j.change = Some(w.estimate.exp_m1());
    p.j.change_ci = Some([w.ci[0].exp_m1(), w.ci[1].exp_m1()]);
    p.j.p = Some(p_bad);
    p.p = Some((p_bad, p_good));
    p.ci = w.ci;
    p.estimate = w.estimate;
    p.up = up;
    p.down = down;
    p.lower_is_better = row.lower_is_better;
    p.exact_kind = row.exact_kind;
    p.effect = effect;
    p.tolerance_text = if row.exact_kind && effect.is_none() {
        "exact threshold".to_owned()
    } else {
        row.tolerance_text.clone()
    };
    p
}

/// Judge every paired row of a run; Holm over the tested rows (worse and better are separate
/// families, as in `check`). One judgement per row, in order. Never panics.
pub fn judge_paired(rows: &[PairedRow<'_>], alpha: f64, confidence: f64) -> Vec<PairedJudgement> {
    if !(alpha > 0.0 && alpha < 1.0 && confidence > 0.0 && confidence < 1.0) {
        return rows
            .iter()
            .map(|r| {
                done(
                    RowVerdict::Error,
                    format!("invalid settings: alpha {alpha}, confidence {confidence}"),
                    r.base.len(),
                    confidence,
                )
                .j
            })
            .collect();
    }
    let prepared: Vec<Prepared> = rows.iter().map(|r| prepare(r, confidence)).collect();
    let bad: Vec<Option<f64>> = prepared.iter().map(|p| p.p.map(|x| x.0)).collect();
    let good: Vec<Option<f64>> = prepared.iter().map(|p| p.p.map(|x| x.1)).collect();
    let adj_bad = holm(&bad);
    let adj_good = holm(&good);
    let family = bad.iter().flatten().count();
    prepared
        .into_iter()
        .zip(adj_bad.into_iter().zip(adj_good))
        .map(|(p, (ab, ag))| decide(p, ab, ag, family, alpha))
        .collect()
}

fn decide(
    mut p: Prepared,
    adj_bad: Option<f64>,
    adj_good: Option<f64>,
    family: usize,
    alpha: f64,
) -> PairedJudgement {
    let (Some(ab), Some(ag)) = (adj_bad, adj_good) else {
        return p.j;
    };
    let j = &mut p.j;
    j.p_adjusted = Some(ab);
    let change = percent(p.estimate.exp_m1(), Percent::Signed2);
    let interval = format!(
        "[{}, {}]",
        percent(p.ci[0].exp_m1(), Percent::Signed2),
        percent(p.ci[1].exp_m1(), Percent::Signed2)
    );
    let conf = percent(j.confidence, Percent::Plain1);
    let tol = &p.tolerance_text;
    let pairs = j.pairs;
    // The interval's end on the bad side, and whether it stays within the tolerance: the
    // relative one within T, or the absolute one within min_effect (a regression must exceed
    // both, as in `check`).
    let within_abs = p.effect.is_some_and(|(e, w)| {
        if p.lower_is_better {
            w.ci[1] < e
        } else {
            w.ci[0] > -e
        }
    });
    let beyond_abs = p.effect.is_none_or(|(e, w)| {
        if p.lower_is_better {
            w.estimate > e
        } else {
            w.estimate < -e
        }
    });
    let within = within_abs
        || if p.lower_is_better {
            p.ci[1] < p.up
        } else {
            p.ci[0] > p.down
        };
    let beyond = beyond_abs
        && if p.lower_is_better {
            p.estimate > p.up
        } else {
            p.estimate < p.down
        };
    (j.verdict, j.reason) = if ab <= alpha {
        (
            RowVerdict::Regression,
            format!(
                "{change} (interval {interval}) over {pairs} pairs is worse than the {tol}, significant after holm over {family} tests (adjusted p {ab:.2e})"
            ),
        )
    } else if ag <= alpha {
        (
            RowVerdict::Improvement,
            format!(
                "{change} (interval {interval}) over {pairs} pairs is better than the {tol}, significant (improvement adjusted p {ag:.2e})"
            ),
        )
    } else if p.exact_kind && p.effect.is_none() {
        (
            RowVerdict::Pass,
            format!(
                "no significant worsening over {pairs} pairs ({change}, interval {interval}, adjusted p {ab:.2e}); an exact threshold on a noisy metric is judged by the test alone"
            ),
        )
    } else if within {
        (
            RowVerdict::Pass,
            format!(
                "the {conf} interval {interval} over {pairs} pairs rules out a regression beyond the {tol}"
            ),
        )
    } else if beyond {
        (
            RowVerdict::Inconclusive,
            format!(
                "{change} is beyond the {tol} but not significant after holm over {family} tests (adjusted p {ab:.2e}); measure more pairs"
            ),
        )
    } else {
        (
            RowVerdict::Inconclusive,
            format!(
                "{change} with {conf} interval {interval} over {pairs} pairs: too noisy to rule out the {tol}; measure more pairs"
            ),
        )
    };
    if p.left_out > 0 {
        j.reason.push_str(&format!(
            "; {} of {pairs} pairs left out as outliers (a process that ran slow on one side)",
            p.left_out
        ));
    }
    p.j
}

/// A row whose values repeat exactly on each side (registers, instruction counts, launch
/// configuration): compared exactly, as `check` compares them ([`super::verdict::compare_exact`]).
pub fn judge_constant(
    base: f64,
    head: f64,
    threshold: &crate::foundation::threshold::Threshold,
    pairs: usize,
) -> PairedJudgement {
    let e = super::verdict::compare_exact(base, head, threshold);
    PairedJudgement {
        verdict: e.verdict,
        method: Method::Exact,
        change: e.change,
        change_ci: None,
        confidence: 1.0,
        p: None,
        p_adjusted: None,
        reason: e.reason,
        pairs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::Rng;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    #[expect(
        clippy::approx_constant,
        reason = "3.14 is a measurement in the textbook data, not pi"
    )]
    fn signed_rank_matches_the_textbook_example() {
        // Hollander & Wolfe (1973), Table 3.1 (Hamilton depression scale, first and second
        // visits); R: wilcox.test(x, y, paired = TRUE, alternative = "greater") gives V = 40,
        // p-value = 0.01953 (= 10 / 512).
        let x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30];
        let y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29];
        let d: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a - b).collect();
        let r = signed_rank(&d).unwrap();
        assert!(r.exact);
        assert!(close(r.t_plus, 40.0));
        assert!(close(r.p_greater, 10.0 / 512.0), "{}", r.p_greater);
        // P(T+ <= 40) = 1 - P(T+ >= 41) = 1 - 7/512.
        assert!(close(r.p_less, 1.0 - 7.0 / 512.0), "{}", r.p_less);
    }

    #[test]
    fn null_distribution_matches_tables() {
        // n = 10: P(T+ <= 8) = 25 / 1024 (two-sided 5% critical value 8).
        let c = null_counts(10);
        assert!(close(c.iter().sum::<f64>(), 1024.0));
        assert!(close(c[..=8].iter().sum::<f64>(), 25.0));
        // The 95% Walsh interval of 10 pairs runs from the 9th smallest to the 9th largest of
        // the 55 averages; coverage 1 - 2 * 25/1024.
        let d: Vec<f64> = (1..=10).map(f64::from).collect();
        let w = walsh_interval(&d, 0.95).unwrap();
        let mut all: Vec<f64> = Vec::new();
        for i in 0..10 {
            for j in i..10 {
                all.push((d[i] + d[j]) / 2.0);
            }
        }
        all.sort_by(f64::total_cmp);
        assert!(close(w.ci[0], all[8]) && close(w.ci[1], all[46]), "{w:?}");
        assert!(close(w.estimate, 5.5));
        assert!(close(w.confidence, 1.0 - 50.0 / 1024.0));
    }

    #[test]
    fn ties_and_zeros_use_the_approximation() {
        let r = signed_rank(&[0.0, 1.0, 1.0, 2.0, -1.0, 3.0, 3.0]).unwrap();
        assert!(!r.exact);
        assert_eq!(r.n, 6);
        assert!(r.p_greater < 0.1 && r.p_less > 0.9);
        assert!(close(signed_rank(&[0.0, 0.0]).unwrap().p_greater, 1.0));
        assert!(signed_rank(&[1.0, f64::NAN]).is_none());
        let big: Vec<f64> = (0..80).map(|i| f64::from(i) - 20.5).collect();
        let r = signed_rank(&big).unwrap();
        assert!(!r.exact && r.p_greater < 1e-6);
        assert!(walsh_interval(&big, 0.95).unwrap().confidence > 0.94);
    }

    /// SYNTHETIC paired noise model: every pair shares a clock factor, uniform in +-3%; each run
    /// has its own log-normal noise of CV `cv`; the head is `shift` slower.
    fn pairs(n: usize, shift: f64, cv: f64, rng: &mut Rng) -> (Vec<f64>, Vec<f64>) {
        (0..n)
            .map(|_| {
                let clock = 1.0 + 0.06 * (rng.next_f64() - 0.5);
                let b = 1000.0 * clock * (cv * rng.normal()).exp();
                let h = 1000.0 * (1.0 + shift) * clock * (cv * rng.normal()).exp();
                (b, h)
            })
            .unzip()
    }

    fn row<'a>(b: &'a [f64], h: &'a [f64], t: f64) -> PairedRow<'a> {
        PairedRow {
            base: b,
            head: h,
            tolerance: t,
            min_effect: 0.0,
            tolerance_text: format!("{}% threshold", t * 100.0),
            lower_is_better: true,
            exact_kind: false,
        }
    }

    #[test]
    fn shared_clock_factor_cancels_and_unpaired_test_cannot() {
        // SYNTHETIC, 200 runs of 10 pairs, threshold 1%: A/A passes and never regresses, a
        // planted 3% slowdown is a regression. The same A/A data judged unpaired (check's rule)
        // cannot rule the 1% out through the +-3% clock spread: mostly inconclusive.
        let mut rng = Rng::new(2024);
        let (mut aa_reg, mut aa_pass, mut found, mut unpaired_pass) = (0, 0, 0, 0);
        let t = crate::foundation::threshold::Threshold {
            kind: crate::foundation::threshold::ThresholdKind::Relative { fraction: 0.01 },
            direction: crate::foundation::threshold::Direction::Lower,
            min_effect: None,
        };
        let cfg = crate::stats::Config::default();
        for _ in 0..200 {
            let (b, h) = pairs(10, 0.0, 0.003, &mut rng);
            let j = &judge_paired(&[row(&b, &h, 0.01)], 0.01, 0.95)[0];
            aa_reg += usize::from(j.verdict == RowVerdict::Regression);
            aa_pass += usize::from(j.verdict == RowVerdict::Pass);
            let u = crate::stats::judge(
                &crate::stats::Comparison {
                    key: "k".into(),
                    baseline: Some(&b),
                    candidate: &h,
                    threshold: &t,
                    history: &[],
                    baseline_runs: &[],
                    candidate_runs: &[],
                },
                &cfg,
            );
            unpaired_pass += usize::from(u.verdict == RowVerdict::Pass);
            let (b, h) = pairs(10, 0.03, 0.003, &mut rng);
            let j = &judge_paired(&[row(&b, &h, 0.01)], 0.01, 0.95)[0];
            found += usize::from(j.verdict == RowVerdict::Regression);
        }
        assert_eq!(aa_reg, 0);
        assert!(aa_pass >= 190, "A/A passed {aa_pass} of 200");
        assert!(found >= 196, "3% found {found} of 200");
        assert!(unpaired_pass < 100, "unpaired A/A passed {unpaired_pass} of 200");
    }

    #[test]
    fn decision_is_against_the_threshold() {
        // SYNTHETIC: a clean, certain 2% slowdown is a pass under 3%, a regression under 1%.
        let b: Vec<f64> = (0..12).map(|i| 100.0 + f64::from(i)).collect();
        let h: Vec<f64> = b
            .iter()
            .enumerate()
            .map(|(i, x)| x * (1.02 + 0.001 * (i % 3) as f64))
            .collect();
        let j = judge_paired(&[row(&b, &h, 0.03), row(&b, &h, 0.01)], 0.01, 0.95);
        assert_eq!(j[0].verdict, RowVerdict::Pass, "{}", j[0].reason);
        assert_eq!(j[1].verdict, RowVerdict::Regression, "{}", j[1].reason);
        assert!((j[1].change.unwrap() - 0.021).abs() < 0.002);
        // Higher is better: head 5% lower throughput is a regression, 5% higher an improvement.
        let slow: Vec<f64> = b
            .iter()
            .enumerate()
            .map(|(i, x)| x * (0.95 + 1e-4 * i as f64))
            .collect();
        let mut r = row(&b, &slow, 0.02);
        r.lower_is_better = false;
        assert_eq!(
            judge_paired(&[r.clone()], 0.01, 0.95)[0].verdict,
            RowVerdict::Regression
        );
        let r2 = PairedRow {
            base: &slow,
            head: &b,
            ..r
        };
        assert_eq!(
            judge_paired(&[r2], 0.01, 0.95)[0].verdict,
            RowVerdict::Improvement
        );
    }

    #[test]
    fn too_few_pairs_and_bad_values() {
        let j = judge_paired(&[row(&[1.0, 2.0], &[1.0, 2.0], 0.03)], 0.01, 0.95);
        assert_eq!(j[0].verdict, RowVerdict::Inconclusive);
        let j = judge_paired(&[row(&[1.0, 2.0, 0.0], &[1.0, 2.0, 3.0], 0.03)], 0.01, 0.95);
        assert_eq!(j[0].verdict, RowVerdict::Inconclusive);
        let j = judge_paired(&[row(&[1.0, f64::NAN, 1.0], &[1.0, 2.0, 3.0], 0.03)], 0.01, 0.95);
        assert_eq!(j[0].verdict, RowVerdict::Error);
        let j = judge_paired(&[row(&[1.0, 1.0, 1.0], &[1.0, 2.0], 0.03)], 0.01, 0.95);
        assert_eq!(j[0].verdict, RowVerdict::Error);
        // 5 clearly slower pairs: no 2^-n floor blocks the answer any more (the signed-rank
        // test could not go below 1/32 and called this inconclusive).
        let b = [100.0, 101.0, 99.0, 100.5, 100.2];
        let h: Vec<f64> = b.iter().map(|x| x * 1.2).collect();
        let j = &judge_paired(&[row(&b, &h, 0.03)], 0.01, 0.95)[0];
        assert_eq!(j.verdict, RowVerdict::Regression, "{}", j.reason);
        assert_eq!(
            judge_paired(&[row(&b, &h, 0.03)], 0.0, 0.95)[0].verdict,
            RowVerdict::Error
        );
    }

    #[test]
    fn eight_pairs_with_a_tight_interval_far_beyond_the_threshold_are_a_regression() {
        // The PyTorch GEMM of issue 22, shaped: +11.4 % over 8 pairs, interval about
        // [+11.2 %, +11.7 %], threshold 3 %, in a family of 50 rows at alpha 0.01.
        let b = [1000.0, 1003.0, 998.0, 1001.0, 999.5, 1002.0, 1000.5, 997.0];
        let wiggle = [0.002, -0.003, 0.001, 0.0, -0.001, 0.003, -0.002, 0.0];
        let h: Vec<f64> = b.iter().zip(wiggle).map(|(x, w)| x * (1.114 + w)).collect();
        let mut rows = vec![row(&b, &h, 0.03)];
        let same: Vec<f64> = b.iter().map(|x| x * 1.001).collect();
        for _ in 0..49 {
            rows.push(row(&b, &same, 0.03));
        }
        let j = &judge_paired(&rows, 0.01, 0.95)[0];
        assert_eq!(j.verdict, RowVerdict::Regression, "{}", j.reason);
        let [lo, hi] = j.change_ci.unwrap();
        assert!(lo > 0.11 && hi < 0.118, "[{lo}, {hi}]");
    }

    #[test]
    fn three_clear_pairs_decide() {
        let b = [1000.0, 1002.0, 999.0];
        let slow = [1101.0, 1100.5, 1099.0];
        let same = [1000.5, 1001.0, 999.5];
        let j = judge_paired(&[row(&b, &slow, 0.03), row(&b, &same, 0.03)], 0.01, 0.95);
        assert_eq!(j[0].verdict, RowVerdict::Regression, "{}", j[0].reason);
        assert_eq!(j[1].verdict, RowVerdict::Pass, "{}", j[1].reason);
        assert_eq!(j[0].method.as_str(), "paired-t");
    }

    #[test]
    fn a_pair_with_one_slow_process_is_left_out() {
        let b: Vec<f64> = (0..10).map(|i| 1000.0 + f64::from(i)).collect();
        let mut h: Vec<f64> = b.iter().map(|x| x * 1.001).collect();
        h[3] *= 1.3;
        let j = &judge_paired(&[row(&b, &h, 0.03)], 0.01, 0.95)[0];
        assert_eq!(j.verdict, RowVerdict::Pass, "{}", j.reason);
        assert!(j.reason.contains("1 of 10 pairs left out"), "{}", j.reason);
    }
}
