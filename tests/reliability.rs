//! Issue 13, "an error is never a pass": hostile and damaged input, end to end through the binary.
//! The recordings are the SYNTHETIC example recordings (examples/synthesize_recording.rs), copied
//! and damaged per test.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bin() -> Command {
    let mut c = Command::cargo_bin("cgp-gate").unwrap();
    c.current_dir(root())
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT");
    c
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// A copy of an example recording, edited file by file (`edit(path, text) -> text`).
fn edited_recording(from: &str, edit: impl Fn(&Path, String) -> String) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root().join(from), dir.path());
    fn walk(d: &Path, edit: &dyn Fn(&Path, String) -> String) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, edit);
            } else if p.extension().is_some_and(|x| x == "csv") {
                let text = std::fs::read_to_string(&p).unwrap();
                std::fs::write(&p, edit(&p, text)).unwrap();
            }
        }
    }
    walk(dir.path(), &edit);
    dir
}

struct Run {
    code: i32,
    results: Value,
    out: String,
}

/// `check` with a spec edited from examples/cgp-gate.yaml, a recording and a baselines folder.
fn check(spec_edit: impl Fn(String) -> String, recording: &Path, baselines: &Path, extra: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_edit(std::fs::read_to_string(root().join("examples/cgp-gate.yaml")).unwrap());
    std::fs::write(dir.path().join("cgp-gate.yaml"), spec).unwrap();
    let out = bin()
        .args(["check", "--spec"])
        .arg(dir.path().join("cgp-gate.yaml"))
        .arg("--replay")
        .arg(recording)
        .arg("--baselines")
        .arg(baselines)
        .arg("--json")
        .arg(dir.path().join("r.json"))
        .args(extra)
        .output()
        .unwrap();
    let results = std::fs::read_to_string(dir.path().join("r.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    Run {
        code: out.status.code().unwrap_or(-1),
        results,
        out: String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    }
}

fn same(s: String) -> String {
    s
}

fn baselines() -> PathBuf {
    root().join("examples/baselines")
}

/// pr-same with `matmul_tiled<32>` renamed to `matmul_tiled_v2<32>`: still selected by the spec's
/// `kernel: regex:^matmul_tiled`, but a different kernel for the baseline.
fn renamed() -> tempfile::TempDir {
    edited_recording("examples/recordings/pr-same", |_, t| {
        t.replace("matmul_tiled<32>", "matmul_tiled_v2<32>")
    })
}

fn verdicts<'a>(r: &'a Value, target: &str) -> Vec<&'a str> {
    r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["target"] == target)
        .map(|x| x["verdict"].as_str().unwrap())
        .collect()
}

// ---- 1. A renamed kernel must not pass -------------------------------------------------------

#[test]
fn a_renamed_kernel_fails_the_gate_and_the_report_names_both_kernels() {
    let rec = renamed();
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_eq!(r.code, 1, "{}", r.out);
    assert_eq!(r.results["verdict"], "regression");
    let m = verdicts(&r.results, "matmul");
    assert!(m.contains(&"missing") && m.contains(&"new"), "{m:?}");
    assert!(
        r.out.contains("kernels that disappeared") && r.out.contains("void matmul_tiled<32>"),
        "{}",
        r.out
    );
    assert!(
        r.out.contains("kernels that appeared") && r.out.contains("void matmul_tiled_v2<32>"),
        "{}",
        r.out
    );
    assert!(r.out.contains("--allow-missing"), "{}", r.out);
}

#[test]
fn missing_rows_pass_when_allowed_by_flag_or_by_the_spec() {
    let rec = renamed();
    let r = check(same, rec.path(), &baselines(), &["--allow-missing"]);
    assert_eq!(r.code, 0, "{}", r.out);
    assert!(verdicts(&r.results, "matmul").contains(&"missing"));
    let r = check(
        |s| {
            s.replace(
                "    flops: 2*n*n*n\n",
                "    flops: 2*n*n*n\n    allow_missing: true\n",
            )
        },
        rec.path(),
        &baselines(),
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.out);
    // Only matmul opts out: the same rename elsewhere still fails.
    let rec2 = edited_recording("examples/recordings/pr-same", |_, t| {
        t.replace("matmul_tiled<32>", "matmul_tiled_v2<32>")
            .replace("reduce_sum<256>", "reduce_sum_v2<256>")
    });
    let r = check(
        |s| {
            s.replace(
                "    flops: 2*n*n*n\n",
                "    flops: 2*n*n*n\n    allow_missing: true\n",
            )
        },
        rec2.path(),
        &baselines(),
        &[],
    );
    assert_eq!(r.code, 1, "{}", r.out);
}

#[test]
fn allow_missing_must_be_a_boolean_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let spec = std::fs::read_to_string(root().join("examples/cgp-gate.yaml"))
        .unwrap()
        .replace(
            "    flops: 2*n*n*n\n",
            "    flops: 2*n*n*n\n    allow_missing: yes please\n",
        );
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, spec).unwrap();
    let out = bin().args(["validate", "--spec"]).arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("s.yaml:29:20") && err.contains("`allow_missing`"),
        "{err}"
    );
}

#[test]
fn rows_outside_the_selection_are_not_missing() {
    let rec = renamed();
    // Another target only: matmul's baseline rows are not expected.
    let r = check(same, rec.path(), &baselines(), &["--target", "vector_add"]);
    assert_eq!(r.code, 0, "{}", r.out);
    assert!(verdicts(&r.results, "matmul").is_empty());
    // Shards: the shards without matmul pass, the shard with it fails.
    let mut codes = Vec::new();
    for k in 1..=3 {
        let r = check(same, rec.path(), &baselines(), &["--shard", &format!("{k}/3")]);
        let has_matmul = !verdicts(&r.results, "matmul").is_empty();
        codes.push((has_matmul, r.code));
        if has_matmul {
            assert_eq!(r.code, 1, "{}", r.out);
        } else {
            assert_eq!(r.code, 0, "{}", r.out);
        }
    }
    assert!(codes.iter().any(|(m, _)| *m), "some shard runs matmul: {codes:?}");
    assert!(codes.iter().any(|(m, _)| !*m), "some shard does not: {codes:?}");
    // A size removed from the spec is an explicit opt-out.
    let r = check(
        |s| {
            s.replace(
                "      - { n: 512 }\n      - { n: 1024 }\n",
                "      - { n: 512 }\n",
            )
        },
        Path::new(&root().join("examples/recordings/pr-same")),
        &baselines(),
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.out);
    assert!(verdicts(&r.results, "matmul").contains(&"missing"));
}

#[test]
fn replay_applies_the_specs_kernel_filter() {
    // Every vector_add repetition gains launches of a kernel the filter `vector_add` excludes.
    let rec = edited_recording("examples/recordings/pr-same", |p, t| {
        if !p.to_string_lossy().contains("vector_add") {
            return t;
        }
        let mut out = String::new();
        for line in t.lines() {
            out.push_str(line);
            out.push('\n');
            if line.starts_with("\"0\",") {
                out.push_str(
                    &line
                        .replace("\"vector_add(", "\"memset_helper(")
                        .replacen("\"0\"", "\"99\"", 1),
                );
                out.push('\n');
            }
        }
        out
    });
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_eq!(r.code, 0, "{}", r.out);
    let kernels: Vec<&str> = r.results["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["kernel"].as_str().unwrap())
        .collect();
    assert!(
        !kernels.iter().any(|k| k.contains("memset_helper")),
        "{kernels:?}"
    );
    // A filter that matches nothing recorded is a no-kernels error naming what was recorded.
    let r = check(
        |s| s.replace("    kernel: vector_add\n", "    kernel: vector_addx\n"),
        rec.path(),
        &baselines(),
        &["--target", "vector_add"],
    );
    assert_eq!(r.code, 3, "{}", r.out);
    assert!(
        r.out.contains("matched none of the kernels recorded"),
        "{}",
        r.out
    );
    assert!(r.out.contains("memset_helper"), "{}", r.out);
}
