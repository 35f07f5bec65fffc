//! What `cgp-gate env` shows: the GPUs cgp-gate would measure on and the ncu it would run.
//! The command itself is `crate::commands::env`.

use serde::Serialize;

use super::device::Reading;
use super::driver::{Gpu, GpuUnavailable};
use super::fingerprint::cuda_version_string;
use super::identify::hardware_fingerprint;
use super::roofline::{Peaks, peaks_for};
use crate::ncu::install::NcuInfo;

/// One GPU as `env` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuInfo {
    pub index: u32,
    /// The baseline-set name (`nvidia-h200`).
    pub gpu_key: String,
    /// The GPU and driver fingerprint fields (the profiler fields come from the spec).
    pub fingerprint: std::collections::BTreeMap<String, String>,
    pub now: Reading,
    /// Vendor peaks for the roofline, when the model is in the table.
    pub peaks: Option<Peaks>,
}

/// NVML's part of the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NvmlInfo {
    pub available: bool,
    pub driver_version: Option<String>,
    /// The CUDA driver API version (`12.4`).
    pub cuda_driver_version: Option<String>,
    /// The one-line reason when NVML is unavailable or failed.
    pub error: Option<String>,
    pub gpus: Vec<GpuInfo>,
}

/// Everything `env` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnvReport {
    pub ncu: NcuInfo,
    pub nvml: NvmlInfo,
}

/// Profiler-setting fields of the fingerprint: they come from the spec, not the machine.
const SPEC_FIELDS: &[&str] = &[
    "ncu_version",
    "clock_control",
    "cache_control",
    "clocks",
    "profiler",
    "profiler_version",
];

/// Build the report from a GPU (or why there is none) and the ncu information.
pub fn env_report(gpu: std::result::Result<&dyn Gpu, &GpuUnavailable>, ncu: NcuInfo) -> EnvReport {
    let nvml = match gpu {
        Err(u) => NvmlInfo {
            available: false,
            driver_version: None,
            cuda_driver_version: None,
            error: Some(u.to_string()),
            gpus: Vec::new(),
        },
        Ok(g) => match g.device_count() {
            Err(e) => NvmlInfo {
                available: true,
                driver_version: g.driver_version().ok(),
                cuda_driver_version: g.cuda_driver_version().ok().map(cuda_version_string),
                error: Some(format!("NVML loaded but cannot count GPUs: {e}")),
                gpus: Vec::new(),
            },
            Ok(n) => NvmlInfo {
                available: true,
                driver_version: g.driver_version().ok(),
                cuda_driver_version: g.cuda_driver_version().ok().map(cuda_version_string),
                error: None,
                gpus: (0..n)
                    .map(|i| {
                        let fp = hardware_fingerprint(g, i);
                        GpuInfo {
                            index: i,
                            gpu_key: fp.gpu_key(),
                            fingerprint: fp
                                .fields()
                                .into_iter()
                                .filter(|(k, _)| !SPEC_FIELDS.contains(k))
                                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                                .collect(),
                            now: g.read(i),
                            peaks: peaks_for(fp.gpu_name.as_str()),
                        }
                    })
                    .collect(),
            },
        },
    };
    EnvReport { ncu, nvml }
}

fn opt<T: ToString>(v: Option<T>, unit: &str) -> String {
    v.map_or_else(|| "?".to_owned(), |x| format!("{}{unit}", x.to_string()))
}

/// The report as text.
pub fn render_text(r: &EnvReport) -> String {
    let mut s = String::new();
    match (&r.ncu.path, &r.ncu.version, &r.ncu.error) {
        (Some(p), Some(v), _) => s.push_str(&format!("ncu: {v} ({p})\n")),
        (Some(p), None, e) => s.push_str(&format!(
            "ncu: {p}: version unknown ({})\n",
            e.as_deref().unwrap_or("no version line")
        )),
        (None, _, e) => s.push_str(&format!("ncu: {}\n", e.as_deref().unwrap_or("not found"))),
    }
    if let Some(e) = &r.nvml.error {
        s.push_str(&format!("nvml: {e}\n"));
        return s;
    }
    s.push_str(&format!(
        "nvml: driver {}, CUDA {}, {} GPU{}\n",
        r.nvml.driver_version.as_deref().unwrap_or("unknown"),
        r.nvml.cuda_driver_version.as_deref().unwrap_or("unknown"),
        r.nvml.gpus.len(),
        if r.nvml.gpus.len() == 1 { "" } else { "s" }
    ));
    for g in &r.nvml.gpus {
        let name = g.fingerprint.get("gpu_name").map_or("unknown", String::as_str);
        s.push_str(&format!(
            "\nGPU {}: {name} (baseline key {})\n",
            g.index, g.gpu_key
        ));
        let width = g.fingerprint.keys().map(String::len).max().unwrap_or(0);
        for (k, v) in &g.fingerprint {
            s.push_str(&format!("  {k:<width$}  {v}\n"));
        }
        let n = &g.now;
        s.push_str(&format!(
            "  now: SM {}, memory {}, {}, {}, throttle reasons: {}\n",
            opt(n.sm_clock_mhz, " MHz"),
            opt(n.mem_clock_mhz, " MHz"),
            opt(n.temperature_c, " C"),
            opt(
                n.power_mw
                    .map(|p| crate::foundation::units::format_number(f64::from(p) / 1000.0)),
                " W"
            ),
            n.throttle.map_or_else(|| "?".to_owned(), |t| t.to_string()),
        ));
        match &g.peaks {
            Some(p) => s.push_str(&format!(
                "  roofline peaks ({}): FP32 {} TFLOP/s, TF32 tensor {}, FP16 tensor {}, BF16 tensor {} TFLOP/s (dense), DRAM {} GB/s\n    source: {}\n",
                p.sku,
                crate::foundation::units::format_number(p.fp32_tflops),
                crate::foundation::units::format_number(p.tf32_tensor_tflops),
                crate::foundation::units::format_number(p.fp16_tensor_tflops),
                crate::foundation::units::format_number(p.bf16_tensor_tflops),
                crate::foundation::units::format_number(p.dram_gbps),
                p.source
            )),
            None => s.push_str(
                "  roofline peaks: not known for this model (derived % of peak metrics are left out)\n",
            ),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::fake::{FakeDevice, FakeGpu};

    #[test]
    fn report_without_driver_is_one_line() {
        let u = GpuUnavailable {
            reason: "libnvidia-ml.so.1: cannot open shared object file".into(),
            driver_present: false,
        };
        let ncu = NcuInfo {
            path: None,
            version: None,
            error: Some("not found on PATH".into()),
        };
        let text = render_text(&env_report(Err(&u), ncu));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0], "ncu: not found on PATH");
        assert!(lines[1].starts_with("nvml: no NVIDIA driver found (NVML could not be loaded"));
    }

    #[test]
    fn report_lists_each_gpu() {
        let mut l4 = FakeDevice::new("NVIDIA L4");
        l4.compute_capability = (8, 9);
        let gpu = FakeGpu::new(vec![
            FakeDevice::new("NVIDIA H200"),
            l4,
            FakeDevice::new("Some Future GPU"),
        ]);
        let ncu = NcuInfo {
            path: Some("/opt/ncu".into()),
            version: Some("2025.1.1.0".into()),
            error: None,
        };
        let r = env_report(Ok(&gpu), ncu);
        assert_eq!(r.nvml.gpus.len(), 3);
        assert_eq!(r.nvml.gpus[1].fingerprint["compute_capability"], "8.9");
        assert!(!r.nvml.gpus[0].fingerprint.contains_key("clocks"));
        assert!(r.nvml.gpus[2].peaks.is_none());
        let text = render_text(&r);
        assert!(
            text.starts_with("ncu: 2025.1.1.0 (/opt/ncu)\nnvml: driver 000.00.00, CUDA 12.4, 3 GPUs\n"),
            "{text}"
        );
        assert!(text.contains("GPU 1: NVIDIA L4 (baseline key nvidia-l4)"));
        assert!(text.contains("roofline peaks (H200 SXM 141GB): FP32 67 TFLOP/s"));
        assert!(text.contains("roofline peaks: not known for this model"));
        assert!(text.contains("now: SM 345 MHz, memory 2619 MHz, 35 C, 70 W, throttle reasons: gpu_idle"));
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["nvml"]["gpus"][0]["fingerprint"]["gpu_name"], "NVIDIA H200");
        assert_eq!(json["nvml"]["gpus"][0]["now"]["throttle"], 1);
    }
}
