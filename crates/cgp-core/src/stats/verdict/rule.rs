//! The rule a row's verdict follows from the interval it shows (docs/statistics.md, 2.8): one
//! estimate and one interval per row, the ones the decision used, at the level it used them.
//! The run-level model (`run-level-t`) and `ab`'s paired t (`paired-t`) choose the interval they
//! show so that this rule gives their verdict; `exact` rows show no interval and follow it with
//! the change itself (a point interval). Tests check every such row against it, on real replays
//! and on generated rows.

use crate::foundation::threshold::Direction;
use crate::stats::row::RowVerdict;

/// The verdict an interval `[lo, hi]` of the relative change gives against the relative
/// `tolerance` (the threshold, or `min_effect` relative to the baseline's median where larger):
/// with the interval's ends measured in the bad direction (`lo`, `hi` for `direction: lower`;
/// `-hi`, `-lo` for `higher`):
/// - regression: the whole interval lies beyond the tolerance (`bad_lo > T`);
/// - improvement: the whole interval lies beyond it the better way (`bad_hi < -T`);
/// - pass: the interval rules a regression out (`bad_hi < T`) and is not wholly better than `-T`;
/// - inconclusive: the interval reaches the tolerance (`bad_lo <= T <= bad_hi`).
///
/// An `exact` threshold on a noisy metric (`exact`: the tolerance is 0 and only the test decides)
/// passes when the interval holds no change (`bad_lo <= 0 <= bad_hi`).
pub fn verdict_of_interval(ci: [f64; 2], tolerance: f64, direction: Direction, exact: bool) -> RowVerdict {
    let (bad_lo, bad_hi) = match direction {
        Direction::Lower => (ci[0], ci[1]),
        Direction::Higher => (-ci[1], -ci[0]),
    };
    let t = if exact { 0.0 } else { tolerance };
    if bad_lo > t {
        RowVerdict::Regression
    } else if bad_hi < -t {
        RowVerdict::Improvement
    } else if exact || bad_hi < t {
        RowVerdict::Pass
    } else {
        RowVerdict::Inconclusive
    }
}

/// The verdict an interval `[lo, hi]` of a candidate's median gives against a `max:` limit
/// (`is_max`) or a `min:` one (`min_effect` applied): regression when it lies wholly on the wrong
/// side (`lo > limit` for `max:`, `hi < limit` for `min:`), pass when wholly on the right side
/// (the limit itself allowed), inconclusive when it straddles the limit.
pub fn verdict_of_limit(ci: [f64; 2], limit: f64, is_max: bool) -> RowVerdict {
    let (wrong, right) = if is_max {
        (ci[0] > limit, ci[1] <= limit)
    } else {
        (ci[1] < limit, ci[0] >= limit)
    };
    if wrong {
        RowVerdict::Regression
    } else if right {
        RowVerdict::Pass
    } else {
        RowVerdict::Inconclusive
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_reads_the_interval_against_the_tolerance_both_ways() {
        let v = |lo, hi, d| verdict_of_interval([lo, hi], 0.03, d, false);
        assert_eq!(v(0.031, 0.05, Direction::Lower), RowVerdict::Regression);
        assert_eq!(v(0.02, 0.05, Direction::Lower), RowVerdict::Inconclusive);
        assert_eq!(v(-0.01, 0.029, Direction::Lower), RowVerdict::Pass);
        assert_eq!(v(-0.05, -0.031, Direction::Lower), RowVerdict::Improvement);
        assert_eq!(v(-0.05, -0.02, Direction::Lower), RowVerdict::Pass);
        assert_eq!(v(-0.05, -0.031, Direction::Higher), RowVerdict::Regression);
        assert_eq!(v(0.031, 0.05, Direction::Higher), RowVerdict::Improvement);
        assert_eq!(
            verdict_of_interval([-0.01, 0.01], 0.0, Direction::Lower, true),
            RowVerdict::Pass
        );
        assert_eq!(
            verdict_of_interval([0.001, 0.01], 0.0, Direction::Lower, true),
            RowVerdict::Regression
        );
    }

    #[test]
    fn a_limit_interval_reads_against_its_side_of_the_limit() {
        assert_eq!(verdict_of_limit([11.0, 12.0], 10.0, true), RowVerdict::Regression);
        assert_eq!(verdict_of_limit([9.0, 10.0], 10.0, true), RowVerdict::Pass);
        assert_eq!(
            verdict_of_limit([9.0, 11.0], 10.0, true),
            RowVerdict::Inconclusive
        );
        assert_eq!(verdict_of_limit([8.0, 9.0], 10.0, false), RowVerdict::Regression);
        assert_eq!(verdict_of_limit([10.0, 12.0], 10.0, false), RowVerdict::Pass);
        assert_eq!(
            verdict_of_limit([9.0, 11.0], 10.0, false),
            RowVerdict::Inconclusive
        );
    }
}
