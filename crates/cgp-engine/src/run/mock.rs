//! SYNTHETIC: a scripted [`Measurer`] for the engine's unit tests (hyperfine's `MockExecutor`):
//! each call of [`Measurer::measure`] does what the test's script says for that job and attempt
//! (launch durations, a whole sample set, a failure of any [`FailureKind`] at the capture or at
//! its reading, a kernel filter that selected none of the kernels that ran), and every call is
//! logged in order. A recording's repetitions, the busy-counter delays and what the run measures
//! with ([`Provenance`]: versions, source, SYNTHETIC flag, a harness's device) are set per mock.
//! Everything between the script and the results is the engine's own code: the measurement
//! loop, the retries, the throttle re-runs, the re-measure loop, the statistics and `decide`.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

use crate::foundation::error::Error;
use crate::measured::samples::{SampleSet, SeriesKey};
use crate::outcome::results::{FailOn, Results};
use crate::profile::{
    Capture, FailureKind, Job, Measurer, Output, ProfileError, Provenance, Taken, job_context,
};
use crate::run::progress::Progress;
use crate::spec::{Spec, Target};
use crate::stats::rng::Rng;

/// The metric every scripted launch reports (a duration in ns).
pub(crate) const METRIC: &str = "gpu__time_duration.sum";

/// What one call of [`Measurer::measure`] does.
pub(crate) enum Step {
    /// The run's launch durations (ns) of the target's kernel (named as the target).
    Launches(Vec<f64>),
    /// A whole sample set, as a capture was read into.
    Samples(SampleSet),
    /// The capture fails with this kind (the program failed, timed out, the tool is missing).
    Fails(FailureKind),
    /// The capture fails with this kind and message (what the program wrote, quoted).
    FailsWith(FailureKind, String),
    /// The capture is taken, but reading it fails with this kind (ncu's log says the counters
    /// are busy, the output is damaged).
    Unreadable(FailureKind),
    /// The capture is taken; the target's kernel filter selected none of these kernels.
    Unselected(Vec<String>),
}

/// A script: what to do for a job at its `attempt`-th call (0 first; a retry or a throttle
/// re-run of the same repetition is the next attempt).
pub(crate) type Script<'s> = Box<dyn FnMut(Job<'_>, u32) -> Step + 's>;

/// The scripted measurer.
pub(crate) struct Mock<'s> {
    script: Script<'s>,
    /// Prefix of this mock's log lines (`B`, `H` for the two trees of `ab`).
    side: &'static str,
    log: Rc<RefCell<Vec<String>>>,
    attempts: BTreeMap<(String, String, u32), u32>,
    /// A recording of this many repetitions per size (`None`: live, every repetition).
    recorded: Option<u32>,
    delays: Vec<Duration>,
    origin: Provenance,
    wall_seconds: Option<f64>,
    /// How often the engine opened it.
    pub(crate) opened: u32,
}

impl<'s> Mock<'s> {
    pub(crate) fn new(script: impl FnMut(Job<'_>, u32) -> Step + 's) -> Self {
        Self {
            script: Box::new(script),
            side: "",
            log: Rc::default(),
            attempts: BTreeMap::new(),
            recorded: None,
            delays: Vec::new(),
            origin: Provenance {
                source: "mock".to_owned(),
                ..Provenance::default()
            },
            wall_seconds: Some(0.25),
            opened: 0,
        }
    }

    /// One tree of an `ab` run: its log lines start with `side`, in a log shared with the other.
    pub(crate) fn side(mut self, side: &'static str, log: &Rc<RefCell<Vec<String>>>) -> Self {
        self.side = side;
        self.log = Rc::clone(log);
        self
    }

    /// A recording of `reps` repetitions per size.
    pub(crate) fn recording(mut self, reps: u32) -> Self {
        self.recorded = Some(reps);
        self
    }

    /// The busy-counter retry delays, in milliseconds.
    pub(crate) fn delays(mut self, ms: &[u64]) -> Self {
        self.delays = ms.iter().map(|m| Duration::from_millis(*m)).collect();
        self
    }

    /// What the run measures with.
    pub(crate) fn origin(mut self, set: impl FnOnce(&mut Provenance)) -> Self {
        set(&mut self.origin);
        self
    }

    /// Every call so far, in order: `<side><target>[<size>]#<rep>`.
    pub(crate) fn log(&self) -> Vec<String> {
        self.log.borrow().clone()
    }

    /// The repetitions measured of `target[size]`, in order (retries and re-runs repeat theirs).
    pub(crate) fn reps_of(&self, target: &str, size: &str) -> Vec<u32> {
        let prefix = format!("{}{target}[{size}]#", self.side);
        self.log()
            .iter()
            .filter_map(|l| l.strip_prefix(&prefix)?.parse().ok())
            .collect()
    }
}

impl Measurer for Mock<'_> {
    fn open(&mut self, targets: &[&Target]) -> Result<Provenance, ProfileError> {
        self.opened += 1;
        let mut origin = self.origin.clone();
        for t in targets {
            if origin.versions.version(t.profiler).is_none() {
                origin.versions.set(t.profiler, Some("mock-1.0".to_owned()));
            }
        }
        Ok(origin)
    }

    fn can_serve(&self, job: Job<'_>) -> bool {
        self.recorded.is_none_or(|n| job.rep < n)
    }

    fn measure(&mut self, job: Job<'_>) -> Result<Taken, ProfileError> {
        let size = job.size.key();
        self.log
            .borrow_mut()
            .push(format!("{}{}[{size}]#{}", self.side, job.target.name, job.rep));
        let at = self
            .attempts
            .entry((job.target.name.clone(), size, job.rep))
            .or_default();
        let attempt = *at;
        *at += 1;
        let context = job_context(job);
        let capture = Capture {
            output: Output::Text(format!("mock capture of {context}, attempt {attempt}")),
            origin: "mock".into(),
            wall_seconds: self.wall_seconds,
            ..Capture::default()
        };
        let failed =
            |kind: FailureKind| ProfileError::new(kind, &context, format!("scripted {}", kind.as_str()));
        let samples = match (self.script)(job, attempt) {
            Step::Launches(values) => Ok(launches(job, &values)),
            Step::Samples(s) => Ok(s),
            Step::Fails(kind) => return Err(failed(kind)),
            Step::FailsWith(kind, message) => return Err(ProfileError::new(kind, &context, message)),
            Step::Unreadable(kind) => Err(failed(kind)),
            Step::Unselected(ran) => Err(ProfileError {
                unselected: ran.clone(),
                ..ProfileError::new(
                    FailureKind::NoKernels,
                    &context,
                    format!(
                        "the kernel filter `{}` selected none of the kernels that ran: {}",
                        job.target.name,
                        ran.join(", ")
                    ),
                )
            }),
        };
        Ok(Taken { capture, samples })
    }

    fn busy_retry_delays(&mut self, _job: Job<'_>) -> Vec<Duration> {
        self.delays.clone()
    }
}

/// The samples of one run of `job` whose kernel (named as its target) launched `values` (ns).
pub(crate) fn launches(job: Job<'_>, values: &[f64]) -> SampleSet {
    let key = SeriesKey {
        target: job.target.name.clone(),
        size: job.size.key(),
        kernel: job.target.name.clone(),
        metric: METRIC.to_owned(),
    };
    let mut s = SampleSet::default();
    for v in values {
        s.push(&key, "ns", *v, job.rep);
    }
    s
}

/// SYNTHETIC: one process of a kernel of 100 us, `shift` slower (log scale): 31 launches, the
/// first a 5 % slower warm-up, each with 0.5 % launch noise around a 0.2 % process offset.
pub(crate) fn process(rng: &mut Rng, shift: f64) -> Vec<f64> {
    let off = 0.002 * rng.normal();
    (0..31)
        .map(|l| {
            let warm = if l == 0 { 1.05 } else { 1.0 };
            100_000.0 * warm * (shift + off + 0.005 * rng.normal()).exp()
        })
        .collect()
}

/// A spec of `targets` (YAML list items) in a folder of no repository.
pub(crate) fn spec(targets: &str) -> Spec {
    let text = format!("version: 1\ntargets:\n{targets}");
    crate::spec::load_str(&text, Path::new("mock/cgp-gate.yaml")).unwrap()
}

/// One target `name` of `sizes` sizes (`{i: 0}`, ...) with a 3 % time threshold.
pub(crate) fn target(name: &str, reps: u32, max: u32, sizes: u32) -> String {
    let sizes: String = (0..sizes).map(|i| format!("      - {{i: {i}}}\n")).collect();
    format!(
        "  - name: {name}\n    command: [./{name}]\n    repetitions: {reps}\n    max_repetitions: {max}\n    baseline_repetitions: 30\n    metrics:\n      {METRIC}: \"3%\"\n    sizes:\n{sizes}"
    )
}

/// The size index of a job of [`target`]'s sizes.
pub(crate) fn index(job: Job<'_>) -> usize {
    job.size.key().trim_start_matches("i=").parse().unwrap_or(0)
}

/// Store `spec`'s baselines in `dir`: unchanged processes of seed `seed` (SYNTHETIC), measured
/// and stored as `baseline update` does (`simulate::store_baseline`).
pub(crate) fn baselines(spec: &Spec, dir: &Path, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut base = Mock::new(|_, _| Step::Launches(process(&mut rng, 0.0)));
    crate::run::simulate::store_baseline(spec, dir, &mut base, &|_| Vec::new()).unwrap();
}

/// `check` of `spec` through `measurer` against the baselines in `dir` (the command line's
/// defaults, `--no-skip`), its progress seen by `seen`.
pub(crate) fn check(
    spec: &Spec,
    dir: &Path,
    measurer: &mut dyn Measurer,
    seen: &mut Seen,
) -> Result<Results, Error> {
    let targets: Vec<&Target> = spec.targets.iter().collect();
    crate::run::check::run_check(spec, &targets, measurer, None, None, &options(dir), seen)
}

/// The options of a plain `check` against `dir`.
pub(crate) fn options(dir: &Path) -> crate::run::check::CheckOptions<'static> {
    crate::run::check::CheckOptions {
        baselines: dir.to_path_buf(),
        fail_on: FailOn::default(),
        allow_fingerprint_mismatch: false,
        gpu: None,
        gpu_note: None,
        shard: None,
        no_skip: true,
        allow_missing: false,
        allow_no_baselines: false,
        ci_commit: Some("0123456789abcdef"),
    }
}

/// Progress as the engine reported it.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    pub(crate) planned: u32,
    pub(crate) started: Vec<String>,
    pub(crate) finished: u32,
    pub(crate) failed: u32,
    pub(crate) skipped: u32,
    pub(crate) notes: Vec<String>,
}

impl Progress for Seen {
    fn add_runs(&mut self, _: &str, _: &str, runs: u32) {
        self.planned += runs;
    }
    fn run_started(&mut self, target: &str, size: &str, rep: u32) {
        self.started.push(format!("{target}[{size}]#{rep}"));
    }
    fn run_finished(&mut self, _: &str, _: &str, _: u32, _: Duration) {
        self.finished += 1;
    }
    fn run_failed(&mut self, _: &str, _: &str, _: u32, _: Duration) {
        self.failed += 1;
    }
    fn run_skipped(&mut self, _: &str, _: &str) {
        self.skipped += 1;
    }
    fn note(&mut self, text: &str) {
        self.notes.push(text.to_owned());
    }
    fn finish(&mut self) {}
}
