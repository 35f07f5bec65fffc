//! Benchmark harness files, parse-only (docs/harnesses.md): nvbench's `--json` (every schema
//! generation, with its `--jsonbin` sidecars), Google Benchmark's `--benchmark_out` JSON and
//! pytest-benchmark's `--benchmark-json`. A file's bytes go in, its benchmarks' samples come
//! out; running the program that writes them is `profile::harness`. This folder imports neither
//! `profile` nor `spec` (docs/architecture.md, "Adding a backend").
//!
//! Every reader gives the same shape, [`HarnessFile`]: one [`Entry`] per benchmark x state, keyed
//! stably across runs (state names normalised, devices by name), holding per metric the finest
//! samples the file has. Times are in ns whatever unit the file used.

pub mod asv;
pub mod classic;
pub mod criterion;
pub mod formats;
pub mod gbench;
pub mod hyperfine;
pub mod nvbench;
pub mod pytest_bench;
pub mod pytorch_rows;
pub mod registry;
pub mod tritonbench;
pub mod vllm;

use std::fmt;
use std::path::Path;

/// The most bytes of one harness file (or one sidecar) cgp-gate reads.
pub const MAX_FILE_BYTES: u64 = 512 << 20;

/// Which harness wrote a file: one of the formats registered in cgp-core
/// (`measured::profiler::harness_formats!`), each read by its [`registry::Reader`].
pub use crate::measured::profiler::HarnessFormat as Format;

/// What a state of a benchmark gave.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "status", content = "reason", rename_all = "kebab-case")]
pub enum Status {
    Measured,
    /// Skipped by the harness, with its reason.
    Skipped(String),
    /// The benchmark failed, with the harness's message.
    Error(String),
}

/// The samples of one metric of one state.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Metric {
    /// The harness's name for it (`nv/cold/time/gpu`, `real_time`, `bytes_per_second`).
    pub name: String,
    /// `ns` for times; `byte/second`, `1/second`, `Hz`, `byte`, `%` or `` otherwise.
    pub unit: String,
    pub values: Vec<f64>,
    /// Whether `values` are the individual samples (nvbench `--jsonbin`, Google Benchmark
    /// repetitions, pytest-benchmark rounds) rather than one summary of the process.
    pub per_sample: bool,
}

/// One benchmark x state of a file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Entry {
    pub benchmark: String,
    /// Normalised state (`T=I32,Elements=2^16`; `@device` when the file has several devices);
    /// empty for a benchmark without states.
    pub state: String,
    /// The device's name, from the harness's own record, when it has one.
    pub device: Option<String>,
    pub status: Status,
    pub metrics: Vec<Metric>,
}

impl Entry {
    /// `benchmark [state]`: the entry's key, the kernel column of its rows.
    pub fn key(&self) -> String {
        if self.state.is_empty() {
            self.benchmark.clone()
        } else {
            format!("{} [{}]", self.benchmark, self.state)
        }
    }

    /// The metric named `name`.
    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name)
    }
}

/// A harness file, read.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HarnessFile {
    pub format: Format,
    /// The devices the file names (nvbench `devices`, the GPU of a Google Benchmark `context`,
    /// pytest-benchmark's `extra_info`), by name.
    pub devices: Vec<String>,
    /// The harness's version, when the file says.
    pub version: Option<String>,
    pub entries: Vec<Entry>,
    /// What the reader dropped or could not do, for messages (non-numeric `data` entries,
    /// summaries without samples).
    pub notes: Vec<String>,
}

/// A harness file that cannot be read: it names the file, and the benchmark and state where
/// the fault is in one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HarnessError {
    pub file: String,
    pub benchmark: Option<String>,
    pub state: Option<String>,
    pub message: String,
    pub help: String,
}

impl HarnessError {
    pub fn new(file: &Path, message: impl Into<String>, help: impl Into<String>) -> Self {
        Self {
            file: file.display().to_string(),
            benchmark: None,
            state: None,
            message: message.into(),
            help: help.into(),
        }
    }

    /// The benchmark (and state) the fault is in.
    #[must_use]
    pub fn at(mut self, benchmark: &str, state: &str) -> Self {
        self.benchmark = Some(benchmark.to_owned());
        if !state.is_empty() {
            self.state = Some(state.to_owned());
        }
        self
    }
}

impl fmt::Display for HarnessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(b) = &self.benchmark {
            write!(f, ", benchmark `{b}`")?;
        }
        if let Some(s) = &self.state {
            write!(f, ", state `{s}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for HarnessError {}

/// Where a reader finds nvbench's `--jsonbin` sidecars: the bytes of the file a summary names
/// (`Ok(None)`: there is none).
pub type Sidecars<'a> = &'a dyn Fn(&str) -> Result<Option<Vec<u8>>, String>;

/// No sidecars (a capture that holds the JSON alone).
pub fn no_sidecars(_name: &str) -> Result<Option<Vec<u8>>, String> {
    Ok(None)
}

/// Parse `bytes` as one JSON document, refusing a truncated or concatenated file.
///
/// # Errors
/// Not JSON, or not one document.
pub fn parse_json(bytes: &[u8], origin: &Path) -> Result<serde_json::Value, HarnessError> {
    serde_json::from_slice(bytes).map_err(|e| {
        let what = match e.classify() {
            serde_json::error::Category::Eof => "ends in the middle of a JSON value (truncated?)".to_owned(),
            _ if e.to_string().starts_with("trailing characters") => format!(
                "holds more than one JSON document (line {}, column {}): files concatenated?",
                e.line(),
                e.column()
            ),
            _ => match other_output(bytes) {
                Some(other) => {
                    return HarnessError::new(
                        origin,
                        format!("the harness file is not JSON: it is {other}"),
                        "give each process's JSON output, as the harness wrote it",
                    );
                }
                None => format!("is not valid JSON: {e}"),
            },
        };
        HarnessError::new(
            origin,
            format!("the harness file {what}"),
            "write each process's output to its own file; use the file as the harness wrote it",
        )
    })
}

/// A harness's other outputs, which cgp-gate does not read, by their first lines: what the file
/// is and the JSON output to give instead (issue 59: nvbench's `--csv` given to `init --from`
/// got an error about ncu's CSV). `None` for anything else.
pub fn other_output(bytes: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    let first = head
        .lines()
        .find(|l| !l.trim().is_empty())?
        .trim_start_matches('\u{feff}');
    let (what, instead) = if first.starts_with("Benchmark,Device,Device Name,") {
        (
            "nvbench's `--csv` output (one mean per state, no samples)",
            "nvbench's JSON: run the benchmark with `--json FILE` (and `--jsonbin` for per-sample times) and give that file",
        )
    } else if first.trim_end() == "# Devices" {
        (
            "nvbench's Markdown output (`--md` or its console table)",
            "nvbench's JSON: run the benchmark with `--json FILE` (and `--jsonbin` for per-sample times) and give that file",
        )
    } else if first.starts_with("name,iterations,real_time,cpu_time,time_unit") {
        (
            "Google Benchmark's CSV output (`--benchmark_format=csv`)",
            "Google Benchmark's JSON: run the benchmark with `--benchmark_out=FILE --benchmark_out_format=json` and give that file",
        )
    } else if head.lines().any(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        w.starts_with(&["Benchmark", "Time", "CPU", "Iterations"])
    }) {
        (
            "Google Benchmark's console table",
            "Google Benchmark's JSON: run the benchmark with `--benchmark_out=FILE --benchmark_out_format=json` and give that file",
        )
    } else {
        return None;
    };
    Some(format!("{what}; cgp-gate reads {instead}"))
}

/// Which harness wrote `doc`, by its content (never by the file's name or version string).
pub fn detect(doc: &serde_json::Value) -> Option<Format> {
    let obj = doc.as_object()?;
    let benches = obj.get("benchmarks")?.as_array()?;
    if obj.contains_key("devices") || benches.iter().any(|b| b.get("states").is_some()) {
        return Some(Format::Nvbench);
    }
    if obj.contains_key("machine_info")
        || benches
            .iter()
            .any(|b| b.get("stats").is_some_and(serde_json::Value::is_object))
    {
        return Some(Format::PytestBenchmark);
    }
    if obj.contains_key("context")
        || benches
            .iter()
            .any(|b| b.get("real_time").is_some() || b.get("run_type").is_some())
    {
        return Some(Format::GBench);
    }
    None
}

/// Read a harness file of any format (detected by content; `registry`).
///
/// # Errors
/// A [`HarnessError`] naming the file, and the benchmark and state where it applies.
pub fn read(bytes: &[u8], origin: &Path, sidecars: Sidecars<'_>) -> Result<HarnessFile, HarnessError> {
    // The common case first: an nvbench file of 2022 or later, in one typed pass.
    if let Some(file) = nvbench::read_bytes(bytes, origin, sidecars) {
        let file = file?;
        check_keys(&file, origin)?;
        return Ok(file);
    }
    let doc = registry::parse(bytes, origin)?;
    let Some(reader) = formats::detect(&doc) else {
        if let registry::Doc::Lines(_) = doc {
            // Not JSON lines of any format: files concatenated, as one document would say.
            parse_json(bytes, origin)?;
        }
        let tools: Vec<&str> = Format::ALL.iter().map(|f| f.tool()).collect();
        let (last, rest) = tools.split_last().unwrap_or((&"", &[]));
        return Err(HarnessError::new(
            origin,
            format!("is JSON, but not a file {} or {last} writes", rest.join(", ")),
            formats::formats_help(),
        ));
    };
    read_as(reader.format(), &doc, origin, sidecars)
}

/// Read `doc` as a file of `format`.
///
/// # Errors
/// As [`read`].
pub fn read_as(
    format: Format,
    doc: &registry::Doc,
    origin: &Path,
    sidecars: Sidecars<'_>,
) -> Result<HarnessFile, HarnessError> {
    let file = formats::reader(format).read(doc, origin, sidecars)?;
    check_keys(&file, origin)?;
    Ok(file)
}

/// Two entries with one key would merge two benchmarks' samples into one row.
fn check_keys(file: &HarnessFile, origin: &Path) -> Result<(), HarnessError> {
    let mut seen = std::collections::BTreeSet::new();
    for e in &file.entries {
        if !seen.insert(e.key()) {
            return Err(HarnessError::new(
                origin,
                "appears twice in the file",
                "each benchmark x state must be unique in one process's output; was the file concatenated?",
            )
            .at(&e.benchmark, &e.state));
        }
    }
    Ok(())
}

/// The shortest time, in ns, a harness file may give for a benchmark: one picosecond. No timer
/// resolves less (CUDA events resolve about 0.5 µs, a CPU's cycle counter a fraction of a ns), one
/// cycle of a 5 GHz clock is 200 ps, and a benchmark iteration Google Benchmark reports below a
/// nanosecond is still above it. A time below it (0, `-0`, `1e-300` s, samples scaled to almost
/// nothing, what Google Benchmark writes under `UseManualTime` when `SetIterationTime` is never
/// called) is no measurement: compared with a baseline it would read as a -100 % change.
pub const MIN_TIME_NS: f64 = 1e-3;

/// The lowest SM clock, in Hz, a clock sample may give: 1 MHz (GPUs run their SMs at hundreds of
/// MHz at least; a clock below it makes cycles of almost nothing).
pub const MIN_CLOCK_HZ: f64 = 1e6;

fn damaged(origin: &Path, what: &str, value: f64, why: &str, benchmark: &str, state: &str) -> HarnessError {
    HarnessError::new(
        origin,
        format!("{what} is {value}: {why}; the file is damaged"),
        "run the benchmark again and use the file as the harness wrote it",
    )
    .at(benchmark, state)
}

/// A time read from a file, in its own unit, checked without knowing the unit: a positive normal
/// number (not NaN, infinite, negative, zero, `-0` or subnormal). [`time_ns`] also applies the
/// floor of [`MIN_TIME_NS`] once the unit is known; readers use that.
///
/// # Errors
/// Any other value, naming what it is.
pub fn check_time(
    value: f64,
    what: &str,
    origin: &Path,
    benchmark: &str,
    state: &str,
) -> Result<f64, HarnessError> {
    if value.is_normal() && value > 0.0 {
        return Ok(value);
    }
    let why = if !value.is_finite() || value < 0.0 {
        "no run takes that long"
    } else {
        "a time of zero (or less than any timer resolves) is no measurement"
    };
    Err(damaged(origin, what, value, why, benchmark, state))
}

/// A time read from a file, in ns (`value` in the file's unit, `ns_per_unit` ns each): a positive
/// normal number ([`check_time`]) of at least [`MIN_TIME_NS`]. The one check of every harness
/// reader's times (samples, repetitions, rounds, means).
///
/// # Errors
/// NaN, infinite, negative, zero, subnormal, or below the floor, naming what it is.
pub fn time_ns(
    value: f64,
    ns_per_unit: f64,
    what: &str,
    origin: &Path,
    benchmark: &str,
    state: &str,
) -> Result<f64, HarnessError> {
    let ns = check_time(value, what, origin, benchmark, state)? * ns_per_unit;
    if ns >= MIN_TIME_NS {
        return Ok(ns);
    }
    Err(damaged(
        origin,
        what,
        value,
        &format!("{ns:e} ns is below one picosecond ({MIN_TIME_NS} ns), shorter than any timer resolves"),
        benchmark,
        state,
    ))
}

/// A spread of times read from a file (a standard deviation, in its unit): finite and not
/// negative; zero is a spread (every sample equal).
///
/// # Errors
/// NaN, infinite or negative.
pub fn check_spread(
    value: f64,
    what: &str,
    origin: &Path,
    benchmark: &str,
    state: &str,
) -> Result<f64, HarnessError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(damaged(
            origin,
            what,
            value,
            "no spread of times is that",
            benchmark,
            state,
        ))
    }
}

/// An SM clock sample (Hz): finite and at least [`MIN_CLOCK_HZ`].
///
/// # Errors
/// Any other value.
pub fn check_clock(
    value: f64,
    what: &str,
    origin: &Path,
    benchmark: &str,
    state: &str,
) -> Result<f64, HarnessError> {
    if value.is_finite() && value >= MIN_CLOCK_HZ {
        Ok(value)
    } else {
        Err(damaged(
            origin,
            what,
            value,
            &format!("no GPU runs its SMs below {MIN_CLOCK_HZ} Hz"),
            benchmark,
            state,
        ))
    }
}

/// A number read from a file, checked: finite.
///
/// # Errors
/// NaN or infinite.
pub fn check_finite(
    value: f64,
    what: &str,
    origin: &Path,
    benchmark: &str,
    state: &str,
) -> Result<f64, HarnessError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(HarnessError::new(
            origin,
            format!("{what} is {value}, not a number a measurement gives: the file is damaged"),
            "run the benchmark again and use the file as the harness wrote it",
        )
        .at(benchmark, state))
    }
}

/// Seconds per unit of a Google Benchmark `time_unit`.
pub fn ns_per(unit: &str) -> Option<f64> {
    Some(match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    })
}

#[cfg(test)]
mod testdata;
#[cfg(test)]
mod tests;
