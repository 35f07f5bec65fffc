//! `cgp-gate env` and ncu discovery, end to end through the binary. NVML is forced to be
//! unavailable with `CGP_GATE_NVML_LIB` pointing nowhere, so these behave the same on machines
//! with and without a driver.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use assert_cmd::Command;

/// Tests here write scripts and run processes; running them one at a time keeps a script that
/// is being written from being held open by another test's fork ("text file busy").
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

const NO_NVML: &str = "/nonexistent/libnvidia-ml.so.1";

/// A stand-in `ncu` that answers `--version` as ncu 2025.1 does, only under `LC_ALL=C`.
fn fake_ncu(dir: &Path, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("ncu");
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

const NCU_2025: &str = r#"[ "$1" = "--version" ] && [ "$LC_ALL" = "C" ] || exit 9
echo "NVIDIA (R) Nsight Compute Command Line Profiler"
echo "Copyright (c) 2018-2025 NVIDIA Corporation"
echo "Version 2025.1.1.0 (build 35528883) (public-release)""#;

fn env_cmd(ncu: &Path) -> Command {
    let mut c = crate::support::bin();
    c.arg("env")
        .env("CGP_GATE_NVML_LIB", NO_NVML)
        .env("CGP_GATE_NCU", ncu);
    c
}

#[test]
fn env_without_driver_prints_one_clear_line_and_exits_0() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let ncu = fake_ncu(dir.path(), NCU_2025);
    let out = env_cmd(&ncu).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0], format!("ncu: 2025.1.1.0 ({})", ncu.display()));
    assert!(
        lines[1].starts_with("nvml: no NVIDIA driver found (NVML could not be loaded: "),
        "{text}"
    );
    assert!(lines[1].contains(NO_NVML), "{text}");
    assert!(
        lines[1].ends_with("; GPU fingerprint, clock locking and health sampling are unavailable"),
        "{text}"
    );
}

#[test]
fn env_json_without_driver() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let ncu = fake_ncu(dir.path(), NCU_2025);
    let out = env_cmd(&ncu).arg("--json").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ncu"]["version"], "2025.1.1.0");
    assert_eq!(v["ncu"]["path"], ncu.display().to_string());
    assert_eq!(v["nvml"]["available"], false);
    assert_eq!(v["nvml"]["gpus"], serde_json::json!([]));
    assert!(
        v["nvml"]["error"]
            .as_str()
            .unwrap()
            .starts_with("no NVIDIA driver found")
    );
}

#[test]
fn reset_clocks_without_driver_exits_3() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let ncu = fake_ncu(dir.path(), NCU_2025);
    for extra in [&["--reset-clocks"][..], &["--reset-clocks", "--dry-run"][..]] {
        let out = env_cmd(&ncu).args(extra).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{extra:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.starts_with("error: cannot reset GPU clocks: no NVIDIA driver found"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn dry_run_needs_reset_clocks() {
    let _s = serial();
    let out = crate::support::bin().args(["env", "--dry-run"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--reset-clocks"));
}

#[test]
fn ncu_problems_are_reported_not_fatal() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-ncu");
    let out = env_cmd(&missing).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        format!(
            "ncu: CGP_GATE_NCU={} does not name an executable file",
            missing.display()
        )
    );

    let broken = fake_ncu(dir.path(), "echo 'something else'");
    let out = env_cmd(&broken).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        format!(
            "ncu: {0}: version unknown (`{0} --version` printed no `Version X.Y.Z` line)",
            broken.display()
        )
    );
}

#[test]
fn ncu_version_times_out_and_reports_failures() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let slow = fake_ncu(dir.path(), "sleep 30");
    let err = cgp_profile::ncu::install::ncu_version(&slow, Duration::from_millis(300)).unwrap_err();
    assert_eq!(
        err,
        format!("`{} --version` did not finish within 0.3 s", slow.display())
    );
    let failing = fake_ncu(dir.path(), "exit 4");
    let err = cgp_profile::ncu::install::ncu_version(&failing, Duration::from_secs(10)).unwrap_err();
    assert!(err.contains("--version` failed (exit status: 4)"), "{err}");
    let good = fake_ncu(dir.path(), NCU_2025);
    assert_eq!(
        cgp_profile::ncu::install::ncu_version(&good, Duration::from_secs(10)).as_deref(),
        Ok("2025.1.1.0")
    );
}

#[test]
fn open_fails_with_one_clear_line_or_works() {
    // On a machine without a driver (CI, this project's build machine) open() must say why in
    // one line; with a driver it returns a GPU. Either way: no panic.
    match cgp_profile::gpu::open() {
        Ok(gpu) => assert!(gpu.device_count().is_ok()),
        Err(e) => {
            let s = e.to_string();
            assert!(!s.contains('\n'), "{s}");
            assert!(
                s.starts_with("no NVIDIA driver found (NVML could not be loaded: ")
                    || s.starts_with("NVIDIA driver not usable (NVML failed to initialise: "),
                "{s}"
            );
        }
    }
}
