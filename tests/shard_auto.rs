//! `--shard auto`: each engine's variables give the same rows as `--shard K/N`, also when the
//! shards are balanced by `--shard-costs`; `merge` takes shards whatever engine made them; bad
//! variables are exit 2. On the demo recordings (SYNTHETIC data, examples/recordings).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::root;
use assert_cmd::Command;
use serde_json::Value;

/// Every variable `--shard auto` reads, removed so that the CI machine's own cannot leak in.
const ENGINE_VARS: &[&str] = &[
    "CGP_GATE_SHARD",
    "CGP_GATE_SHARD_INDEX",
    "CGP_GATE_SHARD_TOTAL",
    "JOB_COMPLETION_INDEX",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_STEP",
    "CI_NODE_INDEX",
    "CI_NODE_TOTAL",
    "GITHUB_ACTIONS",
];

fn gate() -> Command {
    let mut c = crate::support::bin();
    c.current_dir(root());
    for v in ENGINE_VARS {
        c.env_remove(v);
    }
    c
}

/// `check` of the slowdown recording with `--shard SHARD`, the engine variables `env`, and
/// `--shard-costs` when given. Returns (exit code, stderr).
fn check(shard: &str, env: &[(&str, String)], costs: Option<&Path>, json: &Path) -> (i32, String) {
    let spec = crate::support::synthetic_spec_without_job_drift(json.parent().unwrap());
    let mut c = gate();
    c.args(["check", "--spec"])
        .arg(&spec)
        .args([
            "--baselines",
            "examples/baselines",
            "--replay",
            "examples/recordings/pr-slowdown",
            "--shard",
            shard,
        ])
        .arg("--json")
        .arg(json);
    if let Some(p) = costs {
        c.arg("--shard-costs").arg(p);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn rows(results: &Value) -> BTreeSet<(String, String)> {
    results["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["target"].as_str().unwrap().to_owned(),
                r["size"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The variables of shard `k` (from 1) of `n` for each engine, and the engine name the note gives.
fn engines(k: usize, n: usize) -> Vec<(&'static str, Vec<(&'static str, String)>)> {
    vec![
        (
            "GitLab CI parallel",
            vec![("CI_NODE_INDEX", k.to_string()), ("CI_NODE_TOTAL", n.to_string())],
        ),
        (
            "Slurm job array",
            vec![
                // sbatch --array=1-N
                ("SLURM_ARRAY_TASK_ID", k.to_string()),
                ("SLURM_ARRAY_TASK_MIN", "1".to_owned()),
                ("SLURM_ARRAY_TASK_MAX", n.to_string()),
                ("SLURM_ARRAY_TASK_COUNT", n.to_string()),
            ],
        ),
        (
            "Kubernetes Indexed Job",
            vec![
                ("JOB_COMPLETION_INDEX", (k - 1).to_string()),
                ("CGP_GATE_SHARD_TOTAL", n.to_string()),
            ],
        ),
        (
            "GitHub Actions matrix",
            vec![
                ("GITHUB_ACTIONS", "true".to_owned()),
                ("CGP_GATE_SHARD_INDEX", (k - 1).to_string()),
                ("CGP_GATE_SHARD_TOTAL", n.to_string()),
            ],
        ),
    ]
}

#[test]
fn every_engine_gives_the_rows_of_shard_k_of_n_and_merges() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.json");
    let (whole_code, _) = check_whole(&whole);
    let whole = read(&whole);
    // Recorded costs that turn the default split around (by estimate, matmul's sizes are the
    // dearest; here vector_add's are). A replay records no wall time, so they are written in.
    // Every shard gets the same file, as the docs require.
    let mut skewed = whole.clone();
    skewed["cost_seconds"] = serde_json::json!({"vector_add": 1000.0, "reduce": 10.0, "matmul": 1.0});
    let costs_file = dir.path().join("costs.json");
    std::fs::write(&costs_file, skewed.to_string()).unwrap();

    let n = 3;
    let mut differs_with_costs = false;
    for costs in [None, Some(costs_file.as_path())] {
        for (e, _) in engines(1, n).iter().enumerate() {
            let mut files: Vec<PathBuf> = Vec::new();
            for k in 1..=n {
                let fixed = dir.path().join(format!("fixed-{k}-{}.json", costs.is_some()));
                check(&format!("{k}/{n}"), &[], costs, &fixed);
                let (name, vars) = engines(k, n).swap_remove(e);
                let auto = dir.path().join(format!("auto-{e}-{k}-{}.json", costs.is_some()));
                let (_, stderr) = check("auto", &vars, costs, &auto);
                assert!(
                    stderr.contains(&format!("shard {k}/{n} from {name} (")),
                    "{name}: {stderr}"
                );
                let (fixed, auto_v) = (read(&fixed), read(&auto));
                assert_eq!(auto_v["shard"], format!("{k}/{n}"), "{name}");
                assert_eq!(
                    rows(&auto_v),
                    rows(&fixed),
                    "{name}, shard {k}/{n}, costs {costs:?}"
                );
                if costs.is_some() {
                    let plain = read(&dir.path().join(format!("fixed-{k}-false.json")));
                    differs_with_costs |= rows(&plain) != rows(&fixed);
                }
                files.push(auto);
            }
            // Shards of one engine merge like any shards.
            let merged = dir.path().join("merged.json");
            let out = gate()
                .arg("merge")
                .args(&files)
                .arg("--json")
                .arg(&merged)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(whole_code), "engine {e}");
            assert_eq!(read(&merged)["verdict"], whole["verdict"]);
            assert_eq!(rows(&read(&merged)), rows(&whole));
        }
    }
    assert!(
        differs_with_costs,
        "the recorded costs should move some row to another shard"
    );

    // One merge over shards that three different engines produced.
    let mut mixed = Vec::new();
    for k in 1..=n {
        let (_, vars) = engines(k, n).swap_remove(k - 1);
        let p = dir.path().join(format!("mixed-{k}.json"));
        check("auto", &vars, None, &p);
        mixed.push(p);
    }
    let merged = dir.path().join("mixed.json");
    let out = gate()
        .arg("merge")
        .args(&mixed)
        .arg("--json")
        .arg(&merged)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(whole_code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(rows(&read(&merged)), rows(&whole));
}

fn check_whole(json: &Path) -> (i32, String) {
    let spec = crate::support::synthetic_spec_without_job_drift(json.parent().unwrap());
    let mut c = gate();
    c.args(["check", "--spec"])
        .arg(&spec)
        .args([
            "--baselines",
            "examples/baselines",
            "--replay",
            "examples/recordings/pr-slowdown",
        ])
        .arg("--json")
        .arg(json);
    let out = c.output().unwrap();
    (out.status.code().unwrap(), String::new())
}

#[test]
fn inconsistent_or_missing_variables_are_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[], "found no shard variables"),
        (
            &[("CI_NODE_INDEX", "5"), ("CI_NODE_TOTAL", "4")],
            "outside the 4 shards",
        ),
        (&[("JOB_COMPLETION_INDEX", "1")], "CGP_GATE_SHARD_TOTAL"),
        (
            &[
                ("SLURM_ARRAY_TASK_ID", "3"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_MAX", "7"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
            ],
            "not one evenly spaced range",
        ),
        (
            &[
                ("CI_NODE_INDEX", "1"),
                ("CI_NODE_TOTAL", "2"),
                ("JOB_COMPLETION_INDEX", "1"),
                ("CGP_GATE_SHARD_TOTAL", "2"),
            ],
            "disagree",
        ),
    ];
    for (vars, want) in cases {
        let vars: Vec<(&str, String)> = vars.iter().map(|(k, v)| (*k, (*v).to_owned())).collect();
        let (code, stderr) = check("auto", &vars, None, &json);
        assert_eq!(code, 2, "{vars:?}: {stderr}");
        assert!(stderr.contains(want), "{vars:?}: {stderr}");
        assert!(!json.exists(), "no results from a refused shard");
    }
    let (code, stderr) = check("bogus", &[], None, &json);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("or `auto`"), "{stderr}");
}
