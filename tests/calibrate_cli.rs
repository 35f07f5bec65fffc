//! `cgp-gate calibrate` end to end on the example recordings (SYNTHETIC data made by
//! examples/synthesize_recording.rs; two independent A/A recordings of unchanged code).

use std::path::Path;

use crate::support::root;
use assert_cmd::Command;
use serde_json::Value;

fn calibrate(spec: &Path, recording: &str, dir: &Path, extra: &[&str]) -> (Value, String, String) {
    let json = dir.join("cal.json");
    let md = dir.join("cal.md");
    let out = Command::cargo_bin("cgp-gate")
        .unwrap()
        .current_dir(root())
        .args(["calibrate", "--spec"])
        .arg(spec)
        .arg("--replay")
        .arg(root().join(recording))
        .arg("--json")
        .arg(&json)
        .arg("--markdown")
        .arg(&md)
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    (v, std::fs::read_to_string(md).unwrap(), stdout)
}

fn find<'a>(v: &'a Value, target: &str, size: &str, metric: &str) -> &'a Value {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["target"] == target && r["size"] == size && r["metric"] == metric)
        .unwrap_or_else(|| panic!("no row {target} {size} {metric}"))
}

#[test]
fn calibrates_every_metric_of_an_aa_recording() {
    let spec = root().join("examples/cgp-gate.yaml");
    {
        let rec = "examples/recordings/main";
        let dir = tempfile::tempdir().unwrap();
        let (v, md, stdout) = calibrate(&spec, rec, dir.path(), &[]);
        // The terminal gets a table, the file Markdown (issue 24).
        assert!(
            md.starts_with("### cgp-gate calibrate") && md.contains("| target | size |"),
            "{md}"
        );
        assert!(!stdout.contains('|') && !stdout.contains("###"), "{stdout}");
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("target ") && l.contains("suggested")),
            "{stdout}"
        );
        assert!(md.contains("SYNTHETIC"), "{md}");
        let rows = v["rows"].as_array().unwrap();
        // 16 judged series in the example spec (as `check` judges them).
        assert_eq!(rows.len(), 16, "{rec}");
        for r in rows {
            for key in [
                "target",
                "size",
                "kernel",
                "metric",
                "cv",
                "min_detectable",
                "suggested_threshold",
            ] {
                assert!(r.get(key).is_some(), "{key} missing in {r}");
            }
            assert_eq!(r["repetitions"], 10, "every recorded repetition is used: {r}");
        }
        // A noisy duration: CV about 1 %, a suggested threshold under the spec's 3 %, and a
        // smallest detectable slowdown above the threshold (the gate needs a margin).
        let d = find(&v, "reduce", "n=16777216", "gpu__time_duration.sum");
        let cv = d["cv"].as_f64().unwrap();
        assert!(cv > 0.001 && cv < 0.03, "{d}");
        let s = d["suggested_threshold"].as_f64().unwrap();
        assert!(s > 0.0 && s < 0.03, "{d}");
        let m = d["min_detectable"].as_f64().unwrap();
        assert!(m > 0.03 && m < 0.1, "{d}");
        assert_eq!(d["below_detectable"], false);
        // min_effect stays absolute: matmul's 1 us on a ~400 us kernel adds nothing.
        let mm = find(&v, "matmul", "n=512", "gpu__time_duration.sum");
        assert!(mm["min_detectable"].as_f64().unwrap() < 0.1, "{mm}");
        // Deterministic counters and limits.
        let regs = find(&v, "matmul", "n=512", "launch__registers_per_thread");
        assert_eq!(regs["deterministic"], true);
        assert_eq!(regs["cv"].as_f64(), Some(0.0));
        let lim = find(
            &v,
            "matmul",
            "n=512",
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        );
        assert!(lim["min_detectable"].is_null() && lim["suggested_threshold"].is_null());
    }
}

#[test]
fn a_threshold_below_the_noise_is_flagged_with_the_repetitions_it_needs() {
    let dir = tempfile::tempdir().unwrap();
    let spec = std::fs::read_to_string(root().join("examples/cgp-gate.yaml"))
        .unwrap()
        .replace(
            "gpu__time_duration.sum: \"3%\"",
            "gpu__time_duration.sum: \"0.2%\"",
        );
    let path = dir.path().join("cgp-gate.yaml");
    std::fs::write(&path, spec).unwrap();
    // The other A/A recording, one target (the simulation is slow in a debug build).
    let (v, md, _) = calibrate(
        &path,
        "examples/recordings/pr-same",
        dir.path(),
        &["--target", "reduce"],
    );
    assert_eq!(v["rows"].as_array().unwrap().len(), 2);
    let d = find(&v, "reduce", "n=16777216", "gpu__time_duration.sum");
    assert_eq!(d["below_detectable"], true, "{d}");
    let need = d["repetitions_needed"].as_u64().unwrap();
    assert!(need > 5, "{d}");
    assert!(d["note"].as_str().unwrap().contains("raise the threshold"), "{d}");
    assert!(md.contains("⚠"), "{md}");
    // Its other metric keeps its 5 % and is not flagged.
    assert_eq!(
        find(
            &v,
            "reduce",
            "n=16777216",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed"
        )["below_detectable"],
        false
    );
}
