//! The installed Nsight Compute: where it is (`$CGP_GATE_NCU`, `PATH`, the CUDA toolkit's place)
//! and the version it reports. The live profiler and `cgp-gate env` both ask here.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::runner::{Invocation, find_executable, run};
use super::version::parse_version;

/// Environment variable naming the ncu executable (otherwise `ncu` on `PATH`).
pub const NCU_ENV: &str = "CGP_GATE_NCU";

/// How long `ncu --version` may take.
pub const NCU_VERSION_TIMEOUT: Duration = Duration::from_secs(20);

/// Where ncu is and what version it reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NcuInfo {
    pub path: Option<String>,
    pub version: Option<String>,
    /// Why the version is unknown, when it is.
    pub error: Option<String>,
}

/// Where ncu is: `$CGP_GATE_NCU` when set (a path, or a name looked up on `PATH`), else `ncu` on
/// `PATH`, else the CUDA toolkit's default place.
pub fn locate_ncu() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(NCU_ENV).filter(|v| !v.is_empty()) {
        return find_executable(&p.to_string_lossy(), std::env::var_os("PATH").as_deref());
    }
    find_executable("ncu", std::env::var_os("PATH").as_deref())
        .or_else(|| find_executable("/usr/local/cuda/bin/ncu", None))
}

/// Find ncu ([`locate_ncu`]) and ask its version.
pub fn detect_ncu() -> NcuInfo {
    let Some(path) = locate_ncu() else {
        let why = match std::env::var_os(NCU_ENV).filter(|v| !v.is_empty()) {
            Some(v) => format!(
                "{NCU_ENV}={} does not name an executable file",
                v.to_string_lossy()
            ),
            None => format!("not found on PATH; install Nsight Compute or set {NCU_ENV} to the ncu binary"),
        };
        return NcuInfo {
            path: None,
            version: None,
            error: Some(why),
        };
    };
    let shown = path.display().to_string();
    match ncu_version(&path, NCU_VERSION_TIMEOUT) {
        Ok(v) => NcuInfo {
            path: Some(shown),
            version: Some(v),
            error: None,
        },
        Err(e) => NcuInfo {
            path: Some(shown),
            version: None,
            error: Some(e),
        },
    }
}

/// Run `<ncu> --version` (argv, `LC_ALL=C`) and parse it, killing it after `timeout`.
///
/// # Errors
/// A one-line reason: it did not start, timed out, failed, or printed no version line.
pub fn ncu_version(ncu: &Path, timeout: Duration) -> std::result::Result<String, String> {
    let work = tempfile::tempdir().map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let inv = Invocation {
        program: ncu.to_path_buf(),
        args: vec!["--version".into()],
        cwd: None,
        env: std::collections::BTreeMap::new(),
        timeout,
        stdout: work.path().join("stdout"),
        stderr: work.path().join("stderr"),
    };
    let outcome = run(&inv).map_err(|e| format!("cannot run `{} --version`: {e}", ncu.display()))?;
    if outcome.timed_out {
        return Err(format!(
            "`{} --version` did not finish within {} s",
            ncu.display(),
            timeout.as_secs_f64()
        ));
    }
    match (outcome.code, outcome.signal) {
        (Some(0), _) => {}
        (Some(code), _) => {
            return Err(format!(
                "`{} --version` failed (exit status: {code})",
                ncu.display()
            ));
        }
        (None, signal) => {
            return Err(format!(
                "`{} --version` failed (signal: {})",
                ncu.display(),
                signal.unwrap_or(0)
            ));
        }
    }
    let text = std::fs::read_to_string(&inv.stdout).unwrap_or_default();
    parse_version(&text)
        .ok_or_else(|| format!("`{} --version` printed no `Version X.Y.Z` line", ncu.display()))
}
