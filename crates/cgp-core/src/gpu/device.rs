//! What a GPU reports: a [`Reading`] of its clocks, temperature, power and energy, its
//! [`ThrottleReasons`], the [`ClockDomain`]s, and [`UNKNOWN`] for what could not be read. The data
//! the results and baselines keep; the device behind the `Gpu` trait is `cgp-profile`'s `gpu`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Text used for any part that could not be determined.
pub const UNKNOWN: &str = "unknown";

/// A clock domain, as cgp-gate uses them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockDomain {
    /// The SM (graphics) clock: what `set_gpu_locked_clocks` locks.
    Sm,
    /// The memory clock.
    Memory,
}

/// NVML's clock throttle ("clock event") reasons, as its bit mask. The bit values are NVML's
/// `nvmlClocksThrottleReason*` constants, so a real reading maps one to one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ThrottleReasons(pub u64);

impl ThrottleReasons {
    pub(crate) const NONE: Self = Self(0);
    pub const GPU_IDLE: Self = Self(0x1);
    /// Clocks held by application clocks or locked clocks (ours, nvidia-smi's or ncu's).
    pub const APPLICATIONS_CLOCKS_SETTING: Self = Self(0x2);
    pub const SW_POWER_CAP: Self = Self(0x4);
    pub const HW_SLOWDOWN: Self = Self(0x8);
    pub const SYNC_BOOST: Self = Self(0x10);
    pub const SW_THERMAL_SLOWDOWN: Self = Self(0x20);
    pub const HW_THERMAL_SLOWDOWN: Self = Self(0x40);
    pub const HW_POWER_BRAKE_SLOWDOWN: Self = Self(0x80);
    pub const DISPLAY_CLOCK_SETTING: Self = Self(0x100);

    const NAMES: &[(Self, &'static str)] = &[
        (Self::GPU_IDLE, "gpu_idle"),
        (Self::APPLICATIONS_CLOCKS_SETTING, "applications_clocks_setting"),
        (Self::SW_POWER_CAP, "sw_power_cap"),
        (Self::HW_SLOWDOWN, "hw_slowdown"),
        (Self::SYNC_BOOST, "sync_boost"),
        (Self::SW_THERMAL_SLOWDOWN, "sw_thermal_slowdown"),
        (Self::HW_THERMAL_SLOWDOWN, "hw_thermal_slowdown"),
        (Self::HW_POWER_BRAKE_SLOWDOWN, "hw_power_brake_slowdown"),
        (Self::DISPLAY_CLOCK_SETTING, "display_clock_setting"),
    ];

    /// Reasons that mean the GPU ran slower than it was set to: power capping, thermal and
    /// hardware slowdowns. Idle, application/locked clocks, sync boost and display clocks are
    /// settings or states, not throttling of a measurement.
    pub(crate) const SLOWDOWN: Self = Self(
        Self::SW_POWER_CAP.0
            | Self::HW_SLOWDOWN.0
            | Self::SW_THERMAL_SLOWDOWN.0
            | Self::HW_THERMAL_SLOWDOWN.0
            | Self::HW_POWER_BRAKE_SLOWDOWN.0,
    );

    pub(crate) fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn intersects(self, other: Self) -> bool {
        self.0 & other.0 != 0
    }

    #[must_use]
    pub fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether any slowdown reason is set.
    pub fn is_slowdown(self) -> bool {
        self.intersects(Self::SLOWDOWN)
    }

    /// snake_case names of the set bits; unknown bits as `0x...`.
    pub(crate) fn names(self) -> Vec<String> {
        let mut out = Vec::new();
        let mut known = 0;
        for (flag, name) in Self::NAMES {
            known |= flag.0;
            if self.contains(*flag) {
                out.push((*name).to_owned());
            }
        }
        let unknown = self.0 & !known;
        if unknown != 0 {
            out.push(format!("{unknown:#x}"));
        }
        out
    }
}

impl fmt::Display for ThrottleReasons {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = self.names();
        if names.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&names.join(","))
        }
    }
}

/// One reading of the GPU's dynamic state. Each part is `None` where the GPU does not report it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    pub sm_clock_mhz: Option<u32>,
    pub mem_clock_mhz: Option<u32>,
    pub temperature_c: Option<u32>,
    pub power_mw: Option<u32>,
    /// Energy used since the driver was loaded, in millijoules (Volta and newer).
    pub energy_mj: Option<u64>,
    pub throttle: Option<ThrottleReasons>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttle_names_and_slowdown() {
        let r = ThrottleReasons::GPU_IDLE.union(ThrottleReasons::SW_THERMAL_SLOWDOWN);
        assert_eq!(r.names(), vec!["gpu_idle", "sw_thermal_slowdown"]);
        assert!(r.is_slowdown());
        assert!(!ThrottleReasons::APPLICATIONS_CLOCKS_SETTING.is_slowdown());
        assert_eq!(ThrottleReasons(0x1000 | 0x4).to_string(), "sw_power_cap,0x1000");
        assert_eq!(ThrottleReasons::NONE.to_string(), "none");
    }
}
