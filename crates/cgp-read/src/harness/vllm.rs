//! vLLM's serving benchmark, `vllm bench serve --save-result` (and the older
//! `benchmarks/benchmark_serving.py`, forks included; SCHEMAS.md, 5): one JSON object per run,
//! or one a line with `--append-result`.
//!
//! An entry per run: its `label` (else `model_id`, else `model_name`), with its load as the state
//! (`request_rate=inf,max_concurrency=100`); a file of several runs (`--append-result`) has an
//! entry per load, and two runs of one load in one file are refused (a process is one run).
//! Metrics, each one value per process (the run's own statistics): `ttft/mean`, `ttft/median`,
//! `ttft/std`, `ttft/p99` (and every `--metric-percentiles` one) from `mean_ttft_ms`, ...,
//! likewise `tpot/*`, `itl/*`, `e2el/*` (ms, here ns); `request_throughput`, `request_goodput`,
//! `output_throughput`, `total_token_throughput`, `max_output_tokens_per_s`; `duration` (s, here
//! ns), `completed`. With `--save-detailed` the requests themselves: `ttft`, `tpot` and `e2el`
//! per successful request (ns; `tpot` = the sum of its `itls` over its output tokens after the
//! first, `e2el` = `ttft` + that sum, as vLLM computes them) are samples, and their p50, p90,
//! p95 and p99 (and `itl/*`'s over every token gap) are quantile rows: each run's quantile of
//! its own requests (`stats::quantile`, numpy's linear rule, vLLM's), one value per process,
//! judged between processes (docs/statistics.md, "Quantile rows"). A run with failed requests
//! (`failed` > 0) is an error entry: its latencies are of the requests that succeeded. The
//! device is a fork's `hardware` key (vLLM records none); vLLM records no version.

use std::path::Path;

use serde_json::{Map, Value};

use super::registry::{Doc, Live, LiveRun, Reader, positive, positive_number};
use super::{Entry, Format, HarnessError, HarnessFile, Metric, Sidecars, Status};

pub struct Vllm;
pub static READER: Vllm = Vllm;

const HELP: &str = "use the file `vllm bench serve --save-result` wrote, unedited";
const LATENCIES: [&str; 4] = ["ttft", "tpot", "itl", "e2el"];
const RATES: [&str; 5] = [
    "request_throughput",
    "request_goodput",
    "output_throughput",
    "total_token_throughput",
    "max_output_tokens_per_s",
];
/// The quantiles a detailed run's requests give rows for.
const QUANTILES: [(&str, f64); 4] = [("p50", 0.50), ("p90", 0.90), ("p95", 0.95), ("p99", 0.99)];

impl Reader for Vllm {
    fn format(&self) -> Format {
        Format::Vllm
    }

    fn detects(&self, doc: &Doc) -> bool {
        let run = |o: &Value| o.get("request_throughput").is_some() && o.get("mean_ttft_ms").is_some();
        let objects = doc.objects();
        !objects.is_empty() && objects.iter().all(run)
    }

    fn read(&self, doc: &Doc, origin: &Path, _sidecars: Sidecars<'_>) -> Result<HarnessFile, HarnessError> {
        let mut entries = Vec::new();
        let mut devices: Vec<String> = Vec::new();
        let mut notes = Vec::new();
        for run in doc.objects() {
            let run = run
                .as_object()
                .ok_or_else(|| HarnessError::new(origin, "is not a JSON object", HELP))?;
            let e = entry(run, origin, &mut notes)?;
            if let Some(d) = &e.device
                && !devices.contains(d)
            {
                devices.push(d.clone());
            }
            entries.push(e);
        }
        Ok(HarnessFile {
            format: Format::Vllm,
            devices,
            version: None,
            entries,
            notes,
        })
    }

    fn live(&self, run: &LiveRun<'_>) -> Live {
        let mut flags = Vec::new();
        if !run.app.iter().any(|a| a == "--save-result") {
            flags.push("--save-result".to_owned());
        }
        flags.extend(["--result-filename".to_owned(), run.out.display().to_string()]);
        Live::flags(flags)
    }

    fn writes(&self) -> &'static str {
        "`vllm bench serve --save-result --result-filename PATH`"
    }

    fn default_metric<'e>(&self, e: &'e Entry) -> Option<&'e str> {
        ["ttft/p99", "ttft/median", "request_throughput"]
            .iter()
            .find_map(|m| e.metric(m))
            .map(|m| m.name.as_str())
    }

    fn summary_note(&self) -> Option<&'static str> {
        Some(
            "one value per process (the run's own statistic, or its quantile of its requests): the processes' values are the samples, compared between processes; a quantile is never judged by a mean of the requests in its tail",
        )
    }
}

fn text<'v>(run: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    run.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn entry(run: &Map<String, Value>, origin: &Path, notes: &mut Vec<String>) -> Result<Entry, HarnessError> {
    let name = text(run, "label")
        .or_else(|| text(run, "model_id"))
        .or_else(|| text(run, "model_name"))
        .unwrap_or("vllm");
    let load = |k: &str| {
        run.get(k)
            .filter(|v| !v.is_null())
            .map(|v| format!("{k}={}", v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
    };
    let state = ["request_rate", "max_concurrency"]
        .iter()
        .filter_map(|k| load(k))
        .collect::<Vec<_>>()
        .join(",");
    let mut metrics = Vec::new();
    let one = |m: &str, unit: &str, v: f64| Metric {
        name: m.to_owned(),
        unit: unit.to_owned(),
        values: vec![v],
        per_sample: false,
    };
    for (key, value) in run {
        let Some((stat, lat)) = latency_key(key) else {
            continue;
        };
        if stat == "std" && value.as_f64() == Some(0.0) {
            notes.push(format!("{name}: `{key}` is 0 (one request?), left out"));
            continue;
        }
        let v = positive(value, &format!("`{key}`"), origin, name, &state)? * 1e6;
        metrics.push(one(&format!("{lat}/{stat}"), "ns", v));
    }
    for key in RATES {
        // A fork writes `request_goodput:`; null is no goodput asked for.
        let Some(v) = run
            .get(key)
            .or_else(|| run.get(&format!("{key}:")))
            .filter(|v| !v.is_null())
        else {
            continue;
        };
        metrics.push(one(
            key,
            "1/second",
            positive(v, &format!("`{key}`"), origin, name, &state)?,
        ));
    }
    if let Some(d) = run.get("duration") {
        metrics.push(one(
            "duration",
            "ns",
            positive(d, "`duration`", origin, name, &state)? * 1e9,
        ));
    }
    if let Some(c) = run.get("completed") {
        metrics.push(one(
            "completed",
            "",
            positive(c, "`completed`", origin, name, &state)?,
        ));
    }
    if run.contains_key("ttfts") {
        detailed(run, origin, name, &state, &mut metrics)?;
    }
    let failed = run.get("failed").and_then(Value::as_u64).unwrap_or(0);
    let status = if failed > 0 {
        Status::Error(format!(
            "{failed} request(s) failed: the latencies are of the requests that succeeded, so a slower server that drops requests could look faster; see the run's `errors`"
        ))
    } else {
        Status::Measured
    };
    Ok(Entry {
        benchmark: name.to_owned(),
        state,
        device: text(run, "hardware").map(str::to_owned),
        status,
        metrics,
    })
}

/// `(stat, latency)` of `p99_ttft_ms`, `mean_itl_ms`, ...
fn latency_key(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_suffix("_ms")?;
    let (stat, lat) = rest.split_once('_')?;
    let stat_ok = ["mean", "median", "std"].contains(&stat)
        || stat
            .strip_prefix('p')
            .is_some_and(|p| !p.is_empty() && p.parse::<f64>().is_ok());
    (stat_ok && LATENCIES.contains(&lat)).then_some((stat, lat))
}

/// The per-request samples and quantile rows of a `--save-detailed` run.
fn detailed(
    run: &Map<String, Value>,
    origin: &Path,
    name: &str,
    state: &str,
    metrics: &mut Vec<Metric>,
) -> Result<(), HarnessError> {
    let list = |k: &str| {
        run.get(k)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    };
    let (ttfts, itls, outs, errors) = (list("ttfts"), list("itls"), list("output_lens"), list("errors"));
    let n = ttfts.len();
    for (k, l) in [
        ("itls", itls.len()),
        ("output_lens", outs.len()),
        ("errors", errors.len()),
    ] {
        if l != n && l != 0 {
            return Err(HarnessError::new(
                origin,
                format!("`{k}` has {l} requests and `ttfts` {n}: the file is damaged"),
                HELP,
            )
            .at(name, state));
        }
    }
    let (mut ttft, mut tpot, mut e2el, mut gaps) = (
        Vec::with_capacity(n),
        Vec::new(),
        Vec::with_capacity(n),
        Vec::new(),
    );
    for (i, t) in ttfts.iter().enumerate() {
        if errors
            .get(i)
            .and_then(Value::as_str)
            .is_some_and(|e| !e.is_empty())
        {
            continue;
        }
        let what = format!("`ttfts` of request {i}");
        let first = positive(t, &what, origin, name, state)? * 1e9;
        let mut rest = 0.0;
        for g in itls
            .get(i)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let g = positive(g, &format!("an `itls` gap of request {i}"), origin, name, state)? * 1e9;
            gaps.push(g);
            rest += g;
        }
        ttft.push(first);
        e2el.push(first + rest);
        let out = outs.get(i).and_then(Value::as_u64).unwrap_or(0);
        if out > 1 {
            tpot.push(positive_number(
                rest / (out - 1) as f64,
                &format!("the TPOT of request {i}"),
                origin,
                name,
                state,
            )?);
        }
    }
    for (lat, values, samples) in [
        ("ttft", &ttft, true),
        ("tpot", &tpot, true),
        ("e2el", &e2el, true),
        ("itl", &gaps, false),
    ] {
        if values.is_empty() {
            continue;
        }
        if samples {
            metrics.push(Metric {
                name: lat.to_owned(),
                unit: "ns".to_owned(),
                values: values.clone(),
                per_sample: true,
            });
        }
        for (q, p) in QUANTILES {
            let row = format!("{lat}/{q}");
            // The run's own statistic stays (p50 is its median): the same rule gives the same number.
            let own = if q == "p50" {
                format!("{lat}/median")
            } else {
                row.clone()
            };
            if metrics.iter().any(|m| m.name == own) {
                continue;
            }
            if let Some(v) = crate::stats::quantile::quantile(values, p) {
                metrics.push(Metric {
                    name: row,
                    unit: "ns".to_owned(),
                    values: vec![v],
                    per_sample: false,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::testdata::{close, files, read_err, read_ok, shared2};

    /// Both shared real files (vLLM's own, and a fork's with `hardware` and `request_goodput:`):
    /// every statistic the file's, in ns.
    #[test]
    fn both_real_files_read_with_the_files_values() {
        let Some(dir) = shared2("vllm") else { return };
        for p in files(&dir, ".json") {
            let bytes = std::fs::read(&p).unwrap();
            let f = read_ok(&bytes, &p);
            assert_eq!(f.format, Format::Vllm);
            let doc: Value = serde_json::from_slice(&bytes).unwrap();
            let e = &f.entries[0];
            assert_eq!(e.status, Status::Measured);
            let mut n = 0;
            for (key, v) in doc.as_object().unwrap() {
                if let Some((stat, lat)) = latency_key(key) {
                    assert!(
                        close(
                            e.metric(&format!("{lat}/{stat}")).unwrap().values[0],
                            v.as_f64().unwrap() * 1e6
                        ),
                        "{key}"
                    );
                    n += 1;
                }
            }
            // The fork writes no E2EL.
            assert_eq!(n, if doc.get("hardware").is_some() { 12 } else { 16 });
            assert!(close(
                e.metric("request_throughput").unwrap().values[0],
                doc["request_throughput"].as_f64().unwrap()
            ));
            assert!(close(
                e.metric("duration").unwrap().values[0],
                doc["duration"].as_f64().unwrap() * 1e9
            ));
            if doc.get("hardware").is_some() {
                assert_eq!(f.devices, ["910B3"]);
                assert_eq!(e.state, "request_rate=inf");
            } else {
                assert_eq!(
                    e.key(),
                    "/workspace/qwen3-32b [request_rate=inf,max_concurrency=100]"
                );
            }
        }
    }

    /// A `--save-detailed` run (SYNTHETIC: no real one is public): the requests as samples, their
    /// quantiles as rows, failed requests left out of both.
    #[test]
    fn detailed_requests_give_samples_and_quantile_rows() {
        let p = Path::new("d.json");
        let run = r#"{"model_id": "m", "request_rate": "inf", "max_concurrency": null, "duration": 2.0, "completed": 4, "failed": 0,
            "request_throughput": 2.0, "mean_ttft_ms": 150.0, "median_ttft_ms": 150.0, "p99_ttft_ms": 199.0,
            "ttfts": [0.1, 0.2, 0.15, 0.0], "itls": [[0.01, 0.02], [0.01], [0.03, 0.03, 0.03], []], "output_lens": [3, 2, 4, 0],
            "errors": ["", "", "", "timeout"]}"#;
        let f = read_ok(run.as_bytes(), p);
        let e = &f.entries[0];
        assert_eq!(e.key(), "m [request_rate=inf]");
        let ttft = e.metric("ttft").unwrap();
        assert!(
            ttft.per_sample
                && ttft
                    .values
                    .iter()
                    .zip([1e8, 2e8, 1.5e8])
                    .all(|(a, b)| close(*a, b))
        );
        let e2el = &e.metric("e2el").unwrap().values;
        assert!(close(e2el[0], 0.13e9) && close(e2el[2], 0.24e9));
        assert!(close(e.metric("tpot").unwrap().values[0], 0.015e9));
        // The file's p99 stays; p90 and p95 come from the requests (numpy's linear rule).
        assert!(close(e.metric("ttft/p99").unwrap().values[0], 199e6));
        assert!(close(e.metric("ttft/p90").unwrap().values[0], 1.9e8));
        assert!(e.metric("ttft/p50").is_none());
        assert!(e.metric("itl/p99").is_some());
        let e = read_err(
            run.replace(
                "\"itls\": [[0.01, 0.02], [0.01]",
                "\"itls\": [[0.01, -0.02], [0.01]",
            )
            .as_bytes(),
            p,
        );
        assert!(
            e.starts_with(
                "d.json, benchmark `m`, state `request_rate=inf`: an `itls` gap of request 0 is -0.02"
            ),
            "{e}"
        );
    }

    #[test]
    fn failed_requests_and_damage() {
        let p = Path::new("v.json");
        let f = read_ok(
            br#"{"model_id": "m", "failed": 3, "request_throughput": 1.0, "mean_ttft_ms": 10.0}"#,
            p,
        );
        assert!(matches!(&f.entries[0].status, Status::Error(m) if m.starts_with("3 request(s) failed")));
        for (v, shown) in [("0", "is 0"), ("-1", "is -1"), ("NaN", "is `NaN`")] {
            let e = read_err(
                format!(r#"{{"model_id": "m", "request_throughput": 1.0, "mean_ttft_ms": {v}}}"#).as_bytes(),
                p,
            );
            assert!(
                e.starts_with(&format!("v.json, benchmark `m`: `mean_ttft_ms` {shown}")),
                "{e}"
            );
        }
        let two = "{\"model_id\": \"m\", \"request_rate\": 1, \"request_throughput\": 1.0, \"mean_ttft_ms\": 1.0}\n".repeat(2);
        assert!(read_err(two.as_bytes(), p).contains("appears twice"));
    }
}
