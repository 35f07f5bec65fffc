//! The shared null of the change-point test: draws of the largest `Q` of a uniform random
//! permutation of `1..=n`, one sample per segment length, kept as its upper tail.

use std::collections::HashMap;

use super::{Rng, Scan, shuffle};
use crate::stats::rng::seed_for;

/// Draws of a shared null per shuffle a segment's own test would need.
const DRAWS_PER_SHUFFLE: usize = 4;

/// Most draws of one shared null (`4 x 2,000,000`, the most shuffles `permutations_for` gives).
const MAX_DRAWS: usize = 8_000_000;

/// Confidence of the upper bound a shared null gives a p-value.
const CONFIDENCE: f64 = 0.95;

/// The shared nulls of one run, by segment length: drawn when a segment first needs one, kept
/// (their upper tails) for every later segment of that length.
#[derive(Debug)]
pub struct NullCache {
    seed: u64,
    tails: HashMap<(usize, usize, usize), Tail>,
}

impl NullCache {
    /// An empty cache whose nulls derive their seeds from `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            tails: HashMap::new(),
        }
    }

    /// Nulls drawn so far.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.tails.len()
    }

    /// True before any null was drawn.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.tails.is_empty()
    }

    /// The null of segments of `n` points with `min_segment`, for a test of `shuffles` shuffles
    /// at `level`: `4 x shuffles` draws (at most 8,000,000), its tail long enough for any count
    /// that can be significant at `level`.
    pub(super) fn tail(&mut self, n: usize, min_segment: usize, shuffles: usize, level: f64) -> &Tail {
        let m = min_segment.max(2);
        let draws = shuffles.saturating_mul(DRAWS_PER_SHUFFLE).clamp(1, MAX_DRAWS);
        // A count of `keep` or more draws can never be significant: `keep` is above the count at
        // which the bound passes the level (below the expected count `draws x level`).
        let expected = (draws as f64 * level.clamp(0.0, 1.0)).ceil() as usize;
        let keep = expected.saturating_mul(2).saturating_add(64).max(1024).min(draws);
        let seed = seed_for(self.seed, &format!("changepoint-null/{n}/{m}/{draws}"));
        let tail = self
            .tails
            .entry((n, m, draws))
            .or_insert_with(|| Tail::draw(n, m, draws, keep, seed));
        if tail.top.len() < keep && tail.top.len() < draws {
            *tail = Tail::draw(n, m, draws, keep, seed);
        }
        tail
    }
}

/// The largest draws of one shared null.
#[derive(Debug)]
pub(super) struct Tail {
    draws: usize,
    /// The largest `keep` draws, ascending.
    top: Vec<f64>,
}

impl Tail {
    fn draw(n: usize, m: usize, draws: usize, keep: usize, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let mut order: Vec<u32> = (1..=n).map(|r| u32::try_from(r).unwrap_or(u32::MAX)).collect();
        let mut scan = Scan::new(n);
        let keep = keep.max(1);
        // The largest `keep` in a buffer of at most 4 x keep: pruned to them when full, and a
        // draw below the kept smallest is not stored.
        let mut top: Vec<f64> = Vec::with_capacity(4 * keep);
        let mut floor = f64::NEG_INFINITY;
        for _ in 0..draws {
            shuffle(&mut order, &mut rng);
            let q = scan.best(&order, m).map_or(f64::NEG_INFINITY, |(_, q)| q);
            if q < floor {
                continue;
            }
            top.push(q);
            if top.len() == 4 * keep {
                prune(&mut top, keep);
                floor = top.iter().copied().fold(f64::INFINITY, f64::min);
            }
        }
        if top.len() > keep {
            prune(&mut top, keep);
        }
        top.sort_by(f64::total_cmp);
        Self { draws, top }
    }

    pub(super) fn draws(&self) -> usize {
        self.draws
    }

    /// Draws at least `bar`; a lower bound when the tail kept holds no smaller draw.
    pub(super) fn count_at_least(&self, bar: f64) -> usize {
        self.top.len() - self.top.partition_point(|&q| q < bar)
    }

    /// The 95 % upper confidence bound of `P(Q >= bar)` from the draws: the `p` at which a
    /// Poisson count of mean `p x draws` is at most the observed count with probability 5 %.
    pub(super) fn upper_p(&self, bar: f64) -> f64 {
        upper_bound(self.count_at_least(bar), self.draws)
    }
}

/// Keep the largest `keep` values of `v` (in any order).
fn prune(v: &mut Vec<f64>, keep: usize) {
    let cut = v.len() - keep;
    v.select_nth_unstable_by(cut, f64::total_cmp);
    v.drain(..cut);
}

/// `P(X <= c)` for `X ~ Poisson(mu)`: the regularized upper incomplete gamma `Q(c + 1, mu)`.
fn poisson_cdf(c: usize, mu: f64) -> f64 {
    if mu <= 0.0 {
        return 1.0;
    }
    statrs::function::gamma::checked_gamma_ur(c as f64 + 1.0, mu).unwrap_or(1.0)
}

/// The upper `CONFIDENCE` bound of a probability from `c` hits in `draws` trials (Poisson,
/// conservative against the binomial for the small probabilities tested here), at most 1.
pub(super) fn upper_bound(c: usize, draws: usize) -> f64 {
    let alpha = 1.0 - CONFIDENCE;
    let mut hi = c as f64 + 1.0;
    while poisson_cdf(c, hi) > alpha {
        hi *= 2.0;
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if poisson_cdf(c, mid) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (hi / draws.max(1) as f64).min(1.0)
}
