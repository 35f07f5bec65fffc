//! `min:`/`max:` rows: the candidate's median against the limit, by its order-statistic interval
//! and the sign test (in the run's Holm family).

use super::checks::constant;
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
    is_max: bool,
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
        j.method = Method::Exact;
        (j.verdict, j.reason) = if bad {
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
        j.reason = format!(
            "not enough data: need at least {MIN_SAMPLES} candidate samples, have {}; raise repetitions",
            c.len()
        );
        return Prepared::Done(j);
    }
    let sorted = sorted_finite(c);
    let Some((ci, coverage)) = median_interval(&sorted, cfg.confidence) else {
        j.reason = "no candidate samples".to_owned();
        return Prepared::Done(j);
    };
    let (above, below) = sign_test(c, limit);
    let p_bad = if is_max { above } else { below };
    j.method = Method::SignTestMedianCi;
    j.median_ci = Some(ci);
    j.confidence = coverage;
    j.p = Some(p_bad);
    Prepared::Limit(LimitRow {
        j,
        p_bad,
        ci,
        limit,
        is_max,
    })
}

impl LimitRow {
    /// The verdict once `adj`, the Holm-adjusted p of the sign test, is known.
    pub(super) fn decide(mut self, adj: f64, family: usize, cfg: &Config) -> Judgement {
        let j = &mut self.j;
        j.p_adjusted = Some(adj);
        j.limit = Some(self.limit);
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
        let conf = percent(j.confidence, Percent::Plain1);
        (j.verdict, j.reason) = if wrong_side && adj <= cfg.alpha {
            (
                RowVerdict::Regression,
                format!(
                    "median {} is not {side} {}: its {conf} interval {interval} lies beyond the limit (adjusted p {:.2e})",
                    num(median),
                    num(self.limit),
                    adj
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
                    "median {} is beyond the limit {} but not significant after holm over {family} tests (adjusted p {:.2e}); measure more repetitions",
                    num(median),
                    num(self.limit),
                    adj
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
