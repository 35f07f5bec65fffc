//! `history --import-github-action-benchmark`: github-action-benchmark's `data.js`
//! (`window.BENCHMARK_DATA = {...}`) as results, one per benchmarked commit, so a team that moves
//! over keeps its past in the same series as the results files that follow it.
//!
//! Each benchmark becomes a row: target = the suite (`entries` key), size `-`, kernel = the
//! benchmark's name, metric `value`, its unit as given, lower is better unless the tool is
//! `customBiggerIsBetter`. The value is the candidate's median (one number, no interval: the
//! tool keeps none; its `range` is a spread string, not an interval, and is not drawn). The row is
//! `new` (no baseline): nothing here was decided by cgp-gate.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::outcome::results::{
    Direction, Kernel, Outcome, OwnedRowKey, Results, Row, RowRule, SideSummary, Sides,
};

/// What github-action-benchmark's file holds (the fields read; others are ignored).
#[derive(Debug, Deserialize)]
struct Data {
    #[serde(rename = "repoUrl", default)]
    repo_url: Option<String>,
    entries: BTreeMap<String, Vec<Entry>>,
}

#[derive(Debug, Deserialize)]
struct Entry {
    commit: Commit,
    /// When the benchmark ran, milliseconds since 1970.
    date: i64,
    #[serde(default)]
    tool: String,
    benches: Vec<Bench>,
}

#[derive(Debug, Deserialize)]
struct Commit {
    id: String,
}

#[derive(Debug, Deserialize)]
struct Bench {
    name: String,
    value: f64,
    #[serde(default)]
    unit: String,
}

/// The imported history: the repository's URL (when the file names it) and one results per
/// commit, in the order the benchmarks ran.
#[derive(Debug, Clone)]
pub struct Imported {
    pub repo_url: Option<String>,
    pub results: Vec<Results>,
}

/// The text github-action-benchmark writes before the JSON object.
const PREFIX: &str = "window.BENCHMARK_DATA";

/// Read github-action-benchmark's `data.js` (or the bare JSON object).
///
/// # Errors
/// A message for [`crate::Error::Input`] saying what is wrong and what the file should be.
pub fn github_action_benchmark(text: &str) -> Result<Imported, String> {
    let t = text.trim_start_matches('\u{feff}').trim();
    let json = match t.strip_prefix(PREFIX) {
        Some(rest) => rest
            .trim_start()
            .strip_prefix('=')
            .ok_or_else(|| format!("`{PREFIX}` is not followed by `=`"))?
            .trim()
            .trim_end_matches(';'),
        None if t.starts_with('{') => t,
        None => {
            return Err(format!(
                "does not start with `{PREFIX} =` or `{{`; pass github-action-benchmark's data.js \
                 (on its gh-pages branch, dev/bench/data.js by default)"
            ));
        }
    };
    let data: Data = serde_json::from_str(json).map_err(|e| {
        format!("is not github-action-benchmark's data ({e}); pass the data.js its action writes")
    })?;
    // One results per commit, in the order of the first run of it.
    let mut runs: Vec<(&Entry, &str)> = data
        .entries
        .iter()
        .flat_map(|(suite, entries)| entries.iter().map(move |e| (e, suite.as_str())))
        .collect();
    runs.sort_by_key(|(e, _)| e.date);
    let mut order: Vec<&str> = Vec::new();
    let mut by_commit: BTreeMap<&str, Results> = BTreeMap::new();
    for (entry, suite) in runs {
        if !entry.benches.iter().all(|b| b.value.is_finite()) {
            return Err(format!(
                "suite `{suite}` at commit {} has a value that is not a finite number; fix or remove that entry",
                entry.commit.id
            ));
        }
        let results = match by_commit.entry(&entry.commit.id) {
            std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => {
                order.push(&entry.commit.id);
                v.insert(header(&entry.commit.id, entry.date)?)
            }
        };
        for b in &entry.benches {
            let row = row(suite, entry, b);
            // A benchmark run twice at one commit keeps its last run.
            results.rows.retain(|r| r.key != row.key);
            results.rows.push(row);
        }
    }
    let results = order.into_iter().filter_map(|c| by_commit.remove(c)).collect();
    Ok(Imported {
        repo_url: data.repo_url.filter(|u| !u.is_empty()),
        results,
    })
}

/// A results file's header for one imported commit.
fn header(commit: &str, date_ms: i64) -> Result<Results, String> {
    let date = jiff::Timestamp::from_millisecond(date_ms).map_err(|e| {
        format!("commit {commit} has a date out of range ({date_ms}): {e}; fix or remove that entry")
    })?;
    let text = r#"{"schema_version":2,"verdict":"pass","tool_version":"","spec_hash":"","spec_path":"",
        "source":"github-action-benchmark","synthetic":false,"fingerprint_mismatch":null,"shard":null,
        "git_commit":null,"date":"","fail_on":"regression","multiple_testing":"","rows":[]}"#;
    let mut v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    v["fingerprint"] =
        serde_json::to_value(crate::gpu::fingerprint::Fingerprint::default()).map_err(|e| e.to_string())?;
    let mut r: Results = serde_json::from_value(v).map_err(|e| e.to_string())?;
    r.git_commit = Some(commit.to_owned());
    r.date = date.to_string();
    Ok(r)
}

/// One benchmark's row.
fn row(suite: &str, entry: &Entry, b: &Bench) -> Row {
    Row {
        rule: RowRule {
            threshold: None,
            direction: Some(if entry.tool == "customBiggerIsBetter" {
                Direction::Higher
            } else {
                Direction::Lower
            }),
        },
        sides: Sides::candidate(SideSummary {
            n: 1,
            runs: None,
            median: b.value,
            min: b.value,
            max: b.value,
            cv: None,
            outliers: Vec::new(),
            samples: vec![b.value],
        }),
        ..Row::bare(
            OwnedRowKey {
                target: suite.to_owned(),
                size: "-".to_owned(),
                kernel: Some(Kernel::from(b.name.as_str())),
                metric: "value".to_owned(),
                ..OwnedRowKey::default()
            },
            &b.unit,
            Outcome::New,
            "imported from github-action-benchmark",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commits_become_results_in_run_order() {
        let text = r#"window.BENCHMARK_DATA = {"repoUrl": "https://github.com/o/r", "entries": {
          "B": [{"commit": {"id": "c2"}, "date": 2000, "tool": "go", "benches": [{"name": "x", "value": 3, "unit": "ns"}]}],
          "A": [{"commit": {"id": "c1"}, "date": 1000, "tool": "go", "benches": [{"name": "x", "value": 1, "unit": "ns"}]},
                {"commit": {"id": "c2"}, "date": 1500, "tool": "customBiggerIsBetter", "benches": [{"name": "y", "value": 2, "unit": "ops"}]}]
        }};"#;
        let imp = github_action_benchmark(text).unwrap();
        assert_eq!(imp.repo_url.as_deref(), Some("https://github.com/o/r"));
        let commits: Vec<_> = imp
            .results
            .iter()
            .map(|r| r.git_commit.clone().unwrap())
            .collect();
        assert_eq!(commits, ["c1", "c2"]);
        assert_eq!(imp.results[1].rows.len(), 2);
        assert_eq!(imp.results[0].date, "1970-01-01T00:00:01Z");
        let y = imp.results[1]
            .rows
            .iter()
            .find(|r| r.key.kernel_label() == "y")
            .unwrap();
        assert_eq!(y.rule.direction, Some(Direction::Higher));
        assert_eq!(y.sides.candidate.as_ref().unwrap().samples, [2.0]);
    }

    #[test]
    fn other_files_are_refused_with_what_to_pass() {
        for bad in [
            "",
            "[]",
            "window.BENCHMARK_DATA {}",
            "window.BENCHMARK_DATA = {\"entries\": 3}",
        ] {
            let e = github_action_benchmark(bad).unwrap_err();
            assert!(e.contains("data.js") || e.contains('='), "{bad}: {e}");
        }
    }
}
