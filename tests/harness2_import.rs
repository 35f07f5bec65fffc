//! The second batch of harness formats (issue 61; docs/harnesses.md) on the shared real files of
//! `../shared/fixtures/harness2/` (PROVENANCE.md there), through the commands: `init --from` writes
//! a spec that validates, `parse` reads, three imported copies give a baseline that `check` passes
//! (exit 0), and three copies slowed by 10 % (SYNTHETIC: each file's times multiplied by 1.10, its
//! rates divided) are a regression (exit 1). tritonbench's `--output-json` has no public real file:
//! its case is SYNTHETIC and says so.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{bin, root};

/// The folder of one format's shared real files, or `None` (a skip, which fails under CI).
fn shared2(format_dir: &str) -> Option<PathBuf> {
    let found = ["../shared/fixtures/harness2", "../../shared/fixtures/harness2"]
        .iter()
        .map(|p| root().join(p).join(format_dir))
        .find(|d| d.is_dir());
    if found.is_none() {
        crate::support::skip(
            "harness2_import",
            "no ../shared/fixtures/harness2 beside the checkout",
        );
    }
    found
}

fn one(dir: &Path, part: &str, end: &str) -> PathBuf {
    let mut all: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    all.sort();
    all.into_iter()
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.contains(part) && n.ends_with(end)
        })
        .unwrap_or_else(|| panic!("no {part}*{end} in {}", dir.display()))
}

fn cmd(args: &[&str]) -> (i32, String) {
    let out = bin().args(args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn read(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn write(p: &Path, v: &Value) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, serde_json::to_vec(v).unwrap()).unwrap();
}

/// Multiply every number under a key `times` says by `factor` (lists too), recursively.
fn scale(v: &mut Value, times: &dyn Fn(&str) -> Option<f64>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                match times(k) {
                    Some(f) => scale_all(x, f),
                    None => scale(x, times),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| scale(x, times)),
        _ => {}
    }
}

fn scale_all(v: &mut Value, f: f64) {
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                *v = serde_json::json!(x * f);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| scale_all(x, f)),
        Value::Object(o) => o.values_mut().for_each(|x| scale_all(x, f)),
        _ => {}
    }
}

/// init, parse, import x the spec's repetitions, baseline update, check (exit 0), check of the slow copies (exit 1).
fn gates(dir: &Path, input: &Path, slow: &Path, profiler: &str) -> String {
    let s = dir.join("cgp-gate.yaml");
    let (code, out) = cmd(&[
        "init",
        "--from",
        input.to_str().unwrap(),
        "-o",
        s.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "init: {out}");
    assert!(
        out.contains(&format!("profiler: {profiler}")) && out.contains("it validates"),
        "{out}"
    );
    let (code, out) = cmd(&["validate", "--spec", s.to_str().unwrap()]);
    assert_eq!(code, 0, "validate: {out}");
    let (code, out) = cmd(&["parse", "--json", input.to_str().unwrap()]);
    assert_eq!(code, 0, "parse: {out}");
    assert_eq!(
        serde_json::from_str::<Value>(out.trim()).unwrap()["format"],
        profiler
    );
    let spec = s.to_str().unwrap();
    let store = dir.join("b");
    let store = store.to_str().unwrap();
    let mut runs = Vec::new();
    // As many copies as the spec asks processes: 3, or 5 for a file of one value per process
    // (issue 57: `init` plans enough processes for the t test to decide).
    let n = crate::support::spec_repetitions(&s);
    for (name, file) in [("ref", input), ("same", input), ("slow", slow)] {
        let rec = dir.join(name);
        let f = file.to_str().unwrap();
        let mut args = vec!["import", "--spec", spec, "--into", rec.to_str().unwrap()];
        args.extend(std::iter::repeat_n(f, n));
        let (code, out) = cmd(&args);
        assert_eq!(code, 0, "import {name}: {out}");
        runs.push(rec);
    }
    let on = |verb: &[&str], rec: &Path| {
        let mut args = verb.to_vec();
        args.extend([
            "--spec",
            spec,
            "--replay",
            rec.to_str().unwrap(),
            "--baselines",
            store,
        ]);
        cmd(&args)
    };
    let (code, out) = on(&["baseline", "update"], &runs[0]);
    assert_eq!(code, 0, "baseline update: {out}");
    let (code, out) = on(&["check"], &runs[1]);
    assert_eq!(code, 0, "check of the same files: {out}");
    let (code, slow_out) = on(&["check"], &runs[2]);
    assert_eq!(code, 1, "check of the 10 % slower copies: {slow_out}");
    assert!(slow_out.contains("regression"), "{slow_out}");
    slow_out
}

#[test]
fn hyperfine_real_file_gates() {
    let Some(dir) = shared2("hyperfine") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let input = one(&dir, "bencherdev", ".json");
    let mut v = read(&input);
    scale(&mut v, &|k| {
        ["times", "mean", "median", "min", "max"]
            .contains(&k)
            .then_some(1.1)
    });
    let slow = tmp.path().join("slow.json");
    write(&slow, &v);
    let out = gates(tmp.path(), &input, &slow, "hyperfine");
    assert!(out.contains("sleep 0.1") && out.contains("+10.00%"), "{out}");
}

#[test]
fn helions_pytorch_rows_gate() {
    let Some(dir) = shared2("tritonbench") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let input = one(&dir, "helion", ".py");
    let mut v = read(&input);
    // A speedup is better higher: 10 % slower is a speedup divided by 1.10.
    scale(&mut v, &|k| (k == "benchmark_values").then_some(1.0 / 1.1));
    let slow = tmp.path().join("slow.json");
    write(&slow, &v);
    let out = gates(tmp.path(), &input, &slow, "pytorch-rows");
    assert!(out.contains("107 regressions"), "{out}");
}

#[test]
fn criterion_real_folder_gates() {
    let Some(dir) = shared2("criterion") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let lay_out = |root: &Path, factor: f64| {
        let new = root.join("Build Voronoi Cells/voronator/1000/new");
        for f in ["benchmark", "sample", "estimates"] {
            let mut v = read(&one(&dir, "andreesteve", &format!("__new__{f}.json")));
            scale(&mut v, &|k| {
                ["times", "point_estimate"].contains(&k).then_some(factor)
            });
            write(&new.join(format!("{f}.json")), &v);
        }
    };
    let (input, slow) = (
        tmp.path().join("in-ref/criterion"),
        tmp.path().join("in-slow/criterion"),
    );
    lay_out(&input, 1.0);
    lay_out(&slow, 1.1);
    let out = gates(tmp.path(), &input, &slow, "criterion");
    assert!(out.contains("Build Voronoi Cells [voronator/1000]"), "{out}");
}

#[test]
fn asv_real_results_gate() {
    let Some(dir) = shared2("asv") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let lay_out = |root: &Path, factor: f64| -> PathBuf {
        let mut v = read(&one(&dir, "akihironitta", "conda-py3.11.json"));
        for row in v["results"].as_object_mut().unwrap().values_mut() {
            scale_all(&mut row[0], factor);
        }
        let file = root.join("results/codespaces-v100/e90aa0c8-conda-py3.11.json");
        write(&file, &v);
        write(
            &root.join("results/benchmarks.json"),
            &read(&one(&dir, "akihironitta", "benchmarks.json")),
        );
        file
    };
    let (input, slow) = (
        lay_out(&tmp.path().join("in-ref"), 1.0),
        lay_out(&tmp.path().join("in-slow"), 1.1),
    );
    let out = gates(tmp.path(), &input, &slow, "asv");
    // The three failed benchmarks (`null` results) are not targets; the timeraw and the two
    // track benchmarks are, and each got 10 % worse.
    assert!(out.contains("3 regressions on codespaces-v100"), "{out}");
}

#[test]
fn vllm_real_file_gates() {
    let Some(dir) = shared2("vllm") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let input = one(&dir, "Scicom", ".json");
    let mut v = read(&input);
    scale(&mut v, &|k| {
        if k.ends_with("_ms") || k == "duration" {
            Some(1.1)
        } else {
            (k.contains("throughput") || k.ends_with("per_s")).then_some(1.0 / 1.1)
        }
    });
    let slow = tmp.path().join("slow.json");
    write(&slow, &v);
    let out = gates(tmp.path(), &input, &slow, "vllm");
    assert!(out.contains("ttft/p99"), "{out}");
}

#[test]
fn tritonbench_output_json_gates_synthetic() {
    let tmp = tempfile::tempdir().unwrap();
    // SYNTHETIC: the key forms of tritonbench's `userbenchmark_dict`; no real file is public.
    let file = |f: f64| {
        serde_json::json!({
            "tritonbench_softmax_fwd[x_4096-triton_softmax]_latency": 0.0187 * f,
            "tritonbench_softmax_fwd[x_4096-naive_softmax]_latency": 0.0431 * f,
            "tritonbench_softmax_fwd[x_8192-triton_softmax]_latency": 0.0352 * f,
            "tritonbench_softmax_fwd[x_4096-triton_softmax]_gbps": 1790.0 / f,
            "tritonbench_softmax_fwd-pass": 1
        })
    };
    let (input, slow) = (tmp.path().join("t.json"), tmp.path().join("slow.json"));
    write(&input, &file(1.0));
    write(&slow, &file(1.1));
    let out = gates(tmp.path(), &input, &slow, "tritonbench");
    assert!(out.contains("3 regressions"), "{out}");
}

/// Damaged files of every new format: exit 2, naming the file, the benchmark and the field.
#[test]
fn damaged_files_are_invalid_input_naming_file_benchmark_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, text, says) in [
        (
            "h.json",
            r#"{"results": [{"command": "sleep 1", "mean": 1.0, "times": [1.0, -1.0]}]}"#,
            "h.json, benchmark `sleep 1`: a run of `times` is -1",
        ),
        (
            "v.json",
            r#"{"model_id": "m", "request_throughput": 1.0, "mean_ttft_ms": NaN}"#,
            "v.json, benchmark `m`: `mean_ttft_ms` is `NaN`",
        ),
        (
            "r.json",
            r#"[{"benchmark": {"name": "b"}, "model": {"name": "k"}, "metric": {"name": "latency", "benchmark_values": [1.0, 1e-320]}}]"#,
            "r.json, benchmark `k`: a value of `latency` is 1e-320",
        ),
        (
            "t.json",
            r#"{"tritonbench_k_fwd[x_1-a]_latency": Infinity}"#,
            "t.json, benchmark `k_fwd`, state `x_1-a`: `latency` is inf",
        ),
        (
            "c.json",
            r#"{"reason":"benchmark-complete","id":"g/f","iteration_count":[1,2],"measured_values":[5.0,0.0],"unit":"ns"}"#,
            "c.json, benchmark `g`, state `f`: a time of `measured_values` is 0",
        ),
    ] {
        let p = tmp.path().join(name);
        std::fs::write(&p, text).unwrap();
        let (code, out) = cmd(&["parse", p.to_str().unwrap()]);
        assert_eq!(code, 2, "{name}: {out}");
        assert!(out.contains(says), "{name}: {out}");
        assert!(out.contains("help: "), "{name}: {out}");
    }
}

/// A name from a file (a hyperfine command with markup, a pipe, a newline and a workflow command)
/// goes through `init --from` into a spec that validates, and into every report escaped by that
/// report's own function: no raw markup in the Markdown, HTML or JUnit (SYNTHETIC file).
#[test]
fn names_from_files_are_escaped_in_every_report() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let name = "bench | <script>alert(1)</script>\n::error::planted";
    let file = |f: f64| serde_json::json!({"results": [{"command": name, "mean": 0.1 * f, "times": [0.1 * f, 0.101 * f, 0.099 * f, 0.1 * f, 0.1005 * f], "exit_codes": [0, 0, 0, 0, 0]}]});
    let (input, slow) = (d.join("h.json"), d.join("slow.json"));
    write(&input, &file(1.0));
    write(&slow, &file(1.1));
    let s = d.join("s.yaml");
    let (code, out) = cmd(&[
        "init",
        "--from",
        input.to_str().unwrap(),
        "-o",
        s.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    let spec = s.to_str().unwrap();
    let i = input.to_str().unwrap();
    let sl = slow.to_str().unwrap();
    let (ref_dir, slow_dir, store) = (d.join("ref"), d.join("slowrec"), d.join("b"));
    assert_eq!(
        cmd(&[
            "import",
            "--spec",
            spec,
            "--into",
            ref_dir.to_str().unwrap(),
            i,
            i,
            i
        ])
        .0,
        0
    );
    assert_eq!(
        cmd(&[
            "import",
            "--spec",
            spec,
            "--into",
            slow_dir.to_str().unwrap(),
            sl,
            sl,
            sl
        ])
        .0,
        0
    );
    assert_eq!(
        cmd(&[
            "baseline",
            "update",
            "--spec",
            spec,
            "--replay",
            ref_dir.to_str().unwrap(),
            "--baselines",
            store.to_str().unwrap()
        ])
        .0,
        0
    );
    let (md, html, junit) = (d.join("r.md"), d.join("r.html"), d.join("r.xml"));
    let (code, out) = cmd(&[
        "check",
        "--spec",
        spec,
        "--replay",
        slow_dir.to_str().unwrap(),
        "--baselines",
        store.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    for (p, what) in [(&html, "HTML"), (&junit, "JUnit")] {
        let text = std::fs::read_to_string(p).unwrap();
        assert!(!text.contains("<script>"), "{what} has the raw markup: {text}");
        assert!(text.contains("alert(1)"), "{what} lost the name: {text}");
    }
    // Markdown: the name is in a code span (where GFM reads `<script>` as text) or escaped, the
    // pipe escaped, the newline gone: each table row stays one row.
    let md_text = std::fs::read_to_string(&md).unwrap();
    for line in md_text.lines().filter(|l| l.contains("alert(1)")) {
        for (at, _) in line.match_indices("<script>") {
            assert_eq!(
                line[..at].matches('`').count() % 2,
                1,
                "raw markup outside a code span: {line}"
            );
        }
        assert!(
            !line.contains(" | <script>") && !line.contains("::error::planted |"),
            "{line}"
        );
    }
    assert!(!md_text.lines().any(|l| l.starts_with("::error::")), "{md_text}");
}
