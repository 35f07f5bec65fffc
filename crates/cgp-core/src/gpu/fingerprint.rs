//! What a measurement was taken on: the GPU, the driver, the profiler and its settings.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

use super::clock_setting::{ClockSetting, clock_setting_label};

pub use super::device::UNKNOWN;
use crate::measured::profiler::ProfilerKind;

/// The environment of a measurement. Every field but the profiler is a [`FieldValue`]: what was
/// read, or that it is unknown or does not apply; files hold each as text (the sentinels as
/// [`UNKNOWN`] and [`NOT_USED`]), so the JSON form is stable across versions.
///
/// Which tool measured is [`Fingerprint::profiler`] (`ncu`, `nsys` or `cupti`) with its version in
/// [`Fingerprint::profiler_version`]; `ncu_version` keeps its meaning (the Nsight Compute that
/// measured, [`FieldValue::NotUsed`] when another tool did) for the tools that read it. Files written before
/// `profiler` existed were all measured by ncu: they read as `profiler: ncu` with their
/// `ncu_version` as `profiler_version`. The default is all unknown, measured by ncu.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(from = "StoredFingerprint")]
pub struct Fingerprint {
    pub gpu_name: FieldValue,
    pub gpu_uuid: FieldValue,
    pub pci_bus_id: FieldValue,
    pub compute_capability: FieldValue,
    pub memory_total_bytes: FieldValue,
    pub driver_version: FieldValue,
    pub cuda_driver_version: FieldValue,
    pub vbios_version: FieldValue,
    pub power_limit_mw: FieldValue,
    pub mig_mode: FieldValue,
    pub ecc_mode: FieldValue,
    pub persistence_mode: FieldValue,
    pub max_sm_clock_mhz: FieldValue,
    pub max_mem_clock_mhz: FieldValue,
    pub ncu_version: FieldValue,
    pub clock_control: FieldValue,
    pub cache_control: FieldValue,
    /// Clock locking as configured (`ncu`, `nvml-base`, `none`, ...).
    pub clocks: FieldValue,
    /// The profiler that measured.
    pub profiler: ProfilerKind,
    /// Its version (`2022.3.0.0`, `2022.4.2.1-df9881f`), or `unknown`.
    pub profiler_version: FieldValue,
    /// The GPU part was not read from hardware: the SYNTHETIC stand-in GPU of
    /// `CGP_GATE_STAND_IN_GPU` (docs/gpu.md) made every field of it up. Written only when true,
    /// so the files of real GPUs keep their bytes; every report and baseline of such a run says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub synthetic: bool,
}

/// How files write [`FieldValue::NotUsed`]: a profiler field that does not apply (`ncu_version`
/// of an nsys measurement).
pub(crate) const NOT_USED: &str = "not used";

/// One field of a [`Fingerprint`]: the value read, or why there is none. Written as text, the
/// value itself or [`UNKNOWN`] / [`NOT_USED`], and read back by [`FieldValue::parse`], so files
/// keep the JSON they always had.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum FieldValue {
    Known(String),
    /// Not read: no GPU, a query that failed, a file from before the field existed.
    #[default]
    Unknown,
    /// Does not apply to this measurement (`ncu_version` when nsys or CUPTI measured).
    NotUsed,
}

impl FieldValue {
    /// Text as files hold it: [`UNKNOWN`] and [`NOT_USED`] are the sentinels, anything else a
    /// value.
    pub fn parse(text: impl Into<String>) -> Self {
        let text = text.into();
        match text.as_str() {
            UNKNOWN => Self::Unknown,
            NOT_USED => Self::NotUsed,
            _ => Self::Known(text),
        }
    }

    /// The text files and reports show.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Known(v) => v,
            Self::Unknown => UNKNOWN,
            Self::NotUsed => NOT_USED,
        }
    }

    /// The value, if one was read.
    pub fn known(&self) -> Option<&str> {
        match self {
            Self::Known(v) => Some(v),
            Self::Unknown | Self::NotUsed => None,
        }
    }
}

impl From<String> for FieldValue {
    fn from(text: String) -> Self {
        Self::parse(text)
    }
}

impl From<&str> for FieldValue {
    fn from(text: &str) -> Self {
        Self::parse(text)
    }
}

impl fmt::Display for FieldValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for FieldValue {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for FieldValue {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for FieldValue {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl Serialize for FieldValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FieldValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::parse)
    }
}

/// A fingerprint as files hold it: older files lack the fields added since (`clocks`,
/// `profiler`, `profiler_version`).
#[derive(Deserialize)]
struct StoredFingerprint {
    gpu_name: FieldValue,
    gpu_uuid: FieldValue,
    pci_bus_id: FieldValue,
    compute_capability: FieldValue,
    memory_total_bytes: FieldValue,
    driver_version: FieldValue,
    cuda_driver_version: FieldValue,
    vbios_version: FieldValue,
    power_limit_mw: FieldValue,
    mig_mode: FieldValue,
    ecc_mode: FieldValue,
    persistence_mode: FieldValue,
    max_sm_clock_mhz: FieldValue,
    max_mem_clock_mhz: FieldValue,
    ncu_version: FieldValue,
    clock_control: FieldValue,
    cache_control: FieldValue,
    #[serde(default)]
    clocks: FieldValue,
    #[serde(default)]
    profiler: Option<ProfilerKind>,
    #[serde(default)]
    profiler_version: Option<FieldValue>,
    #[serde(default)]
    synthetic: bool,
}

impl From<StoredFingerprint> for Fingerprint {
    fn from(s: StoredFingerprint) -> Self {
        // Before `profiler` existed, every fingerprint was ncu's, its version in `ncu_version`.
        let profiler = s.profiler.unwrap_or_default();
        let profiler_version = s.profiler_version.unwrap_or_else(|| {
            if profiler.is_nsight_compute() {
                s.ncu_version.clone()
            } else {
                FieldValue::Unknown
            }
        });
        Self {
            gpu_name: s.gpu_name,
            gpu_uuid: s.gpu_uuid,
            pci_bus_id: s.pci_bus_id,
            compute_capability: s.compute_capability,
            memory_total_bytes: s.memory_total_bytes,
            driver_version: s.driver_version,
            cuda_driver_version: s.cuda_driver_version,
            vbios_version: s.vbios_version,
            power_limit_mw: s.power_limit_mw,
            mig_mode: s.mig_mode,
            ecc_mode: s.ecc_mode,
            persistence_mode: s.persistence_mode,
            max_sm_clock_mhz: s.max_sm_clock_mhz,
            max_mem_clock_mhz: s.max_mem_clock_mhz,
            ncu_version: s.ncu_version,
            clock_control: s.clock_control,
            cache_control: s.cache_control,
            clocks: s.clocks,
            profiler,
            profiler_version,
            synthetic: s.synthetic,
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
    "profiler",
    "profiler_version",
];

/// Fields compared whatever `settings.fingerprint_fields` says: an ncu baseline and an nsys
/// measurement are different quantities, never comparable.
pub const ALWAYS_KEY_FIELDS: &[&str] = &["profiler"];

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
            ("profiler", self.profiler.as_str()),
            ("profiler_version", self.profiler_version.as_str()),
        ])
    }

    /// The same measurement setup, measured by `kind` (Nsight Systems, CUPTI, a harness) at
    /// `version` instead of Nsight Compute: the ncu-only fields say so (the others neither lock
    /// clocks nor flush caches), and clocks that were ncu's to lock are not locked. A baseline of
    /// one profiler is never compared with another's (`profiler` is always a key field).
    #[must_use]
    pub fn measured_by(mut self, kind: ProfilerKind, version: &str) -> Self {
        self.profiler = kind;
        let v = version.trim();
        self.profiler_version = if v.is_empty() {
            FieldValue::Unknown
        } else {
            v.into()
        };
        self.ncu_version = FieldValue::NotUsed;
        self.clock_control = FieldValue::NotUsed;
        self.cache_control = FieldValue::NotUsed;
        if self.clocks == clock_setting_label(&ClockSetting::Ncu) {
            self.clocks = clock_setting_label(&ClockSetting::None).into();
        }
        self
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

    /// A stable, file-name-safe key for "measurements comparable with this one": the
    /// [`gpu_key`](Self::gpu_key) plus a short hash of the `key_fields` (by default
    /// [`DEFAULT_KEY_FIELDS`], which leave out the UUID so identical cards share baselines).
    /// Field order does not matter; names that are not fingerprint fields are ignored (the
    /// spec loader rejects them).
    pub fn stable_key<S: AsRef<str>>(&self, key_fields: &[S]) -> String {
        let fields = self.fields();
        let mut chosen: Vec<(&str, &str)> = key_fields
            .iter()
            .filter_map(|f| fields.get_key_value(f.as_ref()).map(|(k, v)| (*k, *v)))
            .collect();
        chosen.sort_unstable();
        chosen.dedup();
        if chosen.is_empty() {
            return self.gpu_key();
        }
        let mut hasher = Sha256::new();
        for (k, v) in &chosen {
            // Length-prefixed so that no two different field sets hash the same text.
            hasher.update(format!("{}:{k}={}:{v}\n", k.len(), v.len()).as_bytes());
        }
        let digest = hasher.finalize();
        let hex = crate::foundation::units::hex(&digest[..6]);
        format!("{}-{hex}", self.gpu_key())
    }

    /// A file-name-safe key naming the baseline set: the GPU name slug (e.g. `nvidia-h200`), or
    /// `unknown-gpu`.
    pub fn gpu_key(&self) -> String {
        if self.gpu_name == FieldValue::Unknown {
            return "unknown-gpu".to_owned();
        }
        slug(self.gpu_name.as_str())
    }
}

/// The profiler settings a fingerprint records, as ncu spells them (`--clock-control base`,
/// `--cache-control all`). The spec's `Profiling` converts into this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfilerControls {
    pub clock_control: &'static str,
    pub cache_control: &'static str,
}

/// NVML's CUDA driver version number (12040) as text (`12.4`).
pub fn cuda_version_string(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

/// The `--clock-control` ncu actually gets: the spec's value when ncu locks the clocks, `none`
/// when cgp-gate locks them through NVML or nobody may touch them.
pub fn effective_clock_control(
    profiling: impl Into<ProfilerControls>,
    clocks: &ClockSetting,
) -> &'static str {
    match clocks {
        ClockSetting::Ncu => profiling.into().clock_control,
        _ => "none",
    }
}

/// Lowercase, with runs of anything but letters and digits turned into one `-`.
pub(crate) fn slug(text: &str) -> String {
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

    #[test]
    fn older_files_read_as_ncu_measurements_and_nsys_is_its_own_profiler() {
        // A fingerprint as files held it before `profiler` (and `clocks`) existed.
        let old = r#"{"gpu_name":"NVIDIA H200","gpu_uuid":"GPU-1","pci_bus_id":"0","compute_capability":"9.0",
            "memory_total_bytes":"1","driver_version":"580","cuda_driver_version":"13.0","vbios_version":"v",
            "power_limit_mw":"700000","mig_mode":"disabled","ecc_mode":"enabled","persistence_mode":"enabled",
            "max_sm_clock_mhz":"1980","max_mem_clock_mhz":"3201","ncu_version":"2025.1.1.0",
            "clock_control":"base","cache_control":"all"}"#;
        let fp: Fingerprint = serde_json::from_str(old).unwrap();
        assert_eq!(fp.profiler, ProfilerKind::Ncu);
        assert_eq!(fp.profiler_version, "2025.1.1.0");
        assert_eq!(fp.clocks, UNKNOWN);
        // Written back, the new fields are there, and they read back the same.
        let again: Fingerprint = serde_json::from_str(&serde_json::to_string(&fp).unwrap()).unwrap();
        assert_eq!(again, fp);
        // A live ncu fingerprint of the same setup compares equal on every default key field.
        let ncu = Fingerprint {
            clocks: "ncu".into(),
            ..fp.clone()
        };
        let nsys = ncu.clone().measured_by(ProfilerKind::Nsys, "2022.4.2.1-df9881f");
        assert_eq!(nsys.profiler, ProfilerKind::Nsys);
        assert_eq!(nsys.profiler_version, "2022.4.2.1-df9881f");
        assert_eq!(nsys.ncu_version, NOT_USED);
        // ncu locked the clocks; under nsys nothing does.
        assert_eq!(nsys.clocks, "none");
        let fields: Vec<String> = ncu
            .differences(&nsys, ALWAYS_KEY_FIELDS)
            .into_iter()
            .map(|d| d.0)
            .collect();
        assert_eq!(fields, ["profiler"]);
        let all: Vec<String> = ncu
            .differences(&nsys, DEFAULT_KEY_FIELDS)
            .into_iter()
            .map(|d| d.0)
            .collect();
        assert!(all.contains(&"profiler_version".to_owned()), "{all:?}");
        // A stored nsys fingerprint keeps its profiler; one without a version says unknown.
        let stored: Fingerprint = serde_json::from_str(&old.replace(
            r#""cache_control":"all"}"#,
            r#""cache_control":"all","profiler":"nsys"}"#,
        ))
        .unwrap();
        assert_eq!(
            (stored.profiler.as_str(), stored.profiler_version.as_str()),
            ("nsys", UNKNOWN)
        );
    }

    /// The typed fields keep the JSON files hold: an nsys fingerprint with `not used` and
    /// `unknown` fields reads into the variants and writes back byte for byte.
    #[test]
    fn sentinels_read_as_variants_and_write_back_the_same_text() {
        let text = r#"{"gpu_name":"NVIDIA H100 80GB HBM3","gpu_uuid":"unknown","pci_bus_id":"0","compute_capability":"9.0","memory_total_bytes":"1","driver_version":"580","cuda_driver_version":"13.0","vbios_version":"v","power_limit_mw":"700000","mig_mode":"disabled","ecc_mode":"enabled","persistence_mode":"enabled","max_sm_clock_mhz":"1980","max_mem_clock_mhz":"3201","ncu_version":"not used","clock_control":"not used","cache_control":"not used","clocks":"none","profiler":"nsys","profiler_version":"unknown"}"#;
        let fp: Fingerprint = serde_json::from_str(text).unwrap();
        assert_eq!(fp.gpu_uuid, FieldValue::Unknown);
        assert_eq!(fp.ncu_version, FieldValue::NotUsed);
        assert_eq!(fp.cache_control, FieldValue::NotUsed);
        assert_eq!(fp.profiler_version, FieldValue::Unknown);
        assert_eq!(fp.gpu_name.known(), Some("NVIDIA H100 80GB HBM3"));
        assert_eq!(fp.profiler, ProfilerKind::Nsys);
        assert_eq!(serde_json::to_string(&fp).unwrap(), text);
        // What `measured_by` makes is the same value as what the file holds.
        let made = Fingerprint {
            profiler: ProfilerKind::Ncu,
            profiler_version: "2025.1.1.0".into(),
            ncu_version: "2025.1.1.0".into(),
            clock_control: "base".into(),
            cache_control: "all".into(),
            clocks: "ncu".into(),
            ..fp.clone()
        }
        .measured_by(ProfilerKind::Nsys, "");
        assert_eq!(made, fp);
        // A profiler the build does not know is an error, not a silent ncu.
        assert!(serde_json::from_str::<Fingerprint>(&text.replace("\"nsys\"", "\"rocprof\"")).is_err());
    }

    #[test]
    fn stable_key_ignores_uuid_by_default() {
        let a = Fingerprint {
            gpu_name: "NVIDIA H100 80GB HBM3".into(),
            gpu_uuid: "GPU-1".into(),
            driver_version: "580.76.05".into(),
            ..Default::default()
        };
        let same_card = Fingerprint {
            gpu_uuid: "GPU-2".into(),
            ..a.clone()
        };
        let new_driver = Fingerprint {
            driver_version: "580.95.05".into(),
            ..a.clone()
        };
        let k = a.stable_key(DEFAULT_KEY_FIELDS);
        assert!(k.starts_with("nvidia-h100-80gb-hbm3-"), "{k}");
        assert_eq!(k.len(), "nvidia-h100-80gb-hbm3-".len() + 12);
        assert_eq!(k, same_card.stable_key(DEFAULT_KEY_FIELDS));
        assert_ne!(k, new_driver.stable_key(DEFAULT_KEY_FIELDS));
        // Order and duplicates do not matter; the UUID matters once it is a key field.
        let reordered: Vec<String> = DEFAULT_KEY_FIELDS.iter().rev().map(|s| (*s).to_owned()).collect();
        assert_eq!(k, a.stable_key(&reordered));
        assert_ne!(
            a.stable_key(&["gpu_name", "gpu_uuid"]),
            same_card.stable_key(&["gpu_name", "gpu_uuid"])
        );
        assert_eq!(a.stable_key::<&str>(&[]), "nvidia-h100-80gb-hbm3");
    }
}
