//! Simulated runs of the real engine: a [`SimProfiler`] is a [`Profiler`] whose processes are
//! drawn from a model (`examples/power.rs`) or resampled from real pools, written as ncu's raw
//! CSV page, so `check` ([`simulate_check`]: `run::check::run_check`) and `ab`
//! ([`simulate_ab`]: `run::ab::run_ab`) run exactly as they do on a GPU: the same work list and
//! re-measure loop (`run::engine::until_decided`), the same reading of the profiler's output
//! (`profile::extract` and the warm-up drop of `run::measure`), the same
//! baselines read from a store, the same statistics and the same alpha spending. Only the launch
//! durations come from a model instead of a GPU. [`write_baseline`] measures a baseline through
//! the same profiler and stores it as `baseline update` does, with a history of earlier medians.

use std::path::{Path, PathBuf};

use crate::baseline::{Generation, Store, UpdateMeta};
use crate::foundation::error::Error;
use crate::outcome::results::{FailOn, Results};
use crate::profile::{Capture, Job, Measurer, Measuring, ProfileError, Profiler};
use crate::run::progress::NoProgress;
use crate::spec::{Spec, Target};

/// The profiler version a simulation reports (its baselines carry it in their fingerprint).
pub const SIM_VERSION: &str = "simulation";

/// The metric a simulated process reports for every launch.
pub const SIM_METRIC: &str = "gpu__time_duration.sum";

/// Launch durations (ns) of one process of a job.
pub type Draw<'d> = dyn FnMut(Job<'_>) -> Vec<f64> + 'd;

/// A profiler whose processes come from `draw`: each capture is one process's launches of the
/// kernel `k` (the target's name is the kernel's), as ncu's raw CSV page with
/// `gpu__time_duration.sum` in whole nanoseconds (ncu prints them so).
pub struct SimProfiler<'d> {
    draw: Box<Draw<'d>>,
}

impl<'d> SimProfiler<'d> {
    /// A profiler drawing each job's launches from `draw`.
    pub fn new(draw: impl FnMut(Job<'_>) -> Vec<f64> + 'd) -> Self {
        Self { draw: Box::new(draw) }
    }
}

impl Profiler for SimProfiler<'_> {
    fn name(&self) -> &'static str {
        "simulation"
    }

    fn version(&mut self) -> Result<String, ProfileError> {
        Ok(SIM_VERSION.to_owned())
    }

    fn capture(&mut self, job: Job<'_>) -> Result<Capture, ProfileError> {
        let launches = (self.draw)(job);
        Ok(Capture {
            output: crate::profile::Output::Text(ncu_csv(&job.target.name, &launches)),
            origin: PathBuf::from("simulation"),
            argv: None,
            wall_seconds: None,
            exit_code: Some(0),
            output_tail: String::new(),
            kernels_seen: None,
            tool_version: None,
        })
    }
}

/// One process's launches as ncu's `--csv --page raw --print-units base` log: the `==PROF==`
/// lines, the header, the units row and one row per launch, durations rounded to whole ns.
pub fn ncu_csv(kernel: &str, durations: &[f64]) -> String {
    let mut out = String::from("==PROF== Connected to process 1 (simulation)\n");
    for i in 0..durations.len() {
        out.push_str(&format!(
            "==PROF== Profiling \"{kernel}\" - {i}: 0%....50%....100% - 1 pass\n"
        ));
    }
    out.push_str("==PROF== Disconnected from process 1\n");
    out.push_str("\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"gpu__time_duration.sum\"\n");
    out.push_str("\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"ns\"\n");
    for (i, d) in durations.iter().enumerate() {
        out.push_str(&format!(
            "\"{i}\",\"1\",\"simulation\",\"localhost\",\"{kernel}\",\"1\",\"7\",\"(256, 1, 1)\",\"(1024, 1, 1)\",\"0\",\"9.0\",\"{}\"\n",
            d.round().max(1.0)
        ));
    }
    out
}

/// Measure `spec`'s baseline through `profiler` (each size's `baseline_repetitions` processes,
/// as `baseline update` plans them, read by `run::measure`) and store it in `dir` as `baseline
/// update` does (`baseline::Store::update`), with `history(size_key)` as the medians of the
/// earlier generations (oldest first), each from its own job.
///
/// # Errors
/// A failed run, or a store that cannot be written.
pub fn write_baseline(
    spec: &Spec,
    dir: &Path,
    profiler: &mut dyn Profiler,
    history: &dyn Fn(&str) -> Vec<f64>,
) -> Result<(), Error> {
    store_baseline(spec, dir, &mut Measuring::new(profiler), history)
}

/// [`write_baseline`] through any measurer (the engine's unit tests store a scripted one's).
///
/// # Errors
/// As [`write_baseline`].
pub(crate) fn store_baseline(
    spec: &Spec,
    dir: &Path,
    measurer: &mut dyn Measurer,
    history: &dyn Fn(&str) -> Vec<f64>,
) -> Result<(), Error> {
    let targets: Vec<&Target> = spec.targets.iter().collect();
    let origin = measurer.open(&targets)?;
    let work = crate::plan::baseline_work(&targets, None);
    let mut tools = crate::run::measure::Instruments {
        measurer,
        recorder: None,
        watch: None,
        progress: &mut NoProgress,
    };
    let m = crate::run::measure::measure(&mut tools, &work, false)?;
    if let Some(e) = m.errors.first() {
        return Err(Error::Usage(format!("simulated baseline: {}", e.message)));
    }
    let store = Store::new(dir);
    for t in &targets {
        let fp = crate::run::engine::fingerprint_for(&origin, t, None);
        let series: Vec<&crate::measured::samples::Series> = m
            .samples
            .series
            .values()
            .filter(|s| s.key.target == t.name)
            .collect();
        let meta = UpdateMeta::now(None, spec.hash.clone(), spec.settings.history);
        store.update(&t.name, &fp, &series, &meta)?;
        let Some(mut file) = store.load(&fp.gpu_key(), &t.name)? else {
            continue;
        };
        for e in &mut file.entries {
            let current = e.history.pop();
            e.history = history(&e.size)
                .into_iter()
                .map(|median| Generation {
                    date: meta.date.clone(),
                    commit: None,
                    median,
                    n: e.samples.len(),
                })
                .chain(current)
                .collect();
        }
        crate::foundation::fsutil::write_atomic(
            &store.path(&fp.gpu_key(), &t.name),
            crate::baseline::render(&file).as_bytes(),
        )?;
    }
    Ok(())
}

/// `check` on `profiler`'s processes against the baselines in `dir`: `run::check::run_check`
/// with the defaults of the command line (`--no-skip`: a simulation has no machine code).
///
/// # Errors
/// As `run_check`.
pub fn simulate_check(spec: &Spec, dir: &Path, profiler: &mut dyn Profiler) -> Result<Results, Error> {
    let targets: Vec<&Target> = spec.targets.iter().collect();
    let opts = crate::run::check::CheckOptions {
        baselines: dir.to_path_buf(),
        fail_on: FailOn::default(),
        allow_fingerprint_mismatch: false,
        gpu: None,
        gpu_note: None,
        shard: None,
        no_skip: true,
        allow_missing: false,
        allow_no_baselines: false,
        // A simulation measures no commit of a CI job.
        ci_commit: None,
    };
    let mut measurer = Measuring::new(profiler);
    crate::run::check::run_check(spec, &targets, &mut measurer, None, None, &opts, &mut NoProgress)
}

/// `ab` of `base`'s processes against `head`'s: `run::ab::run_ab` with both trees' targets the
/// spec's (ABBA pairs, the paired test, the same re-measure loop as `ab`).
///
/// # Errors
/// As `run_ab`.
pub fn simulate_ab(spec: &Spec, base: &mut dyn Profiler, head: &mut dyn Profiler) -> Result<Results, Error> {
    let targets: Vec<&Target> = spec.targets.iter().collect();
    let (mut base, mut head) = (Measuring::new(base), Measuring::new(head));
    let mut sides = crate::run::ab::Sides {
        base: &mut base,
        head: &mut head,
        base_targets: &targets,
        head_targets: &targets,
    };
    let opts = crate::run::ab::AbOptions {
        fail_on: FailOn::default(),
        allow_missing: false,
        gpu: None,
        manifest: None,
        // A simulation measures no commit of a CI job.
        ci_commit: None,
    };
    crate::run::ab::run_ab(spec, &mut sides, None, None, &opts, &mut NoProgress).map(|r| r.results)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::results::RowVerdict;
    use crate::stats::rng::{Rng, seed_for};

    /// SYNTHETIC: three sizes of one kernel, 30 launches per process; size 0 is 10 % slower in
    /// the candidate (decided at the first look), size 1 exactly at the 3 % threshold (measured
    /// again by the engine's loop, never a regression here), size 2 unchanged (a pass at once).
    /// Everything between the draws and the verdicts is `check`'s own code.
    #[test]
    fn check_through_the_profiler_re_measures_only_doubtful_rows() {
        let spec = crate::spec::load_str(
            "version: 1\ntargets:\n  - name: k\n    command: [./k]\n    repetitions: 1\n    max_repetitions: 3\n    baseline_repetitions: 30\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n    sizes:\n      - {i: 0}\n      - {i: 1}\n      - {i: 2}\n",
            Path::new("sim.yaml"),
        )
        .unwrap();
        let process = |rng: &mut Rng, shift: f64| -> Vec<f64> {
            let off = 0.002 * rng.normal();
            (0..31)
                .map(|l| {
                    let warm = if l == 0 { 1.05 } else { 1.0 };
                    100_000.0 * warm * (shift + off + 0.005 * rng.normal()).exp()
                })
                .collect()
        };
        let index = |job: &Job<'_>| {
            job.size
                .key()
                .trim_start_matches("i=")
                .parse::<usize>()
                .unwrap_or(0)
        };
        let dir = tempfile::tempdir().unwrap();
        let mut rng = Rng::new(seed_for(35, "baseline"));
        let mut base = SimProfiler::new(|_| process(&mut rng, 0.0));
        write_baseline(&spec, dir.path(), &mut base, &|_| Vec::new()).unwrap();
        let shifts = [0.10_f64.ln_1p(), 0.03_f64.ln_1p(), 0.0];
        let mut asked = [0u32; 3];
        let mut rng = Rng::new(seed_for(35, "candidate"));
        let mut cand = SimProfiler::new(|job| {
            let i = index(&job);
            asked[i] += 1;
            process(&mut rng, shifts[i])
        });
        let r = simulate_check(&spec, dir.path(), &mut cand).unwrap();
        drop(cand);
        let verdict = |i: usize| {
            r.rows
                .iter()
                .find(|x| x.key.size == format!("i={i}") && x.key.metric == SIM_METRIC)
                .map(|x| x.verdict())
        };
        assert_eq!(verdict(0), Some(RowVerdict::Regression), "{:?}", r.rows);
        assert_ne!(verdict(1), Some(RowVerdict::Regression));
        assert_eq!(verdict(2), Some(RowVerdict::Pass));
        assert_eq!((asked[0], asked[2]), (1, 1));
        // The row at the threshold was doubtful at the first look and measured again.
        assert!(asked[1] > 1, "{asked:?}");
        if verdict(1) == Some(RowVerdict::Inconclusive) {
            assert_eq!(asked[1], 3, "an inconclusive row ends at max_repetitions");
        }
    }
}
