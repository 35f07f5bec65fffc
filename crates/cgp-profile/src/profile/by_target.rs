//! The live backend of a spec that mixes profilers: each job goes to the profiler its target
//! names (`profiler: ncu`, the default, `profiler: nsys` or `profiler: cupti`).

use std::path::Path;

use crate::profile::cupti::{CuptiProfiler, is_cupti};
use crate::profile::live::NcuProfiler;
use crate::profile::nsys::{NsysProfiler, is_nsys};
use crate::profile::{Capture, Job, ProfileError, Profiler};
use crate::spec::{ProfilerKind, Target};

/// ncu for ncu targets, nsys for nsys targets, the injection library for cupti targets. Each is
/// only looked for when a target needs it.
#[derive(Debug)]
pub struct ByTarget {
    ncu: NcuProfiler,
    nsys: NsysProfiler,
    cupti: CuptiProfiler,
    /// The profiler of every selected target, when they all have the same one: the run's
    /// profiler version is that one's.
    only: Option<ProfilerKind>,
}

impl ByTarget {
    /// # Errors
    /// When no temporary directory can be made.
    pub fn new(ncu: NcuProfiler, base_dir: &Path, targets: &[&Target]) -> Result<Self, crate::Error> {
        let first = targets.first().map(|t| t.profiler);
        let mut cupti = CuptiProfiler::new(base_dir)?;
        if let Some(t) = targets.iter().find(|t| is_cupti(t)) {
            cupti.version_of(t);
        }
        Ok(Self {
            ncu,
            nsys: NsysProfiler::new(base_dir)?,
            cupti,
            only: first.filter(|k| targets.iter().all(|t| t.profiler == *k)),
        })
    }

    /// The cupti backend, for `profile --dry-run` (the environment each run adds).
    pub fn cupti(&mut self) -> &mut CuptiProfiler {
        &mut self.cupti
    }
}

impl Profiler for ByTarget {
    fn name(&self) -> &'static str {
        match self.only {
            Some(ProfilerKind::Nsys) => "nsys",
            Some(ProfilerKind::Cupti) => "cupti",
            _ => "ncu",
        }
    }

    fn version(&mut self) -> Result<String, ProfileError> {
        match self.only {
            Some(ProfilerKind::Nsys) => self.nsys.version(),
            Some(ProfilerKind::Cupti) => self.cupti.version(),
            _ => self.ncu.version(),
        }
    }

    fn tool_version(&mut self, tool: ProfilerKind) -> Result<String, ProfileError> {
        match tool {
            ProfilerKind::Ncu => self.ncu.version(),
            ProfilerKind::Nsys => self.nsys.version(),
            ProfilerKind::Cupti => self.cupti.version(),
        }
    }

    fn busy_retry_delays(&self) -> Vec<std::time::Duration> {
        // Neither nsys nor CUPTI's activity API uses the counters ncu competes for; the retries
        // are ncu's.
        self.ncu.busy_retry_delays()
    }

    fn capture(&mut self, job: Job<'_>) -> Result<Capture, ProfileError> {
        if is_nsys(job.target) {
            self.nsys.capture(job)
        } else if is_cupti(job.target) {
            self.cupti.capture(job)
        } else {
            self.ncu.capture(job)
        }
    }
}
