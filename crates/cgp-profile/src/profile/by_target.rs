//! The live profiler of a spec that mixes profilers: each job goes to the live profiler of its
//! target's backend (`profiler: ncu`, the default, `profiler: nsys` or `profiler: cupti`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::profile::backend::LiveSetup;
use crate::profile::backend_for;
use crate::profile::{Capture, FailureKind, Job, ProfileError, Profiler, job_context};
use crate::spec::{ProfilerKind, Target};

/// One live profiler per backend, each made when a job first needs it (a spec of nsys targets
/// never looks for ncu).
pub struct ByTarget {
    base_dir: PathBuf,
    /// The run's targets, for each backend's setup.
    targets: Vec<Target>,
    /// The command layer's override of the busy-counter retry delays.
    busy_retry_delays: Option<Vec<Duration>>,
    live: Vec<(ProfilerKind, Box<dyn Profiler>)>,
    /// The profiler of every selected target, when they all have the same one: the run's
    /// profiler version is that one's.
    only: Option<ProfilerKind>,
}

impl std::fmt::Debug for ByTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let made: Vec<&str> = self.live.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("ByTarget")
            .field("base_dir", &self.base_dir)
            .field("made", &made)
            .field("only", &self.only)
            .finish_non_exhaustive()
    }
}

impl ByTarget {
    /// The live profiler of `targets`, whose relative paths resolve against `base_dir`; with
    /// `busy_retry_delays`, the waits between busy-counter retries (else each live profiler's own).
    ///
    /// # Errors
    /// When no temporary directory can be made for a backend the targets use.
    pub fn new(
        base_dir: &Path,
        targets: &[&Target],
        busy_retry_delays: Option<Vec<Duration>>,
    ) -> Result<Self, crate::Error> {
        let first = targets.first().map(|t| t.profiler);
        let mut by = Self {
            base_dir: base_dir.to_path_buf(),
            targets: targets.iter().map(|t| (*t).clone()).collect(),
            busy_retry_delays,
            live: Vec::new(),
            only: first.filter(|k| targets.iter().all(|t| t.profiler == *k)),
        };
        // The backends the targets use are set up now (a setup failure stops the run before
        // anything runs); ncu when there is no target, as before.
        let mut kinds: Vec<ProfilerKind> = targets.iter().map(|t| t.profiler).collect();
        if kinds.is_empty() {
            kinds.push(ProfilerKind::default());
        }
        for k in kinds {
            by.made(k)?;
        }
        Ok(by)
    }

    /// The live profiler of `kind`, made on first use.
    fn made(&mut self, kind: ProfilerKind) -> Result<&mut dyn Profiler, crate::Error> {
        let at = match self.live.iter().position(|(k, _)| *k == kind) {
            Some(i) => i,
            None => {
                let targets: Vec<&Target> = self.targets.iter().filter(|t| t.profiler == kind).collect();
                let setup = LiveSetup {
                    base_dir: &self.base_dir,
                    targets: &targets,
                    busy_retry_delays: self.busy_retry_delays.as_deref(),
                };
                let p = backend_for(kind).live(&setup)?;
                self.live.push((kind, p));
                self.live.len() - 1
            }
        };
        Ok(self.live[at].1.as_mut())
    }

    fn profiler(&mut self, kind: ProfilerKind, context: String) -> Result<&mut dyn Profiler, ProfileError> {
        self.made(kind)
            .map_err(|e| ProfileError::new(FailureKind::Io, context, e.to_string()))
    }

    /// The kind whose version is the run's: the one every target has, else ncu.
    fn main_kind(&self) -> ProfilerKind {
        self.only.unwrap_or_default()
    }
}

impl Profiler for ByTarget {
    fn name(&self) -> &'static str {
        backend_for(self.main_kind()).name()
    }

    fn version(&mut self) -> Result<String, ProfileError> {
        self.profiler(self.main_kind(), String::new())?.version()
    }

    fn tool_version(&mut self, tool: ProfilerKind) -> Result<String, ProfileError> {
        self.profiler(tool, String::new())?.version()
    }

    fn busy_retry_delays(&mut self, job: Job<'_>) -> Vec<Duration> {
        // The live profiler of the job's tool says (ncu: its own, or the override it was made
        // with); a tool that never competes for the counters is never retried for them.
        self.made(job.target.profiler)
            .map(|p| p.busy_retry_delays(job))
            .unwrap_or_default()
    }

    fn capture(&mut self, job: Job<'_>) -> Result<Capture, ProfileError> {
        self.profiler(job.target.profiler, job_context(job))?.capture(job)
    }

    fn probe(&mut self, targets: &[&Target]) {
        let mut kinds: Vec<ProfilerKind> = targets.iter().map(|t| t.profiler).collect();
        kinds.dedup();
        for k in kinds {
            let own: Vec<&Target> = targets.iter().copied().filter(|t| t.profiler == k).collect();
            // A backend that cannot be made fails its first job, as without the probe.
            if let Ok(p) = self.made(k) {
                p.probe(&own);
            }
        }
    }

    fn harness_device(&self, target: &Target) -> Option<String> {
        self.live
            .iter()
            .find(|(k, _)| *k == target.profiler)
            .and_then(|(_, p)| p.harness_device(target))
    }
}
