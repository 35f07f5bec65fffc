//! Locking GPU clocks through NVML, and always putting them back.
//!
//! [`lock_clocks`] returns a [`ClockGuard`]. The clocks are reset to the driver defaults when the
//! guard is restored or dropped (normal end, error path, panic unwind), and on SIGINT/SIGTERM by
//! a signal thread that reaches every live guard's reset through a global registry of pending
//! restores, then exits 130/143.
//!
//! NVML has no getter for a previously locked range, so "restore" means "reset to the driver
//! defaults": a lock set by an administrator before the run is not put back.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::device::ClockDomain;
use super::driver::{Gpu, GpuError};
use crate::foundation::error::{Error, Result};

pub use super::clock_setting::{ClockSetting, clock_setting_label};

/// A restore that must happen before the process ends.
struct PendingRestore {
    id: u64,
    gpu: Arc<dyn Gpu>,
    device: u32,
    sm: bool,
    mem: bool,
}

static PENDING: Mutex<Vec<PendingRestore>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static SIGNAL_THREAD: OnceLock<std::result::Result<(), String>> = OnceLock::new();

fn pending() -> MutexGuard<'static, Vec<PendingRestore>> {
    // A panic elsewhere must never stop the clocks from being reset.
    PENDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn take_pending(id: u64) -> Option<PendingRestore> {
    let mut list = pending();
    let i = list.iter().position(|p| p.id == id)?;
    Some(list.swap_remove(i))
}

/// Reset what `p` locked; returns one message per failure.
fn reset(p: &PendingRestore) -> Vec<String> {
    let mut errors = Vec::new();
    if p.sm
        && let Err(e) = p.gpu.reset_locked_sm_clocks(p.device)
    {
        errors.push(format!(
            "failed to reset the SM clocks of GPU {}: {e}; run `cgp-gate env --reset-clocks` as root",
            p.device
        ));
    }
    if p.mem
        && let Err(e) = p.gpu.reset_locked_mem_clocks(p.device)
    {
        errors.push(format!(
            "failed to reset the memory clocks of GPU {}: {e}; run `cgp-gate env --reset-clocks` as root",
            p.device
        ));
    }
    errors
}

/// Reset every clock lock that a live [`ClockGuard`] holds, and forget them. Returns the
/// failures. For code that installs its own signal handling: call this before exiting.
pub fn restore_pending_clocks() -> Vec<String> {
    let all: Vec<PendingRestore> = std::mem::take(&mut *pending());
    all.iter().flat_map(reset).collect()
}

/// How many clock locks are waiting to be reset (for tests and diagnostics).
pub fn pending_restores() -> usize {
    pending().len()
}

/// The signals that end cgp-gate by default and can be caught: each ends ncu and the application,
/// resets locked clocks and removes temporary folders first, then cgp-gate exits 3. SIGPIPE is
/// not one: the Rust runtime ignores it, and a closed stdout ends only the output
/// (`foundation::pipe`).
pub const TERMINATING_SIGNALS: [(i32, &str); 11] = [
    (signal_hook::consts::SIGINT, "SIGINT"),
    (signal_hook::consts::SIGTERM, "SIGTERM"),
    (signal_hook::consts::SIGHUP, "SIGHUP"),
    (signal_hook::consts::SIGQUIT, "SIGQUIT"),
    (signal_hook::consts::SIGUSR1, "SIGUSR1"),
    (signal_hook::consts::SIGUSR2, "SIGUSR2"),
    (signal_hook::consts::SIGALRM, "SIGALRM"),
    (signal_hook::consts::SIGVTALRM, "SIGVTALRM"),
    (signal_hook::consts::SIGPROF, "SIGPROF"),
    (signal_hook::consts::SIGXCPU, "SIGXCPU"),
    (signal_hook::consts::SIGXFSZ, "SIGXFSZ"),
];

fn signal_name(sig: i32) -> &'static str {
    TERMINATING_SIGNALS
        .iter()
        .find(|(s, _)| *s == sig)
        .map_or("a signal", |(_, name)| name)
}

/// Install (once per process) the thread that, on any of [`TERMINATING_SIGNALS`], ends the
/// profiler's process groups, resets pending locks, removes temporary folders and exits 3 (a
/// failure of the environment: the run was stopped from outside; docs/reliability.md).
///
/// Once installed it stays: after it, these signals always end the process through it, which is
/// what their default action would have done.
pub fn ensure_signal_thread() -> std::result::Result<(), String> {
    SIGNAL_THREAD
        .get_or_init(|| {
            let mut signals = signal_hook::iterator::Signals::new(TERMINATING_SIGNALS.map(|(s, _)| s))
                .map_err(|e| format!("cannot install the signal handler that restores clocks: {e}"))?;
            std::thread::Builder::new()
                .name("cgp-gate-clock-restore".into())
                .spawn(move || {
                    if let Some(sig) = signals.forever().next() {
                        // The profiler runs in its own process group: end it first, so the
                        // application stops using the GPU before its clocks are reset.
                        crate::ncu::runner::kill_active_groups();
                        let restored = pending_restores();
                        let mut err = std::io::stderr();
                        for e in restore_pending_clocks() {
                            let _ = writeln!(err, "error: {e}");
                        }
                        // `process::exit` runs no destructor: what the run added to the user's
                        // repository (worktrees) is undone, then the temporary folders go.
                        crate::foundation::cleanup::run_all();
                        crate::foundation::fsutil::remove_temp_dirs();
                        let name = signal_name(sig);
                        let _ = writeln!(
                            err,
                            "error: cgp-gate: {name} received; the profiler and the application were ended{}, temporary folders removed, no verdict (exit 3)",
                            if restored > 0 { ", locked GPU clocks reset" } else { "" }
                        );
                        // The run failed from outside: an environment failure, exit 3.
                        std::process::exit(crate::foundation::exit_codes::ErrorClass::Environment.exit().code());
                    }
                })
                .map(|_| ())
                .map_err(|e| format!("cannot start the clock-restore thread: {e}"))
        })
        .clone()
}

/// The clocks a lock sets, in MHz.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockedClocks {
    pub sm_mhz: u32,
    /// `None` when the memory clock is not locked (the card cannot, or the setting asks not to).
    pub mem_mhz: Option<u32>,
}

/// Holds NVML clock locks; resets them when restored or dropped. A guard for `ncu`, `none` or a
/// dry run holds nothing.
#[must_use = "dropping the guard resets the clocks at once"]
pub struct ClockGuard {
    id: Option<u64>,
    device: u32,
    locked: Option<LockedClocks>,
}

impl std::fmt::Debug for ClockGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClockGuard")
            .field("device", &self.device)
            .field("locked", &self.locked)
            .finish_non_exhaustive()
    }
}

impl ClockGuard {
    /// A guard that holds nothing.
    pub fn noop(device: u32) -> Self {
        Self {
            id: None,
            device,
            locked: None,
        }
    }

    /// The clocks this guard holds locked, if any. The health sampler compares the SM clock
    /// with this.
    pub fn locked(&self) -> Option<LockedClocks> {
        self.locked
    }

    /// Reset the clocks now and report failures (dropping does the same, printing failures).
    ///
    /// # Errors
    /// [`Error::Environment`] when NVML refuses to reset the clocks.
    pub fn restore(mut self) -> Result<()> {
        let errors = self.restore_inner();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(Error::Environment(errors.join("; ")))
        }
    }

    fn restore_inner(&mut self) -> Vec<String> {
        // Whoever takes the entry out of the registry (this guard or the signal thread) resets.
        let Some(p) = self.id.take().and_then(take_pending) else {
            return Vec::new();
        };
        reset(&p)
    }
}

impl Drop for ClockGuard {
    fn drop(&mut self) {
        for e in self.restore_inner() {
            eprintln!("error: {e}");
        }
    }
}

/// Lock the clocks of `device` as `setting` asks, or do nothing for `ncu`/`none`.
///
/// - `nvml-base`: SM and memory clocks locked to the default application clocks (the base clocks
///   on data-center GPUs).
/// - `nvml-max`: locked to the maximum clocks.
/// - `{sm_mhz, mem_mhz}`: locked to these, after checking them against the supported clocks.
///
/// The memory clock lock needs Ampere or newer; where it is not supported only the SM clock is
/// locked, and `out` says so. With `dry_run`, prints what would be locked and reset and changes
/// nothing.
///
/// # Errors
/// [`Error::Environment`] (exit 3): no permission (NVML setters need root), MIG enabled, an
/// unsupported clock, the device missing, or NVML refusing the lock.
pub fn lock_clocks(
    gpu: Arc<dyn Gpu>,
    device: u32,
    setting: &ClockSetting,
    dry_run: bool,
    out: &mut dyn Write,
) -> Result<ClockGuard> {
    let write_err = |e| Error::io("write", "<stdout>", e);
    let label = clock_setting_label(setting);
    if matches!(setting, ClockSetting::Ncu | ClockSetting::None) {
        if dry_run {
            let what = if *setting == ClockSetting::Ncu {
                "ncu locks the clocks while it profiles (--clock-control from the spec)"
            } else {
                "nobody locks the clocks"
            };
            writeln!(
                out,
                "clocks (dry run): `clocks: {label}`: {what}; cgp-gate changes nothing"
            )
            .map_err(write_err)?;
        }
        return Ok(ClockGuard::noop(device));
    }

    let name = gpu
        .name(device)
        .map_err(|e| Error::Environment(format!("cannot lock clocks: GPU {device}: {e}")))?;
    let who = format!("GPU {device} ({name})");
    if gpu.mig_enabled(device) == Ok(true) {
        return Err(Error::Environment(format!(
            "cannot lock the clocks of {who}: MIG mode is enabled and NVML clock locking is not \
             supported under MIG; use `clocks: ncu` or `clocks: none`"
        )));
    }
    let target = plan(gpu.as_ref(), device, setting, &who)?;
    let describe = |t: &LockedClocks| match t.mem_mhz {
        Some(m) => format!("SM clock to {} MHz and memory clock to {m} MHz", t.sm_mhz),
        None => format!("SM clock to {} MHz", t.sm_mhz),
    };

    if dry_run {
        writeln!(
            out,
            "clocks (dry run): would lock {who} {} (`clocks: {label}`), then reset them to the \
             driver defaults when the run ends or is interrupted",
            describe(&target)
        )
        .map_err(write_err)?;
        return Ok(ClockGuard::noop(device));
    }

    ensure_signal_thread().map_err(Error::Environment)?;
    // Register before setting: a signal between the two resets a clock that was never locked,
    // which is harmless; the other order could leave a lock behind.
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    pending().push(PendingRestore {
        id,
        gpu: Arc::clone(&gpu),
        device,
        sm: true,
        mem: false,
    });
    if let Err(e) = gpu.set_locked_sm_clocks(device, target.sm_mhz, target.sm_mhz) {
        // Nothing was changed: forget the entry without resetting.
        take_pending(id);
        return Err(lock_error(&who, "SM", e));
    }
    let mut guard = ClockGuard {
        id: Some(id),
        device,
        locked: Some(LockedClocks {
            sm_mhz: target.sm_mhz,
            mem_mhz: None,
        }),
    };

    if let Some(mem) = target.mem_mhz {
        set_pending_mem(id, true);
        match gpu.set_locked_mem_clocks(device, mem, mem) {
            Ok(()) => {
                guard.locked = Some(LockedClocks {
                    sm_mhz: target.sm_mhz,
                    mem_mhz: Some(mem),
                });
            }
            Err(GpuError::NotSupported) => {
                set_pending_mem(id, false);
                writeln!(
                    out,
                    "clocks: {who} cannot lock its memory clock (NVML supports that from Ampere \
                     on); only the SM clock is locked"
                )
                .map_err(write_err)?;
            }
            // The guard drops here and resets the SM lock.
            Err(e) => return Err(lock_error(&who, "memory", e)),
        }
    }
    if let Some(l) = &guard.locked {
        writeln!(
            out,
            "clocks: locked {who} {} (`clocks: {label}`); they are reset when the run ends",
            describe(l)
        )
        .map_err(write_err)?;
    }
    Ok(guard)
}

fn set_pending_mem(id: u64, mem: bool) {
    if let Some(p) = pending().iter_mut().find(|p| p.id == id) {
        p.mem = mem;
    }
}

fn lock_error(who: &str, domain: &str, e: GpuError) -> Error {
    match e {
        GpuError::NoPermission => Error::Environment(format!(
            "cannot lock the {domain} clock of {who}: permission denied; NVML clock locking needs \
             root: run cgp-gate as root, or set `clocks: ncu` in the spec to let ncu lock the clocks"
        )),
        GpuError::NotSupported => Error::Environment(format!(
            "cannot lock the {domain} clock of {who}: not supported by this GPU or driver (NVML \
             locked clocks need Volta or newer); set `clocks: ncu` in the spec"
        )),
        e => Error::Environment(format!("cannot lock the {domain} clock of {who}: {e}")),
    }
}

/// The clocks `setting` asks for on this device.
fn plan(gpu: &dyn Gpu, device: u32, setting: &ClockSetting, who: &str) -> Result<LockedClocks> {
    let read = |what: &str, r: std::result::Result<u32, GpuError>| {
        r.map_err(|e| {
            Error::Environment(format!(
                "cannot lock clocks: reading the {what} of {who} failed: {e}; set `clocks: ncu` \
                 in the spec"
            ))
        })
    };
    match *setting {
        ClockSetting::NvmlBase => Ok(LockedClocks {
            sm_mhz: read(
                "base SM clock",
                gpu.default_app_clock_mhz(device, ClockDomain::Sm),
            )?,
            mem_mhz: gpu.default_app_clock_mhz(device, ClockDomain::Memory).ok(),
        }),
        ClockSetting::NvmlMax => Ok(LockedClocks {
            sm_mhz: read("maximum SM clock", gpu.max_clock_mhz(device, ClockDomain::Sm))?,
            mem_mhz: gpu.max_clock_mhz(device, ClockDomain::Memory).ok(),
        }),
        ClockSetting::Fixed { sm_mhz, mem_mhz } => {
            validate_fixed(gpu, device, sm_mhz, mem_mhz, who)?;
            Ok(LockedClocks {
                sm_mhz,
                mem_mhz: Some(mem_mhz),
            })
        }
        ClockSetting::Ncu | ClockSetting::None => Err(Error::Environment(
            "internal: no NVML plan for `ncu`/`none` clocks".into(),
        )),
    }
}

/// Check a fixed clock pair against the supported clocks. Where the GPU cannot list them, the
/// values go to NVML unchecked (it rejects invalid ones itself).
fn validate_fixed(gpu: &dyn Gpu, device: u32, sm: u32, mem: u32, who: &str) -> Result<()> {
    if let Ok(mems) = gpu.supported_mem_clocks(device)
        && !mems.is_empty()
        && !mems.contains(&mem)
    {
        return Err(Error::Environment(format!(
            "cannot lock the clocks of {who}: memory clock {mem} MHz is not supported; supported: {} MHz",
            list(&mems, mems.len())
        )));
    }
    if let Ok(sms) = gpu.supported_sm_clocks(device, mem)
        && !sms.is_empty()
        && !sms.contains(&sm)
    {
        let mut near = sms.clone();
        near.sort_by_key(|c| c.abs_diff(sm));
        near.truncate(4);
        near.sort_unstable();
        return Err(Error::Environment(format!(
            "cannot lock the clocks of {who}: SM clock {sm} MHz is not supported with memory at \
             {mem} MHz; nearest supported: {} MHz ({} supported, {}..{} MHz)",
            list(&near, near.len()),
            sms.len(),
            sms.iter().min().copied().unwrap_or(0),
            sms.iter().max().copied().unwrap_or(0),
        )));
    }
    Ok(())
}

fn list(v: &[u32], n: usize) -> String {
    v.iter()
        .take(n)
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reset the locked SM and memory clocks of every GPU: repairs a GPU that a killed run left
/// locked. With `dry_run`, prints what would be reset.
///
/// # Errors
/// [`Error::Environment`] when a reset fails (most often: not root).
pub fn reset_all_clocks(gpu: &dyn Gpu, dry_run: bool, out: &mut dyn Write) -> Result<()> {
    let write_err = |e| Error::io("write", "<stdout>", e);
    let count = gpu
        .device_count()
        .map_err(|e| Error::Environment(format!("cannot count GPUs: {e}")))?;
    let mut errors = Vec::new();
    for d in 0..count {
        let name = gpu.name(d).unwrap_or_else(|_| super::device::UNKNOWN.to_owned());
        if dry_run {
            writeln!(
                out,
                "GPU {d} ({name}): would reset the locked SM and memory clocks to the driver defaults"
            )
            .map_err(write_err)?;
            continue;
        }
        let sm = gpu.reset_locked_sm_clocks(d);
        let mem = gpu.reset_locked_mem_clocks(d);
        let describe = |r: &std::result::Result<(), GpuError>| match r {
            Ok(()) => "reset".to_owned(),
            Err(GpuError::NotSupported) => "not supported".to_owned(),
            Err(e) => format!("failed: {e}"),
        };
        writeln!(
            out,
            "GPU {d} ({name}): SM clocks {}, memory clocks {}",
            describe(&sm),
            describe(&mem)
        )
        .map_err(write_err)?;
        for (domain, r) in [("SM", sm), ("memory", mem)] {
            match r {
                Ok(()) | Err(GpuError::NotSupported) => {}
                Err(GpuError::NoPermission) => errors.push(format!(
                    "cannot reset the {domain} clocks of GPU {d}: permission denied; run as root"
                )),
                Err(e) => errors.push(format!("cannot reset the {domain} clocks of GPU {d}: {e}")),
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Error::Environment(errors.join("; ")))
    }
}
