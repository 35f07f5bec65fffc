//! [`Gpu`] over NVML (nvml-wrapper): the real driver. Split from `device.rs` so that the trait
//! and its types stay free of the NVML library (the statistics crate holds them; this profile
//! crate alone links nvml-wrapper).

use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::enums::device::GpuLockedClocksSetting;
use nvml_wrapper::error::NvmlError;

use super::device::{ClockDomain, ThrottleReasons};
use super::driver::{Gpu, GpuError, GpuUnavailable, NVML_LIB_ENV, one_line};

/// NVML's error as the [`Gpu`] trait reports it (a function: neither type is this crate's).
fn gpu_error(e: NvmlError) -> GpuError {
    match e {
        NvmlError::NoPermission => GpuError::NoPermission,
        NvmlError::NotSupported | NvmlError::FunctionNotFound => GpuError::NotSupported,
        // A symbol missing from an old driver means the call is not supported there.
        NvmlError::FailedToLoadSymbol(_) => GpuError::NotSupported,
        other => GpuError::Other(one_line(&other.to_string())),
    }
}

/// `?` for NVML results: maps [`NvmlError`] with [`gpu_error`].
trait Nv<T> {
    fn nv(self) -> Result<T, GpuError>;
}

impl<T> Nv<T> for Result<T, NvmlError> {
    fn nv(self) -> Result<T, GpuError> {
        self.map_err(gpu_error)
    }
}

/// Load NVML and return the real GPU interface, or why it is unavailable.
///
/// Honors [`NVML_LIB_ENV`] (`CGP_GATE_NVML_LIB`) as the library path, and opens the SYNTHETIC
/// stand-in of [`super::stand_in::STAND_IN_ENV`] instead of NVML when that is set.
///
/// # Errors
/// [`GpuUnavailable`] when the library cannot be loaded or NVML cannot be initialised.
pub fn open() -> Result<Box<dyn Gpu>, GpuUnavailable> {
    if let Some(path) = std::env::var_os(super::stand_in::STAND_IN_ENV).filter(|v| !v.is_empty()) {
        return super::stand_in::open(std::path::Path::new(&path));
    }
    let lib = std::env::var_os(NVML_LIB_ENV).filter(|v| !v.is_empty());
    let result = match &lib {
        Some(path) => Nvml::builder().lib_path(path).init(),
        None => Nvml::init(),
    };
    match result {
        Ok(nvml) => Ok(Box::new(NvmlGpu { nvml })),
        Err(e) => {
            let driver_present = !matches!(
                e,
                NvmlError::LibloadingError(_) | NvmlError::FailedToLoadSymbol(_)
            );
            let mut reason = one_line(&e.to_string());
            if let Some(path) = lib {
                reason = format!("{reason}; {NVML_LIB_ENV}={}", path.to_string_lossy());
            }
            Err(GpuUnavailable {
                reason,
                driver_present,
            })
        }
    }
}

/// [`Gpu`] over NVML (nvml-wrapper 0.13).
pub struct NvmlGpu {
    nvml: Nvml,
}

impl NvmlGpu {
    fn dev(&self, device: u32) -> Result<nvml_wrapper::Device<'_>, GpuError> {
        let count = self.nvml.device_count().nv()?;
        if device >= count {
            return Err(GpuError::NoDevice(device));
        }
        self.nvml.device_by_index(device).nv()
    }
}

fn nvml_clock(domain: ClockDomain) -> Clock {
    match domain {
        // The SM and graphics domains run at the same clock; `Graphics` is the domain that
        // locked clocks and application clocks are specified in.
        ClockDomain::Sm => Clock::Graphics,
        ClockDomain::Memory => Clock::Memory,
    }
}

impl Gpu for NvmlGpu {
    fn device_count(&self) -> Result<u32, GpuError> {
        self.nvml.device_count().nv()
    }
    fn name(&self, device: u32) -> Result<String, GpuError> {
        self.dev(device)?.name().nv()
    }
    fn uuid(&self, device: u32) -> Result<String, GpuError> {
        self.dev(device)?.uuid().nv()
    }
    fn pci_bus_id(&self, device: u32) -> Result<String, GpuError> {
        Ok(self.dev(device)?.pci_info().nv()?.bus_id)
    }
    fn compute_capability(&self, device: u32) -> Result<(i32, i32), GpuError> {
        let cc = self.dev(device)?.cuda_compute_capability().nv()?;
        Ok((cc.major, cc.minor))
    }
    fn memory_total_bytes(&self, device: u32) -> Result<u64, GpuError> {
        Ok(self.dev(device)?.memory_info().nv()?.total)
    }
    fn driver_version(&self) -> Result<String, GpuError> {
        self.nvml.sys_driver_version().nv()
    }
    fn cuda_driver_version(&self) -> Result<i32, GpuError> {
        self.nvml.sys_cuda_driver_version().nv()
    }
    fn vbios_version(&self, device: u32) -> Result<String, GpuError> {
        self.dev(device)?.vbios_version().nv()
    }
    fn power_limit_mw(&self, device: u32) -> Result<u32, GpuError> {
        self.dev(device)?.enforced_power_limit().nv()
    }
    fn mig_enabled(&self, device: u32) -> Result<bool, GpuError> {
        // NVML_DEVICE_MIG_ENABLE is 1.
        Ok(self.dev(device)?.mig_mode().nv()?.current == 1)
    }
    fn ecc_mode(&self, device: u32) -> Result<(bool, bool), GpuError> {
        let e = self.dev(device)?.is_ecc_enabled().nv()?;
        Ok((e.currently_enabled, e.pending_enabled))
    }
    fn persistence_mode(&self, device: u32) -> Result<bool, GpuError> {
        self.dev(device)?.is_in_persistent_mode().nv()
    }
    fn max_clock_mhz(&self, device: u32, domain: ClockDomain) -> Result<u32, GpuError> {
        self.dev(device)?.max_clock_info(nvml_clock(domain)).nv()
    }
    fn default_app_clock_mhz(&self, device: u32, domain: ClockDomain) -> Result<u32, GpuError> {
        self.dev(device)?
            .default_applications_clock(nvml_clock(domain))
            .nv()
    }
    fn current_clock_mhz(&self, device: u32, domain: ClockDomain) -> Result<u32, GpuError> {
        let clock = match domain {
            ClockDomain::Sm => Clock::SM,
            ClockDomain::Memory => Clock::Memory,
        };
        self.dev(device)?.clock_info(clock).nv()
    }
    fn temperature_c(&self, device: u32) -> Result<u32, GpuError> {
        self.dev(device)?.temperature(TemperatureSensor::Gpu).nv()
    }
    fn power_usage_mw(&self, device: u32) -> Result<u32, GpuError> {
        self.dev(device)?.power_usage().nv()
    }
    fn total_energy_mj(&self, device: u32) -> Result<u64, GpuError> {
        self.dev(device)?.total_energy_consumption().nv()
    }
    fn throttle_reasons(&self, device: u32) -> Result<ThrottleReasons, GpuError> {
        // nvml-wrapper 0.13 wraps nvmlDeviceGetCurrentClocksThrottleReasons (NVML's older name
        // for clock event reasons); bits it does not know are dropped.
        Ok(ThrottleReasons(
            self.dev(device)?.current_throttle_reasons().nv()?.bits(),
        ))
    }
    fn supported_mem_clocks(&self, device: u32) -> Result<Vec<u32>, GpuError> {
        self.dev(device)?.supported_memory_clocks().nv()
    }
    fn supported_sm_clocks(&self, device: u32, mem_mhz: u32) -> Result<Vec<u32>, GpuError> {
        self.dev(device)?.supported_graphics_clocks(mem_mhz).nv()
    }
    fn set_locked_sm_clocks(&self, device: u32, min_mhz: u32, max_mhz: u32) -> Result<(), GpuError> {
        let mut dev = self.dev(device)?;
        dev.set_gpu_locked_clocks(GpuLockedClocksSetting::Numeric {
            min_clock_mhz: min_mhz,
            max_clock_mhz: max_mhz,
        })
        .nv()
    }
    fn reset_locked_sm_clocks(&self, device: u32) -> Result<(), GpuError> {
        self.dev(device)?.reset_gpu_locked_clocks().nv()
    }
    fn set_locked_mem_clocks(&self, device: u32, min_mhz: u32, max_mhz: u32) -> Result<(), GpuError> {
        self.dev(device)?.set_mem_locked_clocks(min_mhz, max_mhz).nv()
    }
    fn reset_locked_mem_clocks(&self, device: u32) -> Result<(), GpuError> {
        self.dev(device)?.reset_mem_locked_clocks().nv()
    }
    fn counters_admin_only(&self) -> Result<Option<bool>, GpuError> {
        // NVML does not report it; the kernel module lists its parameters in procfs. A container
        // may not show that file although the driver runs: then the driver does not say, and ncu
        // itself names a refusal (ERR_NVGPUCTRPERM) if there is one, so the preflight does not
        // block on it.
        let Ok(params) = cgp_core::foundation::fsutil::read_text(
            std::path::Path::new("/proc/driver/nvidia/params"),
            1 << 20,
        ) else {
            return Ok(None);
        };
        Ok(params
            .lines()
            .find_map(|l| l.strip_prefix("RmProfilingAdminOnly:"))
            .map(|v| v.trim() != "0"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttle_bits_match_nvml() {
        use nvml_wrapper::bitmasks::device::ThrottleReasons as N;
        let pairs = [
            (N::GPU_IDLE, ThrottleReasons::GPU_IDLE),
            (
                N::APPLICATIONS_CLOCKS_SETTING,
                ThrottleReasons::APPLICATIONS_CLOCKS_SETTING,
            ),
            (N::SW_POWER_CAP, ThrottleReasons::SW_POWER_CAP),
            (N::HW_SLOWDOWN, ThrottleReasons::HW_SLOWDOWN),
            (N::SYNC_BOOST, ThrottleReasons::SYNC_BOOST),
            (N::SW_THERMAL_SLOWDOWN, ThrottleReasons::SW_THERMAL_SLOWDOWN),
            (N::HW_THERMAL_SLOWDOWN, ThrottleReasons::HW_THERMAL_SLOWDOWN),
            (
                N::HW_POWER_BRAKE_SLOWDOWN,
                ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN,
            ),
            (N::DISPLAY_CLOCK_SETTING, ThrottleReasons::DISPLAY_CLOCK_SETTING),
        ];
        for (n, ours) in pairs {
            assert_eq!(n.bits(), ours.0, "{ours}");
        }
    }

    #[test]
    fn nvml_errors_map_to_gpu_errors() {
        assert_eq!(gpu_error(NvmlError::NoPermission), GpuError::NoPermission);
        assert_eq!(gpu_error(NvmlError::NotSupported), GpuError::NotSupported);
        assert!(matches!(gpu_error(NvmlError::GpuLost), GpuError::Other(_)));
    }
}
