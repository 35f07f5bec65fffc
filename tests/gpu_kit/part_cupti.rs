//! The kit's `--part cupti` without a GPU: its plan fits one device call, and with the real
//! nvcc, ncu, driver and libcupti every command line runs and the script stops at the first
//! cgp-gate run.

use std::path::Path;
use std::process::Command;

use super::{read_json, script, standins, tool};
use crate::support;

#[test]
fn part_cupti_plans_within_one_device_call() {
    let dir = tempfile::tempdir().unwrap();
    let o = script()
        .args(["--dry-run", "--part", "cupti"])
        .arg(dir.path())
        .env("NVIDIA_SMI", standins().join("nvidia-smi"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("plan (part cupti; 3 rows, PyTorch)"), "{text}");
    assert!(
        text.contains("builds:               plain extra3 extra10"),
        "{text}"
    );
    assert!(
        text.contains("5 processes each alone, under cupti, under ncu"),
        "{text}"
    );
    assert!(
        text.contains("10 per build (plain, extra3, extra10), one process per row"),
        "{text}"
    );
    // The estimate is labelled as one, and fits the part's 540 s budget.
    let secs: u32 = text
        .split("ESTIMATE:             about ")
        .nth(1)
        .and_then(|t| t.split('s').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(secs < 540, "{text}");
    assert!(text.contains("dry run: nothing was built or measured"), "{text}");
    assert!(
        !dir.path().join("work/builds").exists(),
        "a dry run built something"
    );
}

/// `--part cupti` with the real nvcc, ncu, CUDA driver library and libcupti, and no GPU: every
/// command line runs for real (the program alone, under CUPTI with the environment `profile
/// --dry-run` prints, under ncu), the real driver loads the injection library and CUPTI answers
/// CUPTI_ERROR_NOT_INITIALIZED into the trace; the script stops at the first cgp-gate run with a
/// clear message and packs what it has.
#[test]
fn part_cupti_runs_every_command_line_for_real_and_stops_without_a_gpu() {
    let test = "part_cupti_runs_every_command_line_for_real_and_stops_without_a_gpu";
    let (Some(_), Some(real_ncu)) = (tool(test, "nvcc"), tool(test, "ncu")) else {
        return;
    };
    if Path::new("/dev/nvidia0").exists() {
        support::skip(test, "a GPU is present: run the part itself");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let o = script()
        .args([
            "--synthetic",
            "real tools without a GPU (tests/gpu_kit/part_cupti.rs)",
            "--part",
            "cupti",
            "--cupti-checks",
            "1",
            "--cupti-processes",
            "2",
            "--jobs",
            "2",
        ])
        .arg(dir.path())
        .env("CGP_GATE_NCU", &real_ncu)
        .env("NVIDIA_SMI", standins().join("nvidia-smi"))
        .output()
        .unwrap();
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    if out.contains("no libcupti found") {
        support::skip(test, "libcupti not installed (.ci/setup installs libcupti 11.8)");
        return;
    }
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("cupti 1/3 wall time: 3 rows x 2 processes"), "{out}");
    assert!(
        out.contains("the cupti baseline recording failed (exit 3"),
        "{out}"
    );
    let cupti = dir.path().join("work/cupti");
    let wall = read_json(&cupti.join("wall.json"));
    for row in ["vector_add", "matmul", "reduce"] {
        assert_eq!(wall[row]["cupti"].as_array().map(Vec::len), Some(2), "{wall}");
        // Without a GPU each program fails at its first CUDA call, in every mode.
        assert!(
            wall[row]["exit_codes"]["alone"][0]
                .as_i64()
                .is_some_and(|c| c != 0),
            "{wall}"
        );
        let trace = std::fs::read_to_string(cupti.join(format!("traces/{row}-0.cupti"))).unwrap();
        assert!(trace.contains("CUPTI_ERROR_NOT_INITIALIZED"), "{trace}");
        let ncu_log = std::fs::read_to_string(cupti.join(format!("logs/{row}-ncu-0.log"))).unwrap();
        assert!(
            ncu_log.contains("--clock-control none") && ncu_log.contains(&format!("./build/{row}")),
            "{ncu_log}"
        );
    }
    let record = std::fs::read_to_string(cupti.join("logs/baseline-record.log")).unwrap();
    assert!(record.contains("CUPTI refused to start"), "{record}");
    let list = Command::new("tar")
        .arg("-tzf")
        .arg(dir.path().join("validation-cupti.tar.gz"))
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(list.lines().any(|l| l == "./cupti/wall.json"), "{list}");
    assert!(
        list.lines().any(|l| l == "./cupti/traces/vector_add-0.cupti"),
        "{list}"
    );
}
