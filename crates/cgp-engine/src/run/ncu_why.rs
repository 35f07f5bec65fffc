//! The why of `profiler: cupti` targets (docs/cupti.md): CUPTI's kernel records hold times and
//! launch configurations, no counters. Where `explain:` is set, Nsight Compute profiles a size
//! once (one process) for the counters that say why a time changed: in `baseline update` (every
//! size, so the baseline holds counters to compare), and in `check` only for the sizes with a
//! timing row judged a regression or inconclusive. Counters cost ncu's time only there.

use crate::measured::samples::TargetSize;
use std::collections::{BTreeMap, BTreeSet};

use crate::foundation::error::Error;
use crate::plan::Work;
use crate::run::measure::{Instruments, Measurement, measure_why, why_work};
use crate::spec::Target;

/// What the ncu pass cost: the sizes it profiled and ncu's wall seconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NcuWhyCost {
    pub sizes: usize,
    pub seconds: f64,
}

/// The ncu targets of the cupti targets with `explain:` set, by name ([`crate::plan::ncu_for_why`]).
pub fn ncu_targets(targets: &[&Target]) -> BTreeMap<String, Target> {
    targets
        .iter()
        .filter_map(|t| Some((t.name.clone(), crate::plan::ncu_for_why(t)?)))
        .collect()
}

/// Profile `wanted` (target, size) of `work` once with ncu, at repetition `next_rep` (or after
/// the work's own), and keep in `m` the explanatory counters the spec does not gate. A failure
/// costs the why, not the run: it is said through `progress` and the run goes on.
///
/// # Errors
/// Only for failures of the recorder.
pub fn collect(
    wanted: &BTreeSet<TargetSize>,
    work: &[Work<'_>],
    ncu: &BTreeMap<String, Target>,
    next_rep: &BTreeMap<TargetSize, u32>,
    m: &mut Measurement,
    tools: &mut Instruments<'_, '_>,
) -> Result<Option<NcuWhyCost>, Error> {
    let more = why_work(work, wanted, ncu, next_rep, |_| 1);
    if more.is_empty() {
        return Ok(None);
    }
    tools.progress.note(&format!(
        "cupti: ncu profiles {} size(s) once for the counters that say why a time changed",
        more.len()
    ));
    let seconds = measure_why(tools, &more, ncu, m)?;
    tools.progress.note(&format!(
        "cupti: the why cost {seconds:.1} s of ncu ({} size(s))",
        more.len()
    ));
    Ok(Some(NcuWhyCost {
        sizes: more.len(),
        seconds,
    }))
}
