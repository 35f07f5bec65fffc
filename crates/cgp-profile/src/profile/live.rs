//! The live backend: runs Nsight Compute.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::ncu::command::{NcuRelease, list_kernels_options, ncu_options_for, unsupported_options};
use crate::ncu::install::{NCU_ENV, locate_ncu, ncu_version};
use crate::ncu::runner::{Invocation, output_tail, run};
use crate::plan::{app_argv, ncu_metrics};
use crate::profile::backend::{Backend, DryRun, LiveSetup, RecordedAs};
use crate::profile::{Capture, FailureKind, Job, ProfileError, Profiler, job_context};
use crate::spec::{ProfilerKind, Target};

const NOT_FOUND_HINT: &str = "install NVIDIA Nsight Compute (it ships with the CUDA toolkit) and put `ncu` on PATH, \
     or set CGP_GATE_NCU=/path/to/ncu; without a GPU, use --replay DIR with a recording";

/// Runs ncu for each job.
#[derive(Debug)]
pub struct NcuProfiler {
    ncu: Option<PathBuf>,
    /// Relative `cwd`s in the spec are resolved against this (the spec's directory).
    base_dir: PathBuf,
    work: tempfile::TempDir,
    version: Option<String>,
    busy_retry_delays: Vec<std::time::Duration>,
}

/// Waits before retrying when another tool (DCGM) holds the counters.
const BUSY_RETRY_DELAYS: [std::time::Duration; 3] = [
    std::time::Duration::from_secs(2),
    std::time::Duration::from_secs(5),
    std::time::Duration::from_secs(10),
];

/// Check what a live run needs from the spec's targets before anything runs: every `cwd` must be
/// an existing folder (otherwise spawning ncu fails with "not found", which reads as ncu missing).
///
/// # Errors
/// [`crate::Error::Input`] naming the spec, the target and the folder.
pub fn preflight(spec: &crate::spec::Spec, targets: &[&crate::spec::Target]) -> Result<(), crate::Error> {
    for t in targets {
        if let Some(cwd) = &t.cwd
            && !cwd.is_dir()
        {
            let what = if cwd.exists() {
                "is not a folder"
            } else {
                "does not exist"
            };
            return Err(crate::Error::input(
                &spec.path,
                format!(
                    "the `cwd` of target `{}`, {}, {what}; create it (build the benchmark first?) or fix `cwd:`",
                    t.name,
                    cwd.display()
                ),
            ));
        }
    }
    Ok(())
}

impl NcuProfiler {
    /// # Errors
    /// When no temporary directory can be made.
    pub fn new(base_dir: &Path) -> Result<Self, crate::Error> {
        let work = crate::foundation::fsutil::signal_safe_temp_dir("cgp-gate-")?;
        Ok(Self {
            ncu: locate_ncu(),
            base_dir: base_dir.to_path_buf(),
            work,
            version: None,
            busy_retry_delays: BUSY_RETRY_DELAYS.to_vec(),
        })
    }

    /// Replace the waits between busy-counter retries (the command layer's test override).
    pub fn set_busy_retry_delays(&mut self, delays: Vec<std::time::Duration>) {
        self.busy_retry_delays = delays;
    }

    /// The ncu path, or the classified "not found" error.
    ///
    /// # Errors
    /// [`FailureKind::NcuNotFound`].
    pub fn ncu_path(&self) -> Result<&Path, ProfileError> {
        self.ncu.as_deref().ok_or_else(|| {
            let what = std::env::var(NCU_ENV)
                .map(|v| format!("{NCU_ENV}={v} is not an executable file"))
                .unwrap_or_else(|_| "ncu was not found on PATH".to_owned());
            ProfileError::new(FailureKind::NcuNotFound, "", what).hint(NOT_FOUND_HINT)
        })
    }

    fn invoke(
        &self,
        args: Vec<OsString>,
        job: Job<'_>,
        stem: &str,
    ) -> Result<(Invocation, crate::ncu::runner::Outcome), ProfileError> {
        let ncu = self.ncu_path()?.to_path_buf();
        // The spec resolved a relative `cwd` against its own directory already.
        let cwd = Some(job.target.cwd.clone().unwrap_or_else(|| self.base_dir.clone()));
        let inv = Invocation {
            program: ncu,
            args,
            cwd,
            env: crate::profile::program_env(job.target),
            timeout: job.target.timeout,
            stdout: self.work.path().join(format!("{stem}.stdout")),
            stderr: self.work.path().join(format!("{stem}.stderr")),
        };
        let outcome = run(&inv).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                ProfileError::new(
                    FailureKind::NcuNotFound,
                    job_context(job),
                    format!("{} could not be started: {e}", inv.program.display()),
                )
                .hint(NOT_FOUND_HINT)
            } else {
                ProfileError::new(
                    FailureKind::Io,
                    job_context(job),
                    format!("failed to run {}: {e}", inv.program.display()),
                )
            }
        })?;
        Ok((inv, outcome))
    }

    /// The installed ncu's release, once its version was read.
    fn release(&self) -> Option<NcuRelease> {
        self.version.as_deref().and_then(NcuRelease::from_version)
    }

    /// Kernels the application launches, from an unfiltered diagnostic run (best effort).
    fn list_kernels(&self, job: Job<'_>, app: &[String]) -> Option<Vec<String>> {
        let log = self.work.path().join("list-kernels.csv");
        let mut args = list_kernels_options(self.release(), job.target, &log);
        args.extend(app.iter().map(OsString::from));
        let (_, outcome) = self.invoke(args, job, "list-kernels").ok()?;
        if outcome.timed_out {
            return None;
        }
        let raw =
            crate::foundation::fsutil::read_text(&log, crate::foundation::fsutil::limits::NCU_CSV).ok()?;
        let parsed = crate::ncu::parse::parse(&raw).ok()?;
        let mut names: Vec<String> = Vec::new();
        for l in parsed.launches {
            if !names.contains(&l.kernel) {
                names.push(l.kernel);
            }
        }
        Some(names)
    }
}

impl Drop for NcuProfiler {
    fn drop(&mut self) {
        // The `TempDir` removes the folder itself.
        crate::foundation::fsutil::forget_temp_dir(self.work.path());
    }
}

impl Profiler for NcuProfiler {
    fn name(&self) -> &'static str {
        "ncu"
    }

    fn busy_retry_delays(&mut self, _job: Job<'_>) -> Vec<std::time::Duration> {
        self.busy_retry_delays.clone()
    }

    fn version(&mut self) -> Result<String, ProfileError> {
        if let Some(v) = &self.version {
            return Ok(v.clone());
        }
        let ncu = self.ncu_path()?.to_path_buf();
        let v = ncu_version(&ncu, Duration::from_secs(60))
            .map_err(|e| ProfileError::new(FailureKind::ProfilerError, "", e).hint(NOT_FOUND_HINT))?;
        self.version = Some(v.clone());
        Ok(v)
    }

    fn capture(&mut self, job: Job<'_>) -> Result<Capture, ProfileError> {
        let app = app_argv(job.target, job.size)
            .map_err(|e| ProfileError::new(FailureKind::BadOutput, job_context(job), e))?;
        let stem = format!("run-{}", job.rep);
        let log = self.work.path().join(format!("{stem}.csv"));
        let _ = std::fs::remove_file(&log);
        // The argv depends on what the installed ncu has (`--config-file` is not in 2022.3).
        let _ = self.version();
        let missing = unsupported_options(self.release(), job.target);
        if !missing.is_empty() {
            let version = self.version.as_deref().unwrap_or("unknown");
            return Err(ProfileError::new(
                FailureKind::ProfilerError,
                job_context(job),
                format!(
                    "ncu {version} does not support `{}`, which target `{}` asks for",
                    missing.join("`, `"),
                    job.target.name
                ),
            )
            .hint("install a newer Nsight Compute, or choose a replay mode this ncu has (`ncu --help`)"));
        }
        let mut args = ncu_options_for(self.release(), job.target, &ncu_metrics(job.target), &log);
        args.extend(app.iter().map(OsString::from));
        let (inv, outcome) = self.invoke(args, job, &stem)?;
        if !outcome.escaped.is_empty() {
            // Not an error of the measurement, but the user must know: something the benchmark
            // started would have kept running (and maybe kept using the GPU) after the run.
            let list: Vec<String> = outcome
                .escaped
                .iter()
                .map(|(pid, comm)| format!("pid {pid} (`{comm}`)"))
                .collect();
            crate::foundation::sanitize::eprint_line(&format!(
                "warning: {}: {} left the process group of ncu and the application (setsid) and outlived them; cgp-gate killed {}",
                job_context(job),
                list.join(", "),
                if list.len() == 1 { "it" } else { "them" }
            ));
        }
        let argv: Vec<String> = std::iter::once(inv.program.to_string_lossy().into_owned())
            .chain(inv.args.iter().map(|a| a.to_string_lossy().into_owned()))
            .collect();
        // ncu's log is ours (a temporary folder), so only its size is in doubt.
        let raw =
            match crate::foundation::fsutil::read_bounded(&log, crate::foundation::fsutil::limits::NCU_CSV) {
                Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                Err(e @ crate::foundation::fsutil::ReadError::TooLarge { .. }) => {
                    return Err(ProfileError::new(
                        FailureKind::BadOutput,
                        job_context(job),
                        format!("{}: {}", log.display(), e.message("ncu output")),
                    )
                    .hint("profile fewer launches (`launch_count`) or fewer metrics per target"));
                }
                Err(_) => String::new(),
            };
        let output_tail = output_tail(&inv);
        if outcome.timed_out {
            return Err(ProfileError::new(
                FailureKind::Timeout,
                job_context(job),
                format!(
                    "timed out after {:?}; the profiler and the application were killed{}",
                    job.target.timeout,
                    if output_tail.is_empty() { String::new() } else { format!("; last output:\n{output_tail}") }
                ),
            )
            .hint("raise the target's `timeout`, lower `launch_count`, or check whether the application hangs under ncu (try --replay-mode application)"));
        }
        // Only when nothing else went wrong: a permission error also prints "No kernels were profiled".
        let scanned = crate::ncu::log::scan(&raw);
        let kernels_seen = if scanned.no_kernels
            && scanned.errors.is_empty()
            && outcome.code == Some(0)
            && (job.target.kernel.is_some() || !job.target.nvtx.is_empty())
        {
            self.list_kernels(job, &app)
        } else {
            None
        };
        Ok(Capture {
            output: crate::profile::Output::Text(raw),
            origin: log,
            argv: Some(argv),
            wall_seconds: Some(outcome.wall.as_secs_f64()),
            exit_code: outcome.code.or(outcome.signal.map(|s| 128 + s)),
            output_tail,
            kernels_seen,
            tool_version: self.version.clone(),
        })
    }
}

/// The ncu backend (`profiler: ncu`, the default): per-kernel metrics, every launch replayed.
#[derive(Debug, Clone, Copy)]
pub struct NcuBackend;

impl Backend for NcuBackend {
    fn kind(&self) -> ProfilerKind {
        ProfilerKind::Ncu
    }
    fn needs(&self) -> &'static [crate::profile::machine::Need] {
        use crate::profile::machine::Need;
        &[Need::Gpu, Need::Counters, Need::Ncu]
    }

    fn live(&self, setup: &LiveSetup<'_>) -> Result<Box<dyn Profiler>, crate::Error> {
        let mut ncu = NcuProfiler::new(setup.base_dir)?;
        if let Some(d) = setup.busy_retry_delays {
            ncu.set_busy_retry_delays(d.to_vec());
        }
        Ok(Box::new(ncu))
    }

    fn extract(
        &self,
        job: Job<'_>,
        capture: &Capture,
    ) -> Result<crate::measured::samples::SampleSet, ProfileError> {
        crate::profile::extract::extract_ncu(job, capture)
    }

    fn recorded_as(&self) -> &'static [RecordedAs] {
        &[RecordedAs {
            extension: "csv",
            binary: false,
            what: "recorded ncu output",
        }]
    }

    fn fingerprint(
        &self,
        fp: crate::gpu::fingerprint::Fingerprint,
        _version: &str,
    ) -> crate::gpu::fingerprint::Fingerprint {
        // The fingerprint's profiler part is ncu's already (`gpu::fingerprint`).
        fp
    }

    fn dry_run(&self, _base_dir: &Path, targets: &[&Target]) -> Result<Box<dyn DryRun>, crate::Error> {
        // The command lines are built for the installed ncu, as a real run builds them.
        let (release, mut preamble) = dry_run_release();
        for t in targets {
            let missing = unsupported_options(release, *t);
            if !missing.is_empty() {
                preamble.push(format!(
                    "{}: this ncu has no {}: `profile` and `check` refuse this target before running it",
                    t.name,
                    missing.join(", ")
                ));
            }
        }
        Ok(Box::new(NcuDryRun { release, preamble }))
    }
}

/// `profile --dry-run` of ncu targets: ncu's argv for the installed release.
struct NcuDryRun {
    release: Option<NcuRelease>,
    preamble: Vec<String>,
}

impl DryRun for NcuDryRun {
    fn preamble(&self) -> Vec<String> {
        self.preamble.clone()
    }

    fn line(&mut self, job: Job<'_>) -> Result<String, crate::Error> {
        let app = app_argv(job.target, job.size).map_err(crate::Error::Usage)?;
        let metrics = ncu_metrics(job.target);
        let opts = ncu_options_for(self.release, job.target, &metrics, Path::new("<log>"));
        let argv: Vec<String> = std::iter::once("ncu".to_owned())
            .chain(opts.iter().map(|a| a.to_string_lossy().into_owned()))
            .chain(app)
            .collect();
        quoted(&argv, job.target)
    }
}

/// `argv` shell-quoted (shlex), so that the line can be pasted: a `regex:a|b` filter or an
/// argument with a space stays one word. Only a NUL byte cannot be quoted, and no argv can hold
/// one.
///
/// # Errors
/// [`crate::Error::Usage`] naming the target, for a NUL byte.
pub fn quoted(argv: &[String], target: &Target) -> Result<String, crate::Error> {
    shlex::try_join(argv.iter().map(String::as_str))
        .map_err(|e| crate::Error::Usage(format!("cannot quote the command line of {}: {e}", target.name)))
}

/// The installed ncu's release for `--dry-run`, and the line that says which ncu and release the
/// command lines are for (or that none was found and the newest release is assumed).
fn dry_run_release() -> (Option<NcuRelease>, Vec<String>) {
    use crate::ncu::command::OLDEST_CHECKED;
    let ncu = crate::ncu::install::detect_ncu();
    let release = ncu.version.as_deref().and_then(NcuRelease::from_version);
    let line = match (&ncu.path, &ncu.version, release) {
        (Some(path), Some(version), Some(r)) if r < OLDEST_CHECKED => format!(
            "ncu: {path} (version {version}); command lines for Nsight Compute {r}, which is older than the oldest release cgp-gate checks ({OLDEST_CHECKED}): ncu may reject an option (cgp-gate then names it)"
        ),
        (Some(path), Some(version), Some(r)) => {
            format!("ncu: {path} (version {version}); command lines for Nsight Compute {r}")
        }
        _ => format!(
            "ncu: {}; command lines for the newest Nsight Compute (every option cgp-gate knows; a run with ncu installed leaves out what its release lacks)",
            ncu.error.as_deref().unwrap_or("version unknown")
        ),
    };
    (release, vec![line])
}

/// What ncu's argv needs of a target (here, in the profile layer, so that neither `ncu` nor the
/// spec imports the other).
impl<'a> From<&'a crate::spec::Target> for crate::ncu::target::NcuTarget<'a> {
    fn from(t: &'a crate::spec::Target) -> Self {
        Self {
            clock_control: crate::gpu::fingerprint::effective_clock_control(&t.profiling, &t.clocks),
            cache_control: t.profiling.cache_control.as_str(),
            replay_mode: t.profiling.replay_mode.as_str(),
            kernel: t.kernel.as_ref().map(crate::spec::KernelFilter::ncu_arg),
            launch_skip: t.launch_skip,
            launch_count: t.launch_count,
            nvtx: &t.nvtx,
        }
    }
}
