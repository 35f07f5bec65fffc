//! A device's fingerprint, read through the [`Gpu`] trait: its identity from the driver, the
//! profiler version and the settings that change what is measured. The fingerprint itself (what
//! results and baselines keep) is `cgp_core::gpu::fingerprint`.

use super::clock_setting::{ClockSetting, clock_setting_label};
use super::device::ClockDomain;
use super::driver::{Gpu, GpuError};
use super::fingerprint::{
    FieldValue, Fingerprint, ProfilerControls, cuda_version_string, effective_clock_control,
};

/// The fingerprint of `device`: the GPU's identity from `gpu` (all "unknown" without one), the
/// profiler version, and the profiler and clock settings that change what is measured.
pub fn fingerprint(
    gpu: Option<&dyn Gpu>,
    device: u32,
    ncu_version: &str,
    profiling: impl Into<ProfilerControls>,
    clocks: &ClockSetting,
) -> Fingerprint {
    let profiling = profiling.into();
    let mut fp = gpu.map_or_else(Fingerprint::default, |g| hardware_fingerprint(g, device));
    if !ncu_version.trim().is_empty() {
        fp.ncu_version = ncu_version.trim().into();
    }
    fp.profiler_version.clone_from(&fp.ncu_version);
    fp.clock_control = effective_clock_control(profiling, clocks).into();
    fp.cache_control = profiling.cache_control.into();
    fp.clocks = clock_setting_label(clocks).into();
    fp
}

/// The GPU and driver parts of the fingerprint; profiler fields stay "unknown". Each query that
/// fails (not supported, no permission) leaves its field "unknown".
pub fn hardware_fingerprint(gpu: &dyn Gpu, device: u32) -> Fingerprint {
    fn text<T>(r: Result<T, GpuError>, f: impl FnOnce(T) -> String) -> FieldValue {
        r.map_or(FieldValue::Unknown, |v| f(v).into())
    }
    let on_off = |b: bool| if b { "enabled" } else { "disabled" }.to_owned();
    Fingerprint {
        gpu_name: text(gpu.name(device), |s| s.trim().to_owned()),
        gpu_uuid: text(gpu.uuid(device), |s| s),
        pci_bus_id: text(gpu.pci_bus_id(device), |s| s),
        compute_capability: text(gpu.compute_capability(device), |(a, b)| format!("{a}.{b}")),
        memory_total_bytes: text(gpu.memory_total_bytes(device), |v| v.to_string()),
        driver_version: text(gpu.driver_version(), |s| s),
        cuda_driver_version: text(gpu.cuda_driver_version(), cuda_version_string),
        vbios_version: text(gpu.vbios_version(device), |s| s),
        power_limit_mw: text(gpu.power_limit_mw(device), |v| v.to_string()),
        mig_mode: text(gpu.mig_enabled(device), on_off),
        ecc_mode: text(gpu.ecc_mode(device), |(now, pending)| {
            if now == pending {
                on_off(now)
            } else {
                format!("{} (pending {})", on_off(now), on_off(pending))
            }
        }),
        persistence_mode: text(gpu.persistence_mode(device), on_off),
        max_sm_clock_mhz: text(gpu.max_clock_mhz(device, ClockDomain::Sm), |v| v.to_string()),
        max_mem_clock_mhz: text(gpu.max_clock_mhz(device, ClockDomain::Memory), |v| v.to_string()),
        synthetic: gpu.stand_in(),
        ..Fingerprint::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::device::UNKNOWN;
    use crate::gpu::fake::{FakeDevice, FakeGpu};

    #[test]
    fn fingerprint_from_fake_gpu() {
        let mut dev = FakeDevice::new("NVIDIA H200");
        dev.ecc = (true, false);
        let gpu = FakeGpu::new(vec![dev]);
        let profiling = ProfilerControls {
            clock_control: "base",
            cache_control: "none",
        };
        let fp = fingerprint(
            Some(&gpu),
            0,
            "2025.1.1.0",
            profiling,
            &ClockSetting::Fixed {
                sm_mhz: 1410,
                mem_mhz: 2619,
            },
        );
        assert_eq!(fp.gpu_name, "NVIDIA H200");
        assert_eq!(fp.compute_capability, "9.0");
        assert_eq!(fp.cuda_driver_version, "12.4");
        assert_eq!(fp.memory_total_bytes, (80u64 << 30).to_string());
        assert_eq!(fp.ecc_mode, "enabled (pending disabled)");
        assert_eq!(fp.mig_mode, "disabled");
        assert_eq!(fp.max_sm_clock_mhz, "1980");
        assert_eq!(fp.ncu_version, "2025.1.1.0");
        // cgp-gate locks, so ncu is told not to.
        assert_eq!(fp.clock_control, "none");
        assert_eq!(fp.cache_control, "none");
        assert_eq!(fp.clocks, "sm=1410,mem=2619");

        let ncu = fingerprint(Some(&gpu), 0, "", profiling, &ClockSetting::Ncu);
        assert_eq!(ncu.clock_control, "base");
        assert_eq!(ncu.ncu_version, UNKNOWN);
        // A device that does not exist gives an all-unknown GPU part, not a panic.
        let missing = fingerprint(Some(&gpu), 7, "", profiling, &ClockSetting::Ncu);
        assert_eq!(missing.gpu_name, UNKNOWN);
        assert_eq!(missing.gpu_key(), "unknown-gpu");
        let none = fingerprint(None, 0, "2025.1.1.0", profiling, &ClockSetting::NvmlBase);
        assert_eq!(none.gpu_name, UNKNOWN);
        assert_eq!(none.clocks, "nvml-base");
    }
}
