//! `profiler: nsys` targets: the live backend (`nsys profile`, once per repetition) and the
//! samples one capture yields.
//!
//! A live repetition runs `nsys profile --trace cuda --cuda-graph-trace node --export sqlite ...
//! -- <command>` (argv, never a shell) and keeps the SQLite export: that is what a recording
//! holds (`DIR/<target>/<size>/<rep>.sqlite`). A recording may hold CSV instead
//! (`<rep>.csv`: the `cuda_gpu_trace` or `cuda_gpu_kern_sum` report); both read through
//! [`crate::nsys::read`], so a recorded run is judged exactly as a live one.
//!
//! Samples, one value per repetition, in ns (times) or counts:
//! `gpu_time`, `non_gpu_time` (the wall time nsys recorded for the session, else the wall time
//! cgp-gate measured around nsys, minus `gpu_time`), `category:<name>`, `kernel:<regex>`, and
//! `instances:` of the last two. Their series carry the kernel key [`WORKLOAD_KERNEL`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::measured::samples::{SampleSet, SeriesKey};
use crate::plan::app_argv;
use crate::profile::backend::{Backend, DryRun, LiveSetup, RecordedAs};
use crate::profile::{Capture, FailureKind, Job, Output, ProfileError, Profiler, job_context};
use crate::spec::{NsysMetric, Target, parse_nsys_metric};

use crate::nsys::read::{NSYS_ENV, locate_nsys, read_sqlite, read_text};
use crate::nsys::{Categories, RunBreakdown, Workload, breakdown};

/// The kernel column of every nsys series: a metric describes the whole workload.
pub const WORKLOAD_KERNEL: &str = "(workload)";

const NOT_FOUND_HINT: &str = "install NVIDIA Nsight Systems and put `nsys` on PATH, or set CGP_GATE_NSYS=/path/to/nsys; without a GPU, use --replay DIR with a recording";

/// The nsys options cgp-gate passes before the application (`--output` last but one).
pub fn nsys_profile_args(output: &Path) -> Vec<OsString> {
    let mut a: Vec<OsString> = [
        "profile",
        "--trace",
        "cuda",
        // No CPU sampling and no context-switch trace: cgp-gate reads GPU activity only, and
        // both cost time in the application (and, here without a GPU, made nsys 2022.4.2 hang).
        "--sample",
        "none",
        "--cpuctxsw",
        "none",
        // Kernels launched from CUDA graphs are traced one by one, with their own names.
        "--cuda-graph-trace",
        "node",
        "--export",
        "sqlite",
        "--stats",
        "false",
        "--force-overwrite",
        "true",
        "--output",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    a.push(output.as_os_str().to_owned());
    a
}

/// Runs `nsys profile` for each job.
#[derive(Debug)]
pub struct NsysProfiler {
    nsys: Option<PathBuf>,
    base_dir: PathBuf,
    work: tempfile::TempDir,
    version: Option<String>,
}

impl NsysProfiler {
    /// # Errors
    /// When no temporary directory can be made.
    pub fn new(base_dir: &Path) -> Result<Self, crate::Error> {
        let work = crate::foundation::fsutil::signal_safe_temp_dir("cgp-gate-nsys-")?;
        Ok(Self {
            nsys: locate_nsys(),
            base_dir: base_dir.to_path_buf(),
            work,
            version: None,
        })
    }

    fn nsys_path(&self) -> Result<&Path, ProfileError> {
        self.nsys.as_deref().ok_or_else(|| {
            let what = std::env::var(NSYS_ENV)
                .map(|v| format!("{NSYS_ENV}={v} is not an executable file"))
                .unwrap_or_else(|_| "nsys was not found on PATH".to_owned());
            ProfileError::new(FailureKind::NcuNotFound, "", what).hint(NOT_FOUND_HINT)
        })
    }
}

impl Drop for NsysProfiler {
    fn drop(&mut self) {
        // The `TempDir` removes the folder itself.
        crate::foundation::fsutil::forget_temp_dir(self.work.path());
    }
}

impl Profiler for NsysProfiler {
    fn name(&self) -> &'static str {
        "nsys"
    }

    fn version(&mut self) -> Result<String, ProfileError> {
        if let Some(v) = &self.version {
            return Ok(v.clone());
        }
        let nsys = self.nsys_path()?.to_path_buf();
        let out = std::process::Command::new(&nsys)
            .arg("--version")
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| {
                ProfileError::new(
                    FailureKind::NcuNotFound,
                    "",
                    format!("{} could not be started: {e}", nsys.display()),
                )
                .hint(NOT_FOUND_HINT)
            })?;
        // `NVIDIA Nsight Systems version 2022.4.2.1-df9881f`
        let text = String::from_utf8_lossy(&out.stdout);
        let v = text
            .split_whitespace()
            .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()) && w.contains('.'))
            .unwrap_or("unknown")
            .to_owned();
        self.version = Some(v.clone());
        Ok(v)
    }

    fn capture(&mut self, job: Job<'_>) -> Result<Capture, ProfileError> {
        use crate::ncu::runner::{Invocation, output_tail, run};
        let app = app_argv(job.target, job.size)
            .map_err(|e| ProfileError::new(FailureKind::BadOutput, job_context(job), e))?;
        let nsys = self.nsys_path()?.to_path_buf();
        let stem = self.work.path().join(format!("run-{}", job.rep));
        let export = stem.with_extension("sqlite");
        let _ = std::fs::remove_file(&export);
        let mut args = nsys_profile_args(&stem);
        args.extend(app.iter().map(OsString::from));
        let inv = Invocation {
            program: nsys.clone(),
            args,
            cwd: Some(job.target.cwd.clone().unwrap_or_else(|| self.base_dir.clone())),
            env: crate::profile::program_env(job.target),
            timeout: job.target.timeout,
            stdout: stem.with_extension("stdout"),
            stderr: stem.with_extension("stderr"),
        };
        let outcome = run(&inv).map_err(|e| {
            let kind = if e.kind() == std::io::ErrorKind::NotFound {
                FailureKind::NcuNotFound
            } else {
                FailureKind::Io
            };
            ProfileError::new(
                kind,
                job_context(job),
                format!("{} could not be started: {e}", nsys.display()),
            )
            .hint(NOT_FOUND_HINT)
        })?;
        let argv: Vec<String> = std::iter::once(inv.program.to_string_lossy().into_owned())
            .chain(inv.args.iter().map(|a| a.to_string_lossy().into_owned()))
            .collect();
        let output_tail = output_tail(&inv);
        if outcome.timed_out {
            return Err(ProfileError::new(
                FailureKind::Timeout,
                job_context(job),
                format!(
                    "nsys profile timed out after {:?}; nsys and the application were killed",
                    job.target.timeout
                ),
            )
            .hint("raise the target's `timeout`, or check whether the application hangs under nsys"));
        }
        // nsys records a raw stream (`.qdstrm`) and imports it into the report with its
        // QdstrmImporter; when it cannot find the importer, it says so on stdout, leaves the
        // stream and exits 0 (Debian's nsight-systems 2022.4.2 does, here). Then cgp-gate runs
        // the importer of the same install and `nsys export` itself; if that fails too, the
        // error says why (rather than "no export").
        let stream = stem.with_extension("qdstrm");
        let report = stem.with_extension("nsys-rep");
        let mut import_error = None;
        // (Only for a run that succeeded: a failed application is reported as such.)
        if outcome.code == Some(0) && !export.exists() && !report.exists() && stream.is_file() {
            // nsys could not import its stream: do what it would have done.
            match crate::nsys::read::qdstrm_importer(&nsys) {
                Some(importer) => {
                    match crate::nsys::read::import_qdstrm(&importer, &stream, self.work.path()).and_then(
                        |rep| crate::nsys::read::export_sqlite(&nsys, &rep, &export, self.work.path()),
                    ) {
                        // The raw stream can be large: only the export is kept.
                        Ok(()) => {
                            let _ = std::fs::remove_file(&stream);
                            let _ = std::fs::remove_file(&report);
                        }
                        Err(e) => import_error = Some(e.to_string()),
                    }
                }
                None => import_error = Some("no QdstrmImporter beside nsys".to_owned()),
            }
        }
        if let Some(why) = import_error {
            return Err(ProfileError::new(
                FailureKind::ProfilerError,
                job_context(job),
                format!(
                    "nsys traced the run but did not import its raw stream {} into a report, and neither could cgp-gate ({why}){}",
                    stream.display(),
                    if output_tail.is_empty() { String::new() } else { format!("; nsys said:\n{output_tail}") }
                ),
            )
            .hint("nsys could not run its QdstrmImporter (it ships in the host-linux-x64 folder of Nsight Systems): reinstall Nsight Systems, or check that `QdstrmImporter -i FILE.qdstrm` runs there"));
        }
        // The export is bounded like any input: a larger one is refused by the reader's row
        // limit, and SQLite reads it page by page.
        let sqlite = match std::fs::metadata(&export) {
            Ok(m) if m.len() > crate::nsys::read::MAX_SQLITE_BYTES => {
                return Err(ProfileError::new(
                    FailureKind::BadOutput,
                    job_context(job),
                    format!(
                        "the nsys export {} is {} bytes, more than the {} cgp-gate reads",
                        export.display(),
                        m.len(),
                        crate::nsys::read::MAX_SQLITE_BYTES
                    ),
                )
                .hint("trace a shorter run (fewer steps), or limit the trace with nsys's --capture-range"));
            }
            Ok(_) => std::fs::read(&export).ok(),
            Err(_) => None,
        };
        Ok(Capture {
            // No export: no output (`extract` says nsys wrote none).
            output: sqlite.map_or_else(Output::default, Output::Bytes),
            origin: export,
            argv: Some(argv),
            wall_seconds: Some(outcome.wall.as_secs_f64()),
            exit_code: outcome.code.or(outcome.signal.map(|s| 128 + s)),
            output_tail,
            kernels_seen: None,
            tool_version: self.version.clone(),
        })
    }
}

/// Read one capture into a workload.
fn workload(job: Job<'_>, capture: &Capture) -> Result<(Workload, Option<u64>), ProfileError> {
    let ctx = job_context(job);
    let bad = |e: crate::Error| {
        let text = e.to_string();
        // The reader's own advice, where it has one, is the one that fits.
        let own_help = text.contains("help: ");
        let err = ProfileError::new(FailureKind::BadOutput, ctx.clone(), text);
        if own_help {
            err
        } else {
            err.hint(
                "record the cuda_gpu_trace report (CSV) or the SQLite export (`nsys export --type sqlite`)",
            )
        }
    };
    match &capture.output {
        Output::Bytes(bytes) => {
            // SQLite reads files: the bytes go to a private temporary file first.
            let tmp = tempfile::Builder::new()
                .prefix("cgp-gate-capture-")
                .suffix(".sqlite")
                .tempfile()
                .map_err(|e| {
                    ProfileError::new(
                        FailureKind::Io,
                        ctx.clone(),
                        format!("cannot make a temporary file: {e}"),
                    )
                })?;
            std::fs::write(tmp.path(), bytes).map_err(|e| {
                ProfileError::new(
                    FailureKind::Io,
                    ctx.clone(),
                    format!("cannot write {}: {e}", tmp.path().display()),
                )
            })?;
            let w = read_sqlite(tmp.path(), &capture.origin).map_err(bad)?;
            let session = crate::nsys::read::session_duration_ns(tmp.path());
            Ok((w, session))
        }
        Output::Text(raw) => Ok((read_text(raw, &capture.origin).map_err(bad)?, None)),
    }
}

/// Turn one capture into samples: one value per metric of the target.
///
/// # Errors
/// A classified [`ProfileError`] naming the file and the metric.
pub fn extract(job: Job<'_>, capture: &Capture) -> Result<SampleSet, ProfileError> {
    let ctx = job_context(job);
    let origin = capture.origin.display().to_string();
    if let Some(code) = capture.exit_code.filter(|c| *c != 0) {
        let mut message = format!("the application (or nsys) exited with status {code}");
        if !capture.output_tail.is_empty() {
            message.push_str(&format!("; last output:\n{}", capture.output_tail));
        }
        return Err(ProfileError::new(FailureKind::AppFailed, ctx, message)
            .hint("run the command by hand under `nsys profile --trace cuda` to see why"));
    }
    if matches!(&capture.output, Output::Text(raw) if raw.is_empty()) && !capture.origin.is_file() {
        return Err(ProfileError::new(
            FailureKind::ProfilerError,
            ctx,
            format!("nsys wrote no SQLite export ({origin}){}", if capture.output_tail.is_empty() { String::new() } else { format!("; last output:\n{}", capture.output_tail) }),
        )
        .hint("check that the application ran CUDA work and that nsys can trace it (`nsys profile --trace cuda`)"));
    }
    let (w, session_ns) = workload(job, capture)?;
    let cats = Categories::new(job.target.categories.as_ref());
    let b = breakdown(&w, &cats);
    let wall_ns = wall_ns(session_ns, capture);
    let mut set = SampleSet::default();
    for ms in &job.target.metrics {
        let m = parse_nsys_metric(&ms.name)
            .map_err(|(msg, _)| ProfileError::new(FailureKind::BadOutput, ctx.clone(), msg))?;
        let need_trace = |what: &str| {
            ProfileError::new(
                FailureKind::BadOutput,
                ctx.clone(),
                format!(
                    "metric `{}` needs {what}, and {origin} is a kernel summary ({}) without start times",
                    ms.name, w.format
                ),
            )
            .hint("record the cuda_gpu_trace report or the SQLite export, which have start times")
        };
        let kernels_matching = |re: &regex::Regex| kernels_matching(&b, re, &ms.name, &ctx, &origin);
        let (value, unit): (u64, &str) = match &m {
            NsysMetric::GpuTime => (
                b.gpu_time_ns.ok_or_else(|| need_trace("the GPU busy time"))?,
                "ns",
            ),
            NsysMetric::NonGpuTime => {
                let gpu = b.gpu_time_ns.ok_or_else(|| need_trace("the GPU busy time"))?;
                let wall = wall_ns.ok_or_else(|| {
                    ProfileError::new(
                        FailureKind::BadOutput,
                        ctx.clone(),
                        format!("metric `non_gpu_time` needs the wall time of the run, and neither {origin} nor the recording's manifest has it"),
                    )
                    .hint("record with `cgp-gate check --record` (the manifest keeps each run's wall time), or drop `non_gpu_time`")
                })?;
                (wall.saturating_sub(gpu), "ns")
            }
            NsysMetric::Category(c) => (b.category(c).map_or(0, |x| x.time_ns), "ns"),
            NsysMetric::CategoryInstances(c) => (b.category(c).map_or(0, |x| x.instances), ""),
            NsysMetric::Kernel(re) => (kernels_matching(re)?.0, "ns"),
            NsysMetric::KernelInstances(re) => (kernels_matching(re)?.1, ""),
        };
        let key = SeriesKey {
            target: job.target.name.clone(),
            size: job.size.key(),
            kernel: WORKLOAD_KERNEL.to_owned(),
            metric: ms.name.clone(),
        };
        #[allow(clippy::cast_precision_loss, reason = "ns and counts below 2^53 are exact")]
        let value = value as f64;
        if let Some(why) = crate::measured::plausible::implausible(&ms.name, unit, value) {
            return Err(ProfileError::new(
                FailureKind::BadOutput,
                ctx.clone(),
                format!(
                    "metric `{}` in {origin} reads {why}; no GPU gives that reading: the output is damaged",
                    ms.name
                ),
            )
            .hint("use the output as nsys wrote it; profile (or record) it again"));
        }
        set.push(&key, unit, value, job.rep);
    }
    // Every category's time, gated or not (0 when none of its kernels ran): the stacked bars of
    // the reports show the whole breakdown (`nsys::bars`), and `baseline update` keeps it. Only
    // the metrics the spec lists are judged.
    for name in cats.names() {
        let metric = crate::spec::category_metric(name);
        if job.target.metrics.iter().any(|m| m.name == metric) {
            continue;
        }
        let key = SeriesKey {
            target: job.target.name.clone(),
            size: job.size.key(),
            kernel: WORKLOAD_KERNEL.to_owned(),
            metric,
        };
        #[allow(clippy::cast_precision_loss, reason = "ns below 2^53 are exact")]
        set.push(
            &key,
            "ns",
            b.category(name).map_or(0, |x| x.time_ns) as f64,
            job.rep,
        );
    }
    Ok(set)
}

/// The time and instances of the kernels whose names match `re` (metric `metric`); none is an
/// error that lists the largest kernels.
fn kernels_matching(
    b: &RunBreakdown,
    re: &regex::Regex,
    metric: &str,
    ctx: &str,
    origin: &str,
) -> Result<(u64, u64), ProfileError> {
    let hits: Vec<_> = b.kernels.iter().filter(|k| re.is_match(&k.name)).collect();
    if hits.is_empty() {
        return Err(ProfileError::new(
            FailureKind::NoKernels,
            ctx.to_owned(),
            format!(
                "metric `{}`: no kernel in {origin} matches `{}`",
                metric,
                re.as_str()
            ),
        )
        .hint(format!(
            "the largest kernels are: {}",
            b.kernels
                .iter()
                .take(5)
                .map(|k| format!("`{}`", short(&k.name)))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok((
        hits.iter().map(|k| k.time_ns).sum(),
        hits.iter().map(|k| k.instances).sum(),
    ))
}

/// The run's wall time in ns: the session nsys measured, else the wall time the capture kept.
fn wall_ns(session_ns: Option<u64>, capture: &Capture) -> Option<u64> {
    session_ns.or_else(|| {
        capture
            .wall_seconds
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| {
                #[allow(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "finite and >= 0; seconds of a run fit u64 ns"
                )]
                let ns = (s * 1e9).round() as u64;
                ns
            })
    })
}

fn short(name: &str) -> String {
    if name.chars().count() <= 80 {
        return name.to_owned();
    }
    format!("{}...", name.chars().take(80).collect::<String>())
}

/// The nsys backend (`profiler: nsys`): the whole workload traced once per repetition.
#[derive(Debug, Clone, Copy)]
pub struct NsysBackend;

impl Backend for NsysBackend {
    fn kind(&self) -> crate::spec::ProfilerKind {
        crate::spec::ProfilerKind::Nsys
    }
    fn needs(&self) -> &'static [crate::profile::machine::Need] {
        &[
            crate::profile::machine::Need::Gpu,
            crate::profile::machine::Need::Nsys,
        ]
    }

    fn live(&self, setup: &LiveSetup<'_>) -> Result<Box<dyn Profiler>, crate::Error> {
        Ok(Box::new(NsysProfiler::new(setup.base_dir)?))
    }

    fn extract(&self, job: Job<'_>, capture: &Capture) -> Result<SampleSet, ProfileError> {
        extract(job, capture)
    }

    fn recorded_as(&self) -> &'static [RecordedAs] {
        // A recording may hold the CSV of a report instead of the export.
        &[
            RecordedAs {
                extension: "csv",
                binary: false,
                what: "recorded ncu output",
            },
            RecordedAs {
                extension: "sqlite",
                binary: true,
                what: "recorded nsys export",
            },
        ]
    }

    fn fingerprint(
        &self,
        fp: crate::gpu::fingerprint::Fingerprint,
        version: &str,
    ) -> crate::gpu::fingerprint::Fingerprint {
        fp.measured_by(crate::spec::ProfilerKind::Nsys, version)
    }

    fn dry_run(&self, _base_dir: &Path, _targets: &[&Target]) -> Result<Box<dyn DryRun>, crate::Error> {
        Ok(Box::new(NsysDryRun))
    }
}

/// `profile --dry-run` of nsys targets: `nsys profile` with the options a live run passes.
struct NsysDryRun;

impl DryRun for NsysDryRun {
    fn preamble(&self) -> Vec<String> {
        Vec::new()
    }

    fn line(&mut self, job: Job<'_>) -> Result<String, crate::Error> {
        let app = app_argv(job.target, job.size).map_err(crate::Error::Usage)?;
        let argv: Vec<String> = std::iter::once("nsys".to_owned())
            .chain(
                nsys_profile_args(Path::new("<tmp>/run-N"))
                    .iter()
                    .map(|a| a.to_string_lossy().into_owned()),
            )
            .chain(app)
            .collect();
        crate::profile::live::quoted(&argv, job.target)
    }
}
