//! hyperfine's `--export-json PATH` (SCHEMAS.md, 2): `{"results": [...]}`, one entry per
//! command benchmarked.
//!
//! An entry per command (`command`, or the name `-n` gave it), its `parameters` (`-P`/`-L` scans)
//! as the state (`threads=4,size=1M`). Metrics: `time`, every run's wall time of `times` (s, here
//! ns: the samples; a file without `times` gives `mean`, one value per process); `user_time` and
//! `system_time`, the mean CPU times hyperfine reports (one value per process; a mean of 0, as a
//! `sleep` has, is no measurement and is left out with a note); `memory_usage_byte`, every run's
//! peak memory (hyperfine 1.20 on). A run that exited non-zero or was killed (`exit_codes`, from
//! hyperfine 1.12) makes its entry an error: hyperfine with `--ignore-failure` timed a failing
//! command. A file without `exit_codes` (before 1.12) is read, and a note says the statuses are
//! unknown. hyperfine records no device and no version.

use std::path::Path;

use serde_json::Value;

use super::registry::{Doc, Live, LiveRun, Reader, positive, scaled};
use super::{Entry, Format, HarnessError, HarnessFile, Metric, Sidecars, Status};

pub struct Hyperfine;
pub static READER: Hyperfine = Hyperfine;

const HELP: &str = "use the file hyperfine wrote with `--export-json PATH`, unedited";

impl Reader for Hyperfine {
    fn format(&self) -> Format {
        Format::Hyperfine
    }

    fn detects(&self, doc: &Doc) -> bool {
        // Every result a command with its times (an empty list too: hyperfine's, which says so).
        let results = doc
            .json()
            .and_then(|v| v.get("results"))
            .and_then(Value::as_array);
        results.is_some_and(|r| {
            r.iter()
                .all(|r| r.get("command").is_some() && (r.get("times").is_some() || r.get("mean").is_some()))
        })
    }

    fn read(&self, doc: &Doc, origin: &Path, _sidecars: Sidecars<'_>) -> Result<HarnessFile, HarnessError> {
        let list = doc
            .json()
            .and_then(|v| v.get("results"))
            .and_then(Value::as_array)
            .ok_or_else(|| HarnessError::new(origin, "has no `results` list", HELP))?;
        if list.is_empty() {
            return Err(HarnessError::new(
                origin,
                "has an empty `results` list: hyperfine ran no command",
                HELP,
            ));
        }
        let mut entries = Vec::with_capacity(list.len());
        let mut notes = Vec::new();
        for r in list {
            entries.push(entry(r, origin, &mut notes)?);
        }
        Ok(HarnessFile {
            format: Format::Hyperfine,
            devices: Vec::new(),
            version: None,
            entries,
            notes,
        })
    }

    fn live(&self, run: &LiveRun<'_>) -> Live {
        Live::flags(vec!["--export-json".to_owned(), run.out.display().to_string()])
    }

    fn writes(&self) -> &'static str {
        "`hyperfine --export-json PATH`"
    }

    fn default_metric<'e>(&self, e: &'e Entry) -> Option<&'e str> {
        e.metric(TIME).map(|m| m.name.as_str())
    }
}

/// Every run's wall time.
pub const TIME: &str = "time";

fn entry(r: &Value, origin: &Path, notes: &mut Vec<String>) -> Result<Entry, HarnessError> {
    let command = r
        .get("command")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .ok_or_else(|| HarnessError::new(origin, "an entry of `results` has no `command`", HELP))?;
    let state = r
        .get("parameters")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    let at = |what: &str, v: &Value| scaled(v, 1e9, what, origin, command, &state);
    let mut metrics = Vec::new();
    let times = match r.get("times").and_then(Value::as_array) {
        Some(t) if !t.is_empty() => Metric {
            name: TIME.to_owned(),
            unit: "ns".to_owned(),
            values: t
                .iter()
                .map(|v| at("a run of `times`", v))
                .collect::<Result<_, _>>()?,
            per_sample: true,
        },
        _ => {
            let mean = r.get("mean").ok_or_else(|| {
                HarnessError::new(origin, "has neither `times` nor `mean`", HELP).at(command, &state)
            })?;
            notes.push(format!(
                "{command}: no `times`; the mean is one value per process"
            ));
            Metric {
                name: TIME.to_owned(),
                unit: "ns".to_owned(),
                values: vec![at("`mean`", mean)?],
                per_sample: false,
            }
        }
    };
    let runs = times.values.len();
    metrics.push(times);
    for (key, name) in [("user", "user_time"), ("system", "system_time")] {
        match r.get(key) {
            Some(v) if v.as_f64() == Some(0.0) => {
                notes.push(format!(
                    "{command}: `{key}` is 0 (a mean below the clock's tick), left out"
                ));
            }
            Some(v) => metrics.push(Metric {
                name: name.to_owned(),
                unit: "ns".to_owned(),
                values: vec![at(&format!("`{key}`"), v)?],
                per_sample: false,
            }),
            None => {}
        }
    }
    if let Some(mem) = r.get("memory_usage_byte").and_then(Value::as_array) {
        let values: Vec<f64> = mem
            .iter()
            .map(|v| positive(v, "a run of `memory_usage_byte`", origin, command, &state))
            .collect::<Result<_, _>>()?;
        same_count(values.len(), runs, "memory_usage_byte", origin, command, &state)?;
        metrics.push(Metric {
            name: "memory_usage_byte".to_owned(),
            unit: "byte".to_owned(),
            values,
            per_sample: true,
        });
    }
    let status = match r.get("exit_codes").and_then(Value::as_array) {
        Some(codes) => {
            same_count(codes.len(), runs, "exit_codes", origin, command, &state)?;
            exit_status(codes)
        }
        None => {
            notes.push(format!(
                "{command}: no `exit_codes` (hyperfine before 1.12): whether every run succeeded is unknown"
            ));
            Status::Measured
        }
    };
    Ok(Entry {
        benchmark: command.to_owned(),
        state,
        device: None,
        status,
        metrics,
    })
}

/// The entry's status from its runs' exit codes: an error when any run exited non-zero or was
/// killed (`null`).
fn exit_status(codes: &[Value]) -> Status {
    let failed: Vec<String> = codes
        .iter()
        .filter(|c| c.as_i64() != Some(0))
        .map(|c| match c.as_i64() {
            Some(code) => format!("exit status {code}"),
            None => "killed by a signal".to_owned(),
        })
        .collect();
    if failed.is_empty() {
        return Status::Measured;
    }
    let mut kinds = failed.clone();
    kinds.dedup();
    Status::Error(format!(
        "{} of {} runs failed ({}): hyperfine timed a failing command (run with `--ignore-failure`?); fix the command, its times are not the code's",
        failed.len(),
        codes.len(),
        kinds.join(", ")
    ))
}

fn same_count(
    n: usize,
    runs: usize,
    field: &str,
    origin: &Path,
    command: &str,
    state: &str,
) -> Result<(), HarnessError> {
    if runs > 1 && n != runs {
        return Err(HarnessError::new(
            origin,
            format!("`{field}` has {n} entries and `times` {runs}: the file is damaged"),
            HELP,
        )
        .at(command, state));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::testdata::{close, files, read_err, read_ok, shared2};

    /// Every command of every shared real file: its runs' times, its CPU times and its status as
    /// the file says, in ns.
    #[test]
    fn every_real_file_reads_with_the_files_values() {
        let Some(dir) = shared2("hyperfine") else { return };
        let mut commands = 0;
        for p in files(&dir, ".json") {
            let bytes = std::fs::read(&p).unwrap();
            let f = read_ok(&bytes, &p);
            assert_eq!(f.format, Format::Hyperfine);
            let doc: Value = serde_json::from_slice(&bytes).unwrap();
            let results = doc["results"].as_array().unwrap();
            assert_eq!(f.entries.len(), results.len());
            for (e, r) in f.entries.iter().zip(results) {
                commands += 1;
                assert_eq!(e.benchmark, r["command"].as_str().unwrap());
                assert_eq!(e.status, Status::Measured);
                let times: Vec<f64> = r["times"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t.as_f64().unwrap() * 1e9)
                    .collect();
                let got = e.metric(TIME).unwrap();
                assert!(got.per_sample);
                assert_eq!(got.values.len(), times.len());
                assert!(got.values.iter().zip(&times).all(|(a, b)| close(*a, *b)));
                let user = e.metric("user_time").unwrap().values[0];
                assert!(close(user, r["user"].as_f64().unwrap() * 1e9));
                let system = e.metric("system_time").unwrap().values[0];
                assert!(close(system, r["system"].as_f64().unwrap() * 1e9));
            }
        }
        assert_eq!(commands, 4);
    }

    fn file(result: &str) -> Vec<u8> {
        format!(r#"{{"results": [{result}]}}"#).into_bytes()
    }

    #[test]
    fn failed_runs_parameters_and_old_files() {
        let p = Path::new("h.json");
        let f = read_ok(
            &file(
                r#"{"command": "./a 1", "mean": 1.0, "user": 0.5, "system": 0.0, "times": [1.0, 1.1, 0.9], "exit_codes": [0, 2, null], "parameters": {"n": "1", "mode": "x"}}"#,
            ),
            p,
        );
        let e = &f.entries[0];
        assert_eq!(e.key(), "./a 1 [n=1,mode=x]");
        assert!(
            matches!(&e.status, Status::Error(m) if m.starts_with("2 of 3 runs failed (exit status 2, killed by a signal)")),
            "{:?}",
            e.status
        );
        assert!(e.metric("system_time").is_none());
        assert!(f.notes.iter().any(|n| n.contains("`system` is 0")));
        let old = read_ok(
            &file(r#"{"command": "a", "mean": 1.0, "stddev": 0.1, "times": [1.0, 1.1]}"#),
            p,
        );
        assert_eq!(old.entries[0].status, Status::Measured);
        assert!(old.notes.iter().any(|n| n.contains("before 1.12")));
        let summary = read_ok(&file(r#"{"command": "a", "mean": 2.0, "stddev": null}"#), p);
        let m = summary.entries[0].metric(TIME).unwrap();
        assert!(!m.per_sample && close(m.values[0], 2e9));
    }

    #[test]
    fn damaged_values_name_file_command_and_field() {
        let p = Path::new("h.json");
        for (times, shown) in [
            ("[1.0, 0.0]", "is 0"),
            ("[1.0, -1.0]", "is -1"),
            ("[1.0, NaN]", "is `NaN`"),
            ("[1.0, Infinity]", "is `Infinity`"),
        ] {
            let e = read_err(
                &file(&format!(
                    r#"{{"command": "sleep 1", "mean": 1.0, "times": {times}}}"#
                )),
                p,
            );
            assert!(
                e.starts_with(&format!("h.json, benchmark `sleep 1`: a run of `times` {shown}")),
                "{e}"
            );
        }
        let e = read_err(
            &file(r#"{"command": "a", "mean": 1.0, "times": [1.0, 1.0], "exit_codes": [0]}"#),
            p,
        );
        assert!(e.contains("`exit_codes` has 1 entries and `times` 2"), "{e}");
        let e = read_err(b"{\"results\": []}", p);
        assert!(e.contains("empty `results`"), "{e}");
        let e = read_err(
            &file(r#"{"command": "a", "mean": 1.0}, {"command": "a", "mean": 1.0}"#),
            p,
        );
        assert!(e.contains("benchmark `a`: appears twice"), "{e}");
    }
}
