//! Paired comparison for `ab`: base and head measured in alternation on one GPU, pair `i` being
//! the `i`-th repetition of each side.
//!
//! Each pair gives a log ratio `d_i = ln(head_i / base_i)` of the two runs' (processes') levels,
//! each the median of that run's launches after its warm-up; whatever slowed both runs of a pair
//! (clock state, temperature, a neighbour on the machine) cancels in it. The test is Yuen's
//! trimmed paired t test on the `d_i`: from 10 pairs on, a tenth of the pairs at each end left
//! out of the mean (a process that ran slow on one side only does not decide the row), the
//! Winsorized variance for its standard error; under 10 pairs the plain paired t. Unlike the signed-rank test it replaced (kept below
//! for reference), its p-value has no floor of `2^-n`: 8 pairs whose shift interval is
//! [+11.2 %, +11.7 %] are a regression against a 3 % threshold (docs/statistics.md, 2.7).
//!
//! The decision is against the threshold `T`, not zero: a regression needs the t test of
//! `d - ln(1 + T)` to be significant after Holm over the run (equivalently, the one-sided
//! interval lies beyond `T`); a pass needs the two-sided interval to lie within `T`; an
//! improvement mirrors the regression with `ln(1 - T)`. Everything else is inconclusive.
//!
//! The parts: `wilcoxon` (the signed-rank test and the Walsh interval), `t_test` (the paired t,
//! trimmed), `prepare` (a row's checks and tests), `decide` (its verdict after
//! Holm).

mod decide;
mod prepare;
mod t_test;
mod wilcoxon;

pub use t_test::{PairedT, paired_t};
pub use wilcoxon::{SignedRank, WalshInterval, signed_rank, walsh_interval};

use self::decide::decide;
use self::prepare::{Prepared, done, prepare};
use super::multiple::{holm, holm_levels};
use super::row::RowVerdict;
use super::spending::{LookAt, share};

/// Fewer pairs than this: no test.
pub(crate) const MIN_PAIRS: usize = 3;

/// One paired row to judge.
#[derive(Debug, Clone)]
pub struct PairedRow<'a> {
    /// Per-pair values of the base side (one per repetition, e.g. the repetition's median).
    pub base: &'a [f64],
    /// Per-pair values of the head side, same length and order as `base`.
    pub head: &'a [f64],
    /// Relative tolerance `T`: the threshold.
    pub tolerance: f64,
    /// `min_effect` in the pairs' unit (0: none). As in `check`, it raises the relative tolerance
    /// to `min_effect / median(base)` where that is larger ([`PairedRow::effective_tolerance`]),
    /// so the interval of the log ratios alone decides the row.
    pub min_effect: f64,
    /// How `T` is described in reasons, e.g. `3% threshold`.
    pub tolerance_text: String,
    /// True when lower is better (durations), false when higher is better (throughputs).
    pub lower_is_better: bool,
    /// `exact` threshold on a noisy metric: judged by the test against zero alone.
    pub exact_kind: bool,
    /// What the per-pair values left out of the launches (`nested::run_means`); the pairs'
    /// own outliers are added to it by the test.
    pub left_out: super::screen::LeftOut,
    /// Each pair's processes' mean launches with nothing left out (base, head; `nested::RunMeans`'s
    /// `base_all` and `head_all`): when the head had a launch or a pair left out, a pass must hold
    /// on them too (issue 57). `None`: the pair values are all there is.
    pub all_in: Option<(&'a [f64], &'a [f64])>,
}

impl PairedRow<'_> {
    /// The relative tolerance the row is judged against: `T` (0 for an `exact` threshold), or
    /// `min_effect` relative to the median of the base's pairs where that is larger, the way
    /// `check`'s run-level rows take `min_effect` (docs/statistics.md, 2.5). Testing the
    /// absolute differences against `min_effect` beside the ratios (as `ab` did before) let a
    /// second interval decide a row whose shown interval said otherwise.
    pub fn effective_tolerance(&self) -> f64 {
        let t = if self.exact_kind { 0.0 } else { self.tolerance };
        if !(self.min_effect > 0.0 && self.min_effect.is_finite()) {
            return t;
        }
        match super::order::median(self.base) {
            Some(m) if m > 0.0 && m.is_finite() => t.max(self.min_effect / m),
            _ => t,
        }
    }
}

/// The verdict of one paired row: its [`Ruling`](super::Ruling) (never a median interval: a
/// paired test estimates the change) and how many pairs it had.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedJudgement {
    /// `paired-t`, `exact` (both sides constant) or `none`; the change is the paired estimate of
    /// head / base - 1, its p one-sided in the regression direction, against the threshold.
    pub ruling: super::Ruling,
    pub pairs: usize,
}

/// Judge every paired row of a run; Holm over the tested rows (worse and better are separate
/// families, as in `check`). One judgement per row, in order. Never panics. Every row spends
/// all of `alpha` (one look); [`judge_paired_at`] spends by each row's plan.
pub fn judge_paired(rows: &[PairedRow<'_>], alpha: f64, confidence: f64) -> Vec<PairedJudgement> {
    judge_paired_at(rows, alpha, confidence, &[])
}

/// [`judge_paired`] with each row at its look (`looks[i]`): the same alpha spending over the
/// looks as `check` (`stats::spending`, weighted Holm); a row without an entry spends all of
/// `alpha`. Each row's interval is shown at the level its decision used.
pub fn judge_paired_at(
    rows: &[PairedRow<'_>],
    alpha: f64,
    confidence: f64,
    looks: &[LookAt],
) -> Vec<PairedJudgement> {
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
    // Each row's pass is read at Bonferroni's share of the one-sided pass level over its looks
    // (issue 43). Not the spending rule `check` uses: the paired t's early looks have few
    // degrees of freedom, their joint law is not the canonical one the spending boundaries are
    // computed for, and with the rest spent at the last look a row exactly at the threshold
    // passed in 2.70 % [2.24, 3.25] of 4000 SYNTHETIC rows; Bonferroni holds whatever the looks'
    // dependence.
    let prepared: Vec<Prepared> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| prepare(r, pass_confidence(confidence, looks.get(i))))
        .collect();
    let family = prepared.iter().filter(|p| p.p.is_some()).count();
    let shares: Vec<f64> = (0..rows.len())
        .map(|i| looks.get(i).map_or(1.0, |l| regression_share(alpha, l, family)))
        .collect();
    let bad: Vec<Option<f64>> = prepared
        .iter()
        .zip(&shares)
        .map(|(p, s)| p.p.map(|x| x.0 / s))
        .collect();
    let good: Vec<Option<f64>> = prepared
        .iter()
        .zip(&shares)
        .map(|(p, s)| p.p.map(|x| x.1 / s))
        .collect();
    let adj_bad = holm(&bad);
    let adj_good = holm(&good);
    let level = |l: Vec<Option<f64>>| -> Vec<f64> {
        l.into_iter()
            .zip(&shares)
            .map(|(l, s)| l.map_or(alpha, |l| l * s))
            .collect()
    };
    let lv_bad = level(holm_levels(&bad, alpha));
    let lv_good = level(holm_levels(&good, alpha));
    prepared
        .into_iter()
        .zip(adj_bad.into_iter().zip(adj_good))
        .zip(lv_bad.into_iter().zip(lv_good))
        .map(|((p, (ab, ag)), (lb, lg))| decide(p, [ab, ag], [lb, lg], family, alpha))
        .collect()
}

/// The two-sided level a paired row's pass is read at: `1 - (1 - confidence) / K` over the `K`
/// looks of its plan; `confidence` without a plan.
/// The share of alpha a row's regression test spends at its look: the spending rule's
/// (`spending::share`: Bonferroni's `alpha / K` at every look but the last, the rest at the last)
/// for a plan of at most two looks, Bonferroni's `1 / K` at every look of a plan of three or more
/// (issue 56). The spending rule's last look is computed for the canonical joint law of normal
/// statistics; the paired t's looks have few degrees of freedom (4 at 5 pairs), and with three
/// looks (5, 10, 15 pairs: `check --base`'s paired stage) a row exactly at the threshold was
/// called a regression in 1.23 % [0.90, 1.70] of 3000 SYNTHETIC runs at alpha 1 %, 0.97 %
/// [0.67, 1.38] with Bonferroni, +4 % found in 98.9 % of rows instead of 99.3 %
/// (`examples/confirm_plan.rs`); two-look plans held (10 -> 20 pairs 0.93 %, 8 -> 15 0.90 %).
fn regression_share(alpha: f64, look: &LookAt, family: usize) -> f64 {
    let looks = look.fractions().len();
    if looks >= 3 {
        1.0 / looks as f64
    } else {
        share(alpha, look, family)
    }
}

fn pass_confidence(confidence: f64, look: Option<&LookAt>) -> f64 {
    let k = look.map_or(1, |l| super::remeasure::looks(l.repetitions, l.max_repetitions));
    1.0 - (1.0 - confidence) / f64::from(k.max(1))
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
        ruling: super::Ruling::exact(e, threshold, 1.0),
        pairs,
    }
}

#[cfg(test)]
mod tests;
