//! The clock setting a spec asks for and a fingerprint records (the data, apart from
//! `cgp-profile`'s `gpu::clocks`, which locks them through NVML).

use serde::{Deserialize, Serialize};

/// Clock locking (`clocks:` in the spec, which re-exports this type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClockSetting {
    /// ncu locks to base clocks (`--clock-control base`). The default.
    Ncu,
    /// cgp-gate locks through NVML to the base (default application) clocks; ncu gets `none`.
    NvmlBase,
    /// cgp-gate locks through NVML to the maximum clocks; ncu gets `none`.
    NvmlMax,
    /// cgp-gate locks through NVML to these clocks; ncu gets `none`.
    Fixed { sm_mhz: u32, mem_mhz: u32 },
    /// Nobody touches the clocks (ncu gets `none`).
    None,
}

/// The clock setting as recorded in fingerprints: `ncu`, `nvml-base`, `nvml-max`,
/// `sm=1410,mem=1593` or `none`.
pub fn clock_setting_label(clocks: &ClockSetting) -> String {
    match clocks {
        ClockSetting::Ncu => "ncu".to_owned(),
        ClockSetting::NvmlBase => "nvml-base".to_owned(),
        ClockSetting::NvmlMax => "nvml-max".to_owned(),
        ClockSetting::Fixed { sm_mhz, mem_mhz } => format!("sm={sm_mhz},mem={mem_mhz}"),
        ClockSetting::None => "none".to_owned(),
    }
}
