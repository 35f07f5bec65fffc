//! The readers on the shared real harness files (`../shared/fixtures/harness/`, beside the
//! checkout; PROVENANCE.md there says where each came from), each state's values compared with
//! the file's own, found by a plain walk of the JSON here; and on bad input. Sidecars are
//! synthetic (no real `--jsonbin` output is public) and labelled so.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::*;

/// The shared harness fixtures: `../shared` beside the repository, or `../../shared` from a
/// worktree. Under CI a missing folder fails.
fn shared() -> Option<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let found = ["../shared/fixtures/harness", "../../shared/fixtures/harness"]
        .iter()
        .map(|p| repo.join(p))
        .find(|d| d.is_dir());
    if found.is_none() {
        assert!(
            std::env::var("CI").map_or(true, |v| v.is_empty() || v == "false"),
            "no ../shared/fixtures/harness under CI"
        );
        eprintln!("SKIPPED: harness::tests (no ../shared/fixtures/harness beside the checkout)");
    }
    found
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

fn read_file(p: &Path) -> HarnessFile {
    let bytes = std::fs::read(p).unwrap();
    read(&bytes, p, &no_sidecars).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

fn num(v: &Value) -> f64 {
    match v {
        Value::String(s) => s.parse().unwrap(),
        other => other.as_f64().unwrap(),
    }
}

/// Every nvbench state: skipped as the file says, else its mean GPU time (and every numeric
/// summary) equal to the file's.
#[test]
fn every_nvbench_file_reads_with_the_files_values() {
    let Some(dir) = shared() else { return };
    let mut states = 0;
    for p in files(&dir.join("nvbench")) {
        let f = read_file(&p);
        assert_eq!(f.format, Format::Nvbench);
        let doc: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        let mut i = 0;
        for b in doc["benchmarks"].as_array().unwrap() {
            let list: Vec<&Value> = match &b["states"] {
                Value::Object(m) => m.values().collect(),
                Value::Array(a) => a.iter().collect(),
                _ => unreachable!(),
            };
            for s in list {
                let e = &f.entries[i];
                i += 1;
                states += 1;
                assert_eq!(e.benchmark, b["name"].as_str().unwrap());
                if s["is_skipped"].as_bool() == Some(true) {
                    assert!(
                        matches!(&e.status, Status::Skipped(r) if r.contains(s["skip_reason"].as_str().unwrap())),
                        "{e:?}"
                    );
                    continue;
                }
                // The file's mean cold GPU time, by its Gen-0 name or its tag.
                let mean = match &s["summaries"] {
                    Value::Object(m) => num(&m["Average GPU Time (Cold)"]["value"]["value"]),
                    Value::Array(a) => {
                        let sum = a.iter().find(|x| x["tag"] == "nv/cold/time/gpu/mean").unwrap();
                        num(&sum["data"][0]["value"])
                    }
                    _ => unreachable!(),
                };
                let got = e.metric(nvbench::GPU_TIME).unwrap();
                assert!(!got.per_sample);
                assert!(
                    close(got.values[0], mean * 1e9),
                    "{}: {} vs {}",
                    e.key(),
                    got.values[0],
                    mean * 1e9
                );
                if let Value::Array(a) = &s["summaries"] {
                    for sum in a {
                        let v = num(&sum["data"][0]["value"]);
                        let m = e.metric(sum["tag"].as_str().unwrap()).unwrap();
                        let factor = match sum["hint"].as_str() {
                            Some("duration") => 1e9,
                            Some("percentage") => 100.0,
                            _ => 1.0,
                        };
                        assert!(close(m.values[0], v * factor), "{} {}", e.key(), m.name);
                    }
                }
            }
        }
        assert_eq!(i, f.entries.len(), "{}", p.display());
    }
    assert_eq!(states, 8 + 26 + 2 + 2 + 2);
}

#[test]
fn nvbench_states_are_keyed_without_device_and_type_markers() {
    assert_eq!(
        nvbench::normalise_state("Device=0 T{ct}=I32 OffsetT{ct}=I32 Elements{io}=2^16"),
        "T=I32,OffsetT=I32,Elements=2^16"
    );
    let Some(dir) = shared() else { return };
    let f = read_file(
        &dir.join("nvbench/NVIDIA-nvbench__5db1524__examples-outputs__nvbench.example.auto_throughput.json"),
    );
    // Two devices: each state names its device by name, never by index.
    assert_eq!(f.devices, ["Quadro GV100", "Quadro GP100"]);
    assert_eq!(f.entries[0].key(), "throughput_bench [T=1,Stride=1@Quadro GV100]");
    assert_eq!(f.entries[4].key(), "throughput_bench [T=1,Stride=1@Quadro GP100]");
    let f = read_file(
        &dir.join("nvbench/lktr-wq-My-Contribution__64dc9c9__2026-09-05-warmup-audit__run1-warmup1.json"),
    );
    assert_eq!(f.devices, ["NVIDIA GeForce RTX 4060 Laptop GPU"]);
    assert_eq!(f.version.as_deref(), Some("python-0.3.0-7-g410dcdd"));
    assert_eq!(f.entries[1].key(), "base [T=I32,OffsetT=I32,Elements=2^24]");
}

/// Every Google Benchmark run: its repetitions' times in ns, as the file has them in its units.
#[test]
fn every_gbench_file_reads_with_the_files_values() {
    let Some(dir) = shared() else { return };
    for p in files(&dir.join("gbench")) {
        let f = read_file(&p);
        assert_eq!(f.format, Format::GBench, "{}", p.display());
        let doc: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        let mut checked = 0;
        for e in &f.entries {
            let want: Vec<&Value> = doc["benchmarks"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|b| {
                    let key = e.key().replacen(" [", "/", 1);
                    b.get("run_name").or(b.get("name")).and_then(Value::as_str)
                        == Some(key.trim_end_matches(']'))
                })
                .filter(|b| b.get("run_type").is_none_or(|t| t == "iteration"))
                .collect();
            if want.is_empty() {
                assert!(matches!(e.status, Status::Skipped(_)), "{e:?}");
                continue;
            }
            let real = e.metric("real_time").unwrap();
            assert_eq!(real.values.len(), want.len());
            for (v, b) in real.values.iter().zip(&want) {
                let f = ns_per(b["time_unit"].as_str().unwrap()).unwrap();
                assert!(close(*v, b["real_time"].as_f64().unwrap() * f));
                checked += 1;
            }
        }
        assert!(checked > 0);
    }
}

#[test]
fn gbench_counters_are_metrics_and_units_are_per_entry() {
    let Some(dir) = shared() else { return };
    let f = read_file(&dir.join("gbench/kokkos-benchmark-results__ubuntu-latest-g++-OPENMP__Kokkos_PerformanceTest_Benchmark_2026-04-15_T20-44-30.json"));
    assert_eq!(f.entries.len(), 198);
    let e = &f.entries[0];
    assert_eq!(e.benchmark, "GramSchmidt<double>");
    assert_eq!(e.state, "Count:1024/iterations:5/manual_time");
    // 0.001884776 s in the file.
    assert!(close(e.metric("real_time").unwrap().values[0], 1_884_776.0));
    assert_eq!(e.metric("Count").unwrap().values, [1024.0]);
    let f = read_file(&dir.join("gbench/google-benchmark__tools-gbench-Inputs__test1_run1.json"));
    let bigo = f
        .entries
        .iter()
        .find(|e| e.benchmark == "MyComplexityTest")
        .unwrap();
    assert!(matches!(bigo.status, Status::Skipped(_)));
    let s = f
        .entries
        .iter()
        .find(|e| e.benchmark == "BM_NotBadTimeUnit")
        .unwrap();
    assert!(close(s.metric("real_time").unwrap().values[0], 0.4e9));
}

#[test]
fn every_pytest_benchmark_file_reads_with_the_files_rounds() {
    let Some(dir) = shared() else { return };
    for p in files(&dir.join("pytest-benchmark")) {
        let f = read_file(&p);
        assert_eq!(f.format, Format::PytestBenchmark);
        let doc: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        let list = doc["benchmarks"].as_array().unwrap();
        assert_eq!(list.len(), f.entries.len());
        let mut markers = 0;
        for (b, e) in list.iter().zip(&f.entries) {
            let want: Vec<f64> = b["stats"]["data"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_f64)
                .map(|s| s * 1e9)
                .collect();
            markers += b["stats"]["data"].as_array().unwrap().len() - want.len();
            let got = &e.metric(pytest_bench::TIME).unwrap().values;
            assert_eq!(got.len(), want.len());
            assert!(got.iter().zip(&want).all(|(a, b)| close(*a, *b)), "{}", e.key());
        }
        // The trimmed fixtures' "... omitted" markers are skipped, and counted.
        assert_eq!(
            f.notes.len(),
            list.iter()
                .filter(|b| b["stats"]["data"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(Value::is_string))
                .count()
        );
        assert!(markers > 0);
    }
}

fn err(text: &str) -> HarnessError {
    read(text.as_bytes(), Path::new("x.json"), &no_sidecars).unwrap_err()
}

#[test]
fn bad_files_are_refused_naming_file_benchmark_and_state() {
    assert!(
        err(r#"{"benchmarks": [{"name": "a", "states": ["#)
            .message
            .contains("truncated")
    );
    assert!(
        err(r#"{"benchmarks": []}{"benchmarks": []}"#)
            .message
            .contains("more than one JSON document")
    );
    assert!(
        err(r#"{"traceEvents": []}"#)
            .message
            .contains("not a file nvbench")
    );
    assert!(err(r#"[1, 2]"#).message.contains("not a file nvbench"));
    // NaN and negative times (nvbench writes numbers as strings).
    let state = |v: &str| {
        format!(
            r#"{{"devices": [], "benchmarks": [{{"name": "b", "states": [{{"name": "Device=0 N=4", "summaries": [{{"tag": "nv/cold/time/gpu/mean", "hint": "duration", "data": [{{"name": "value", "type": "float64", "value": "{v}"}}]}}]}}]}}]}}"#
        )
    };
    for v in ["nan", "-1e-6", "inf"] {
        let e = err(&state(v));
        assert_eq!(
            (e.benchmark.as_deref(), e.state.as_deref()),
            (Some("b"), Some("N=4")),
            "{v}"
        );
        assert!(
            e.to_string().starts_with("x.json, benchmark `b`, state `N=4`: "),
            "{e}"
        );
    }
    // pytest-benchmark: an empty `data`, a negative round.
    let py = |d: &str| {
        format!(
            r#"{{"machine_info": {{}}, "benchmarks": [{{"name": "test_k[64]", "stats": {{"data": {d}}}}}]}}"#
        )
    };
    let e = err(&py("[]"));
    assert!(
        e.message.contains("no round") && e.state.as_deref() == Some("64"),
        "{e}"
    );
    assert!(err(&py("[1e-3, -2e-3]")).message.contains("-0.002"));
    // Google Benchmark: aggregates only.
    let e = err(
        r#"{"context": {}, "benchmarks": [{"name": "BM_a_mean", "run_name": "BM_a", "run_type": "aggregate", "real_time": 1, "cpu_time": 1, "time_unit": "ns"}]}"#,
    );
    assert!(e.help.contains("--benchmark_report_aggregates_only"), "{e:?}");
    let e = err(
        r#"{"context": {}, "benchmarks": [{"name": "BM_a", "run_type": "iteration", "real_time": 1, "cpu_time": 1, "time_unit": "fortnights"}]}"#,
    );
    assert_eq!(e.benchmark.as_deref(), Some("BM_a"));
}

#[test]
fn gbench_errors_and_skips_are_kept_as_such() {
    let f = read(
        br#"{"context": {"gpu": "NVIDIA H100"}, "benchmarks": [
        {"name": "BM_a/8", "run_name": "BM_a/8", "run_type": "iteration", "error_occurred": true, "error_message": "cudaMalloc failed", "real_time": 0, "cpu_time": 0, "time_unit": "ns"},
        {"name": "BM_b", "run_name": "BM_b", "run_type": "iteration", "skipped": true, "skip_message": "no tensor cores", "real_time": 0, "cpu_time": 0, "time_unit": "ns"}]}"#,
        Path::new("x.json"),
        &no_sidecars,
    )
    .unwrap();
    assert_eq!(f.devices, ["NVIDIA H100"]);
    assert!(matches!(&f.entries[0].status, Status::Error(m) if m.contains("cudaMalloc failed")));
    assert_eq!(f.entries[0].key(), "BM_a [8]");
    assert!(matches!(&f.entries[1].status, Status::Skipped(m) if m.contains("no tensor cores")));
}

/// SYNTHETIC: a `--jsonbin` sidecar written here in nvbench's documented layout (little-endian
/// float32 seconds, `<json>-bin/<n>.bin`; frequencies in `-freqs-bin`); no real one is public.
fn synthetic_jsonbin(times: &[f32], size: usize) -> (String, Vec<u8>, Vec<u8>) {
    let json = format!(
        r#"{{"meta": {{"version": {{"json": {{"string": "1.0.0"}}}}}}, "devices": [{{"id": 0, "name": "SYNTHETIC GPU"}}], "benchmarks": [{{"name": "copy", "states": [{{"name": "Device=0 Elements{{io}}=2^20", "device": 0, "summaries": [
        {{"tag": "nv/cold/time/gpu/mean", "hint": "duration", "data": [{{"name": "value", "type": "float64", "value": "1e-3"}}]}},
        {{"tag": "nv/cold/time/gpu/median", "hint": "duration", "data": [{{"name": "value", "type": "float64", "value": null}}]}},
        {{"tag": "nv/json/bin:nv/cold/sample_times", "data": [{{"name": "filename", "type": "string", "value": "r.json-bin/0.bin"}}, {{"name": "size", "type": "int64", "value": "{size}"}}]}},
        {{"tag": "nv/json/freqs-bin:nv/cold/sample_freqs", "data": [{{"name": "filename", "type": "string", "value": "r.json-freqs-bin/0.bin"}}, {{"name": "size", "type": "int64", "value": "{size}"}}]}}]}}]}}]}}"#
    );
    let t: Vec<u8> = times.iter().flat_map(|x| x.to_le_bytes()).collect();
    let f: Vec<u8> = times.iter().flat_map(|_| 1.5e9f32.to_le_bytes()).collect();
    (json, t, f)
}

#[test]
fn jsonbin_sidecars_give_per_sample_times_and_cycles_synthetic() {
    let (json, t, f) = synthetic_jsonbin(&[1e-3, 1.1e-3, 0.9e-3], 3);
    let side = |name: &str| -> Result<Option<Vec<u8>>, String> {
        Ok(Some(if name.contains("freqs") {
            f.clone()
        } else {
            t.clone()
        }))
    };
    let file = read(json.as_bytes(), Path::new("r.json"), &side).unwrap();
    let e = &file.entries[0];
    let times = e.metric(nvbench::GPU_TIME).unwrap();
    assert!(times.per_sample);
    assert_eq!(times.values.len(), 3);
    assert!(close(times.values[1], f64::from(1.1e-3f32) * 1e9));
    let cycles = e.metric(nvbench::GPU_CYCLES).unwrap();
    assert!(close(cycles.values[0], f64::from(1e-3f32) * 1.5e9));
    // The null median is left out and noted.
    assert!(e.metric("nv/cold/time/gpu/median").is_none());
    assert_eq!(file.notes.len(), 1);
    // A sidecar of the wrong length names the file, benchmark and state.
    let (json, t, _) = synthetic_jsonbin(&[1e-3, 1.1e-3], 3);
    let side = |_: &str| -> Result<Option<Vec<u8>>, String> { Ok(Some(t.clone())) };
    let e = read(json.as_bytes(), Path::new("r.json"), &side).unwrap_err();
    assert!(e.to_string().contains("benchmark `copy`, state `Elements=2^20`: the sidecar r.json-bin/0.bin holds 2 samples and the JSON says 3"), "{e}");
    let side = |_: &str| -> Result<Option<Vec<u8>>, String> { Ok(Some(vec![0, 0, 0])) };
    assert!(
        read(json.as_bytes(), Path::new("r.json"), &side)
            .unwrap_err()
            .message
            .contains("not a whole number")
    );
    let (json, t, _) = synthetic_jsonbin(&[1e-3, f32::NAN], 2);
    let side = |_: &str| -> Result<Option<Vec<u8>>, String> { Ok(Some(t.clone())) };
    assert!(
        read(json.as_bytes(), Path::new("r.json"), &side)
            .unwrap_err()
            .message
            .contains("NaN")
    );
}

/// The typed reading of 2022-and-later files gives what the `Value` reading gives, on every
/// shared nvbench file it applies to; other files fall through to the `Value` reading.
#[test]
fn the_typed_nvbench_reading_equals_the_value_reading() {
    let Some(dir) = shared() else { return };
    let mut typed = 0;
    for p in files(&dir.join("nvbench")) {
        let bytes = std::fs::read(&p).unwrap();
        let doc: Value = serde_json::from_slice(&bytes).unwrap();
        let slow = nvbench::read(&doc, &p, &no_sidecars).unwrap();
        if let Some(fast) = nvbench::read_bytes(&bytes, &p, &no_sidecars) {
            assert_eq!(fast.unwrap(), slow, "{}", p.display());
            typed += 1;
        }
    }
    assert_eq!(typed, 1, "the one 2026 file");
    for sub in ["gbench", "pytest-benchmark"] {
        for p in files(&dir.join(sub)) {
            assert!(nvbench::read_bytes(&std::fs::read(&p).unwrap(), &p, &no_sidecars).is_none());
        }
    }
    assert!(
        nvbench::read_bytes(
            br#"{"context": {}, "benchmarks": []}"#,
            Path::new("x"),
            &no_sidecars
        )
        .is_none()
    );
}
