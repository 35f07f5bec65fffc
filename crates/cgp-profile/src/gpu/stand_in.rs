//! A SYNTHETIC stand-in GPU for the live paths' tests (issue 44, "the hostile kit went stale"):
//! with `CGP_GATE_STAND_IN_GPU=<file.json>`, [`super::open`] returns a [`FakeGpu`] described by
//! that file instead of opening NVML, so a live `check` on a machine without a GPU passes the
//! preflight and reaches the program, the profiler, the signals and the clock guard, as it would
//! on the GPU runner. Nothing it reports is read from hardware: every run that uses it says so on
//! stderr, and its driver version reads `stand-in` unless the file names one.
//!
//! The file (every key but `devices` optional; `note` says what the file is, and is ignored):
//!
//! ```json
//! { "devices": ["NVIDIA H100 80GB HBM3"], "driver_version": "535.104.05",
//!   "counters_admin_only": false, "call_log": "calls.log" }
//! ```
//!
//! `call_log` (relative to the file's folder) receives every call that would change the GPU
//! (clock locks and resets), one per line, as it happens: what a test reads to prove that a killed
//! run restored the clocks.

use std::path::Path;

use serde::Deserialize;

use super::{FakeDevice, FakeGpu, Gpu, GpuUnavailable};

/// The variable naming the stand-in's description.
pub const STAND_IN_ENV: &str = "CGP_GATE_STAND_IN_GPU";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Description {
    /// What the file is, for its readers; ignored.
    #[serde(default, rename = "note")]
    _note: Option<String>,
    devices: Vec<String>,
    #[serde(default)]
    driver_version: Option<String>,
    #[serde(default)]
    counters_admin_only: Option<bool>,
    #[serde(default)]
    call_log: Option<String>,
}

fn unavailable(path: &Path, why: &str) -> GpuUnavailable {
    GpuUnavailable {
        reason: format!(
            "the stand-in GPU of {STAND_IN_ENV}={} {why}; unset {STAND_IN_ENV} to use the real GPU",
            path.display()
        ),
        driver_present: false,
    }
}

/// The stand-in GPU `path` describes.
///
/// # Errors
/// A file that cannot be read or does not describe at least one device, as a [`GpuUnavailable`]
/// naming the variable (the run then fails its preflight, exit 3).
pub fn open(path: &Path) -> Result<Box<dyn Gpu>, GpuUnavailable> {
    let text = cgp_core::foundation::fsutil::read_text(path, 64 * 1024)
        .map_err(|e| unavailable(path, &e.message("stand-in description")))?;
    let d: Description = serde_json::from_str(&text)
        .map_err(|e| unavailable(path, &format!("is not a stand-in description: {e}")))?;
    if d.devices.is_empty() {
        return Err(unavailable(path, "lists no device"));
    }
    let mut gpu = FakeGpu::new(d.devices.iter().map(|n| FakeDevice::new(n)).collect());
    gpu.driver_version = d.driver_version.unwrap_or_else(|| "stand-in".to_owned());
    gpu.counters_admin_only = d.counters_admin_only;
    gpu.stand_in = true;
    if let Some(log) = d.call_log {
        let log = path.parent().unwrap_or(Path::new(".")).join(log);
        gpu = gpu.with_call_log(&log).map_err(|e| {
            unavailable(
                path,
                &format!("cannot append to its call log {}: {e}", log.display()),
            )
        })?;
    }
    cgp_core::foundation::sanitize::eprint_line(&format!(
        "cgp-gate: using the SYNTHETIC stand-in GPU of {STAND_IN_ENV}={} ({}); nothing is read from hardware",
        path.display(),
        d.devices.join(", ")
    ));
    Ok(Box::new(gpu))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(text: &str) -> (tempfile::TempDir, Result<Box<dyn Gpu>, GpuUnavailable>) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("gpu.json");
        std::fs::write(&p, text).unwrap();
        let gpu = open(&p);
        (dir, gpu)
    }

    #[test]
    fn a_description_becomes_a_gpu_that_logs_what_it_is_asked_to_change() {
        let (dir, gpu) = described(
            r#"{"devices": ["NVIDIA H100 80GB HBM3"], "counters_admin_only": true, "call_log": "calls.log"}"#,
        );
        let gpu = gpu.unwrap();
        assert_eq!(gpu.device_count(), Ok(1));
        assert_eq!(gpu.name(0).unwrap(), "NVIDIA H100 80GB HBM3");
        assert_eq!(gpu.driver_version().unwrap(), "stand-in");
        assert_eq!(gpu.counters_admin_only(), Ok(Some(true)));
        gpu.set_locked_sm_clocks(0, 1590, 1590).unwrap();
        let log = std::fs::read_to_string(dir.path().join("calls.log")).unwrap();
        assert_eq!(log, "set_locked_sm_clocks(0, 1590, 1590)\n");
    }

    #[test]
    fn a_bad_description_is_unavailable_and_names_the_variable() {
        for bad in [
            "",
            "{}",
            r#"{"devices": []}"#,
            r#"{"devices": ["x"], "colour": 1}"#,
        ] {
            let (_dir, gpu) = described(bad);
            let e = gpu.err().unwrap_or_else(|| panic!("{bad:?} opened"));
            assert!(e.reason.contains(STAND_IN_ENV), "{bad:?}: {e}");
            assert!(e.reason.contains("unset"), "{bad:?}: {e}");
        }
    }
}
