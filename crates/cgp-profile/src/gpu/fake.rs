//! A scriptable [`Gpu`] for tests and for running cgp-gate's GPU logic without a GPU.
//!
//! Every value a [`FakeDevice`] reports is made up (synthetic); nothing here describes a real
//! card beyond its name string.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use super::device::{ClockDomain, Reading, ThrottleReasons};
use super::driver::{Gpu, GpuError};

/// One fake device. Fields are public so a test sets exactly what it needs.
#[derive(Debug, Clone)]
pub struct FakeDevice {
    pub name: String,
    pub uuid: String,
    pub pci_bus_id: String,
    pub compute_capability: (i32, i32),
    pub memory_total_bytes: u64,
    pub vbios_version: String,
    pub power_limit_mw: u32,
    pub mig_enabled: bool,
    pub ecc: (bool, bool),
    pub persistence: bool,
    pub max_sm_mhz: u32,
    pub max_mem_mhz: u32,
    pub default_sm_mhz: u32,
    pub default_mem_mhz: u32,
    pub supported_mem_mhz: Vec<u32>,
    /// SM clocks reported as supported for every memory clock.
    pub supported_sm_mhz: Vec<u32>,
    /// Scripted readings: each [`Gpu::read`] returns the next one; the last one repeats.
    /// The per-value getters return the reading most recently returned (the first before any).
    pub readings: Vec<Reading>,
    /// Returned by `set_locked_sm_clocks` (e.g. [`GpuError::NoPermission`] to act as non-root).
    pub lock_error: Option<GpuError>,
    /// Returned by `set_locked_mem_clocks` and `reset_locked_mem_clocks` (e.g.
    /// [`GpuError::NotSupported`] to act as a pre-Ampere card).
    pub mem_lock_error: Option<GpuError>,
    /// Returned by `reset_locked_sm_clocks`.
    pub reset_error: Option<GpuError>,
    /// Returned by the energy counter (e.g. [`GpuError::NotSupported`] for pre-Volta cards).
    pub energy_error: Option<GpuError>,
}

impl FakeDevice {
    /// A device with the given name and made-up, self-consistent values: supported SM clocks
    /// 1000..=2000 MHz in 15 MHz steps plus the default, memory 1593 and 2619 MHz.
    pub fn new(name: &str) -> Self {
        let default_sm_mhz = 1590;
        let mut supported_sm_mhz: Vec<u32> = (0..=66).map(|i| 1000 + 15 * i).collect();
        supported_sm_mhz.push(default_sm_mhz);
        supported_sm_mhz.sort_unstable();
        supported_sm_mhz.dedup();
        supported_sm_mhz.reverse();
        Self {
            name: name.to_owned(),
            uuid: "GPU-00000000-0000-0000-0000-000000000000".to_owned(),
            pci_bus_id: "00000000:01:00.0".to_owned(),
            compute_capability: (9, 0),
            memory_total_bytes: 80 * 1024 * 1024 * 1024,
            vbios_version: "00.00.00.00.00".to_owned(),
            power_limit_mw: 700_000,
            mig_enabled: false,
            ecc: (true, true),
            persistence: true,
            max_sm_mhz: 1980,
            max_mem_mhz: 2619,
            default_sm_mhz,
            default_mem_mhz: 2619,
            supported_mem_mhz: vec![2619, 1593],
            supported_sm_mhz,
            readings: vec![Reading {
                sm_clock_mhz: Some(345),
                mem_clock_mhz: Some(2619),
                temperature_c: Some(35),
                power_mw: Some(70_000),
                energy_mj: Some(1_000_000),
                throttle: Some(ThrottleReasons::GPU_IDLE),
            }],
            lock_error: None,
            mem_lock_error: None,
            reset_error: None,
            energy_error: None,
        }
    }
}

#[derive(Debug, Default)]
struct State {
    /// Per device: index of the reading most recently returned, and whether any was.
    cursor: Vec<(usize, bool)>,
    calls: Vec<String>,
    log: Option<File>,
}

/// A scriptable [`Gpu`]: fixed identity, scripted readings, injectable errors; it records every
/// call that would change the GPU.
#[derive(Debug)]
pub struct FakeGpu {
    pub devices: Vec<FakeDevice>,
    pub driver_version: String,
    pub cuda_driver_version: i32,
    /// What [`Gpu::counters_admin_only`] says (`None`: the driver does not say).
    pub counters_admin_only: Option<bool>,
    /// What [`Gpu::stand_in`] says: set by the stand-in of `CGP_GATE_STAND_IN_GPU`.
    pub stand_in: bool,
    state: Mutex<State>,
}

impl FakeGpu {
    pub fn new(devices: Vec<FakeDevice>) -> Self {
        let cursor = vec![(0, false); devices.len()];
        Self {
            devices,
            driver_version: "000.00.00".to_owned(),
            cuda_driver_version: 12040,
            counters_admin_only: None,
            stand_in: false,
            state: Mutex::new(State {
                cursor,
                ..State::default()
            }),
        }
    }

    /// Also append every recorded call, one per line, to `path` as it happens (unbuffered), so
    /// that another process can see what a killed process did.
    ///
    /// # Errors
    /// When the file cannot be opened for appending.
    pub fn with_call_log(self, path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        self.state().log = Some(file);
        Ok(self)
    }

    /// The calls that would have changed the GPU, in order, e.g. `set_locked_sm_clocks(0, 1590, 1590)`.
    pub fn calls(&self) -> Vec<String> {
        self.state().calls.clone()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while recording a call leaves the state usable; tests of panics rely on it.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn record(&self, call: String) {
        let mut st = self.state();
        if let Some(f) = st.log.as_mut() {
            // Best effort: the log is a test aid, and a failed write must not hide the call.
            let _ = writeln!(f, "{call}");
        }
        st.calls.push(call);
    }

    fn dev(&self, device: u32) -> Result<&FakeDevice, GpuError> {
        usize::try_from(device)
            .ok()
            .and_then(|i| self.devices.get(i))
            .ok_or(GpuError::NoDevice(device))
    }

    fn current(&self, device: u32) -> Result<Reading, GpuError> {
        let d = self.dev(device)?;
        let st = self.state();
        let idx = st.cursor.get(device as usize).map_or(0, |c| c.0);
        Ok(d.readings.get(idx).cloned().unwrap_or_default())
    }
}

fn some<T>(v: Option<T>) -> Result<T, GpuError> {
    v.ok_or(GpuError::NotSupported)
}

impl Gpu for FakeGpu {
    fn counters_admin_only(&self) -> Result<Option<bool>, GpuError> {
        Ok(self.counters_admin_only)
    }
    fn stand_in(&self) -> bool {
        self.stand_in
    }
    fn device_count(&self) -> Result<u32, GpuError> {
        u32::try_from(self.devices.len()).map_err(|_| GpuError::Other("too many devices".into()))
    }
    fn name(&self, device: u32) -> Result<String, GpuError> {
        Ok(self.dev(device)?.name.clone())
    }
    fn uuid(&self, device: u32) -> Result<String, GpuError> {
        Ok(self.dev(device)?.uuid.clone())
    }
    fn pci_bus_id(&self, device: u32) -> Result<String, GpuError> {
        Ok(self.dev(device)?.pci_bus_id.clone())
    }
    fn compute_capability(&self, device: u32) -> Result<(i32, i32), GpuError> {
        Ok(self.dev(device)?.compute_capability)
    }
    fn memory_total_bytes(&self, device: u32) -> Result<u64, GpuError> {
        Ok(self.dev(device)?.memory_total_bytes)
    }
    fn driver_version(&self) -> Result<String, GpuError> {
        Ok(self.driver_version.clone())
    }
    fn cuda_driver_version(&self) -> Result<i32, GpuError> {
        Ok(self.cuda_driver_version)
    }
    fn vbios_version(&self, device: u32) -> Result<String, GpuError> {
        Ok(self.dev(device)?.vbios_version.clone())
    }
    fn power_limit_mw(&self, device: u32) -> Result<u32, GpuError> {
        Ok(self.dev(device)?.power_limit_mw)
    }
    fn mig_enabled(&self, device: u32) -> Result<bool, GpuError> {
        Ok(self.dev(device)?.mig_enabled)
    }
    fn ecc_mode(&self, device: u32) -> Result<(bool, bool), GpuError> {
        Ok(self.dev(device)?.ecc)
    }
    fn persistence_mode(&self, device: u32) -> Result<bool, GpuError> {
        Ok(self.dev(device)?.persistence)
    }
    fn max_clock_mhz(&self, device: u32, domain: ClockDomain) -> Result<u32, GpuError> {
        let d = self.dev(device)?;
        Ok(match domain {
            ClockDomain::Sm => d.max_sm_mhz,
            ClockDomain::Memory => d.max_mem_mhz,
        })
    }
    fn default_app_clock_mhz(&self, device: u32, domain: ClockDomain) -> Result<u32, GpuError> {
        let d = self.dev(device)?;
        Ok(match domain {
            ClockDomain::Sm => d.default_sm_mhz,
            ClockDomain::Memory => d.default_mem_mhz,
        })
    }
    fn current_clock_mhz(&self, device: u32, domain: ClockDomain) -> Result<u32, GpuError> {
        let r = self.current(device)?;
        some(match domain {
            ClockDomain::Sm => r.sm_clock_mhz,
            ClockDomain::Memory => r.mem_clock_mhz,
        })
    }
    fn temperature_c(&self, device: u32) -> Result<u32, GpuError> {
        some(self.current(device)?.temperature_c)
    }
    fn power_usage_mw(&self, device: u32) -> Result<u32, GpuError> {
        some(self.current(device)?.power_mw)
    }
    fn total_energy_mj(&self, device: u32) -> Result<u64, GpuError> {
        if let Some(e) = &self.dev(device)?.energy_error {
            return Err(e.clone());
        }
        some(self.current(device)?.energy_mj)
    }
    fn throttle_reasons(&self, device: u32) -> Result<ThrottleReasons, GpuError> {
        some(self.current(device)?.throttle)
    }
    fn supported_mem_clocks(&self, device: u32) -> Result<Vec<u32>, GpuError> {
        Ok(self.dev(device)?.supported_mem_mhz.clone())
    }
    fn supported_sm_clocks(&self, device: u32, mem_mhz: u32) -> Result<Vec<u32>, GpuError> {
        let d = self.dev(device)?;
        if !d.supported_mem_mhz.contains(&mem_mhz) {
            return Err(GpuError::Other(format!("invalid memory clock {mem_mhz} MHz")));
        }
        Ok(d.supported_sm_mhz.clone())
    }
    fn set_locked_sm_clocks(&self, device: u32, min_mhz: u32, max_mhz: u32) -> Result<(), GpuError> {
        let d = self.dev(device)?;
        self.record(format!("set_locked_sm_clocks({device}, {min_mhz}, {max_mhz})"));
        d.lock_error.clone().map_or(Ok(()), Err)
    }
    fn reset_locked_sm_clocks(&self, device: u32) -> Result<(), GpuError> {
        let d = self.dev(device)?;
        self.record(format!("reset_locked_sm_clocks({device})"));
        d.reset_error.clone().map_or(Ok(()), Err)
    }
    fn set_locked_mem_clocks(&self, device: u32, min_mhz: u32, max_mhz: u32) -> Result<(), GpuError> {
        let d = self.dev(device)?;
        self.record(format!("set_locked_mem_clocks({device}, {min_mhz}, {max_mhz})"));
        d.mem_lock_error.clone().map_or(Ok(()), Err)
    }
    fn reset_locked_mem_clocks(&self, device: u32) -> Result<(), GpuError> {
        let d = self.dev(device)?;
        self.record(format!("reset_locked_mem_clocks({device})"));
        d.mem_lock_error.clone().map_or(Ok(()), Err)
    }

    fn read(&self, device: u32) -> Reading {
        let Ok(d) = self.dev(device) else {
            return Reading::default();
        };
        let mut st = self.state();
        let Some(c) = st.cursor.get_mut(device as usize) else {
            return Reading::default();
        };
        let last = d.readings.len().saturating_sub(1);
        if c.1 {
            c.0 = (c.0 + 1).min(last);
        }
        c.1 = true;
        let mut r = d.readings.get(c.0).cloned().unwrap_or_default();
        if d.energy_error.is_some() {
            r.energy_mj = None;
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_advance_and_last_repeats() {
        let mut d = FakeDevice::new("NVIDIA H200");
        d.readings = (0..3)
            .map(|i| Reading {
                temperature_c: Some(40 + i),
                ..Reading::default()
            })
            .collect();
        let g = FakeGpu::new(vec![d]);
        assert_eq!(g.temperature_c(0), Ok(40));
        let temps: Vec<_> = (0..5).map(|_| g.read(0).temperature_c).collect();
        assert_eq!(temps, [Some(40), Some(41), Some(42), Some(42), Some(42)]);
        assert_eq!(g.temperature_c(0), Ok(42));
        assert_eq!(g.power_usage_mw(0), Err(GpuError::NotSupported));
        assert_eq!(g.name(1), Err(GpuError::NoDevice(1)));
    }

    #[test]
    fn records_setters_and_injects_errors() {
        let mut d = FakeDevice::new("NVIDIA L4");
        d.lock_error = Some(GpuError::NoPermission);
        let g = FakeGpu::new(vec![d]);
        assert_eq!(g.set_locked_sm_clocks(0, 1590, 1590), Err(GpuError::NoPermission));
        assert_eq!(g.reset_locked_sm_clocks(0), Ok(()));
        assert_eq!(
            g.calls(),
            ["set_locked_sm_clocks(0, 1590, 1590)", "reset_locked_sm_clocks(0)"]
        );
    }
}
