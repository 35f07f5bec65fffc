//! Why a time changed: the explanatory counters beside each judged row, and the explain pass of
//! `explain: remeasure` targets (docs/why.md).

use crate::measured::samples::TargetSize;
use std::collections::{BTreeMap, BTreeSet};

use super::Baselines;
use crate::foundation::error::Error;
use crate::measured::samples::{SampleSet, SeriesKey};
use crate::outcome::results::{Row, RowVerdict};
use crate::plan::Work;
use crate::run::measure::{Instruments, Measurement, measure_why, why_work};
use crate::spec::Target;

/// Whether `row` times a kernel: a roll-up of ncu's kernel duration (`gpu__time_duration.sum`,
/// `.avg`, ...), the rows whose change the counters explain.
fn is_timing(row: &Row) -> bool {
    row.key.metric.starts_with("gpu__time_duration")
}

/// The "why" of every timing row that regressed, improved or is doubtful: the explanatory
/// counters measured for the same target, size and kernel, compared by [`crate::measured::why::explain`].
/// They are the spec's gated metrics that explain time (in the rows) and the counters
/// `explain: true` collects without gating them (in the run's samples and the baseline's
/// `counters`).
pub(super) fn add_why(rows: &mut [Row], samples: &SampleSet, baselines: &Baselines) {
    let wanted: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            is_timing(r)
                && r.skipped().is_none()
                && matches!(
                    r.verdict(),
                    RowVerdict::Regression | RowVerdict::Improvement | RowVerdict::Inconclusive
                )
        })
        .map(|(i, _)| i)
        .collect();
    for i in wanted {
        let why = {
            let r = &rows[i];
            let counters: Vec<crate::measured::why::Counter<'_>> = rows
                .iter()
                .filter(|o| {
                    o.key.target == r.key.target
                        && o.key.size == r.key.size
                        && o.key.kernel == r.key.kernel
                        && o.key.gpu == r.key.gpu
                        && crate::measured::why::is_explanatory(&o.key.metric)
                })
                .filter_map(|o| {
                    Some(crate::measured::why::Counter {
                        metric: &o.key.metric,
                        baseline: &o.sides.baseline.as_ref()?.samples,
                        candidate: &o.sides.candidate.as_ref()?.samples,
                    })
                })
                .collect();
            let gated: BTreeSet<&str> = counters.iter().map(|c| c.metric).collect();
            let mut counters = counters;
            // The counters the baseline keeps beside its rows, with this run's values of each.
            let now: Vec<_> = baselines
                .get(&r.key.target)
                .map(|(b, _)| {
                    b.counters
                        .iter()
                        .filter(|c| {
                            c.size == r.key.size
                                && r.key.kernel_name() == Some(c.kernel.as_str())
                                && !gated.contains(c.metric.as_str())
                        })
                        .filter_map(|c| {
                            let key = SeriesKey {
                                target: r.key.target.clone(),
                                size: r.key.size.clone(),
                                kernel: c.kernel.clone(),
                                metric: c.metric.clone(),
                            };
                            samples.series.get(&key).map(|s| (c, s.values()))
                        })
                        .collect()
                })
                .unwrap_or_default();
            for (c, values) in &now {
                counters.push(crate::measured::why::Counter {
                    metric: &c.metric,
                    baseline: &c.samples,
                    candidate: values,
                });
            }
            let ctx = crate::measured::why::Context {
                time_change: r.estimate().change(),
                launch: r
                    .config_change
                    .as_ref()
                    .map(|c| (c.baseline.as_slice(), c.candidate.as_slice())),
            };
            crate::measured::why::explain_in(&counters, &ctx)
        };
        rows[i].why = why;
    }
}

/// The explain passes after the re-measure loop: the ncu targets' of `explain: remeasure`
/// ([`remeasure_pass`]), then the why of `profiler: cupti` targets ([`cupti_why`]), whose cost it
/// returns.
///
/// # Errors
/// Only for failures of the recorder.
pub(super) fn explain_pass(
    rows: &[Row],
    work: &[Work<'_>],
    targets: &[&Target],
    explained: &BTreeMap<String, Target>,
    next_rep: &BTreeMap<TargetSize, u32>,
    m: &mut Measurement,
    tools: &mut Instruments<'_, '_>,
) -> Result<crate::outcome::results::WhyCost, Error> {
    remeasure_pass(rows, work, explained, next_rep, m, tools)?;
    cupti_why(rows, work, targets, next_rep, m, tools)
}

/// The explain pass of `explain: remeasure` targets (docs/why.md): the sizes with a timing row
/// judged a regression or an improvement and no explanatory counters yet (they were not
/// re-measured) are measured `repetitions` more times with the counters, and only the counters
/// the spec does not gate are kept: the verdicts stand on the timing runs. A failure here costs
/// the why, not the run: it is said and the run goes on.
fn remeasure_pass(
    rows: &[Row],
    work: &[Work<'_>],
    explained: &BTreeMap<String, Target>,
    next_rep: &BTreeMap<TargetSize, u32>,
    m: &mut Measurement,
    tools: &mut Instruments<'_, '_>,
) -> Result<(), Error> {
    if explained.is_empty() {
        return Ok(());
    }
    let has_counters = |target: &str, size: &str| {
        m.samples.series.keys().any(|k| {
            k.target == target
                && k.size == size
                && crate::measured::why::COLLECT.contains(&k.metric.as_str())
                && explained
                    .get(target)
                    .is_some_and(|t| !t.metrics.iter().any(|ms| ms.name == k.metric))
        })
    };
    let wanted: BTreeSet<TargetSize> = rows
        .iter()
        .filter(|r| {
            is_timing(r)
                && matches!(r.verdict(), RowVerdict::Regression | RowVerdict::Improvement)
                && explained.contains_key(&r.key.target)
                && !has_counters(&r.key.target, &r.key.size)
        })
        .map(|r| TargetSize::new(&r.key.target, &r.key.size))
        .collect();
    let more = why_work(work, &wanted, explained, next_rep, |t| t.repetitions);
    if more.is_empty() {
        return Ok(());
    }
    tools.progress.note(&format!(
        "explaining {} changed size(s): collecting the counters that say why",
        more.len()
    ));
    measure_why(tools, &more, explained, m)?;
    Ok(())
}

/// The why of `profiler: cupti` targets with `explain:` set (docs/cupti.md): ncu profiles each
/// size with a timing row judged a regression or inconclusive once, for the counters.
fn cupti_why(
    rows: &[Row],
    work: &[Work<'_>],
    targets: &[&Target],
    next_rep: &BTreeMap<TargetSize, u32>,
    m: &mut Measurement,
    tools: &mut Instruments<'_, '_>,
) -> Result<crate::outcome::results::WhyCost, Error> {
    let ncu = crate::run::ncu_why::ncu_targets(targets);
    let wanted: BTreeSet<TargetSize> = rows
        .iter()
        .filter(|r| {
            is_timing(r)
                && r.skipped().is_none()
                && matches!(r.verdict(), RowVerdict::Regression | RowVerdict::Inconclusive)
                && ncu.contains_key(&r.key.target)
        })
        .map(|r| TargetSize::new(&r.key.target, &r.key.size))
        .collect();
    let cost = crate::run::ncu_why::collect(&wanted, work, &ncu, next_rep, m, tools)?;
    Ok(cost
        .map(|c| crate::outcome::results::WhyCost {
            sizes: c.sizes,
            seconds: c.seconds,
        })
        .unwrap_or_default())
}
