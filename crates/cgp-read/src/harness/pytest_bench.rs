//! pytest-benchmark's JSON (`--benchmark-json=PATH`, or a saved run with
//! `--benchmark-save-data`).
//!
//! An entry per benchmark (`name` without its `[params]`, the params as the state); its samples
//! are the rounds of `stats.data` (seconds per iteration, here in ns), metric `time`.
//! Non-numeric entries of `data` (the `"... omitted"` markers trimmed fixtures carry) are
//! skipped and counted in the file's notes; an empty `data` is refused. A file saved without
//! data gives the mean, one value per process (a summary). The device is a GPU named in
//! `extra_info` (`gpu`, `device`, `gpu_name`), else none: pytest-benchmark records the CPU only.

use std::path::Path;

use serde_json::Value;

use super::{Entry, Format, HarnessError, HarnessFile, Metric, Status, time_ns};

/// The one metric: seconds per iteration of each round, in ns.
pub const TIME: &str = "time";

const HELP: &str = "use the file pytest-benchmark wrote with `--benchmark-json=PATH`, unedited";

fn device(extra: Option<&Value>) -> Option<String> {
    let e = extra?.as_object()?;
    ["gpu", "gpu_name", "device", "cuda_device"].iter().find_map(|k| {
        e.get(*k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    })
}

/// Read a pytest-benchmark JSON document.
///
/// # Errors
/// A [`HarnessError`] naming the file and benchmark.
pub fn read(doc: &Value, origin: &Path) -> Result<HarnessFile, HarnessError> {
    let Some(list) = doc.get("benchmarks").and_then(Value::as_array) else {
        return Err(HarnessError::new(origin, "has no `benchmarks` list", HELP));
    };
    let mut entries = Vec::with_capacity(list.len());
    let mut notes = Vec::new();
    let mut devices: Vec<String> = Vec::new();
    for b in list {
        let name = b
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| HarnessError::new(origin, "an entry of `benchmarks` has no name", HELP))?;
        let (bench, state) = match name.split_once('[') {
            Some((b, rest)) => (b.to_owned(), rest.strip_suffix(']').unwrap_or(rest).to_owned()),
            None => (name.to_owned(), String::new()),
        };
        let dev = device(b.get("extra_info"));
        if let Some(d) = &dev
            && !devices.contains(d)
        {
            devices.push(d.clone());
        }
        let stats = b
            .get("stats")
            .ok_or_else(|| HarnessError::new(origin, "has no `stats`", HELP).at(&bench, &state))?;
        let values = samples(stats, origin, &bench, &state, &mut notes)?;
        entries.push(Entry {
            benchmark: bench,
            state,
            device: dev,
            status: Status::Measured,
            metrics: vec![values],
        });
    }
    Ok(HarnessFile {
        format: Format::PytestBenchmark,
        devices,
        version: doc.get("version").and_then(Value::as_str).map(str::to_owned),
        entries,
        notes,
    })
}

fn samples(
    stats: &Value,
    origin: &Path,
    bench: &str,
    state: &str,
    notes: &mut Vec<String>,
) -> Result<Metric, HarnessError> {
    let Some(data) = stats.get("data") else {
        let mean = stats.get("mean").and_then(Value::as_f64).ok_or_else(|| {
            HarnessError::new(origin, "has neither `stats.data` nor `stats.mean`", HELP).at(bench, state)
        })?;
        notes.push(format!("{bench}: no `stats.data` (saved without --benchmark-save-data); the mean is one value per process"));
        return Ok(Metric {
            name: TIME.to_owned(),
            unit: "ns".to_owned(),
            values: vec![time_ns(mean, 1e9, "`stats.mean`", origin, bench, state)?],
            per_sample: false,
        });
    };
    let list = data
        .as_array()
        .ok_or_else(|| HarnessError::new(origin, "`stats.data` is not a list", HELP).at(bench, state))?;
    let mut values = Vec::with_capacity(list.len());
    let mut skipped = 0usize;
    for v in list {
        match v.as_f64() {
            Some(x) => values.push(time_ns(x, 1e9, "a round of `stats.data`", origin, bench, state)?),
            None => skipped += 1,
        }
    }
    if skipped > 0 {
        notes.push(format!(
            "{bench}: {skipped} non-numeric entr{} of `stats.data` skipped",
            if skipped == 1 { "y" } else { "ies" }
        ));
    }
    if values.is_empty() {
        return Err(HarnessError::new(
            origin,
            "`stats.data` holds no round",
            "run pytest with `--benchmark-json=PATH` (which keeps every round), or save with `--benchmark-save-data`",
        )
        .at(bench, state));
    }
    Ok(Metric {
        name: TIME.to_owned(),
        unit: "ns".to_owned(),
        values,
        per_sample: true,
    })
}
