//! Roofline: vendor peak throughputs per GPU model, and the metrics derived from a launch's work
//! (the values of a target's `flops:`/`bytes:` expressions, which the spec evaluates) and duration.

use serde::{Deserialize, Serialize};

/// Derived metrics, computed from `flops:`/`bytes:` and `gpu__time_duration.sum` by [`derive`]
/// (the spec re-exports this list; their prefix is the spec's `DERIVED_PREFIX`).
pub const DERIVED_METRICS: &[&str] = &[
    "cgp__achieved_flops.per_second",
    "cgp__achieved_bytes.per_second",
    "cgp__arithmetic_intensity",
    "cgp__flops.pct_of_peak",
    "cgp__dram.pct_of_peak",
];

/// Where a target x size x kernel sits on the roofline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RooflinePoint {
    pub target: String,
    pub size: String,
    pub kernel: String,
    pub flops: f64,
    pub bytes: f64,
    pub duration_ns: f64,
    pub achieved_tflops: f64,
    pub achieved_gbps: f64,
    pub intensity: f64,
    pub peak_tflops: Option<f64>,
    pub peak_gbps: Option<f64>,
    pub bound: Option<String>,
}

/// Vendor peak numbers for one GPU SKU. Dense (no structured sparsity), at boost clock, as the
/// datasheet states them; a kernel profiled at base clocks cannot reach them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Peaks {
    /// The SKU the numbers are for (form factor matters: H100 SXM and PCIe differ).
    pub sku: &'static str,
    /// FP32 on CUDA cores (non-tensor), TFLOP/s.
    pub fp32_tflops: f64,
    /// TF32 on tensor cores, dense, TFLOP/s.
    pub tf32_tensor_tflops: f64,
    /// FP16 on tensor cores with FP32 accumulate, dense, TFLOP/s.
    pub fp16_tensor_tflops: f64,
    /// BF16 on tensor cores, dense, TFLOP/s.
    pub bf16_tensor_tflops: f64,
    /// DRAM (HBM/GDDR) bandwidth, GB/s (10^9 bytes per second).
    pub dram_gbps: f64,
    /// Where the numbers come from.
    pub source: &'static str,
}

impl Peaks {
    /// FLOP/s at the FP32 peak.
    pub(crate) fn fp32_flops_per_s(&self) -> f64 {
        self.fp32_tflops * 1e12
    }

    /// byte/s at the DRAM peak.
    pub(crate) fn dram_bytes_per_s(&self) -> f64 {
        self.dram_gbps * 1e9
    }

    /// The arithmetic intensity (FLOP/byte) where the FP32 roof meets the DRAM roof.
    pub(crate) fn ridge_flop_per_byte(&self) -> f64 {
        self.fp32_flops_per_s() / self.dram_bytes_per_s()
    }
}

const H100_DS: &str = "NVIDIA H100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/h100/ \
     (tensor numbers there are with sparsity; halved here)";
const H200_DS: &str = "NVIDIA H200 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/h200/ \
     (H200 SXM column; tensor numbers there are with sparsity; halved here)";
const A100_DS: &str = "NVIDIA A100 Tensor Core GPU datasheet, https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf \
     (dense column)";
const L4_DS: &str = "NVIDIA L4 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/l4/ \
     (tensor numbers there are with sparsity; halved here)";
const L40S_DS: &str = "NVIDIA L40S datasheet, https://www.nvidia.com/en-us/data-center/l40s/ (dense column)";
const ADA_WP: &str = "NVIDIA Ada GPU Architecture whitepaper, appendix table for GeForce RTX 4090, \
     https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf \
     (dense; FP16 with FP32 accumulate)";

/// NVML device names (exact, case-insensitive) -> peaks. Only numbers read from NVIDIA's own
/// datasheets; a name not listed gets no roofline rather than a guessed one. The B200 is left
/// out: public per-GPU FP32 and bandwidth figures for it disagree (HGX vs GB200 configurations).
const TABLE: &[(&str, Peaks)] = &[
    (
        "NVIDIA H100 80GB HBM3",
        Peaks {
            sku: "H100 SXM5 80GB",
            fp32_tflops: 67.0,
            tf32_tensor_tflops: 494.5,
            fp16_tensor_tflops: 989.5,
            bf16_tensor_tflops: 989.5,
            dram_gbps: 3350.0,
            source: H100_DS,
        },
    ),
    (
        "NVIDIA H100 PCIe",
        Peaks {
            sku: "H100 PCIe 80GB",
            fp32_tflops: 51.0,
            tf32_tensor_tflops: 378.0,
            fp16_tensor_tflops: 756.5,
            bf16_tensor_tflops: 756.5,
            dram_gbps: 2000.0,
            source: H100_DS,
        },
    ),
    (
        "NVIDIA H200",
        Peaks {
            sku: "H200 SXM 141GB",
            fp32_tflops: 67.0,
            tf32_tensor_tflops: 494.5,
            fp16_tensor_tflops: 989.5,
            bf16_tensor_tflops: 989.5,
            dram_gbps: 4800.0,
            source: H200_DS,
        },
    ),
    (
        "NVIDIA A100-SXM4-80GB",
        Peaks {
            sku: "A100 SXM4 80GB",
            fp32_tflops: 19.5,
            tf32_tensor_tflops: 156.0,
            fp16_tensor_tflops: 312.0,
            bf16_tensor_tflops: 312.0,
            dram_gbps: 2039.0,
            source: A100_DS,
        },
    ),
    (
        "NVIDIA A100-SXM4-40GB",
        Peaks {
            sku: "A100 SXM4 40GB",
            fp32_tflops: 19.5,
            tf32_tensor_tflops: 156.0,
            fp16_tensor_tflops: 312.0,
            bf16_tensor_tflops: 312.0,
            dram_gbps: 1555.0,
            source: A100_DS,
        },
    ),
    (
        "NVIDIA A100-PCIE-40GB",
        Peaks {
            sku: "A100 PCIe 40GB",
            fp32_tflops: 19.5,
            tf32_tensor_tflops: 156.0,
            fp16_tensor_tflops: 312.0,
            bf16_tensor_tflops: 312.0,
            dram_gbps: 1555.0,
            source: A100_DS,
        },
    ),
    (
        "NVIDIA A100 80GB PCIe",
        Peaks {
            sku: "A100 PCIe 80GB",
            fp32_tflops: 19.5,
            tf32_tensor_tflops: 156.0,
            fp16_tensor_tflops: 312.0,
            bf16_tensor_tflops: 312.0,
            dram_gbps: 1935.0,
            source: A100_DS,
        },
    ),
    (
        "NVIDIA L4",
        Peaks {
            sku: "L4 24GB",
            fp32_tflops: 30.3,
            tf32_tensor_tflops: 60.0,
            fp16_tensor_tflops: 121.0,
            bf16_tensor_tflops: 121.0,
            dram_gbps: 300.0,
            source: L4_DS,
        },
    ),
    (
        "NVIDIA L40S",
        Peaks {
            sku: "L40S 48GB",
            fp32_tflops: 91.6,
            tf32_tensor_tflops: 183.0,
            fp16_tensor_tflops: 362.05,
            bf16_tensor_tflops: 362.05,
            dram_gbps: 864.0,
            source: L40S_DS,
        },
    ),
    (
        "NVIDIA GeForce RTX 4090",
        Peaks {
            sku: "GeForce RTX 4090 24GB",
            fp32_tflops: 82.6,
            tf32_tensor_tflops: 82.6,
            fp16_tensor_tflops: 165.2,
            bf16_tensor_tflops: 165.2,
            dram_gbps: 1008.0,
            source: ADA_WP,
        },
    ),
];

/// The vendor peaks for a GPU, by its NVML name (`NVIDIA H100 80GB HBM3`). Exact match, so
/// that a variant (H200 NVL, H100 NVL) never gets another SKU's numbers.
pub fn peaks_for(gpu_name: &str) -> Option<Peaks> {
    let name = gpu_name.trim();
    TABLE
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, p)| p.clone())
}

/// The NVML names [`peaks_for`] knows.
pub fn known_gpus() -> impl Iterator<Item = &'static str> {
    TABLE.iter().map(|(n, _)| *n)
}

/// The metrics derivable from a launch's work and duration, as (metric, value, base unit), in
/// [`DERIVED_METRICS`] order. Work that is missing, negative or not finite, or a duration that is
/// not positive, leaves out the metrics that need it; percentages need `peaks`. The FLOP
/// percentage is against the FP32 (non-tensor) peak.
pub fn derive(
    flops: Option<f64>,
    bytes: Option<f64>,
    duration_ns: f64,
    peaks: Option<&Peaks>,
) -> Vec<(&'static str, f64, &'static str)> {
    let ok = |v: Option<f64>| v.filter(|x| x.is_finite() && *x >= 0.0);
    let (flops, bytes) = (ok(flops), ok(bytes));
    let secs = (duration_ns.is_finite() && duration_ns > 0.0).then_some(duration_ns * 1e-9);
    let flop_rate = flops.zip(secs).map(|(f, s)| f / s);
    let byte_rate = bytes.zip(secs).map(|(b, s)| b / s);
    let intensity = flops.zip(bytes.filter(|b| *b > 0.0)).map(|(f, b)| f / b);
    let candidates = [
        (flop_rate, "flop/second"),
        (byte_rate, "byte/second"),
        (intensity, "flop/byte"),
        (
            flop_rate
                .zip(peaks)
                .map(|(r, p)| r / p.fp32_flops_per_s() * 100.0),
            "%",
        ),
        (
            byte_rate
                .zip(peaks)
                .map(|(r, p)| r / p.dram_bytes_per_s() * 100.0),
            "%",
        ),
    ];
    DERIVED_METRICS
        .iter()
        .zip(candidates)
        .filter_map(|(name, (v, unit))| v.filter(|x| x.is_finite()).map(|x| (*name, x, unit)))
        .collect()
}

/// Where one launch sits on the roofline. `None` when the duration is not positive or no bytes
/// moved (the intensity would be infinite).
pub fn roofline_point(
    target: &str,
    size: &str,
    kernel: &str,
    flops: f64,
    bytes: f64,
    duration_ns: f64,
    peaks: Option<&Peaks>,
) -> Option<RooflinePoint> {
    let valid = |x: f64| x.is_finite() && x >= 0.0;
    if !(valid(flops) && valid(bytes) && bytes > 0.0 && duration_ns.is_finite() && duration_ns > 0.0) {
        return None;
    }
    let secs = duration_ns * 1e-9;
    let intensity = flops / bytes;
    Some(RooflinePoint {
        target: target.to_owned(),
        size: size.to_owned(),
        kernel: kernel.to_owned(),
        flops,
        bytes,
        duration_ns,
        achieved_tflops: flops / secs / 1e12,
        achieved_gbps: bytes / secs / 1e9,
        intensity,
        peak_tflops: peaks.map(|p| p.fp32_tflops),
        peak_gbps: peaks.map(|p| p.dram_gbps),
        bound: peaks.map(|p| {
            if intensity < p.ridge_flop_per_byte() {
                "memory".to_owned()
            } else {
                "compute".to_owned()
            }
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peaks_match_exact_names_only() {
        let h100 = peaks_for("NVIDIA H100 80GB HBM3").unwrap();
        assert!(h100.sku.contains("SXM"));
        assert!((h100.dram_gbps - 3350.0).abs() < 1e-9);
        let pcie = peaks_for(" nvidia h100 pcie ").unwrap();
        assert!((pcie.fp32_tflops - 51.0).abs() < 1e-9);
        assert_eq!(peaks_for("NVIDIA H200").unwrap().sku, "H200 SXM 141GB");
        // Variants with other numbers are not given these.
        assert_eq!(peaks_for("NVIDIA H200 NVL"), None);
        assert_eq!(peaks_for("NVIDIA H100 NVL"), None);
        assert_eq!(peaks_for("NVIDIA B200"), None);
        assert_eq!(peaks_for(""), None);
        for name in known_gpus() {
            let p = peaks_for(name).unwrap();
            assert!(p.fp32_tflops > 0.0 && p.dram_gbps > 0.0 && p.tf32_tensor_tflops > 0.0);
            assert!(p.bf16_tensor_tflops >= p.tf32_tensor_tflops, "{name}");
            assert!(p.source.starts_with("NVIDIA"), "{name}");
        }
    }

    #[test]
    fn derive_metrics_for_a_gemm() {
        let p = peaks_for("NVIDIA H200").unwrap();
        // 2*4096^3 FLOP in 2 ms, 3 * 4096^2 * 4 bytes.
        let flops = 2.0 * 4096f64.powi(3);
        let bytes = 3.0 * 4096f64.powi(2) * 4.0;
        let d = derive(Some(flops), Some(bytes), 2e6, Some(&p));
        let names: Vec<&str> = d.iter().map(|x| x.0).collect();
        assert_eq!(names, DERIVED_METRICS);
        let get = |n: &str| d.iter().find(|x| x.0 == n).unwrap().1;
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
        assert!(close(get("cgp__achieved_flops.per_second"), flops / 2e-3));
        assert!(close(get("cgp__achieved_bytes.per_second"), bytes / 2e-3));
        assert!(close(get("cgp__arithmetic_intensity"), flops / bytes));
        assert!(close(get("cgp__flops.pct_of_peak"), flops / 2e-3 / 67e12 * 100.0));
        assert!(close(get("cgp__dram.pct_of_peak"), bytes / 2e-3 / 4.8e12 * 100.0));
        assert_eq!(d[0].2, "flop/second");
        assert_eq!(d[1].2, "byte/second");
        assert_eq!(d[4].2, "%");
    }

    #[test]
    fn derive_leaves_out_what_it_cannot_compute() {
        // No peaks: no percentages. No bytes: no byte rate and no intensity.
        let d = derive(Some(1e9), None, 1e6, None);
        assert_eq!(d, vec![("cgp__achieved_flops.per_second", 1e12, "flop/second")]);
        // Zero duration: only the duration-free intensity.
        let d = derive(Some(1e9), Some(1e8), 0.0, None);
        assert_eq!(d, vec![("cgp__arithmetic_intensity", 10.0, "flop/byte")]);
        assert!(derive(Some(f64::NAN), Some(-1.0), f64::INFINITY, None).is_empty());
    }

    #[test]
    fn roofline_bound_uses_ridge_point() {
        let p = peaks_for("NVIDIA A100-SXM4-80GB").unwrap();
        let ridge = p.ridge_flop_per_byte();
        assert!((ridge - 19.5e12 / 2039e9).abs() < 1e-9);
        // A vector add: 1 FLOP per 12 bytes is memory-bound.
        let add = roofline_point("add", "n=1", "vadd", 1e6, 12e6, 1e4, Some(&p)).unwrap();
        assert_eq!(add.bound.as_deref(), Some("memory"));
        assert!((add.achieved_gbps - 12e6 / 1e-5 / 1e9).abs() < 1e-6);
        let gemm = roofline_point("gemm", "n=1", "g", 1e12, 1e9, 1e8, Some(&p)).unwrap();
        assert_eq!(gemm.bound.as_deref(), Some("compute"));
        assert_eq!(gemm.peak_tflops, Some(19.5));
        let unknown = roofline_point("gemm", "n=1", "g", 1e12, 1e9, 1e8, None).unwrap();
        assert_eq!(unknown.bound, None);
        assert_eq!(unknown.peak_gbps, None);
        assert_eq!(roofline_point("t", "s", "k", 1.0, 0.0, 1.0, None), None);
        assert_eq!(roofline_point("t", "s", "k", 1.0, 1.0, 0.0, None), None);
    }
}
