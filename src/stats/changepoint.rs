//! Change points in a series of medians: E-Divisive means with a permutation test.
//!
//! The statistic is the energy-distance divergence of Matteson and James ("A Nonparametric
//! Approach for Multiple Change Point Analysis of Multivariate Data", JASA 2014), with exponent
//! alpha = 1, as MongoDB's performance CI uses it (Daly et al., "The Use of Change Point Detection
//! to Identify Software Performance Regressions in a Continuous Integration System", ICPE 2020)
//! and Apache Otava (ex-Hunter) after it. For a segment `x[0..n]` split at `tau`:
//!
//! ```text
//! E(tau) = 2/(tau (n-tau)) sum_{i<tau<=j} |x_i - x_j|
//!        - 1/C(tau,2)      sum_{i<k<tau}  |x_i - x_k|
//!        - 1/C(n-tau,2)    sum_{tau<=j<k} |x_j - x_k|
//! Q(tau) = tau (n-tau) / n * E(tau)
//! ```
//!
//! The candidate is the `tau` maximising `Q`. Its significance comes from a permutation test: the
//! segment is shuffled (seeded) and the maximum of `Q` recomputed; the p-value is the share of
//! shuffles at least as extreme. The test stops early once the p-value is clearly above the level
//! (Besag and Clifford, "Sequential Monte Carlo p-values", Biometrika 1991: stop at `h`
//! exceedances, p = h / L), so series without a change cost a few dozen shuffles. Significant
//! splits are applied by binary segmentation: each side is searched again until no split is
//! significant or the segments are too short.
//!
//! Written here rather than taken from a crate: no maintained Rust crate implements E-Divisive with
//! a seeded permutation test, and the exact sequence must stay reproducible across dependency
//! upgrades (see `rng.rs`).

use super::rng::Rng;

/// Settings of one search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// A split is significant when its permutation p-value is at most this.
    pub level: f64,
    /// Most shuffles per test.
    pub max_permutations: usize,
    /// Stop a test after this many shuffles at least as extreme as the observed split.
    pub stop_after_exceedances: usize,
    /// Fewest points on each side of a split.
    pub min_segment: usize,
    /// Seed of the shuffles (derive it from the series key).
    pub seed: u64,
}

impl Settings {
    /// Shuffles needed so that a split can reach `level`: the smallest possible p-value is
    /// `1 / (R + 1)`, and five times that resolution keeps the power loss small.
    pub fn permutations_for(level: f64) -> usize {
        if level.is_nan() || level <= 0.0 {
            return 199;
        }
        let r = (5.0 / level).ceil();
        if r > 2_000_000.0 {
            2_000_000
        } else {
            (r as usize).max(199)
        }
    }
}

/// One significant split.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// Position in the series where the new level starts (the first point after the change).
    pub index: usize,
    /// Permutation p-value of the split within its segment.
    pub p: f64,
    /// The statistic `Q` of the split.
    pub q: f64,
    /// Shuffles the test ran.
    pub permutations: usize,
}

/// `Q` at every split of `x` (indices `min_segment..=n-min_segment`), as `(tau, q)` of the best.
/// `order` maps positions to values, so a shuffle needs no copy. O(n^2).
fn best_split(x: &[f64], order: &[usize], min_segment: usize) -> Option<(usize, f64)> {
    let n = order.len();
    let m = min_segment.max(2);
    if n < 2 * m {
        return None;
    }
    let v = |i: usize| x[order[i]];
    // Sums of |x_i - x_j| within left, within right and between, for tau = 0: all within right.
    let mut left = 0.0_f64;
    let mut between = 0.0_f64;
    let mut right = 0.0_f64;
    for i in 0..n {
        for j in (i + 1)..n {
            right += (v(i) - v(j)).abs();
        }
    }
    let mut best: Option<(usize, f64)> = None;
    let nf = n as f64;
    for tau in 1..n {
        // Point p = tau - 1 moves from the right segment to the left one.
        let p = tau - 1;
        let vp = v(p);
        let to_left: f64 = (0..p).map(|i| (v(i) - vp).abs()).sum();
        let to_right: f64 = ((p + 1)..n).map(|j| (vp - v(j)).abs()).sum();
        left += to_left;
        between += to_right - to_left;
        right -= to_right;
        if tau < m || n - tau < m {
            continue;
        }
        let (a, b) = (tau as f64, (n - tau) as f64);
        let e = 2.0 * between / (a * b) - 2.0 * left / (a * (a - 1.0)) - 2.0 * right / (b * (b - 1.0));
        let q = a * b / nf * e;
        if best.is_none_or(|(_, bq)| q > bq) {
            best = Some((tau, q));
        }
    }
    best
}

/// Permutation test of the best split of `x`: its position, `Q`, p-value and shuffle count.
fn test_segment(x: &[f64], s: &Settings, rng: &mut Rng) -> Option<ChangePoint> {
    let n = x.len();
    let identity: Vec<usize> = (0..n).collect();
    let (tau, q) = best_split(x, &identity, s.min_segment)?;
    if q.is_nan() || q <= 0.0 {
        return None;
    }
    // A relative tolerance: a shuffle that reproduces the observed split up to rounding counts.
    let tol = q * 1e-12;
    let mut order = identity;
    let mut exceed = 0usize;
    let mut done = 0usize;
    let max = s.max_permutations.max(1);
    let h = s.stop_after_exceedances.max(1);
    while done < max {
        // Fisher-Yates.
        for i in (1..n).rev() {
            let j = rng.below(i + 1);
            order.swap(i, j);
        }
        done += 1;
        if let Some((_, qp)) = best_split(x, &order, s.min_segment)
            && qp >= q - tol
        {
            exceed += 1;
            if exceed >= h {
                break;
            }
        }
    }
    let p = if exceed >= h {
        exceed as f64 / done as f64
    } else {
        (exceed + 1) as f64 / (done + 1) as f64
    };
    Some(ChangePoint {
        index: tau,
        p,
        q,
        permutations: done,
    })
}

/// Significant change points of `x`, in increasing order of `index`.
///
/// Non-finite values make no sense in a level series: the caller leaves them out. Constant
/// segments have no split. Deterministic for a given `settings.seed`.
pub fn e_divisive(x: &[f64], settings: &Settings) -> Vec<ChangePoint> {
    if x.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let mut rng = Rng::new(settings.seed);
    let mut found: Vec<ChangePoint> = Vec::new();
    // Segments still to search, as [start, end).
    let mut todo: Vec<(usize, usize)> = vec![(0, x.len())];
    while let Some((start, end)) = todo.pop() {
        let Some(cp) = test_segment(&x[start..end], settings, &mut rng) else {
            continue;
        };
        if cp.p > settings.level {
            continue;
        }
        let at = start + cp.index;
        found.push(ChangePoint { index: at, ..cp });
        // Right first on the stack, so the left side is searched next (order does not change
        // the result, only which shuffles each test draws; keep it fixed for reproducibility).
        todo.push((at, end));
        todo.push((start, at));
    }
    found.sort_by_key(|c| c.index);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(level: f64, seed: u64) -> Settings {
        Settings {
            level,
            max_permutations: Settings::permutations_for(level),
            stop_after_exceedances: 10,
            min_segment: 3,
            seed,
        }
    }

    /// SYNTHETIC: log-normal noise with the given CV around `level[i]`.
    fn series(levels: &[f64], cv: f64, seed: u64) -> Vec<f64> {
        let mut r = Rng::new(seed);
        levels.iter().map(|l| l * (cv * r.normal()).exp()).collect()
    }

    /// The statistic by its definition, O(n^3), to check the incremental sums.
    fn q_naive(x: &[f64], tau: usize) -> f64 {
        let n = x.len();
        let (a, b) = (tau as f64, (n - tau) as f64);
        let mut between = 0.0;
        let mut left = 0.0;
        let mut right = 0.0;
        for i in 0..n {
            for j in (i + 1)..n {
                let d = (x[i] - x[j]).abs();
                match (i < tau, j < tau) {
                    (true, true) => left += d,
                    (false, false) => right += d,
                    _ => between += d,
                }
            }
        }
        let e = 2.0 * between / (a * b) - left / (a * (a - 1.0) / 2.0) - right / (b * (b - 1.0) / 2.0);
        a * b / n as f64 * e
    }

    #[test]
    fn incremental_statistic_matches_the_definition() {
        let x = series(&[100.0; 17], 0.05, 3);
        let idx: Vec<usize> = (0..x.len()).collect();
        let (tau, q) = best_split(&x, &idx, 3).unwrap();
        let naive_best = (3..=14)
            .map(|t| (t, q_naive(&x, t)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap();
        assert_eq!(tau, naive_best.0);
        assert!(
            (q - naive_best.1).abs() < 1e-9 * naive_best.1.abs().max(1.0),
            "{q} vs {naive_best:?}"
        );
    }

    #[test]
    fn a_clean_step_is_found_where_it_is() {
        let mut x = vec![10.0; 8];
        x.extend([12.0; 8]);
        let cps = e_divisive(&x, &settings(0.01, 1));
        assert_eq!(cps.len(), 1, "{cps:?}");
        assert_eq!(cps[0].index, 8);
        assert!(cps[0].p <= 0.01);
    }

    #[test]
    fn two_percent_step_in_one_percent_noise_is_found_at_15() {
        // SYNTHETIC: 30 points, CV 1%, +2% from position 15 on, level 0.01. One series (seed
        // 100) as the issue states it, then the rate over 100 seeds: a 2-sigma step cannot always
        // be placed within one point (measured: 82% of 300 seeds at 15 +- 1, 5% not detected,
        // the rest placed 2-8 points away).
        let mut levels = vec![1000.0; 15];
        levels.extend([1020.0; 15]);
        let x = series(&levels, 0.01, 100);
        let cps = e_divisive(&x, &settings(0.01, 0));
        assert!(cps.iter().any(|c| c.index.abs_diff(15) <= 1), "{cps:?}");
        let mut hits = 0;
        for seed in 0..100 {
            let x = series(&levels, 0.01, 1000 + seed);
            let cps = e_divisive(&x, &settings(0.01, seed));
            hits += usize::from(cps.iter().any(|c| c.index.abs_diff(15) <= 1));
        }
        assert!(hits >= 72, "found at 15 +- 1 in {hits} of 100 series");
    }

    #[test]
    fn flat_series_rarely_split() {
        // SYNTHETIC: 200 flat series of 30, CV 1%, tested at level 0.01 each: about 2 expected by
        // chance; more than 8 (binomial tail < 1e-3) means the test is miscalibrated.
        let mut false_splits = 0;
        for seed in 0..200 {
            let x = series(&[1000.0; 30], 0.01, 5000 + seed);
            false_splits += usize::from(!e_divisive(&x, &settings(0.01, seed)).is_empty());
        }
        assert!(false_splits <= 8, "{false_splits} of 200 flat series split");
    }

    #[test]
    fn degenerate_inputs() {
        let s = settings(0.05, 0);
        assert!(e_divisive(&[], &s).is_empty());
        assert!(e_divisive(&[1.0, 2.0, 3.0], &s).is_empty());
        assert!(e_divisive(&[5.0; 40], &s).is_empty());
        assert!(e_divisive(&[1.0, f64::NAN, 2.0, 3.0, 4.0, 5.0, 6.0], &s).is_empty());
        assert_eq!(Settings::permutations_for(0.05), 199);
        assert_eq!(Settings::permutations_for(1e-4), 50_000);
        assert_eq!(Settings::permutations_for(0.0), 199);
    }

    #[test]
    fn same_seed_same_answer() {
        let mut levels = vec![100.0; 12];
        levels.extend([103.0; 12]);
        let x = series(&levels, 0.01, 9);
        assert_eq!(
            e_divisive(&x, &settings(0.01, 4)),
            e_divisive(&x, &settings(0.01, 4))
        );
    }
}
