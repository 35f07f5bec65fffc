//! tritonbench's `--output-json PATH` (SCHEMAS.md, 1a; meta-pytorch/tritonbench
//! `BenchmarkOperatorMetrics.userbenchmark_dict`): one flat object of
//! `tritonbench_{benchmark}[x_{input}-{provider}]_{metric}` keys, where `{benchmark}` is
//! `{op}_{mode}` unless `--benchmark-name` set it, `{provider}` has no `-`, and a metric whose cell
//! was a dict has one key per sub-key (`{metric}-{sub}`); plus the means over inputs,
//! `tritonbench_{benchmark}[{provider}]-{metric}-avg`, and `tritonbench_{benchmark}-pass`.
//!
//! An entry per benchmark x state, the state being the key's bracket as tritonbench wrote it
//! (`x_(256, 256, 256)-triton_tutorial_matmul`, or the provider alone for the means over inputs,
//! whose metrics end `-avg`). Every value is one per process: tritonbench keeps the median of
//! its repetitions (`latency`, in ms, here ns), no samples. Booleans were written as 1.0/0.0;
//! an `accuracy` of 0 (the provider's output did not match the baseline's) makes its entry an
//! error. Values that are no number (a config, a hash) are not metrics (a note counts them); a
//! zero, negative or non-finite measurement is refused. The file names no device and no
//! version. `-pass` 0 (tritonbench skipped the means: an input missing, or a backend error) is
//! a note. Per-sample times of Triton kernels: `cgp_gate.triton` (docs/harnesses.md), which
//! writes PyTorch benchmark rows.

use std::path::Path;

use serde_json::Value;

use super::registry::{Doc, Live, LiveRun, Reader, entry_at, positive_number};
use super::{Entry, Format, HarnessError, HarnessFile, Metric, Sidecars, Status};

pub struct Tritonbench;
pub static READER: Tritonbench = Tritonbench;

const PREFIX: &str = "tritonbench_";
const HELP: &str = "use the file tritonbench wrote with `--output-json PATH`, unedited";

impl Reader for Tritonbench {
    fn format(&self) -> Format {
        Format::Tritonbench
    }

    fn detects(&self, doc: &Doc) -> bool {
        doc.json()
            .and_then(Value::as_object)
            .is_some_and(|o| !o.is_empty() && o.keys().all(|k| k.starts_with(PREFIX)))
    }

    fn read(&self, doc: &Doc, origin: &Path, _sidecars: Sidecars<'_>) -> Result<HarnessFile, HarnessError> {
        let obj = doc
            .json()
            .and_then(Value::as_object)
            .ok_or_else(|| HarnessError::new(origin, "is not one JSON object", HELP))?;
        let mut entries: Vec<Entry> = Vec::new();
        let mut notes = Vec::new();
        let mut not_numbers = 0usize;
        for (key, value) in obj {
            let Some(parsed) = parse_key(key) else {
                return Err(HarnessError::new(
                    origin,
                    format!(
                        "has the key `{key}`, which is not `tritonbench_{{benchmark}}[x_{{input}}-{{provider}}]_{{metric}}`"
                    ),
                    HELP,
                ));
            };
            let Key {
                benchmark,
                state,
                metric,
            } = match parsed {
                Parsed::Pass(bench) => {
                    if value.as_f64() == Some(0.0) {
                        notes.push(format!("{bench}: tritonbench marked the run incomplete (`-pass` 0: an input missing or a backend error), and wrote no means over inputs"));
                    }
                    continue;
                }
                Parsed::Metric(k) => k,
            };
            let at = entry_at(&mut entries, &benchmark, &state, None);
            let Some(number) = number(value) else {
                not_numbers += usize::from(!value.is_null());
                continue;
            };
            if metric.starts_with("accuracy") && number == 0.0 {
                at.status = Status::Error(format!(
                    "`{metric}` is 0: the provider's output did not match the baseline's"
                ));
                continue;
            }
            let (unit, scale) = if metric.starts_with("latency") {
                ("ns", 1e6)
            } else {
                ("", 1.0)
            };
            let v = positive_number(number, &format!("`{metric}`"), origin, &benchmark, &state)?;
            at.metrics.push(Metric {
                name: metric,
                unit: unit.to_owned(),
                values: vec![v * scale],
                per_sample: false,
            });
        }
        if not_numbers > 0 {
            notes.push(format!(
                "{not_numbers} value(s) that are no number (configs, hashes, messages) are not metrics"
            ));
        }
        if entries.is_empty() {
            return Err(HarnessError::new(origin, "holds no metric of any input", HELP));
        }
        Ok(HarnessFile {
            format: Format::Tritonbench,
            devices: Vec::new(),
            version: None,
            entries,
            notes,
        })
    }

    fn live(&self, run: &LiveRun<'_>) -> Live {
        Live::flags(vec!["--output-json".to_owned(), run.out.display().to_string()])
    }

    fn writes(&self) -> &'static str {
        "`python run.py --op OP --output-json PATH`"
    }

    fn default_metric<'e>(&self, e: &'e Entry) -> Option<&'e str> {
        e.metric("latency")
            .or_else(|| e.metrics.first())
            .map(|m| m.name.as_str())
    }

    fn summary_note(&self) -> Option<&'static str> {
        Some(
            "one value per process (tritonbench wrote each input's median over its repetitions, no samples): the processes' values are the samples, so the noise seen is between processes only",
        )
    }
}

/// A value as a number: a JSON number, a boolean, or a string that is one (`str(Latency)`).
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
}

struct Key {
    benchmark: String,
    state: String,
    metric: String,
}

enum Parsed {
    Metric(Key),
    /// `tritonbench_{benchmark}-pass`.
    Pass(String),
}

/// The parts of a key (`None`: not one tritonbench writes).
fn parse_key(key: &str) -> Option<Parsed> {
    let rest = key.strip_prefix(PREFIX)?;
    if let Some(bench) = rest.strip_suffix("-pass")
        && !bench.contains('[')
    {
        return Some(Parsed::Pass(bench.to_owned()));
    }
    let open = rest.find('[')?;
    let benchmark = &rest[..open];
    let inside = &rest[open + 1..];
    if let Some(per_input) = inside.strip_prefix("x_") {
        // The provider has no `-` and the metric no `]`: split at the last `]_`, then the last `-`.
        let close = per_input.rfind("]_")?;
        let metric = &per_input[close + 2..];
        let state = format!("x_{}", &per_input[..close]);
        per_input[..close].rsplit_once('-')?;
        return (!benchmark.is_empty() && !metric.is_empty()).then(|| {
            Parsed::Metric(Key {
                benchmark: benchmark.to_owned(),
                state,
                metric: metric.to_owned(),
            })
        });
    }
    // A mean over inputs: `[{provider}]-{metric}-avg`.
    let (provider, tail) = inside.split_once("]-")?;
    let metric = tail.strip_suffix("-avg")?;
    Some(Parsed::Metric(Key {
        benchmark: benchmark.to_owned(),
        state: provider.to_owned(),
        metric: format!("{metric}-avg"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::testdata::{close, doc, read_err, read_ok};

    /// A file as tritonbench's `userbenchmark_dict` writes it (SYNTHETIC: no real one is public,
    /// PROVENANCE.md), from the key forms of its source.
    const FILE: &str = r#"{
        "tritonbench_gemm_fwd[x_(256, 256, 256)-triton_tutorial_matmul]_latency": "0.0123",
        "tritonbench_gemm_fwd[x_(256, 256, 256)-triton_tutorial_matmul]_tflops": 2.72,
        "tritonbench_gemm_fwd[x_(256, 256, 256)-triton_tutorial_matmul]_accuracy": 1.0,
        "tritonbench_gemm_fwd[x_(256, 256, 256)-triton_tutorial_matmul]_best_config": "{'BLOCK_M': 64}",
        "tritonbench_gemm_fwd[x_(256, 256, 256)-aten_matmul]_latency": 0.011,
        "tritonbench_gemm_fwd[x_[4096, 4096]-aten_matmul]_latency": 1.5,
        "tritonbench_gemm_fwd[x_(256, 256, 256)-triton_tutorial_matmul]_speedup-p50": 1.1,
        "tritonbench_gemm_fwd[triton_tutorial_matmul]-latency-avg": 0.0123,
        "tritonbench_gemm_fwd-pass": 1
    }"#;

    #[test]
    fn keys_split_into_benchmark_input_provider_and_metric() {
        let f = read_ok(FILE.as_bytes(), Path::new("t.json"));
        assert_eq!(f.format, Format::Tritonbench);
        let keys: Vec<String> = f.entries.iter().map(Entry::key).collect();
        assert_eq!(
            keys,
            [
                "gemm_fwd [x_(256, 256, 256)-triton_tutorial_matmul]",
                "gemm_fwd [x_(256, 256, 256)-aten_matmul]",
                "gemm_fwd [x_[4096, 4096]-aten_matmul]",
                "gemm_fwd [triton_tutorial_matmul]",
            ]
        );
        let e = &f.entries[0];
        assert!(close(e.metric("latency").unwrap().values[0], 0.0123e6));
        assert_eq!(e.metric("latency").unwrap().unit, "ns");
        assert!(close(e.metric("tflops").unwrap().values[0], 2.72));
        assert!(close(e.metric("speedup-p50").unwrap().values[0], 1.1));
        assert!(e.metric("best_config").is_none());
        assert!(
            f.notes
                .iter()
                .any(|n| n.starts_with("1 value(s) that are no number"))
        );
        assert!(close(
            f.entries[3].metric("latency-avg").unwrap().values[0],
            0.0123e6
        ));
        assert!(READER.detects(&doc(FILE.as_bytes())));
    }

    #[test]
    fn a_failed_accuracy_is_an_error_and_damage_is_refused() {
        let p = Path::new("t.json");
        let f = read_ok(br#"{"tritonbench_k_fwd[x_1-a]_accuracy": false, "tritonbench_k_fwd[x_1-a]_latency": 1.0, "tritonbench_k_fwd-pass": 0}"#, p);
        assert!(matches!(&f.entries[0].status, Status::Error(m) if m.contains("did not match")));
        assert!(f.notes.iter().any(|n| n.contains("incomplete")));
        for (v, shown) in [
            ("0", "is 0"),
            ("-1.5", "is -1.5"),
            ("NaN", "is NaN"),
            ("Infinity", "is inf"),
        ] {
            let e = read_err(
                format!(r#"{{"tritonbench_k_fwd[x_1-a]_latency": {v}}}"#).as_bytes(),
                p,
            );
            assert!(
                e.starts_with(&format!(
                    "t.json, benchmark `k_fwd`, state `x_1-a`: `latency` {shown}"
                )),
                "{e}"
            );
        }
        let e = read_err(br#"{"tritonbench_oops": 1}"#, p);
        assert!(e.contains("has the key `tritonbench_oops`"), "{e}");
    }
}
