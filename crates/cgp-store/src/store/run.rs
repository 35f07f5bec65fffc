//! A run as the store keeps it: the results file's own JSON, kept whole (a field this version
//! does not know, a later schema's `detectable`, travels with it), split into the run's header
//! and one record per row, and beside it the columns a query filters on. Its id is the SHA-256 of
//! the file's content, so the same run pushed twice (or by `check` and then `store push` of its
//! `--json`) is one run.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::outcome::results::{Results, Row, RowVerdict};

/// What the store records about who pushed a run, beside the results themselves.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Origin {
    /// The branch the run measured (`--branch`, else the CI's variables, else git's); empty
    /// when not known.
    pub branch: String,
    /// The command that pushed it: `check`, `ab`, `merge`, `baseline`, `push` or `import`.
    pub kind: String,
    /// The machine (the CI runner's name, else the host name).
    pub runner: String,
    /// The CI job: `repo`, `workflow_id`, `run_attempt`, `job_id`, where the CI says them.
    #[serde(default)]
    pub ci: std::collections::BTreeMap<String, String>,
    /// The results file the run was pushed from (`store push FILE`, `check --json FILE`), as
    /// given: a run read back is named by it, as the file would be.
    #[serde(default)]
    pub file: Option<String>,
}

/// One row as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRow {
    pub gpu: String,
    pub target: String,
    pub size: String,
    pub kernel: String,
    pub metric: String,
    pub unit: String,
    pub verdict: String,
    /// The row's decided estimate on the metric's scale (the history site's point): the
    /// baseline's median times 1 + the change the verdict used, else the candidate's median;
    /// `None` for rows with no number (errors, missing rows).
    pub value: Option<f64>,
    pub change: Option<f64>,
    /// The row's JSON without its samples (`samples: []` on each side, no `candidate_reps`).
    pub body: String,
    /// `{"baseline": [...], "candidate": [...], "candidate_reps": [...]}`, the arrays the row
    /// holds; `None` when it holds none.
    pub samples: Option<String>,
}

/// One run as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRun {
    /// SHA-256 (hex) of the results' canonical JSON.
    pub id: String,
    pub origin: Origin,
    pub git_commit: Option<String>,
    /// The run's date, RFC 3339 in UTC (`2026-03-01T12:34:56Z`): sorts as text.
    pub date: String,
    pub shard: Option<String>,
    pub spec_hash: String,
    pub gpu: String,
    pub verdict: String,
    pub tool_version: String,
    /// The results JSON without `rows`.
    pub header: String,
    pub rows: Vec<StoredRow>,
}

/// The keys of a row's side whose arrays are kept apart (`samples`), and the row's own.
const SIDES: [&str; 2] = ["baseline", "candidate"];
const ROW_ARRAYS: [&str; 1] = ["candidate_reps"];

impl StoredRun {
    /// A run from a results file's text; `Err` is the message for an invalid-input error naming
    /// the file (nothing is stored from such a file).
    ///
    /// # Errors
    /// Invalid results (the reader's own message), a date that is not RFC 3339.
    pub fn from_text(text: &str, origin: Origin) -> Result<Self, String> {
        let results = crate::outcome::results::parse(text)?;
        let value: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
        Self::from_parts(&results, value, origin)
    }

    /// A run from results in memory (`check`, `ab`, `merge` push what they would write with
    /// `--json`: the same id as pushing that file).
    ///
    /// # Errors
    /// As [`StoredRun::from_text`].
    pub fn from_results(results: &Results, origin: Origin) -> Result<Self, String> {
        let text = results.to_json().map_err(|e| e.to_string())?;
        Self::from_text(&text, origin)
    }

    fn from_parts(results: &Results, mut value: Value, origin: Origin) -> Result<Self, String> {
        let id = run_id(&value);
        let date = normal_date(&results.date)?;
        let Some(Value::Array(raw_rows)) = value.as_object_mut().and_then(|o| o.remove("rows")) else {
            return Err("no `rows` array".to_owned());
        };
        if raw_rows.len() != results.rows.len() {
            return Err("its rows could not be read one by one".to_owned());
        }
        let header = value.to_string();
        let gpu_name = results.fingerprint.gpu_name.to_string();
        let rows = results
            .rows
            .iter()
            .zip(raw_rows)
            .map(|(row, raw)| stored_row(row, raw, &gpu_name))
            .collect();
        Ok(Self {
            id,
            origin,
            git_commit: results.git_commit.clone().filter(|c| !c.is_empty()),
            date,
            shard: results.shard.clone(),
            spec_hash: results.spec_hash.clone(),
            gpu: gpu_name.clone(),
            verdict: results.verdict.as_str().to_owned(),
            tool_version: results.tool_version.clone(),
            header,
            rows,
        })
    }
}

/// The run id: SHA-256 of the JSON with every object's keys sorted, so neither the file's
/// indentation nor its key order makes two runs of one.
fn run_id(value: &Value) -> String {
    fn canonical(v: &Value, out: &mut String) {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    canonical(&m[k], out);
                }
                out.push('}');
            }
            Value::Array(a) => {
                out.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    canonical(x, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut text = String::new();
    canonical(value, &mut text);
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A results date as RFC 3339 in UTC, whole seconds kept as written.
///
/// # Errors
/// A message when the date is not an RFC 3339 time.
pub fn normal_date(date: &str) -> Result<String, String> {
    date.parse::<jiff::Timestamp>()
        .map(|t| t.to_string())
        .map_err(|_| {
            format!(
                "its date `{}` is not an RFC 3339 time (2026-03-01T12:34:56Z); the store orders runs by it",
                crate::foundation::sanitize::line(date)
            )
        })
}

/// A row's stored form.
fn stored_row(row: &Row, mut raw: Value, run_gpu: &str) -> StoredRow {
    let mut samples = serde_json::Map::new();
    if let Value::Object(o) = &mut raw {
        for side in SIDES {
            if let Some(Value::Object(s)) = o.get_mut(side)
                && let Some(Value::Array(a)) = s.get_mut("samples")
                && !a.is_empty()
            {
                samples.insert(side.to_owned(), Value::Array(std::mem::take(a)));
            }
        }
        for key in ROW_ARRAYS {
            if let Some(v) = o.remove(key) {
                samples.insert(key.to_owned(), v);
            }
        }
    }
    let gpu = if row.key.gpu.is_empty() {
        run_gpu
    } else {
        &row.key.gpu
    };
    StoredRow {
        gpu: gpu.to_owned(),
        target: row.key.target.clone(),
        size: row.key.size.clone(),
        kernel: row.kernel_label().to_owned(),
        metric: row.key.metric.clone(),
        unit: row.unit.clone(),
        verdict: row.verdict().as_str().to_owned(),
        value: point(row),
        change: row.estimate().change().filter(|c| c.is_finite()),
        body: raw.to_string(),
        samples: (!samples.is_empty()).then(|| Value::Object(samples).to_string()),
    }
}

/// The row's decided estimate on the metric's scale, as the history site draws it
/// (`report::site`): the baseline's median times 1 + the change, else the candidate's median.
pub(crate) fn point(row: &Row) -> Option<f64> {
    if matches!(row.verdict(), RowVerdict::Error | RowVerdict::Missing) {
        return None;
    }
    let base = row
        .sides
        .baseline
        .as_ref()
        .map(|b| b.median)
        .filter(|m| m.is_finite() && *m > 0.0);
    match (base, row.estimate().change()) {
        (Some(b), Some(c)) if c.is_finite() => Some(b * (1.0 + c)),
        _ => row
            .sides
            .candidate
            .as_ref()
            .filter(|c| c.n > 0 && c.median.is_finite())
            .map(|c| c.median),
    }
}

/// The results text of a stored run: its header with its rows, each with its samples put back
/// when `samples` are given (else each side's `samples` stays `[]`).
///
/// # Errors
/// A stored record that is not JSON (a damaged database).
pub fn assemble(
    header: &str,
    rows: &[(String, Option<String>)],
    with_samples: bool,
) -> Result<String, String> {
    let Some(head) = header.strip_suffix('}') else {
        return Err("a stored run's header is not a JSON object".to_owned());
    };
    let mut text =
        String::with_capacity(header.len() + rows.iter().map(|r| r.0.len() + 1).sum::<usize>() + 16);
    text.push_str(head);
    text.push_str(if head.trim_end().ends_with('{') {
        "\"rows\":["
    } else {
        ",\"rows\":["
    });
    for (i, (body, samples)) in rows.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        match samples.as_deref().filter(|_| with_samples) {
            Some(s) => text.push_str(&with_samples_of(body, s)?),
            None => text.push_str(body),
        }
    }
    text.push_str("]}");
    Ok(text)
}

/// A row's JSON with its arrays put back.
fn with_samples_of(body: &str, samples: &str) -> Result<String, String> {
    let bad = |e: serde_json::Error| format!("a stored row is not JSON: {e}");
    let mut row: Value = serde_json::from_str(body).map_err(bad)?;
    let Value::Object(arrays) = serde_json::from_str::<Value>(samples).map_err(bad)? else {
        return Err("a stored row's samples are not a JSON object".to_owned());
    };
    if let Value::Object(o) = &mut row {
        for (k, v) in arrays {
            if SIDES.contains(&k.as_str()) {
                if let Some(Value::Object(side)) = o.get_mut(&k) {
                    side.insert("samples".to_owned(), v);
                }
            } else {
                o.insert(k, v);
            }
        }
    }
    Ok(row.to_string())
}
