//! Google Benchmark's JSON (`--benchmark_out=PATH --benchmark_out_format=json`).
//!
//! An entry per `run_name` (the `_mean`/`_median` suffixes are only in `name`); its samples are
//! the repetitions (`run_type: iteration`, or no `run_type` in files before 2018), each already
//! a mean over its `iterations`. Metrics: `real_time` (the CUDA-event time set with
//! `SetIterationTime` under `UseManualTime`), `cpu_time`, both in ns whatever each entry's
//! `time_unit` says, and every user counter (`bytes_per_second`, `items_per_second`, custom) under
//! its name. Aggregates (`mean`, `stddev`, `BigO`, ...) are no samples: a file of aggregates only
//! is refused, a run of aggregates only is a skipped entry. `error_occurred` is an error entry,
//! `skipped` a skipped one. The device is the GPU the `context` names, where it does.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::{Entry, Format, HarnessError, HarnessFile, Metric, Status, check_finite, ns_per, time_ns};

/// Keys of an entry that are not user counters.
const FIELDS: &[&str] = &[
    "name",
    "run_name",
    "run_type",
    "family_index",
    "per_family_instance_index",
    "repetitions",
    "repetition_index",
    "threads",
    "iterations",
    "real_time",
    "cpu_time",
    "time_unit",
    "aggregate_name",
    "aggregate_unit",
    "label",
    "error_occurred",
    "error_message",
    "skipped",
    "skip_message",
    "big_o",
    "rms",
    "real_coefficient",
    "cpu_coefficient",
];

const HELP: &str =
    "use the file Google Benchmark wrote with `--benchmark_out=PATH --benchmark_out_format=json`, unedited";

/// A GPU the context names: a `gpu`/`device` key, a Kokkos CUDA device, a value naming NVIDIA.
fn device(ctx: Option<&Value>) -> Option<String> {
    let ctx = ctx?.as_object()?;
    for (k, v) in ctx {
        let Some(s) = v.as_str() else { continue };
        let key = k.to_ascii_lowercase();
        if matches!(key.as_str(), "gpu" | "gpu_name" | "device_name" | "cuda_device") && !s.is_empty() {
            return Some(s.to_owned());
        }
        if k.starts_with("Kokkos::Cuda") || s.starts_with("Kokkos::Cuda") || s.contains("NVIDIA") {
            let name = s.rsplit_once("] ").map_or(s, |(_, n)| n);
            return Some(name.trim().to_owned());
        }
    }
    None
}

/// `BM_copy/8/manual_time` -> (`BM_copy`, `8/manual_time`).
fn split_name(run_name: &str) -> (String, String) {
    match run_name.split_once('/') {
        Some((b, s)) => (b.to_owned(), s.to_owned()),
        None => (run_name.to_owned(), String::new()),
    }
}

/// The entries of one run, in file order.
struct Run<'a> {
    benchmark: String,
    state: String,
    items: Vec<&'a Value>,
}

/// Read a Google Benchmark JSON document.
///
/// # Errors
/// A [`HarnessError`] naming the file, benchmark and state.
pub fn read(doc: &Value, origin: &Path) -> Result<HarnessFile, HarnessError> {
    let Some(list) = doc.get("benchmarks").and_then(Value::as_array) else {
        return Err(HarnessError::new(origin, "has no `benchmarks` list", HELP));
    };
    let is_iteration = |b: &Value| {
        b.get("run_type")
            .and_then(Value::as_str)
            .is_none_or(|t| t == "iteration")
    };
    if !list.is_empty() && !list.iter().any(is_iteration) {
        return Err(HarnessError::new(
            origin,
            "holds aggregates only (mean, median, stddev), no repetitions to gate",
            "drop `--benchmark_report_aggregates_only` (and `--benchmark_display_aggregates_only` does not matter): cgp-gate needs each repetition",
        ));
    }
    let mut runs: Vec<Run<'_>> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for b in list {
        let name = b
            .get("run_name")
            .or_else(|| b.get("name"))
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| HarnessError::new(origin, "an entry of `benchmarks` has no name", HELP))?;
        let i = *index.entry(name.to_owned()).or_insert_with(|| {
            let (benchmark, state) = split_name(name);
            runs.push(Run {
                benchmark,
                state,
                items: Vec::new(),
            });
            runs.len() - 1
        });
        runs[i].items.push(b);
    }
    let dev = device(doc.get("context"));
    let mut entries = Vec::with_capacity(runs.len());
    let mut notes = Vec::new();
    for run in runs {
        entries.push(read_run(&run, dev.as_ref(), origin, &mut notes)?);
    }
    let version = doc
        .pointer("/context/library_version")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(HarnessFile {
        format: Format::GBench,
        devices: dev.into_iter().collect(),
        version,
        entries,
        notes,
    })
}

fn read_run(
    run: &Run<'_>,
    dev: Option<&String>,
    origin: &Path,
    notes: &mut Vec<String>,
) -> Result<Entry, HarnessError> {
    let (bench, state) = (run.benchmark.as_str(), run.state.as_str());
    let mut entry = Entry {
        benchmark: bench.to_owned(),
        state: state.to_owned(),
        device: dev.cloned(),
        status: Status::Measured,
        metrics: Vec::new(),
    };
    let iterations: Vec<&Value> = run
        .items
        .iter()
        .copied()
        .filter(|b| {
            b.get("run_type")
                .and_then(Value::as_str)
                .is_none_or(|t| t == "iteration")
        })
        .collect();
    if let Some(b) = iterations
        .iter()
        .find(|b| b.get("error_occurred").and_then(Value::as_bool) == Some(true))
    {
        let why = b
            .get("error_message")
            .and_then(Value::as_str)
            .unwrap_or("no message");
        entry.status = Status::Error(format!("the benchmark failed: {why}"));
        return Ok(entry);
    }
    if let Some(b) = iterations.iter().find(|b| {
        b.get("skipped")
            .is_some_and(|s| s.as_bool() == Some(true) || s.as_str().is_some_and(|t| t != "NotSkipped"))
    }) {
        let why = b
            .get("skip_message")
            .and_then(Value::as_str)
            .unwrap_or("no reason given");
        entry.status = Status::Skipped(format!("Google Benchmark skipped it: {why}"));
        return Ok(entry);
    }
    if iterations.is_empty() {
        notes.push(format!("{}: aggregates only", entry.key()));
        entry.status = Status::Skipped(
            "the file holds only aggregates of this benchmark (mean, stddev, BigO, ...), no repetition"
                .to_owned(),
        );
        return Ok(entry);
    }
    distinct_repetitions(&iterations, origin, bench, state)?;
    let mut metrics: Vec<Metric> = Vec::new();
    for b in iterations {
        let unit = b.get("time_unit").and_then(Value::as_str).unwrap_or("ns");
        let factor = ns_per(unit).ok_or_else(|| {
            HarnessError::new(
                origin,
                format!("has `time_unit: {unit}`, which Google Benchmark does not write"),
                HELP,
            )
            .at(bench, state)
        })?;
        let obj = b.as_object().into_iter().flatten();
        for (k, v) in obj {
            let is_time = k == "real_time" || k == "cpu_time";
            if !is_time && FIELDS.contains(&k.as_str()) {
                continue;
            }
            let Some(x) = v.as_f64() else { continue };
            let (value, unit) = if is_time {
                (time_ns(x, factor, &format!("`{k}`"), origin, bench, state)?, "ns")
            } else {
                (
                    check_finite(x, &format!("counter `{k}`"), origin, bench, state)?,
                    counter_unit(k),
                )
            };
            match metrics.iter_mut().find(|m| m.name == *k) {
                Some(m) => m.values.push(value),
                None => metrics.push(Metric {
                    name: k.clone(),
                    unit: unit.to_owned(),
                    values: vec![value],
                    per_sample: true,
                }),
            }
        }
    }
    entry.metrics = metrics;
    Ok(entry)
}

/// Each repetition of a run once: Google Benchmark numbers them (`repetition_index`, since
/// 2021); an entry repeated with the same index (a file joined with itself, an edit) would count
/// as another repetition, one more sample of the same process.
fn distinct_repetitions(
    iterations: &[&Value],
    origin: &Path,
    bench: &str,
    state: &str,
) -> Result<(), HarnessError> {
    let mut seen = std::collections::BTreeSet::new();
    for b in iterations {
        let Some(i) = b.get("repetition_index").and_then(Value::as_u64) else {
            continue;
        };
        if !seen.insert(i) {
            return Err(HarnessError::new(
                origin,
                format!("repetition {i} (`repetition_index`) appears twice"),
                "each repetition is in the file once; was the file joined with another or edited? use the file as Google Benchmark wrote it",
            )
            .at(bench, state));
        }
    }
    Ok(())
}

fn counter_unit(name: &str) -> &'static str {
    match name {
        "bytes_per_second" => "byte/second",
        "items_per_second" => "1/second",
        _ => "",
    }
}
