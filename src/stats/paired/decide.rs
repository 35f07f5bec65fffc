//! The decision of a paired row once the run's Holm adjustment is known: a regression or an
//! improvement when significant against the threshold, a pass when the interval rules a change
//! beyond it out, otherwise inconclusive.

use super::PairedJudgement;
use super::prepare::Prepared;
use crate::foundation::units::{Percent, percent};
use crate::stats::row::RowVerdict;

/// The verdict of a prepared row from its Holm-adjusted p-values (worse than `T`, better than
/// `T`; `None` for a row not tested, which keeps its verdict) in a family of `family` tests.
pub(super) fn decide(
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
