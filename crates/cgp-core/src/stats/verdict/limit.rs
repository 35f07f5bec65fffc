//! `min:`/`max:` rows: the candidate's median against the limit, by its order-statistic interval
//! and the sign test (in the run's Holm family).

use super::checks::constant;
use super::estimate::{Bound, Shift, Test};
use super::{Comparison, Config, Judgement, MIN_SAMPLES, Prepared, base_judgement, num};
use crate::foundation::units::{Percent, percent};
use crate::stats::median_ci::{median_interval, sign_test};
use crate::stats::row::{Method, RowVerdict};
use crate::stats::summary::sorted_finite;

/// A limit row after its sign test, before the run-wide adjustment.
pub(super) struct LimitRow {
    j: Judgement,
    pub(super) p_bad: f64,
    ci: [f64; 2],
    /// The limit with `min_effect` applied.
    limit: f64,
    /// The two-sided level of the sign test's Holm step (a regression's interval needs it).
    tested_at: f64,
    is_max: bool,
    /// The candidate's finite samples, sorted: the interval at any level.
    sorted: Vec<f64>,
}

/// A `min:`/`max:` row against `limit` (`min_effect` applied): a constant candidate compared
/// exactly, too few samples inconclusive, otherwise the sign test of its median.
pub(super) fn prepare_limit(row: &Comparison<'_>, cfg: &Config, limit: f64, is_max: bool) -> Prepared {
    let mut j = base_judgement(row, cfg, RowVerdict::Inconclusive, "");
    let c = row.candidate;
    let side = if is_max { "at most" } else { "at least" };
    if constant(c) && c.len() >= 2 {
        let v = c[0];
        let bad = if is_max { v > limit } else { v < limit };
        j.ruling.method = Method::Exact;
        (j.ruling.verdict, j.ruling.reason) = if bad {
            (
                RowVerdict::Regression,
                format!("deterministic value {} is not {side} {}", num(v), num(limit)),
            )
        } else {
            (
                RowVerdict::Pass,
                format!("deterministic value {} is {side} {}", num(v), num(limit)),
            )
        };
        return Prepared::Done(j);
    }
    if c.len() < MIN_SAMPLES {
        j.ruling.reason = format!(
            "not enough data: need at least {MIN_SAMPLES} candidate samples, have {}; raise repetitions",
            c.len()
        );
        return Prepared::Done(j);
    }
    let sorted = sorted_finite(c);
    let Some((ci, coverage)) = median_interval(&sorted, cfg.confidence) else {
        j.ruling.reason = "no candidate samples".to_owned();
        return Prepared::Done(j);
    };
    let (above, below) = sign_test(c, limit);
    let p_bad = if is_max { above } else { below };
    j.ruling.method = Method::SignTestMedianCi;
    j.ruling.estimate.shift = Shift::Median { ci };
    j.ruling.estimate.confidence = Some(coverage);
    j.ruling.estimate.test = Some(Test {
        p: p_bad,
        p_adjusted: None,
    });
    Prepared::Limit(LimitRow {
        j,
        p_bad,
        ci,
        limit,
        tested_at: 1.0,
        is_max,
        sorted,
    })
}

impl LimitRow {
    /// The verdict once `adj`, the Holm-adjusted p of the sign test, and `level`, the one-sided
    /// level its Holm step tested it at, are known. The interval shown is the one the decision
    /// read (docs/statistics.md 2.8): a regression's at the test's level (two-sided `1 - 2
    /// level`), a pass's at the configured confidence, an inconclusive row's at the wider of the
    /// two, or wider still up to where it reaches the limit; the verdict follows from it by
    /// [`super::rule::verdict_of_limit`].
    pub(super) fn decide(mut self, adj: f64, level: f64, family: usize, cfg: &Config) -> Judgement {
        self.at_decision_level(adj <= cfg.alpha, level, cfg.confidence);
        let j = &mut self.j;
        j.ruling.estimate.adjust(adj);
        j.bound = Some(Bound::Limit(self.limit));
        let (lo, hi) = (self.ci[0], self.ci[1]);
        let median = j.candidate.median;
        let side = if self.is_max { "at most" } else { "at least" };
        let wrong_side = if self.is_max {
            lo > self.limit
        } else {
            hi < self.limit
        };
        let right_side = if self.is_max {
            hi <= self.limit
        } else {
            lo >= self.limit
        };
        let interval = format!("[{}, {}]", num(lo), num(hi));
        let conf = percent(j.ruling.confidence(), Percent::Plain1);
        (j.ruling.verdict, j.ruling.reason) = if wrong_side
            && adj <= cfg.alpha
            && j.ruling.confidence() >= self.tested_at
        {
            (
                RowVerdict::Regression,
                format!(
                    "median {} is not {side} {}: its {conf} interval {interval} lies beyond the limit (adjusted p {:.2e})",
                    num(median),
                    num(self.limit),
                    crate::stats::pvalue::P(adj)
                ),
            )
        } else if right_side {
            (
                RowVerdict::Pass,
                format!(
                    "the {conf} interval {interval} of the median is {side} {}",
                    num(self.limit)
                ),
            )
        } else if wrong_side {
            (
                RowVerdict::Inconclusive,
                format!(
                    "median {} is beyond the limit {} but not significant after holm over {family} tests (adjusted p {:.2e}), and no interval these samples give reaches it (the widest of {} samples, {interval} ({conf}), lies beyond it: the smallest p-value of so few samples); measure more repetitions",
                    num(median),
                    num(self.limit),
                    crate::stats::pvalue::P(adj),
                    self.sorted.len()
                ),
            )
        } else {
            (
                RowVerdict::Inconclusive,
                format!(
                    "the {conf} interval {interval} of the median straddles the limit {}; measure more repetitions",
                    num(self.limit)
                ),
            )
        };
        self.j
    }
}

impl LimitRow {
    /// The verdict an interval of the median gives against the limit.
    fn reads(&self, ci: [f64; 2]) -> RowVerdict {
        super::rule::verdict_of_limit(ci, self.limit, self.is_max)
    }

    /// The interval of the median at `level` (two-sided), with its real coverage.
    fn at(&self, level: f64) -> Option<([f64; 2], f64)> {
        median_interval(&self.sorted, level.clamp(0.0, 1.0 - 1e-15))
    }

    /// Choose the interval the decision reads (see [`Self::decide`]): `sig`, the sign test is
    /// significant after Holm at the one-sided `level`.
    fn at_decision_level(&mut self, sig: bool, level: f64, confidence: f64) {
        let c_bad = (1.0 - 2.0 * level).clamp(0.0, 1.0 - 1e-15);
        self.tested_at = c_bad;
        let show = |s: &mut Self, (ci, coverage): ([f64; 2], f64)| {
            s.ci = ci;
            s.j.ruling.estimate.shift = Shift::Median { ci };
            s.j.ruling.estimate.confidence = Some(coverage);
        };
        if sig
            && let Some(x) = self.at(c_bad)
            && self.reads(x.0) == RowVerdict::Regression
        {
            // Its coverage may exceed the level (order statistics are discrete): it is at least it.
            self.tested_at = x.1.min(c_bad);
            return show(self, x);
        }
        let Some(plain) = self.at(confidence) else {
            return;
        };
        if self.reads(plain.0) == RowVerdict::Pass {
            return show(self, plain);
        }
        // The smallest order-statistic interval, from the wider of the two levels, that reaches
        // the limit; the widest the samples give when none does.
        let from = confidence.max(c_bad);
        let n = self.sorted.len();
        let floor = self.at(from).map_or(plain.1, |x| x.1);
        // From the narrowest interval at least that wide to the full range.
        let mut best = self.at(from).unwrap_or(plain);
        for k in (1..=n.div_ceil(2)).rev() {
            let x = (
                [self.sorted[k - 1], self.sorted[n - k]],
                crate::stats::median_ci::coverage(n, k),
            );
            if x.1 + 1e-12 < floor {
                continue;
            }
            best = x;
            if self.reads(x.0) != RowVerdict::Regression {
                break;
            }
        }
        show(self, best);
    }
}
