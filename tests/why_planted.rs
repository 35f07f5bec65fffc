//! The why on the REAL H100 planted regressions (tests/fixtures/h100-planted, trimmed from
//! ../shared/gpu/h100-2026-11-24/validation-planted: see its README), where the cause is known:
//! `EXTRA_WORK_PCT=3` and `=10` give every thread more work (vector_add also launches more
//! blocks), `BAD_LAUNCH=1` changes every kernel's grid and block. Each reading must follow from
//! the numbers it shows, with each counter's direction right, and a changed launch configuration
//! must be the first reading.

use std::path::PathBuf;

use serde_json::Value;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/h100-planted")
        .join(rel)
}

/// `check` on one planted build's recording; the results JSON and the console text.
fn check(build: &str) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = crate::support::bin()
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .args(["check", "--no-skip", "--color", "never", "--replay"])
        .arg(fixture(build))
        .arg("--spec")
        .arg(fixture("check.yaml"))
        .arg("--baselines")
        .arg(fixture("baselines"))
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let r = serde_json::from_str(&std::fs::read_to_string(&json).expect(&text)).unwrap();
    (r, text)
}

/// The why of a target's timing row.
fn why<'a>(r: &'a Value, target: &str) -> &'a Value {
    let row = r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["target"] == target && x["metric"] == "gpu__time_duration.sum")
        .unwrap_or_else(|| panic!("no time row for {target}"));
    &row["why"]
}

fn reading<'a>(r: &'a Value, target: &str) -> &'a str {
    why(r, target)["reading"]
        .as_str()
        .unwrap_or_else(|| panic!("no why for {target}: {r}"))
}

/// Every throughput counter the why names is read in the direction it moved: a higher share of
/// peak is never "less per cycle", a lower one never "more per cycle" or "more ... work".
fn directions_are_right(r: &Value) {
    for row in r["rows"].as_array().unwrap() {
        let Some(text) = row["why"]["reading"].as_str() else {
            continue;
        };
        for c in row["why"]["changed"].as_array().unwrap() {
            let metric = c["metric"].as_str().unwrap();
            let name = if metric.starts_with("sm__throughput") {
                "SM throughput"
            } else if metric.starts_with("dram__throughput") {
                "DRAM throughput"
            } else {
                continue;
            };
            let up = c["candidate"].as_f64().unwrap() > c["baseline"].as_f64().unwrap();
            let Some(part) = text.split("; ").find(|p| p.starts_with(name)) else {
                continue;
            };
            if up {
                assert!(part.contains(&format!("{name} +")), "{text}");
                assert!(!part.contains("less per cycle"), "{text}");
            } else {
                assert!(part.contains(&format!("{name} -")), "{text}");
                assert!(
                    !part.contains("more per cycle") && !part.contains(" more "),
                    "{text}"
                );
            }
        }
    }
}

#[test]
fn extra_work_3_pct_reads_more_work_not_slower_sms() {
    let (r, text) = check("extra3");
    // matmul: time +4.0%, SM throughput 71.18% -> 72.00% of peak: more work at a higher rate.
    // (Medians of the launches after each run's warm-up launch, docs/statistics.md 2.5.)
    let m = reading(&r, "matmul");
    assert_eq!(
        m, "SM throughput +1.1% (71.18% -> 72.00% of peak), time +4.0%: about 5.1% more SM work",
        "{text}"
    );
    // vector_add: the extra work launches more blocks; the launch first, then the bytes.
    let v = reading(&r, "vector_add");
    assert_eq!(
        v,
        "launch configuration changed: grid (65536, 1, 1) block (256, 1, 1) -> grid (67503, 1, 1) block (256, 1, 1); \
         +3.0% DRAM bytes: more memory traffic",
        "{text}"
    );
    // reduce: its one counter (DRAM throughput) did not move beyond its noise.
    assert!(
        reading(&r, "reduce").starts_with("no explanatory counter changed"),
        "{text}"
    );
    assert!(text.contains(&format!("why matmul[n=1024] time: {m}")), "{text}");
    directions_are_right(&r);
}

#[test]
fn extra_work_10_pct_reads_more_work() {
    let (r, text) = check("extra10");
    let m = reading(&r, "matmul");
    assert!(
        m.starts_with("SM throughput +2.9% (71.18% -> 73.27% of peak), time +11%: about"),
        "{text}"
    );
    assert!(m.ends_with("more SM work"), "{m}");
    let d = reading(&r, "reduce");
    assert!(
        d.starts_with("DRAM throughput +1.9% (77.90% -> 79.37% of peak), time +8.1%: about"),
        "{d}"
    );
    assert!(d.ends_with("more DRAM traffic"), "{d}");
    assert!(
        reading(&r, "vector_add").starts_with(
            "launch configuration changed: grid (65536, 1, 1) block (256, 1, 1) -> grid (72090, 1, 1)"
        ),
        "{text}"
    );
    directions_are_right(&r);
}

#[test]
fn bad_launch_reads_the_launch_configuration_first() {
    let (r, text) = check("badlaunch");
    let v = reading(&r, "vector_add");
    assert_eq!(
        v,
        "launch configuration changed: grid (65536, 1, 1) block (256, 1, 1) -> grid (524288, 1, 1) block (32, 1, 1)",
        "{text}"
    );
    let m = reading(&r, "matmul");
    assert!(
        m.starts_with("launch configuration changed: grid (32, 32, 1) block (32, 32, 1) -> grid (128, 128, 1) block (8, 8, 1); "),
        "{m}"
    );
    assert!(
        m.ends_with("SM throughput -48% (71.18% -> 37.34% of peak), time +144%: the SMs do less per cycle"),
        "{m}"
    );
    let d = reading(&r, "reduce");
    assert!(
        d.starts_with("launch configuration changed: grid (1056, 1, 1) block (256, 1, 1) -> grid (132, 1, 1) block (64, 1, 1); "),
        "{d}"
    );
    assert!(
        d.contains("DRAM throughput -88% (77.90% -> 9.05% of peak)"),
        "{d}"
    );
    assert!(
        !text.contains("look at clocks, the input or the launch order"),
        "{text}"
    );
    directions_are_right(&r);
}
