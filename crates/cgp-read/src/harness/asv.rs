//! airspeed velocity (asv) results, version 2 (SCHEMAS.md, 4): `<results_dir>/<machine>/<commit>-
//! <env>.json`, read with the `benchmarks.json` of its results folder (the units, the types and
//! the parameters' names), the two gathered into one capture (a bundle, `registry`).
//!
//! A row of `results` is positional: its meaning is `result_columns`' (`result`, `params`,
//! `version`, `started_at`, `duration`, `stats_ci_99_a`, `stats_ci_99_b`, `stats_q_25`,
//! `stats_q_75`, `stats_number`, `stats_repeat`, `samples`, `profile`), and asv cuts the empty
//! columns off its end, so rows of one file have 5, 11 or 13 entries. An entry per benchmark x
//! parameter combination (the cartesian product of `params` in `itertools.product` order, named
//! by `benchmarks.json`'s `param_names`: `n=10000,is_real=False`), whose metric is by the
//! benchmark's type: `time` (seconds, here ns), `memory` (bytes), `value` (a `track_` benchmark,
//! in its own unit). With `asv run --record-samples` the samples are its samples; else the
//! result (asv's median of its samples) is one value per process, and the row says so; the
//! interval asv reports is kept as `time/ci_99_a` and `time/ci_99_b`. A `null` result (the whole
//! row or one combination) is a failed benchmark: an error entry; `NaN` is asv's "skipped". The
//! runner is the file's `params.machine` (asv records no GPU); asv records no version of itself.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use super::registry::{self, Doc, Live, LiveRun, Reader, Written, positive};
use super::{Entry, Format, HarnessError, HarnessFile, Metric, Sidecars, Status};

pub struct Asv;
pub static READER: Asv = Asv;

const HELP: &str = "give the results file asv wrote (`<results_dir>/<machine>/<commit>-<env>.json`), with the `benchmarks.json` of its results folder beside its machine folder";

impl Reader for Asv {
    fn format(&self) -> Format {
        Format::Asv
    }

    fn detects(&self, doc: &Doc) -> bool {
        registry::bundled(doc, Format::Asv).is_some() || doc.json().is_some_and(is_results)
    }

    fn read(&self, doc: &Doc, origin: &Path, _sidecars: Sidecars<'_>) -> Result<HarnessFile, HarnessError> {
        let (results, benchmarks) = match registry::bundled(doc, Format::Asv) {
            Some(files) => {
                let results = files.iter().find(|(_, d)| is_results(d)).map(|(_, d)| *d);
                let benchmarks = files
                    .iter()
                    .find(|(p, _)| p.ends_with("benchmarks.json"))
                    .map(|(_, d)| *d);
                (
                    results.ok_or_else(|| HarnessError::new(origin, "holds no asv results file", HELP))?,
                    benchmarks,
                )
            }
            None => (
                doc.json()
                    .ok_or_else(|| HarnessError::new(origin, "is not one JSON object", HELP))?,
                None,
            ),
        };
        read_results(results, benchmarks, origin)
    }

    fn live(&self, run: &LiveRun<'_>) -> Live {
        let mut flags = Vec::new();
        if run.app.iter().any(|a| a == "run") && !run.app.iter().any(|a| a == "--record-samples") {
            flags.push("--record-samples".to_owned());
        }
        Live {
            flags,
            env: Vec::new(),
            written: Written::Folder(run.cwd.join(results_dir(run.cwd))),
        }
    }

    fn writes(&self) -> &'static str {
        "`asv run --record-samples` (its results file, with `benchmarks.json`)"
    }

    fn default_metric<'e>(&self, e: &'e Entry) -> Option<&'e str> {
        e.metrics.first().map(|m| m.name.as_str())
    }

    fn direction(&self, metric: &str) -> Option<crate::foundation::threshold::Direction> {
        // asv reports a rise of any benchmark as a regression (`asv compare`), `track_` ones too.
        (metric == VALUE).then_some(crate::foundation::threshold::Direction::Lower)
    }

    fn gather(&self, path: &Path, since: Option<SystemTime>) -> Option<Result<Vec<u8>, HarnessError>> {
        if path.is_dir() {
            let has = path.join("benchmarks.json").is_file();
            return match since {
                Some(t) => Some(newest_results(path, t)),
                None => has.then(|| {
                    Err(HarnessError::new(
                        path,
                        "is an asv results folder, which holds one file per commit and environment",
                        "give the results file of the run to gate (`<machine>/<commit>-<env>.json`)",
                    ))
                }),
            };
        }
        if !head_has(path, b"\"result_columns\"") {
            return None;
        }
        Some(bundle_results(path))
    }

    fn summary_note(&self) -> Option<&'static str> {
        Some(
            "summary only (asv wrote one result per process, no `--record-samples` samples): the processes' results are the samples, so the noise seen is between processes only; the interval asv reports (`stats_ci_99_a`, `_b`) is not used, it is not the spread of a result",
        )
    }

    fn noise(&self, e: &Entry, metric: &str) -> Option<f64> {
        // asv's 99 % interval of the result: its half-width over 2.576 is a standard error.
        let v = e.metric(metric)?.values.first()?;
        let lo = e.metric(&format!("{metric}/ci_99_a"))?.values.first()?;
        let hi = e.metric(&format!("{metric}/ci_99_b"))?.values.first()?;
        Some((hi - lo) / 2.0 / 2.576 / v)
    }
}

const VALUE: &str = "value";

fn is_results(v: &Value) -> bool {
    v.get("result_columns").is_some() && v.get("results").is_some_and(Value::is_object)
}

/// Whether the first 64 KiB of `path` (a regular file) hold `needle`.
fn head_has(path: &Path, needle: &[u8]) -> bool {
    use std::io::Read;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = vec![0u8; 64 << 10];
    let Ok(n) = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)) else {
        return false;
    };
    head[..n].windows(needle.len()).any(|w| w == needle)
}

/// `results_dir` of `asv.conf.json` in `cwd` (asv allows `//` comments there), else `results`.
fn results_dir(cwd: &Path) -> PathBuf {
    let text = crate::foundation::fsutil::read_bounded(&cwd.join("asv.conf.json"), 1 << 20)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let uncommented: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    serde_json::from_str::<Value>(&uncommented)
        .ok()
        .and_then(|c| c.get("results_dir").and_then(Value::as_str).map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("results"))
}

/// The one results file a live run wrote under `dir` (since `since`), bundled.
fn newest_results(dir: &Path, since: SystemTime) -> Result<Vec<u8>, HarnessError> {
    let wanted = |p: &Path| {
        p.extension().is_some_and(|e| e == "json")
            && !p
                .file_name()
                .is_some_and(|n| n == "benchmarks.json" || n == "machine.json")
    };
    let files = registry::files_under(dir, Some(since), &wanted)?;
    match files.as_slice() {
        [one] => bundle_results(one),
        [] => Err(HarnessError::new(
            dir,
            "has no results file asv wrote during the run",
            "check the command runs `asv run` and the `results_dir` of asv.conf.json",
        )),
        many => Err(HarnessError::new(
            dir,
            format!(
                "has {} results files asv wrote during the run; a process is one commit and one environment",
                many.len()
            ),
            "run one commit in one environment per repetition (`asv run HEAD^! --python=same`)",
        )),
    }
}

/// A results file and the `benchmarks.json` of its results folder, as one bundle.
fn bundle_results(path: &Path) -> Result<Vec<u8>, HarnessError> {
    let results = registry::read_json_file(path)?;
    let mut files = vec![(
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        results,
    )];
    let beside = [path.parent().and_then(Path::parent), path.parent()];
    if let Some(b) = beside
        .into_iter()
        .flatten()
        .map(|d| d.join("benchmarks.json"))
        .find(|p| p.is_file())
    {
        files.push(("benchmarks.json".to_owned(), registry::read_json_file(&b)?));
    }
    Ok(registry::bundle(Format::Asv, files))
}

fn read_results(doc: &Value, benchmarks: Option<&Value>, origin: &Path) -> Result<HarnessFile, HarnessError> {
    let version = doc.get("version").and_then(Value::as_i64);
    if version != Some(2) {
        return Err(HarnessError::new(
            origin,
            format!(
                "is asv results version {}, and cgp-gate reads version 2 (asv 0.5 and later)",
                version.map_or("none".to_owned(), |v| v.to_string())
            ),
            "run the benchmarks with a current asv",
        ));
    }
    let columns: Vec<&str> = doc
        .get("result_columns")
        .and_then(Value::as_array)
        .map(|c| c.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let col = Columns(columns);
    let machine = doc
        .pointer("/params/machine")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut notes = Vec::new();
    if benchmarks.is_none() {
        notes.push("no `benchmarks.json` beside the results: units and parameter names from the benchmarks' names (`time_` seconds, `mem_` bytes)".to_owned());
    }
    let results = doc
        .get("results")
        .and_then(Value::as_object)
        .ok_or_else(|| HarnessError::new(origin, "has no `results`", HELP))?;
    let mut entries = Vec::new();
    for (name, row) in results {
        let row = row.as_array().map(Vec::as_slice).unwrap_or_default();
        let def = benchmarks.and_then(|b| b.get(name));
        benchmark(name, row, &col, def, machine.as_ref(), origin, &mut entries)?;
    }
    if let (Some(env), Some(commit)) = (
        doc.get("env_name").and_then(Value::as_str),
        doc.get("commit_hash").and_then(Value::as_str),
    ) {
        notes.push(format!("commit {commit}, environment {env}"));
    }
    Ok(HarnessFile {
        format: Format::Asv,
        devices: machine.into_iter().collect(),
        version: None,
        entries,
        notes,
    })
}

/// The positional columns of a results file (`result_columns`).
struct Columns<'d>(Vec<&'d str>);

impl Columns<'_> {
    /// The column `name` of `row`, when the row has it (rows are cut short) and it is not null.
    fn get(&self, row: &[Value], name: &str) -> Option<Value> {
        let i = self.0.iter().position(|c| *c == name)?;
        row.get(i).filter(|v| !v.is_null()).cloned()
    }
}

/// The entries of one benchmark's row: one per parameter combination.
fn benchmark(
    name: &str,
    row: &[Value],
    col: &Columns<'_>,
    def: Option<&Value>,
    machine: Option<&String>,
    origin: &Path,
    entries: &mut Vec<Entry>,
) -> Result<(), HarnessError> {
    let (metric, unit, scale) = kind(name, def);
    let params: Vec<Vec<String>> = col
        .get(row, "params")
        .and_then(|p| p.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|p| {
            p.as_array()
                .map(|v| {
                    v.iter()
                        .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    let names: Vec<String> = def
        .and_then(|d| d.get("param_names"))
        .and_then(Value::as_array)
        .map(|n| n.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_else(|| (1..=params.len()).map(|i| format!("param{i}")).collect());
    let states = combinations(&names, &params);
    let Some(result) = col.get(row, "result") else {
        for state in states {
            entries.push(entry(
                name,
                state,
                machine.cloned(),
                Status::Error("asv recorded no result: the benchmark failed (`result` is null)".to_owned()),
                Vec::new(),
            ));
        }
        return Ok(());
    };
    let values = result.as_array().cloned().unwrap_or_else(|| vec![result.clone()]);
    if values.len() != states.len() {
        return Err(HarnessError::new(
            origin,
            format!(
                "has {} results for {} parameter combinations: the file is damaged",
                values.len(),
                states.len()
            ),
            HELP,
        )
        .at(name, ""));
    }
    let nth = |column: &str, i: usize| {
        col.get(row, column)
            .and_then(|c| c.as_array().and_then(|a| a.get(i).cloned()))
            .filter(|v| !v.is_null())
    };
    for (i, (state, v)) in states.into_iter().zip(values).enumerate() {
        let (status, metrics) = match &v {
            Value::Null => (
                Status::Error("asv recorded no result for this combination: the benchmark failed".to_owned()),
                Vec::new(),
            ),
            Value::String(s) if s == "NaN" => (
                Status::Skipped("asv wrote NaN: the benchmark skipped this combination".to_owned()),
                Vec::new(),
            ),
            _ => (
                Status::Measured,
                metrics_of(
                    &v,
                    nth("samples", i),
                    [nth("stats_ci_99_a", i), nth("stats_ci_99_b", i)],
                    (metric, &unit, scale),
                    origin,
                    name,
                    &state,
                )?,
            ),
        };
        entries.push(entry(name, state, machine.cloned(), status, metrics));
    }
    Ok(())
}

fn entry(name: &str, state: String, device: Option<String>, status: Status, metrics: Vec<Metric>) -> Entry {
    Entry {
        benchmark: name.to_owned(),
        state,
        device,
        status,
        metrics,
    }
}

/// The metric, unit and scale to cgp-gate's unit of a benchmark, by its type (else its name).
fn kind(name: &str, def: Option<&Value>) -> (&'static str, String, f64) {
    let ty = def.and_then(|d| d.get("type")).and_then(Value::as_str);
    let short = name.rsplit('.').next().unwrap_or(name);
    match ty {
        Some("time" | "timeraw") => ("time", "ns".to_owned(), 1e9),
        Some("memory" | "peakmemory") => ("memory", "byte".to_owned(), 1.0),
        Some(_) => {
            let unit = def
                .and_then(|d| d.get("unit"))
                .and_then(Value::as_str)
                .filter(|u| *u != "unit");
            (VALUE, unit.unwrap_or("").to_owned(), 1.0)
        }
        None if short.starts_with("time") => ("time", "ns".to_owned(), 1e9),
        None if short.starts_with("mem_") || short.starts_with("peakmem_") => {
            ("memory", "byte".to_owned(), 1.0)
        }
        None => (VALUE, String::new(), 1.0),
    }
}

/// `name=value,...` of every combination of `params`, in `itertools.product` order (the last
/// parameter varies fastest); one empty state without parameters.
fn combinations(names: &[String], params: &[Vec<String>]) -> Vec<String> {
    let mut out = vec![Vec::<String>::new()];
    for (i, values) in params.iter().enumerate() {
        let name = names.get(i).cloned().unwrap_or_else(|| format!("param{}", i + 1));
        let mut next = Vec::with_capacity(out.len() * values.len());
        for prefix in &out {
            for v in values {
                let mut parts = prefix.clone();
                parts.push(format!("{name}={v}"));
                next.push(parts);
            }
        }
        out = next;
    }
    out.into_iter().map(|parts| parts.join(",")).collect()
}

fn metrics_of(
    result: &Value,
    samples: Option<Value>,
    ci: [Option<Value>; 2],
    (metric, unit, scale): (&str, &str, f64),
    origin: &Path,
    name: &str,
    state: &str,
) -> Result<Vec<Metric>, HarnessError> {
    let one = |m: String, v: f64| Metric {
        name: m,
        unit: unit.to_owned(),
        values: vec![v],
        per_sample: false,
    };
    let value = positive(result, "the result", origin, name, state)? * scale;
    let mut out = Vec::new();
    match samples
        .as_ref()
        .and_then(Value::as_array)
        .filter(|s| !s.is_empty())
    {
        Some(s) => out.push(Metric {
            name: metric.to_owned(),
            unit: unit.to_owned(),
            values: s
                .iter()
                .map(|x| positive(x, "a sample", origin, name, state).map(|x| x * scale))
                .collect::<Result<_, _>>()?,
            per_sample: true,
        }),
        None => out.push(one(metric.to_owned(), value)),
    }
    for (suffix, bound) in ["ci_99_a", "ci_99_b"].into_iter().zip(ci) {
        // asv's interval bounds: a lower bound may be 0 or below for a noisy result; kept as
        // they are only when they are measurements.
        if let Some(x) = bound
            .and_then(|b| b.as_f64())
            .filter(|x| x.is_normal() && *x > 0.0)
        {
            out.push(one(format!("{metric}/{suffix}"), x * scale));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::testdata::{close, files, read_err, read_ok, shared2};

    /// The shared real results, each with its `benchmarks.json` put back where asv keeps it
    /// (`results/benchmarks.json` beside `results/<machine>/`): every combination's result the
    /// file's, in ns or its own unit; a `null` row an error entry.
    #[test]
    fn both_real_results_read_with_the_files_values() {
        let Some(shared) = shared2("asv") else { return };
        let tmp = tempfile::tempdir().unwrap();
        let mut checked = 0;
        for (prefix, machine) in [("hchau630", "axon-cluster"), ("akihironitta", "codespaces-v100")] {
            let dir = tmp.path().join(prefix).join("results");
            std::fs::create_dir_all(dir.join(machine)).unwrap();
            let mine = files(&shared, prefix);
            let bench = mine
                .iter()
                .find(|p| p.to_string_lossy().ends_with("benchmarks.json"))
                .unwrap();
            let res = mine
                .iter()
                .find(|p| !p.to_string_lossy().ends_with("benchmarks.json"))
                .unwrap();
            std::fs::copy(bench, dir.join("benchmarks.json")).unwrap();
            let path = dir.join(machine).join("r.json");
            std::fs::copy(res, &path).unwrap();
            let f = read_ok(&READER.gather(&path, None).unwrap().unwrap(), &path);
            assert_eq!(f.format, Format::Asv);
            assert_eq!(f.devices, [machine]);
            let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            let defs: Value = serde_json::from_slice(&std::fs::read(bench).unwrap()).unwrap();
            for (name, row) in doc["results"].as_object().unwrap() {
                let mine: Vec<&Entry> = f.entries.iter().filter(|e| e.benchmark == *name).collect();
                let Some(values) = row[0].as_array() else {
                    assert!(
                        mine.iter().all(|e| matches!(e.status, Status::Error(_))),
                        "{name}"
                    );
                    continue;
                };
                assert_eq!(mine.len(), values.len(), "{name}");
                let time = defs[name]["unit"] == "seconds";
                for (e, v) in mine.iter().zip(values) {
                    let m = e.metrics.first().unwrap();
                    let want = v.as_f64().unwrap() * if time { 1e9 } else { 1.0 };
                    assert!(!m.per_sample && close(m.values[0], want), "{name} {}", e.state);
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 24 + 24 + 48 + 48 + 1 + 2);
    }

    fn results(row: &str) -> String {
        format!(
            r#"{{"version": 2, "commit_hash": "abc", "env_name": "e", "params": {{"machine": "m"}}, "result_columns": ["result", "params", "version", "started_at", "duration", "stats_ci_99_a", "stats_ci_99_b", "stats_q_25", "stats_q_75", "stats_number", "stats_repeat", "samples", "profile"], "results": {{"b.time_x": {row}}}}}"#
        )
    }

    #[test]
    fn samples_parameters_skips_and_damage() {
        let p = Path::new("r.json");
        let f = read_ok(results(r#"[[1.0, NaN, null], [["1", "2", "3"]], "v", 0, 1.0, [0.9, null, null], [1.1, null, null], null, null, null, null, [[1.0, 1.1, 0.9], null, null]]"#).as_bytes(), p);
        let keys: Vec<String> = f.entries.iter().map(Entry::key).collect();
        assert_eq!(
            keys,
            [
                "b.time_x [param1=1]",
                "b.time_x [param1=2]",
                "b.time_x [param1=3]"
            ]
        );
        let m = f.entries[0].metric("time").unwrap();
        assert!(
            m.per_sample
                && m.values
                    .iter()
                    .zip([1e9, 1.1e9, 0.9e9])
                    .all(|(a, b)| close(*a, b))
        );
        assert!(close(
            f.entries[0].metric("time/ci_99_a").unwrap().values[0],
            0.9e9
        ));
        assert!(matches!(f.entries[1].status, Status::Skipped(_)));
        assert!(matches!(f.entries[2].status, Status::Error(_)));
        assert_eq!(
            combinations(
                &["a".into(), "b".into()],
                &[vec!["1".into(), "2".into()], vec!["x".into(), "y".into()]]
            ),
            ["a=1,b=x", "a=1,b=y", "a=2,b=x", "a=2,b=y"]
        );
        let e = read_err(results(r#"[[0.0], [], "v", 0, 1.0]"#).as_bytes(), p);
        assert!(
            e.starts_with("r.json, benchmark `b.time_x`: the result is 0"),
            "{e}"
        );
        let e = read_err(results(r#"[[1.0, 2.0], [["1"]], "v", 0, 1.0]"#).as_bytes(), p);
        assert!(e.contains("2 results for 1 parameter combinations"), "{e}");
        let e = read_err(
            results("[[1.0]]")
                .replace("\"version\": 2", "\"version\": 1")
                .as_bytes(),
            p,
        );
        assert!(e.contains("version 1"), "{e}");
    }
}
