//! Parse speed: cgp-gate's ncu CSV parser + JSON writer against Python's csv + json modules.
//!
//! Generates a **synthetic** ncu raw page of about 45 MB (the 2025-era launch columns, then metric
//! columns with a units row, thousands separators, `n/a`, strings and one instance-list column;
//! values are pseudo-random, not from a GPU) in a temporary directory. Then it times, on the same
//! file, reading + `cgp_gate::ncu::parse::parse` + writing the JSON in this process, and
//! `examples/parse_bench.py` (the same job with `csv` and `json`) run as `python3` with an argv.
//!
//! Run: `cargo run --release --example parse_bench` (set `PYTHON` to choose the interpreter,
//! `PARSE_BENCH_BYTES` to change the input size).

use std::fmt::Write as _;
use std::io::{BufWriter, Write as _};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const TARGET_BYTES: usize = 45_000_000;
const METRICS: usize = 600;
const RUST_RUNS: usize = 3;

const UNITS: &[&str] = &[
    "byte",
    "ns",
    "%",
    "inst",
    "cycle",
    "byte/second",
    "hz",
    "register/thread",
    "",
    "warp/cycle",
    "Kbyte",
    "usecond",
];

/// A small deterministic generator so every run benchmarks the same file.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

/// `1234567` -> `1,234,567`, as ncu prints counts.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn generate(path: &Path) -> std::io::Result<(usize, usize)> {
    let launch_cols = [
        "ID",
        "Process ID",
        "Process Name",
        "Host Name",
        "Kernel Name",
        "Context",
        "Stream",
        "Block Size",
        "Grid Size",
        "Device",
        "CC",
    ];
    let mut names: Vec<String> = (0..METRICS)
        .map(|i| match i % 4 {
            0 => format!("sm__metric_{i:04}.avg.pct_of_peak_sustained_elapsed"),
            1 => format!("dram__metric_{i:04}.sum"),
            2 => format!("l1tex__t_metric_{i:04}.sum.per_second"),
            _ => format!("launch__metric_{i:04}"),
        })
        .collect();
    names.sort();
    let mut out = String::new();
    let quoted = |s: &str| format!("\"{s}\"");
    let header: Vec<String> = launch_cols
        .iter()
        .map(|c| quoted(c))
        .chain(names.iter().map(|n| quoted(n)))
        .collect();
    out.push_str(&header.join(","));
    out.push('\n');
    let units: Vec<&str> = (0..METRICS).map(|i| UNITS[i % UNITS.len()]).collect();
    let units_row: Vec<String> = std::iter::repeat_n(String::from("\"\""), launch_cols.len())
        .chain(units.iter().map(|u| quoted(u)))
        .collect();
    out.push_str(&units_row.join(","));
    out.push('\n');
    let mut rng = Lcg(0x00c0_ffee);
    let mut rows: usize = 0;
    let mut values = 0;
    let target = std::env::var("PARSE_BENCH_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(TARGET_BYTES);
    while out.len() < target {
        let kernel = if rows.is_multiple_of(2) {
            "void gemm_tile_kernel<128, 64>(const float *, const float *, float *, int)"
        } else {
            "triad_kernel(double *, const double *, const double *, double)"
        };
        write!(
            out,
            "\"{rows}\",\"1758033\",\"bench\",\"127.0.0.1\",\"{kernel}\",\"1\",\"7\",\"(256, 1, 1)\",\"(4096, 1, 1)\",\"0\",\"9.0\""
        )
        .unwrap_or_default();
        for (i, unit) in units.iter().enumerate() {
            let r = rng.next();
            out.push(',');
            if r.is_multiple_of(20) {
                out.push_str("\"n/a\"");
                continue;
            }
            values += 1;
            match (*unit, i % 50) {
                (_, 7) => {
                    // An instance-list column (`--print-metric-instances values`).
                    let items: Vec<String> = (0..8).map(|k| format!("{}.00", (r >> k) % 64)).collect();
                    write!(out, "\"{}\"", items.join("; ")).unwrap_or_default();
                }
                ("", _) if (i / UNITS.len()).is_multiple_of(2) => out.push_str("\"CachePreferNone\""),
                ("%" | "warp/cycle", _) => {
                    write!(out, "\"{}.{:02}\"", r % 100, r % 97).unwrap_or_default();
                }
                _ => {
                    let magnitude = 10u64.pow(u32::try_from(r % 10).unwrap_or(0) + 1);
                    write!(out, "\"{}\"", grouped(r % magnitude)).unwrap_or_default();
                }
            }
        }
        out.push('\n');
        rows += 1;
    }
    std::fs::write(path, out)?;
    Ok((rows, values))
}

/// Times of one run: (read + parse, JSON write, total).
type Split = (Duration, Duration, Duration);

fn rust_once(csv: &Path, json: &Path) -> Result<Split, Box<dyn std::error::Error>> {
    let start = Instant::now();
    let text = std::fs::read_to_string(csv)?;
    let parsed = cgp_gate::ncu::parse::parse(&text)?;
    let parsed_at = start.elapsed();
    let mut w = BufWriter::with_capacity(1 << 16, std::fs::File::create(json)?);
    serde_json::to_writer(&mut w, &parsed)?;
    w.flush()?;
    drop(w);
    let elapsed = start.elapsed();
    // Freeing the parsed output is not part of the job; Python's process exit frees its data.
    drop(parsed);
    Ok((parsed_at, elapsed - parsed_at, elapsed))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let csv = dir.path().join("synthetic_raw_page.csv");
    let (rows, values) = generate(&csv)?;
    let size = std::fs::metadata(&csv)?.len();
    println!(
        "input: SYNTHETIC ncu raw page, {:.1} MB, {rows} launches x {METRICS} metric columns, {values} values (pseudo-random, not from a GPU)",
        size as f64 / 1e6
    );

    let rust_json = dir.path().join("rust.json");
    let mut times = Vec::new();
    for _ in 0..RUST_RUNS {
        times.push(rust_once(&csv, &rust_json)?);
    }
    times.sort_by_key(|t| t.2);
    let (rust_parse, rust_write, rust) = times[times.len() / 2];
    let check = cgp_gate::ncu::parse::parse(&std::fs::read_to_string(&csv)?)?;
    let rust_values: usize = check.launches.iter().map(|l| l.metrics.len()).sum();

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/parse_bench.py");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let py_json = dir.path().join("python.json");
    let start = Instant::now();
    let out = Command::new(&python)
        .arg(&script)
        .arg(&csv)
        .arg(&py_json)
        .output()?;
    let py = start.elapsed();
    if !out.status.success() {
        return Err(format!(
            "{python} {} failed: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let py_counts = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let same = py_counts == format!("{} {rust_values}", check.launches.len());

    let mb = size as f64 / 1e6;
    let json_mb = |p: &Path| std::fs::metadata(p).map_or(0.0, |m| m.len() as f64 / 1e6);
    println!();
    println!("| implementation                          | time (s) | MB/s   | JSON out (MB) |");
    println!("|-----------------------------------------|---------:|-------:|--------------:|");
    println!(
        "| cgp-gate parse + JSON (median of {RUST_RUNS})     | {:8.3} | {:6.1} | {:13.1} |",
        rust.as_secs_f64(),
        mb / rust.as_secs_f64(),
        json_mb(&rust_json)
    );
    println!(
        "|   of which read + parse                 | {:8.3} |        |               |",
        rust_parse.as_secs_f64()
    );
    println!(
        "|   of which JSON write                   | {:8.3} |        |               |",
        rust_write.as_secs_f64()
    );
    println!(
        "| python3 csv + json (1 run, incl. start) | {:8.3} | {:6.1} | {:13.1} |",
        py.as_secs_f64(),
        mb / py.as_secs_f64(),
        json_mb(&py_json)
    );
    println!();
    println!(
        "speedup: {:.1}x (python / cgp-gate); rust runs: {}",
        py.as_secs_f64() / rust.as_secs_f64(),
        times
            .iter()
            .map(|t| format!("{:.3}s", t.2.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "launches/values: cgp-gate {} {rust_values}, python {py_counts} ({})",
        check.launches.len(),
        if same { "same" } else { "DIFFERENT" }
    );
    Ok(())
}
