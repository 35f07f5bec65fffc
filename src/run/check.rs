//! `check`: measure, compare against the baselines, re-measure the doubtful rows, decide.
//!
//! The statistics decide (`stats::judge_all`); this module only gathers the inputs, drives the
//! re-measurement and assembles [`Results`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::baseline::{BaselineFile, Store};
use crate::foundation::error::Error;
use crate::gpu::{Gpu, peaks_for};
use crate::measured::samples::{SampleSet, SeriesKey};
use crate::outcome::results::{
    ErrorKind, FingerprintDiff, Results, RooflinePoint, Row, RowThreshold, RowVerdict, RunError,
};
use crate::plan::{Work, initial_work, remeasure};
use crate::profile::record::Recorder;
use crate::profile::{Profiler, Versions};
use crate::run::engine::{add_derived, fingerprint_for, git_commit, min_effect_unit, stats_config};
use crate::run::measure::{Measurement, Watch, measure};
use crate::spec::{Explain, MetricSpec, Spec, Target};
use crate::stats::{Comparison, Config, judge_all, summarize};

pub use crate::outcome::results::FailOn;

/// Options of one check.
pub struct CheckOptions<'a> {
    pub baselines: PathBuf,
    pub fail_on: FailOn,
    pub allow_fingerprint_mismatch: bool,
    /// NVML, when a driver is there (live runs only).
    pub gpu: Option<&'a dyn Gpu>,
    /// Only these target x size rows (`--shard K/N`); rows of other shards are not `missing`.
    pub shard: Option<crate::plan::Selection>,
    /// Profile every kernel, even those whose SASS equals the baseline's (`--no-skip`).
    pub no_skip: bool,
    /// `--allow-missing`: baseline rows this run did not measure do not fail the gate.
    pub allow_missing: bool,
    /// `--allow-no-baselines`: an empty baselines directory is a first run (every row `new`),
    /// not an error.
    pub allow_no_baselines: bool,
}

/// Each target's baseline with the file it came from (named in errors about its content).
type Baselines = BTreeMap<String, (BaselineFile, PathBuf)>;

/// Every baseline file of the store, with its path (read once; the gone-targets check uses it too).
type Stored = Vec<(PathBuf, BaselineFile)>;

/// The error for a baselines directory that holds no baseline at all (a mistyped path, a
/// directory one level too deep, baselines never committed): passing with every row `new` would
/// keep CI green forever.
fn no_baselines(dir: &std::path::Path, gpu_key: &str) -> Error {
    let layout = format!("{}/<gpu-key>/<target>.json", dir.display());
    // `--baselines baselines/nvidia-h100-80gb-hbm3`: the target files one level too high.
    let direct: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
                .take(3)
                .collect()
        })
        .unwrap_or_default();
    let message = if !direct.is_empty() {
        let parent = dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| ".".to_owned(), |p| p.display().to_string());
        format!(
            "no baselines: this directory holds target files ({}) where GPU directories were expected; the layout is {layout} (here: {}/{gpu_key}/<target>.json)\n  help: pass the directory above it, `--baselines {parent}`",
            direct.join(", "),
            dir.display()
        )
    } else if dir.is_dir() {
        format!(
            "no baselines: the directory holds no baseline file (expected {layout}; for this GPU: {}/{gpu_key}/<target>.json)\n  help: record them with `cgp-gate baseline update` on main and commit them, fix the --baselines path, or pass --allow-no-baselines for the first run (every row is then `new`)",
            dir.display()
        )
    } else {
        format!(
            "no baselines: the directory does not exist (expected {layout})\n  help: record them with `cgp-gate baseline update` on main and commit them, fix the --baselines path, or pass --allow-no-baselines for the first run (every row is then `new`)"
        )
    };
    Error::Input {
        path: dir.to_path_buf(),
        message,
    }
}

/// Run the check and assemble the results. Profiler failures end up in `Results::errors`
/// (verdict `error`); only setup failures (fingerprint mismatch, unreadable baselines) are `Err`.
///
/// # Errors
/// Baselines that cannot be read, a fingerprint mismatch without
/// `allow_fingerprint_mismatch`, recorder failures.
pub fn run_check(
    spec: &Spec,
    targets: &[&Target],
    profiler: &mut dyn Profiler,
    recorder: Option<&mut Recorder>,
    mut watch: Option<&mut Watch<'_>>,
    opts: &CheckOptions<'_>,
    progress: &mut dyn crate::run::progress::Progress,
) -> Result<Results, Error> {
    let mut recorder = recorder;
    let (source, synthetic) = (
        profiler.source(),
        profiler.manifest().is_some_and(|m| m.synthetic),
    );
    let versions = Versions::of(profiler, targets)?;
    let fingerprint = targets
        .first()
        .map(|t| fingerprint_for(&*profiler, &versions, t, opts.gpu))
        .unwrap_or_default();
    // Load baselines and check comparability before spending time on the GPU.
    let (baselines, mismatch, stored) = load_baselines(spec, targets, &*profiler, &versions, opts)?;

    let mut work = initial_work(targets, opts.shard.as_ref());
    // The SASS cache (docs/sass-cache.md): sizes whose every baseline kernel has the same
    // machine code now are not profiled.
    let unchanged = if opts.no_skip {
        BTreeSet::new()
    } else {
        let fps = stable_keys(targets, &*profiler, &versions, opts.gpu);
        same_sass(spec, &work, &baselines, &fps, progress)
    };
    work.retain(|w| !unchanged.contains(&w.id()));
    let mut m = measure(
        profiler,
        &work,
        recorder.as_deref_mut(),
        watch.as_deref_mut(),
        false,
        progress,
    )?;
    keep_unselected(&mut m, &baselines);
    let (cfg, multiple_testing) = sharded_config(spec, targets, opts.shard.as_ref());
    // `explain: remeasure` (docs/why.md): these targets collect the explanatory counters only
    // when re-measured, or in the explain pass below.
    let explained: BTreeMap<String, Target> = targets
        .iter()
        .filter(|t| t.explain == Explain::Remeasure)
        .map(|t| (t.name.clone(), crate::plan::explaining(t)))
        .collect();
    let mut run = CheckLoop {
        targets,
        baselines: &baselines,
        cfg: &cfg,
        shard: opts.shard.as_ref(),
        gpu_name: &fingerprint.gpu_name,
        peaks_known: peaks_for(&fingerprint.gpu_name).is_some(),
        work: &work,
        explained: &explained,
        next_rep: work
            .iter()
            .map(|w| ((w.target.name.clone(), w.size.key()), w.reps.1))
            .collect(),
        m,
        roofline: Vec::new(),
        profiler,
        recorder,
        watch: watch.as_deref_mut(),
        progress,
    };
    let (rows, spec_errors, _) = crate::run::engine::until_decided(&mut run)?;
    let CheckLoop {
        next_rep,
        mut m,
        roofline,
        profiler,
        recorder,
        watch: loop_watch,
        progress,
        ..
    } = run;

    explain_pass(
        &rows, &work, &explained, &next_rep, &mut m, profiler, recorder, loop_watch, progress,
    )?;
    let (mut rows, sass_skip) = skipped_rows(rows, targets, &unchanged, &baselines);
    add_why(&mut rows, &m.samples, &baselines);
    crate::run::missing::apply(
        &mut rows,
        &crate::run::missing::Scope {
            targets,
            allow_all: opts.allow_missing,
            skipped: &unchanged,
        },
    );
    unselected(&mut rows, &m.unselected);
    operation_notes(&mut rows);
    // Baseline files of targets the spec no longer has (src/run/gone.rs): looked at by a run of the
    // whole spec, or by shard 1 of a sharded one (so that `merge` sees them once).
    if targets.len() == spec.targets.len() && opts.shard.as_ref().is_none_or(|s| s.shard.k == 1) {
        let keys: BTreeSet<String> = targets
            .iter()
            .map(|t| fingerprint_for(&*profiler, &versions, t, opts.gpu).gpu_key())
            .collect();
        let names: BTreeSet<&str> = spec.targets.iter().map(|t| t.name.as_str()).collect();
        for mut r in crate::run::gone::rows(&stored, &keys, &names, opts.allow_missing) {
            r.gpu.clone_from(&fingerprint.gpu_name);
            rows.push(r);
        }
    }
    let category_bars = crate::nsys::bars::category_bars(targets, &m.samples, &|k| {
        baselines
            .get(&k.target)
            .and_then(|b| b.0.entry_for(k))
            .map(|e| e.samples.clone())
    });
    let mut errors = m.errors;
    errors.extend(spec_errors);
    let results = crate::run::engine::assemble(
        crate::run::engine::Assembly {
            spec,
            source,
            synthetic,
            fingerprint,
            git_commit: git_commit(&spec.base_dir()),
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
        fingerprint_mismatch: (!mismatch.is_empty()).then_some(mismatch),
        shard: opts.shard.as_ref().map(crate::plan::Selection::label),
        roofline,
        sass_skip,
        category_bars,
        ..results
    })
}

/// Each target's fingerprint key for the SASS cache.
fn stable_keys(
    targets: &[&Target],
    profiler: &dyn Profiler,
    versions: &Versions,
    gpu: Option<&dyn Gpu>,
) -> BTreeMap<String, String> {
    targets
        .iter()
        .map(|t| {
            let fp = fingerprint_for(profiler, versions, t, gpu);
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
    // Alpha is split over the looks re-measurement may take (docs/statistics.md, 2.6).
    cfg.looks = targets
        .iter()
        .map(|t| crate::stats::remeasure::looks(t.repetitions, t.max_repetitions))
        .max()
        .unwrap_or(1);
    let mut multiple_testing = format!("holm alpha={} over {} look(s)", cfg.alpha, cfg.looks);
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

/// Every selected target's baseline for this GPU, how their fingerprints differ from this run's
/// (when allowed), and every file of the store.
///
/// # Errors
/// Unreadable baselines; baselines only for other GPUs; a fingerprint mismatch without
/// `allow_fingerprint_mismatch`.
fn load_baselines(
    spec: &Spec,
    targets: &[&Target],
    profiler: &dyn Profiler,
    versions: &Versions,
    opts: &CheckOptions<'_>,
) -> Result<(Baselines, Vec<FingerprintDiff>, Stored), Error> {
    let store = Store::new(&opts.baselines);
    let mut fields: Vec<&str> = spec
        .settings
        .fingerprint_fields
        .iter()
        .map(String::as_str)
        .collect();
    // Whatever the spec leaves out, an ncu baseline never compares with an nsys run.
    for f in crate::gpu::fingerprint::ALWAYS_KEY_FIELDS {
        if !fields.contains(f) {
            fields.push(f);
        }
    }
    let mut baselines: Baselines = BTreeMap::new();
    let mut mismatch: Vec<FingerprintDiff> = Vec::new();
    let stored = store.load_all()?;
    for t in targets {
        let fp = fingerprint_for(profiler, versions, t, opts.gpu);
        let Some(mut b) = store.load(&fp.gpu_key(), &t.name)? else {
            // A first run has no baselines at all: every row is "new". But baselines of this
            // target for other GPUs mean this GPU is not the one the baselines describe (or NVML
            // could not name it): passing on "new" rows would hide every regression.
            let others: Vec<String> = stored
                .iter()
                .filter(|(_, f)| f.target == t.name)
                .map(|(p, _)| p.display().to_string())
                .collect();
            if !others.is_empty() {
                return Err(Error::Environment(format!(
                    "no baseline of `{}` for this GPU (`{}`, expected {}), but there are baselines for other GPUs: {}\n  help: run on the GPU the baselines were measured on, or add this GPU's with `cgp-gate baseline update` (on a new runner type, commit them in the same pull request)",
                    t.name,
                    fp.gpu_name,
                    store.path(&fp.gpu_key(), &t.name).display(),
                    others.join(", ")
                )));
            }
            continue;
        };
        let diffs = b.fingerprint.differences(&fp, &fields);
        if !diffs.is_empty() {
            if !opts.allow_fingerprint_mismatch {
                let list = diffs
                    .iter()
                    .map(|(f, base, now)| format!("{f}: baseline `{base}`, now `{now}`"))
                    .collect::<Vec<_>>()
                    .join("; ");
                return Err(Error::Environment(format!(
                    "the baseline of `{}` ({}) was measured on a different setup: {list}\n  help: refresh it on this machine with `cgp-gate baseline update`, add the baseline of this GPU, or pass --allow-fingerprint-mismatch (every report will say so)",
                    t.name,
                    store.path(&fp.gpu_key(), &t.name).display()
                )));
            }
            for (f, base, now) in diffs {
                let d = FingerprintDiff {
                    field: format!("{}: {f}", t.name),
                    baseline: base,
                    current: now,
                };
                if !mismatch.contains(&d) {
                    mismatch.push(d);
                }
            }
        }
        // A schema-1 baseline still holds its runs' warm-up launches.
        b.drop_warmup_v1(t.warmup);
        baselines.insert(t.name.clone(), (b, store.path(&fp.gpu_key(), &t.name)));
    }
    if stored.is_empty() && !opts.allow_no_baselines {
        let key = targets
            .first()
            .map(|t| fingerprint_for(profiler, versions, t, opts.gpu).gpu_key())
            .unwrap_or_default();
        return Err(no_baselines(&opts.baselines, &key));
    }
    Ok((baselines, mismatch, stored))
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
    next_rep: BTreeMap<(String, String), u32>,
    m: Measurement,
    /// The roofline points of the last judgement.
    roofline: Vec<RooflinePoint>,
    profiler: &'a mut dyn Profiler,
    recorder: Option<&'a mut Recorder>,
    watch: Option<&'a mut Watch<'w>>,
    progress: &'a mut dyn crate::run::progress::Progress,
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
            rows.retain(|r| s.contains(&r.target, &r.size));
        }
        for r in &mut rows {
            r.gpu = self.gpu_name.to_owned();
        }
        (rows, spec_errors)
    }

    fn measure_more(
        &mut self,
        doubtful: &BTreeSet<(String, String)>,
    ) -> Result<Option<BTreeSet<(String, String)>>, Error> {
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
        self.progress
            .status(&format!("re-measuring {} doubtful size(s)", more.len()));
        let mut extra = measure(
            &mut *self.profiler,
            &more,
            self.recorder.as_deref_mut(),
            self.watch.as_deref_mut(),
            true,
            &mut *self.progress,
        )?;
        let mut grew = BTreeSet::new();
        for w in &more {
            let id = (w.target.name.clone(), w.size.key());
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

/// The "why" of every timing row that regressed, improved or is doubtful: the explanatory
/// counters measured for the same target, size and kernel, compared by [`crate::measured::why::explain`].
/// They are the spec's gated metrics that explain time (in the rows) and the counters
/// `explain: true` collects without gating them (in the run's samples and the baseline's
/// `counters`).
fn add_why(rows: &mut [Row], samples: &SampleSet, baselines: &Baselines) {
    let wanted: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            r.metric.starts_with("gpu__time_duration")
                && r.skipped.is_none()
                && matches!(
                    r.verdict,
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
                    o.target == r.target
                        && o.size == r.size
                        && o.kernel == r.kernel
                        && o.gpu == r.gpu
                        && crate::measured::why::is_explanatory(&o.metric)
                })
                .filter_map(|o| {
                    Some(crate::measured::why::Counter {
                        metric: &o.metric,
                        baseline: &o.baseline.as_ref()?.samples,
                        candidate: &o.candidate.as_ref()?.samples,
                    })
                })
                .collect();
            let gated: BTreeSet<&str> = counters.iter().map(|c| c.metric).collect();
            let mut counters = counters;
            if let Some((b, _)) = baselines.get(&r.target) {
                for c in b.counters.iter().filter(|c| {
                    c.size == r.size
                        && r.kernel.as_deref() == Some(c.kernel.as_str())
                        && !gated.contains(c.metric.as_str())
                }) {
                    let key = SeriesKey {
                        target: r.target.clone(),
                        size: r.size.clone(),
                        kernel: c.kernel.clone(),
                        metric: c.metric.clone(),
                    };
                    if let Some(now) = samples.series.get(&key) {
                        counters.push(crate::measured::why::Counter {
                            metric: &c.metric,
                            baseline: &c.samples,
                            candidate: &now.values,
                        });
                    }
                }
            }
            let ctx = crate::measured::why::Context {
                time_change: r.change,
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

/// The explain pass of `explain: remeasure` targets (docs/why.md): the sizes with a timing row
/// judged a regression or an improvement and no explanatory counters yet (they were not
/// re-measured) are measured `repetitions` more times with the counters, and only the counters
/// the spec does not gate are kept: the verdicts stand on the timing runs. A failure here costs
/// the why, not the run: it is said and the run goes on.
#[expect(
    clippy::too_many_arguments,
    reason = "the check's state, passed once from run_check"
)]
fn explain_pass(
    rows: &[Row],
    work: &[Work<'_>],
    explained: &BTreeMap<String, Target>,
    next_rep: &BTreeMap<(String, String), u32>,
    m: &mut Measurement,
    profiler: &mut dyn Profiler,
    recorder: Option<&mut Recorder>,
    watch: Option<&mut Watch<'_>>,
    progress: &mut dyn crate::run::progress::Progress,
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
    let wanted: BTreeSet<(String, String)> = rows
        .iter()
        .filter(|r| {
            r.metric.starts_with("gpu__time_duration")
                && matches!(r.verdict, RowVerdict::Regression | RowVerdict::Improvement)
                && explained.contains_key(&r.target)
                && !has_counters(&r.target, &r.size)
        })
        .map(|r| (r.target.clone(), r.size.clone()))
        .collect();
    let more: Vec<Work<'_>> = work
        .iter()
        .filter(|w| wanted.contains(&w.id()))
        .filter_map(|w| {
            let target = explained.get(&w.target.name)?;
            let from = next_rep.get(&w.id()).copied().unwrap_or(w.reps.1);
            Some(Work {
                target,
                size: w.size,
                reps: (from, from + target.repetitions),
            })
        })
        .collect();
    if more.is_empty() {
        return Ok(());
    }
    progress.note(&format!(
        "explaining {} changed size(s): collecting the counters that say why",
        more.len()
    ));
    let extra = measure(profiler, &more, recorder, watch, true, progress)?;
    for e in &extra.errors {
        progress.note(&format!(
            "no why for `{}`{}: {}",
            e.target,
            e.size.as_deref().map(|s| format!(" [{s}]")).unwrap_or_default(),
            e.message
        ));
    }
    for (key, series) in extra.samples.series {
        let gated = explained
            .get(&key.target)
            .is_some_and(|t| t.metrics.iter().any(|ms| ms.name == key.metric));
        if crate::measured::why::is_explanatory(&key.metric) && !gated {
            m.samples.series.insert(key, series);
        }
    }
    for (k, v) in extra.cost_seconds {
        *m.cost_seconds.entry(k).or_default() += v;
    }
    Ok(())
}

/// The (target, size) work items whose every baseline kernel has a SASS hash equal to the one
/// of the code on disk now. A kernel whose SASS cannot be read, or that has no hash in the
/// baseline, keeps its size profiled.
fn same_sass(
    spec: &Spec,
    work: &[Work<'_>],
    baselines: &Baselines,
    fp_keys: &BTreeMap<String, String>,
    progress: &mut dyn crate::run::progress::Progress,
) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    let mut functions: BTreeMap<String, Result<BTreeMap<String, String>, String>> = BTreeMap::new();
    for w in work {
        let (target, size) = w.id();
        let Some(stored) = baselines.get(&target).and_then(|(b, _)| b.sass.get(&size)) else {
            continue;
        };
        let Some((b, _)) = baselines.get(&target) else {
            continue;
        };
        let kernels: BTreeSet<&str> = b
            .entries
            .iter()
            .filter(|e| e.size == size)
            .map(|e| e.kernel.as_str())
            .collect();
        if kernels.is_empty() || kernels.iter().any(|k| !stored.contains_key(*k)) {
            continue;
        }
        let f = functions
            .entry(target.clone())
            .or_insert_with(|| crate::profile::sass::functions_of(w.target, &spec.base_dir()));
        let f = match f {
            Ok(f) => f,
            Err(why) => {
                progress.note(&format!(
                    "profiling `{target}` [{size}]: its SASS cannot be read ({why})"
                ));
                continue;
            }
        };
        let kernels: Vec<&str> = kernels.into_iter().collect();
        let key = fp_keys.get(&target).map_or("", String::as_str);
        let now = crate::profile::sass::hashes(f, w.target, w.size, key, &kernels);
        if kernels.iter().all(|k| now.get(*k) == stored.get(*k)) {
            progress.note(&format!(
                "skipping `{target}` [{size}]: same machine code as the baseline"
            ));
            out.insert((target, size));
        }
    }
    out
}

/// Replace the `missing` rows of skipped sizes by passes "unchanged (same machine code)", and
/// say what the skip saved.
fn skipped_rows(
    rows: Vec<Row>,
    targets: &[&Target],
    unchanged: &BTreeSet<(String, String)>,
    baselines: &Baselines,
) -> (Vec<Row>, Option<crate::outcome::results::SassSkip>) {
    if unchanged.is_empty() {
        return (rows, None);
    }
    let mut kernels: BTreeSet<(String, String, Option<String>)> = BTreeSet::new();
    let mut saved: Option<f64> = None;
    let mut rows: Vec<Row> = rows
        .into_iter()
        .map(|mut r| {
            if r.verdict == RowVerdict::Missing && unchanged.contains(&(r.target.clone(), r.size.clone())) {
                r.verdict = RowVerdict::Pass;
                crate::profile::sass::SAME_SASS_REASON.clone_into(&mut r.reason);
                r.skipped = Some(crate::outcome::results::SkipReason::SameSass);
                let first = kernels.insert((r.target.clone(), r.size.clone(), r.kernel.clone()));
                if first && let Some((b, _)) = baselines.get(&r.target) {
                    let reps = targets
                        .iter()
                        .find(|t| t.name == r.target)
                        .map_or(1, |t| t.repetitions);
                    let entry = r
                        .kernel
                        .as_deref()
                        .and_then(|k| b.entry(&r.size, k, crate::plan::DURATION_METRIC));
                    if let Some(e) = entry {
                        *saved.get_or_insert(0.0) += e.median() * f64::from(reps);
                    }
                }
            }
            r
        })
        .collect();
    rows.sort_by(|a, b| {
        (a.verdict, &a.target, &a.size, &a.kernel, &a.metric)
            .cmp(&(b.verdict, &b.target, &b.size, &b.kernel, &b.metric))
    });
    let skip = crate::outcome::results::SassSkip {
        kernels: kernels.len(),
        sizes: unchanged.len(),
        gpu_time_saved_ns: saved,
    };
    (rows, Some(skip))
}

/// Operation rows (`kernels: sum`): the reason names the kernels behind the row, and a change of
/// kernel set since the baseline ("now runs `cutlass_80_...` instead of `nvjet_sm90_...`").
fn operation_notes(rows: &mut [Row]) {
    use crate::profile::sum::kernels_of;
    let tick = |v: &[String]| v.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    for r in rows
        .iter_mut()
        .filter(|r| r.kernel.as_deref() == Some(crate::spec::SUM_KERNEL))
    {
        let now = kernels_of(&r.candidate_configs);
        if now.is_empty() {
            continue;
        }
        let note = match &r.config_change {
            Some(c) if kernels_of(&c.baseline) != now => format!(
                "kernel set changed: now runs {} instead of {}",
                tick(&now),
                tick(&kernels_of(&c.baseline))
            ),
            _ => format!("kernels: {}", tick(&now)),
        };
        r.reason = if r.reason.is_empty() {
            note
        } else {
            format!("{}; {note}", r.reason)
        };
    }
}

/// Sizes whose `kernel:` filter selected none of the kernels that ran (docs/pytorch.md, "When the
/// library switches kernels"), where the baseline has kernels: not a profiler failure. Their
/// error is dropped, so the baseline's rows become `missing` (exit 1 unless allowed). Where the
/// baseline has nothing, nothing was ever selected: the error stays (and so does exit 3).
fn keep_unselected(m: &mut Measurement, baselines: &Baselines) {
    let has_baseline = |(target, size): &(String, String)| {
        baselines
            .get(target)
            .is_some_and(|(b, _)| b.entries.iter().any(|e| &e.size == size))
    };
    m.unselected.retain(|id, _| has_baseline(id));
    let unselected = &m.unselected;
    m.errors
        .retain(|e| !unselected.contains_key(&(e.target.clone(), e.size.clone().unwrap_or_default())));
}

/// The `missing` rows of sizes whose filter selected none of the kernels that ran: the reason
/// names the kernels that ran instead.
fn unselected(rows: &mut [Row], unselected: &BTreeMap<(String, String), Vec<String>>) {
    for ((target, size), ran) in unselected {
        for r in rows
            .iter_mut()
            .filter(|r| &r.target == target && &r.size == size && r.verdict == RowVerdict::Missing)
        {
            r.reason = format!(
                "{}; the kernel filter selected none of the kernels that ran: the application ran {}",
                r.reason,
                ran.iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
}

/// Judge every measured row against its baseline, plus `missing` rows for baseline entries
/// that were not measured. Rows are ordered regressions first, then by key. Also returns the
/// spec mistakes that only the measurement revealed (a `min_effect` in another unit than the
/// metric's), as invalid-input errors.
fn judge(
    targets: &[&Target],
    samples: &SampleSet,
    baselines: &Baselines,
    m: &Measurement,
    cfg: &Config,
    rounds: &BTreeMap<(String, String), u32>,
    peaks_known: bool,
) -> (Vec<Row>, Vec<RunError>) {
    let failed: BTreeSet<(String, String)> = m
        .errors
        .iter()
        .map(|e| (e.target.clone(), e.size.clone().unwrap_or_default()))
        .collect();
    let mut keyed: Vec<Keyed<'_>> = Vec::new();
    let mut seen: BTreeSet<SeriesKey> = BTreeSet::new();
    for t in targets {
        for (key, _) in samples.series.iter().filter(|(k, _)| k.target == t.name) {
            if failed.contains(&(key.target.clone(), key.size.clone())) {
                continue;
            }
            let Some(ms) = t.metrics.iter().find(|x| x.name == key.metric) else {
                continue;
            };
            let entry = baselines.get(&t.name).and_then(|(b, _)| b.entry_for(key));
            keyed.push((key.clone(), ms, entry));
            seen.insert(key.clone());
        }
    }
    let mut rows = judged_rows(&keyed, samples, cfg, rounds);
    let mut spec_errors = baseline_unit_errors(&mut rows, &keyed, baselines);
    // `validate` catches the `min_effect`s whose metric's unit is known from its name; this
    // catches the rest, once the unit is measured.
    for (row, (_, ms, _)) in rows.iter_mut().zip(&keyed) {
        min_effect_unit(row, ms, &mut spec_errors);
    }
    rows.extend(unreported_rows(targets, m, &failed, &seen, peaks_known));
    rows.extend(missing_rows(targets, baselines, &failed, &seen));
    crate::run::engine::sort_rows(&mut rows);
    (rows, spec_errors)
}

/// A measured series with its spec metric and its baseline entry, if any.
type Keyed<'a> = (SeriesKey, &'a MetricSpec, Option<&'a crate::baseline::Entry>);

/// The rows the statistics judge: every measured series against its baseline entry.
fn judged_rows(
    keyed: &[Keyed<'_>],
    samples: &SampleSet,
    cfg: &Config,
    rounds: &BTreeMap<(String, String), u32>,
) -> Vec<Row> {
    let histories: Vec<Vec<f64>> = keyed
        .iter()
        .map(|(_, _, entry)| entry.map(|e| e.older_medians()).unwrap_or_default())
        .collect();
    let comparisons: Vec<Comparison<'_>> = keyed
        .iter()
        .zip(&histories)
        .map(|((key, ms, entry), history)| Comparison {
            key: format!("{}/{}/{}/{}", key.target, key.size, key.kernel, key.metric),
            baseline: entry.map(|e| e.samples.as_slice()),
            candidate: samples.series.get(key).map_or(&[][..], |s| s.values.as_slice()),
            threshold: &ms.threshold,
            history,
            baseline_runs: entry.map_or(&[][..], |e| e.reps.as_slice()),
            candidate_runs: samples.series.get(key).map_or(&[][..], |s| s.reps.as_slice()),
        })
        .collect();
    let judgements = judge_all(&comparisons, cfg);
    keyed
        .iter()
        .zip(judgements)
        .map(|((key, ms, entry), j)| Row {
            target: key.target.clone(),
            size: key.size.clone(),
            kernel: Some(key.kernel.clone()),
            metric: key.metric.clone(),
            unit: samples
                .series
                .get(key)
                .map(|s| s.unit.clone())
                .unwrap_or_default(),
            verdict: j.verdict,
            threshold: Some(RowThreshold {
                tolerance: j.tolerance,
                limit: j.limit,
                ..RowThreshold::of(&ms.threshold)
            }),
            direction: Some(ms.threshold.direction),
            method: j.method,
            change: j.change,
            change_ci: j.change_ci,
            median_ci: j.median_ci,
            confidence: Some(j.confidence),
            p: j.p,
            p_adjusted: j.p_adjusted,
            baseline: j.baseline,
            candidate: Some(j.candidate),
            reason: j.reason,
            remeasured: rounds
                .get(&(key.target.clone(), key.size.clone()))
                .copied()
                .unwrap_or(0),
            candidate_reps: samples
                .series
                .get(key)
                .map(|s| s.reps.clone())
                .unwrap_or_default(),
            history: entry.map(|e| e.older_medians()).unwrap_or_default(),
            gpu: String::new(),
            skipped: None,
            why: None,
            fails_gate: false,
            candidate_configs: samples
                .series
                .get(key)
                .map(|s| s.configs.clone())
                .unwrap_or_default(),
            config_change: config_change(entry.map(|e| e.configs.as_slice()), samples.series.get(key)),
        })
        .collect()
}

/// Samples are compared as numbers: a baseline in another unit (`us` edited into a file of
/// `ns`) would be compared 1000x off. Units are never converted here: the row is an error,
/// and the damaged baseline is invalid input (exit 2), named with its metric, kernel and file.
fn baseline_unit_errors(rows: &mut [Row], keyed: &[Keyed<'_>], baselines: &Baselines) -> Vec<RunError> {
    let mut spec_errors: Vec<RunError> = Vec::new();
    for (row, (key, _, entry)) in rows.iter_mut().zip(keyed) {
        if let Some(e) = entry
            && e.unit != row.unit
        {
            row.verdict = RowVerdict::Error;
            row.reason = format!(
                "the baseline's samples are in `{}` but this run measured `{}`; they cannot be compared: refresh the baseline with `cgp-gate baseline update`",
                e.unit, row.unit
            );
            let file = baselines
                .get(&key.target)
                .map(|(_, p)| p.display().to_string())
                .unwrap_or_default();
            let message = format!(
                "{file}: the baseline of metric `{}` of kernel `{}` (target `{}`, size {}) is in `{}`, but ncu measures it in `{}`; units are never converted: restore the file from git, or measure it again with `cgp-gate baseline update`",
                row.metric,
                row.kernel_label(),
                row.target,
                row.size,
                e.unit,
                row.unit
            );
            spec_errors.push(RunError {
                target: row.target.clone(),
                size: Some(row.size.clone()),
                kind: ErrorKind::InvalidInput,
                message,
            });
        }
    }
    spec_errors
}

/// Every spec metric of every measured size must have been judged: a metric that no kernel
/// reported (or a derived metric that cannot be computed on this GPU) is an error row, never a
/// silent pass.
fn unreported_rows(
    targets: &[&Target],
    m: &Measurement,
    failed: &BTreeSet<(String, String)>,
    seen: &BTreeSet<SeriesKey>,
    peaks_known: bool,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for ((target, size), _) in m.reps_done.iter().filter(|(id, _)| !failed.contains(*id)) {
        let Some(t) = targets.iter().find(|t| &t.name == target) else {
            continue;
        };
        for ms in &t.metrics {
            if seen
                .iter()
                .any(|k| &k.target == target && &k.size == size && k.metric == ms.name)
            {
                continue;
            }
            let why = if crate::spec::PEAK_METRICS.contains(&ms.name.as_str()) && !peaks_known {
                "no peak figures are known for this GPU, so a % of peak cannot be computed (docs/gpu.md lists the GPUs)"
            } else {
                "no profiled kernel reported this metric"
            };
            let mut row = Row::bare(target, size, None, &ms.name, "", RowVerdict::Error, why);
            row.threshold = Some(RowThreshold::of(&ms.threshold));
            row.direction = Some(ms.threshold.direction);
            rows.push(row);
        }
    }
    rows
}

/// `missing` rows: the baseline entries of the selected targets that were not measured (and
/// did not fail).
fn missing_rows(
    targets: &[&Target],
    baselines: &Baselines,
    failed: &BTreeSet<(String, String)>,
    seen: &BTreeSet<SeriesKey>,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for t in targets {
        let Some((b, _)) = baselines.get(&t.name) else {
            continue;
        };
        for e in &b.entries {
            let key = e.key(&t.name);
            if seen.contains(&key) || failed.contains(&(key.target.clone(), key.size.clone())) {
                continue;
            }
            let ms = t.metrics.iter().find(|x| x.name == e.metric);
            // An nsys target's ungated category times are kept for the stacked bars, not judged.
            if ms.is_none() && crate::nsys::bars::is_informational(t, &e.metric) {
                continue;
            }
            let reason = if ms.is_some() {
                "in the baseline but not measured now (kernel or size no longer profiled)"
            } else {
                "in the baseline but the metric is no longer in the spec"
            };
            let mut row = Row::bare(
                &key.target,
                &key.size,
                Some(&key.kernel),
                &key.metric,
                &e.unit,
                RowVerdict::Missing,
                reason,
            );
            if let Some(m) = ms {
                row.threshold = Some(RowThreshold::of(&m.threshold));
                row.direction = Some(m.threshold.direction);
            }
            row.baseline = Some(summarize(&e.samples));
            row.history = e.older_medians();
            rows.push(row);
        }
    }
    rows
}

/// The launch configuration change of a row: the kernel ran with other grid/block sizes than in
/// the baseline. Only when both sides say which (a baseline written before configurations were
/// recorded has none): the series is still compared, and the reports say what changed.
fn config_change(
    baseline: Option<&[String]>,
    candidate: Option<&crate::measured::samples::Series>,
) -> Option<crate::outcome::results::ConfigChange> {
    let (b, c) = (baseline?, &candidate?.configs);
    (!b.is_empty() && !c.is_empty() && b != c.as_slice()).then(|| crate::outcome::results::ConfigChange {
        baseline: b.to_vec(),
        candidate: c.clone(),
    })
}

/// The exit code of a finished check (see [`crate::outcome::decide::exit_code`]).
pub fn exit_code(results: &Results, fail_on: FailOn) -> i32 {
    crate::outcome::decide::exit_code(results.verdict, &results.errors, fail_on)
}
