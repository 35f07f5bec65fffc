//! The engine shared by `check`, `ab` and the simulations (`calibrate`, `examples/power.rs`):
//! what a run measures on (the fingerprint, the commit), the derived metrics, the statistical
//! settings, the row checks every judged row gets, the re-measure loop ([`until_decided`]) and the
//! results every run assembles ([`Assembly`]). `check` and `ab` differ only in where the
//! reference samples come from: a stored baseline, or the base tree's paired runs.

use crate::measured::samples::TargetSize;
use std::collections::{BTreeMap, BTreeSet};

use crate::foundation::error::Error;
use crate::gpu::fingerprint::Fingerprint;
use crate::gpu::{Gpu, peaks_for};
use crate::measured::samples::{SampleSet, SeriesKey};
use crate::outcome::results::{ErrorKind, OwnedRowKey, RooflinePoint, Row, RowVerdict, RunError};
use crate::profile::Provenance;
use crate::spec::{DERIVED_PREFIX, MetricSpec, Target};

/// The fingerprint of a target's measurements: the recording's GPU (replay), or this machine's,
/// with the target's own profiler part: the tool that measures it (`profiler`, its version) and
/// the settings that change what it measures. A harness target's GPU is the device its own file
/// names (`Provenance::devices`, read after the measurer's probe), whatever NVML says.
pub fn fingerprint_for(run: &Provenance, target: &Target, gpu: Option<&dyn Gpu>) -> Fingerprint {
    let ncu = run.versions.ncu().unwrap_or_default();
    let fp = if let Some(mut fp) = run.recorded.clone() {
        // The recording's GPU, but this target's profiler part: a manifest holds one
        // fingerprint, and targets may differ in profiler, clock and cache control.
        let ncu = if ncu.is_empty() || ncu == crate::gpu::fingerprint::UNKNOWN {
            // A manifest without `ncu_version`: its fingerprint's, when ncu measured it.
            if fp.profiler.is_nsight_compute() {
                fp.ncu_version.to_string()
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
    let mut fp = crate::profile::backend_of(target).fingerprint(fp, run.versions.get(target.profiler));
    // A harness target's device is the one its own file names (docs/harnesses.md); NVML, where
    // there is one, adds the rest.
    if let Some(device) = run.device(target) {
        fp.gpu_name = device.trim().into();
    }
    fp
}

/// The commit being measured: the one the CI names (`ci_commit`, `$GITHUB_SHA` as the command
/// layer read it; the engine reads no environment), else `git rev-parse HEAD` in `dir` (best
/// effort).
pub fn git_commit(ci_commit: Option<&str>, dir: &std::path::Path) -> Option<String> {
    match ci_commit.map(str::trim).filter(|s| !s.is_empty()) {
        Some(sha) => Some(sha.to_owned()),
        None => git_head(dir),
    }
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
            let durations: Vec<crate::measured::samples::Series> = samples
                .series
                .values()
                .filter(|s| {
                    s.key.target == t.name
                        && s.key.size == size.key()
                        && s.key.metric == crate::plan::DURATION_METRIC
                })
                .cloned()
                .collect();
            for crate::measured::samples::Series {
                key,
                samples: launches,
                configs,
                ..
            } in durations
            {
                for x in &launches {
                    for (name, value, unit) in crate::gpu::derive(flops, bytes, x.value, peaks.as_ref()) {
                        if wants.contains(&name) {
                            let k = SeriesKey {
                                metric: name.to_owned(),
                                ..key.clone()
                            };
                            samples.push(&k, unit, value, x.rep);
                            // Derived from the durations: the same launches, the same configurations.
                            for c in &configs {
                                samples.note_config(&k, c);
                            }
                        }
                    }
                }
                let values: Vec<f64> = launches.iter().map(|x| x.value).collect();
                let med = crate::stats::median(&values).unwrap_or(f64::NAN);
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

/// The statistical settings `check` judges with (in the spec's crate, so `calibrate` uses them too).
pub use crate::spec::stats_config;

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
    row.set_verdict(RowVerdict::Error);
    row.reason = format!(
        "min_effect {q} is in `{}` but the metric is measured in `{}`; give min_effect in the metric's unit",
        q.unit, row.unit
    );
    let message = format!(
        "the spec's min_effect {q} of `{}` in target `{}` is in `{}`, but ncu measures the metric in `{}`; give min_effect in `{}`",
        row.key.metric, row.key.target, q.unit, row.unit, row.unit
    );
    if !errors.iter().any(|e| e.message == message) {
        errors.push(RunError {
            target: row.key.target.clone(),
            size: None,
            kind: ErrorKind::InvalidInput,
            message,
        });
    }
}

/// Re-measurement rounds per (target, size key).
pub type Rounds = std::collections::BTreeMap<TargetSize, u32>;

/// A run inside the re-measure loop: how it judges what it has measured, and how it measures more
/// of the doubtful target x sizes. `check` (against a stored baseline) and `ab` (against the base
/// tree's paired runs) each implement it; [`until_decided`] is the one loop.
pub trait Remeasure {
    /// Judge every row measured so far; also the spec mistakes only the measurement revealed.
    fn judge(&mut self, rounds: &Rounds) -> (Vec<Row>, Vec<RunError>);
    /// Measure more of the `doubtful` (target, size) pairs. `Ok(None)`: there is nothing more
    /// to measure (every one is at its `max_repetitions`); `Ok(Some(grew))`: those that got more
    /// data (empty when none could: the recording has no more, or the runs failed).
    ///
    /// # Errors
    /// Recorder failures.
    fn measure_more(
        &mut self,
        doubtful: &BTreeSet<TargetSize>,
    ) -> Result<Option<BTreeSet<TargetSize>>, Error>;
    /// Stop without measuring more (e.g. ncu is missing: every run would fail the same way).
    fn stop(&self) -> bool {
        false
    }
}

/// The re-measure loop: judge; measure the doubtful rows' sizes more (up to their
/// `max_repetitions`); judge again, until nothing is doubtful or nothing more can be measured.
/// When the last round got no data, the rows are judged once more with what there is. Returns
/// the last judgement and the rounds each size took.
///
/// # Errors
/// What [`Remeasure::measure_more`] returns.
pub fn until_decided(run: &mut dyn Remeasure) -> Result<(Vec<Row>, Vec<RunError>, Rounds), Error> {
    let mut rounds = Rounds::new();
    let mut decided = Decided::new();
    let mut last_round = false;
    loop {
        let (mut rows, errors) = run.judge(&rounds);
        // A row keeps the verdict of the first look that decided it.
        keep_decided(&mut rows, &mut decided);
        if last_round || run.stop() {
            return Ok((rows, errors, rounds));
        }
        let doubtful: BTreeSet<TargetSize> = rows
            .iter()
            .filter(|r| crate::stats::remeasure::is_doubtful(r.verdict()))
            .map(|r| TargetSize::new(&r.key.target, &r.key.size))
            .collect();
        let Some(grew) = run.measure_more(&doubtful)? else {
            return Ok((rows, errors, rounds));
        };
        for id in &grew {
            *rounds.entry(id.clone()).or_default() += 1;
        }
        // Nothing more came (the recording has no more repetitions, or they failed): judge
        // once more with what there is, then stop.
        last_round = grew.is_empty();
    }
}

/// Rows by identity ([`OwnedRowKey`]: one run measures one GPU), as [`keep_decided`] remembers them.
pub type Decided = BTreeMap<OwnedRowKey, Row>;

/// Sequential stopping (docs/statistics.md, 2.6): a row decided at a look (regression, pass,
/// improvement) keeps that verdict; later looks (re-measurement of the doubtful rows) change
/// only the rows that were still inconclusive. Each look spends its share of alpha
/// (`Config::looks`), so the first decision stands on its own.
pub fn keep_decided(rows: &mut [Row], decided: &mut Decided) {
    for r in rows {
        let id = r.key.clone();
        if let Some(first) = decided.get(&id) {
            r.clone_from(first);
        } else if crate::stats::remeasure::is_decided(r.verdict()) {
            decided.insert(id, r.clone());
        }
    }
}

/// What every run's results carry besides its rows and errors.
pub struct Assembly<'a> {
    pub spec: &'a crate::spec::Spec,
    /// Where samples came from: `ncu`, `replay:<dir>`, `ab: base ... / head ...`.
    pub source: String,
    pub synthetic: bool,
    pub fingerprint: Fingerprint,
    pub git_commit: Option<String>,
    pub fail_on: crate::outcome::results::FailOn,
    pub multiple_testing: String,
    /// The run had something to measure: judging nothing is then an error.
    pub had_work: bool,
    pub health: crate::outcome::results::Health,
    pub cost_seconds: std::collections::BTreeMap<String, f64>,
}

/// Assemble a run's results: the verdict is [`crate::outcome::decide::run_verdict`]'s; the fields only
/// `check` fills (fingerprint mismatch, shard, roofline, SASS skip, category bars) are empty.
pub fn assemble(a: Assembly<'_>, rows: Vec<Row>, errors: Vec<RunError>) -> crate::outcome::results::Results {
    crate::outcome::results::Results {
        schema_version: crate::outcome::results::RESULTS_VERSION,
        verdict: crate::outcome::decide::run_verdict(&rows, &errors, a.had_work),
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        spec_hash: a.spec.hash.clone(),
        spec_path: a.spec.path.display().to_string(),
        source: a.source.into(),
        // A recording that says so, or the stand-in GPU of `CGP_GATE_STAND_IN_GPU`.
        synthetic: a.synthetic || a.fingerprint.synthetic,
        fingerprint: a.fingerprint,
        fingerprint_mismatch: Vec::new(),
        shard: None,
        git_commit: a.git_commit,
        date: crate::baseline::rfc3339_utc(std::time::SystemTime::now()),
        fail_on: a.fail_on,
        multiple_testing: a.multiple_testing,
        rows,
        errors,
        health: a.health,
        cost_seconds: a.cost_seconds,
        roofline: Vec::new(),
        sass_skip: None,
        why_cost: crate::outcome::results::WhyCost::default(),
        category_bars: Vec::new(),
        category_bars_gated_only: false,
        confirmation: crate::outcome::results::RunConfirmation::default(),
        caveats: Vec::new(),
    }
}

/// Rows ordered as every report lists them: by verdict (regressions first), then by key.
pub fn sort_rows(rows: &mut [Row]) {
    rows.sort_by(|a, b| {
        (
            a.verdict(),
            &a.key.target,
            &a.key.size,
            &a.key.kernel,
            &a.key.metric,
        )
            .cmp(&(
                b.verdict(),
                &b.key.target,
                &b.key.size,
                &b.key.kernel,
                &b.key.metric,
            ))
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_commit_is_the_one_handed_in_else_git_head() {
        let not_a_repo = tempfile::tempdir().unwrap();
        let dir = not_a_repo.path();
        assert_eq!(
            super::git_commit(Some(" abc123\n"), dir).as_deref(),
            Some("abc123")
        );
        // An empty value is none: the folder's HEAD, and a folder outside git has none.
        assert_eq!(super::git_commit(Some("  "), dir), None);
        assert_eq!(super::git_commit(None, dir), None);
        // This repository's own HEAD when nothing is handed in (where git is installed).
        let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        if let Some(head) = super::git_head(here) {
            assert_eq!(super::git_commit(None, here), Some(head));
        }
    }
}
