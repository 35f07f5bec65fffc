//! Backends: one per `profiler:` a target may name, all registered in [`backend_for`].
//!
//! A backend makes the live [`Profiler`] of its targets, reads one capture into samples, says
//! how a recording keeps a repetition, what its fingerprint says and what `profile --dry-run`
//! prints. The rest of cgp-gate (commands, run, reports) asks the backend of a target instead of
//! branching on its kind. Replay is no backend: it is a [`Profiler`] over a recording of any
//! backend's repetitions, read back in the forms [`Backend::recorded_as`] names.
//!
//! Adding a backend (docs/architecture.md, "Adding a backend"): its `ProfilerKind` in the spec,
//! its module in `profile/` implementing [`Backend`], and one line in
//! [`crate::profile::backend_for`], the registration.

use std::path::Path;
use std::time::Duration;

use crate::gpu::fingerprint::Fingerprint;
use crate::measured::samples::SampleSet;
use crate::profile::{Capture, Job, ProfileError, Profiler};
use crate::spec::{ProfilerKind, Target};

/// How a live profiler is set up, the same for every backend.
#[derive(Debug, Clone, Copy)]
pub struct LiveSetup<'a> {
    /// Relative `cwd`s resolve against this (the spec's folder).
    pub base_dir: &'a Path,
    /// The run's targets that this backend measures.
    pub targets: &'a [&'a Target],
    /// The waits between retries when another tool holds the GPU counters, where the command
    /// layer overrides the live profiler's own ([`Profiler::busy_retry_delays`]: ncu's).
    pub busy_retry_delays: Option<&'a [Duration]>,
}

/// One form of a recorded repetition: the file `<rep>.<extension>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordedAs {
    pub extension: &'static str,
    /// Read as bytes ([`crate::profile::Output::Bytes`]), not as text.
    pub binary: bool,
    /// What the file holds, for messages (`recorded ncu output`).
    pub what: &'static str,
}

/// What `profile --dry-run` prints for one backend's targets.
pub trait DryRun {
    /// Lines printed before the command lines (which tool they are for, what it lacks).
    fn preamble(&self) -> Vec<String>;
    /// The command line of one repetition, quoted so that it can be pasted into a shell.
    ///
    /// # Errors
    /// A command that cannot be rendered or quoted; a tool part that cannot be found.
    fn line(&mut self, job: Job<'_>) -> Result<String, crate::Error>;
}

/// A profiler backend (ncu, nsys, cupti).
pub trait Backend: Sync {
    /// The `profiler:` value of its targets.
    fn kind(&self) -> ProfilerKind;

    /// The tool's name in text (`ncu`).
    fn name(&self) -> &'static str {
        self.kind().as_str()
    }

    /// The live profiler of its targets (the tool is looked for, not yet run).
    ///
    /// # Errors
    /// When no temporary directory can be made.
    fn live(&self, setup: &LiveSetup<'_>) -> Result<Box<dyn Profiler>, crate::Error>;

    /// Turn one capture (live or recorded) into samples.
    ///
    /// # Errors
    /// A [`ProfileError`] of the right class, naming the file, kernel and metric where they apply.
    fn extract(&self, job: Job<'_>, capture: &Capture) -> Result<SampleSet, ProfileError>;

    /// The forms a recording keeps a repetition in; replay takes the first present, a recorder
    /// the first of the capture's kind (text or bytes).
    fn recorded_as(&self) -> &'static [RecordedAs];

    /// Whether [`Backend::extract`] selects the launches of the target's kernel filter itself;
    /// otherwise a replayed capture is filtered as a live run's `-k` would have
    /// (`profile::filter::for_replay`).
    fn selects_kernels(&self) -> bool {
        false
    }

    /// What a live run of its targets needs from the machine, checked before anything runs
    /// ([`crate::profile::machine::preflight`]) and by `cgp-gate doctor`. A harness needs nothing: its
    /// own file names the device.
    fn needs(&self) -> &'static [crate::profile::machine::Need] {
        &[]
    }

    /// A GPU time metric whose regressions are confirmed in clock cycles, and the metric of the
    /// cycles measured beside it (nvbench's `--jsonbin` clocks: `run::clock`); `None` for a
    /// backend that measures no cycles per sample.
    fn time_and_cycles(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    /// What a judged row of one value per process says at the head of its reason, where a run
    /// may hold one summary per process instead of samples (nvbench without `--jsonbin`, asv
    /// without `--record-samples`; `check::harness_states`); `None`: it always has samples.
    fn summary_note(&self) -> Option<&'static str> {
        None
    }

    /// Whether its rows are kernels whose machine code the SASS cache can hash (docs/sass-cache.md).
    /// A harness's rows are benchmark states, named by the harness, not by a kernel's function:
    /// no SASS names them, so the cache does not apply and nothing is said about it (issue 59: a
    /// `baseline update --replay` of imported files told the user to build the program at a
    /// path of the machine that wrote them).
    fn hashes_sass(&self) -> bool {
        true
    }

    /// The fingerprint of a measurement by this backend, from the GPU's and the target's:
    /// the tool (`profiler`) and its `version`, and which fields do not apply.
    fn fingerprint(&self, fp: Fingerprint, version: &str) -> Fingerprint;

    /// The most bytes of one recorded repetition a replay reads: what a live capture of the
    /// backend may hold, so that every recording it makes replays (ncu's CSV limit by default).
    fn max_capture_bytes(&self) -> u64 {
        crate::foundation::fsutil::limits::NCU_CSV
    }

    /// What a report must say when this backend's run gates code from a pull request, because
    /// the program under test can write the times it is judged by (CUPTI's trace is written in
    /// its own process; a harness writes its own file); `None` when the profiler measures it from
    /// outside.
    fn program_can_forge(&self) -> Option<&'static str> {
        None
    }

    /// `profile --dry-run` for `targets` (this backend's).
    ///
    /// # Errors
    /// When no temporary directory can be made.
    fn dry_run(&self, base_dir: &Path, targets: &[&Target]) -> Result<Box<dyn DryRun>, crate::Error>;
}

#[cfg(test)]
mod tests {
    use crate::profile::{Versions, backend_for, backends, recorded_extensions, recorded_rep};
    use crate::spec::ProfilerKind;

    #[test]
    fn every_kind_has_its_backend_once() {
        let kinds: Vec<ProfilerKind> = backends().iter().map(|b| b.kind()).collect();
        assert_eq!(kinds, ProfilerKind::ALL);
        for b in backends() {
            assert_eq!(backend_for(b.kind()).name(), b.kind().as_str());
            assert!(!b.recorded_as().is_empty(), "{}", b.name());
        }
        assert_eq!(recorded_extensions(), ["csv", "sqlite", "cupti", "json"]);
    }

    #[test]
    fn recorded_file_names() {
        assert_eq!(recorded_rep("0.csv"), Some(0));
        assert_eq!(recorded_rep("12.sqlite"), Some(12));
        assert_eq!(recorded_rep("3.cupti"), Some(3));
        assert_eq!(recorded_rep("4.json"), Some(4));
        assert_eq!(recorded_rep("manifest.json"), None);
        for bad in ["00.csv", "+1.csv", "1.CSV", "1.txt", "x.csv", "csv", "-1.cupti"] {
            assert_eq!(recorded_rep(bad), None, "{bad}");
        }
    }

    #[test]
    fn versions_are_kept_per_backend_in_registration_order() {
        let mut v = Versions::default();
        assert_eq!(v.describe(), "no profiler");
        v.set(ProfilerKind::Cupti, Some("2022.3.0".to_owned()));
        v.set(ProfilerKind::Ncu, Some("2022.3.0.0".to_owned()));
        assert_eq!(v.describe(), "ncu 2022.3.0.0, cupti 2022.3.0");
        assert_eq!(v.version(ProfilerKind::Nsys), None);
        assert_eq!(v.get(ProfilerKind::Nsys), "unknown");
        v.set(ProfilerKind::Ncu, None);
        assert_eq!(v.tools().collect::<Vec<_>>(), [ProfilerKind::Cupti]);
        // The manifest keeps one field per tool, as recordings always had.
        let mut m = crate::profile::record::Manifest::default();
        m.set_version(ProfilerKind::Nsys, Some("2022.4.2".to_owned()));
        assert_eq!(m.version(ProfilerKind::Nsys), Some("2022.4.2"));
        assert_eq!(m.version(ProfilerKind::Ncu), None);
        let text = serde_json::to_value(&m).unwrap();
        assert_eq!(text["nsys_version"], "2022.4.2");
        assert!(text.get("ncu_version").is_none());
        // A manifest written before the map: its fields read back, and write out as they were.
        let old =
            r#"{"schema_version":1,"ncu_version":"2022.3.0.0","pytest_benchmark_version":"4.0.0","runs":[]}"#;
        let m: crate::profile::record::Manifest = serde_json::from_str(old).unwrap();
        assert_eq!(m.version(ProfilerKind::Ncu), Some("2022.3.0.0"));
        let py = ProfilerKind::named("pytest-benchmark").unwrap();
        assert_eq!(m.version(py), Some("4.0.0"));
        let again = serde_json::to_value(&m).unwrap();
        assert_eq!(again["pytest_benchmark_version"], "4.0.0");
        assert_eq!(again["ncu_version"], "2022.3.0.0");
    }
}
