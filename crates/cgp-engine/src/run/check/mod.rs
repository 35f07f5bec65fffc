//! `check`: measure, compare against the baselines, re-measure the doubtful rows, decide.
//!
//! The statistics decide (`stats::judge_all`); this module only gathers the inputs, drives the
//! re-measurement and assembles [`Results`]. The parts: `baselines` (reading them, and the error
//! when there are none), `judge` (the measured rows against them, and `missing` rows), `rows`
//! (rows skipped for the same machine code, kernel-filter and operation notes), `why` (the
//! explanatory counters and the explain pass).

mod baselines;
mod harness_states;
mod judge;
mod rows;
#[cfg(test)]
mod tests;
mod why;

use crate::measured::samples::TargetSize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::baseline::BaselineFile;
use crate::foundation::error::Error;
use crate::gpu::{Gpu, peaks_for};
use crate::measured::samples::SampleSet;
use crate::outcome::results::{Results, RooflinePoint, Row, RunError};
use crate::plan::{Work, initial_work, remeasure};
use crate::profile::record::Recorder;
use crate::profile::{Measurer, Provenance};
use crate::run::engine::{add_derived, fingerprint_for, git_commit, stats_config};
use crate::run::measure::{Instruments, Measurement, Watch, measure};
use crate::spec::{Explain, Spec, Target};
use crate::stats::Config;
use baselines::load_baselines;
use judge::judge;
use rows::{keep_unselected, operation_notes, same_sass, skipped_rows, unselected};
use why::{add_why, explain_pass};

pub use crate::outcome::results::FailOn;

/// Options of one check.
pub struct CheckOptions<'a> {
    pub baselines: PathBuf,
    pub fail_on: FailOn,
    pub allow_fingerprint_mismatch: bool,
    /// NVML, when a driver is there (live runs only).
    pub gpu: Option<&'a dyn Gpu>,
    /// Why NVML is not there in a live run (its own error), when it is not.
    pub gpu_note: Option<&'a str>,
    /// Only these target x size rows (`--shard K/N`); rows of other shards are not `missing`.
    pub shard: Option<crate::plan::Selection>,
    /// Profile every kernel, even those whose SASS equals the baseline's (`--no-skip`).
    pub no_skip: bool,
    /// `--allow-missing`: baseline rows this run did not measure do not fail the gate.
    pub allow_missing: bool,
    /// `--allow-no-baselines`: an empty baselines directory is a first run (every row `new`),
    /// not an error.
    pub allow_no_baselines: bool,
    /// The commit the CI says this run measures (`$GITHUB_SHA`, read by the command layer);
    /// `None`: `git rev-parse HEAD` in the spec's folder.
    pub ci_commit: Option<&'a str>,
}

/// Each target's baseline with the file it came from (named in errors about its content).
type Baselines = BTreeMap<String, (BaselineFile, PathBuf)>;

/// Every baseline file of the store, with its path (read once; the gone-targets check uses it too).
type Stored = Vec<(PathBuf, BaselineFile)>;

/// Run the check and assemble the results. Profiler failures end up in `Results::errors`
/// (verdict `error`); only setup failures (fingerprint mismatch, unreadable baselines) are `Err`.
///
/// # Errors
/// Baselines that cannot be read, a fingerprint mismatch without
/// `allow_fingerprint_mismatch`, recorder failures.
pub fn run_check(
    spec: &Spec,
    targets: &[&Target],
    measurer: &mut dyn Measurer,
    recorder: Option<&mut Recorder>,
    mut watch: Option<&mut Watch<'_>>,
    opts: &CheckOptions<'_>,
    progress: &mut dyn crate::run::progress::Progress,
) -> Result<Results, Error> {
    // Harness targets name their device in their first file (run now, once; kept).
    let origin = measurer.open(targets)?;
    let fingerprint = targets
        .first()
        .map(|t| fingerprint_for(&origin, t, opts.gpu))
        .unwrap_or_default();
    // Load baselines and check comparability before spending time on the GPU.
    let (baselines, mismatch, stored) = load_baselines(spec, targets, &origin, opts)?;

    let (work, unchanged) = work_to_measure(spec, targets, &origin, &baselines, opts, progress);
    let mut tools = Instruments {
        measurer,
        recorder,
        watch: watch.as_deref_mut(),
        progress,
    };
    let mut m = measure(&mut tools, &work, false)?;
    keep_unselected(&mut m, &baselines);
    let (cfg, multiple_testing) = sharded_config(spec, targets, opts.shard.as_ref());
    let explained = explained_targets(targets);
    let mut run = CheckLoop {
        targets,
        baselines: &baselines,
        cfg: &cfg,
        shard: opts.shard.as_ref(),
        gpu_name: fingerprint.gpu_name.as_str(),
        peaks_known: peaks_for(fingerprint.gpu_name.as_str()).is_some(),
        work: &work,
        explained: &explained,
        next_rep: work.iter().map(|w| (w.id(), w.reps.1)).collect(),
        m,
        roofline: Vec::new(),
        tools,
    };
    let (rows, spec_errors, _) = crate::run::engine::until_decided(&mut run)?;
    let CheckLoop {
        next_rep,
        mut m,
        roofline,
        mut tools,
        ..
    } = run;

    let why_cost = explain_pass(&rows, &work, targets, &explained, &next_rep, &mut m, &mut tools)?;
    let (mut rows, sass_skip) = finish_rows(rows, targets, &unchanged, &baselines, &m, opts);
    let source = crate::measured::source::Source::from(origin.source.clone());
    let state_errors = harness_states::missing_states(&mut rows, targets, &baselines, opts.fail_on, &source);
    rows.extend(gone_rows(
        spec,
        targets,
        &stored,
        opts,
        fingerprint.gpu_name.as_str(),
        || gpu_keys(targets, &origin, opts.gpu),
    ));
    let category_bars = category_bars(targets, &m.samples, &baselines);
    let mut errors = m.errors;
    errors.extend(spec_errors);
    errors.extend(state_errors);
    let results = crate::run::engine::assemble(
        crate::run::engine::Assembly {
            spec,
            source: source.into(),
            synthetic: origin.synthetic,
            fingerprint,
            git_commit: git_commit(opts.ci_commit, &spec.base_dir()),
            fail_on: opts.fail_on,
            multiple_testing,
            had_work: !work.is_empty() || !unchanged.is_empty(),
            health: watch.map(|w| w.sampler.summary()).unwrap_or_default(),
            cost_seconds: m.cost_seconds,
        },
        rows,
        errors,
    );
    Ok(Results {
        fingerprint_mismatch: mismatch,
        shard: opts.shard.as_ref().map(crate::plan::Selection::label),
        roofline,
        sass_skip,
        category_bars,
        why_cost,
        ..results
    })
}

/// The work of this check (this shard's repetitions of every size) and the sizes taken out of it:
/// those the SASS cache skips, whose every baseline kernel has the same machine code now
/// (docs/sass-cache.md).
fn work_to_measure<'t>(
    spec: &Spec,
    targets: &[&'t Target],
    origin: &Provenance,
    baselines: &Baselines,
    opts: &CheckOptions<'_>,
    progress: &mut dyn crate::run::progress::Progress,
) -> (Vec<Work<'t>>, BTreeSet<TargetSize>) {
    let mut work = initial_work(targets, opts.shard.as_ref());
    let unchanged = if opts.no_skip {
        BTreeSet::new()
    } else {
        let fps = stable_keys(targets, origin, opts.gpu);
        same_sass(spec, &work, baselines, &fps, progress)
    };
    work.retain(|w| !unchanged.contains(&w.id()));
    (work, unchanged)
}

/// `explain: remeasure` (docs/why.md): these targets collect the explanatory counters only when
/// re-measured, or in the explain pass.
fn explained_targets(targets: &[&Target]) -> BTreeMap<String, Target> {
    targets
        .iter()
        // A target whose counters are measured apart by ncu (a cupti target's,
        // `plan::ncu_for_why`): its re-measurement stays its own profiler's.
        .filter(|t| t.explain == Explain::Remeasure && crate::plan::ncu_for_why(t).is_none())
        .map(|t| (t.name.clone(), crate::plan::explaining(t)))
        .collect()
}

/// The GPU keys (baseline directories) of the targets' fingerprints.
fn gpu_keys(targets: &[&Target], run: &Provenance, gpu: Option<&dyn Gpu>) -> BTreeSet<String> {
    targets
        .iter()
        .map(|t| fingerprint_for(run, t, gpu).gpu_key())
        .collect()
}

/// The judged rows made whole: sizes skipped for the same machine code become passes, the
/// explanatory counters, the baseline rows this run did not measure (`missing`), and the notes
/// on kernel filters and operation rows.
fn finish_rows(
    rows: Vec<Row>,
    targets: &[&Target],
    unchanged: &BTreeSet<TargetSize>,
    baselines: &Baselines,
    m: &Measurement,
    opts: &CheckOptions<'_>,
) -> (Vec<Row>, Option<crate::outcome::results::SassSkip>) {
    let (mut rows, sass_skip) = skipped_rows(rows, targets, unchanged, baselines);
    crate::run::clock::confirm_in_cycles(&mut rows, targets, &m.samples, &|k| {
        baseline_samples(baselines, k)
    });
    harness_states::note_summaries(&mut rows, targets, baselines);
    add_why(&mut rows, &m.samples, baselines);
    crate::outcome::apply_missing(
        &mut rows,
        &crate::outcome::MissingScope {
            targets,
            allow_all: opts.allow_missing,
            skipped: unchanged,
        },
    );
    unselected(&mut rows, &m.unselected);
    operation_notes(&mut rows);
    (rows, sass_skip)
}

/// The baseline's samples of `key`: its entry, else a series kept beside the entries (nvbench's
/// cycles beside a gated time, the explanatory counters).
fn baseline_samples(baselines: &Baselines, key: &crate::measured::samples::SeriesKey) -> Option<Vec<f64>> {
    let (b, _) = baselines.get(&key.target)?;
    if let Some(e) = b.entry_for(key) {
        return Some(e.samples.clone());
    }
    b.counters
        .iter()
        .find(|c| c.size == key.size && c.kernel == key.kernel && c.metric == key.metric)
        .map(|c| c.samples.clone())
}

/// Rows for the baseline files of targets the spec no longer has (`crate::outcome::gone`): looked at by
/// a run of the whole spec, or by shard 1 of a sharded one (so that `merge` sees them once).
fn gone_rows(
    spec: &Spec,
    targets: &[&Target],
    stored: &Stored,
    opts: &CheckOptions<'_>,
    gpu_name: &str,
    gpu_keys: impl FnOnce() -> BTreeSet<String>,
) -> Vec<Row> {
    let whole = targets.len() == spec.targets.len() && opts.shard.as_ref().is_none_or(|s| s.shard.k == 1);
    if !whole {
        return Vec::new();
    }
    let names: BTreeSet<&str> = spec.targets.iter().map(|t| t.name.as_str()).collect();
    let mut rows = crate::outcome::gone_rows(stored, &gpu_keys(), &names, opts.allow_missing);
    for r in &mut rows {
        gpu_name.clone_into(&mut r.key.gpu);
    }
    rows
}

/// The stacked category bars of nsys targets, this run's beside the baseline's.
fn category_bars(
    targets: &[&Target],
    samples: &SampleSet,
    baselines: &Baselines,
) -> Vec<crate::nsys::bars::CategoryBars> {
    crate::nsys::bars::category_bars(targets, samples, &|k| {
        baselines
            .get(&k.target)
            .and_then(|b| b.0.entry_for(k))
            .map(|e| e.samples.clone())
    })
}

/// Each target's fingerprint key for the SASS cache.
fn stable_keys(targets: &[&Target], run: &Provenance, gpu: Option<&dyn Gpu>) -> BTreeMap<String, String> {
    targets
        .iter()
        .map(|t| {
            let fp = fingerprint_for(run, t, gpu);
            (
                t.name.clone(),
                fp.stable_key(crate::gpu::fingerprint::DEFAULT_KEY_FIELDS),
            )
        })
        .collect()
}

/// The statistical settings of a (sharded) check and how the report names its false-alarm
/// control: Bonferroni across shards, Holm within each, so the merged run keeps its false-alarm
/// rate at alpha, as an unsharded run does (docs/github-actions.md).
fn sharded_config(
    spec: &Spec,
    targets: &[&Target],
    shard: Option<&crate::plan::Selection>,
) -> (Config, String) {
    let mut cfg = stats_config(&spec.settings);
    // Alpha is spent over the looks re-measurement may take, by each row's plan
    // (docs/statistics.md, 2.6; `check::judge` gives every row its look).
    cfg.looks = targets
        .iter()
        .map(|t| crate::stats::remeasure::looks(t.repetitions, t.max_repetitions))
        .max()
        .unwrap_or(1);
    let mut multiple_testing = format!(
        "holm alpha={} spent over up to {} look(s) (alpha/looks at each look but the last, which spends the rest)",
        cfg.alpha, cfg.looks
    );
    if let Some(s) = shard.filter(|s| s.shard.n > 1) {
        multiple_testing = format!(
            "holm alpha={} per shard (alpha {} / {} shards)",
            cfg.alpha / s.shard.n as f64,
            cfg.alpha,
            s.shard.n
        );
        cfg.alpha /= s.shard.n as f64;
    }
    (cfg, multiple_testing)
}

/// `check` inside the re-measure loop ([`crate::run::engine::until_decided`]): the reference samples
/// are the stored baselines.
struct CheckLoop<'a, 'w> {
    targets: &'a [&'a Target],
    baselines: &'a Baselines,
    cfg: &'a Config,
    shard: Option<&'a crate::plan::Selection>,
    gpu_name: &'a str,
    peaks_known: bool,
    work: &'a [Work<'a>],
    explained: &'a BTreeMap<String, Target>,
    /// The next repetition to measure per (target, size).
    next_rep: BTreeMap<TargetSize, u32>,
    m: Measurement,
    /// The roofline points of the last judgement.
    roofline: Vec<RooflinePoint>,
    tools: Instruments<'a, 'w>,
}

impl crate::run::engine::Remeasure for CheckLoop<'_, '_> {
    fn judge(&mut self, rounds: &crate::run::engine::Rounds) -> (Vec<Row>, Vec<RunError>) {
        let mut samples = self.m.samples.clone();
        self.roofline = add_derived(self.targets, &mut samples, self.gpu_name);
        let (mut rows, spec_errors) = judge(
            self.targets,
            &samples,
            self.baselines,
            &self.m,
            self.cfg,
            rounds,
            self.peaks_known,
        );
        if let Some(s) = self.shard {
            // Baseline entries of sizes the spec lacks belong to no shard: shard 1 carries them
            // (as it carries the files of renamed targets), so `merge` sees them once.
            let unknown_size = |r: &Row| {
                self.targets
                    .iter()
                    .any(|t| t.name == r.key.target && !t.sizes.iter().any(|z| z.key() == r.key.size))
            };
            rows.retain(|r| s.contains(&r.key.target, &r.key.size) || (s.shard.k == 1 && unknown_size(r)));
        }
        for r in &mut rows {
            r.key.gpu = self.gpu_name.to_owned();
        }
        (rows, spec_errors)
    }

    fn measure_more(
        &mut self,
        doubtful: &BTreeSet<TargetSize>,
    ) -> Result<Option<BTreeSet<TargetSize>>, Error> {
        let more: Vec<Work<'_>> = remeasure(self.work, doubtful, &self.next_rep)
            .into_iter()
            .map(|w| Work {
                target: self.explained.get(&w.target.name).unwrap_or(w.target),
                ..w
            })
            .collect();
        if more.is_empty() {
            return Ok(None);
        }
        self.tools
            .progress
            .status(&format!("re-measuring {} doubtful size(s)", more.len()));
        let mut extra = measure(&mut self.tools, &more, true)?;
        let mut grew = BTreeSet::new();
        for w in &more {
            let id = w.id();
            self.next_rep.insert(id.clone(), w.reps.1);
            if extra.reps_done.contains_key(&id) {
                grew.insert(id);
            }
        }
        keep_unselected(&mut extra, self.baselines);
        self.m.samples.extend(extra.samples);
        self.m.errors.extend(extra.errors);
        self.m.unselected.extend(extra.unselected);
        for (k, v) in extra.cost_seconds {
            *self.m.cost_seconds.entry(k).or_default() += v;
        }
        Ok(Some(grew))
    }
}

/// The exit code of a finished check (see [`crate::outcome::decide::exit_code`]).
pub fn exit_code(results: &Results, fail_on: FailOn) -> crate::foundation::exit_codes::Exit {
    crate::outcome::decide::exit_code(results.verdict, &results.errors, fail_on)
}
