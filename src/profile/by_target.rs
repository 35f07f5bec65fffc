//! The live backend of a spec that mixes profilers: each job goes to the profiler its target
//! names (`profiler: ncu`, the default, or `profiler: nsys`).

use std::path::Path;

use crate::profile::live::NcuProfiler;
use crate::profile::nsys::{NsysProfiler, is_nsys};
use crate::profile::{Capture, Job, ProfileError, Profiler};
use crate::spec::Target;

/// ncu for ncu targets, nsys for nsys targets. Each is only looked for when a target needs it.
#[derive(Debug)]
pub struct ByTarget {
    ncu: NcuProfiler,
    nsys: NsysProfiler,
    /// The selected targets are all nsys targets: the run's profiler version is nsys's.
    nsys_only: bool,
}

impl ByTarget {
    /// # Errors
    /// When no temporary directory can be made.
    pub fn new(ncu: NcuProfiler, base_dir: &Path, targets: &[&Target]) -> Result<Self, crate::Error> {
        Ok(Self {
            ncu,
            nsys: NsysProfiler::new(base_dir)?,
            nsys_only: !targets.is_empty() && targets.iter().all(|t| is_nsys(t)),
        })
    }
}

impl Profiler for ByTarget {
    fn name(&self) -> &'static str {
        if self.nsys_only { "nsys" } else { "ncu" }
    }

    fn version(&mut self) -> Result<String, ProfileError> {
        if self.nsys_only {
            self.nsys.version()
        } else {
            self.ncu.version()
        }
    }

    fn tool_version(&mut self, tool: crate::spec::ProfilerKind) -> Result<String, ProfileError> {
        match tool {
            crate::spec::ProfilerKind::Ncu => self.ncu.version(),
            crate::spec::ProfilerKind::Nsys => self.nsys.version(),
        }
    }

    fn busy_retry_delays(&self) -> Vec<std::time::Duration> {
        // nsys does not use the counters ncu competes for; the retries are ncu's.
        self.ncu.busy_retry_delays()
    }

    fn capture(&mut self, job: Job<'_>) -> Result<Capture, ProfileError> {
        if is_nsys(job.target) {
            self.nsys.capture(job)
        } else {
            self.ncu.capture(job)
        }
    }
}
