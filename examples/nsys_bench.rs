//! Breakdown speed: cgp-gate's nsys trace reader + categories + breakdown against the seed tool's
//! approach (pandas `read_csv`, regex categories row by row, `groupby`), on the same file.
//!
//! The input is a **SYNTHETIC** `cuda_gpu_trace` CSV of 17,016 rows (the size of the trace the
//! issue names), written to `target/nsys-bench/`: the header of nsys 2025.5's report, kernel names
//! drawn from the real vLLM kernel summary in tests/fixtures/nsys-wild/01 in proportion to their
//! instance counts, durations around each kernel's real average with pseudo-random spread, 2% memcpy
//! and memset rows, three streams. Names and their mix are real; every time is made up.
//!
//! Run: `cargo run --release --example nsys_bench` (set `PYTHON` to an interpreter with pandas;
//! without one the pandas column says so). `NSYS_BENCH_ROWS` changes the row count.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const ROWS: usize = 17_016;
const RUNS: usize = 20;

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
    fn unit(&mut self) -> f64 {
        self.next() as f64 / (1u64 << 31) as f64
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// (name, instances, average ns) of the real kernel summary.
fn real_kernels() -> Vec<(String, u64, f64)> {
    let p = root().join("tests/fixtures/nsys-wild/01_l20vllm_cuda_gpu_kern_sum_2025.csv");
    let mut r = csv::Reader::from_path(&p).expect("the real kernel summary");
    let h = r.headers().expect("header").clone();
    let col = |n: &str| h.iter().position(|c| c == n).expect(n);
    let (inst, avg, name) = (col("Instances"), col("Avg (ns)"), col("Name"));
    r.records()
        .map(|rec| {
            let rec = rec.expect("row");
            (
                rec[name].to_owned(),
                rec[inst].parse().expect("count"),
                rec[avg].parse().expect("avg"),
            )
        })
        .collect()
}

/// Write the SYNTHETIC trace; returns its path.
pub fn generate(rows: usize, dir: &Path) -> PathBuf {
    let kernels = real_kernels();
    let total: u64 = kernels.iter().map(|k| k.1).sum();
    let mut rng = Lcg(17_016);
    std::fs::create_dir_all(dir).expect("bench dir");
    let path = dir.join(format!("SYNTHETIC_cuda_gpu_trace_{rows}.csv"));
    let mut w = csv::WriterBuilder::new().from_path(&path).expect("create");
    w.write_record([
        "Start (ns)",
        "Duration (ns)",
        "CorrId",
        "GrdX",
        "GrdY",
        "GrdZ",
        "BlkX",
        "BlkY",
        "BlkZ",
        "Reg/Trd",
        "StcSMem (MB)",
        "DymSMem (MB)",
        "Bytes (MB)",
        "Throughput (MB/s)",
        "SrcMemKd",
        "DstMemKd",
        "Device",
        "Ctx",
        "GreenCtx",
        "Strm",
        "Name",
    ])
    .expect("header");
    let mut t: u64 = 1_149_776_304;
    for i in 0..rows {
        let stream = 7 + 6 * (rng.next() % 3);
        let corr = (929 + i).to_string();
        let dev = "NVIDIA L20 (0)";
        if rng.next().is_multiple_of(50) {
            let (name, dur) = if rng.next().is_multiple_of(2) {
                ("[CUDA memcpy Host-to-Device]", 2_000 + rng.next() % 40_000)
            } else {
                ("[CUDA memset]", 1_000 + rng.next() % 3_000)
            };
            let d = dur.to_string();
            w.write_record([
                &t.to_string(),
                &d,
                &corr,
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "1.000",
                "44642.000",
                "Pageable",
                "Device",
                dev,
                "1",
                "",
                &stream.to_string(),
                name,
            ])
            .expect("row");
            t += dur + rng.next() % 2_000;
            continue;
        }
        let mut pick = rng.next() % total;
        let k = kernels
            .iter()
            .find(|k| {
                if pick < k.1 {
                    true
                } else {
                    pick -= k.1;
                    false
                }
            })
            .unwrap_or(&kernels[0]);
        let dur = (k.2 * (0.6 + 0.8 * rng.unit())).max(800.0) as u64;
        w.write_record([
            &t.to_string(),
            &dur.to_string(),
            &corr,
            "128",
            "1",
            "1",
            "128",
            "1",
            "1",
            "64",
            "0.000",
            "0.074",
            "",
            "",
            "",
            "",
            dev,
            "1",
            "",
            &stream.to_string(),
            &k.0,
        ])
        .expect("row");
        // Mostly back to back on the GPU; now and then two streams overlap.
        t = if rng.next().is_multiple_of(10) {
            t + dur / 2
        } else {
            t + dur + rng.next() % 3_000
        };
    }
    w.flush().expect("flush");
    path
}

fn stats(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    (v[0], v[v.len() / 2])
}

fn main() {
    let rows: usize = std::env::var("NSYS_BENCH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ROWS);
    let dir = root().join("target/nsys-bench");
    let path = generate(rows, &dir);
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!(
        "input: {} (SYNTHETIC, {rows} rows, {:.1} MB)",
        path.display(),
        bytes as f64 / 1e6
    );

    let cats = cgp_spec::nsys::Categories::default();
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..RUNS {
        let t = Instant::now();
        let w = cgp_profile::nsys::read_path(&path).expect("read");
        let b = cgp_spec::nsys::breakdown(&w, &cats);
        let json = serde_json::to_string(&b).expect("json");
        times.push(t.elapsed());
        last = Some((b, json.len()));
    }
    let (best, median) = stats(times);
    let (b, _) = last.expect("ran");

    // The whole command, as a user runs it (process start, read, categories, JSON written).
    let exe = std::env::current_exe()
        .ok()
        .and_then(|e| Some(e.parent()?.parent()?.join("cgp-gate")));
    let cli = exe.filter(|e| e.is_file()).map(|exe| {
        let out = dir.join("b.json");
        let mut v = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            let ok = Command::new(&exe)
                .args([
                    "breakdown".as_ref(),
                    path.as_os_str(),
                    "--json".as_ref(),
                    out.as_os_str(),
                    "--top".as_ref(),
                    "0".as_ref(),
                ])
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false);
            assert!(ok, "cgp-gate breakdown failed");
            v.push(t.elapsed());
        }
        stats(v)
    });

    // pandas, same file, same rules.
    let rules = dir.join("rules.json");
    let list: Vec<(&str, &str)> = cgp_spec::nsys::categories::DEFAULT_RULES.to_vec();
    std::fs::write(&rules, serde_json::to_string(&list).expect("rules")).expect("write rules");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let t = Instant::now();
    let py = Command::new(&python)
        .arg(root().join("examples/nsys_bench_pandas.py"))
        .arg(&path)
        .arg(&rules)
        .arg("5")
        .output();
    let py_wall = t.elapsed();
    let pandas: Option<serde_json::Value> = py
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| serde_json::from_slice(&o.stdout).ok());

    println!();
    println!("| what | best | median | notes |");
    println!("|---|---|---|---|");
    println!(
        "| cgp-gate in-process: read + categories + breakdown + JSON | {:.1} ms | {:.1} ms | {RUNS} runs |",
        best.as_secs_f64() * 1e3,
        median.as_secs_f64() * 1e3
    );
    match cli {
        Some((b, m)) => println!(
            "| `cgp-gate breakdown FILE --json` (whole process) | {:.1} ms | {:.1} ms | 5 runs, release binary |",
            b.as_secs_f64() * 1e3,
            m.as_secs_f64() * 1e3
        ),
        None => println!(
            "| `cgp-gate breakdown` (whole process) | - | - | build it first: `cargo build --release` |"
        ),
    }
    match &pandas {
        Some(p) => {
            let f = |k: &str| p[k].as_f64().unwrap_or(f64::NAN) * 1e3;
            println!(
                "| pandas {}: read_csv + regex per row + groupby | {:.1} ms | {:.1} ms | 5 runs; `import pandas` alone {:.0} ms; whole python process {:.0} ms |",
                p["pandas"].as_str().unwrap_or("?"),
                f("best_s"),
                f("median_s"),
                f("import_s"),
                py_wall.as_secs_f64() * 1e3
            );
        }
        None => {
            println!("| pandas | - | - | `{python}` has no pandas: set PYTHON to an interpreter with it |")
        }
    }
    println!();
    println!("categories (cgp-gate):");
    for c in &b.categories {
        println!("  {:<12} {:>14} ns {:>6} rows", c.name, c.time_ns, c.instances);
    }
    if let Some(p) = &pandas {
        let same = b
            .categories
            .iter()
            .all(|c| p["categories"][&c.name].as_u64() == Some(c.time_ns));
        println!("pandas agrees on every category's time: {same}");
    }
}
