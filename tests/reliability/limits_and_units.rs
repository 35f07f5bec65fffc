//! Items 5, 11 and 10: limits instead of crashes, messages that say what is wrong; units,
//! negative durations and extra cells.

use super::*;

// ---- 5, 11. Limits instead of crashes; messages that say what is wrong ------------------------

fn validate(spec: &str) -> (i32, String) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("s.yaml");
    std::fs::write(&p, spec).unwrap();
    let out = bin()
        .args(["validate", "--spec"])
        .arg(&p)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn example_with(from: &str, to: &str) -> String {
    let s = std::fs::read_to_string(root().join("examples/cgp-gate.yaml")).unwrap();
    assert!(s.contains(from));
    s.replace(from, to)
}

#[test]
fn deep_or_long_flops_expressions_are_refused_not_a_stack_overflow() {
    let deep = format!("{}n{}", "(".repeat(20_000), ")".repeat(20_000));
    let (code, err) = validate(&example_with("flops: 2*n*n*n", &format!("flops: \"{deep}\"")));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("s.yaml:28:12") && err.contains("characters long"),
        "{err}"
    );
    let deep = format!("{}n{}", "(".repeat(100), ")".repeat(100));
    let (code, err) = validate(&example_with("flops: 2*n*n*n", &format!("flops: \"{deep}\"")));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nests more than 32 levels"), "{err}");
    let minus = format!("{}n", "-".repeat(500));
    let (code, err) = validate(&example_with("flops: 2*n*n*n", &format!("flops: \"{minus}\"")));
    assert_eq!(code, 2, "{err}");
    let long = vec!["n"; 50_000].join("+");
    let (code, err) = validate(&example_with("bytes: 12*n*n", &format!("bytes: {long}")));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("characters long"), "{err}");
    // The longest accepted expression still evaluates.
    let ok = vec!["n"; 400].join("+");
    let (code, err) = validate(&example_with("bytes: 12*n*n", &format!("bytes: {ok}")));
    assert_eq!(code, 0, "{err}");
}

#[test]
fn deep_yaml_nesting_is_named_as_nesting_not_aliases() {
    for spec in [
        format!("version: 1\ntargets: {}{}\n", "[".repeat(100), "]".repeat(100)),
        format!("version: 1\ntargets:\n{}x\n", "- ".repeat(5000)),
    ] {
        let (code, err) = validate(&spec);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("nests more than 64 levels"), "{err}");
        assert!(!err.contains("aliases"), "{err}");
    }
}

#[test]
fn huge_shard_counts_are_refused_with_exit_2() {
    let out = bin()
        .args([
            "check",
            "--spec",
            "examples/cgp-gate.yaml",
            "--replay",
            "examples/recordings/pr-same",
        ])
        .args(["--baselines", "examples/baselines", "--shard", "1/4294967295"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("at most 1024 shards"), "{err}");
    // A results file that claims to be one shard of billions.
    let d = tempfile::tempdir().unwrap();
    let mut r: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/fixtures/results/pass.json")).unwrap(),
    )
    .unwrap();
    r["shard"] = "1/4294967295".into();
    let p = d.path().join("r.json");
    std::fs::write(&p, serde_json::to_string(&r).unwrap()).unwrap();
    let out = bin()
        .arg("merge")
        .arg(&p)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("at most 1024 shards"), "{err}");
}

#[test]
fn infinite_and_nan_percentages_are_named_as_such() {
    for bad in ["1e400%", "inf%", "NaN%", "-inf%"] {
        let (code, err) = validate(&example_with(
            "dram__bytes_read.sum: \"1%\"",
            &format!("dram__bytes_read.sum: \"{bad}\""),
        ));
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("not a finite percentage"), "{bad}: {err}");
        assert!(!err.contains("greater than 0%"), "{bad}: {err}");
    }
}

#[test]
fn names_too_long_for_a_file_name_are_refused_by_validate() {
    let long = "t".repeat(251);
    let (code, err) = validate(&example_with("- name: reduce", &format!("- name: {long}")));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("251 bytes long") && err.contains("at most 200"),
        "{err}"
    );
    let big = "9".repeat(300);
    let (code, err) = validate(&example_with(
        "      - { n: 16777216 }",
        &format!("      - {{ n: {big} }}"),
    ));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("a size of target `reduce`") && err.contains("at most 200"),
        "{err}"
    );
}

#[test]
fn a_missing_cwd_is_named_before_anything_runs() {
    let f = Fake::new();
    let spec = FAKE_SPEC.replace("    timeout: 60s\n", "    timeout: 60s\n    cwd: build/not-yet\n");
    std::fs::write(f.path("cgp-gate.yaml"), spec).unwrap();
    let (code, out) = f.run(&["profile"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("not-yet") && out.contains("does not exist"), "{out}");
    assert!(!out.contains("Nsight Compute"), "{out}");
    assert!(
        !f.path("fake/argv.log").exists(),
        "ncu was not even asked its version"
    );
}

// ---- 10. Units, negative durations, extra cells --------------------------------------------

/// examples/baselines with `edit` applied to every entry of matmul's baseline.
fn edited_matmul_baseline(edit: impl Fn(&mut Value)) -> tempfile::TempDir {
    let store = tempfile::tempdir().unwrap();
    copy_dir(&baselines(), store.path());
    let p = store.path().join("synthetic-gpu-no-hardware/matmul.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    for e in v["entries"].as_array_mut().unwrap() {
        if e["metric"] == "gpu__time_duration.sum" {
            edit(e);
        }
    }
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    store
}

#[test]
fn a_baseline_in_another_unit_is_not_compared() {
    // The samples stay the same numbers; only the unit says microseconds.
    let store = edited_matmul_baseline(|e| e["unit"] = "us".into());
    let r = check(
        same,
        &root().join("examples/recordings/pr-same"),
        store.path(),
        &[],
    );
    // A damaged baseline is invalid input (exit 2), never a profiler failure (3) or a pass.
    assert_eq!(r.code, 2, "{}", r.out);
    for needle in [
        "matmul.json",
        "gpu__time_duration.sum",
        "matmul_tiled<32>",
        "is in `us`, but ncu measures it in `ns`",
        "cgp-gate baseline update",
    ] {
        assert!(r.out.contains(needle), "{needle} not in:\n{}", r.out);
    }
    let rows: Vec<&Value> = r.results["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["target"] == "matmul" && x["metric"] == "gpu__time_duration.sum")
        .collect();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert_eq!(row["verdict"], "error", "{row}");
        assert!(
            row["reason"]
                .as_str()
                .unwrap()
                .contains("`us` but this run measured `ns`"),
            "{row}"
        );
    }
}

#[test]
fn negative_durations_are_refused_in_baselines_and_recordings() {
    let store = edited_matmul_baseline(|e| e["samples"][0] = (-5).into());
    let r = check(
        same,
        &root().join("examples/recordings/pr-same"),
        store.path(),
        &[],
    );
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.out.contains("matmul.json") && r.out.contains("negative duration"),
        "{}",
        r.out
    );
    // In a recording: the duration cell of the first launch.
    let rec = damaged(|p| {
        let text = String::from_utf8(original_rep()).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let i = lines.iter().position(|l| l.starts_with("\"0\",")).unwrap();
        let mut cells: Vec<String> = lines[i].split("\",\"").map(str::to_owned).collect();
        let header: Vec<&str> = lines[i - 2].split("\",\"").collect();
        let col = header
            .iter()
            .position(|c| *c == "gpu__time_duration.sum")
            .unwrap();
        cells[col] = "-5,569".to_owned();
        lines[i] = cells.join("\",\"");
        std::fs::write(p, lines.join("\n") + "\n").unwrap();
    });
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.out.contains("0.csv") && r.out.contains("negative duration"),
        "{}",
        r.out
    );
}

#[test]
fn a_row_with_extra_cells_is_refused_with_its_line() {
    let rec = damaged(|p| {
        let text = String::from_utf8(original_rep()).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let i = lines.iter().position(|l| l.starts_with("\"1\",")).unwrap();
        lines[i].push_str(",\"17\",\"x\"");
        std::fs::write(p, lines.join("\n") + "\n").unwrap();
    });
    let line = String::from_utf8(original_rep())
        .unwrap()
        .lines()
        .position(|l| l.starts_with("\"1\","))
        .unwrap()
        + 1;
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.out.contains(&format!("0.csv:{line}")) && r.out.contains("more non-empty cell"),
        "{}",
        r.out
    );
}
