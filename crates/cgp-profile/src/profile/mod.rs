//! Profilers: the only hardware-bound part of cgp-gate, behind one trait.
//!
//! [`Profiler::capture`] runs one repetition of one target x size and returns the raw profiler
//! output as the profiler wrote it. The live backend runs `ncu`; the replay backend reads a
//! recording. Parsing, failure classification and sample extraction are shared (`extract`), so
//! a recorded failure is classified exactly like a live one.

pub mod by_target;
pub mod cupti;
pub mod error;
pub mod extract;
pub mod filter;
pub mod launches;
pub mod live;
pub mod nsys;
pub mod record;
pub mod replay;
pub mod sass;
pub mod sum;

pub use error::{FailureKind, ProfileError};

use std::path::PathBuf;

use crate::spec::{ProfilerKind, Size, Target};

/// The version of each profiler a run's targets use; `None` for a tool no target uses (a spec
/// of nsys targets needs no ncu, and the other way round).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Versions {
    pub ncu: Option<String>,
    pub nsys: Option<String>,
    /// The libcupti of the `profiler: cupti` targets (`2022.3.0`, from its file name).
    pub cupti: Option<String>,
}

impl Versions {
    /// Ask `profiler` for the version of each tool `targets` use (each only when one does).
    ///
    /// # Errors
    /// When a profiler the targets need cannot be found or run.
    pub fn of(profiler: &mut dyn Profiler, targets: &[&Target]) -> Result<Self, ProfileError> {
        let uses = |k: ProfilerKind| targets.iter().any(|t| t.profiler == k);
        let mut v = Self::default();
        // With no target at all, ncu (the default profiler) is still the one asked, as before.
        if uses(ProfilerKind::Ncu) || targets.is_empty() {
            v.ncu = Some(profiler.tool_version(ProfilerKind::Ncu)?);
        }
        if uses(ProfilerKind::Nsys) {
            v.nsys = Some(profiler.tool_version(ProfilerKind::Nsys)?);
        }
        if uses(ProfilerKind::Cupti) {
            v.cupti = Some(profiler.tool_version(ProfilerKind::Cupti)?);
        }
        Ok(v)
    }

    /// The version of `tool`, or `unknown`.
    pub fn get(&self, tool: ProfilerKind) -> &str {
        match tool {
            ProfilerKind::Ncu => self.ncu.as_deref(),
            ProfilerKind::Nsys => self.nsys.as_deref(),
            ProfilerKind::Cupti => self.cupti.as_deref(),
        }
        .unwrap_or("unknown")
    }

    /// `ncu 2022.3.0.0, nsys 2022.4.2.1-df9881f`: the tools used, for a line of text.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(v) = &self.ncu {
            parts.push(format!("ncu {v}"));
        }
        if let Some(v) = &self.nsys {
            parts.push(format!("nsys {v}"));
        }
        if let Some(v) = &self.cupti {
            parts.push(format!("cupti {v}"));
        }
        if parts.is_empty() {
            "no profiler".to_owned()
        } else {
            parts.join(", ")
        }
    }
}

/// One repetition of one target x size.
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    pub target: &'a Target,
    pub size: &'a Size,
    pub rep: u32,
}

/// Raw output of one profiler run.
#[derive(Debug, Clone)]
pub struct Capture {
    /// The profiler's output as written (ncu's `--log-file`: `==PROF==` lines and the CSV).
    pub raw: String,
    /// Where `raw` was read from or kept, for messages.
    pub origin: PathBuf,
    /// The exact argv that produced it, when known.
    pub argv: Option<Vec<String>>,
    /// Wall time of the run in seconds, when measured.
    pub wall_seconds: Option<f64>,
    /// The profiler's exit code, when known (a live run, or a recording whose manifest has it).
    pub exit_code: Option<i32>,
    /// The last lines the application and ncu wrote to stderr and stdout, for messages.
    pub output_tail: String,
    /// Kernels the application launched, from a diagnostic run after the filter matched nothing.
    pub kernels_seen: Option<Vec<String>>,
    /// Binary output: an nsys SQLite export (`raw` is then empty). Recorded as `<rep>.sqlite`.
    pub sqlite: Option<Vec<u8>>,
    /// The version of the ncu that wrote it (`2022.3.0.0`), when known.
    pub ncu_version: Option<String>,
}

/// A source of raw profiler output.
pub trait Profiler {
    /// `ncu` or `replay`.
    fn name(&self) -> &'static str;
    /// The profiler's version string (`2025.1.1.0`), or `unknown`.
    ///
    /// # Errors
    /// When the profiler cannot be found or run.
    fn version(&mut self) -> Result<String, ProfileError>;
    /// The version of `tool`, the profiler of some of the run's targets; by default
    /// [`Profiler::version`] (a profiler of one tool).
    ///
    /// # Errors
    /// When that profiler cannot be found or run.
    fn tool_version(&mut self, tool: ProfilerKind) -> Result<String, ProfileError> {
        let _ = tool;
        self.version()
    }
    /// Run (or read) one repetition.
    ///
    /// # Errors
    /// A classified [`ProfileError`].
    fn capture(&mut self, job: Job<'_>) -> Result<Capture, ProfileError>;
    /// Whether [`Profiler::capture`] can serve this job. A live profiler always can; a recording
    /// only has the repetitions it recorded (extra repetitions for re-measurement stop there).
    fn has(&self, _job: Job<'_>) -> bool {
        true
    }
    /// Whether captures are read back from a recording rather than profiled now. A recording
    /// may hold kernels a live run's `-k` filter would not have profiled, and output that cannot
    /// be read there is damaged input (exit 2), not a profiler failure.
    fn reads_a_recording(&self) -> bool {
        false
    }
    /// Where samples come from, for results: `ncu`, or `replay:<dir>`.
    fn source(&self) -> String {
        self.name().to_owned()
    }
    /// The recording's manifest, when replaying one that has it.
    fn manifest(&self) -> Option<&record::Manifest> {
        None
    }
    /// How long to wait before each retry when another tool holds the GPU counters
    /// ([`FailureKind::ResourceUnavailable`]); empty: never retry (a recording's failure is final).
    fn busy_retry_delays(&self) -> Vec<std::time::Duration> {
        Vec::new()
    }
}

/// How many repetitions of `target` at `size` a recording holds, up to `up_to`: the manifest's
/// count (a listed repetition whose file is missing still fails the run), or, without a
/// manifest, the files present from rep 0 on. 0 for a live profiler or nothing recorded.
pub fn recorded_repetitions(profiler: &dyn Profiler, target: &Target, size: &Size, up_to: u32) -> u32 {
    let key = size.key();
    let listed = profiler.manifest().and_then(|m| {
        m.runs
            .iter()
            .filter(|r| r.target == target.name && r.size == key)
            .map(|r| r.rep + 1)
            .max()
    });
    listed.unwrap_or_else(|| {
        (0..up_to)
            .take_while(|&rep| profiler.has(Job { target, size, rep }))
            .count() as u32
    })
}

/// `target[size] rep N`: how messages locate a job.
pub fn job_context(job: Job<'_>) -> String {
    format!(
        "{} rep {}",
        crate::measured::samples::target_size(&job.target.name, &job.size.key()),
        job.rep
    )
}

/// The variables a profiler backend sets for the program of `target` on top of cgp-gate's own
/// environment, whose credentials it removes first (`foundation::secrets::is_credential`, done in
/// `ncu::runner::run`): the spec's `env`, and each `env_passthrough` variable that cgp-gate has,
/// with its value, so that it comes back on purpose.
pub fn program_env(target: &Target) -> std::collections::BTreeMap<String, String> {
    let mut env = target.env.clone();
    for name in &target.env_passthrough {
        if let Ok(v) = std::env::var(name) {
            env.entry(name.clone()).or_insert(v);
        }
    }
    env
}
