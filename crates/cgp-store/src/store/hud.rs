//! `store export --format hud-v3`: one JSON line per results row in the shape of PyTorch's
//! `oss_ci_benchmark_v3` ClickHouse table (pytorch/test-infra,
//! `clickhouse_db_schema/oss_ci_benchmark_v3/schema.sql`), which the HUD, tritonbench's and
//! vLLM's dashboards read. Every column of the table is written (named tuples as objects), so a
//! row is accepted as the table defines it; `tests/store_hud.rs` inserts them into a real
//! ClickHouse engine (chDB) over the real schema.
//!
//! The mapping: a target is the `model` (its `type` is `gpu-kernel`, its backend the profiler),
//! the size's parameters are the `inputs`, the kernel and size are in `model.extra_info`, the
//! metric is `metric.name` with ONE value, the number the row's decision used (the history site's
//! point: the baseline's median times 1 + the change, else the candidate's median), and its
//! `target_value` the row's limit (where it would cross its threshold; 0 when it has none). The
//! GPU is the runner's `gpu_info`; the driver and the profiler's version are `dependencies`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::RunInfo;
use crate::outcome::results::{Results, Row};

/// What the export knows beyond the run: the repository, when no CI variable named it at push.
#[derive(Debug, Clone, Default)]
pub struct HudContext {
    /// `OWNER/NAME`, used where a run has none.
    pub repo: Option<String>,
}

/// The rows of one run; a row without a number (an error, a missing row) is left out, as the
/// history leaves it out.
pub fn hud_rows(info: &RunInfo, results: &Results, ctx: &HudContext) -> Vec<Value> {
    let ts = info
        .date
        .parse::<jiff::Timestamp>()
        .map_or(0, |t| u64::try_from(t.as_second()).unwrap_or(0));
    let num = |k: &str| info.ci.get(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    let repo = info
        .ci
        .get("repo")
        .cloned()
        .or_else(|| ctx.repo.clone())
        .unwrap_or_default();
    let fp = &results.fingerprint;
    let runner = runner(info, results);
    let mut deps = serde_json::Map::new();
    for (name, version) in [
        ("nvidia-driver", fp.driver_version.to_string()),
        ("cuda-driver", fp.cuda_driver_version.to_string()),
        ("cgp-gate", results.tool_version.clone()),
    ] {
        deps.insert(name.to_owned(), dependency(&version));
    }
    let base = json!({
        "timestamp": ts,
        "schema_version": "v3",
        "name": "cgp-gate",
        "repo": repo,
        "head_branch": info.branch,
        "head_sha": info.git_commit.clone().unwrap_or_default(),
        "workflow_id": num("workflow_id"),
        "run_attempt": num("run_attempt"),
        "job_id": num("job_id"),
        "servicelab_experiment_id": 0,
        "servicelab_trial_id": 0,
        "_meta": {"bucket": "", "key": ""},
        "runners": [runner],
        "benchmark": {
            "name": results.spec_path,
            "mode": "",
            "dtype": "",
            "extra_info": strings(&[
                ("spec_hash", results.spec_hash.as_str()),
                ("run_id", info.id.as_str()),
                ("run_verdict", results.verdict.as_str()),
                ("source", &results.source.to_string()),
                ("synthetic", if results.synthetic { "true" } else { "false" }),
                ("kind", info.kind.as_str()),
            ]),
        },
        "dependencies": deps,
    });
    results
        .rows
        .iter()
        .filter_map(|row| {
            let value = super::run::point(row)?;
            let mut line = base.clone();
            let o = line.as_object_mut()?;
            o.insert("model".into(), model(row, results));
            o.insert("inputs".into(), inputs(&row.key.size));
            o.insert("metric".into(), metric(row, value));
            Some(line)
        })
        .collect()
}

fn strings(pairs: &[(&str, &str)]) -> Value {
    Value::Object(
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Value::String((*v).to_owned())))
            .collect(),
    )
}

fn dependency(version: &str) -> Value {
    json!({"repo": "", "branch": "", "sha": "", "version": version, "extra_info": {}})
}

/// The machine: its name, the GPU, its memory (GB, whole), the fingerprint's other fields.
fn runner(info: &RunInfo, results: &Results) -> Value {
    let fp = &results.fingerprint;
    let mem_bytes: Option<u64> = fp.memory_total_bytes.to_string().parse().ok();
    let gb = mem_bytes.map_or(0, |b| u32::try_from(b / 1_000_000_000).unwrap_or(u32::MAX));
    let gpu = if info.gpu.is_empty() {
        fp.gpu_name.to_string()
    } else {
        info.gpu.clone()
    };
    json!({
        "name": info.runner,
        "type": fp.gpu_key(),
        "cpu_info": std::env::consts::ARCH,
        "cpu_count": 0,
        "mem_info": "",
        "avail_mem_in_gb": 0,
        "gpu_info": gpu,
        "gpu_count": 1,
        "gpu_mem_info": mem_bytes.map(|b| b.to_string()).unwrap_or_default(),
        "avail_gpu_mem_in_gb": gb,
        "extra_info": strings(&[
            ("compute_capability", &fp.compute_capability.to_string()),
            ("driver_version", &fp.driver_version.to_string()),
            ("clock_control", &fp.clock_control.to_string()),
        ]),
    })
}

fn model(row: &Row, results: &Results) -> Value {
    json!({
        "name": row.key.target,
        "type": "gpu-kernel",
        "backend": results.fingerprint.profiler.to_string(),
        "origins": ["cgp-gate"],
        "extra_info": strings(&[("kernel", row.kernel_label()), ("size", row.key.size.as_str())]),
    })
}

/// The size's parameters (`m=1024,n=512`), each an input; `default` (no parameters) is none.
fn inputs(size: &str) -> Value {
    let mut out = BTreeMap::new();
    for part in size.split(',').filter(|p| !p.is_empty() && *p != "default") {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        out.insert(
            k.to_owned(),
            json!({"dtype": "", "extra_info": strings(&[("value", v)])}),
        );
    }
    json!(out)
}

fn metric(row: &Row, value: f64) -> Value {
    let est = row.estimate();
    let fmt = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    let ci = est.change_ci();
    let cand = row.sides.candidate.as_ref();
    json!({
        "name": row.key.metric,
        "benchmark_values": [value],
        "target_value": row.rule.threshold.as_ref().and_then(|t| t.limit()).filter(|l| l.is_finite()).unwrap_or(0.0),
        "extra_info": strings(&[
            ("unit", row.unit.as_str()),
            ("verdict", row.verdict().as_str()),
            ("change", &fmt(est.change())),
            ("change_low", &fmt(ci.map(|c| c[0]))),
            ("change_high", &fmt(ci.map(|c| c[1]))),
            ("baseline_median", &fmt(row.sides.baseline.as_ref().map(|b| b.median))),
            ("candidate_median", &fmt(cand.map(|c| c.median))),
            ("candidate_n", &cand.map(|c| c.n.to_string()).unwrap_or_default()),
            ("candidate_cv", &fmt(cand.and_then(|c| c.cv))),
            ("gpu", row.key.gpu.as_str()),
        ]),
    })
}
