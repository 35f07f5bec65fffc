//! `cgp-gate store export --format hud-v3`: the rows are accepted by PyTorch's real
//! `oss_ci_benchmark_v3` table (tests/fixtures/hud-v3/schema.sql, created in chDB, a ClickHouse
//! engine from PyPI that `.ci/setup` installs), carry one number per row (the decided estimate,
//! the history site's point), and a row the table would not take is refused by the same check.

use std::path::Path;

use serde_json::Value;

use crate::store_cli::{run, sqlite};

const TEST: &str = "store_hud::hud_v3_rows_are_accepted_by_the_real_oss_ci_benchmark_v3_table";

/// `validate.py` on `rows`: Ok(its summary) or Err(ClickHouse's message); `None` without chDB.
fn insert(rows: &Path) -> Option<Result<Value, String>> {
    let out = std::process::Command::new("python3")
        .arg(crate::support::fixture("hud-v3/validate.py"))
        .arg(crate::support::fixture("hud-v3/schema.sql"))
        .arg(rows)
        .output()
        .ok()?;
    match out.status.code() {
        Some(0) => Some(Ok(serde_json::from_slice(&out.stdout).unwrap())),
        Some(3) => None,
        _ => Some(Err(String::from_utf8_lossy(&out.stderr).into_owned())),
    }
}

#[test]
fn hud_v3_rows_are_accepted_by_the_real_oss_ci_benchmark_v3_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let url = sqlite(&db);
    let pass = crate::support::fixture("results/pass.json");
    let mixed = crate::support::fixture("results/mixed.json");
    let (code, _, err) = run(&[
        "store",
        "push",
        "--store",
        &url,
        "--branch",
        "main",
        pass.to_str().unwrap(),
        mixed.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let rows = dir.path().join("rows.jsonl");
    let (code, _, err) = run(&[
        "store",
        "export",
        "--store",
        &url,
        "--format",
        "hud-v3",
        "--out",
        rows.to_str().unwrap(),
        "--repo",
        "o/r",
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&rows).unwrap();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // Every row with a number: mixed.json has one row without (its missing row).
    let results = |p: &Path| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    let numbered = |r: &Value| {
        r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|row| !matches!(row["verdict"].as_str(), Some("error" | "missing")))
            .count()
    };
    assert_eq!(
        lines.len(),
        numbered(&results(&pass)) + numbered(&results(&mixed))
    );
    // One number a row: the baseline's median times 1 + the change the decision used.
    let first = &results(&pass)["rows"][0];
    let want = first["baseline"]["median"].as_f64().unwrap() * (1.0 + first["change"].as_f64().unwrap());
    let got = lines
        .iter()
        .find(|l| l["model"]["name"] == first["target"] && l["metric"]["name"] == first["metric"])
        .unwrap();
    assert_eq!(got["metric"]["benchmark_values"], serde_json::json!([want]));
    assert_eq!(got["repo"], "o/r");
    assert_eq!(got["head_branch"], "main");
    // `-` is standard output, the same lines.
    let (code, out, _) = run(&[
        "store", "export", "--store", &url, "--format", "hud-v3", "--out", "-",
    ]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), lines.len());
    let Some(accepted) = insert(&rows) else {
        crate::support::skip(
            TEST,
            "chDB is not installed; run `bash .ci/setup` (PyPI's chdb-core)",
        );
        return;
    };
    let summary = accepted.unwrap_or_else(|e| panic!("the real table refused the rows: {e}"));
    assert_eq!(
        summary["rows"]
            .as_u64()
            .or_else(|| summary["rows"].as_str().and_then(|s| s.parse().ok())),
        Some(lines.len() as u64)
    );
    assert_eq!(summary["gpus"], serde_json::json!(["NVIDIA H200"]));
    assert_eq!(summary["versions"], serde_json::json!(["v3"]));
    // The check can fail: a field the table does not have, and a value of the wrong type.
    for (what, edit) in [
        (
            "an unknown field",
            Box::new(|l: &mut Value| l["not_a_column"] = 1.into()) as Box<dyn Fn(&mut Value)>,
        ),
        (
            "a string for a Float32 array",
            Box::new(|l: &mut Value| l["metric"]["benchmark_values"] = "fast".into()),
        ),
    ] {
        let mut bad = lines[0].clone();
        edit(&mut bad);
        let p = dir.path().join("bad.jsonl");
        std::fs::write(&p, format!("{bad}\n")).unwrap();
        let refused = insert(&p).unwrap();
        assert!(refused.is_err(), "the table took {what}");
    }
}
