//! Is this machine ready to measure? The checks `cgp-gate doctor` prints one by one and every live
//! run makes before it reads a baseline or starts a program (issue 46, "preflight before
//! baselines"): a GPU through the driver, access to its performance counters, the profiler's tool
//! and libcupti, each only where a target's backend needs it ([`crate::profile::Backend::needs`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::gpu::{Gpu, GpuUnavailable};
use crate::spec::Target;

/// What a machine must have, each checked on its own, in the order they are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Need {
    Gpu,
    Counters,
    Ncu,
    Nsys,
    Libcupti,
}

impl Need {
    /// Every need, in the order `doctor` prints them.
    pub const ALL: [Self; 5] = [Self::Gpu, Self::Counters, Self::Ncu, Self::Nsys, Self::Libcupti];

    /// The check's name in `doctor`'s table.
    pub fn label(self) -> &'static str {
        match self {
            Self::Gpu => "GPU",
            Self::Counters => "counter access",
            Self::Ncu => "ncu",
            Self::Nsys => "nsys",
            Self::Libcupti => "libcupti",
        }
    }

    /// What a failed check means, as an error's first words.
    fn headline(self) -> &'static str {
        match self {
            Self::Gpu => "no usable GPU",
            Self::Counters => "no access to the GPU's performance counters",
            Self::Ncu => "ncu cannot be used",
            Self::Nsys => "nsys cannot be used",
            Self::Libcupti => "libcupti cannot be used",
        }
    }

    /// A tool whose version a live run asks before anything else (`profile::Versions::of`), so
    /// that a missing tool fails there, with the tool's own words.
    fn is_tool(self) -> bool {
        matches!(self, Self::Ncu | Self::Nsys)
    }
}

/// Why a check failed and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed {
    pub wrong: String,
    pub fix: String,
}

/// One check's outcome: what was found, or why it failed.
pub type Check = Result<String, Failed>;

fn failed(wrong: impl Into<String>, fix: impl Into<String>) -> Failed {
    Failed {
        wrong: wrong.into(),
        fix: fix.into(),
    }
}

/// What `targets` need from the machine, and the `libcupti:` the first target naming one names.
pub fn needs(targets: &[&Target]) -> (BTreeSet<Need>, Option<PathBuf>) {
    (
        targets
            .iter()
            .flat_map(|t| crate::profile::backend_of(t).needs().iter().copied())
            .collect(),
        targets.iter().find_map(|t| t.libcupti.clone()),
    )
}

/// Run one check. `gpu` is what opening the driver gave ([`crate::gpu::open`]).
pub fn check(need: Need, gpu: Result<&dyn Gpu, &GpuUnavailable>, libcupti: Option<&Path>) -> Check {
    match need {
        Need::Gpu => gpu_check(gpu),
        Need::Counters => counters(gpu),
        Need::Ncu => ncu(),
        Need::Nsys => nsys(),
        Need::Libcupti => libcupti_check(libcupti),
    }
}

/// Before a live run of `targets`: every check their backends need, except the tools' (their
/// versions were asked first). A replay needs none of this and never calls it.
///
/// # Errors
/// [`crate::Error::Environment`] (exit 3) naming each failed check and what to do.
pub fn preflight(targets: &[&Target], gpu: Result<&dyn Gpu, &GpuUnavailable>) -> Result<(), crate::Error> {
    let (needed, libcupti) = needs(targets);
    let mut said = Vec::new();
    for need in needed.into_iter().filter(|n| !n.is_tool()) {
        // Counter access cannot be told without the GPU; its line would only repeat the GPU's.
        if need == Need::Counters && gpu.is_err() {
            continue;
        }
        if let Err(f) = check(need, gpu, libcupti.as_deref()) {
            said.push(format!("{}: {}\n  help: {}", need.headline(), f.wrong, f.fix));
        }
    }
    if said.is_empty() {
        return Ok(());
    }
    said.push(
        "  (checked before any baseline is read or program started; `cgp-gate doctor --spec SPEC` runs the same checks)"
            .to_owned(),
    );
    Err(crate::Error::Environment(said.join("\n")))
}

fn gpu_check(gpu: Result<&dyn Gpu, &GpuUnavailable>) -> Check {
    let fix = "run on a machine whose NVIDIA GPU `nvidia-smi` lists (the GPU runner); without a GPU, replay a recording made there with `--replay DIR`, or gate a harness target";
    let g = gpu.map_err(|u| failed(u.to_string(), fix))?;
    let n = g
        .device_count()
        .map_err(|e| failed(format!("NVML loaded but cannot count GPUs: {e}"), fix))?;
    if n == 0 {
        return Err(failed("NVML sees no GPU", fix));
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
fn counters(gpu: Result<&dyn Gpu, &GpuUnavailable>) -> Check {
    let g = gpu.map_err(|_| failed("cannot tell without a usable GPU", "fix the GPU first"))?;
    // `/proc/self` belongs to the process's effective user.
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    match g.counters_admin_only() {
        Ok(Some(true)) if !root => Err(failed(
            "performance counters are restricted to administrators (RmProfilingAdminOnly: 1), so ncu fails with ERR_NVGPUCTRPERM",
            "allow them (`options nvidia NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d, then reload the driver), or run the job as root",
        )),
        Ok(Some(admin_only)) => Ok(format!(
            "RmProfilingAdminOnly: {}{}",
            u8::from(admin_only),
            if root { " (running as root)" } else { "" }
        )),
        Ok(None) => Ok("no restriction listed by the driver".to_owned()),
        Err(e) => Err(failed(
            format!("the driver's parameters cannot be read ({e})"),
            "check that the NVIDIA kernel module is loaded (/proc/driver/nvidia/params)",
        )),
    }
}

fn ncu() -> Check {
    let info = crate::ncu::install::detect_ncu();
    match (&info.path, &info.version) {
        (Some(p), Some(v)) => Ok(format!("{v} ({p})")),
        (Some(p), None) => Err(failed(
            format!(
                "{p} gives no version ({})",
                info.error.as_deref().unwrap_or("no version line")
            ),
            "check the Nsight Compute install, or point CGP_GATE_NCU at a working ncu",
        )),
        (None, _) => Err(failed(
            info.error.unwrap_or_else(|| "ncu not found".to_owned()),
            "install Nsight Compute (the CUDA toolkit's `nsight-compute` package) or set CGP_GATE_NCU to its ncu",
        )),
    }
}

fn nsys() -> Check {
    crate::nsys::read::locate_nsys()
        .map(|p| p.display().to_string())
        .ok_or_else(|| {
            failed(
                "nsys not found",
                "install Nsight Systems (the CUDA toolkit's `nsight-systems` package) and put nsys on PATH",
            )
        })
}

/// libcupti found as a cupti run finds it ([`crate::cupti::locate::locate`], the dynamic loader
/// among its steps), with advice that matches what was found (issue 59): a library the loader
/// finds while `ldconfig -p` lists none is there, and the cache is what is stale.
fn libcupti_check(explicit: Option<&Path>) -> Check {
    use crate::cupti::locate::Via;
    match crate::cupti::locate::locate(explicit) {
        Ok((p, Via::Loader { in_cache: false })) => Ok(format!(
            "{} (found by the dynamic loader, as the run finds it; `ldconfig -p` lists no libcupti: its cache is stale, `ldconfig` as root refreshes it)",
            p.display()
        )),
        Ok((p, _)) => Ok(p.display().to_string()),
        Err(e @ crate::cupti::locate::LocateError::Explicit { .. }) => Err(failed(
            e.to_string(),
            "point CGP_GATE_LIBCUPTI or the target's `libcupti:` at the libcupti.so of the program's CUDA version",
        )),
        Err(e) => Err(failed(
            e.to_string(),
            "install the CUDA toolkit's CUPTI (libcupti.so), or set CGP_GATE_LIBCUPTI or the target's `libcupti:`",
        )),
    }
}
