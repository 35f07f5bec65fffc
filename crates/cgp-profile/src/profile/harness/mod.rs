//! `profiler: nvbench | gbench | pytest-benchmark` targets (docs/harnesses.md): the team's own
//! benchmark program, run once per repetition with the harness's output flags added, and the
//! file it writes read by the parse-only readers of `crate::harness`.
//!
//! A live repetition runs the target's command (argv, never a shell) with nvbench's `--json PATH
//! --jsonbin`, Google Benchmark's `--benchmark_out=PATH --benchmark_out_format=json
//! --benchmark_repetitions=N` or pytest-benchmark's `--benchmark-json=PATH` appended. The JSON
//! is the capture and what a recording keeps (`DIR/<target>/<size>/<rep>.json`, nvbench's
//! sidecars beside it in `<rep>.json-bin/` and `<rep>.json-freqs-bin/`).
//!
//! Rows: one per benchmark x state (the kernel column, `benchmark [state]`) x metric of the
//! target, whose `kernel:` selects benchmarks. A process is one run; the samples of a process are
//! the finest the file holds (nvbench's per-sample times with `--jsonbin`, Google Benchmark's
//! repetitions, pytest-benchmark's rounds), else one summary value per process.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::harness::formats::reader;
use crate::harness::registry::{Live, LiveRun, OUTPUT_ENV, Written};
use crate::harness::{self, Format};
use crate::measured::samples::SampleSet;
use crate::plan::app_argv;
use crate::profile::backend::{Backend, DryRun, LiveSetup, RecordedAs};
use crate::profile::{Capture, FailureKind, Job, Output, ProfileError, Profiler, job_context};
use crate::spec::{ProfilerKind, Target};

mod read;
pub use read::{
    Input, extract, is_companion, read_capture, read_input, selects, sidecar_dir, sidecars_beside,
};

/// The harness backends, one per format (`profiler:` value).
#[derive(Debug, Clone, Copy)]
pub struct HarnessBackend(pub Format);

/// Every format's backend, in the order of `Format::ALL`.
static BACKENDS: [HarnessBackend; Format::ALL.len()] = {
    let mut all = [HarnessBackend(Format::ALL[0]); Format::ALL.len()];
    let mut i = 0;
    while i < all.len() {
        all[i] = HarnessBackend(Format::ALL[i]);
        i += 1;
    }
    all
};

/// The backend of targets of `format`.
pub fn backend(format: Format) -> &'static HarnessBackend {
    BACKENDS.iter().find(|b| b.0 == format).unwrap_or(&BACKENDS[0])
}

/// The kind of targets a harness's files are read for.
pub fn kind_of(format: Format) -> ProfilerKind {
    ProfilerKind::Harness(format)
}

/// The harness of a target kind, for a harness kind.
pub fn format_of(kind: ProfilerKind) -> Option<Format> {
    kind.harness()
}

/// What a live run of `format` adds to the command `app`, its file going to `out`.
pub fn live(format: Format, out: &Path, app: &[String], cwd: &Path) -> Live {
    let mut live = reader(format).live(&LiveRun { out, app, cwd });
    live.env.push((OUTPUT_ENV.to_owned(), out.display().to_string()));
    live
}

/// The flags that make the harness write its file to `out`, appended to the command.
pub fn output_flags(format: Format, out: &Path, app: &[String]) -> Vec<String> {
    reader(format)
        .live(&LiveRun {
            out,
            app,
            cwd: Path::new("."),
        })
        .flags
}

const RECORDED: &[RecordedAs] = &[RecordedAs {
    extension: "json",
    binary: false,
    what: "recorded harness JSON",
}];

impl Backend for HarnessBackend {
    fn kind(&self) -> ProfilerKind {
        kind_of(self.0)
    }

    fn live(&self, setup: &LiveSetup<'_>) -> Result<Box<dyn Profiler>, crate::Error> {
        Ok(Box::new(HarnessProfiler::new(setup.base_dir, self.0)?))
    }

    fn extract(&self, job: Job<'_>, capture: &Capture) -> Result<SampleSet, ProfileError> {
        extract(self.0, job, capture)
    }

    fn recorded_as(&self) -> &'static [RecordedAs] {
        RECORDED
    }

    fn selects_kernels(&self) -> bool {
        // `kernel:` selects benchmarks, in `extract`.
        true
    }

    fn time_and_cycles(&self) -> Option<(&'static str, &'static str)> {
        reader(self.0).time_and_cycles()
    }

    fn max_capture_bytes(&self) -> u64 {
        // A live run and `import` read a harness file up to this: its recording replays.
        harness::MAX_FILE_BYTES
    }

    fn program_can_forge(&self) -> Option<&'static str> {
        Some(
            "a benchmark harness's times are the file the program under test writes itself: code from a pull request can write any times in it (docs/harnesses.md); gate code you do not trust with `profiler: ncu` or `nsys`, which measure it from outside",
        )
    }

    fn hashes_sass(&self) -> bool {
        false
    }

    fn summary_note(&self) -> Option<&'static str> {
        reader(self.0).summary_note()
    }

    fn fingerprint(
        &self,
        fp: crate::gpu::fingerprint::Fingerprint,
        version: &str,
    ) -> crate::gpu::fingerprint::Fingerprint {
        // As for nsys: no ncu, no clocks ncu would lock; the harness and its version.
        fp.measured_by(kind_of(self.0), version)
    }

    fn dry_run(&self, _base_dir: &Path, _targets: &[&Target]) -> Result<Box<dyn DryRun>, crate::Error> {
        Ok(Box::new(HarnessDryRun(self.0)))
    }
}

/// `profile --dry-run`: the command with the harness's flags.
struct HarnessDryRun(Format);

impl DryRun for HarnessDryRun {
    fn preamble(&self) -> Vec<String> {
        Vec::new()
    }

    fn line(&mut self, job: Job<'_>) -> Result<String, crate::Error> {
        let mut app = app_argv(job.target, job.size).map_err(crate::Error::Usage)?;
        let flags = output_flags(self.0, Path::new("<tmp>/run-N.json"), &app);
        app.extend(flags);
        crate::profile::live::quoted(&app, job.target)
    }
}

/// Runs the target's benchmark program once per repetition.
#[derive(Debug)]
pub struct HarnessProfiler {
    format: Format,
    base_dir: PathBuf,
    work: tempfile::TempDir,
    version: Option<String>,
    /// Runs so far: each writes its own `run-N.json` (a probe's sidecars stay until read).
    runs: u32,
    /// The first repetition of each target, run by [`Profiler::probe`] for its device, until
    /// [`Profiler::capture`] asks for it: (target, size key, rep, what it gave).
    probed: Vec<(String, String, u32, Result<Capture, ProfileError>)>,
    /// The device each target's harness named, by target.
    devices: std::collections::BTreeMap<String, String>,
}

impl HarnessProfiler {
    /// # Errors
    /// When no temporary directory can be made.
    pub fn new(base_dir: &Path, format: Format) -> Result<Self, crate::Error> {
        Ok(Self {
            format,
            base_dir: base_dir.to_path_buf(),
            work: crate::foundation::fsutil::signal_safe_temp_dir("cgp-gate-harness-")?,
            version: None,
            runs: 0,
            probed: Vec::new(),
            devices: std::collections::BTreeMap::new(),
        })
    }
}

impl Drop for HarnessProfiler {
    fn drop(&mut self) {
        crate::foundation::fsutil::forget_temp_dir(self.work.path());
    }
}

impl Profiler for HarnessProfiler {
    fn name(&self) -> &'static str {
        kind_of(self.format).as_str()
    }

    fn version(&mut self) -> Result<String, ProfileError> {
        // The harness's version is in its file (nvbench's git version, Google Benchmark's
        // library_version), known after the first run.
        Ok(self.version.clone().unwrap_or_else(|| "unknown".to_owned()))
    }

    fn capture(&mut self, job: Job<'_>) -> Result<Capture, ProfileError> {
        let key = job.size.key();
        if let Some(at) = self
            .probed
            .iter()
            .position(|(t, s, r, _)| *t == job.target.name && *s == key && *r == job.rep)
        {
            return self.probed.remove(at).3;
        }
        self.run_once(job)
    }

    fn probe(&mut self, targets: &[&Target]) {
        for t in targets {
            if t.profiler != kind_of(self.format) || self.devices.contains_key(&t.name) {
                continue;
            }
            let Some(size) = t.sizes.first() else {
                continue;
            };
            let job = Job {
                target: t,
                size,
                rep: 0,
            };
            let got = self.run_once(job);
            if let Ok(c) = &got
                && let Some(d) = device_of(self.format, t, c)
            {
                self.devices.insert(t.name.clone(), d);
            }
            self.probed.push((t.name.clone(), size.key(), 0, got));
        }
    }

    fn harness_device(&self, target: &Target) -> Option<String> {
        self.devices.get(&target.name).cloned()
    }
}

/// The device the harness file of `capture` names for `target`: the device of its first selected
/// benchmark, else the file's first device.
fn device_of(format: Format, target: &Target, capture: &Capture) -> Option<String> {
    let file = harness::read(
        capture.output.as_bytes(),
        &capture.origin,
        &sidecars_beside(&capture.origin),
    )
    .ok()
    .filter(|f| f.format == format)?;
    file.entries
        .iter()
        .filter(|e| selects(target.kernel.as_ref(), e))
        .find_map(|e| e.device.clone())
        .or_else(|| file.devices.first().cloned())
}

impl HarnessProfiler {
    /// Run the benchmark program once, for `job`.
    fn run_once(&mut self, job: Job<'_>) -> Result<Capture, ProfileError> {
        use crate::ncu::runner::{Invocation, output_tail, run};
        let ctx = job_context(job);
        let app = app_argv(job.target, job.size)
            .map_err(|e| ProfileError::new(FailureKind::BadOutput, ctx.clone(), e))?;
        let Some((program, args)) = app.split_first() else {
            return Err(ProfileError::new(
                FailureKind::BadOutput,
                ctx,
                "the command is empty",
            ));
        };
        self.runs += 1;
        let out = self.work.path().join(format!("run-{}.json", self.runs));
        for stale in [
            out.clone(),
            sidecar_dir(&out, "-bin"),
            sidecar_dir(&out, "-freqs-bin"),
        ] {
            let _ = std::fs::remove_file(&stale);
            let _ = std::fs::remove_dir_all(&stale);
        }
        let cwd = job.target.cwd.clone().unwrap_or_else(|| self.base_dir.clone());
        let live = live(self.format, &out, &app, &cwd);
        let mut all: Vec<OsString> = args.iter().map(OsString::from).collect();
        all.extend(live.flags.iter().map(OsString::from));
        let mut env = crate::profile::program_env(job.target);
        env.extend(live.env.iter().cloned());
        let stem = self.work.path().join(format!("run-{}", self.runs));
        let inv = Invocation {
            program: PathBuf::from(program),
            args: all,
            cwd: Some(cwd),
            env,
            timeout: job.target.timeout,
            stdout: stem.with_extension("stdout"),
            stderr: stem.with_extension("stderr"),
        };
        let started = std::time::SystemTime::now();
        let argv: Vec<String> = std::iter::once(program.clone())
            .chain(inv.args.iter().map(|a| a.to_string_lossy().into_owned()))
            .collect();
        let outcome = run(&inv).map_err(|e| {
            ProfileError::new(
                FailureKind::AppFailed,
                ctx.clone(),
                format!("{program} could not be started: {e}"),
            )
            .hint("check the target's `command` (and `cwd`): build the benchmark first?")
        })?;
        let output_tail = output_tail(&inv);
        if outcome.timed_out {
            return Err(ProfileError::new(
                FailureKind::Timeout,
                ctx,
                format!(
                    "the benchmark timed out after {:?}; it and its children were killed{}",
                    job.target.timeout,
                    tail_text(&output_tail)
                ),
            )
            .hint("raise the target's `timeout`, or run fewer benchmarks per process"));
        }
        let raw = written(self.format, &live.written, &out, &inv.stdout, started)
            .map_err(|e| ProfileError::new(FailureKind::BadOutput, ctx, e))?;
        if self.version.is_none()
            && let Ok(f) = harness::read(raw.as_bytes(), &out, &sidecars_beside(&out))
        {
            self.version = f.version;
        }
        let origin = match live.written {
            Written::File => out,
            Written::Stdout => inv.stdout.clone(),
            Written::Folder(dir) => dir,
        };
        Ok(Capture {
            output: Output::Text(raw),
            origin,
            argv: Some(argv),
            wall_seconds: Some(outcome.wall.as_secs_f64()),
            exit_code: outcome.code.or(outcome.signal.map(|s| 128 + s)),
            output_tail,
            kernels_seen: None,
            tool_version: self.version.clone(),
        })
    }
}

/// The file a live run wrote, as text: at `out`, on its standard output, or gathered from its
/// folder (the files written since `started`; when it has none, the standard output if that is
/// the format's, as cargo-criterion writes its messages there). A file that is not there is
/// empty (the caller says the program wrote none); one over the bound is an error.
fn written(
    format: Format,
    how: &Written,
    out: &Path,
    stdout: &Path,
    started: std::time::SystemTime,
) -> Result<String, String> {
    let text = |path: &Path| match crate::foundation::fsutil::read_bounded(path, harness::MAX_FILE_BYTES) {
        Ok(b) => Ok(String::from_utf8_lossy(&b).into_owned()),
        Err(e @ crate::foundation::fsutil::ReadError::TooLarge { .. }) => {
            Err(format!("{}: {}", path.display(), e.message("harness file")))
        }
        Err(_) => Ok(String::new()),
    };
    match how {
        Written::File => text(out),
        Written::Stdout => text(stdout),
        Written::Folder(dir) => match dir
            .is_dir()
            .then(|| reader(format).gather(dir, Some(started)))
            .flatten()
        {
            Some(Ok(bytes)) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
            Some(Err(e)) => Err(format!("{e}\nhelp: {}", e.help)),
            None => {
                let printed = text(stdout)?;
                let own = harness::registry::parse(printed.as_bytes(), stdout)
                    .ok()
                    .is_some_and(|d| reader(format).detects(&d));
                Ok(if own { printed } else { String::new() })
            }
        },
    }
}

fn tail_text(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!("; last output:\n{tail}")
    }
}
