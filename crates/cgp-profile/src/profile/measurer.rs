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

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;
    use crate::spec::ProfilerKind;

    /// SYNTHETIC: a profiler whose every capture is `text`, logging what it is asked.
    struct Fake {
        text: &'static str,
        recording: bool,
        log: Rc<RefCell<Vec<String>>>,
    }

    impl Profiler for Fake {
        fn name(&self) -> &'static str {
            "fake"
        }
        fn version(&mut self) -> Result<String, ProfileError> {
            self.log.borrow_mut().push("version".to_owned());
            Ok("9.9".to_owned())
        }
        fn capture(&mut self, job: Job<'_>) -> Result<Capture, ProfileError> {
            self.log.borrow_mut().push(format!("capture {}", job.rep));
            Ok(Capture {
                output: crate::profile::Output::Text(self.text.to_owned()),
                origin: "fake.csv".into(),
                wall_seconds: Some(1.5),
                ..Capture::default()
            })
        }
        fn has(&self, job: Job<'_>) -> bool {
            job.rep < 2
        }
        fn reads_a_recording(&self) -> bool {
            self.recording
        }
        fn probe(&mut self, targets: &[&Target]) {
            self.log.borrow_mut().push(format!("probe {}", targets.len()));
        }
        fn harness_device(&self, target: &Target) -> Option<String> {
            Some(format!("device of {}", target.name))
        }
    }

    fn spec(targets: &str) -> crate::spec::Spec {
        let text = format!("version: 1\ntargets:\n{targets}");
        crate::spec::load_str(&text, std::path::Path::new("cgp-gate.yaml")).unwrap()
    }

    const NCU: &str =
        "  - name: saxpy\n    command: [./saxpy]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n";
    const CSV: &str = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n\"0\",\"saxpy(int)\",\"1000\"\n\"1\",\"saxpy(int)\",\"1010\"\n";

    #[test]
    fn measuring_probes_before_it_asks_versions_and_says_where_samples_come_from() {
        let s = spec(NCU);
        let targets: Vec<&Target> = s.targets.iter().collect();
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut fake = Fake {
            text: CSV,
            recording: false,
            log: Rc::clone(&log),
        };
        let mut m = Measuring::new(&mut fake);
        let origin = m.open(&targets).unwrap();
        assert_eq!(*log.borrow(), ["probe 1", "version"]);
        assert_eq!(origin.versions.version(ProfilerKind::default()), Some("9.9"));
        assert_eq!(origin.source, "fake");
        assert_eq!(origin.device(&s.targets[0]), Some("device of saxpy"));
        assert!(origin.recorded.is_none() && !origin.synthetic);
        let job = |rep| Job {
            target: &s.targets[0],
            size: &s.targets[0].sizes[0],
            rep,
        };
        assert!(m.can_serve(job(1)) && !m.can_serve(job(2)));
        // A profiler of no tool that competes for the counters is never retried for them.
        assert!(m.busy_retry_delays(job(0)).is_empty());
        let taken = m.measure(job(0)).unwrap();
        assert_eq!(taken.capture.wall_seconds, Some(1.5));
        let samples = taken.samples.unwrap();
        let values: Vec<f64> = samples.series.values().flat_map(|x| x.values()).collect();
        assert_eq!(values, [1000.0, 1010.0]);
    }

    #[test]
    fn output_that_cannot_be_read_is_damaged_input_in_a_recording_and_a_tool_failure_live() {
        let s = spec(NCU);
        let job = Job {
            target: &s.targets[0],
            size: &s.targets[0].sizes[0],
            rep: 0,
        };
        let kind = |recording: bool| {
            let mut fake = Fake {
                text: "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n\"0\",\"saxpy(int)\",\"n/a\"\n",
                recording,
                log: Rc::default(),
            };
            // The capture was taken: the recorder keeps it, and its reading failed.
            let taken = Measuring::new(&mut fake).measure(job).unwrap();
            assert!(!taken.capture.output.is_empty());
            taken.samples.unwrap_err().kind
        };
        assert_eq!(kind(false), FailureKind::BadOutput);
        assert_eq!(kind(true), FailureKind::BadRecording);
    }

    #[test]
    fn busy_counter_retries_are_the_live_ncu_profilers_and_no_other_tools() {
        let s = spec(&format!(
            "{NCU}  - name: trace\n    command: [./trace]\n    profiler: nsys\n    metrics:\n      \"kernel:total\": \"3%\"\n"
        ));
        let targets: Vec<&Target> = s.targets.iter().collect();
        let job = |t: usize| Job {
            target: &s.targets[t],
            size: &s.targets[t].sizes[0],
            rep: 0,
        };
        let dir = tempfile::tempdir().unwrap();
        let ms = std::time::Duration::from_millis;
        let mut own = crate::profile::by_target::ByTarget::new(dir.path(), &targets, None).unwrap();
        let mut m = Measuring::new(&mut own);
        assert_eq!(m.busy_retry_delays(job(0)), [ms(2000), ms(5000), ms(10_000)]);
        assert!(m.busy_retry_delays(job(1)).is_empty());
        // The command layer's override (CGP_GATE_RETRY_DELAYS_MS) reaches ncu, and only ncu.
        let mut over =
            crate::profile::by_target::ByTarget::new(dir.path(), &targets, Some(vec![ms(1)])).unwrap();
        let mut m = Measuring::new(&mut over);
        assert_eq!(m.busy_retry_delays(job(0)), [ms(1)]);
        assert!(m.busy_retry_delays(job(1)).is_empty());
    }
}
