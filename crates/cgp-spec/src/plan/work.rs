//! The work list: every size of every target with its repetitions, the shard's part of it, and
//! the choice of what to re-measure.

use crate::measured::samples::TargetSize;
use std::collections::{BTreeMap, BTreeSet};

use super::shard::Selection;
use crate::spec::{Size, Target};

/// One (target, size) and the repetitions to run for it (`reps.0..reps.1`).
#[derive(Debug, Clone, Copy)]
pub struct Work<'a> {
    pub target: &'a Target,
    pub size: &'a Size,
    pub reps: (u32, u32),
}

impl Work<'_> {
    /// `(target, size key)`: how results and shards name this work.
    pub fn id(&self) -> TargetSize {
        TargetSize::new(&self.target.name, self.size.key())
    }
}

/// The work of a run: every size of every selected target, repetitions `0..repetitions`, only
/// the rows of `shard` when sharded.
pub fn initial_work<'a>(targets: &[&'a Target], shard: Option<&Selection>) -> Vec<Work<'a>> {
    targets
        .iter()
        .flat_map(|t| {
            t.sizes.iter().map(move |s| Work {
                target: t,
                size: s,
                reps: (0, t.repetitions),
            })
        })
        .filter(|w| shard.is_none_or(|s| s.contains(&w.target.name, &w.size.key())))
        .collect()
}

/// The work of a baseline: as [`initial_work`], with `baseline_repetitions` repetitions.
pub fn baseline_work<'a>(targets: &[&'a Target], shard: Option<&Selection>) -> Vec<Work<'a>> {
    let mut work = initial_work(targets, shard);
    for w in &mut work {
        w.reps.1 = w.target.baseline_repetitions;
    }
    work
}

/// For a baseline (or a calibration) from a recording: take the repetitions it holds, up to the
/// work's count, without failing when it holds fewer. `held(w)` is how many repetitions the
/// recording holds for `w` (`profile::recorded_repetitions`: the manifest's count, or without one
/// the files present from rep 0 on). A size with nothing recorded keeps its work, so the run
/// fails and says what is missing.
pub fn cap_to_recording(work: &mut [Work<'_>], held: impl Fn(&Work<'_>) -> u32) {
    for w in work {
        let held = held(w);
        if held > 0 {
            w.reps.1 = w.reps.1.min(held);
        }
    }
}

/// What to re-measure: the next block of repetitions (up to `max_repetitions`) of every work
/// item whose (target, size) is `doubtful`. `next_rep` holds the first repetition not yet run.
pub fn remeasure<'a>(
    work: &[Work<'a>],
    doubtful: &BTreeSet<TargetSize>,
    next_rep: &BTreeMap<TargetSize, u32>,
) -> Vec<Work<'a>> {
    work.iter()
        .filter_map(|w| {
            let id = w.id();
            let next = *next_rep.get(&id)?;
            // The policy `examples/power.rs` and `calibrate` simulate: stats::remeasure.
            let reps =
                crate::stats::remeasure::next_round(next, w.target.repetitions, w.target.max_repetitions)?;
            doubtful.contains(&id).then_some(Work {
                target: w.target,
                size: w.size,
                reps,
            })
        })
        .collect()
}
