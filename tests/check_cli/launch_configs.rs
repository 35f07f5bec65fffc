//! Launch configurations: a kernel whose configuration changed stays one series and the change is
//! reported; two configurations in one repetition are two series in every report.

use super::*;

/// Issue 11, item 9: a kernel whose single launch configuration changed between baseline and
/// candidate stays one series (compared, not `new` + `missing`), and the change is on the row in
/// the results JSON and in every report. The candidate is a copy of the pr-same recording
/// (SYNTHETIC) with matmul's grid at n=1024 changed from (32, 32, 1) to (64, 16, 1).
#[test]
fn a_changed_launch_configuration_stays_one_series_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("baselines");
    update_from_recording(&root().join("examples/recordings/main"), &store).code(0);
    let stored = std::fs::read_to_string(store.join("synthetic-gpu-no-hardware/matmul.json")).unwrap();
    assert!(
        stored.contains(r#""configs": ["grid (32, 32, 1) block (32, 32, 1)"]"#),
        "the baseline records the configuration: {stored}"
    );
    let rec = dir.path().join("rec");
    copy_dir(&root().join("examples/recordings/pr-same"), &rec);
    for rep in 0..10 {
        let p = rec.join(format!("matmul/n=1024/{rep}.csv"));
        let t = std::fs::read_to_string(&p).unwrap();
        let changed = t.replace(r#""(32, 32, 1)","(32, 32, 1)""#, r#""(32, 32, 1)","(64, 16, 1)""#);
        assert_ne!(t, changed, "rep {rep} has the grid column");
        std::fs::write(&p, changed).unwrap();
    }
    let p = |n: &str| dir.path().join(n);
    let (code, r, out) = check(
        rec.to_str().unwrap(),
        &store,
        &[
            "--junit",
            p("junit.xml").to_str().unwrap(),
            "--markdown",
            p("report.md").to_str().unwrap(),
            "--html",
            p("report.html").to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "the same timings under another grid still pass: {out}");
    let all = r["rows"].as_array().unwrap();
    assert!(
        all.iter()
            .all(|row| row["verdict"] != "new" && row["verdict"] != "missing"),
        "no kernel became new or missing: {all:?}"
    );
    assert!(
        all.iter()
            .all(|row| !row["kernel"].as_str().unwrap().contains("[grid"))
    );
    let time = rows(&r, "matmul", "n=1024", "gpu__time_duration.sum");
    assert_eq!(time.len(), 1, "one series: {time:?}");
    assert_eq!(time[0]["kernel"], "void matmul_tiled<32>");
    assert_eq!(time[0]["verdict"], "pass");
    assert_eq!(
        time[0]["config_change"],
        serde_json::json!({
            "baseline": ["grid (32, 32, 1) block (32, 32, 1)"],
            "candidate": ["grid (64, 16, 1) block (32, 32, 1)"]
        })
    );
    // Every metric row of that kernel says so; rows of the unchanged size do not.
    for row in all.iter().filter(|row| row["target"] == "matmul") {
        assert_eq!(row["config_change"].is_object(), row["size"] == "n=1024", "{row}");
    }
    let change = "grid (32, 32, 1) block (32, 32, 1) -> grid (64, 16, 1) block (32, 32, 1)";
    assert!(
        out.contains("launch configuration changed") && out.contains(change),
        "console: {out}"
    );
    let md = std::fs::read_to_string(p("report.md")).unwrap();
    assert!(md.contains("Launch configuration changed"), "{md}");
    // Markdown escapes the parentheses' neighbours but not the digits: look for the grid.
    assert!(md.contains("64, 16, 1"), "{md}");
    let html = std::fs::read_to_string(p("report.html")).unwrap();
    assert!(
        html.contains("launch configuration changed since the baseline")
            && html.contains(&change.replace('>', "&gt;")),
        "{html}"
    );
    let junit = std::fs::read_to_string(p("junit.xml")).unwrap();
    assert!(
        junit.contains(r#"name="config_candidate" value="grid (64, 16, 1) block (32, 32, 1)""#),
        "{junit}"
    );
    // A baseline made from these results keeps the new configuration.
    let from = dir.path().join("from-results");
    let json = dir.path().join("r.json");
    std::fs::write(&json, serde_json::to_string(&r).unwrap()).unwrap();
    bin()
        .args(["baseline", "update", "--spec", "examples/cgp-gate.yaml", "--from"])
        .arg(&json)
        .arg("--baselines")
        .arg(&from)
        .env("CGP_GATE_NCU", "/nonexistent/ncu")
        .assert()
        .code(0);
    let stored = std::fs::read_to_string(from.join("synthetic-gpu-no-hardware/matmul.json")).unwrap();
    assert!(
        stored.contains(r#""configs": ["grid (64, 16, 1) block (32, 32, 1)"]"#),
        "{stored}"
    );
}

/// Issue 11, item 9: when one repetition launches a kernel with two configurations, `check`
/// keeps two series (name plus configuration) and every report names them. The candidate is a
/// copy of the pr-same recording (SYNTHETIC) whose matmul at n=1024 alternates two grids.
#[test]
fn two_configurations_in_one_repetition_are_two_series_in_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    copy_dir(&root().join("examples/recordings/pr-same"), &rec);
    for rep in 0..10 {
        let p = rec.join(format!("matmul/n=1024/{rep}.csv"));
        let mut second = false;
        let t: String = std::fs::read_to_string(&p)
            .unwrap()
            .lines()
            .map(|l| {
                let mut l = l.to_owned();
                if l.contains(r#""(32, 32, 1)","(32, 32, 1)""#) {
                    if second {
                        l = l.replace(r#""(32, 32, 1)","(32, 32, 1)""#, r#""(32, 32, 1)","(64, 16, 1)""#);
                    }
                    second = !second;
                }
                l + "\n"
            })
            .collect();
        std::fs::write(&p, t).unwrap();
    }
    let p = |n: &str| dir.path().join(n);
    let (_, r, out) = check(
        rec.to_str().unwrap(),
        &root().join("examples/baselines"),
        &[
            "--allow-missing",
            "--junit",
            p("junit.xml").to_str().unwrap(),
            "--markdown",
            p("report.md").to_str().unwrap(),
            "--html",
            p("report.html").to_str().unwrap(),
        ],
    );
    let time = rows(&r, "matmul", "n=1024", "gpu__time_duration.sum");
    let mut kernels: Vec<&str> = time.iter().map(|r| r["kernel"].as_str().unwrap()).collect();
    kernels.sort_unstable();
    let a = "void matmul_tiled<32> [grid (32, 32, 1) block (32, 32, 1)]";
    let b = "void matmul_tiled<32> [grid (64, 16, 1) block (32, 32, 1)]";
    assert_eq!(kernels, ["void matmul_tiled<32>", a, b], "{time:?}");
    for row in &time {
        let want = if row["kernel"] == "void matmul_tiled<32>" {
            "missing"
        } else {
            "new"
        };
        assert_eq!(row["verdict"], want, "{row}");
    }
    // The launches are split between the two series, never mixed.
    let n = |k: &str| {
        time.iter().find(|r| r["kernel"] == k).unwrap()["candidate"]["n"]
            .as_u64()
            .unwrap()
    };
    assert!(n(a) > 0 && n(b) > 0);
    assert!(
        out.contains("[grid (64, 16, 1) block (32, 32, 1)]"),
        "console: {out}"
    );
    let md = std::fs::read_to_string(p("report.md")).unwrap();
    assert!(md.contains("64, 16, 1"), "{md}");
    let html = std::fs::read_to_string(p("report.html")).unwrap();
    assert!(
        html.contains(&a.replace('<', "&lt;").replace('>', "&gt;")),
        "{html}"
    );
    let junit = std::fs::read_to_string(p("junit.xml")).unwrap();
    assert!(junit.contains("[grid (64, 16, 1) block (32, 32, 1)]"), "{junit}");
}
