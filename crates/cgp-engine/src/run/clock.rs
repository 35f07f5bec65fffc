//! Code or clock (docs/harnesses.md, "Throttling"): a regression of an nvbench target's cold GPU
//! time, where both sides have the per-sample SM cycles of nvbench's `--jsonbin` clocks, is
//! confirmed in cycle space by `stats::clock::cycle_confirmation`. Persisting in cycles, it stays
//! a regression and its reason starts `code:`; disappearing in cycles, it is `inconclusive` and
//! its reason starts `clock:`. `check` (the reference is the stored baseline, its cycles kept
//! beside the time) and `ab` (the reference is the base tree's samples) both apply it.

use crate::measured::samples::{SampleSet, SeriesKey};
use crate::outcome::results::{Row, RowThreshold, RowVerdict};
use crate::spec::Target;
use crate::stats::clock::{Cause, cycle_confirmation};

/// Confirm every nvbench time regression in cycles, where both sides have them: `samples` are
/// this run's (the head's), `reference` gives the other side's samples of a series.
pub fn confirm_in_cycles(
    rows: &mut [Row],
    targets: &[&Target],
    samples: &SampleSet,
    reference: &dyn Fn(&SeriesKey) -> Option<Vec<f64>>,
) {
    for row in rows.iter_mut() {
        if row.verdict() != RowVerdict::Regression {
            continue;
        }
        // The backend says which time it confirms in which cycles (nvbench's, today).
        let Some((time_metric, cycles_metric)) = targets
            .iter()
            .find(|t| t.name == row.key.target)
            .and_then(|t| crate::profile::backend_of(t).time_and_cycles())
        else {
            continue;
        };
        if row.key.metric != time_metric {
            continue;
        }
        let time = SeriesKey {
            target: row.key.target.clone(),
            size: row.key.size.clone(),
            kernel: row.kernel_label().to_owned(),
            metric: time_metric.to_owned(),
        };
        let cycles = SeriesKey {
            metric: cycles_metric.to_owned(),
            ..time.clone()
        };
        let (Some(base_time), Some(cand_time), Some(base_cycles), Some(cand_cycles)) = (
            reference(&time),
            samples
                .series
                .get(&time)
                .map(crate::measured::samples::Series::values),
            reference(&cycles),
            samples
                .series
                .get(&cycles)
                .map(crate::measured::samples::Series::values),
        ) else {
            continue;
        };
        let tolerance = row.rule.threshold.as_ref().and_then(RowThreshold::tolerance);
        let Some(c) = cycle_confirmation(&base_time, &cand_time, &base_cycles, &cand_cycles, tolerance)
        else {
            continue;
        };
        let pct = |x: f64| format!("{:+.1}%", 100.0 * x);
        match c.cause {
            Cause::Code => {
                row.reason = format!(
                    "code: the slowdown persists in SM cycles (time {}, cycles {}, clock {}; nvbench's per-sample clocks); {}",
                    pct(c.time_change),
                    pct(c.cycles_change),
                    pct(c.clock_change),
                    row.reason
                );
            }
            Cause::Clock => {
                row.set_verdict(RowVerdict::Inconclusive);
                row.reason = format!(
                    "clock: the time grew {} but the SM cycles {} (within {:.1}%): the SM clock ran {} against the reference's, the same work at a lower clock, not a slower kernel (nvbench's per-sample clocks); rerun on a cooler or clock-locked GPU; the time alone said: {}",
                    pct(c.time_change),
                    pct(c.cycles_change),
                    100.0 * c.bar,
                    pct(c.clock_change),
                    row.reason
                );
            }
        }
    }
}
