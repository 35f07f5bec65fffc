//! The measurement seam (issue 62, hyperfine's `Executor`): the four things the engine's loop
//! asks of whatever measures. [`Measurer::open`] prepares a run and says what it measures with
//! ([`Provenance`]: the tools' versions, where the samples come from, a recording's fingerprint,
//! the device a harness's own file names); [`Measurer::can_serve`] says whether a repetition is
//! there to measure (a recording holds only the repetitions it recorded);
//! [`Measurer::measure`] captures one repetition and reads it into samples; and
//! [`Measurer::busy_retry_delays`] says how long to wait before each retry when another tool
//! holds the GPU counters. The engine (`cgp-engine`'s `run::measure`) drives its loop through
//! this trait only: the throttle re-runs, the retries, the recorder, the failed sizes and the
//! re-measurement are its own, and its unit tests drive them through a scripted measurer.
//!
//! [`Measuring`] is the real one: it wraps the live profiler of the run's backends
//! (`profile::by_target`) or the replay of a recording (`profile::replay`), both behind the
//! backend implementer's interface, [`Profiler`] and [`crate::profile::Backend`].

use std::collections::BTreeMap;
use std::time::Duration;

use crate::gpu::fingerprint::Fingerprint;
use crate::measured::samples::SampleSet;
use crate::profile::{Capture, FailureKind, Job, ProfileError, Profiler, Versions};
use crate::spec::Target;

/// What a run measures with and where its samples come from: what the fingerprints and the
/// results say of it.
#[derive(Debug, Clone, Default)]
pub struct Provenance {
    /// The version of each tool the run's targets use.
    pub versions: Versions,
    /// Where samples come from, for results: `ncu`, or `replay:<dir>`.
    pub source: String,
    /// The fingerprint a replayed recording's manifest holds (the GPU it was measured on).
    pub recorded: Option<Fingerprint>,
    /// The recording says its data was not measured on a GPU (SYNTHETIC).
    pub synthetic: bool,
    /// The device each harness target's own file names, by target name (docs/harnesses.md).
    pub devices: BTreeMap<String, String>,
}

impl Provenance {
    /// What `profiler` measures `targets` with, given the `versions` it reported (after its probe,
    /// where a harness names its device).
    pub fn of(profiler: &dyn Profiler, versions: Versions, targets: &[&Target]) -> Self {
        let manifest = profiler.manifest();
        Self {
            versions,
            source: profiler.source(),
            recorded: manifest.and_then(|m| m.fingerprint.clone()),
            synthetic: manifest.is_some_and(|m| m.synthetic),
            devices: targets
                .iter()
                .filter_map(|t| Some((t.name.clone(), profiler.harness_device(t)?)))
                .collect(),
        }
    }

    /// The device `target`'s own harness file named, when it names one.
    pub fn device(&self, target: &Target) -> Option<&str> {
        self.devices.get(&target.name).map(String::as_str)
    }
}

/// One repetition as [`Measurer::measure`] took it: the capture as the profiler wrote it (what a
/// recorder keeps, also when it cannot be read) and its samples, or why it could not be read.
#[derive(Debug, Clone)]
pub struct Taken {
    pub capture: Capture,
    pub samples: Result<SampleSet, ProfileError>,
}

/// What the engine's loop asks of whatever measures (see the module's note).
pub trait Measurer {
    /// Prepare the run of `targets` and say what it measures with: what names a harness
    /// target's device runs first (its first repetition, kept for [`Measurer::measure`]), then
    /// each tool is asked its version.
    ///
    /// # Errors
    /// When a tool the targets need cannot be found or run.
    fn open(&mut self, targets: &[&Target]) -> Result<Provenance, ProfileError>;

    /// Whether [`Measurer::measure`] can serve `job`: a live profiler always can; a recording only
    /// has the repetitions it recorded (extra repetitions for re-measurement stop there).
    fn can_serve(&self, job: Job<'_>) -> bool;

    /// Capture one repetition and read it into samples (`kernels: sum` applied; a recording's
    /// launches filtered as a live run's kernel filter would have).
    ///
    /// # Errors
    /// The capture's classified failure (the program failed, timed out, the tool is missing);
    /// a capture that was taken but cannot be read is `Ok`, with the error in [`Taken::samples`].
    fn measure(&mut self, job: Job<'_>) -> Result<Taken, ProfileError>;

    /// How long to wait before each retry when another tool holds the GPU counters
    /// ([`FailureKind::ResourceUnavailable`]); empty: never retry (a recording's failure is
    /// final, and a tool that does not compete for the counters is not retried for them).
    fn busy_retry_delays(&mut self, job: Job<'_>) -> Vec<Duration>;
}

/// The real [`Measurer`]: the run's live profiler or the replay of a recording.
pub struct Measuring<'p> {
    profiler: &'p mut dyn Profiler,
}

impl<'p> Measuring<'p> {
    /// Measure through `profiler` (what `commands::open_profiler` opened).
    pub fn new(profiler: &'p mut dyn Profiler) -> Self {
        Self { profiler }
    }
}

impl Measurer for Measuring<'_> {
    fn open(&mut self, targets: &[&Target]) -> Result<Provenance, ProfileError> {
        self.profiler.probe(targets);
        let versions = Versions::of(self.profiler, targets)?;
        Ok(Provenance::of(&*self.profiler, versions, targets))
    }

    fn can_serve(&self, job: Job<'_>) -> bool {
        self.profiler.has(job)
    }

    fn measure(&mut self, job: Job<'_>) -> Result<Taken, ProfileError> {
        let capture = self.profiler.capture(job)?;
        let samples = samples_of(self.profiler.reads_a_recording(), job, &capture);
        Ok(Taken { capture, samples })
    }

    fn busy_retry_delays(&mut self, job: Job<'_>) -> Vec<Duration> {
        self.profiler.busy_retry_delays(job)
    }
}

/// The samples of one capture: a recording (`replay`) may hold kernels a live run's `-k` filter
/// would not profile (filtered as live ncu would), output that cannot be read in a recording is
/// damaged input, and `kernels: sum` makes one operation row per metric.
fn samples_of(replay: bool, job: Job<'_>, c: &Capture) -> Result<SampleSet, ProfileError> {
    crate::profile::extract::extract(job, c)
        .and_then(|s| {
            // A cupti capture is filtered on the whole names of its records already
            // (`profile::cupti::select`), as a live run is.
            if replay && !crate::profile::backend_of(job.target).selects_kernels() {
                crate::profile::filter::for_replay(job, c, s)
            } else {
                Ok(s)
            }
        })
        .map_err(|mut e| {
            if replay && e.kind == FailureKind::BadOutput {
                e.kind = FailureKind::BadRecording;
            }
            e
        })
        .map(|s| crate::profile::sum::apply(job.target, s))
}
