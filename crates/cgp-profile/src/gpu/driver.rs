//! The GPU behind a trait: NVML on a real machine ([`super::nvml`]), [`super::FakeGpu`] in tests.
//!
//! Everything cgp-gate asks of the driver goes through [`Gpu`], so clock locking, health sampling
//! and the fingerprint can be tested without a GPU, and a machine without a driver gets one clear
//! [`GpuUnavailable`] line instead of a failure. What a device reports (a [`Reading`], its
//! [`ThrottleReasons`], a [`ClockDomain`]) is `cgp_core::gpu::device`'s: the data the results keep.

use std::fmt;

use super::device::{ClockDomain, Reading, ThrottleReasons};

/// Environment variable naming the NVML library to load instead of the default
/// (`libnvidia-ml.so.1` on Linux). For drivers installed in unusual places.
pub const NVML_LIB_ENV: &str = "CGP_GATE_NVML_LIB";

/// Why a GPU query or setting failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GpuError {
    /// The caller lacks the rights (every NVML setter needs root).
    #[error("permission denied (NVML setters need root)")]
    NoPermission,
    /// The device or driver does not support this query or setting.
    #[error("not supported by this GPU or driver")]
    NotSupported,
    /// No device with this index.
    #[error("no GPU with index {0}")]
    NoDevice(u32),
    /// Anything else NVML reported.
    #[error("{0}")]
    Other(String),
}

/// What cgp-gate needs from a GPU driver. Device indices are NVML's (`nvidia-smi` order).
///
/// Methods take `&self`: the NVML implementation fetches a fresh device handle per call, and
/// fakes use interior mutability, so a `Gpu` can be shared with the signal handler that restores
/// clocks.
pub trait Gpu: Send + Sync {
    fn device_count(&self) -> Result<u32, GpuError>;
    fn name(&self, device: u32) -> Result<String, GpuError>;
    fn uuid(&self, device: u32) -> Result<String, GpuError>;
    fn pci_bus_id(&self, device: u32) -> Result<String, GpuError>;
    /// (major, minor), e.g. (9, 0) for Hopper.
    fn compute_capability(&self, device: u32) -> Result<(i32, i32), GpuError>;
    fn memory_total_bytes(&self, device: u32) -> Result<u64, GpuError>;
    /// The kernel driver version, e.g. `580.76.05`.
    fn driver_version(&self) -> Result<String, GpuError>;
    /// The CUDA driver API version as NVML encodes it, e.g. 12040 for 12.4.
    fn cuda_driver_version(&self) -> Result<i32, GpuError>;
    fn vbios_version(&self, device: u32) -> Result<String, GpuError>;
    /// The enforced power limit, in milliwatts.
    fn power_limit_mw(&self, device: u32) -> Result<u32, GpuError>;
    /// Whether MIG mode is currently enabled.
    fn mig_enabled(&self, device: u32) -> Result<bool, GpuError>;
    /// (currently enabled, enabled after the next reboot).
    fn ecc_mode(&self, device: u32) -> Result<(bool, bool), GpuError>;
    fn persistence_mode(&self, device: u32) -> Result<bool, GpuError>;
    fn max_clock_mhz(&self, device: u32, domain: ClockDomain) -> Result<u32, GpuError>;
    /// The default application clock: on data-center GPUs, the base clock.
    fn default_app_clock_mhz(&self, device: u32, domain: ClockDomain) -> Result<u32, GpuError>;
    fn current_clock_mhz(&self, device: u32, domain: ClockDomain) -> Result<u32, GpuError>;
    fn temperature_c(&self, device: u32) -> Result<u32, GpuError>;
    fn power_usage_mw(&self, device: u32) -> Result<u32, GpuError>;
    /// Energy used since the driver was loaded, in millijoules.
    fn total_energy_mj(&self, device: u32) -> Result<u64, GpuError>;
    /// Current clock throttle ("clock event") reasons.
    fn throttle_reasons(&self, device: u32) -> Result<ThrottleReasons, GpuError>;
    fn supported_mem_clocks(&self, device: u32) -> Result<Vec<u32>, GpuError>;
    /// SM clocks supported with the memory at `mem_mhz`.
    fn supported_sm_clocks(&self, device: u32, mem_mhz: u32) -> Result<Vec<u32>, GpuError>;
    /// Lock the SM clock into `[min_mhz, max_mhz]` (root; Volta and newer).
    fn set_locked_sm_clocks(&self, device: u32, min_mhz: u32, max_mhz: u32) -> Result<(), GpuError>;
    fn reset_locked_sm_clocks(&self, device: u32) -> Result<(), GpuError>;
    /// Lock the memory clock into `[min_mhz, max_mhz]` (root; Ampere and newer).
    fn set_locked_mem_clocks(&self, device: u32, min_mhz: u32, max_mhz: u32) -> Result<(), GpuError>;
    fn reset_locked_mem_clocks(&self, device: u32) -> Result<(), GpuError>;
    /// Whether the driver restricts performance counters to administrators (the kernel
    /// module's `RmProfilingAdminOnly`): ncu then fails with `ERR_NVGPUCTRPERM` for other users.
    /// `None` when the driver does not say.
    fn counters_admin_only(&self) -> Result<Option<bool>, GpuError>;

    /// Whether this is the SYNTHETIC stand-in GPU of `CGP_GATE_STAND_IN_GPU` (nothing it says
    /// was read from hardware): the fingerprint, every report and every baseline say so.
    fn stand_in(&self) -> bool {
        false
    }

    /// One reading of the dynamic state; parts the GPU does not report are `None`.
    fn read(&self, device: u32) -> Reading {
        Reading {
            sm_clock_mhz: self.current_clock_mhz(device, ClockDomain::Sm).ok(),
            mem_clock_mhz: self.current_clock_mhz(device, ClockDomain::Memory).ok(),
            temperature_c: self.temperature_c(device).ok(),
            power_mw: self.power_usage_mw(device).ok(),
            energy_mj: self.total_energy_mj(device).ok(),
            throttle: self.throttle_reasons(device).ok(),
        }
    }
}

/// NVML could not be used: no driver, a driver that is not running, or no permission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuUnavailable {
    /// What failed, in NVML's words (one line).
    pub reason: String,
    /// The library was found and loaded, but NVML refused to initialise.
    pub driver_present: bool,
}

impl fmt::Display for GpuUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.driver_present {
            write!(
                f,
                "NVIDIA driver not usable (NVML failed to initialise: {})",
                self.reason
            )?;
        } else {
            write!(
                f,
                "no NVIDIA driver found (NVML could not be loaded: {})",
                self.reason
            )?;
        }
        f.write_str("; GPU fingerprint, clock locking and health sampling are unavailable")
    }
}

impl std::error::Error for GpuUnavailable {}

/// Collapse whitespace so that a library's multi-line error stays one line.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unavailable_is_one_line() {
        let u = GpuUnavailable {
            reason: one_line("libnvidia-ml.so.1: cannot open\n shared object file"),
            driver_present: false,
        };
        let s = u.to_string();
        assert!(!s.contains('\n'));
        assert!(s.starts_with("no NVIDIA driver found (NVML could not be loaded: libnvidia-ml.so.1"));
        assert!(s.ends_with("clock locking and health sampling are unavailable"));
    }
}
