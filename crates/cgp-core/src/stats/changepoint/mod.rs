//! Change points in a series of medians: E-Divisive means on ranks, with a permutation test.
//!
//! The statistic is the energy-distance divergence of Matteson and James ("A Nonparametric
//! Approach for Multiple Change Point Analysis of Multivariate Data", JASA 2014), with exponent
//! alpha = 1, as MongoDB's performance CI uses it (Daly et al., "The Use of Change Point Detection
//! to Identify Software Performance Regressions in a Continuous Integration System", ICPE 2020)
//! and Apache Otava (ex-Hunter) after it, computed on the RANKS of the segment's values. For
//! ranks `r[0..n]` split at `tau`:
//!
//! ```text
//! E(tau) = 2/(tau (n-tau)) sum_{i<tau<=j} |r_i - r_j|
//!        - 1/C(tau,2)      sum_{i<k<tau}  |r_i - r_k|
//!        - 1/C(n-tau,2)    sum_{tau<=j<k} |r_j - r_k|
//! Q(tau) = tau (n-tau) / n * E(tau)
//! ```
//!
//! The candidate is the `tau` maximising `Q`; its significance comes from a permutation test.
//!
//! **Why ranks.** Ties are broken in a seeded uniform random order, so under the null hypothesis
//! (the segment's values exchangeable) the ranks are a uniform random permutation of `1..=n`
//! whatever the values' distribution: the test stays exact, and the null distribution of the
//! largest `Q` depends on `n` and `min_segment` only. One sample of that null can then serve every
//! segment of `n` points (below). The values' own statistic had a null of its own per series, so
//! every series with a real change paid for its whole permutation test: at `alpha / 5,000`
//! (Bonferroni over 5,000 series) that was 2,000,000 shuffles per significant test, more than 15
//! CPU-minutes for `changes` over 1,000,000 results (docs/scale.md). Ranks also make a single
//! wild value weigh no more than any other point. The power is the values' statistic's within the
//! simulation's error (docs/statistics.md 6.8, measured by the studies in `tests.rs`).
//!
//! **Each test in two steps.** With `L = max_permutations` shuffles (`5 / level`):
//!
//! 1. The segment's own shuffles, at most `OWN_SHUFFLES` (5,000), stopping at `h` shuffles at
//!    least as extreme as the data (Besag and Clifford, "Sequential Monte Carlo p-values",
//!    Biometrika 1991): stopped, the split is not significant, p = `h / shuffles`. Declaring a test
//!    not significant early never makes it anti-conservative; `h` is set so that a split whose
//!    true p-value is at the level stops here at most 1 time in 1,000 (a Poisson tail: at most
//!    that power lost). Series without a change stop after a few dozen shuffles.
//! 2. When `L <= OWN_SHUFFLES` the own shuffles were the whole test, as before:
//!    `p = (E + 1) / (L + 1)`, and `h` is at least the count that already puts that p above the
//!    level, so stopping never changes a decision. Otherwise a segment that reaches
//!    `OWN_SHUFFLES` without stopping is compared with the shared null of its length
//!    ([`NullCache`]): `D = 4 L` draws of the largest `Q` of a random permutation of `1..=n`,
//!    seeded from the cache's seed, `n`, `min_segment` and `D`, drawn once per length and
//!    process. With `c` draws at least the observed `Q`, `p` is the 95 % upper confidence bound of
//!    the exceedance probability (Poisson, conservative against the binomial). Significant
//!    (`p <= level`) thus means that the threshold of the shared draws, which every segment of
//!    that length shares, is at most the level with 95 % probability over the draws, not only on
//!    average: the draws' error is common to those segments and does not average out over the
//!    series the way independent tests' did. On average the test runs at about two thirds of the
//!    level (`4 L` draws hold 20 expected exceedances at the level; 12 or fewer pass). The
//!    rejection of the two steps together is a subset of step 2's, so Bonferroni over the series
//!    stays valid.
//!
//! A decision depends on the segment, its seed and the cache's seed only, never on which other
//! segments shared the cache. A scan (one shuffle's largest `Q`) is `O(n log n)`: each point's
//! distances to the points before it come from a Fenwick tree over ranks, those to all points
//! from its rank. Significant splits are applied by binary segmentation: each side is searched
//! again (its own ranks) until no split is significant or the segments are too short. A constant
//! segment has no split.
//!
//! Written here rather than taken from a crate: no maintained Rust crate implements E-Divisive with
//! a seeded permutation test, and the exact sequence must stay reproducible across dependency
//! upgrades (see `rng.rs`).

mod null;

use super::rng::Rng;
pub use null::NullCache;

/// Shuffles a test draws on its own before it turns to the shared null of its length.
const OWN_SHUFFLES: usize = 5_000;

/// Settings of one search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// A split is significant when its permutation p-value is at most this.
    pub level: f64,
    /// Shuffles that resolve the level (`p >= 1 / (L + 1)`); a test that needs more than 5,000
    /// of them (`OWN_SHUFFLES`) uses the shared null of its length instead, with four times as
    /// many draws.
    pub max_permutations: usize,
    /// Stop a test after this many shuffles at least as extreme as the observed split.
    pub stop_after_exceedances: usize,
    /// Fewest points on each side of a split.
    pub min_segment: usize,
    /// Seed of the ties' order and of the segment's own shuffles (derive it from the series key).
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
    /// Permutation p-value of the split within its segment (from the shared null: its 95 % upper
    /// bound, see the module comment).
    pub p: f64,
    /// The statistic `Q` of the split (on ranks).
    pub q: f64,
    /// Shuffles behind `p`: the segment's own, or the shared null's draws.
    pub permutations: usize,
}

/// The scan of one order of ranks: the running sums of the statistic, with a Fenwick tree
/// (count, sum) over ranks and the weights of the sums at each split, reused by every scan of
/// the same length.
struct Scan {
    tree: Vec<(i64, i64)>,
    /// At split `tau` (`a = tau`, `b = n - tau`): `Q = 2/n between - w.0 left - w.1 right`, with
    /// `w = (2b / (n (a-1)), 2a / (n (b-1)))`: the definition's `a b / n` times its divisors,
    /// once per length (the scan then only multiplies).
    weights: Vec<(f64, f64)>,
}

impl Scan {
    fn new(n: usize) -> Self {
        let nf = n as f64;
        let weights = (0..n)
            .map(|tau| {
                let (a, b) = (tau as f64, (n - tau) as f64);
                (2.0 * b / (nf * (a - 1.0)), 2.0 * a / (nf * (b - 1.0)))
            })
            .collect();
        Self {
            tree: vec![(0, 0); n + 1],
            weights,
        }
    }

    /// `(tau, Q)` of the best split of `ranks` (a permutation of `1..=n`), splits with at least
    /// `min_segment` (and 2) points on each side; `None` when there is none. `O(n log n)`.
    fn best(&mut self, ranks: &[u32], min_segment: usize) -> Option<(usize, f64)> {
        let n = ranks.len();
        let m = min_segment.max(2);
        if n < 2 * m {
            return None;
        }
        if self.tree.len() != n + 1 {
            *self = Self::new(n);
        } else {
            self.tree.iter_mut().for_each(|t| *t = (0, 0));
        }
        let nn = n as i64;
        // The sum of |r_i - r_j| over all pairs of a permutation of 1..=n: C(n + 1, 3).
        let mut right = ((nn + 1) * nn * (nn - 1) / 6) as f64;
        let (mut left, mut between, mut inserted) = (0.0_f64, 0.0_f64, 0_i64);
        let (mut best_tau, mut best_q) = (0, f64::NEG_INFINITY);
        let twice_over_n = 2.0 / n as f64;
        for tau in 1..n {
            // Point p = tau - 1 moves from the right segment to the left one.
            let p = (tau - 1) as i64;
            let r = i64::from(ranks[tau - 1]);
            let (cl, sl) = self.below(r as usize);
            let to_left = cl * r - sl + (inserted - sl) - (p - cl) * r;
            // Its distance to all points: sum of |r - j| over j = 1..=n.
            let to_all = (r - 1) * r / 2 + (nn - r) * (nn - r + 1) / 2;
            let to_right = to_all - to_left;
            self.insert(r as usize);
            inserted += r;
            left += to_left as f64;
            between += (to_right - to_left) as f64;
            right -= to_right as f64;
            if tau < m || n - tau < m {
                continue;
            }
            let (wl, wr) = self.weights[tau];
            let q = twice_over_n * between - wl * left - wr * right;
            if q > best_q || best_tau == 0 {
                (best_tau, best_q) = (tau, q);
            }
        }
        Some((best_tau, best_q))
    }

    /// Count and sum of the inserted ranks below `r`.
    fn below(&self, r: usize) -> (i64, i64) {
        let (mut c, mut s) = (0, 0);
        let mut i = r - 1;
        while i > 0 {
            c += self.tree[i].0;
            s += self.tree[i].1;
            i &= i - 1;
        }
        (c, s)
    }

    fn insert(&mut self, r: usize) {
        let mut i = r;
        while i < self.tree.len() {
            self.tree[i].0 += 1;
            self.tree[i].1 += r as i64;
            i += i & i.wrapping_neg();
        }
    }
}

/// Fisher-Yates, in place.
fn shuffle(order: &mut [u32], rng: &mut Rng) {
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
}

/// The 1-based ranks of `x`, ties broken in a uniform random order drawn from `rng` (so that
/// exchangeable values give a uniform random permutation); `None` when `x` is constant or empty.
fn ranks(x: &[f64], rng: &mut Rng) -> Option<Vec<u32>> {
    let n = x.len();
    // -0.0 + 0.0 is +0.0: the two zeros are one value, their order random as any tie's.
    let key: Vec<(f64, u64)> = x.iter().map(|v| (v + 0.0, rng.next_u64())).collect();
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| key[a].0.total_cmp(&key[b].0).then(key[a].1.cmp(&key[b].1)));
    let (first, last) = (idx.first()?, idx.last()?);
    if key[*first].0.total_cmp(&key[*last].0).is_eq() {
        return None;
    }
    let mut rank = vec![0u32; n];
    for (r, &i) in idx.iter().enumerate() {
        rank[i] = u32::try_from(r + 1).ok()?;
    }
    Some(rank)
}

/// A shuffle that reproduces the observed `Q` up to rounding counts as at least as extreme (the
/// sums are exact integers; only the last divisions round, in another order for a mirrored split).
fn at_least(q: f64) -> f64 {
    q - q.abs() * 1e-9
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

/// The stopping count of the own shuffles of a test that goes on to the shared null: the `h` of
/// the settings, lowered to the smallest count that `own` shuffles reach with probability at most
/// 1 / 1,000 when the true p-value is the level (Poisson tail, heavier than the binomial's).
fn own_stop(level: f64, own: usize, h: usize) -> usize {
    let mu = level * own as f64;
    if !(mu.is_finite() && mu > 0.0) {
        return h;
    }
    // P(X >= k) for X ~ Poisson(mu), k = 1, 2, ...
    let (mut term, mut below) = ((-mu).exp(), 0.0_f64);
    for k in 1..h {
        below += term;
        term *= mu / k as f64;
        if 1.0 - below <= 1e-3 {
            return k;
        }
    }
    h
}

/// Permutation test of the best split of `x` (see the module comment): its position, `Q`,
/// p-value and shuffle count. `own_limit` is [`OWN_SHUFFLES`] outside the tests.
fn test_segment(
    x: &[f64],
    s: &Settings,
    rng: &mut Rng,
    nulls: &mut NullCache,
    own_limit: usize,
) -> Option<ChangePoint> {
    let observed = ranks(x, rng)?;
    let n = observed.len();
    let mut scan = Scan::new(n);
    let (tau, q) = scan.best(&observed, s.min_segment)?;
    if q.is_nan() || q <= 0.0 {
        return None;
    }
    let bar = at_least(q);
    let max = s.max_permutations.max(1);
    let h = s
        .stop_after_exceedances
        .max(1)
        .max(decisive_exceedances(s.level, max));
    let whole = max <= own_limit;
    let (own, h) = if whole {
        (max, h)
    } else {
        (own_limit, own_stop(s.level, own_limit, h))
    };
    let mut order = observed;
    let (mut exceed, mut done) = (0usize, 0usize);
    while done < own {
        shuffle(&mut order, rng);
        done += 1;
        if scan.best(&order, s.min_segment).is_some_and(|(_, qp)| qp >= bar) {
            exceed += 1;
            if exceed >= h {
                break;
            }
        }
    }
    let (p, permutations) = if exceed >= h {
        (exceed as f64 / done as f64, done)
    } else if whole {
        ((exceed + 1) as f64 / (done + 1) as f64, done)
    } else {
        let tail = nulls.tail(n, s.min_segment, max, s.level);
        (tail.upper_p(bar), tail.draws())
    };
    Some(ChangePoint {
        index: tau,
        p,
        q,
        permutations,
    })
}

/// Significant change points of `x`, in increasing order of `index`, with a cache of its own
/// (seeded from `settings.seed`): for one series. Several series share one [`NullCache`] through
/// [`e_divisive_shared`].
pub fn e_divisive(x: &[f64], settings: &Settings) -> Vec<ChangePoint> {
    e_divisive_shared(x, settings, &mut NullCache::new(settings.seed))
}

/// Significant change points of `x`, in increasing order of `index`; segments whose own
/// shuffles do not settle the test use the shared nulls of `nulls`.
///
/// Non-finite values make no sense in a level series: the caller leaves them out. Constant
/// segments have no split. Deterministic for a given `settings.seed` and the cache's seed,
/// whatever the cache already holds.
pub fn e_divisive_shared(x: &[f64], settings: &Settings, nulls: &mut NullCache) -> Vec<ChangePoint> {
    search(x, settings, nulls, OWN_SHUFFLES)
}

fn search(x: &[f64], settings: &Settings, nulls: &mut NullCache, own_limit: usize) -> Vec<ChangePoint> {
    if x.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let mut rng = Rng::new(settings.seed);
    let mut found: Vec<ChangePoint> = Vec::new();
    // Segments still to search, as [start, end).
    let mut todo: Vec<(usize, usize)> = vec![(0, x.len())];
    while let Some((start, end)) = todo.pop() {
        let Some(cp) = test_segment(&x[start..end], settings, &mut rng, nulls, own_limit) else {
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
mod tests;
