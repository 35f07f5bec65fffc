//! The decision of a paired row once the run's Holm adjustment is known: a regression or an
//! improvement when significant against the threshold, a pass when the interval rules a change
//! beyond it out, otherwise inconclusive.

use super::PairedJudgement;
use super::prepare::Prepared;
use crate::foundation::units::{Percent, percent};
use crate::stats::row::RowVerdict;

/// The verdict of a prepared row from its Holm-adjusted p-values (worse than `T`, better than
/// `T`; `None` for a row not tested, which keeps its verdict) in a family of `family` tests;
/// `levels`: the one-sided levels the row was tested at in the two families.
pub(super) fn decide(
    mut p: Prepared,
    adj: [Option<f64>; 2],
    levels: [f64; 2],
    family: usize,
    alpha: f64,
) -> PairedJudgement {
    let [Some(ab), Some(ag)] = adj else {
        return p.j;
    };
    at_decision_level(&mut p, ab <= alpha, ag <= alpha, levels);
    let j = &mut p.j;
    j.ruling.estimate.adjust(ab);
    let change = percent(p.estimate.exp_m1(), Percent::Signed2);
    let interval = format!(
        "[{}, {}]",
        percent(p.ci[0].exp_m1(), Percent::Signed2),
        percent(p.ci[1].exp_m1(), Percent::Signed2)
    );
    let conf = percent(j.ruling.confidence(), Percent::Plain1);
    let tol = &p.tolerance_text;
    let pairs = j.pairs;
    // The interval's end on the bad side, and whether it stays within the tolerance.
    let within = if p.lower_is_better {
        p.ci[1] < p.up
    } else {
        p.ci[0] > p.down
    };
    let beyond = if p.lower_is_better {
        p.estimate > p.up
    } else {
        p.estimate < p.down
    };
    (j.ruling.verdict, j.ruling.reason) = if ab <= alpha {
        (
            RowVerdict::Regression,
            format!(
                "{change} (interval {interval}) over {pairs} pairs is worse than the {tol}, significant after holm over {family} tests (adjusted p {ab:.2e})",
                ab = crate::stats::pvalue::P(ab)
            ),
        )
    } else if ag <= alpha {
        (
            RowVerdict::Improvement,
            format!(
                "{change} (interval {interval}) over {pairs} pairs is better than the {tol}, significant (improvement adjusted p {ag:.2e})",
                ag = crate::stats::pvalue::P(ag)
            ),
        )
    } else if p.exact_kind {
        (
            RowVerdict::Pass,
            format!(
                "no significant worsening over {pairs} pairs ({change}, interval {interval}, adjusted p {ab:.2e}); an exact threshold on a noisy metric is judged by the test alone",
                ab = crate::stats::pvalue::P(ab)
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
                "{change} is beyond the {tol} but not significant after holm over {family} tests (adjusted p {ab:.2e}); measure more pairs",
                ab = crate::stats::pvalue::P(ab)
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
    let detectable = p.tt.and_then(|tt| {
        let b = if p.lower_is_better { p.up } else { -p.down };
        crate::stats::power::detectable_log(b, tt.se, tt.df, levels[0])
            .map(|x| crate::stats::power::as_change(x, p.lower_is_better))
    });
    if let crate::stats::Shift::Change { detectable: d, .. } = &mut j.ruling.estimate.shift {
        *d = detectable;
    }
    if p.left_out > 0 {
        j.ruling.reason.push_str(&format!(
            "; {} of {pairs} pairs left out as outliers (a process that ran slow on one side)",
            p.left_out
        ));
    }
    left_out_reading(&mut p, &change);
    let j = &mut p.j;
    if j.ruling.verdict == RowVerdict::Inconclusive
        && let Some(d) = j.ruling.estimate.detectable()
    {
        j.ruling.reason.push_str("; ");
        j.ruling.reason.push_str(&crate::stats::power::sentence(d));
    }
    p.j
}

/// What the pairs left out (the head's far launches, Yuen's trimmed pairs): a pass with anything of
/// the head's left out must hold with every pair's processes' mean launches too (issue 57), and
/// the reason names what was left out.
fn left_out_reading(p: &mut Prepared, change: &str) {
    let (all_in, lower, up, down) = (p.all_in, p.lower_is_better, p.up, p.down);
    let j = &mut p.j;
    if let Some(l) = &j.ruling.estimate.left_out {
        if j.ruling.verdict == RowVerdict::Pass && l.needs_all_in() {
            // With nothing left out (every pair, each process's mean launch) it must pass too.
            let all = all_in.map(|t| t.interval(j.ruling.confidence()));
            let holds = all.is_some_and(|ci| if lower { ci[1] < up } else { ci[0] > down });
            let shown = all.map_or_else(String::new, |ci| {
                format!(
                    " ([{}, {}] with nothing left out)",
                    percent(ci[0].exp_m1(), Percent::Signed2),
                    percent(ci[1].exp_m1(), Percent::Signed2)
                )
            });
            if holds {
                j.ruling
                    .reason
                    .push_str(&format!(" (and so does every pair with nothing left out{shown})"));
            } else {
                j.ruling.verdict = RowVerdict::Inconclusive;
                j.ruling.reason = format!(
                    "{change}: {}, but not with what was left out as outliers put back{shown}, so it is not a pass; measure more pairs",
                    j.ruling.reason,
                );
            }
        }
        let s = l.sentence();
        if !s.is_empty() {
            j.ruling.reason.push_str("; ");
            j.ruling.reason.push_str(&s);
        }
    }
}

/// The interval the decision used (docs/statistics.md, 2.8), as `check`'s run-level rows choose
/// it: a regression (`bad`) at its Holm level, an improvement (`good`) at its own; a pass at the
/// configured confidence, or at the improvement's level when that interval lies wholly on the
/// better side; anything else at the widest of the three (it then straddles the tolerance).
/// [`decide`] reads the verdict off the interval chosen here (a row with `min_effect` too: its
/// tolerance is relative, [`super::PairedRow::effective_tolerance`]).
fn at_decision_level(p: &mut Prepared, bad: bool, good: bool, levels: [f64; 2]) {
    let Some(tt) = p.tt else {
        return;
    };
    let confidence = p.j.ruling.confidence();
    let two_sided = |g: f64| (1.0 - 2.0 * g).clamp(0.0, 1.0 - 1e-15);
    let (c_bad, c_good) = (two_sided(levels[0]), two_sided(levels[1]));
    let widest = confidence.max(c_bad).max(c_good);
    // The interval's end on the bad side, measured in the bad direction, against the boundary.
    let (up, down, lower) = (p.up, p.down, p.lower_is_better);
    let bad_end_within = |ci: [f64; 2]| if lower { ci[1] < up } else { ci[0] > down };
    let good_beyond = |ci: [f64; 2]| if lower { ci[1] < down } else { ci[0] > up };
    let c = if bad {
        c_bad
    } else if good {
        c_good
    } else if p.exact_kind {
        widest
    } else {
        let plain = tt.interval(confidence);
        if !bad_end_within(plain) {
            widest
        } else if !good_beyond(plain) {
            confidence
        } else {
            let wider = confidence.max(c_good);
            if bad_end_within(tt.interval(wider)) {
                wider
            } else {
                widest
            }
        }
    };
    p.ci = tt.interval(c);
    p.j.ruling.estimate.confidence = Some(c);
    if let crate::stats::Shift::Change { ci, .. } = &mut p.j.ruling.estimate.shift {
        *ci = Some([p.ci[0].exp_m1(), p.ci[1].exp_m1()]);
    }
}
