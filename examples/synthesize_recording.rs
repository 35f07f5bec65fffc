//! Writes the SYNTHETIC demo recordings in `examples/recordings/`.
//!
//! No GPU was involved: every number here comes from a seeded noise model (log-normal, CV about
//! 0.8% on durations), shaped like ncu 2025's `--csv --page raw --print-units base` output with
//! the `==PROF==` lines of a `--log-file`. The manifests say `"synthetic": true`. Real captures
//! replace these when the project is lent a GPU (see docs/validation.md).
//!
//! Three recordings of the spec `examples/cgp-gate.yaml`:
//! - `main`: the baseline build;
//! - `pr-same`: identical code, fresh noise (every regression reported on it is a false alarm);
//! - `pr-slowdown`: `matmul` n=1024 is 6% slower, `vector_add` n=16777216 is 1.5% slower (under
//!   the 3% threshold) and `vector_add` n=1048576 is 15% faster.
//!
//! Every kernel also carries the explanatory counters of `explain:` (docs/why.md); in
//! `pr-slowdown` matmul's n=1024 slowdown is planted with a 30% larger long-scoreboard stall share
//! and the same instructions and DRAM bytes, so its "why" reads as memory latency.
//!
//! Run: `cargo run --example synthesize_recording` (deterministic: same files every time).

use std::fmt::Write as _;
use std::path::Path;

/// SplitMix64: tiny, seeded, reproducible.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.uniform(), self.uniform());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
    /// Log-normal factor with coefficient of variation `cv`.
    fn noise(&mut self, cv: f64) -> f64 {
        let sigma = (1.0 + cv * cv).ln().sqrt();
        (sigma * self.normal() - sigma * sigma / 2.0).exp()
    }
}

struct Kernel {
    target: &'static str,
    name: &'static str,
    block: &'static str,
    sizes: &'static [(&'static str, u64)],
    registers: u32,
}

const KERNELS: &[Kernel] = &[
    Kernel {
        target: "vector_add",
        name: "vector_add(const float *, const float *, float *, int)",
        block: "(256, 1, 1)",
        sizes: &[("n=1048576", 1_048_576), ("n=16777216", 16_777_216)],
        registers: 16,
    },
    Kernel {
        target: "matmul",
        name: "void matmul_tiled<32>(const float *, const float *, float *, int)",
        block: "(32, 32, 1)",
        sizes: &[("n=512", 512), ("n=1024", 1024)],
        registers: 38,
    },
    Kernel {
        target: "reduce",
        name: "void reduce_sum<256>(const float *, float *, int)",
        block: "(256, 1, 1)",
        sizes: &[("n=16777216", 16_777_216)],
        registers: 20,
    },
];

const REPS: u32 = 10;
const LAUNCHES: u64 = 3;

/// ncu prints integers with thousands separators in the raw page.
fn grouped(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Nominal duration in ns, dram bytes read, SM and DRAM throughput % for one kernel and size.
fn nominal(k: &Kernel, n: u64) -> (f64, u64, f64, f64) {
    match k.target {
        "vector_add" => {
            let bytes = 8 * n;
            (2_500.0 + (12 * n) as f64 / 4_100.0, bytes, 18.0, 86.0)
        }
        "matmul" => {
            let flops = 2.0 * (n as f64).powi(3);
            (4_000.0 + flops / 19.0e3, 8 * n * n, 71.0, 22.0)
        }
        _ => (3_000.0 + (4 * n) as f64 / 3_900.0, 4 * n, 31.0, 82.0),
    }
}

/// The counters `explain:` collects (`why::COLLECT`): deterministic counts exactly, the others
/// with noise. `stall` multiplies the long-scoreboard stall share (the planted cause of a
/// slowdown).
fn explanatory(rng: &mut Rng, k: &Kernel, n: u64, stall: f64) -> Vec<(&'static str, &'static str, String)> {
    // (warp instructions, DRAM bytes, L2 bytes, grid, block, occupancy %, bank conflicts)
    let (inst, dram, l2, grid, block, occ, conflicts) = match k.target {
        "matmul" => {
            let tiles = (n / 32) * (n / 32);
            // Per 32x32 tile: n/32 steps of 32 FMAs per thread plus loads and the loop.
            let inst = tiles * 32 * (n / 32) * (32 + 12);
            (inst, 12 * n * n, 8 * n * n * n / 32, tiles, 1024, 62.5, tiles * 3)
        }
        "reduce" => (n / 32 * 20, 4 * n, 4 * n, 1056, 256, 91.0, 0),
        _ => (n / 32 * 12, 12 * n, 12 * n, n / 256, 256, 88.0, 0),
    };
    let f = |v: f64| format!("{v:.2}");
    let g = |v: f64| grouped(v.round() as u64);
    vec![
        ("smsp__inst_executed.sum", "inst", grouped(inst)),
        ("dram__bytes.sum", "byte", g(dram as f64 * rng.noise(0.002))),
        ("lts__t_bytes.sum", "byte", g(l2 as f64 * rng.noise(0.003))),
        (
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
            "",
            g(conflicts as f64 * rng.noise(0.02)),
        ),
        (
            "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
            "byte",
            "0".to_owned(),
        ),
        (
            "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
            "byte",
            "0".to_owned(),
        ),
        ("launch__grid_size", "", grouped(grid)),
        ("launch__block_size", "", grouped(block)),
        (
            "sm__warps_active.avg.pct_of_peak_sustained_active",
            "%",
            f(occ * rng.noise(0.004)),
        ),
        (
            "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
            "%",
            f(18.0 * stall * rng.noise(0.01)),
        ),
        (
            "smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct",
            "%",
            f(6.0 * rng.noise(0.01)),
        ),
        (
            "smsp__warp_issue_stalled_barrier_per_warp_active.pct",
            "%",
            f(9.0 * rng.noise(0.01)),
        ),
        (
            "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct",
            "%",
            f(12.0 * rng.noise(0.01)),
        ),
        (
            "smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct",
            "%",
            f(4.0 * rng.noise(0.01)),
        ),
        (
            "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct",
            "%",
            f(1.5 * rng.noise(0.01)),
        ),
    ]
}

fn write_recording(
    root: &Path,
    name: &str,
    seed: u64,
    effect: &dyn Fn(&str, &str) -> f64,
    stall: &dyn Fn(&str, &str) -> f64,
) -> std::io::Result<()> {
    let dir = root.join(name);
    let mut rng = Rng(seed);
    // The explanatory counters draw from their own stream, so the other columns stay as they
    // were before the counters were added.
    let mut xrng = Rng(seed ^ 0x00C0_FFEE);
    let mut runs = Vec::new();
    for k in KERNELS {
        for (size_key, n) in k.sizes {
            for rep in 0..REPS {
                let pid = 40_000 + rep * 7 + u32::try_from(*n % 97).unwrap_or(0);
                let mut out = String::new();
                let exe = format!("/work/examples/build/{}", k.target);
                let _ = writeln!(out, "==PROF== Connected to process {pid} ({exe})");
                for l in 0..LAUNCHES {
                    let short = k
                        .name
                        .split('(')
                        .next()
                        .unwrap_or(k.name)
                        .trim_start_matches("void ");
                    let _ = writeln!(
                        out,
                        "==PROF== Profiling \"{short}\" - {l}: 0%....50%....100% - 9 passes"
                    );
                }
                let _ = writeln!(out, "==PROF== Disconnected from process {pid}");
                let (dur0, bytes, sm0, dram0) = nominal(k, *n);
                let factor = effect(k.target, size_key);
                let mut lines = Vec::new();
                let mut columns: Vec<(&str, &str)> = Vec::new();
                for l in 0..LAUNCHES {
                    let dur = dur0 * factor * rng.noise(0.008);
                    let sm = sm0 / factor * rng.noise(0.005);
                    let dram = dram0 / factor * rng.noise(0.005);
                    let grid = match k.target {
                        "matmul" => format!("({}, {}, 1)", n / 32, n / 32),
                        "reduce" => "(1056, 1, 1)".to_owned(),
                        _ => format!("({}, 1, 1)", n / 256),
                    };
                    // (metric, unit, value as ncu prints it), sorted by name as ncu's raw page is.
                    let mut metrics: Vec<(&str, &str, String)> = vec![
                        ("dram__bytes_read.sum", "byte", grouped(bytes)),
                        (
                            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                            "%",
                            format!("{dram:.2}"),
                        ),
                        ("gpu__time_duration.sum", "ns", grouped(dur.round() as u64)),
                        (
                            "launch__registers_per_thread",
                            "register/thread",
                            k.registers.to_string(),
                        ),
                        (
                            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                            "%",
                            format!("{sm:.2}"),
                        ),
                    ];
                    metrics.extend(explanatory(&mut xrng, k, *n, stall(k.target, size_key)));
                    metrics.sort_by(|a, b| a.0.cmp(b.0));
                    columns = metrics.iter().map(|(m, u, _)| (*m, *u)).collect();
                    let values: Vec<String> = metrics.iter().map(|(_, _, v)| format!("\"{v}\"")).collect();
                    lines.push(format!(
                        "\"{l}\",\"{pid}\",\"{}\",\"127.0.0.1\",\"{}\",\"1\",\"7\",\"{}\",\"{grid}\",\"0\",\"9.0\",\"0x0\",\"No-CC\",\"CachePreferNone\",{}",
                        k.target,
                        k.name,
                        k.block,
                        values.join(",")
                    ));
                }
                let names: Vec<String> = columns.iter().map(|(m, _)| format!("\"{m}\"")).collect();
                let units: Vec<String> = columns.iter().map(|(_, u)| format!("\"{u}\"")).collect();
                let _ = writeln!(
                    out,
                    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"c2clink__enabled_mask\",\"device__attribute_confidential_computing_mode\",\"launch__func_cache_config\",{}",
                    names.join(",")
                );
                let _ = writeln!(
                    out,
                    "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",{}",
                    units.join(",")
                );
                for line in lines {
                    let _ = writeln!(out, "{line}");
                }
                let path = dir.join(k.target).join(size_key).join(format!("{rep}.csv"));
                std::fs::create_dir_all(path.parent().unwrap_or(&dir))?;
                std::fs::write(&path, out)?;
                runs.push(format!(
                    "    {{\"target\": \"{}\", \"size\": \"{size_key}\", \"rep\": {rep}, \"exit_code\": 0}}",
                    k.target
                ));
            }
        }
    }
    let manifest = format!(
        "{{\n  \"schema_version\": 1,\n  \"synthetic\": true,\n  \"note\": \"SYNTHETIC: generated by examples/synthesize_recording.rs (seed {seed}); shaped like ncu 2025 raw-page output, no GPU was used\",\n  \"ncu_version\": \"synthetic\",\n  \"fingerprint\": {{\"gpu_name\": \"Synthetic GPU (no hardware)\", \"gpu_uuid\": \"unknown\", \"pci_bus_id\": \"unknown\", \"compute_capability\": \"9.0\", \"memory_total_bytes\": \"unknown\", \"driver_version\": \"unknown\", \"cuda_driver_version\": \"unknown\", \"vbios_version\": \"unknown\", \"power_limit_mw\": \"unknown\", \"mig_mode\": \"unknown\", \"ecc_mode\": \"unknown\", \"persistence_mode\": \"unknown\", \"max_sm_clock_mhz\": \"unknown\", \"max_mem_clock_mhz\": \"unknown\", \"ncu_version\": \"synthetic\", \"clock_control\": \"base\", \"cache_control\": \"all\", \"clocks\": \"ncu\"}},\n  \"runs\": [\n{}\n  ]\n}}\n",
        runs.join(",\n")
    );
    std::fs::write(dir.join("manifest.json"), manifest)
}

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join("recordings");
    write_recording(&root, "main", 1, &|_, _| 1.0, &|_, _| 1.0)?;
    write_recording(&root, "pr-same", 2, &|_, _| 1.0, &|_, _| 1.0)?;
    write_recording(
        &root,
        "pr-slowdown",
        3,
        &|t, s| match (t, s) {
            ("matmul", "n=1024") => 1.06,
            ("vector_add", "n=16777216") => 1.015,
            ("vector_add", "n=1048576") => 0.85,
            _ => 1.0,
        },
        &|t, s| match (t, s) {
            // The planted cause of matmul's slowdown: warps wait 30% more on memory (same
            // instructions, same DRAM bytes), which the why must name.
            ("matmul", "n=1024") => 1.30,
            _ => 1.0,
        },
    )?;
    println!("wrote SYNTHETIC recordings under {}", root.display());
    Ok(())
}
