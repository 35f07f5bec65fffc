//! Profilers: the only hardware-bound part of cgp-gate, behind one trait.
//!
//! Each `profiler:` a target may name is a [`Backend`] (ncu, nsys, cupti), registered in
//! [`backend_for`]: it makes the live [`Profiler`] of its targets, reads one capture into samples,
//! and says how a recording keeps a repetition. [`Profiler::capture`] runs (live) or reads
//! (replay, any backend's recording) one repetition of one target x size and returns the raw
//! output as the profiler wrote it; the same backend reads a live and a recorded capture, so a
//! recorded failure is classified exactly like a live one. What a backend needs from the machine
//! is checked before a live run ([`machine::preflight`]) and by `cgp-gate doctor`.

pub mod backend;
pub mod by_target;
pub mod cupti;
pub mod error;
pub mod extract;
pub mod filter;
pub mod harness;
pub mod kept;
pub mod launches;
pub mod live;
pub mod machine;
pub mod measurer;
pub mod nsys;
pub mod record;
pub mod replay;
pub mod sass;
pub mod sum;

pub use backend::Backend;
pub use error::{FailureKind, ProfileError};
pub use measurer::{Measurer, Measuring, Provenance, Taken};

use std::path::PathBuf;

use crate::spec::{ProfilerKind, Size, Target};

/// The backend of targets with `profiler: kind`. With [`backends`] below, the one registration
/// of every backend: a new `ProfilerKind` fails to compile here until its backend is named.
pub fn backend_for(kind: ProfilerKind) -> &'static dyn Backend {
    match kind {
        ProfilerKind::Ncu => &live::NcuBackend,
        ProfilerKind::Nsys => &nsys::NsysBackend,
        ProfilerKind::Cupti => &cupti::CuptiBackend,
        ProfilerKind::Harness(format) => harness::backend(format),
    }
}

/// Every backend, in the order versions are reported (`ncu 2022.3.0.0, nsys 2022.4.2`) and
/// dry runs print theirs.
pub fn backends() -> [&'static dyn Backend; ProfilerKind::ALL.len()] {
    ProfilerKind::ALL.map(backend_for)
}

/// The backend that measures `target`.
pub fn backend_of(target: &Target) -> &'static dyn Backend {
    backend_for(target.profiler)
}

/// Every extension a recorded repetition may have, over all backends (`csv`, `sqlite`, ...).
pub fn recorded_extensions() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = backends()
        .iter()
        .flat_map(|b| b.recorded_as().iter().map(|r| r.extension))
        .collect();
    let mut seen = Vec::new();
    all.retain(|e| {
        let new = !seen.contains(e);
        seen.push(*e);
        new
    });
    all
}

/// The repetition number of a recorded file's name (`3.csv` -> 3): a number written as a
/// number is (no sign, no leading zero) and one of [`recorded_extensions`].
pub fn recorded_rep(name: &str) -> Option<u32> {
    let (stem, ext) = name.rsplit_once('.')?;
    if !recorded_extensions().contains(&ext) {
        return None;
    }
    stem.parse::<u32>().ok().filter(|n| n.to_string() == stem)
}

/// The version of each profiler a run's targets use, in the order of [`backends`]; a tool no
/// target uses is absent (a spec of nsys targets needs no ncu, and the other way round).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Versions(Vec<(ProfilerKind, String)>);

impl Versions {
    /// Ask `profiler` for the version of each tool `targets` use (each only when one does).
    ///
    /// # Errors
    /// When a profiler the targets need cannot be found or run.
    pub fn of(profiler: &mut dyn Profiler, targets: &[&Target]) -> Result<Self, ProfileError> {
        let mut v = Self::default();
        for b in backends() {
            let kind = b.kind();
            // With no target at all, ncu (the default profiler) is still the one asked, as before.
            let asked = if targets.is_empty() {
                kind == ProfilerKind::default()
            } else {
                targets.iter().any(|t| t.profiler == kind)
            };
            if asked {
                v.0.push((kind, profiler.tool_version(kind)?));
            }
        }
        Ok(v)
    }

    /// The version of `tool`, when a target uses it.
    pub fn version(&self, tool: ProfilerKind) -> Option<&str> {
        self.0.iter().find(|(k, _)| *k == tool).map(|(_, v)| v.as_str())
    }

    /// Nsight Compute's version, when a target uses it: the fingerprint's `ncu_version`.
    pub fn ncu(&self) -> Option<&str> {
        self.version(ProfilerKind::Ncu)
    }

    /// Set the version of `tool` (`None`: the tool is not used).
    pub fn set(&mut self, tool: ProfilerKind, version: Option<String>) {
        self.0.retain(|(k, _)| *k != tool);
        if let Some(v) = version {
            self.0.push((tool, v));
            let order = |k: &ProfilerKind| backends().iter().position(|b| b.kind() == *k);
            self.0.sort_by_key(|(k, _)| order(k));
        }
    }

    /// The version of `tool`, or `unknown`.
    pub fn get(&self, tool: ProfilerKind) -> &str {
        self.version(tool).unwrap_or("unknown")
    }

    /// The tools used, in the order of [`backends`].
    pub fn tools(&self) -> impl Iterator<Item = ProfilerKind> + '_ {
        self.0.iter().map(|(k, _)| *k)
    }

    /// `ncu 2022.3.0.0, nsys 2022.4.2.1-df9881f`: the tools used, for a line of text.
    pub fn describe(&self) -> String {
        if self.0.is_empty() {
            return "no profiler".to_owned();
        }
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(k, v)| format!("{} {v}", backend_for(*k).name()))
            .collect();
        parts.join(", ")
    }
}

/// One repetition of one target x size.
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    pub target: &'a Target,
    pub size: &'a Size,
    pub rep: u32,
}

/// What a profiler wrote for one repetition, as it wrote it; its backend reads it
/// ([`Backend::extract`]) and says how a recording keeps it ([`Backend::recorded_as`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Text: ncu's `--log-file` (`==PROF==` lines and the CSV), an nsys CSV report, a CUPTI trace.
    Text(String),
    /// Bytes: an nsys SQLite export.
    Bytes(Vec<u8>),
}

impl Output {
    /// The text, or `""` for bytes.
    pub fn text(&self) -> &str {
        match self {
            Self::Text(t) => t,
            Self::Bytes(_) => "",
        }
    }

    /// The bytes as written (a text's UTF-8).
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Self::Text(t) => t.as_bytes(),
            Self::Bytes(b) => b,
        }
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.as_bytes().is_empty()
    }
}

impl Default for Output {
    fn default() -> Self {
        Self::Text(String::new())
    }
}

/// Raw output of one profiler run.
#[derive(Debug, Clone, Default)]
pub struct Capture {
    /// The profiler's output as written.
    pub output: Output,
    /// Where `output` was read from or kept, for messages.
    pub origin: PathBuf,
    /// The exact argv that produced it, when known.
    pub argv: Option<Vec<String>>,
    /// Wall time of the run in seconds, when measured.
    pub wall_seconds: Option<f64>,
    /// The profiler's exit code, when known (a live run, or a recording whose manifest has it).
    pub exit_code: Option<i32>,
    /// The last lines the application and the profiler wrote to stderr and stdout, for messages.
    pub output_tail: String,
    /// Kernels the application launched, from a diagnostic run after the filter matched nothing.
    pub kernels_seen: Option<Vec<String>>,
    /// The version of the tool that wrote it (`2022.3.0.0`), when known.
    pub tool_version: Option<String>,
}

impl Capture {
    /// The output's text (`""` for bytes).
    pub fn raw(&self) -> &str {
        self.output.text()
    }
}

/// A source of raw profiler output.
pub trait Profiler {
    /// The tool (`ncu`, `nsys`, `cupti`) or `replay`.
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
    /// Before the fingerprint is taken, once the GPU session is set up (clocks locked): run what
    /// names the device of `targets`. A harness target (`profiler: nvbench | gbench |
    /// pytest-benchmark`) names its device (and its harness's version) in its own file, so its
    /// first repetition runs now and is kept for [`Profiler::capture`] (docs/harnesses.md); ask
    /// [`Versions::of`] after it. Nothing by default.
    fn probe(&mut self, _targets: &[&Target]) {}
    /// The device `target`'s own harness named in its file (nvbench `devices`, Google
    /// Benchmark's `context`, pytest-benchmark's `machine_info`/`extra_info`), after
    /// [`Profiler::probe`]: the fingerprint's GPU, whatever NVML says. `None` by default.
    fn harness_device(&self, _target: &Target) -> Option<String> {
        None
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
    /// ([`FailureKind::ResourceUnavailable`]), the one place these delays are said: the live
    /// profiler of a tool that competes for the counters (ncu, with the command layer's
    /// override); empty, the default: never retry (a recording's failure is final, and nsys,
    /// CUPTI and the harnesses do not compete). The engine asks [`Measurer::busy_retry_delays`].
    fn busy_retry_delays(&mut self, _job: Job<'_>) -> Vec<std::time::Duration> {
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
