//! Measuring both trees in pairs: ABBA order within each target x size, pair-major across them,
//! and the per-repetition medians a pair compares.

use crate::measured::samples::TargetSize;
use std::collections::{BTreeMap, BTreeSet};

use super::{OrderEntry, Side, Sides};
use crate::foundation::error::Error;
use crate::measured::samples::SampleSet;
use crate::outcome::results::{ErrorKind, FailureKind, RunError};
use crate::plan::Work;
use crate::profile::record::Recorder;
use crate::profile::{Job, Measurer};
use crate::run::measure::{Instruments, Measurement, Watch, measure};
use crate::run::progress::Progress;
use crate::spec::Target;

/// One target x size of both trees.
pub(super) struct Item<'a> {
    pub(super) base: &'a Target,
    pub(super) head: &'a Target,
    pub(super) size: usize,
}

impl Item<'_> {
    pub(super) fn id(&self) -> TargetSize {
        TargetSize::new(&self.head.name, self.head.sizes[self.size].key())
    }
}

/// Samples of both sides so far.
#[derive(Default)]
pub(super) struct Both {
    pub(super) base: SampleSet,
    pub(super) head: SampleSet,
    pub(super) errors: Vec<RunError>,
    pub(super) cost: BTreeMap<String, f64>,
    /// Pairs completed per (target, size).
    pub(super) pairs: BTreeMap<TargetSize, u32>,
    pub(super) failed: BTreeSet<TargetSize>,
    pub(super) stop: bool,
    pub(super) order: Vec<OrderEntry>,
}

/// The progress of one side's run inside a pair: its runs were planned up front by
/// [`measure_pairs`] (two per pair), so `measure`'s own plan of one run is not added again.
pub(super) struct PairedProgress<'a> {
    inner: &'a mut dyn Progress,
}

impl Progress for PairedProgress<'_> {
    fn add_runs(&mut self, _: &str, _: &str, _: u32) {}
    fn run_started(&mut self, target: &str, size: &str, rep: u32) {
        self.inner.run_started(target, size, rep);
    }
    fn run_finished(&mut self, target: &str, size: &str, rep: u32, wall: std::time::Duration) {
        self.inner.run_finished(target, size, rep, wall);
    }
    fn run_failed(&mut self, target: &str, size: &str, rep: u32, wall: std::time::Duration) {
        self.inner.run_failed(target, size, rep, wall);
    }
    fn run_skipped(&mut self, target: &str, size: &str) {
        self.inner.run_skipped(target, size);
    }
    fn note(&mut self, text: &str) {
        self.inner.note(text);
    }
    fn finish(&mut self) {}
    fn side(&mut self, side: &str) {
        self.inner.side(side);
    }
}

/// Run pairs `from..to` of every item, ABBA within each item, pair-major across items. Every
/// pair is two runs on the progress bar, planned before the first starts; a pair that does not
/// happen (a failed size, a recording without it) gives its runs up.
pub(super) fn measure_pairs(
    sides: &mut Sides<'_>,
    items: &[(&Item<'_>, u32, u32)],
    recorders: &mut Option<(&mut Recorder, &mut Recorder)>,
    mut watch: Option<&mut Watch<'_>>,
    only_available: bool,
    both: &mut Both,
    progress: &mut dyn Progress,
) -> Result<(), Error> {
    for (item, from, to) in items {
        let TargetSize { target, size } = item.id();
        progress.add_runs(&target, &size, 2 * to.saturating_sub(*from));
    }
    let lo = items.iter().map(|i| i.1).min().unwrap_or(0);
    let hi = items.iter().map(|i| i.2).max().unwrap_or(0);
    for rep in lo..hi {
        for (item, from, to) in items {
            if !(*from..*to).contains(&rep) {
                continue;
            }
            let id = item.id();
            let job = |t| Job {
                target: t,
                size: &t.sizes[item.size],
                rep,
            };
            if both.stop
                || both.failed.contains(&id)
                || (only_available
                    && !(sides.base.can_serve(job(item.base)) && sides.head.can_serve(job(item.head))))
            {
                progress.run_skipped(&id.target, &id.size);
                progress.run_skipped(&id.target, &id.size);
                continue;
            }
            if measure_pair(sides, item, rep, recorders, watch.as_deref_mut(), both, progress)? {
                *both.pairs.entry(id).or_default() += 1;
            }
        }
    }
    progress.side("");
    Ok(())
}

/// Pair `rep` of one item: both trees' runs in ABBA order (base first in an even pair); when the
/// first run fails, the second does not happen. Whether both ran without errors.
fn measure_pair(
    sides: &mut Sides<'_>,
    item: &Item<'_>,
    rep: u32,
    recorders: &mut Option<(&mut Recorder, &mut Recorder)>,
    mut watch: Option<&mut Watch<'_>>,
    both: &mut Both,
    progress: &mut dyn Progress,
) -> Result<bool, Error> {
    let id = item.id();
    let order = if rep.is_multiple_of(2) {
        [Side::Base, Side::Head]
    } else {
        [Side::Head, Side::Base]
    };
    let mut ok = true;
    for side in order {
        if !ok {
            // The other side failed: this side's run of the pair will not happen.
            progress.run_skipped(&id.target, &id.size);
            continue;
        }
        let (measurer, target, rec): (&mut dyn Measurer, &Target, Option<&mut Recorder>) = match side {
            Side::Base => (&mut *sides.base, item.base, recorders.as_mut().map(|r| &mut *r.0)),
            Side::Head => (&mut *sides.head, item.head, recorders.as_mut().map(|r| &mut *r.1)),
        };
        let work = [Work {
            target,
            size: &target.sizes[item.size],
            reps: (rep, rep + 1),
        }];
        progress.side(side.as_str());
        let mut paired = PairedProgress {
            inner: &mut *progress,
        };
        let mut tools = Instruments {
            measurer,
            recorder: rec,
            watch: watch.as_deref_mut(),
            progress: &mut paired,
        };
        let m = measure(&mut tools, &work, false)?;
        ok = keep_run(both, side, &id, rep, m);
    }
    Ok(ok)
}

/// What one side's run of a pair leaves in [`Both`]: its place in the order, its cost and
/// samples, and its errors, each named by its tree (a missing ncu or a permission error stops
/// the whole run). Whether it had none.
fn keep_run(both: &mut Both, side: Side, id: &TargetSize, rep: u32, m: Measurement) -> bool {
    both.order.push(OrderEntry {
        side,
        target: id.target.clone(),
        size: id.size.clone(),
        rep,
    });
    for (k, v) in m.cost_seconds {
        *both.cost.entry(k).or_default() += v;
    }
    match side {
        Side::Base => both.base.extend(m.samples),
        Side::Head => both.head.extend(m.samples),
    }
    if m.errors.is_empty() {
        return true;
    }
    for mut e in m.errors {
        if matches!(
            e.kind,
            ErrorKind::Profiler(FailureKind::NcuNotFound | FailureKind::Permission)
        ) {
            both.stop = true;
        }
        e.message = format!("{} tree: {}", side.as_str(), e.message);
        both.errors.push(e);
    }
    both.failed.insert(id.clone());
    false
}
