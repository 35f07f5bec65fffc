//! What a row could find (issue 57): its minimum detectable change, the smallest change beyond its
//! threshold that its own test finds in [`POWER`] of checks at the level it spent, for its own noise
//! and processes. A row states it in the results (`detectable`) and, when inconclusive, in its
//! reason: "this run could detect changes of about 5.20% or more".
//!
//! For a one-sided test at level `a` of a shift with standard error `se` (`df` degrees of
//! freedom) against the boundary `b` (log scale, in the bad direction), a true shift `x` is found
//! with probability `P(T > q_(1-a) - (x - b) / se)`; it is `POWER` at `x = b + (q_(1-a) + q_POWER)
//! se`, with `q` the t quantiles (normal ones for the rank test). The same approximation as the
//! drift cost (`jobspread::drift_cost`) and `calibrate`'s `min_detectable`. Pure; no I/O.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

use crate::foundation::units::{Percent, percent};

/// The power the detectable change is stated at.
pub const POWER: f64 = 0.8;

/// The `p` quantile of Student's t with `df` degrees of freedom; the normal one for an infinite
/// (or huge) `df`.
pub fn quantile(p: f64, df: f64) -> f64 {
    let p = p.clamp(1e-15, 1.0 - 1e-15);
    if df.is_finite()
        && df < 1e6
        && let Ok(t) = StudentsT::new(0.0, 1.0, df.max(1.0))
    {
        return t.inverse_cdf(p);
    }
    Normal::standard().inverse_cdf(p)
}

/// The boundary of a relative tolerance `t` on the log scale, measured in the bad direction:
/// `ln(1 + t)` when an increase is bad, `-ln(1 - t)` when a decrease is (none from 100 % on).
pub fn bound(t: f64, increase_is_bad: bool) -> Option<f64> {
    if !(t.is_finite() && t >= 0.0) {
        return None;
    }
    if increase_is_bad {
        Some(t.ln_1p())
    } else {
        (t < 1.0).then(|| -(-t).ln_1p())
    }
}

/// The smallest shift (log scale, bad direction) a one-sided test at `level` against `bound`
/// finds with probability [`POWER`], for a standard error `se` with `df` degrees of freedom.
pub fn detectable_log(bound: f64, se: f64, df: f64, level: f64) -> Option<f64> {
    if !(se.is_finite() && se >= 0.0 && bound.is_finite() && level > 0.0 && level < 1.0) {
        return None;
    }
    let x = bound + (quantile(1.0 - level, df) + quantile(POWER, df)) * se;
    x.is_finite().then_some(x)
}

/// A shift on the log scale in the bad direction, as the relative change it is: `+5.2 %` when an
/// increase is bad, `-4.9 %` when a decrease is.
pub fn as_change(x: f64, increase_is_bad: bool) -> f64 {
    if increase_is_bad {
        x.exp_m1()
    } else {
        (-x).exp_m1()
    }
}

/// The detectable change of a row (signed, the bad way): [`detectable_log`] against the tolerance
/// `t`, as a relative change.
pub fn detectable(t: f64, increase_is_bad: bool, se: f64, df: f64, level: f64) -> Option<f64> {
    let b = bound(t, increase_is_bad)?;
    detectable_log(b, se, df, level).map(|x| as_change(x, increase_is_bad))
}

/// How far beyond the threshold, in between-process standard deviations, a change must lie for
/// the t test of `runs` candidate processes' logs (one value each) against `baseline` processes to
/// find it in [`POWER`] of checks at the first look of the plan `runs -> 2 runs`, at `alpha` over
/// `rows` rows (Bonferroni's share of the first look, Holm's first step):
/// `(t_(1 - a) + t_POWER) sqrt(1 / baseline + 1 / runs)` with `runs + baseline - 2` degrees of
/// freedom, `a = alpha / (2 rows)`.
pub fn reach_in_sds(runs: u32, baseline: u32, rows: usize, alpha: f64) -> f64 {
    let (s, r) = (f64::from(runs.max(1)), f64::from(baseline.max(1)));
    let df = (s + r - 2.0).max(1.0);
    let level = alpha / (2.0 * rows.max(1) as f64);
    (quantile(1.0 - level, df) + quantile(POWER, df)) * (1.0 / r + 1.0 / s).sqrt()
}

/// The between-process standard deviations beyond the threshold that `init` plans a summary row
/// (one value per process) to find ([`reach_in_sds`]): with the between-process noise at half the
/// threshold, a change of twice the threshold.
pub const PLANNED_REACH_SDS: f64 = 2.5;

/// The fewest processes, from 3 to 10, whose [`reach_in_sds`] is at most [`PLANNED_REACH_SDS`]
/// (10 when none), and their reach.
pub fn processes_to_decide(baseline: u32, rows: usize, alpha: f64) -> (u32, f64) {
    (3..=10)
        .map(|s| (s, reach_in_sds(s, baseline, rows, alpha)))
        .find(|(_, x)| *x <= PLANNED_REACH_SDS)
        .unwrap_or_else(|| (10, reach_in_sds(10, baseline, rows, alpha)))
}

/// The clause an inconclusive row's reason ends with.
pub fn sentence(detectable: f64) -> String {
    format!("{} (80% power at the level it spent)", short(detectable))
}

/// The same without its parenthesis, for a report's verdict cell.
pub fn short(detectable: f64) -> String {
    format!(
        "this run could detect changes of about {} or more",
        percent(detectable.abs(), Percent::Plain2)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_detectable_change_is_found_in_four_of_five_checks() {
        // SYNTHETIC: a shift exactly at the stated change, tested one-sided at 1 % against ln 1.03
        // with a known standard error of 0.5 %: found in about 80 % of 20 000 draws (normal).
        let (se, level) = (0.005, 0.01);
        let x = detectable_log(0.03_f64.ln_1p(), se, f64::INFINITY, level).unwrap();
        let z = Normal::standard().inverse_cdf(1.0 - level);
        let mut rng = crate::stats::rng::Rng::new(57);
        let n = 20_000;
        let found = (0..n)
            .filter(|_| (x + se * rng.normal() - 0.03_f64.ln_1p()) / se > z)
            .count();
        let share = found as f64 / f64::from(n);
        assert!((share - POWER).abs() < 0.015, "{share}");
        // Few degrees of freedom ask for more.
        assert!(detectable_log(0.03_f64.ln_1p(), se, 5.0, level).unwrap() > x);
        // Both directions, as changes the bad way.
        let up = detectable(0.03, true, se, f64::INFINITY, level).unwrap();
        let down = detectable(0.03, false, se, f64::INFINITY, level).unwrap();
        assert!(up > 0.03 && down < -0.03, "{up} {down}");
        assert!(
            sentence(up).starts_with("this run could detect changes of about 4."),
            "{}",
            sentence(up)
        );
        assert_eq!(bound(1.0, false), None);
        // init's plan for summary rows: 3 processes reach 2.9 sds at 2 rows, 5 reach 2.3.
        assert!(
            (reach_in_sds(3, 10, 2, 0.01) - 2.88).abs() < 0.02,
            "{}",
            reach_in_sds(3, 10, 2, 0.01)
        );
        assert_eq!(processes_to_decide(10, 2, 0.01).0, 5);
        assert_eq!(processes_to_decide(10, 1, 0.01).0, 4);
        assert!(processes_to_decide(10, 50, 0.01).0 >= 7);
        assert_eq!(detectable(0.03, true, f64::NAN, 3.0, 0.01), None);
    }
}
