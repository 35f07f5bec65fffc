//! What a history can find: the smallest level shift the change-point search
//! ([`super::changepoint`]) detects in a series of `n` results with a given noise, and the number
//! of results it needs to detect a given shift.
//!
//! Two limits, the tighter one wins:
//!
//! - **The permutation floor.** A permutation test of `n` points can never give a p-value below
//!   the share of orders that split them as cleanly as the data. The search's statistic is on
//!   ranks, and a perfect step scores highest in the middle: for even `n` that is
//!   `2 / C(n, n/2)` (the step, and its mirror); for odd `n` both middle splits score the same,
//!   so `4 / C(n, (n-1)/2)` (on ranks, 5 low | 6 high scores as 5 high | 6 low does). When it is
//!   above the level, no shift of any size can be found: 8 results (`2 / 70 = 0.029`) can never
//!   be significant at 0.01. The history counts as too short already when the floor is above
//!   half the level: the test estimates the p-value from `5 / level` shuffles
//!   (`changepoint::Settings::permutations_for`), and a true p-value at the level would be called
//!   significant only about half the time; at half the level, about 9 times in 10 (8 in 10 below
//!   a level of 0.001, where the shared null's 95 % bound decides: `changepoint`).
//! - **The noise.** A step of `d` (on the log scale) in the middle of `n` results with noise `s`
//!   (the CV) is found about as often as a two-sample z test of the halves, `d / (s sqrt(4/n))`,
//!   against the critical value `c` of the largest such statistic over every split the search
//!   tries: `P(max |Z| > c) ~ c phi(c) L + 4 phi(c) / c` with `L = 2 ln((n - m) / m)` for splits
//!   `m..=n-m` (the Brownian-bridge approximation of James, James and Siegmund, "Tests for a
//!   change-point", Biometrika 74, 1987). The smallest shift found with probability `power` is
//!   `d = 1.25 s (c + z_power) sqrt(4/n)`, where 1.25 ([`SEARCH_COST`]) is what the real search
//!   needs beyond the z test, measured by simulation. This is an approximation for a step in the
//!   middle (a step near either end needs more); `tests` checks it against the real search on
//!   simulated series.
//!
//! The noise is estimated from the series itself, robustly and unmoved by a step: the median
//! absolute deviation of successive log differences, scaled to a standard deviation (x 1.4826)
//! and divided by `sqrt(2)`.

use statrs::distribution::{ContinuousCDF, Normal};

/// Power at which "the smallest shift it can find" is stated.
pub const POWER: f64 = 0.8;

/// How much larger a step the real search needs than the z test of the approximation, for the
/// same power: 1.25, measured on simulated series (CV 1%, a step in the middle, found within 5%
/// of the series from it, level 0.01, 60 series each): at 1.25 times the approximation the search
/// found the step in 73-85% of series of 30, 78-82% of 150 and 87-90% of 400 (factors 1.2 and
/// 1.3; at 1.0: 53%, 63%, 75%). E-Divisive must also place the step, and its energy statistic
/// is less efficient than a z test under normal noise.
const SEARCH_COST: f64 = 1.25;

/// Most results [`results_needed`] looks for.
pub const MAX_RESULTS: usize = 100_000;

/// The smallest p-value a permutation test of the best split of `n` points can reach (see the
/// module comment); 1 when `n` is too short to split with `min_segment` points on each side.
pub(crate) fn permutation_floor(n: usize, min_segment: usize) -> f64 {
    let m = min_segment.max(2);
    if n < 2 * m {
        return 1.0;
    }
    let k = n / 2;
    // ln C(n, k) by sums of logs: exact enough, no overflow.
    let ln_c: f64 = (1..=k).map(|i| ((n - k + i) as f64 / i as f64).ln()).sum();
    // The perfect step and its mirror, at each of the middle splits (two for odd n).
    let orders: f64 = if n.is_multiple_of(2) { 2.0 } else { 4.0 };
    (orders.ln() - ln_c).exp().min(1.0)
}

/// True when `n` results can find no shift of any size at `level` (the floor is above half the
/// level; see the module comment).
pub fn too_short(n: usize, min_segment: usize, level: f64) -> bool {
    permutation_floor(n, min_segment) > level / 2.0
}

/// The fewest results in which a shift of some size can be found at `level` (the first `n` that
/// is not [`too_short`]), at most [`MAX_RESULTS`]; `None` beyond that (a level too small for any
/// history).
pub fn fewest_results(min_segment: usize, level: f64) -> Option<usize> {
    (2 * min_segment.max(2)..=MAX_RESULTS).find(|&n| !too_short(n, min_segment, level))
}

/// Critical value `c` of the largest standardized two-sample statistic over the splits
/// `m..=n-m` at `level` (two-sided), from the approximation in the module comment.
fn scan_critical(n: usize, m: usize, level: f64) -> f64 {
    let phi = |c: f64| (-0.5 * c * c).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let span = 2.0 * ((n - m) as f64 / m as f64).ln().max(0.0);
    let tail = |c: f64| c * phi(c) * span + 4.0 * phi(c) / c;
    // `tail` falls from c = 1 on: bisect.
    let (mut lo, mut hi) = (1.0_f64, 40.0_f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if tail(mid) > level {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// The smallest relative shift (after / before - 1, either way) found with probability [`POWER`]
/// in `n` results with noise `cv` at `level`; `None` when `n` results can find no shift at all
/// (the permutation floor is above the level, or `n` is too short to split).
pub(crate) fn smallest_shift(n: usize, cv: f64, level: f64, min_segment: usize) -> Option<f64> {
    if !(level > 0.0 && level < 1.0 && cv.is_finite() && cv >= 0.0) {
        return None;
    }
    if too_short(n, min_segment, level) {
        return None;
    }
    let m = min_segment.max(2);
    let c = scan_critical(n, m, level);
    let z = Normal::standard().inverse_cdf(POWER);
    let k = (n / 2) as f64;
    let se = cv * (1.0 / k + 1.0 / (n as f64 - k)).sqrt();
    Some((SEARCH_COST * (c + z) * se).exp_m1())
}

/// The smallest relative shift found AND reported with probability [`POWER`] when only shifts
/// whose estimate is at least `min_change` are reported (`changes --min-change`): a step exactly
/// at the floor is estimated below it about half the time and then not reported (issue 43: a
/// real +1 % step under `--min-change 1%` was found in 15 of 30 histories while the reach said
/// +1.00 %, the floor itself). So the reach is the larger of [`smallest_shift`] and the floor plus
/// `z_POWER` standard errors of the step's estimate (the difference of the two halves' means,
/// times the search's cost). `None` as [`smallest_shift`].
pub fn smallest_reported(n: usize, cv: f64, level: f64, min_segment: usize, min_change: f64) -> Option<f64> {
    let found = smallest_shift(n, cv, level, min_segment)?;
    if !(min_change.is_finite() && min_change > 0.0) {
        return Some(found);
    }
    let z = Normal::standard().inverse_cdf(POWER);
    let k = (n / 2) as f64;
    let se = cv * (1.0 / k + 1.0 / (n as f64 - k)).sqrt();
    let floor = (min_change.ln_1p() + SEARCH_COST * z * se).exp_m1();
    Some(found.max(floor))
}

/// The fewest results (at most [`MAX_RESULTS`]) in which a shift of `shift` (relative, either
/// way) is found with probability [`POWER`], with noise `cv` at `level`; `None` beyond that.
pub fn results_needed(shift: f64, cv: f64, level: f64, min_segment: usize) -> Option<usize> {
    let shift = shift.abs();
    let found = |n: usize| smallest_shift(n, cv, level, min_segment).is_some_and(|d| d <= shift);
    let first = 2 * min_segment.max(2);
    if found(first) {
        return Some(first);
    }
    // The smallest shift falls with n (as 1/sqrt(n), up to the slowly growing critical value):
    // double, then bisect.
    let mut hi = first;
    while !found(hi) {
        if hi >= MAX_RESULTS {
            return None;
        }
        hi = (hi * 2).min(MAX_RESULTS);
    }
    let mut lo = hi / 2;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if found(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// The noise of a series as a CV, robust to a level shift: MAD of the successive log
/// differences x 1.4826 / sqrt(2). `None` with fewer than 3 values or any value not positive.
pub fn noise_cv(values: &[f64]) -> Option<f64> {
    if values.len() < 3 || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let d: Vec<f64> = values.windows(2).map(|w| (w[1] / w[0]).ln()).collect();
    let mid = super::median(&d)?;
    let dev: Vec<f64> = d.iter().map(|x| (x - mid).abs()).collect();
    Some(1.4826 * super::median(&dev)? / std::f64::consts::SQRT_2)
}

#[cfg(test)]
mod tests {
    use super::super::changepoint::{Settings, e_divisive};
    use super::super::rng::Rng;
    use super::*;

    #[test]
    fn eight_results_can_find_nothing_at_one_percent() {
        // 4 + 4 results: 2 / C(8, 4) = 2 / 70 is above 0.01 whatever the shift.
        assert!((permutation_floor(8, 3) - 2.0 / 70.0).abs() < 1e-12);
        assert_eq!(smallest_shift(8, 0.002, 0.01, 3), None);
        assert!(permutation_floor(5, 3) >= 1.0);
        // Nor 10 (2 / 252 is above half of 0.01); 12 can (2 / 924). At the level of 9 series,
        // 16 results are needed (2 / 3432 > 0.01 / 18 > 2 / 12870).
        assert!(too_short(10, 3, 0.01) && !too_short(12, 3, 0.01));
        // On ranks an odd count's two middle splits score the same: 4 / C(11, 5) = 4 / 462, above
        // half of 0.01 (the values' 2 / 462 was below it).
        assert!((permutation_floor(11, 3) - 4.0 / 462.0).abs() < 1e-12);
        assert!(too_short(11, 3, 0.01) && !too_short(13, 3, 0.01));
        assert!(smallest_shift(12, 0.002, 0.01, 3).is_some());
        assert_eq!(smallest_shift(14, 0.002, 0.01 / 9.0, 3), None);
        assert!(smallest_shift(16, 0.002, 0.01 / 9.0, 3).is_some());
        let n = results_needed(0.035, 0.01, 0.01, 3).unwrap();
        assert!(smallest_shift(n, 0.01, 0.01, 3).unwrap() <= 0.035);
        assert!(smallest_shift(n - 1, 0.01, 0.01, 3).is_none_or(|d| d > 0.035));
        assert!(n > 8, "{n}");
    }

    #[test]
    fn more_results_find_smaller_shifts() {
        let a = smallest_shift(30, 0.01, 0.01, 3).unwrap();
        let b = smallest_shift(120, 0.01, 0.01, 3).unwrap();
        let c = smallest_shift(30, 0.01, 0.0001, 3).unwrap();
        assert!(b < a && c > a, "{a} {b} {c}");
        assert_eq!(results_needed(0.0001, 0.5, 0.01, 3), None);
        assert_eq!(smallest_shift(30, f64::NAN, 0.01, 3), None);
    }

    #[test]
    fn the_reach_is_never_the_floor_itself() {
        // A quiet series finds small shifts, but only those estimated at 1 % or more are
        // reported: a step at the floor is missed about half the time, so the reach lies above.
        let found = smallest_shift(60, 0.002, 0.01, 3).unwrap();
        let reported = smallest_reported(60, 0.002, 0.01, 3, 0.01).unwrap();
        assert!(found < 0.01 && reported > 0.01, "{found} {reported}");
        // A noisy series is limited by its noise, not by the floor.
        let noisy = smallest_shift(60, 0.02, 0.01, 3).unwrap();
        assert_eq!(smallest_reported(60, 0.02, 0.01, 3, 0.01), Some(noisy));
        assert_eq!(smallest_reported(60, 0.002, 0.01, 3, 0.0), Some(found));
    }

    #[test]
    fn noise_is_read_through_a_step() {
        // SYNTHETIC: CV 1% with a +10% step in the middle.
        let mut r = Rng::new(5);
        let x: Vec<f64> = (0..400)
            .map(|i| if i < 200 { 1000.0 } else { 1100.0 } * (0.01 * r.normal()).exp())
            .collect();
        let cv = noise_cv(&x).unwrap();
        assert!((0.009..0.011).contains(&cv), "{cv}");
        assert_eq!(noise_cv(&[1.0, 2.0]), None);
        assert_eq!(noise_cv(&[1.0, 0.0, 2.0]), None);
    }

    /// SYNTHETIC: share of series of `n` (CV 1%, a step of `step` in the middle) in which the
    /// real search finds a change at the step (+- 5% of `n`, at least 2).
    fn found_rate(n: usize, step: f64, level: f64, runs: u64) -> f64 {
        let mut hits = 0;
        for seed in 0..runs {
            let mut r = Rng::new(900 + seed);
            let x: Vec<f64> = (0..n)
                .map(|i| if i < n / 2 { 1000.0 } else { 1000.0 * (1.0 + step) } * (0.01 * r.normal()).exp())
                .collect();
            let s = Settings {
                level,
                max_permutations: Settings::permutations_for(level),
                stop_after_exceedances: 10,
                min_segment: 3,
                seed,
            };
            let near = (n / 20).max(2);
            hits += usize::from(e_divisive(&x, &s).iter().any(|c| c.index.abs_diff(n / 2) <= near));
        }
        hits as f64 / runs as f64
    }

    #[test]
    fn the_stated_smallest_shift_matches_the_real_search() {
        // SYNTHETIC: 40 series of 30 and of 60 at the stated shift: found in about POWER of them
        // (a wide band: 40 runs, and the approximation is for the middle); at half of it, rarely.
        for n in [30, 60] {
            let d = smallest_shift(n, 0.01, 0.01, 3).unwrap();
            let at = found_rate(n, d, 0.01, 40);
            let half = found_rate(n, d / 2.0, 0.01, 40);
            assert!((0.6..=1.0).contains(&at), "n {n}: {d} found in {at}");
            assert!(half < 0.5, "n {n}: {} found in {half}", d / 2.0);
        }
    }
}
