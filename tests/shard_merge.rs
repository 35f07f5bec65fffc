//! `check --shard K/N` and `merge`: sharded runs merged decide as one unsharded run does, on the
//! demo recordings (SYNTHETIC data, examples/recordings); merge refuses what cannot be merged;
//! `baseline update --shard` touches only its shard's sizes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::root;
use predicates::prelude::*;
use serde_json::Value;

fn check(recording: &str, shard: Option<&str>, json: &Path) -> i32 {
    let dir = json.parent().unwrap();
    let spec = crate::support::synthetic_spec_without_job_drift(dir);
    let mut c = crate::support::bin();
    c.current_dir(root())
        .env_remove("GITHUB_ACTIONS")
        .arg("check")
        .arg("--spec")
        .arg(&spec)
        .args(["--baselines", "examples/baselines"])
        .arg("--replay")
        .arg(root().join("examples/recordings").join(recording))
        .arg("--json")
        .arg(json);
    if let Some(s) = shard {
        c.args(["--shard", s]);
    }
    c.output().unwrap().status.code().unwrap()
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// (target, size, kernel, metric, verdict) of every row.
fn verdicts(results: &Value) -> BTreeSet<[String; 5]> {
    results["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| ["target", "size", "kernel", "metric", "verdict"].map(|k| r[k].as_str().unwrap().to_owned()))
        .collect()
}

#[test]
fn merged_shards_decide_as_one_unsharded_run() {
    let dir = tempfile::tempdir().unwrap();
    for recording in ["pr-same", "pr-slowdown"] {
        let whole = dir.path().join(format!("{recording}-whole.json"));
        let whole_code = check(recording, None, &whole);
        let whole = read(&whole);
        for n in [2, 3] {
            let mut files: Vec<PathBuf> = Vec::new();
            let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
            for k in 1..=n {
                let p = dir.path().join(format!("{recording}-{k}-of-{n}.json"));
                check(recording, Some(&format!("{k}/{n}")), &p);
                let part = read(&p);
                assert_eq!(part["shard"], format!("{k}/{n}"));
                for r in part["rows"].as_array().unwrap() {
                    assert_ne!(r["verdict"], "missing", "rows of other shards are not missing");
                    let ts = (
                        r["target"].as_str().unwrap().to_owned(),
                        r["size"].as_str().unwrap().to_owned(),
                    );
                    seen.insert(ts);
                }
                files.push(p);
            }
            let merged = dir.path().join(format!("{recording}-merged-{n}.json"));
            let out = crate::support::bin()
                .env_remove("GITHUB_ACTIONS")
                .arg("merge")
                .args(files.iter().rev())
                .arg("--json")
                .arg(&merged)
                .output()
                .unwrap();
            let merged = read(&merged);
            assert_eq!(
                out.status.code(),
                Some(whole_code),
                "{recording} in {n} shards: exit code"
            );
            assert_eq!(merged["verdict"], whole["verdict"], "{recording} in {n} shards");
            assert_eq!(verdicts(&merged), verdicts(&whole), "{recording} in {n} shards");
            assert_eq!(merged["shard"], Value::Null);
            assert!(merged["errors"].as_array().unwrap().is_empty());
            assert_eq!(seen.len(), 5, "every target x size ran in some shard");
            for r in merged["rows"].as_array().unwrap() {
                assert_eq!(r["gpu"], "Synthetic GPU (no hardware)");
            }
        }
    }
}

#[test]
fn merge_refuses_another_spec_and_reports_a_missing_shard() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    check("pr-same", Some("1/2"), &a);
    check("pr-same", Some("2/2"), &b);
    let mut other = read(&b);
    other["spec_hash"] = Value::String("0".repeat(64));
    let c = dir.path().join("c.json");
    std::fs::write(&c, other.to_string()).unwrap();
    crate::support::bin()
        .env_remove("GITHUB_ACTIONS")
        .arg("merge")
        .args([&a, &c])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("made with another spec than"));
    let md = dir.path().join("m.md");
    crate::support::bin()
        .env_remove("GITHUB_ACTIONS")
        .arg("merge")
        .arg(&a)
        .arg("--markdown")
        .arg(&md)
        .assert()
        .code(3)
        .stdout(predicate::str::contains("missing-shard"));
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.contains("no results for shard 2/2"), "{md}");
}

/// A shard whose results say `error` without rows or errors (it had work and judged nothing)
/// fails the merged gate; `baseline update --from` refuses the same file.
#[test]
fn a_shard_whose_verdict_is_error_fails_the_merge() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    assert_eq!(check("pr-same", Some("1/2"), &a), 0);
    assert_eq!(check("pr-same", Some("2/2"), &b), 0);
    let mut broken = read(&b);
    broken["verdict"] = Value::String("error".to_owned());
    broken["rows"] = Value::Array(Vec::new());
    broken["errors"] = Value::Array(Vec::new());
    std::fs::write(&b, broken.to_string()).unwrap();
    let merged = dir.path().join("m.json");
    let junit = dir.path().join("m.xml");
    crate::support::bin()
        .env_remove("GITHUB_ACTIONS")
        .arg("merge")
        .args([&a, &b])
        .arg("--json")
        .arg(&merged)
        .arg("--junit")
        .arg(&junit)
        .assert()
        .code(3)
        .stdout(predicate::str::contains("shard-failed"));
    let merged = read(&merged);
    assert_eq!(merged["verdict"], "error");
    assert_eq!(merged["errors"][0]["kind"], "shard-failed");
    assert!(std::fs::read_to_string(junit).unwrap().contains("errors=\"1\""));
}

#[test]
fn merged_results_of_two_gpus_list_both_and_group_rows() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    check("pr-slowdown", None, &a);
    let mut other = read(&a);
    other["fingerprint"]["gpu_name"] = Value::String("NVIDIA L4".to_owned());
    for r in other["rows"].as_array_mut().unwrap() {
        r["gpu"] = Value::String("NVIDIA L4".to_owned());
    }
    let b = dir.path().join("b.json");
    std::fs::write(&b, other.to_string()).unwrap();
    let md = dir.path().join("m.md");
    let merged = dir.path().join("m.json");
    crate::support::bin()
        .env_remove("GITHUB_ACTIONS")
        .arg("merge")
        .args([&a, &b])
        .arg("--markdown")
        .arg(&md)
        .arg("--json")
        .arg(&merged)
        .assert()
        .code(1);
    let md = std::fs::read_to_string(md).unwrap();
    let headline = md.lines().next().unwrap();
    assert!(
        headline.contains("2 regressions")
            && headline.contains("NVIDIA L4")
            && headline.contains("Synthetic GPU"),
        "{headline}"
    );
    assert!(md.contains("| | GPU | target |"), "{md}");
    // A baseline belongs to one GPU: updating from both at once is refused.
    crate::support::bin()
        .current_dir(root())
        .args(["baseline", "update", "--spec"])
        .arg(crate::support::synthetic_spec_without_job_drift(dir.path()))
        .arg("--baselines")
        .arg(dir.path().join("bl"))
        .arg("--from")
        .arg(&merged)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("rows of 2 GPUs"));
}

#[test]
fn baseline_update_of_one_shard_keeps_the_other_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("baselines");
    let update = |shard: Option<&str>| {
        let mut c = crate::support::bin();
        c.current_dir(root())
            .args([
                "baseline",
                "update",
                "--spec",
                "examples/cgp-gate.yaml",
                "--replay",
                "examples/recordings/main",
            ])
            .arg("--baselines")
            .arg(&store);
        if let Some(s) = shard {
            c.args(["--shard", s]);
        }
        c.assert().code(0);
    };
    update(None);
    let file = |t: &str| store.join("synthetic-gpu-no-hardware").join(format!("{t}.json"));
    let before: Vec<Value> = ["vector_add", "matmul", "reduce"]
        .iter()
        .map(|t| read(&file(t)))
        .collect();
    update(Some("1/3"));
    let part = dir.path().join("part.json");
    check("main", Some("1/3"), &part);
    let in_shard: BTreeSet<(String, String)> = read(&part)["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["target"].as_str().unwrap().to_owned(),
                r["size"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(!in_shard.is_empty());
    let mut grown = 0;
    for (t, old) in ["vector_add", "matmul", "reduce"].iter().zip(before) {
        let new = read(&file(t));
        let old_entries = old["entries"].as_array().unwrap();
        let new_entries = new["entries"].as_array().unwrap();
        assert_eq!(old_entries.len(), new_entries.len(), "{t}: no entry dropped");
        for (o, n) in old_entries.iter().zip(new_entries) {
            let generations = (
                o["history"].as_array().unwrap().len(),
                n["history"].as_array().unwrap().len(),
            );
            if in_shard.contains(&(t.to_string(), n["size"].as_str().unwrap().to_owned())) {
                assert_eq!(
                    generations.1,
                    generations.0 + 1,
                    "{t} {}: measured again",
                    n["size"]
                );
                grown += 1;
            } else {
                assert_eq!(o, n, "{t} {}: outside the shard, untouched", n["size"]);
            }
        }
    }
    assert!(grown > 0);
}
