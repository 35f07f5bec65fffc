//! Parse speed and memory: `cgp-gate parse FILE --json` against Python's csv + json doing the
//! same conversion (the project's reference pair, copied unchanged into `examples/`).
//!
//! 1. `examples/parse_bench_gen_raw.py FILE 20000 150` writes a **synthetic** 44 MB ncu raw page
//!    (20,000 launches x 150 metric columns, quoted cells, thousands separators, a units row;
//!    pseudo-random values, not from a GPU).
//! 2. The release binary runs `parse FILE --json` 3 times, stdout to /dev/null; then
//!    `python3 examples/parse_bench.py FILE` 3 times, stdout to /dev/null. Best of 3 each, side by
//!    side in this one run. Peak memory is the child's maximum resident set (`getrusage`).
//! 3. Both JSON outputs are compared once (same launches, same values).
//!
//! Run: `cargo build --release && cargo run --release --example parse_bench`
//! (`CGP_GATE_BIN` picks another binary, `PYTHON` another interpreter, `PARSE_BENCH_LAUNCHES` and
//! `PARSE_BENCH_METRICS` another size). Timings depend on the machine and its load: say both when
//! quoting them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::resource::{UsageWho, getrusage};

const RUNS: usize = 3;

/// Peak resident set of the largest child waited for so far, in bytes (Linux reports KiB).
fn children_max_rss() -> u64 {
    getrusage(UsageWho::RUSAGE_CHILDREN)
        .map(|u| u64::try_from(u.max_rss()).unwrap_or(0) * 1024)
        .unwrap_or(0)
}

/// CPU time (user + system) of every child waited for so far.
fn children_cpu() -> Duration {
    getrusage(UsageWho::RUSAGE_CHILDREN).map_or(Duration::ZERO, |u| {
        let t = |v: nix::sys::time::TimeVal| {
            Duration::new(
                u64::try_from(v.tv_sec()).unwrap_or(0),
                u32::try_from(v.tv_usec()).unwrap_or(0) * 1000,
            )
        };
        t(u.user_time()) + t(u.system_time())
    })
}

/// Run a command `RUNS` times with stdout to /dev/null: every wall time, every CPU time (user +
/// system), and the largest peak RSS among all children so far.
fn time_runs(program: &Path, args: &[&Path]) -> Result<(Vec<Duration>, Vec<Duration>, u64), String> {
    let mut times = Vec::new();
    let mut cpu = Vec::new();
    for _ in 0..RUNS {
        let cpu_before = children_cpu();
        let start = Instant::now();
        let status = Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .status()
            .map_err(|e| format!("{}: {e}", program.display()))?;
        times.push(start.elapsed());
        cpu.push(children_cpu().saturating_sub(cpu_before));
        if !status.success() {
            return Err(format!("{} {args:?} failed: {status}", program.display()));
        }
    }
    Ok((times, cpu, children_max_rss()))
}

/// The load average when the run started, from /proc/loadavg (Linux), for the record.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn best(times: &[Duration]) -> Duration {
    times.iter().copied().min().unwrap_or_default()
}

fn list(times: &[Duration]) -> String {
    times
        .iter()
        .map(|t| format!("{:.3}", t.as_secs_f64()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin =
        std::env::var_os("CGP_GATE_BIN").map_or_else(|| root.join("target/release/cgp-gate"), PathBuf::from);
    if !bin.is_file() {
        return Err(format!(
            "{} does not exist: run `cargo build --release` first (or set CGP_GATE_BIN)",
            bin.display()
        )
        .into());
    }
    let python = PathBuf::from(std::env::var("PYTHON").unwrap_or_else(|_| "python3".into()));
    let launches = std::env::var("PARSE_BENCH_LAUNCHES").unwrap_or_else(|_| "20000".into());
    let metrics = std::env::var("PARSE_BENCH_METRICS").unwrap_or_else(|_| "150".into());
    let dir = tempfile::tempdir()?;
    let csv = dir.path().join("synthetic_raw_page.csv");
    let status = Command::new(&python)
        .arg(root.join("examples/parse_bench_gen_raw.py"))
        .arg(&csv)
        .args([&launches, &metrics])
        .status()?;
    if !status.success() {
        return Err("parse_bench_gen_raw.py failed".into());
    }
    let size = std::fs::metadata(&csv)?.len();
    println!(
        "input: SYNTHETIC ncu raw page from parse_bench_gen_raw.py ({launches} launches x {metrics} metrics), {:.1} MB",
        size as f64 / 1e6
    );

    let script = root.join("examples/parse_bench.py");
    let parse_args: [&Path; 3] = [Path::new("parse"), &csv, Path::new("--json")];
    let load_before = load_average();
    let (rust, rust_cpu, rust_rss) = time_runs(&bin, &parse_args)?;
    let (py, py_cpu, all_rss) = time_runs(&python, &[&script, &csv])?;
    let load_after = load_average();
    // Correctness once, after the timed runs (getrusage keeps the largest child so far, so
    // cgp-gate runs first): the same launches and values as the Python reference.
    let ours = Command::new(&bin).arg("parse").arg(&csv).arg("--json").output()?;
    let theirs = Command::new(&python)
        .arg(root.join("examples/parse_bench.py"))
        .arg(&csv)
        .output()?;
    let ours: serde_json::Value = serde_json::from_slice(&ours.stdout)?;
    let theirs: serde_json::Value = serde_json::from_slice(&theirs.stdout)?;
    let same = compare(&ours, &theirs);

    let (r, p) = (best(&rust), best(&py));
    let mb = size as f64 / 1e6;
    println!();
    let (rc, pc) = (best(&rust_cpu), best(&py_cpu));
    println!("load average (1, 5, 15 min): {load_before} before, {load_after} after");
    println!();
    println!(
        "| implementation                      | wall, best of {RUNS} (s) | MB/s   | wall runs (s)            | CPU, best of {RUNS} (s) | peak RSS (MB) |"
    );
    println!(
        "|-------------------------------------|---------------------:|-------:|--------------------------|--------------------:|--------------:|"
    );
    println!(
        "| cgp-gate parse --json (release)     | {:20.3} | {:6.1} | {:24} | {:19.3} | {:13.1} |",
        r.as_secs_f64(),
        mb / r.as_secs_f64(),
        list(&rust),
        rc.as_secs_f64(),
        rust_rss as f64 / 1e6
    );
    println!(
        "| python3 py_parse.py (csv + json)    | {:20.3} | {:6.1} | {:24} | {:19.3} | {:>13} |",
        p.as_secs_f64(),
        mb / p.as_secs_f64(),
        list(&py),
        pc.as_secs_f64(),
        if all_rss > rust_rss {
            format!("{:.1}", all_rss as f64 / 1e6)
        } else {
            "<= cgp-gate".into()
        }
    );
    println!();
    println!(
        "speedup: {:.1}x wall, {:.1}x CPU (python best / cgp-gate best; goal >= 20x)",
        p.as_secs_f64() / r.as_secs_f64(),
        pc.as_secs_f64() / rc.as_secs_f64()
    );
    println!(
        "memory: cgp-gate peak RSS {:.2}x the file size (goal <= 2x)",
        rust_rss as f64 / size as f64
    );
    println!("output check: {same}");
    Ok(())
}

/// Compare the two JSON documents: launch ids, kernels and every metric value.
fn compare(ours: &serde_json::Value, theirs: &serde_json::Value) -> String {
    let (Some(a), Some(b)) = (ours["launches"].as_array(), theirs["launches"].as_array()) else {
        return "DIFFERENT (no launches array)".into();
    };
    if a.len() != b.len() {
        return format!("DIFFERENT ({} vs {} launches)", a.len(), b.len());
    }
    let mut values = 0;
    for (x, y) in a.iter().zip(b) {
        if x["id"] != y["id"] || x["kernel"] != y["kernel"] {
            return format!("DIFFERENT (launch {} vs {})", x["id"], y["id"]);
        }
        let Some(metrics) = y["metrics"].as_object() else {
            return "DIFFERENT (python metrics)".into();
        };
        for (k, m) in metrics {
            let (Some(want), Some(got)) = (m["value"].as_f64(), x["metrics"][k]["value"].as_f64()) else {
                return format!("DIFFERENT ({k} of launch {})", x["id"]);
            };
            if (want - got).abs() > 1e-9 * want.abs().max(1.0) {
                return format!("DIFFERENT ({k}: {got} vs {want})");
            }
            values += 1;
        }
    }
    format!("same ({} launches, {values} values)", a.len())
}
