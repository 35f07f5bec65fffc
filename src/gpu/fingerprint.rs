//! What a measurement was taken on: the GPU, the driver, the profiler and its settings.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Text used for any part that could not be determined.
pub const UNKNOWN: &str = "unknown";

/// The environment of a measurement. Every field is text so that "unknown" is representable and
/// the JSON form is stable across versions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub gpu_name: String,
    pub gpu_uuid: String,
    pub pci_bus_id: String,
    pub compute_capability: String,
    pub memory_total_bytes: String,
    pub driver_version: String,
    pub cuda_driver_version: String,
    pub vbios_version: String,
    pub power_limit_mw: String,
    pub mig_mode: String,
    pub ecc_mode: String,
    pub persistence_mode: String,
    pub max_sm_clock_mhz: String,
    pub max_mem_clock_mhz: String,
    pub ncu_version: String,
    pub clock_control: String,
    pub cache_control: String,
    /// Clock locking as configured (`ncu`, `nvml-base`, `none`, ...).
    #[serde(default = "unknown")]
    pub clocks: String,
}

fn unknown() -> String {
    UNKNOWN.to_owned()
}

impl Default for Fingerprint {
    fn default() -> Self {
        Self {
            gpu_name: unknown(),
            gpu_uuid: unknown(),
            pci_bus_id: unknown(),
            compute_capability: unknown(),
            memory_total_bytes: unknown(),
            driver_version: unknown(),
            cuda_driver_version: unknown(),
            vbios_version: unknown(),
            power_limit_mw: unknown(),
            mig_mode: unknown(),
            ecc_mode: unknown(),
            persistence_mode: unknown(),
            max_sm_clock_mhz: unknown(),
            max_mem_clock_mhz: unknown(),
            ncu_version: unknown(),
            clock_control: unknown(),
            cache_control: unknown(),
            clocks: unknown(),
        }
    }
}

/// Fields that decide whether two measurements are comparable, by default. The UUID, bus id,
/// VBIOS and power limit are left out so that identical cards share baselines.
pub const DEFAULT_KEY_FIELDS: &[&str] = &[
    "gpu_name",
    "compute_capability",
    "memory_total_bytes",
    "driver_version",
    "ncu_version",
    "clock_control",
    "cache_control",
    "clocks",
    "mig_mode",
];

impl Fingerprint {
    /// All fields as name -> value, in a fixed order.
    pub fn fields(&self) -> BTreeMap<&'static str, &str> {
        BTreeMap::from([
            ("gpu_name", self.gpu_name.as_str()),
            ("gpu_uuid", self.gpu_uuid.as_str()),
            ("pci_bus_id", self.pci_bus_id.as_str()),
            ("compute_capability", self.compute_capability.as_str()),
            ("memory_total_bytes", self.memory_total_bytes.as_str()),
            ("driver_version", self.driver_version.as_str()),
            ("cuda_driver_version", self.cuda_driver_version.as_str()),
            ("vbios_version", self.vbios_version.as_str()),
            ("power_limit_mw", self.power_limit_mw.as_str()),
            ("mig_mode", self.mig_mode.as_str()),
            ("ecc_mode", self.ecc_mode.as_str()),
            ("persistence_mode", self.persistence_mode.as_str()),
            ("max_sm_clock_mhz", self.max_sm_clock_mhz.as_str()),
            ("max_mem_clock_mhz", self.max_mem_clock_mhz.as_str()),
            ("ncu_version", self.ncu_version.as_str()),
            ("clock_control", self.clock_control.as_str()),
            ("cache_control", self.cache_control.as_str()),
            ("clocks", self.clocks.as_str()),
        ])
    }

    /// The fields among `key_fields` whose values differ, as (field, ours, theirs).
    pub fn differences(&self, other: &Self, key_fields: &[&str]) -> Vec<(String, String, String)> {
        let (a, b) = (self.fields(), other.fields());
        key_fields
            .iter()
            .filter_map(|f| {
                let (x, y) = (a.get(f)?, b.get(f)?);
                (x != y).then(|| ((*f).to_owned(), (*x).to_owned(), (*y).to_owned()))
            })
            .collect()
    }

    /// A file-name-safe key naming the baseline set: the GPU name slug (e.g. `nvidia-h200`), or
    /// `unknown-gpu`.
    pub fn gpu_key(&self) -> String {
        if self.gpu_name == UNKNOWN {
            return "unknown-gpu".to_owned();
        }
        slug(&self.gpu_name)
    }
}

/// Lowercase, with runs of anything but letters and digits turned into one `-`.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_only_key_fields() {
        let a = Fingerprint {
            gpu_name: "NVIDIA H200".into(),
            gpu_uuid: "GPU-1".into(),
            ..Default::default()
        };
        let b = Fingerprint {
            gpu_name: "NVIDIA H100 80GB HBM3".into(),
            gpu_uuid: "GPU-2".into(),
            ..Default::default()
        };
        let d = a.differences(&b, DEFAULT_KEY_FIELDS);
        assert_eq!(
            d,
            vec![(
                "gpu_name".to_owned(),
                "NVIDIA H200".to_owned(),
                "NVIDIA H100 80GB HBM3".to_owned()
            )]
        );
        assert_eq!(a.gpu_key(), "nvidia-h200");
        assert_eq!(Fingerprint::default().gpu_key(), "unknown-gpu");
    }
}
