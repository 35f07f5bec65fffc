//! `check`: measure, compare against the baselines, re-measure the doubtful rows, decide.
//!
//! The statistics decide (`stats::judge_all`); this module only gathers the inputs, drives the
//! re-measurement and assembles [`Results`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::SystemTime;

use crate::baseline::{BaselineFile, Store, rfc3339_utc};
use crate::error::Error;
use crate::gpu::fingerprint::Fingerprint;
use crate::gpu::{Gpu, peaks_for};
use crate::measure::{Measurement, Watch, measure};
use crate::plan::{Work, initial_work, remeasure};
use crate::profile::record::Recorder;
use crate::profile::{Profiler, Versions};
use crate::results::{
    ErrorKind, FingerprintDiff, RESULTS_VERSION, Results, RooflinePoint, Row, RowThreshold, RowVerdict,
    RunError,
};
use crate::samples::{SampleSet, SeriesKey};
use crate::spec::{DERIVED_PREFIX, Explain, MetricSpec, ProfilerKind, Spec, Target};
use crate::stats::{Comparison, Config, judge_all, summarize};

pub use crate::results::FailOn;

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
}

/// The fingerprint of a target's measurements: the recording's GPU (replay), or this machine's,
/// with the target's own profiler part: the tool that measures it (`profiler`, its version) and
/// the settings that change what it measures.
pub fn fingerprint_for(
    profiler: &dyn Profiler,
    versions: &Versions,
    target: &Target,
    gpu: Option<&dyn Gpu>,
) -> Fingerprint {
    let ncu = versions.ncu.as_deref().unwrap_or_default();
    let fp = if let Some(mut fp) = profiler.manifest().and_then(|m| m.fingerprint.clone()) {
        // The recording's GPU, but this target's profiler part: a manifest holds one
        // fingerprint, and targets may differ in profiler, clock and cache control.
        let ncu = if ncu.is_empty() || ncu == crate::gpu::fingerprint::UNKNOWN {
            // A manifest without `ncu_version`: its fingerprint's, when ncu measured it.
            if fp.profiler == crate::gpu::fingerprint::PROFILER_NCU {
                fp.ncu_version.clone()
            } else {
                String::new()
            }
        } else {
            ncu.to_owned()
        };
        let own = crate::gpu::fingerprint(None, 0, &ncu, &target.profiling, &target.clocks);
        fp.ncu_version = own.ncu_version;
        fp.profiler = own.profiler;
        fp.profiler_version = own.profiler_version;
        fp.clock_control = own.clock_control;
        fp.cache_control = own.cache_control;
        fp.clocks = own.clocks;
        fp
    } else {
        crate::gpu::fingerprint(gpu, 0, ncu, &target.profiling, &target.clocks)
    };
    if target.profiler == ProfilerKind::Nsys {
        fp.measured_by_nsys(versions.get(ProfilerKind::Nsys))
    } else {
        fp
    }
}

/// The commit being measured: `$GITHUB_SHA`, else `git rev-parse HEAD` in `dir` (best effort).
pub fn git_commit(dir: &std::path::Path) -> Option<String> {
    if let Ok(sha) = std::env::var("GITHUB_SHA")
        && !sha.trim().is_empty()
    {
        return Some(sha.trim().to_owned());
    }
    git_head(dir)
}

/// `git rev-parse HEAD` in `dir` (best effort; never `$GITHUB_SHA`: `ab` names its base tree
/// with it, and `$GITHUB_SHA` names the head).
pub fn git_head(dir: &std::path::Path) -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(dir)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let sha = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !sha.is_empty()).then_some(sha)
}

/// Add the derived metrics (`cgp__*`) of every target that asks for them, sample by sample from
/// the duration, and return the roofline points (from median durations).
pub fn add_derived(targets: &[&Target], samples: &mut SampleSet, gpu_name: &str) -> Vec<RooflinePoint> {
    let peaks = peaks_for(gpu_name);
    let mut points = Vec::new();
    for t in targets {
        let wants: Vec<&str> = t
            .metrics
            .iter()
            .map(|m| m.name.as_str())
            .filter(|n| n.starts_with(DERIVED_PREFIX))
            .collect();
        if t.flops.is_none() && t.bytes.is_none() {
            continue;
        }
        for size in &t.sizes {
            let flops = t
                .flops
                .as_deref()
                .and_then(|e| crate::spec::evaluate(e, size).ok());
            let bytes = t
                .bytes
                .as_deref()
                .and_then(|e| crate::spec::evaluate(e, size).ok());
            let durations: Vec<crate::samples::Series> = samples
                .series
                .values()
                .filter(|s| {
                    s.key.target == t.name
                        && s.key.size == size.key()
                        && s.key.metric == crate::plan::DURATION_METRIC
                })
                .cloned()
                .collect();
            for crate::samples::Series {
                key,
                values,
                reps,
                configs,
                ..
            } in durations
            {
                for (v, r) in values.iter().zip(&reps) {
                    for (name, value, unit) in crate::gpu::derive(flops, bytes, *v, peaks.as_ref()) {
                        if wants.contains(&name) {
                            let k = SeriesKey {
                                metric: name.to_owned(),
                                ..key.clone()
                            };
                            samples.push(&k, unit, value, *r);
                            // Derived from the durations: the same launches, the same configurations.
                            for c in &configs {
                                samples.note_config(&k, c);
                            }
                        }
                    }
                }
                let med = crate::baseline::median(&values);
                if let (Some(f), Some(b)) = (flops, bytes)
                    && let Some(p) =
                        crate::gpu::roofline_point(&t.name, &key.size, &key.kernel, f, b, med, peaks.as_ref())
                {
                    points.push(p);
                }
            }
        }
    }
    points
}

/// The statistical settings `check` judges with: the spec's `settings:`, the remaining fields at
/// their defaults. `examples/power.rs` simulates with the same.
pub fn stats_config(settings: &crate::spec::Settings) -> Config {
    Config {
        alpha: settings.alpha,
        confidence: settings.confidence,
        ..Config::default()
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
    mut recorder: Option<&mut Recorder>,
    mut watch: Option<&mut Watch<'_>>,
    opts: &CheckOptions<'_>,
    progress: &mut dyn crate::progress::Progress,
) -> Result<Results, Error> {
    let versions = Versions::of(profiler, targets)?;
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

    // Load baselines and check comparability before spending time on the GPU.
    // Each target's baseline with the file it came from (named in errors about its content).
    let mut baselines: BTreeMap<String, (BaselineFile, PathBuf)> = BTreeMap::new();
    let mut mismatch: Vec<FingerprintDiff> = Vec::new();
    let fingerprint = targets
        .first()
        .map(|t| fingerprint_for(&*profiler, &versions, t, opts.gpu))
        .unwrap_or_default();
    let stored = store.load_all()?;
    for t in targets {
        let fp = fingerprint_for(&*profiler, &versions, t, opts.gpu);
        let Some(b) = store.load(&fp.gpu_key(), &t.name)? else {
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
        baselines.insert(t.name.clone(), (b, store.path(&fp.gpu_key(), &t.name)));
    }

    let mut work = initial_work(targets, opts.shard.as_ref());
    // The SASS cache (docs/sass-cache.md): sizes whose every baseline kernel has the same
    // machine code now are not profiled.
    let unchanged = if opts.no_skip {
        BTreeSet::new()
    } else {
        let fps: BTreeMap<String, String> = targets
            .iter()
            .map(|t| {
                let fp = fingerprint_for(&*profiler, &versions, t, opts.gpu);
                (
                    t.name.clone(),
                    fp.stable_key(crate::gpu::fingerprint::DEFAULT_KEY_FIELDS),
                )
            })
            .collect();
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
    let mut next_rep: BTreeMap<(String, String), u32> = work
        .iter()
        .map(|w| ((w.target.name.clone(), w.size.key()), w.reps.1))
        .collect();
    let mut cfg = stats_config(&spec.settings);
    let mut multiple_testing = format!("holm alpha={}", cfg.alpha);
    if let Some(s) = opts.shard.as_ref().filter(|s| s.shard.n > 1) {
        // Bonferroni across shards, Holm within each: the merged run keeps its false-alarm
        // rate at alpha, as an unsharded run does (docs/github-actions.md).
        multiple_testing = format!(
            "holm alpha={} per shard (alpha {} / {} shards)",
            cfg.alpha / s.shard.n as f64,
            cfg.alpha,
            s.shard.n
        );
        cfg.alpha /= s.shard.n as f64;
    }
    // `explain: remeasure` (docs/why.md): these targets collect the explanatory counters only
    // when re-measured, or in the explain pass below.
    let explained: BTreeMap<String, Target> = targets
        .iter()
        .filter(|t| t.explain == Explain::Remeasure)
        .map(|t| (t.name.clone(), crate::plan::explaining(t)))
        .collect();
    let mut rounds: BTreeMap<(String, String), u32> = BTreeMap::new();
    let mut roofline;
    let mut last_round = false;
    let peaks_known = peaks_for(&fingerprint.gpu_name).is_some();
    let (rows, spec_errors) = loop {
        let mut samples = m.samples.clone();
        roofline = add_derived(targets, &mut samples, &fingerprint.gpu_name);
        let (mut rows, spec_errors) = judge(targets, &samples, &baselines, &m, &cfg, &rounds, peaks_known);
        if let Some(s) = &opts.shard {
            rows.retain(|r| s.contains(&r.target, &r.size));
        }
        for r in &mut rows {
            r.gpu.clone_from(&fingerprint.gpu_name);
        }
        if last_round {
            break (rows, spec_errors);
        }
        let doubtful: BTreeSet<(String, String)> = rows
            .iter()
            .filter(|r| crate::stats::remeasure::is_doubtful(r.verdict))
            .map(|r| (r.target.clone(), r.size.clone()))
            .collect();
        let more: Vec<Work<'_>> = remeasure(&work, &doubtful, &next_rep)
            .into_iter()
            .map(|w| Work {
                target: explained.get(&w.target.name).unwrap_or(w.target),
                ..w
            })
            .collect();
        if more.is_empty() {
            break (rows, spec_errors);
        }
        progress.note(&format!("re-measuring {} doubtful size(s)", more.len()));
        let extra = measure(
            profiler,
            &more,
            recorder.as_deref_mut(),
            watch.as_deref_mut(),
            true,
            progress,
        )?;
        let got_any = !extra.reps_done.is_empty();
        for w in &more {
            let id = (w.target.name.clone(), w.size.key());
            next_rep.insert(id.clone(), w.reps.1);
            if extra.reps_done.contains_key(&id) {
                *rounds.entry(id).or_default() += 1;
            }
        }
        m.samples.extend(extra.samples);
        m.errors.extend(extra.errors);
        for (k, v) in extra.cost_seconds {
            *m.cost_seconds.entry(k).or_default() += v;
        }
        // Nothing more to measure (the recording has no more repetitions, or they failed):
        // judge once more with what there is, then stop.
        last_round = !got_any;
    };

    explain_pass(
        &rows,
        &work,
        &explained,
        &next_rep,
        &mut m,
        profiler,
        recorder,
        watch.as_deref_mut(),
        progress,
    )?;
    let (mut rows, sass_skip) = skipped_rows(rows, targets, &unchanged, &baselines);
    add_why(&mut rows, &m.samples, &baselines);
    crate::missing::apply(
        &mut rows,
        &crate::missing::Scope {
            targets,
            allow_all: opts.allow_missing,
            skipped: &unchanged,
        },
    );
    let category_bars = crate::nsys::bars::category_bars(targets, &m.samples, &|k| {
        baselines
            .get(&k.target)
            .and_then(|b| b.0.entry_for(k))
            .map(|e| e.samples.clone())
    });
    let mut errors = m.errors;
    errors.extend(spec_errors);
    let verdict = crate::decide::run_verdict(&rows, &errors, !work.is_empty() || !unchanged.is_empty());
    let source = profiler.source();
    Ok(Results {
        schema_version: RESULTS_VERSION,
        verdict,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        spec_hash: spec.hash.clone(),
        spec_path: spec.path.display().to_string(),
        source,
        synthetic: profiler.manifest().is_some_and(|m| m.synthetic),
        fingerprint,
        fingerprint_mismatch: (!mismatch.is_empty()).then_some(mismatch),
        shard: opts.shard.as_ref().map(crate::plan::Selection::label),
        git_commit: git_commit(&spec.base_dir()),
        date: rfc3339_utc(SystemTime::now()),
        fail_on: opts.fail_on,
        multiple_testing,
        rows,
        errors,
        health: watch.map(|w| w.sampler.summary()).unwrap_or_default(),
        cost_seconds: m.cost_seconds,
        roofline,
        sass_skip,
        category_bars,
    })
}

/// The "why" of every timing row that regressed, improved or is doubtful: the explanatory
/// counters measured for the same target, size and kernel, compared by [`crate::why::explain`].
/// They are the spec's gated metrics that explain time (in the rows) and the counters
/// `explain: true` collects without gating them (in the run's samples and the baseline's
/// `counters`).
fn add_why(rows: &mut [Row], samples: &SampleSet, baselines: &BTreeMap<String, (BaselineFile, PathBuf)>) {
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
            let counters: Vec<crate::why::Counter<'_>> = rows
                .iter()
                .filter(|o| {
                    o.target == r.target
                        && o.size == r.size
                        && o.kernel == r.kernel
                        && o.gpu == r.gpu
                        && crate::why::is_explanatory(&o.metric)
                })
                .filter_map(|o| {
                    Some(crate::why::Counter {
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
                    c.size == r.size && c.kernel == r.kernel && !gated.contains(c.metric.as_str())
                }) {
                    let key = SeriesKey {
                        target: r.target.clone(),
                        size: r.size.clone(),
                        kernel: r.kernel.clone(),
                        metric: c.metric.clone(),
                    };
                    if let Some(now) = samples.series.get(&key) {
                        counters.push(crate::why::Counter {
                            metric: &c.metric,
                            baseline: &c.samples,
                            candidate: &now.values,
                        });
                    }
                }
            }
            crate::why::explain(&counters)
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
    progress: &mut dyn crate::progress::Progress,
) -> Result<(), Error> {
    if explained.is_empty() {
        return Ok(());
    }
    let has_counters = |target: &str, size: &str| {
        m.samples.series.keys().any(|k| {
            k.target == target
                && k.size == size
                && crate::why::COLLECT.contains(&k.metric.as_str())
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
        if crate::why::is_explanatory(&key.metric) && !gated {
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
    baselines: &BTreeMap<String, (BaselineFile, PathBuf)>,
    fp_keys: &BTreeMap<String, String>,
    progress: &mut dyn crate::progress::Progress,
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
            .or_insert_with(|| crate::sass::functions_of(w.target, &spec.base_dir()));
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
        let now = crate::sass::hashes(f, w.target, w.size, key, &kernels);
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
    baselines: &BTreeMap<String, (BaselineFile, PathBuf)>,
) -> (Vec<Row>, Option<crate::results::SassSkip>) {
    if unchanged.is_empty() {
        return (rows, None);
    }
    let mut kernels: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut saved: Option<f64> = None;
    let mut rows: Vec<Row> = rows
        .into_iter()
        .map(|mut r| {
            if r.verdict == RowVerdict::Missing && unchanged.contains(&(r.target.clone(), r.size.clone())) {
                r.verdict = RowVerdict::Pass;
                crate::sass::SAME_SASS_REASON.clone_into(&mut r.reason);
                r.skipped = Some(crate::sass::SAME_SASS.to_owned());
                let first = kernels.insert((r.target.clone(), r.size.clone(), r.kernel.clone()));
                if first && let Some((b, _)) = baselines.get(&r.target) {
                    let reps = targets
                        .iter()
                        .find(|t| t.name == r.target)
                        .map_or(1, |t| t.repetitions);
                    if let Some(e) = b.entry(&r.size, &r.kernel, crate::plan::DURATION_METRIC) {
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
    let skip = crate::results::SassSkip {
        kernels: kernels.len(),
        sizes: unchanged.len(),
        gpu_time_saved_ns: saved,
    };
    (rows, Some(skip))
}

/// Judge every measured row against its baseline, plus `missing` rows for baseline entries
/// that were not measured. Rows are ordered regressions first, then by key. Also returns the
/// spec mistakes that only the measurement revealed (a `min_effect` in another unit than the
/// metric's), as invalid-input errors.
fn judge(
    targets: &[&Target],
    samples: &SampleSet,
    baselines: &BTreeMap<String, (BaselineFile, PathBuf)>,
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
    let mut keyed: Vec<(SeriesKey, &MetricSpec, Option<&crate::baseline::Entry>)> = Vec::new();
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
        })
        .collect();
    let judgements = judge_all(&comparisons, cfg);
    let mut rows: Vec<Row> = keyed
        .iter()
        .zip(judgements)
        .map(|((key, ms, entry), j)| Row {
            target: key.target.clone(),
            size: key.size.clone(),
            kernel: key.kernel.clone(),
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
        .collect();
    let mut spec_errors: Vec<RunError> = Vec::new();
    // Samples are compared as numbers: a baseline in another unit (`us` edited into a file of
    // `ns`) would be compared 1000x off. Units are never converted here: the row is an error,
    // and the damaged baseline is invalid input (exit 2), named with its metric, kernel and file.
    for (row, (key, _, entry)) in rows.iter_mut().zip(&keyed) {
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
                row.metric, row.kernel, row.target, row.size, e.unit, row.unit
            );
            spec_errors.push(RunError {
                target: row.target.clone(),
                size: Some(row.size.clone()),
                kind: ErrorKind::InvalidInput,
                message,
            });
        }
    }
    // `validate` catches the `min_effect`s whose metric's unit is known from its name; this
    // catches the rest, once the unit is measured.
    for (row, (_, ms, _)) in rows.iter_mut().zip(&keyed) {
        min_effect_unit(row, ms, &mut spec_errors);
    }
    // Every spec metric of every measured size must have been judged: a metric that no kernel
    // reported (or a derived metric that cannot be computed on this GPU) is an error, never a
    // silent pass.
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
            let mut row = Row::bare(target, size, "-", &ms.name, "", RowVerdict::Error, why);
            row.threshold = Some(RowThreshold::of(&ms.threshold));
            row.direction = Some(ms.threshold.direction);
            rows.push(row);
        }
    }
    // Baseline entries of the selected targets that were not measured (and did not fail).
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
                &key.kernel,
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
    rows.sort_by(|a, b| {
        (a.verdict, &a.target, &a.size, &a.kernel, &a.metric)
            .cmp(&(b.verdict, &b.target, &b.size, &b.kernel, &b.metric))
    });
    (rows, spec_errors)
}

/// The launch configuration change of a row: the kernel ran with other grid/block sizes than in
/// the baseline. Only when both sides say which (a baseline written before configurations were
/// recorded has none): the series is still compared, and the reports say what changed.
fn config_change(
    baseline: Option<&[String]>,
    candidate: Option<&crate::samples::Series>,
) -> Option<crate::results::ConfigChange> {
    let (b, c) = (baseline?, &candidate?.configs);
    (!b.is_empty() && !c.is_empty() && b != c.as_slice()).then(|| crate::results::ConfigChange {
        baseline: b.to_vec(),
        candidate: c.clone(),
    })
}

/// A `min_effect` in another unit than the metric's cannot be compared (`1MB` on a duration):
/// the row becomes an error rather than a silently meaningless verdict, and the spec mistake is
/// added to `errors` as invalid input (exit 2), once per target and metric. `check` and `ab`
/// both call this on every judged row.
pub fn min_effect_unit(row: &mut Row, ms: &MetricSpec, errors: &mut Vec<RunError>) {
    let Some(q) = &ms.threshold.min_effect else {
        return;
    };
    if q.unit.is_empty() || q.unit == row.unit {
        return;
    }
    row.verdict = RowVerdict::Error;
    row.reason = format!(
        "min_effect {q} is in `{}` but the metric is measured in `{}`; give min_effect in the metric's unit",
        q.unit, row.unit
    );
    let message = format!(
        "the spec's min_effect {q} of `{}` in target `{}` is in `{}`, but ncu measures the metric in `{}`; give min_effect in `{}`",
        row.metric, row.target, q.unit, row.unit, row.unit
    );
    if !errors.iter().any(|e| e.message == message) {
        errors.push(RunError {
            target: row.target.clone(),
            size: None,
            kind: ErrorKind::InvalidInput,
            message,
        });
    }
}

/// The exit code of a finished check (see [`crate::decide::exit_code`]).
pub fn exit_code(results: &Results, fail_on: FailOn) -> i32 {
    crate::decide::exit_code(results.verdict, &results.errors, fail_on)
}
