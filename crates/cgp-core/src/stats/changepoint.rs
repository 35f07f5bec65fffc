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
//! exceedances, p = h / L), so series without a change cost a few dozen shuffles; `h` is at least
//! the count that already puts the full run's p-value above the level, so stopping never changes
//! a decision. A shuffle's scan is `O(n log n)`: each point's distances to the points before it
//! come from a Fenwick tree over ranks, the distances to the rest from its (order-free) distance
//! to all the others. Significant
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

/// The parts of the statistic of a segment that do not depend on the order of its points: each
/// point's rank among them and the sum of its distances to all others. Computing them once per
/// test makes a shuffle's scan `O(n log n)` instead of `O(n^2)`.
struct Prepared {
    /// Values less the segment's median (distances are unchanged; sums stay small, rounding too).
    v: Vec<f64>,
    /// 1-based rank of each value (ties in any fixed order: a tie is at distance 0 either way).
    rank: Vec<usize>,
    /// Sum of `|v_k - v_j|` over all `j`.
    dist: Vec<f64>,
    /// A Fenwick tree (count, sum) over ranks, reused by every scan.
    tree: Vec<(f64, f64)>,
}

impl Prepared {
    fn new(x: &[f64]) -> Self {
        let n = x.len();
        let mut idx: Vec<usize> = (0..n).collect();
        idx.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
        let centre = if n == 0 { 0.0 } else { x[idx[n / 2]] };
        let v: Vec<f64> = x.iter().map(|a| a - centre).collect();
        let mut rank = vec![0; n];
        for (r, &i) in idx.iter().enumerate() {
            rank[i] = r + 1;
        }
        // Distances to all others from sorted prefix sums.
        let total: f64 = v.iter().sum();
        let mut dist = vec![0.0; n];
        let mut below = 0.0_f64;
        for (r, &i) in idx.iter().enumerate() {
            let (lo, hi) = (r as f64, (n - r - 1) as f64);
            let above = total - below - v[i];
            dist[i] = lo * v[i] - below + above - hi * v[i];
            below += v[i];
        }
        Self {
            v,
            rank,
            dist,
            tree: vec![(0.0, 0.0); n + 1],
        }
    }

    /// `(tau, Q)` of the best split of the points in `order` (see [`best_split`]).
    fn best(&mut self, order: &[usize], min_segment: usize) -> Option<(usize, f64)> {
        let n = order.len();
        let m = min_segment.max(2);
        if n < 2 * m {
            return None;
        }
        self.tree.iter_mut().for_each(|t| *t = (0.0, 0.0));
        let mut right: f64 = self.dist.iter().sum::<f64>() / 2.0;
        let (mut left, mut between, mut inserted_sum) = (0.0_f64, 0.0_f64, 0.0_f64);
        let mut best: Option<(usize, f64)> = None;
        let nf = n as f64;
        for tau in 1..n {
            // Point p = tau - 1 moves from the right segment to the left one.
            let p = tau - 1;
            let k = order[p];
            let (vp, r) = (self.v[k], self.rank[k]);
            let (cl, sl) = self.below(r);
            let to_left = cl * vp - sl + (inserted_sum - sl) - (p as f64 - cl) * vp;
            let to_right = self.dist[k] - to_left;
            self.insert(r, vp);
            inserted_sum += vp;
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

    /// Count and sum of the inserted values of rank below `r`.
    fn below(&self, r: usize) -> (f64, f64) {
        let (mut c, mut s) = (0.0, 0.0);
        let mut i = r - 1;
        while i > 0 {
            c += self.tree[i].0;
            s += self.tree[i].1;
            i &= i - 1;
        }
        (c, s)
    }

    fn insert(&mut self, r: usize, v: f64) {
        let mut i = r;
        while i < self.tree.len() {
            self.tree[i].0 += 1.0;
            self.tree[i].1 += v;
            i += i & i.wrapping_neg();
        }
    }
}

/// `Q` at every split of `x` (indices `min_segment..=n-min_segment`), as `(tau, q)` of the best.
/// `order` maps positions to values, so a shuffle needs no copy. `O(n log n)`.
#[cfg(test)]
fn best_split(x: &[f64], order: &[usize], min_segment: usize) -> Option<(usize, f64)> {
    Prepared::new(x).best(order, min_segment)
}

/// Permutation test of the best split of `x`: its position, `Q`, p-value and shuffle count.
///
/// The test stops at `h` exceedances (Besag and Clifford), with `h` raised where needed to the
/// count at which the full run's p-value `(E + 1) / (L + 1)` would already be above the level:
/// stopping then never changes the decision the full run of `max_permutations` shuffles makes
/// from the same shuffles, only the p-value's precision above the level.
fn test_segment(x: &[f64], s: &Settings, rng: &mut Rng) -> Option<ChangePoint> {
    let n = x.len();
    let mut prepared = Prepared::new(x);
    let identity: Vec<usize> = (0..n).collect();
    let (tau, q) = prepared.best(&identity, s.min_segment)?;
    if q.is_nan() || q <= 0.0 {
        return None;
    }
    // A shuffle that reproduces the observed split up to rounding counts (a relative tolerance,
    // with a floor from the scale of the distances: the sums are formed in another order).
    let scale: f64 = prepared.dist.iter().sum::<f64>() / n as f64;
    let tol = q * 1e-9 + scale * 1e-12;
    let mut order = identity;
    let mut exceed = 0usize;
    let mut done = 0usize;
    let max = s.max_permutations.max(1);
    let h = s
        .stop_after_exceedances
        .max(1)
        .max(decisive_exceedances(s.level, max));
    while done < max {
        // Fisher-Yates.
        for i in (1..n).rev() {
            let j = rng.below(i + 1);
            order.swap(i, j);
        }
        done += 1;
        if let Some((_, qp)) = prepared.best(&order, s.min_segment)
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

/// Exceedances after which both the early p-value `h / L` (any `L <= max`) and the full run's
/// `(E + 1) / (max + 1)` are above `level`: `floor(level (max + 1)) + 1`.
fn decisive_exceedances(level: f64, max: usize) -> usize {
    let bound = level * (max as f64 + 1.0);
    if bound.is_finite() && bound > 0.0 {
        bound.floor() as usize + 1
    } else {
        1
    }
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
    fn fenwick_scan_matches_the_definition_on_shuffles_and_ties() {
        // Every split of shuffled orders, with repeated values, against the O(n^3) definition.
        let mut rng = Rng::new(11);
        for n in [6usize, 9, 17, 40] {
            let mut x = series(&vec![100.0; n], 0.03, n as u64);
            x[n / 2] = x[1];
            x[n - 1] = x[1];
            let mut prepared = Prepared::new(&x);
            let mut order: Vec<usize> = (0..n).collect();
            for _ in 0..5 {
                for i in (1..n).rev() {
                    order.swap(i, rng.below(i + 1));
                }
                let shuffled: Vec<f64> = order.iter().map(|&i| x[i]).collect();
                let (tau, q) = prepared.best(&order, 3).unwrap();
                let naive = (3..=n - 3)
                    .map(|t| (t, q_naive(&shuffled, t)))
                    .fold((0, f64::NEG_INFINITY), |a, b| if b.1 > a.1 { b } else { a });
                assert!(
                    (q - naive.1).abs() < 1e-9 * naive.1.abs().max(1.0),
                    "n {n}: {q} vs {naive:?}"
                );
                assert!(
                    tau == naive.0 || (q_naive(&shuffled, tau) - naive.1).abs() < 1e-9,
                    "n {n}: tau {tau} vs {naive:?}"
                );
            }
        }
    }

    #[test]
    fn early_stopping_keeps_the_full_runs_decision() {
        // SYNTHETIC, seeded: 60 series of 24 with steps from 0 to 2.5% in 1% noise (the borderline
        // region), each tested with Besag-Clifford stopping and with every one of the shuffles.
        let mut disagree = Vec::new();
        let mut significant = 0;
        for case in 0..60u64 {
            let step = (case % 6) as f64 * 0.005;
            let mut levels = vec![1000.0; 12];
            levels.extend([1000.0 * (1.0 + step); 12]);
            let x = series(&levels, 0.01, 300 + case);
            let early = settings(0.01, case);
            let full = Settings {
                stop_after_exceedances: usize::MAX,
                ..early
            };
            let a = test_segment(&x, &early, &mut Rng::new(case)).unwrap();
            let b = test_segment(&x, &full, &mut Rng::new(case)).unwrap();
            assert_eq!(b.permutations, full.max_permutations);
            assert!(a.permutations <= b.permutations);
            significant += usize::from(b.p <= 0.01);
            if (a.p <= 0.01) != (b.p <= 0.01) {
                disagree.push((case, a.p, b.p));
            }
        }
        assert!(disagree.is_empty(), "{disagree:?}");
        // Both outcomes occur, so the comparison is not vacuous.
        assert!((10..50).contains(&significant), "{significant} of 60 significant");
    }

    #[test]
    fn the_stopping_count_is_decisive() {
        assert_eq!(decisive_exceedances(0.01, 499), 6);
        assert_eq!(decisive_exceedances(5.9 / 5001.0, 5000), 6);
        assert_eq!(decisive_exceedances(0.0, 10), 1);
        // h / L and (h + 1) / (max + 1) are both above the level for any L <= max.
        for (level, max) in [(0.01, 499usize), (0.001, 5000), (5.9 / 5001.0, 5000), (0.3, 7)] {
            let h = decisive_exceedances(level, max);
            assert!(h as f64 / max as f64 > level && (h + 1) as f64 / (max + 1) as f64 > level);
        }
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
