//! PyTorch benchmark rows: the shape of the PyTorch OSS benchmark database ("v3": `benchmark`,
//! `model`, `metric.benchmark_values`, `runners`, `dependencies`), as a JSON array (Helion's
//! `benchmarks/run.py`), JSON lines (tritonbench's CI, `.ci/test_infra/oss_ci_benchmark_v3.py`) or
//! one object; and what `cgp_gate.triton` (the wheel's helper around `triton.testing.do_bench`)
//! writes (SCHEMAS.md, 1b; docs/harnesses.md).
//!
//! An entry per `model.name` (the operator or kernel) x state: its `model.backend`, `benchmark.mode`
//! and `benchmark.dtype` where given (`backend=triton,mode=fwd`; `unknown` is none); each row's
//! `metric.name` is a metric of its entry. `benchmark_values` are the metric's samples: repeated
//! measurements of one process (so the schema means them, and so `cgp_gate.triton` writes them),
//! one value being one per process. Except Helion's (`benchmark.name` `Helion Benchmark`): its
//! values are one per input shape (the shapes are not written), so each is its own entry, state
//! `input=I`, one value per process. A value of 0 is how Helion and tritonbench's CI write a
//! failed or out-of-memory input: that entry is an error; a negative or non-finite value is
//! damage. The device is `runners[].gpu_info` (or `.name`), else `benchmark.extra_info.device`;
//! the version, the `dependencies` (`pytorch 2.8.0, triton 3.4.0`). Units are the rows' own
//! (`metric.extra_info.unit`), unconverted.

use std::path::Path;

use serde_json::Value;

use super::registry::{Doc, Live, LiveRun, Reader, entry_at, positive_number};
use super::{Entry, Format, HarnessError, HarnessFile, Metric, Sidecars, Status};

pub struct PytorchRows;
pub static READER: PytorchRows = PytorchRows;

const HELP: &str = "use the rows as the benchmark wrote them (a JSON array, or one JSON object a line)";

/// The suite whose values are one per input shape, not samples.
const HELION: &str = "Helion Benchmark";

fn is_row(v: &Value) -> bool {
    v.get("benchmark").is_some_and(Value::is_object)
        && v.get("model").is_some_and(Value::is_object)
        && v.pointer("/metric/benchmark_values").is_some()
}

/// The rows of the file.
fn rows(doc: &Doc) -> Option<&[Value]> {
    match doc {
        Doc::Json(Value::Array(a)) => Some(a),
        Doc::Json(v @ Value::Object(_)) => Some(std::slice::from_ref(v)),
        Doc::Lines(l) => Some(l),
        Doc::Json(_) => None,
    }
}

impl Reader for PytorchRows {
    fn format(&self) -> Format {
        Format::PytorchRows
    }

    fn detects(&self, doc: &Doc) -> bool {
        rows(doc).is_some_and(|r| !r.is_empty() && r.iter().all(is_row))
    }

    fn read(&self, doc: &Doc, origin: &Path, _sidecars: Sidecars<'_>) -> Result<HarnessFile, HarnessError> {
        let list = rows(doc).ok_or_else(|| HarnessError::new(origin, "holds no rows", HELP))?;
        let mut entries: Vec<Entry> = Vec::new();
        let mut devices: Vec<String> = Vec::new();
        for (i, row) in list.iter().enumerate() {
            if !is_row(row) {
                return Err(HarnessError::new(
                    origin,
                    format!(
                        "row {} has no `benchmark`, `model` or `metric.benchmark_values`",
                        i + 1
                    ),
                    HELP,
                ));
            }
            let device = device(row);
            if let Some(d) = &device
                && !devices.contains(d)
            {
                devices.push(d.clone());
            }
            read_row(row, i, device, origin, &mut entries)?;
        }
        Ok(HarnessFile {
            format: Format::PytorchRows,
            devices,
            version: list.first().and_then(dependencies),
            entries,
            notes: Vec::new(),
        })
    }

    fn live(&self, _run: &LiveRun<'_>) -> Live {
        // The program writes its rows where `CGP_GATE_OUTPUT` says (`cgp_gate.triton` does).
        Live::flags(Vec::new())
    }

    fn writes(&self) -> &'static str {
        "rows written to the path in `CGP_GATE_OUTPUT`, e.g. by `cgp_gate.triton`"
    }

    fn summary_note(&self) -> Option<&'static str> {
        Some(
            "one value per process (the rows hold one value of this metric, not repeated measurements): the processes' values are the samples, so the noise seen is between processes only",
        )
    }
}

fn text<'v>(v: &'v Value, pointer: &str) -> Option<&'v str> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty() && *s != "unknown")
}

/// The GPU a row names: its runner's, else the benchmark's `extra_info.device`.
fn device(row: &Value) -> Option<String> {
    let runner = row.get("runners").and_then(Value::as_array).and_then(|r| {
        r.iter()
            .find_map(|r| text(r, "/gpu_info").or_else(|| text(r, "/name")))
    });
    runner
        .or_else(|| text(row, "/benchmark/extra_info/device"))
        .map(str::to_owned)
}

/// `pytorch 2.8.0, triton 3.4.0`: the versions (or commits) of a row's dependencies.
fn dependencies(row: &Value) -> Option<String> {
    let deps = row.get("dependencies")?.as_object()?;
    let each: Vec<String> = deps
        .iter()
        .filter_map(|(name, d)| {
            let v = text(d, "/version").or_else(|| text(d, "/sha"))?;
            Some(format!("{name} {v}"))
        })
        .collect();
    (!each.is_empty()).then(|| each.join(", "))
}

fn read_row(
    row: &Value,
    i: usize,
    device: Option<String>,
    origin: &Path,
    entries: &mut Vec<Entry>,
) -> Result<(), HarnessError> {
    let model = text(row, "/model/name")
        .ok_or_else(|| HarnessError::new(origin, format!("row {} has no `model.name`", i + 1), HELP))?;
    let parts: Vec<String> = [
        ("backend", "/model/backend"),
        ("mode", "/benchmark/mode"),
        ("dtype", "/benchmark/dtype"),
    ]
    .iter()
    .filter_map(|(k, p)| text(row, p).map(|v| format!("{k}={v}")))
    .collect();
    let state = parts.join(",");
    let metric = text(row, "/metric/name").ok_or_else(|| {
        HarnessError::new(origin, format!("row {} has no `metric.name`", i + 1), HELP).at(model, &state)
    })?;
    let unit = text(row, "/metric/extra_info/unit").unwrap_or("").to_owned();
    let raw = row
        .pointer("/metric/benchmark_values")
        .and_then(Value::as_array)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| {
            HarnessError::new(origin, "`metric.benchmark_values` is not a list of values", HELP)
                .at(model, &state)
        })?;
    let per_input = text(row, "/benchmark/name") == Some(HELION);
    let groups: Vec<(String, &[Value])> = if per_input {
        raw.iter()
            .enumerate()
            .map(|(n, v)| {
                let s = if state.is_empty() {
                    format!("input={n}")
                } else {
                    format!("{state},input={n}")
                };
                (s, std::slice::from_ref(v))
            })
            .collect()
    } else {
        vec![(state.clone(), raw.as_slice())]
    };
    for (state, values) in groups {
        let e = entry_at(entries, model, &state, device.as_deref());
        if e.metric(metric).is_some() {
            return Err(HarnessError::new(
                origin,
                format!("metric `{metric}` appears twice (row {})", i + 1),
                "each model x backend x mode x dtype x metric must be one row of one process's file; was the file concatenated?",
            )
            .at(model, &state));
        }
        let what = format!("a value of `{metric}`");
        let mut got = Vec::with_capacity(values.len());
        for v in values {
            match v.as_f64() {
                Some(0.0) => {
                    e.status = Status::Error(format!(
                        "`{metric}` is 0: the mark of a failed input (Helion and tritonbench's CI write 0 for a failure or an out-of-memory)"
                    ));
                }
                Some(x) => got.push(positive_number(x, &what, origin, model, &state)?),
                None => {
                    super::registry::positive(v, &what, origin, model, &state)?;
                }
            }
        }
        if !got.is_empty() {
            e.metrics.push(Metric {
                name: metric.to_owned(),
                unit: unit.clone(),
                per_sample: got.len() > 1,
                values: got,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::testdata::{close, files, read_err, read_ok, shared2};

    /// Helion's real file: one entry per kernel and input, each value the file's, on its H100.
    #[test]
    fn helions_real_rows_read_one_entry_per_input_with_the_files_values() {
        let Some(dir) = shared2("tritonbench") else { return };
        let p = &files(&dir, "helion")[0];
        let bytes = std::fs::read(p).unwrap();
        let f = read_ok(&bytes, p);
        assert_eq!(f.format, Format::PytorchRows);
        assert_eq!(f.devices, ["NVIDIA H100"]);
        let doc: Value = serde_json::from_slice(&bytes).unwrap();
        let mut n = 0;
        for row in doc.as_array().unwrap() {
            let model = row["model"]["name"].as_str().unwrap();
            let metric = row["metric"]["name"].as_str().unwrap();
            for (i, v) in row["metric"]["benchmark_values"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
            {
                let e = f
                    .entries
                    .iter()
                    .find(|e| e.benchmark == model && e.state == format!("input={i}"))
                    .unwrap();
                let m = e.metric(metric).unwrap();
                assert!(!m.per_sample && m.values.len() == 1 && close(m.values[0], v.as_f64().unwrap()));
                assert_eq!(e.device.as_deref(), Some("NVIDIA H100"));
                n += 1;
            }
        }
        assert_eq!((n, f.entries.len()), (107, 107));
    }

    /// Rows as tritonbench's CI writes them (SYNTHETIC: none is public), JSON lines, one value
    /// each; and the helper's repeated samples.
    #[test]
    fn ci_lines_and_repeated_samples() {
        let p = Path::new("rows.jsonl");
        let line = |backend: &str, metric: &str, values: &str| {
            format!(
                r#"{{"benchmark": {{"name": "tritonbench_gemm_fwd", "mode": "fwd", "dtype": "unknown", "extra_info": {{}}}}, "model": {{"name": "gemm", "type": "tritonbench-oss", "backend": "{backend}"}}, "metric": {{"name": "{metric}", "benchmark_values": {values}}}, "runners": [{{"name": "linux.aws.h100", "gpu_info": "NVIDIA H100 80GB HBM3", "gpu_count": 1}}], "dependencies": {{"pytorch": {{"version": "2.8.0"}}, "triton": {{"version": "3.4.0"}}}}}}"#
            )
        };
        let text = [
            line("triton", "latency", "[0.0125]"),
            line("triton", "tflops", "[2.7]"),
            line("aten", "latency", "[0.011, 0.0112, 0.0109]"),
        ]
        .join("\n");
        let f = read_ok(text.as_bytes(), p);
        assert_eq!(f.devices, ["NVIDIA H100 80GB HBM3"]);
        assert_eq!(f.version.as_deref(), Some("pytorch 2.8.0, triton 3.4.0"));
        assert_eq!(f.entries.len(), 2);
        assert_eq!(f.entries[0].key(), "gemm [backend=triton,mode=fwd]");
        assert!(!f.entries[0].metric("latency").unwrap().per_sample);
        let samples = f.entries[1].metric("latency").unwrap();
        assert!(samples.per_sample && samples.values.len() == 3);
        let failed = read_ok(line("triton", "latency", "[0.0]").as_bytes(), p);
        assert!(matches!(&failed.entries[0].status, Status::Error(m) if m.contains("failed input")));
        for (v, shown) in [
            ("[1.0, -2.0]", "is -2"),
            ("[1.0, NaN]", "is `NaN`"),
            ("[\"x\"]", "is `x`"),
        ] {
            let e = read_err(line("triton", "latency", v).as_bytes(), p);
            assert!(e.starts_with(&format!("rows.jsonl, benchmark `gemm`, state `backend=triton,mode=fwd`: a value of `latency` {shown}")), "{e}");
        }
        let twice = [
            line("triton", "latency", "[1.0]"),
            line("triton", "latency", "[1.0]"),
        ]
        .join("\n");
        assert!(read_err(twice.as_bytes(), p).contains("metric `latency` appears twice (row 2)"));
    }
}
