//! Measuring: run the plan's work through a measurer (`profile::Measurer`, the one seam between
//! the engine and the profilers), repetition-major, and collect samples and failures (with GPU
//! health watching and retries of busy counters). What to run is `plan`'s; decisions are
//! `stats`' and `results`'; rendering is `report`'s.

use crate::measured::samples::TargetSize;
use std::collections::BTreeMap;

use crate::foundation::error::Error;
use crate::measured::samples::SampleSet;
use crate::outcome::results::RunError;
use crate::plan::Work;
use crate::profile::record::Recorder;
use crate::profile::{FailureKind, Job, Measurer, ProfileError};
use crate::run::progress::Progress;

#[cfg(test)]
mod tests;

/// What a run measures with, passed as one (issue 49: five functions carried these four apart):
/// the measurer (the real one, `profile::Measuring`, wraps the run's profiler), the recorder that
/// keeps its captures, the watch on the GPU's health, and the progress the user sees.
pub struct Instruments<'a, 'w> {
    pub measurer: &'a mut dyn Measurer,
    pub recorder: Option<&'a mut Recorder>,
    pub watch: Option<&'a mut Watch<'w>>,
    pub progress: &'a mut dyn Progress,
}

/// Samples and failures of a measurement pass.
#[derive(Debug, Default)]
pub struct Measurement {
    pub samples: SampleSet,
    pub errors: Vec<RunError>,
    /// Wall seconds per target, where the profiler measured them.
    pub cost_seconds: BTreeMap<String, f64>,
    /// Jobs that ran, per (target, size key): how many repetitions each got.
    pub reps_done: BTreeMap<TargetSize, u32>,
    /// (target, size key) whose `kernel:` filter selected none of the kernels that ran, with
    /// those kernels. Their failure is in `errors` too: `check` turns it into `missing` rows
    /// where the baseline has kernels there (a library's switch of kernel is a gate finding,
    /// not a tool failure); everywhere else it stays an error.
    pub unselected: BTreeMap<TargetSize, Vec<String>>,
}

/// GPU health watching around each live repetition.
pub struct Watch<'a> {
    pub gpu: &'a dyn crate::gpu::Gpu,
    pub sampler: crate::gpu::HealthSampler,
    pub settings: &'a crate::spec::Settings,
}

/// Failures that no other target can escape: stop the whole run.
fn is_global(kind: FailureKind) -> bool {
    matches!(kind, FailureKind::NcuNotFound | FailureKind::Permission)
}

/// The extra work of a why pass: each (target, size) of `work` in `wanted`, as the target of
/// `targets` with its name (the spec's with `explain`'s counters, or the ncu twin of a cupti
/// target), `count(target)` repetitions from the size's next repetition (`next_rep`, else after
/// the work's own).
pub fn why_work<'a>(
    work: &[Work<'a>],
    wanted: &std::collections::BTreeSet<TargetSize>,
    targets: &'a BTreeMap<String, crate::spec::Target>,
    next_rep: &BTreeMap<TargetSize, u32>,
    count: impl Fn(&crate::spec::Target) -> u32,
) -> Vec<Work<'a>> {
    work.iter()
        .filter(|w| wanted.contains(&w.id()))
        .filter_map(|w| {
            let target = targets.get(&w.target.name)?;
            let from = next_rep.get(&w.id()).copied().unwrap_or(w.reps.1);
            Some(Work {
                target,
                size: w.size,
                reps: (from, from + count(target)),
            })
        })
        .collect()
}

/// Measure `more`, the extra runs that collect the counters saying why a time changed, and keep
/// in `m` the explanatory series that `targets` (by name) do not gate, with their cost. A failed
/// run costs the why, not the run: it is said through `progress` and the run goes on. Returns the
/// wall seconds the runs took. Shared by `explain: remeasure` (`run::check::why`) and the ncu why
/// of cupti targets (`run::ncu_why`).
///
/// # Errors
/// Only for failures of the recorder.
pub fn measure_why(
    tools: &mut Instruments<'_, '_>,
    more: &[Work<'_>],
    targets: &BTreeMap<String, crate::spec::Target>,
    m: &mut Measurement,
) -> Result<f64, Error> {
    let extra = measure(tools, more, true)?;
    for e in &extra.errors {
        tools.progress.note(&format!(
            "no why for `{}`{}: {}",
            e.target,
            e.size.as_deref().map(|s| format!(" [{s}]")).unwrap_or_default(),
            e.message
        ));
    }
    for (key, series) in extra.samples.series {
        let gated = targets
            .get(&key.target)
            .is_some_and(|t| t.metrics.iter().any(|ms| ms.name == key.metric));
        if crate::measured::why::is_explanatory(&key.metric) && !gated {
            m.samples.series.insert(key, series);
        }
    }
    let seconds: f64 = extra.cost_seconds.values().sum();
    for (k, v) in extra.cost_seconds {
        *m.cost_seconds.entry(k).or_default() += v;
    }
    Ok(seconds)
}

/// Run every job of `work`, repetition-major (rep 0 of every size, then rep 1, ...) so that slow
/// drift of the machine spreads over all sizes instead of biasing one.
///
/// A failing (target, size) is recorded as an error and skipped for the rest of the pass;
/// failures that affect every target (ncu missing, no counter permission) stop the pass.
/// With `only_available`, jobs the profiler cannot serve (a recording without more repetitions)
/// are skipped silently: used for re-measurement.
///
/// # Errors
/// Only for failures of the recorder (the profiler's failures are in the result).
pub fn measure(
    tools: &mut Instruments<'_, '_>,
    work: &[Work<'_>],
    only_available: bool,
) -> Result<Measurement, Error> {
    let Instruments {
        measurer,
        recorder,
        watch,
        progress,
    } = tools;
    let mut m = Measurement::default();
    for w in work {
        progress.add_runs(&w.target.name, &w.size.key(), w.reps.1.saturating_sub(w.reps.0));
    }
    let max_rep = work.iter().map(|w| w.reps.1).max().unwrap_or(0);
    let min_rep = work.iter().map(|w| w.reps.0).min().unwrap_or(0);
    let mut failed: Vec<TargetSize> = Vec::new();
    for rep in min_rep..max_rep {
        for w in work.iter().filter(|w| (w.reps.0..w.reps.1).contains(&rep)) {
            let id = w.id();
            if failed.contains(&id) {
                continue;
            }
            let job = Job {
                target: w.target,
                size: w.size,
                rep,
            };
            if only_available && !measurer.can_serve(job) {
                progress.run_skipped(&w.target.name, &id.size);
                continue;
            }
            progress.run_started(&w.target.name, &id.size, rep);
            let started = std::time::Instant::now();
            let outcome = run_once(&mut **measurer, job, recorder, watch, &mut **progress)?;
            let elapsed = started.elapsed();
            match outcome {
                Ok((mut samples, wall)) => {
                    progress.run_finished(&w.target.name, &id.size, rep, elapsed);
                    // Each run (process) drops its warm-up launches (`warmup:`). Every other
                    // launch is kept: whether a far one is the machine's or the code's is the
                    // statistics' question, asked against the baseline's own share of them
                    // (`stats::screen`, docs/statistics.md 2.5).
                    crate::measured::samples::drop_warmup(&mut samples, w.target.warmup);
                    m.samples.extend(samples);
                    *m.reps_done.entry(id).or_default() += 1;
                    if let Some(s) = wall {
                        *m.cost_seconds.entry(w.target.name.clone()).or_default() += s;
                    }
                }
                Err(e) => {
                    progress.run_failed(&w.target.name, &id.size, rep, elapsed);
                    let global = is_global(e.kind);
                    if e.kind == FailureKind::NoKernels && !e.unselected.is_empty() {
                        m.unselected.insert(id.clone(), e.unselected.clone());
                    }
                    m.errors.push(RunError {
                        target: w.target.name.clone(),
                        size: Some(id.size.clone()),
                        kind: e.kind.into(),
                        // A profiler error may quote the program's output: secret-looking
                        // values are redacted before any report sees it (issue 44).
                        message: crate::foundation::redact::secrets(&e.to_string()),
                    });
                    failed.push(id);
                    if global {
                        return Ok(m);
                    }
                }
            }
        }
    }
    Ok(m)
}

/// One run of one job: a run the GPU throttled is run again (`watch`), busy counters are retried
/// with the measurer's delays, and the capture is recorded and read into samples (with its wall
/// seconds).
///
/// # Errors
/// Only for failures of the recorder (the profiler's failures are the inner `Err`).
fn run_once(
    measurer: &mut dyn Measurer,
    job: Job<'_>,
    recorder: &mut Option<&mut Recorder>,
    watch: &mut Option<&mut Watch<'_>>,
    progress: &mut dyn Progress,
) -> Result<Result<(SampleSet, Option<f64>), ProfileError>, Error> {
    let delays = measurer.busy_retry_delays(job);
    let mut attempt = 0;
    let mut throttle_reruns = 0;
    loop {
        if let Some(w) = watch.as_deref_mut() {
            w.sampler.before(w.gpu);
        }
        let r = measurer.measure(job);
        if let (Ok(_), Some(w)) = (&r, watch.as_deref_mut()) {
            let health = w.sampler.after(w.gpu);
            if crate::gpu::should_rerun(&health, throttle_reruns, w.settings) {
                progress.note(&format!(
                    "  {} rep {} throttled ({}), re-running",
                    crate::measured::samples::target_size(&job.target.name, &job.size.key()),
                    job.rep,
                    health.reasons.join(", ")
                ));
                w.sampler.record_rerun();
                throttle_reruns += 1;
                continue;
            }
        }
        if let (Ok(t), Some(rec)) = (&r, recorder.as_deref_mut()) {
            rec.record(job, &t.capture)?;
        }
        match r.and_then(|t| t.samples.map(|s| (s, t.capture.wall_seconds))) {
            Err(e) if e.kind == FailureKind::ResourceUnavailable && attempt < delays.len() => {
                progress.note(&format!(
                    "  counters busy (another profiler?), retrying in {:?}",
                    delays[attempt]
                ));
                std::thread::sleep(delays[attempt]);
                attempt += 1;
            }
            other => return Ok(other),
        }
    }
}
