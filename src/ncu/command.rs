//! The ncu argv. Never a shell string: every option is its own argument.
//!
//! Every behaviour-relevant option is passed explicitly (defaults change between ncu releases:
//! `--clock-control` went from `base` to `boost` in 2026.1), and the config file is off so a
//! `config.ncu-cfg` on the runner cannot change what is measured.

use std::ffi::OsString;
use std::path::Path;

use super::target::NcuTarget;

/// Options that shape ncu's output. Kept together so the recording and the parser agree.
pub const OUTPUT_ARGS: &[&str] = &[
    "--csv",
    "--page",
    "raw",
    "--print-units",
    "base",
    "--print-kernel-base",
    "demangled",
    "--config-file",
    "off",
    "--target-processes",
    "all",
];

/// The `--clock-control` value actually passed: `none` whenever cgp-gate locks (or must not touch)
/// the clocks itself.
pub fn clock_control_arg<'a>(target: impl Into<NcuTarget<'a>>) -> &'static str {
    let target: NcuTarget<'a> = target.into();
    target.clock_control
}

/// Everything between `ncu` and the application: options for one run of one target.
pub fn ncu_options<'a>(
    target: impl Into<NcuTarget<'a>>,
    metrics: &[String],
    log_file: &Path,
) -> Vec<OsString> {
    let target: NcuTarget<'a> = target.into();
    let mut a: Vec<OsString> = OUTPUT_ARGS.iter().map(OsString::from).collect();
    let mut push = |k: &str, v: String| {
        a.push(k.into());
        a.push(v.into());
    };
    push("--clock-control", target.clock_control.to_owned());
    push("--cache-control", target.cache_control.to_owned());
    push("--replay-mode", target.replay_mode.to_owned());
    push("--metrics", metrics.join(","));
    if let Some(k) = &target.kernel {
        // The spec names kernels by function name, so match on that; output stays demangled.
        push("--kernel-name-base", "function".to_owned());
        push("--kernel-name", k.clone());
    }
    if let Some(n) = target.launch_skip {
        push("--launch-skip", n.to_string());
    }
    if let Some(n) = target.launch_count {
        push("--launch-count", n.to_string());
    }
    if !target.nvtx.is_empty() {
        a.push("--nvtx".into());
        for e in target.nvtx {
            a.push("--nvtx-include".into());
            a.push(e.into());
        }
    }
    a.push("--log-file".into());
    a.push(log_file.as_os_str().to_owned());
    a
}

/// The options of a diagnostic run that lists the kernels an application launches: no kernel or
/// NVTX filter, one cheap metric, a bounded number of launches.
pub fn list_kernels_options<'a>(target: impl Into<NcuTarget<'a>>, log_file: &Path) -> Vec<OsString> {
    let target: NcuTarget<'a> = target.into();
    let mut a: Vec<OsString> = OUTPUT_ARGS.iter().map(OsString::from).collect();
    for (k, v) in [
        ("--clock-control", target.clock_control),
        ("--cache-control", target.cache_control),
        ("--metrics", "gpu__time_duration.sum"),
        ("--launch-count", "200"),
    ] {
        a.push(k.into());
        a.push(v.into());
    }
    a.push("--log-file".into());
    a.push(log_file.as_os_str().to_owned());
    a
}
