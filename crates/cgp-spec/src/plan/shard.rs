//! `--shard K/N`: a deterministic, balanced split of the spec's target x size rows over N jobs.
//!
//! Every job of a CI matrix computes the split on its own, from the same inputs, and must get the
//! same answer without talking to the others; so the split is a pure function of the rows and
//! their costs, independent of the order the rows are given in.
//!
//! The split is greedy longest-processing-time (LPT): rows by decreasing cost (ties by target,
//! then size), each to the shard with the least cost so far (ties to the lowest shard). Whatever
//! the costs, the most and the least loaded shard differ by at most the largest single cost.
//!
//! Cost of a row, in this order:
//! 1. recorded: `--shard-costs RESULTS_JSON`, a previous run's `cost_seconds` (wall seconds per
//!    target), spread over the target's sizes in proportion to their estimated cost;
//! 2. estimated: `repetitions x ncu metrics` of the target (each repetition is one ncu run, and
//!    ncu replays the kernel roughly once per group of metrics). Derived metrics need only the
//!    duration, which [`crate::plan::ncu_metrics`] already accounts for.

use crate::measured::samples::TargetSize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use super::job::ncu_metrics;
use crate::spec::Target;

/// The most shards a run may be split into. Each shard is a CI job; the limit keeps every
/// per-shard structure (the split, `merge`'s bookkeeping) small whatever a command line or a
/// results file says.
pub const MAX_SHARDS: usize = 1024;

/// One shard of N: `k` counts from 1, as written on the command line (`--shard 2/4`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| format!("shard `{s}` {why}; write K/N with 1 <= K <= N, e.g. 2/4");
        let (k, n) = s.trim().split_once('/').ok_or_else(|| bad("has no `/`"))?;
        let k: usize = k
            .trim()
            .parse()
            .map_err(|_| bad("has a K that is not a whole number"))?;
        let n: usize = n
            .trim()
            .parse()
            .map_err(|_| bad("has an N that is not a whole number"))?;
        if n == 0 {
            return Err(bad("has N = 0"));
        }
        if n > MAX_SHARDS {
            return Err(format!(
                "shard `{s}` splits the run {n} ways; at most {MAX_SHARDS} shards are supported (a CI matrix has far fewer jobs)"
            ));
        }
        if k == 0 || k > n {
            return Err(bad("has K outside 1..=N"));
        }
        Ok(Self { k, n })
    }
}

/// The largest cost of a target that counts: 30 days of wall time. A results file's
/// `cost_seconds` is anyone's to edit (`1e20`, `1e308`); beyond this it is clamped, so that sums
/// stay finite and no duration overflows (the ETA panicked on `1e20`).
pub const MAX_COST_SECONDS: f64 = 30.0 * 24.0 * 3600.0;

/// Non-finite and negative costs count as 0, and costs above [`MAX_COST_SECONDS`] as that, so
/// one bad number cannot break the split or the ETA.
pub fn clamp_cost(cost: f64) -> f64 {
    if cost.is_finite() && cost > 0.0 {
        cost.min(MAX_COST_SECONDS)
    } else {
        0.0
    }
}

fn clean(cost: f64) -> f64 {
    clamp_cost(cost)
}

/// The shard (0-based) of every row, split into `n` shards by greedy LPT. Deterministic, and
/// independent of the order of `rows`. `n == 0` gives every row shard 0.
pub fn partition(rows: &[(String, String, f64)], n: usize) -> Vec<usize> {
    let n = n.max(1);
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| {
        let (ta, sa, ca) = &rows[a];
        let (tb, sb, cb) = &rows[b];
        clean(*cb)
            .total_cmp(&clean(*ca))
            .then_with(|| ta.cmp(tb))
            .then_with(|| sa.cmp(sb))
    });
    let mut load = vec![0.0_f64; n];
    let mut shard_of = vec![0usize; rows.len()];
    for i in order {
        // The least loaded shard; the lowest index among equals.
        let mut best = 0;
        for (s, l) in load.iter().enumerate().skip(1) {
            if *l < load[best] {
                best = s;
            }
        }
        load[best] += clean(rows[i].2);
        shard_of[i] = best;
    }
    shard_of
}

/// The indices of the rows that shard `k` of `n` (`k` from 1) runs, in input order. Empty when
/// `k` is not in `1..=n`.
pub fn assign(rows: &[(String, String, f64)], k: usize, n: usize) -> Vec<usize> {
    if k == 0 || k > n {
        return Vec::new();
    }
    partition(rows, n)
        .into_iter()
        .enumerate()
        .filter(|(_, s)| *s == k - 1)
        .map(|(i, _)| i)
        .collect()
}

/// The estimated cost of one size of `target`: repetitions x ncu metrics.
pub fn estimated_cost(target: &Target) -> f64 {
    let metrics = ncu_metrics(target).len().max(1);
    f64::from(target.repetitions.max(1)) * metrics as f64
}

/// The rows of `targets` with their costs: recorded wall seconds per target (spread over its
/// sizes) where `recorded` has a positive number for the target, the estimate otherwise.
pub fn rows_with_costs(
    targets: &[&Target],
    recorded: Option<&BTreeMap<String, f64>>,
) -> Vec<(String, String, f64)> {
    let mut rows = Vec::new();
    for t in targets {
        let estimate = estimated_cost(t);
        let sizes = t.sizes.len().max(1) as f64;
        let measured = recorded
            .and_then(|r| r.get(&t.name))
            .copied()
            .map(clamp_cost)
            .filter(|c| *c > 0.0);
        for s in &t.sizes {
            // Sizes of one target share its estimate, so the spread is even.
            let cost = measured.map_or(estimate, |c| c / sizes);
            rows.push((t.name.clone(), s.key(), cost));
        }
    }
    rows
}

/// The (target, size) rows one shard runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub shard: Shard,
    pub rows: BTreeSet<TargetSize>,
}

impl Selection {
    /// The rows of `shard` among `targets`' sizes.
    pub fn new(targets: &[&Target], shard: Shard, recorded: Option<&BTreeMap<String, f64>>) -> Self {
        let all = rows_with_costs(targets, recorded);
        let rows = assign(&all, shard.k, shard.n)
            .into_iter()
            .map(|i| TargetSize::new(&all[i].0, &all[i].1))
            .collect();
        Self { shard, rows }
    }

    pub fn contains(&self, target: &str, size: &str) -> bool {
        self.rows.contains(&TargetSize::new(target, size))
    }

    /// The shard's label as results carry it: `K/N`.
    pub fn label(&self) -> String {
        self.shard.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rows(costs: &[f64]) -> Vec<(String, String, f64)> {
        costs
            .iter()
            .enumerate()
            .map(|(i, c)| (format!("t{}", i % 3), format!("n={i}"), *c))
            .collect()
    }

    fn loads(rows: &[(String, String, f64)], n: usize) -> Vec<f64> {
        let mut l = vec![0.0; n];
        for (r, s) in rows.iter().zip(partition(rows, n)) {
            l[s] += clean(r.2);
        }
        l
    }

    #[test]
    fn shard_parses_and_refuses_nonsense() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { k: 2, n: 4 }));
        assert_eq!(
            " 1 / 1 ".parse::<Shard>().map(|s| s.to_string()),
            Ok("1/1".to_owned())
        );
        for bad in ["", "3", "0/2", "3/2", "1/0", "a/2", "1/b", "-1/2", "1/2/3"] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.contains("write K/N"), "{bad}: {e}");
        }
    }

    #[test]
    fn lpt_balances_a_known_case() {
        // 7 5 4 3 2 1 over 2 shards: 7+3+1 = 11 and 5+4+2 = 11.
        let r = rows(&[7.0, 5.0, 4.0, 3.0, 2.0, 1.0]);
        assert_eq!(loads(&r, 2), [11.0, 11.0]);
        assert_eq!(assign(&r, 1, 2), [0, 3, 5]);
        assert_eq!(assign(&r, 2, 2), [1, 2, 4]);
        assert!(assign(&r, 3, 2).is_empty());
    }

    #[test]
    fn more_shards_than_rows_leaves_shards_empty() {
        let r = rows(&[1.0, 1.0]);
        let got: Vec<usize> = (1..=4).map(|k| assign(&r, k, 4).len()).collect();
        assert_eq!(got, [1, 1, 0, 0]);
    }

    proptest! {
        #[test]
        fn every_row_in_exactly_one_shard(costs in prop::collection::vec(0.0f64..100.0, 0..40), n in 1usize..8) {
            let r = rows(&costs);
            let mut seen = vec![0; r.len()];
            for k in 1..=n {
                for i in assign(&r, k, n) {
                    seen[i] += 1;
                }
            }
            prop_assert!(seen.iter().all(|&c| c == 1), "{seen:?}");
        }

        #[test]
        fn balanced_within_the_largest_cost(costs in prop::collection::vec(0.0f64..100.0, 1..40), n in 1usize..8) {
            let r = rows(&costs);
            let l = loads(&r, n);
            let max = l.iter().copied().fold(f64::MIN, f64::max);
            let min = l.iter().copied().fold(f64::MAX, f64::min);
            let biggest = costs.iter().copied().fold(0.0, f64::max);
            prop_assert!(max - min <= biggest + 1e-9, "loads {l:?}, biggest {biggest}");
            let total: f64 = costs.iter().sum();
            prop_assert!(max <= total / n as f64 + biggest + 1e-9);
        }

        #[test]
        fn equal_costs_split_evenly(len in 0usize..40, n in 1usize..8) {
            let r = rows(&vec![3.0; len]);
            let sizes: Vec<usize> = (1..=n).map(|k| assign(&r, k, n).len()).collect();
            let (lo, hi) = (sizes.iter().min().copied().unwrap_or(0), sizes.iter().max().copied().unwrap_or(0));
            prop_assert!(hi - lo <= 1, "{sizes:?}");
        }

        #[test]
        fn deterministic_and_independent_of_input_order(
            costs in prop::collection::vec(prop_oneof![Just(1.0f64), Just(2.0), 0.0f64..50.0, Just(f64::NAN), Just(-3.0)], 0..30),
            n in 1usize..6,
            seed in any::<u64>(),
        ) {
            let r = rows(&costs);
            let a = partition(&r, n);
            prop_assert_eq!(&a, &partition(&r, n));
            // A deterministic shuffle of the same rows.
            let mut idx: Vec<usize> = (0..r.len()).collect();
            let mut s = seed | 1;
            for i in (1..idx.len()).rev() {
                s ^= s << 13; s ^= s >> 7; s ^= s << 17;
                idx.swap(i, (s % (i as u64 + 1)) as usize);
            }
            let shuffled: Vec<_> = idx.iter().map(|&i| r[i].clone()).collect();
            let b = partition(&shuffled, n);
            for (j, &i) in idx.iter().enumerate() {
                prop_assert_eq!(a[i], b[j], "row {:?}", r[i]);
            }
        }
    }
}
