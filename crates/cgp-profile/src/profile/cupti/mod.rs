//! `profiler: cupti` targets (docs/cupti.md): the live backend and the samples one capture yields.
//!
//! A live repetition runs the target's own command (argv, never a shell) once, with the
//! environment of [`crate::cupti::inject::run_environment`] added: the CUDA driver loads
//! cgp-gate's injection library, which records every kernel launch through CUPTI's activity API
//! and writes one trace file per process (`crate::cupti::trace`). That file is the capture's
//! `raw` text and what a recording keeps (`DIR/<target>/<size>/<rep>.cupti`), so a recorded run
//! is judged exactly as a live one.
//!
//! Samples are per launch, as for ncu: `gpu__time_duration.sum` (end - start of the kernel
//! record) and the launch configuration under ncu's names (`spec::CUPTI_METRICS`). The kernel
//! filter, `launch_skip` and `launch_count` select launches as ncu does (`profile::filter`), in
//! launch order (the correlation ID of the launch call); `warmup` is dropped by the caller, as
//! for ncu.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::measured::samples::SampleSet;
use crate::plan::app_argv;
use crate::profile::backend::{Backend, DryRun, LiveSetup, RecordedAs};
use crate::profile::{Capture, FailureKind, Job, ProfileError, Profiler, job_context};
use crate::spec::{CUPTI_METRICS, DERIVED_PREFIX, Target};

mod samples;
pub use samples::{extract, select};

/// The cupti backend (`profiler: cupti`): the program runs with cgp-gate's injection library.
#[derive(Debug, Clone, Copy)]
pub struct CuptiBackend;

impl Backend for CuptiBackend {
    fn kind(&self) -> crate::spec::ProfilerKind {
        crate::spec::ProfilerKind::Cupti
    }
    fn needs(&self) -> &'static [crate::profile::machine::Need] {
        &[
            crate::profile::machine::Need::Gpu,
            crate::profile::machine::Need::Libcupti,
        ]
    }

    fn live(&self, setup: &LiveSetup<'_>) -> Result<Box<dyn Profiler>, crate::Error> {
        let mut cupti = CuptiProfiler::new(setup.base_dir)?;
        if let Some(t) = setup.targets.first() {
            cupti.version_of(t);
        }
        Ok(Box::new(cupti))
    }

    fn extract(&self, job: Job<'_>, capture: &Capture) -> Result<SampleSet, ProfileError> {
        extract(job, capture)
    }

    fn recorded_as(&self) -> &'static [RecordedAs] {
        // A cupti repetition is its trace file, and only that (docs/cupti.md).
        &[RecordedAs {
            extension: "cupti",
            binary: false,
            what: "recorded CUPTI trace",
        }]
    }

    fn selects_kernels(&self) -> bool {
        // Filtered on the whole names of its records already (`select`), as a live run is.
        true
    }

    fn program_can_forge(&self) -> Option<&'static str> {
        Some(
            "CUPTI's trace is written inside the program's own process: code that reads CGP_GATE_CUPTI_NONCE before it initialises CUDA can write a trace with this run's nonce and any times (docs/cupti.md, \"What the program under test can forge\"); gate code you do not trust with `profiler: ncu` or `nsys`",
        )
    }

    fn fingerprint(
        &self,
        fp: crate::gpu::fingerprint::Fingerprint,
        version: &str,
    ) -> crate::gpu::fingerprint::Fingerprint {
        fp.measured_by(crate::spec::ProfilerKind::Cupti, version)
    }

    fn dry_run(&self, base_dir: &Path, _targets: &[&Target]) -> Result<Box<dyn DryRun>, crate::Error> {
        Ok(Box::new(CuptiDryRun(CuptiProfiler::new(base_dir)?)))
    }
}

/// `profile --dry-run` of cupti targets: the program itself, with the variables that load the
/// injection library in front (`NAME=value cmd args`); the trace goes to `<target>.cupti`.
struct CuptiDryRun(CuptiProfiler);

impl DryRun for CuptiDryRun {
    fn preamble(&self) -> Vec<String> {
        Vec::new()
    }

    fn line(&mut self, job: Job<'_>) -> Result<String, crate::Error> {
        // A command that cannot be rendered is a usage error here, as for every backend.
        app_argv(job.target, job.size).map_err(crate::Error::Usage)?;
        let trace = PathBuf::from(format!("{}.cupti", job.target.name));
        let run = self.0.plan_to(job, &trace)?;
        Ok(shell_line(&argv_with_env(&run.env, &run.app)))
    }
}

/// The metrics a capture of `target` yields: its gated metrics that CUPTI measures, and the
/// duration when a derived metric needs it (the spec refused every other metric).
pub fn cupti_metrics(target: &Target) -> Vec<String> {
    let mut m: Vec<String> = target
        .metrics
        .iter()
        .filter(|m| CUPTI_METRICS.contains(&m.name.as_str()))
        .map(|m| m.name.clone())
        .collect();
    if target.metrics.iter().any(|m| m.name.starts_with(DERIVED_PREFIX)) {
        m.push(crate::plan::DURATION_METRIC.to_owned());
    }
    m.sort();
    m.dedup();
    m
}

/// The version cgp-gate reports for a libcupti: the version in its resolved file name
/// (`libcupti.so.2022.3.0` -> `2022.3.0`; `libcupti.so.12` -> `12`), else its path.
pub fn libcupti_version(path: &Path) -> String {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match name.strip_prefix("libcupti.so.") {
        Some(v) if !v.is_empty() => v.to_owned(),
        _ => real.display().to_string(),
    }
}

const LOCATE_HINT: &str = "set `libcupti:` on the target or CGP_GATE_LIBCUPTI to the libcupti.so of the program's CUDA version; without a GPU, use --replay DIR with a recording";

/// What one repetition runs: the variables added to the program's environment, and its argv.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub env: Vec<(OsString, OsString)>,
    pub app: Vec<String>,
}

/// Runs the program with the injection library for each job.
#[derive(Debug)]
pub struct CuptiProfiler {
    base_dir: PathBuf,
    work: tempfile::TempDir,
    /// libcupti per target's `libcupti:` (None: searched), found once.
    found: BTreeMap<Option<PathBuf>, Result<PathBuf, String>>,
    /// The `libcupti:` whose version [`Profiler::version`] reports (the first cupti target's).
    versioned: Option<PathBuf>,
}

impl CuptiProfiler {
    /// # Errors
    /// When no temporary directory can be made.
    pub fn new(base_dir: &Path) -> Result<Self, crate::Error> {
        let work = crate::foundation::fsutil::signal_safe_temp_dir("cgp-gate-cupti-")?;
        Ok(Self {
            base_dir: base_dir.to_path_buf(),
            work,
            found: BTreeMap::new(),
            versioned: None,
        })
    }

    /// Report the version of the libcupti `target` loads (the run's first cupti target).
    pub fn version_of(&mut self, target: &Target) {
        self.versioned.clone_from(&target.libcupti);
    }

    /// The libcupti `target` loads.
    ///
    /// # Errors
    /// [`FailureKind::ProfilerError`] naming every place searched.
    pub fn libcupti(&mut self, target: &Target) -> Result<PathBuf, ProfileError> {
        let found = self
            .found
            .entry(target.libcupti.clone())
            .or_insert_with(|| {
                crate::cupti::locate::find_libcupti(target.libcupti.as_deref()).map_err(|e| e.to_string())
            })
            .clone();
        found.map_err(|e| ProfileError::new(FailureKind::ProfilerError, "", e).hint(LOCATE_HINT))
    }

    /// What one job runs: the variables added to the environment, the argv, and the trace file
    /// (in this profiler's temporary folder).
    ///
    /// # Errors
    /// No libcupti, no injection library, or a command that cannot be rendered.
    pub fn plan(&mut self, job: Job<'_>) -> Result<(RunPlan, PathBuf), ProfileError> {
        let out = self.work.path().join(format!("run-{}.cupti", job.rep));
        Ok((self.plan_to(job, &out)?, out))
    }

    /// [`CuptiProfiler::plan`] with the trace written to `out` (`profile --dry-run` names a
    /// file in the program's working folder, so the printed line can be run by hand).
    ///
    /// # Errors
    /// No libcupti, no injection library, or a command that cannot be rendered.
    pub fn plan_to(&mut self, job: Job<'_>, out: &Path) -> Result<RunPlan, ProfileError> {
        let app = app_argv(job.target, job.size)
            .map_err(|e| ProfileError::new(FailureKind::BadOutput, job_context(job), e))?;
        let libcupti = self.libcupti(job.target).map_err(|mut e| {
            e.context = job_context(job);
            e
        })?;
        let library = crate::cupti::inject::injection_library().map_err(|e| {
            ProfileError::new(FailureKind::ProfilerError, job_context(job), e.to_string())
                .hint("use `profiler: ncu` for this target, or a Linux build of cgp-gate with a writable cache folder")
        })?;
        let nonce = crate::cupti::inject::new_nonce().map_err(|e| {
            ProfileError::new(
                FailureKind::Io,
                job_context(job),
                format!("cannot draw the run's nonce from /dev/urandom: {e}"),
            )
        })?;
        Ok(RunPlan {
            env: crate::cupti::inject::run_environment(&library, &libcupti, out, &nonce),
            app,
        })
    }
}

impl Drop for CuptiProfiler {
    fn drop(&mut self) {
        // The `TempDir` removes the folder itself.
        crate::foundation::fsutil::forget_temp_dir(self.work.path());
    }
}

/// `NAME=value` words in front of the program's argv: the command line a user pastes into a
/// shell to run a repetition by hand (shown shell-quoted by `profile --dry-run` and in hints).
pub fn argv_with_env(env: &[(OsString, OsString)], app: &[String]) -> Vec<String> {
    env.iter()
        .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
        .chain(app.iter().cloned())
        .collect()
}

/// `argv` (from [`argv_with_env`]) as one line for a POSIX shell: the leading `NAME=value` words
/// stay assignments (only the value is quoted: a quoted `'NAME=value'` would be a command name),
/// the rest are quoted as needed (shlex). For display only, never executed.
pub fn shell_line(argv: &[String]) -> String {
    let mut assignments = true;
    argv.iter()
        .map(|w| {
            if assignments
                && let Some((name, value)) = w.split_once('=')
                && !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                return format!("{name}={}", crate::profile::launches::shell_word(value));
            }
            assignments = false;
            crate::profile::launches::shell_word(w)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl Profiler for CuptiProfiler {
    fn name(&self) -> &'static str {
        "cupti"
    }

    fn version(&mut self) -> Result<String, ProfileError> {
        // The libcupti of the first cupti target (its `libcupti:`, else the search).
        let key = self.versioned.clone();
        let found = self
            .found
            .entry(key.clone())
            .or_insert_with(|| crate::cupti::locate::find_libcupti(key.as_deref()).map_err(|e| e.to_string()))
            .clone();
        found
            .map(|p| libcupti_version(&p))
            .map_err(|e| ProfileError::new(FailureKind::ProfilerError, "", e).hint(LOCATE_HINT))
    }

    fn capture(&mut self, job: Job<'_>) -> Result<Capture, ProfileError> {
        use crate::ncu::runner::{Invocation, output_tail, run};
        let (RunPlan { env, app }, out) = self.plan(job)?;
        let _ = std::fs::remove_file(&out);
        let Some((program, args)) = app.split_first() else {
            return Err(ProfileError::new(
                FailureKind::BadOutput,
                job_context(job),
                "the command is empty",
            ));
        };
        let stem = self.work.path().join(format!("run-{}", job.rep));
        let mut vars = crate::profile::program_env(job.target);
        for (k, v) in &env {
            vars.insert(k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned());
        }
        // The runner scrubs the CI's credentials from the environment and kills the whole
        // process group on timeout, as for ncu.
        let inv = Invocation {
            program: PathBuf::from(program),
            args: args.iter().map(OsString::from).collect(),
            cwd: Some(job.target.cwd.clone().unwrap_or_else(|| self.base_dir.clone())),
            env: vars,
            timeout: job.target.timeout,
            stdout: stem.with_extension("stdout"),
            stderr: stem.with_extension("stderr"),
        };
        let argv = argv_with_env(&env, &app);
        let outcome = run(&inv).map_err(|e| {
            let kind = if e.kind() == std::io::ErrorKind::NotFound {
                FailureKind::AppFailed
            } else {
                FailureKind::Io
            };
            ProfileError::new(
                kind,
                job_context(job),
                format!("{program} could not be started: {e}"),
            )
            .hint("check the target's `command` (and `cwd`): build the program first?")
        })?;
        let output_tail = output_tail(&inv);
        let others = other_traces(job, &out);
        if outcome.timed_out {
            return Err(ProfileError::new(
                FailureKind::Timeout,
                job_context(job),
                format!(
                    "timed out after {:?} under CUPTI; the program and its children were killed{}",
                    job.target.timeout,
                    if output_tail.is_empty() { String::new() } else { format!("; last output:\n{output_tail}") }
                ),
            )
            .hint("raise the target's `timeout`, or check whether the program hangs (run it by hand: `cgp-gate profile --dry-run` prints the command)"));
        }
        others?;
        let raw =
            match crate::foundation::fsutil::read_bounded(&out, crate::foundation::fsutil::limits::NCU_CSV) {
                Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                Err(e @ crate::foundation::fsutil::ReadError::TooLarge { .. }) => {
                    return Err(ProfileError::new(
                        FailureKind::BadOutput,
                        job_context(job),
                        format!("{}: {}", out.display(), e.message("CUPTI trace")),
                    )
                    .hint("profile fewer launches (`launch_count`) or a smaller size"));
                }
                // No file: the driver never loaded the library (classified by `extract`).
                Err(_) => String::new(),
            };
        authentic(job, &env, &out, &raw)?;
        Ok(Capture {
            output: crate::profile::Output::Text(raw),
            origin: out,
            argv: Some(argv),
            wall_seconds: Some(outcome.wall.as_secs_f64()),
            exit_code: outcome.code.or(outcome.signal.map(|s| 128 + s)),
            output_tail,
            kernels_seen: None,
            tool_version: None,
        })
    }
}

/// The trace at `out` holds, in its header, the nonce this run gave the library (issue 44, item 3:
/// docs/cupti.md, "What the program under test can forge"). A trace without it, or with another
/// run's, was written or copied by the program itself, not by the library in this run: the run
/// fails, exit 3. No file at all is `extract`'s error (the program never initialised CUDA); a
/// header that cannot be read is `extract`'s error too.
fn authentic(job: Job<'_>, env: &[(OsString, OsString)], out: &Path, raw: &str) -> Result<(), ProfileError> {
    let Some(nonce) = crate::cupti::trace::header_nonce(raw) else {
        return Ok(());
    };
    let expected = env
        .iter()
        .find(|(k, _)| k == crate::cupti::inject::NONCE_ENV)
        .map(|(_, v)| v.to_string_lossy().into_owned());
    if expected.is_some() && nonce == expected {
        return Ok(());
    }
    Err(ProfileError::new(
        FailureKind::ProfilerError,
        job_context(job),
        format!(
            "the CUPTI trace {} was not written by cgp-gate's injection library in this run: its header {}; the program under test wrote or copied it, and no number of this run is trusted",
            out.display(),
            if nonce.is_some() { "carries another run's nonce" } else { "carries no nonce" }
        ),
    )
    .hint("a program must not write to $CGP_GATE_CUPTI_OUT; gate code you do not trust with `profiler: ncu` (docs/cupti.md, \"What the program under test can forge\")"))
}

/// Other processes of the program that initialised CUDA write `<trace>.<pid>` beside the trace
/// (docs/cupti.md, `cupti::trace::files_of`): their kernels are not gated, and the user must
/// know. A CUPTI refusal or dropped records in any of them fails the run (issue 44, item 3): a
/// program that writes a trace of its own to the expected path and then initialises CUDA sends
/// the library's real trace, with CUPTI's refusal, to such a file. The files are removed.
fn other_traces(job: Job<'_>, out: &Path) -> Result<(), ProfileError> {
    let children: Vec<PathBuf> = crate::cupti::trace::files_of(out)
        .into_iter()
        .filter(|p| p != out)
        .collect();
    if children.is_empty() {
        return Ok(());
    }
    eprintln!(
        "warning: {}: {} other process(es) of the program initialised CUDA; CUPTI timed their kernels apart and cgp-gate gates only the first process's (docs/cupti.md)",
        job_context(job),
        children.len()
    );
    let mut failure = None;
    for c in &children {
        let bytes = crate::foundation::fsutil::read_bounded(c, crate::foundation::fsutil::limits::NCU_CSV);
        let trace = bytes.ok().and_then(|b| crate::cupti::trace::parse(&b).ok());
        let _ = std::fs::remove_file(c);
        let Some(t) = trace else { continue };
        let what = match (&t.error, t.dropped) {
            (Some(f), _) => format!(
                "CUPTI refused to start: {} returned {} (code {})",
                f.call, f.message, f.code
            ),
            (None, n) if n > 0 => format!("CUPTI dropped {n} activity record(s)"),
            _ => continue,
        };
        failure.get_or_insert_with(|| {
            ProfileError::new(
                FailureKind::ProfilerError,
                job_context(job),
                format!("in another process of the program (pid {}, {}): {what}; no trace of this run is trusted", t.pid, c.display()),
            )
            .hint("every process that initialises CUDA must be traced without a refusal or a loss; run the program by hand (`cgp-gate profile --dry-run` prints the command) and see which process fails")
        });
    }
    failure.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_line_keeps_assignments_and_quotes_values() {
        let argv: Vec<String> = [
            "CUDA_INJECTION64_PATH=/c a/lib.so",
            "CGP_GATE_CUPTI_OUT=/t/x.cupti",
            "./bench",
            "A=b",
            "two words",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let line = shell_line(&argv);
        assert!(
            line.starts_with("CUDA_INJECTION64_PATH='/c a/lib.so' CGP_GATE_CUPTI_OUT=/t/x.cupti ./bench "),
            "{line}"
        );
        // A shell reads it back as the same words.
        assert_eq!(shlex::split(&line).unwrap(), argv);
    }

    #[test]
    fn the_libcupti_version_is_its_file_names() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("libcupti.so.2022.3.0");
        std::fs::write(&real, b"").unwrap();
        let link = dir.path().join("libcupti.so");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(libcupti_version(&link), "2022.3.0");
        let odd = dir.path().join("cupti.so");
        std::fs::write(&odd, b"").unwrap();
        assert!(libcupti_version(&odd).ends_with("cupti.so"));
    }
}
