//! `cgp-gate doctor`: is this machine ready to measure? Each check on one line, `ok` or what to
//! fix (issue 46, "the first errors"). With `--spec`, only what that spec's targets need counts
//! (a harness target needs no GPU: its device is in its own file; `--replay` needs nothing);
//! without, a GPU, counter access and ncu count, and nsys and libcupti are said for the targets
//! that would use them. Exit 0 when every check that counts passes, else an environment error
//! (exit 3) naming each failed one.

use std::io::Write;
use std::path::PathBuf;

use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;
use crate::spec::ProfilerKind;

/// Everything `doctor` needs from the command line.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub spec: Option<PathBuf>,
}

/// What a machine must have, each checked on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Need {
    Gpu,
    Counters,
    Ncu,
    Nsys,
    Libcupti,
}

/// What a target of this profiler needs from the machine.
fn needs_of(kind: ProfilerKind) -> &'static [Need] {
    match kind {
        ProfilerKind::Ncu => &[Need::Gpu, Need::Counters, Need::Ncu],
        ProfilerKind::Nsys => &[Need::Gpu, Need::Nsys],
        ProfilerKind::Cupti => &[Need::Gpu, Need::Libcupti],
        ProfilerKind::Nvbench | ProfilerKind::Gbench | ProfilerKind::PytestBenchmark => &[],
    }
}

/// One check's outcome: `Ok(what was found)` or `Err((what is wrong, what to do))`.
type Check = std::result::Result<String, (String, String)>;

fn gpu() -> Check {
    let fix = "run on a machine with an NVIDIA GPU and its driver (`nvidia-smi` must list the GPU); without one, use `--replay DIR` with a recording, or a harness target".to_owned();
    let g = crate::gpu::open().map_err(|u| (u.to_string(), fix.clone()))?;
    let n = g
        .device_count()
        .map_err(|e| (format!("NVML loaded but cannot count GPUs: {e}"), fix.clone()))?;
    if n == 0 {
        return Err(("NVML sees no GPU".to_owned(), fix));
    }
    let names: Vec<String> = (0..n)
        .map(|i| g.name(i).unwrap_or_else(|_| "unknown".into()))
        .collect();
    Ok(format!(
        "{} (driver {})",
        names.join(", "),
        g.driver_version().unwrap_or_else(|_| "unknown".into())
    ))
}

/// Whether performance counters are open to this user: the driver's `RmProfilingAdminOnly`.
fn counters() -> Check {
    let params = std::fs::read_to_string("/proc/driver/nvidia/params").map_err(|_| {
        (
            "no NVIDIA kernel module (/proc/driver/nvidia/params is missing)".to_owned(),
            "install and load the NVIDIA driver".to_owned(),
        )
    })?;
    let admin_only = params
        .lines()
        .find_map(|l| l.strip_prefix("RmProfilingAdminOnly:"))
        .map(str::trim);
    // `/proc/self` belongs to the process's effective user.
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    match admin_only {
        Some("1") if !root => Err((
            "performance counters are restricted to administrators (RmProfilingAdminOnly: 1), so ncu fails with ERR_NVGPUCTRPERM".to_owned(),
            "allow them (`options nvidia NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d, then reload the driver), or run the job as root".to_owned(),
        )),
        Some(v) => Ok(format!("RmProfilingAdminOnly: {v}{}", if root { " (running as root)" } else { "" })),
        None => Ok("no restriction listed by the driver".to_owned()),
    }
}

fn ncu() -> Check {
    let info = crate::ncu::install::detect_ncu();
    match (&info.path, &info.version) {
        (Some(p), Some(v)) => Ok(format!("{v} ({p})")),
        (Some(p), None) => Err((
            format!("{p} gives no version ({})", info.error.as_deref().unwrap_or("no version line")),
            "check the Nsight Compute install, or point CGP_GATE_NCU at a working ncu".to_owned(),
        )),
        (None, _) => Err((
            info.error.unwrap_or_else(|| "ncu not found".to_owned()),
            "install Nsight Compute (the CUDA toolkit's `nsight-compute` package) or set CGP_GATE_NCU to its ncu".to_owned(),
        )),
    }
}

fn nsys() -> Check {
    crate::nsys::read::locate_nsys()
        .map(|p| p.display().to_string())
        .ok_or_else(|| {
            (
                "nsys not found".to_owned(),
                "install Nsight Systems (the CUDA toolkit's `nsight-systems` package) and put nsys on PATH"
                    .to_owned(),
            )
        })
}

fn libcupti(explicit: Option<&std::path::Path>) -> Check {
    crate::cupti::locate::find_libcupti(explicit)
        .map(|p| p.display().to_string())
        .map_err(|e| {
            (
                e.to_string(),
                "install the CUDA toolkit's CUPTI (libcupti.so), or set CGP_GATE_LIBCUPTI or the target's `libcupti:`".to_owned(),
            )
        })
}

fn label(n: Need) -> &'static str {
    match n {
        Need::Gpu => "GPU",
        Need::Counters => "counter access",
        Need::Ncu => "ncu",
        Need::Nsys => "nsys",
        Need::Libcupti => "libcupti",
    }
}

/// Run `cgp-gate doctor`.
///
/// # Errors
/// The spec's errors; [`Error::Environment`] naming each failed check that counts.
pub fn run(args: &Options, out: &mut dyn Write) -> Result<Exit> {
    let spec = args.spec.as_deref().map(crate::spec::load).transpose()?;
    let (counted, libcupti_key): (std::collections::BTreeSet<Need>, Option<PathBuf>) = match &spec {
        Some(s) => (
            s.targets
                .iter()
                .flat_map(|t| needs_of(t.profiler).iter().copied())
                .collect(),
            s.targets.iter().find_map(|t| t.libcupti.clone()),
        ),
        None => ([Need::Gpu, Need::Counters, Need::Ncu].into_iter().collect(), None),
    };
    let write_err = |e| Error::io("write", "<stdout>", e);
    let mut failed = Vec::new();
    for need in [Need::Gpu, Need::Counters, Need::Ncu, Need::Nsys, Need::Libcupti] {
        let check = match need {
            Need::Gpu => gpu(),
            Need::Counters => counters(),
            Need::Ncu => ncu(),
            Need::Nsys => nsys(),
            Need::Libcupti => libcupti(libcupti_key.as_deref()),
        };
        let counts = counted.contains(&need);
        let line = match (&check, counts) {
            (Ok(found), _) => format!("ok    {:<15} {found}", label(need)),
            (Err((wrong, fix)), true) => {
                failed.push(label(need));
                format!("FAIL  {:<15} {wrong}\n      fix: {fix}", label(need))
            }
            (Err((wrong, _)), false) => {
                format!(
                    "-     {:<15} {wrong} (not needed {})",
                    label(need),
                    if spec.is_some() {
                        "by this spec"
                    } else {
                        "unless a target uses it"
                    }
                )
            }
        };
        writeln!(out, "{}", crate::foundation::sanitize::block(&line)).map_err(write_err)?;
    }
    if spec.is_some() && counted.is_empty() {
        writeln!(
            out,
            "this spec's targets need no GPU tools (harness files name their device)"
        )
        .map_err(write_err)?;
    }
    if failed.is_empty() {
        return Ok(Exit::Ok);
    }
    Err(Error::Environment(format!(
        "this machine cannot measure yet: {} failed; fix what each line above says, then run `cgp-gate doctor` again",
        failed.join(", ")
    )))
}
