//! Criterion.rs (SCHEMAS.md, 3): the folders `target/criterion/<benchmark>/new/` a run writes
//! (`benchmark.json`, `sample.json`, `estimates.json`; 0.3 to 0.5, and 0.2's layout: `sample.json`
//! a pair of lists, `estimates.json` with capitalised keys), gathered into one capture (a bundle,
//! `registry`); and cargo-criterion's `--message-format=json` lines (`benchmark-complete`).
//!
//! An entry per benchmark: its `group_id` (the first part of its id), the rest of its id
//! (`function_id/value_str`) as the state. Metrics: `time`, each sample's time per iteration
//! (`times[i] / iters[i]`, ns: Criterion's own samples, 100 by default, one process's); the
//! estimates' point values, `time/mean`, `time/median`, `time/slope` (ns per iteration, one value
//! per process); with a throughput, `bytes_per_second` or `elements_per_second` per sample.
//! A live run sets `CRITERION_HOME` to a fresh folder and reads the `new/` folders written there,
//! or, when the command is cargo-criterion's (`cargo criterion --message-format=json`), its
//! standard output. Criterion records no device and no version.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

use serde_json::Value;

use super::registry::{self, Doc, Live, LiveRun, Reader, Written, positive, positive_number};
use super::{Entry, Format, HarnessError, HarnessFile, Metric, Sidecars, Status};

pub struct Criterion;
pub static READER: Criterion = Criterion;

/// The per-sample time per iteration.
pub const TIME: &str = "time";
const HELP: &str = "give the `target/criterion` folder (or a benchmark's `new/` file) as Criterion wrote it, or cargo-criterion's `--message-format=json` output";
const FILES: [&str; 3] = ["benchmark.json", "sample.json", "estimates.json"];

impl Reader for Criterion {
    fn format(&self) -> Format {
        Format::Criterion
    }

    fn detects(&self, doc: &Doc) -> bool {
        registry::bundled(doc, Format::Criterion).is_some()
            || doc
                .objects()
                .iter()
                .any(|o| o.get("reason").and_then(Value::as_str) == Some("benchmark-complete"))
    }

    fn read(&self, doc: &Doc, origin: &Path, _sidecars: Sidecars<'_>) -> Result<HarnessFile, HarnessError> {
        let mut notes = Vec::new();
        let entries = match registry::bundled(doc, Format::Criterion) {
            Some(files) => folders(&files, origin, &mut notes)?,
            None => messages(doc.objects(), origin)?,
        };
        if entries.is_empty() {
            return Err(HarnessError::new(origin, "holds no benchmark", HELP));
        }
        Ok(HarnessFile {
            format: Format::Criterion,
            devices: Vec::new(),
            version: None,
            entries,
            notes,
        })
    }

    fn live(&self, run: &LiveRun<'_>) -> Live {
        let home = run.out.with_extension("criterion");
        Live {
            flags: Vec::new(),
            env: vec![("CRITERION_HOME".to_owned(), home.display().to_string())],
            written: Written::Folder(home),
        }
    }

    fn writes(&self) -> &'static str {
        "`cargo bench` (the `target/criterion` folder), or `cargo criterion --message-format=json`"
    }

    fn default_metric<'e>(&self, e: &'e Entry) -> Option<&'e str> {
        e.metric(TIME).map(|m| m.name.as_str())
    }

    fn gather(&self, path: &Path, since: Option<SystemTime>) -> Option<Result<Vec<u8>, HarnessError>> {
        let name = path.file_name()?.to_string_lossy();
        if path.is_file() {
            // One file of a benchmark's `new/` folder: the folder's three files.
            let new = path
                .parent()
                .filter(|d| d.file_name().is_some_and(|n| n == "new"))?;
            if !FILES.contains(&name.as_ref()) {
                return None;
            }
            let base = new.parent()?.parent()?;
            let files = FILES
                .iter()
                .map(|f| new.join(f))
                .filter(|p| p.is_file())
                .collect();
            return Some(bundle_of(base, files));
        }
        if !path.is_dir() {
            return None;
        }
        let wanted = |p: &Path| {
            p.parent().and_then(Path::file_name).is_some_and(|n| n == "new")
                && p.file_name().is_some_and(|n| FILES.iter().any(|f| n == *f))
        };
        match registry::files_under(path, since, &wanted) {
            Ok(files) if files.is_empty() => None,
            Ok(files) => Some(bundle_of(path, files)),
            Err(e) => Some(Err(e)),
        }
    }
}

fn bundle_of(base: &Path, files: Vec<std::path::PathBuf>) -> Result<Vec<u8>, HarnessError> {
    let mut docs = Vec::with_capacity(files.len());
    let mut total = 0u64;
    for f in files {
        total += std::fs::metadata(&f).map_or(0, |m| m.len());
        if total > super::MAX_FILE_BYTES {
            return Err(HarnessError::new(
                base,
                format!(
                    "holds more than {} MiB of Criterion files",
                    super::MAX_FILE_BYTES >> 20
                ),
                "give the folder of one run",
            ));
        }
        docs.push((registry::relative(base, &f), registry::read_json_file(&f)?));
    }
    Ok(registry::bundle(Format::Criterion, docs))
}

/// The benchmarks of a bundle of `new/` folders.
fn folders(
    files: &[(&str, &Value)],
    origin: &Path,
    notes: &mut Vec<String>,
) -> Result<Vec<Entry>, HarnessError> {
    let mut by_dir: BTreeMap<&str, BTreeMap<&str, &Value>> = BTreeMap::new();
    for (path, doc) in files {
        let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
        by_dir.entry(dir).or_default().insert(file, doc);
    }
    let mut entries = Vec::new();
    let mut old = false;
    for (dir, files) in &by_dir {
        let folder = dir.strip_suffix("/new").unwrap_or(dir);
        let Some(sample) = files.get("sample.json") else {
            notes.push(format!("{folder}: no `new/sample.json`, not read"));
            continue;
        };
        let bench = files.get("benchmark.json");
        let id = bench
            .and_then(|b| b.get("full_id"))
            .and_then(Value::as_str)
            .unwrap_or(folder);
        let group = bench.and_then(|b| b.get("group_id")).and_then(Value::as_str);
        let (benchmark, state) = split_id(id, group);
        let (iters, times, layout_02) = sample_lists(sample).ok_or_else(|| {
            HarnessError::new(
                origin,
                format!("`{dir}/sample.json` has no `iters` and `times` lists"),
                HELP,
            )
            .at(&benchmark, &state)
        })?;
        old |= layout_02;
        let per_iter = per_iteration(
            iters,
            times,
            &format!("`{dir}/sample.json`"),
            origin,
            &benchmark,
            &state,
        )?;
        let mut metrics = vec![Metric {
            name: TIME.to_owned(),
            unit: "ns".to_owned(),
            values: per_iter.clone(),
            per_sample: true,
        }];
        if let Some(est) = files.get("estimates.json") {
            for (name, keys) in [
                ("time/mean", ["mean", "Mean"]),
                ("time/median", ["median", "Median"]),
                ("time/slope", ["slope", "Slope"]),
            ] {
                let Some(point) = keys
                    .iter()
                    .find_map(|k| est.get(*k))
                    .and_then(|e| e.get("point_estimate"))
                else {
                    continue;
                };
                metrics.push(one(
                    name,
                    positive(
                        point,
                        &format!("`{dir}/estimates.json` {name}"),
                        origin,
                        &benchmark,
                        &state,
                    )?,
                ));
            }
        }
        if let Some(t) = bench.and_then(|b| b.get("throughput")).filter(|t| !t.is_null()) {
            metrics.extend(throughput(t, &per_iter));
        }
        entries.push(Entry {
            benchmark,
            state,
            device: None,
            status: Status::Measured,
            metrics,
        });
    }
    if old {
        notes
            .push("Criterion 0.2's layout (`sample.json` a pair of lists, capitalised estimates)".to_owned());
    }
    Ok(entries)
}

/// `group` and the rest of `id` (`group/function/value`): the benchmark and its state.
fn split_id(id: &str, group: Option<&str>) -> (String, String) {
    if let Some(g) = group
        && let Some(rest) = id.strip_prefix(g)
    {
        return (g.to_owned(), rest.trim_start_matches('/').to_owned());
    }
    match id.split_once('/') {
        Some((b, s)) => (b.to_owned(), s.to_owned()),
        None => (id.to_owned(), String::new()),
    }
}

/// `iters` and `times` of a `sample.json` (0.3+: an object; 0.2: a pair of lists), and whether
/// it is 0.2's.
fn sample_lists(v: &Value) -> Option<(&Vec<Value>, &Vec<Value>, bool)> {
    if let Some(pair) = v.as_array() {
        return Some((pair.first()?.as_array()?, pair.get(1)?.as_array()?, true));
    }
    Some((v.get("iters")?.as_array()?, v.get("times")?.as_array()?, false))
}

/// Each sample's time per iteration (`times[i] / iters[i]`), checked.
fn per_iteration(
    iters: &[Value],
    times: &[Value],
    what: &str,
    origin: &Path,
    benchmark: &str,
    state: &str,
) -> Result<Vec<f64>, HarnessError> {
    if iters.len() != times.len() || iters.is_empty() {
        return Err(HarnessError::new(
            origin,
            format!(
                "{what} has {} iteration counts and {} times: the file is damaged",
                iters.len(),
                times.len()
            ),
            HELP,
        )
        .at(benchmark, state));
    }
    iters
        .iter()
        .zip(times)
        .map(|(n, t)| {
            let n = positive(
                n,
                &format!("an iteration count of {what}"),
                origin,
                benchmark,
                state,
            )?;
            let t = positive(t, &format!("a time of {what}"), origin, benchmark, state)?;
            positive_number(
                t / n,
                &format!("a time per iteration of {what}"),
                origin,
                benchmark,
                state,
            )
        })
        .collect()
}

fn one(name: &str, value: f64) -> Metric {
    Metric {
        name: name.to_owned(),
        unit: "ns".to_owned(),
        values: vec![value],
        per_sample: false,
    }
}

/// `bytes_per_second` or `elements_per_second` of each sample, from a throughput per iteration.
fn throughput(t: &Value, per_iter_ns: &[f64]) -> Option<Metric> {
    let (kind, n) = t.as_object()?.iter().next()?;
    let n = n.as_f64().filter(|n| *n > 0.0)?;
    let (name, unit) = if kind.starts_with("Bytes") {
        ("bytes_per_second", "byte/second")
    } else {
        ("elements_per_second", "1/second")
    };
    Some(Metric {
        name: name.to_owned(),
        unit: unit.to_owned(),
        values: per_iter_ns.iter().map(|ns| n / (ns * 1e-9)).collect(),
        per_sample: true,
    })
}

/// cargo-criterion's `benchmark-complete` messages.
fn messages(lines: &[Value], origin: &Path) -> Result<Vec<Entry>, HarnessError> {
    let mut entries = Vec::new();
    for m in lines
        .iter()
        .filter(|o| o.get("reason").and_then(Value::as_str) == Some("benchmark-complete"))
    {
        let id = m
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| HarnessError::new(origin, "a `benchmark-complete` message has no `id`", HELP))?;
        let (benchmark, state) = split_id(id, None);
        let unit = m.get("unit").and_then(Value::as_str).unwrap_or("ns");
        let Some(scale) = super::ns_per(unit) else {
            return Err(HarnessError::new(
                origin,
                format!("has `unit: {unit}`, not a time: cgp-gate reads Criterion's wall-clock times"),
                HELP,
            )
            .at(&benchmark, &state));
        };
        let list = |k: &str| {
            m.get(k)
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default()
        };
        let per_iter = per_iteration(
            list("iteration_count"),
            list("measured_values"),
            "`measured_values`",
            origin,
            &benchmark,
            &state,
        )?;
        let per_iter: Vec<f64> = per_iter.iter().map(|v| v * scale).collect();
        let mut metrics = vec![Metric {
            name: TIME.to_owned(),
            unit: "ns".to_owned(),
            values: per_iter.clone(),
            per_sample: true,
        }];
        for (name, key) in [
            ("time/mean", "mean"),
            ("time/median", "median"),
            ("time/slope", "slope"),
        ] {
            if let Some(est) = m.get(key).and_then(|e| e.get("estimate")) {
                let est_unit = m
                    .pointer(&format!("/{key}/unit"))
                    .and_then(Value::as_str)
                    .unwrap_or(unit);
                let s = super::ns_per(est_unit).unwrap_or(scale);
                metrics.push(one(
                    name,
                    positive(est, &format!("`{key}.estimate`"), origin, &benchmark, &state)? * s,
                ));
            }
        }
        if let Some(t) = m
            .get("throughput")
            .and_then(Value::as_array)
            .and_then(|t| t.first())
        {
            let kind = if t
                .get("unit")
                .and_then(Value::as_str)
                .is_some_and(|u| u.starts_with("byte"))
            {
                "Bytes"
            } else {
                "Elements"
            };
            if let Some(n) = t.get("per_iteration") {
                metrics.extend(throughput(&serde_json::json!({ kind: n }), &per_iter));
            }
        }
        entries.push(Entry {
            benchmark,
            state,
            device: None,
            status: Status::Measured,
            metrics,
        });
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::testdata::{close, files, read_err, read_ok, shared2};

    /// Both real layouts (0.3.5's and 0.2's), put back in the folders they came from
    /// (PROVENANCE.md): every sample's time per iteration is the file's `times[i] / iters[i]`,
    /// every estimate the file's point estimate; one file of a folder gathers its siblings.
    #[test]
    fn both_real_layouts_read_with_the_files_values() {
        let Some(shared) = shared2("criterion") else {
            return;
        };
        let tmp = tempfile::tempdir().unwrap();
        for (prefix, dir, id) in [
            (
                "andreesteve",
                "Build Voronoi Cells/voronator/1000",
                "Build Voronoi Cells/voronator/1000",
            ),
            (
                "laysakura",
                "[f147c67] Trie__exact_match() 100 times",
                "[f147c67] Trie::exact_match() 100 times",
            ),
        ] {
            let root = tmp.path().join(prefix).join("target/criterion");
            let new = root.join(dir).join("new");
            std::fs::create_dir_all(&new).unwrap();
            for f in FILES {
                let src = files(&shared, prefix)
                    .into_iter()
                    .find(|p| p.to_string_lossy().ends_with(&format!("__new__{f}")))
                    .unwrap();
                std::fs::copy(src, new.join(f)).unwrap();
            }
            let bytes = READER.gather(&root, None).unwrap().unwrap();
            let f = read_ok(&bytes, &root);
            assert_eq!(f.format, Format::Criterion);
            let e = &f.entries[0];
            assert_eq!(
                if e.state.is_empty() {
                    e.benchmark.clone()
                } else {
                    format!("{}/{}", e.benchmark, e.state)
                },
                id
            );
            let sample: Value =
                serde_json::from_slice(&std::fs::read(new.join("sample.json")).unwrap()).unwrap();
            let (iters, times, _) = sample_lists(&sample).unwrap();
            let got = &e.metric(TIME).unwrap().values;
            assert_eq!(got.len(), iters.len());
            for ((g, n), t) in got.iter().zip(iters).zip(times) {
                assert!(close(*g, t.as_f64().unwrap() / n.as_f64().unwrap()));
            }
            let est: Value =
                serde_json::from_slice(&std::fs::read(new.join("estimates.json")).unwrap()).unwrap();
            for (name, keys) in [
                ("time/mean", ["mean", "Mean"]),
                ("time/median", ["median", "Median"]),
                ("time/slope", ["slope", "Slope"]),
            ] {
                let point = keys.iter().find_map(|k| est.get(*k)).unwrap()["point_estimate"]
                    .as_f64()
                    .unwrap();
                assert!(close(e.metric(name).unwrap().values[0], point), "{name}");
            }
            let one = READER.gather(&new.join("estimates.json"), None).unwrap().unwrap();
            assert_eq!(read_ok(&one, &root).entries, f.entries);
        }
    }

    /// A real cargo-criterion 1.1.0 stream (tests/fixtures/harness2/PROVENANCE.md: written here,
    /// of a SYNTHETIC workload): each sample's time per iteration is `measured_values[i] /
    /// iteration_count[i]`, the estimates the stream's; the `group-complete` line and the empty
    /// `throughput` add nothing.
    #[test]
    fn a_real_cargo_criterion_stream_reads_with_its_values() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/harness2");
        for name in [
            "cargo-criterion-1.1.0-work.json",
            "cargo-criterion-1.1.0-work-slow.json",
        ] {
            let p = dir.join(name);
            let bytes = std::fs::read(&p).unwrap();
            let f = read_ok(&bytes, &p);
            assert_eq!(f.entries.len(), 1);
            let e = &f.entries[0];
            assert_eq!(e.key(), "work [20000]");
            let msg: Value =
                serde_json::from_str(std::str::from_utf8(&bytes).unwrap().lines().next().unwrap()).unwrap();
            let (n, t) = (
                msg["iteration_count"].as_array().unwrap(),
                msg["measured_values"].as_array().unwrap(),
            );
            let got = &e.metric(TIME).unwrap().values;
            assert_eq!(got.len(), 50);
            for ((g, n), t) in got.iter().zip(n).zip(t) {
                assert!(close(*g, t.as_f64().unwrap() / n.as_f64().unwrap()));
            }
            assert!(close(
                e.metric("time/mean").unwrap().values[0],
                msg["mean"]["estimate"].as_f64().unwrap()
            ));
            assert!(e.metric("bytes_per_second").is_none());
        }
    }

    /// cargo-criterion's messages (SYNTHETIC, from its documented schema).
    #[test]
    fn cargo_criterion_messages_and_damage() {
        let p = Path::new("cc.json");
        let msg = |values: &str| {
            format!(
                r#"{{"reason":"benchmark-complete","id":"fib/20","report_directory":"target/criterion/reports/fib/20","iteration_count":[10,20,30],"measured_values":{values},"unit":"ns","throughput":[{{"per_iteration":64,"unit":"bytes"}}],"typical":{{"estimate":100.0,"lower_bound":99.0,"upper_bound":101.0,"unit":"ns"}},"mean":{{"estimate":100.5,"lower_bound":99.0,"upper_bound":101.0,"unit":"ns"}},"median":{{"estimate":100.0,"lower_bound":99.0,"upper_bound":101.0,"unit":"ns"}},"median_abs_dev":{{"estimate":1.0,"lower_bound":0.5,"upper_bound":1.5,"unit":"ns"}},"slope":null,"change":null}}"#
            )
        };
        let text = format!(
            "{}\n{{\"reason\":\"group-complete\",\"group_name\":\"fib\",\"benchmarks\":[\"fib/20\"],\"report_directory\":\"x\"}}\n",
            msg("[1000.0, 2010.0, 2970.0]")
        );
        let f = read_ok(text.as_bytes(), p);
        let e = &f.entries[0];
        assert_eq!(e.key(), "fib [20]");
        assert_eq!(e.metric(TIME).unwrap().values, vec![100.0, 100.5, 99.0]);
        assert!(close(e.metric("time/mean").unwrap().values[0], 100.5));
        assert!(close(
            e.metric("bytes_per_second").unwrap().values[0],
            64.0 / 100e-9
        ));
        let e = read_err(msg("[1000.0, 0.0, 2970.0]").as_bytes(), p);
        assert!(
            e.starts_with("cc.json, benchmark `fib`, state `20`: a time of `measured_values` is 0"),
            "{e}"
        );
        let e = read_err(msg("[1000.0, 2970.0]").as_bytes(), p);
        assert!(e.contains("3 iteration counts and 2 times"), "{e}");
    }
}
