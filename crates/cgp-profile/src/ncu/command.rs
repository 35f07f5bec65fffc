//! The ncu argv. Never a shell string: every option is its own argument.
//!
//! Every behaviour-relevant option is passed explicitly (defaults change between ncu releases:
//! `--clock-control` went from `base` to `boost` in 2026.1), and the config file is off so a
//! `config.ncu-cfg` on the runner cannot change what is measured.

use std::ffi::OsString;
use std::path::Path;

use super::target::NcuTarget;

/// Options that shape ncu's output. Kept together so the recording and the parser agree.
/// `--config-file off` is added where the installed ncu has the option ([`output_args`]).
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

/// An ncu release, `year.minor` (`2022.3`), compared in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct NcuRelease {
    pub year: u32,
    pub minor: u32,
}

impl NcuRelease {
    /// From a version string as [`crate::ncu::version::parse_version`] returns it (`2022.3.0.0`).
    pub fn from_version(version: &str) -> Option<Self> {
        let mut parts = version.trim().split('.');
        let year = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        Some(Self { year, minor })
    }
}

impl std::fmt::Display for NcuRelease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.year, self.minor)
    }
}

/// The oldest Nsight Compute release whose command line is checked (its real `ncu --help`, in
/// `tests/ncu_real/real_ncu.rs`): Debian's `nsight-compute` 2022.3. Older releases are not known
/// to accept every option cgp-gate passes; `profile --dry-run` says so.
pub const OLDEST_CHECKED: NcuRelease = NcuRelease { year: 2022, minor: 3 };

/// Options (and option values) that not every ncu has: the first release that has each one.
///
/// Evidence, entry by entry. What is *checked*: the real `ncu --help` of 2022.3 lists none of
/// them (`--page` offers `details`, `raw`, `source`; `--replay-mode` offers `kernel`,
/// `application`, `range`), and `tests/ncu_real/real_ncu.rs` asserts the table against that
/// help. What is *documented*: NVIDIA's current CLI manual lists all five
/// (`../shared/docs/ncu.md` §3, §9.2, §9.3), and its 2023.3.1 edition has a "Config File"
/// chapter that the 2020.1 edition lacks.
/// What is a **guess**: the exact first release of each, somewhere after 2022.3 (no release notes
/// that name them were found). A wrong guess fails in one of two ways, both bounded:
/// - the boundary is too early: that release rejects the option, which ncu reports as a usage
///   error; cgp-gate reports it as an ncu failure (exit 3) naming the option and the version,
///   never as the application's failure, and never measures anything else;
/// - the boundary is too late: the option is left out on a release that has it. For
///   `--config-file off` that means a `config.ncu-cfg` on the runner could apply; the other
///   entries are options cgp-gate does not pass (`--print-metric-name`, `--page session`,
///   `--pipeline-boost-state`) or a replay mode it then refuses before running (`app-range`).
///
/// A release that cannot be read (`None`) is taken to be a new one: every option is passed.
pub const VERSIONED_OPTIONS: &[(&str, NcuRelease)] = &[
    // Checked absent in 2022.3; documented by 2023.3.1; 2023.1 is a guess.
    ("--config-file", NcuRelease { year: 2023, minor: 1 }),
    // Checked absent in 2022.3; documented today; 2023.1 is a guess. Not passed by cgp-gate.
    ("--print-metric-name", NcuRelease { year: 2023, minor: 1 }),
    // Checked absent in 2022.3; documented today; 2024.1 is a guess. Not passed by cgp-gate.
    ("--page session", NcuRelease { year: 2024, minor: 1 }),
    // Not in 2022.3; "newer versions only" in the docs; 2024.1 is a guess. Not passed by cgp-gate.
    ("--pipeline-boost-state", NcuRelease { year: 2024, minor: 1 }),
    // Checked: 2022.3 lists `kernel`, `application` and `range` only (and rejects `app-range`);
    // 2023.1 is a guess. A target asking for it on an older release is refused before running.
    ("--replay-mode app-range", NcuRelease { year: 2023, minor: 1 }),
];

/// Options a target needs that this ncu release lacks (`--replay-mode app-range` on 2022.3):
/// cgp-gate refuses to run such a target rather than measure something else.
pub fn unsupported_options<'a>(release: Option<NcuRelease>, target: impl Into<NcuTarget<'a>>) -> Vec<String> {
    let target: NcuTarget<'a> = target.into();
    let mode = format!("--replay-mode {}", target.replay_mode);
    [mode].into_iter().filter(|o| !supports(release, o)).collect()
}

/// Whether an ncu release has an option from [`VERSIONED_OPTIONS`]. Options not in the table
/// exist in every release cgp-gate supports; an unknown release is taken to be a new one.
pub fn supports(release: Option<NcuRelease>, option: &str) -> bool {
    let Some(release) = release else {
        return true;
    };
    VERSIONED_OPTIONS
        .iter()
        .find(|(o, _)| *o == option)
        .is_none_or(|(_, first)| release >= *first)
}

/// [`OUTPUT_ARGS`] for an ncu release: without `--config-file` where that release lacks it.
pub fn output_args(release: Option<NcuRelease>) -> Vec<OsString> {
    let mut a = Vec::new();
    let mut skip = false;
    for (i, arg) in OUTPUT_ARGS.iter().enumerate() {
        if skip {
            skip = false;
            continue;
        }
        if arg.starts_with("--") && !supports(release, arg) {
            // The option and its value.
            skip = OUTPUT_ARGS.get(i + 1).is_some_and(|v| !v.starts_with("--"));
            continue;
        }
        a.push(OsString::from(arg));
    }
    a
}

/// The `--clock-control` value actually passed: `none` whenever cgp-gate locks (or must not touch)
/// the clocks itself.
pub fn clock_control_arg<'a>(target: impl Into<NcuTarget<'a>>) -> &'static str {
    let target: NcuTarget<'a> = target.into();
    target.clock_control
}

/// The `--kernel-name-base` for a `--kernel-name` value: `demangled` for a `regex:` filter (it
/// matches the demangled name, as the CSV prints it) and for an exact name that is not a plain
/// identifier (a whole demangled name: `void gemm<128>(float *, int)`); `function` for a plain
/// identifier (`gemm`). With `function`, ncu matches `Kernel2` for cuBLAS's
/// `void cutlass::Kernel2<cutlass_80_...>(T1::Params)`, so `regex:cutlass` selected nothing live
/// (H100, ncu 2025.3.1, 2026-11-24) while a replay of the CSV selected it. Both bases exist in
/// every release cgp-gate supports (2019.5 to 2025.3; the real 2022.3 accepts both in CI).
pub fn kernel_name_base(filter: &str) -> &'static str {
    if filter.starts_with("regex:") {
        return "demangled";
    }
    let plain = !filter.is_empty()
        && filter
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if plain { "function" } else { "demangled" }
}

/// Everything between `ncu` and the application: options for one run of one target, for the
/// newest ncu (see [`ncu_options_for`]).
pub fn ncu_options<'a>(
    target: impl Into<NcuTarget<'a>>,
    metrics: &[String],
    log_file: &Path,
) -> Vec<OsString> {
    let target: NcuTarget<'a> = target.into();
    ncu_options_for(None, target, metrics, log_file)
}

/// Everything between `ncu` and the application, for the installed ncu release (`None`: unknown,
/// taken to be a new one): options the release lacks are left out.
pub fn ncu_options_for<'a>(
    release: Option<NcuRelease>,
    target: impl Into<NcuTarget<'a>>,
    metrics: &[String],
    log_file: &Path,
) -> Vec<OsString> {
    let target: NcuTarget<'a> = target.into();
    let mut a = output_args(release);
    let mut push = |k: &str, v: String| {
        a.push(k.into());
        a.push(v.into());
    };
    push("--clock-control", target.clock_control.to_owned());
    push("--cache-control", target.cache_control.to_owned());
    push("--replay-mode", target.replay_mode.to_owned());
    push("--metrics", metrics.join(","));
    if let Some(k) = &target.kernel {
        // The base that makes ncu select what a replay of the CSV selects (docs/spec.md,
        // "Selecting kernels"); output stays demangled.
        push("--kernel-name-base", kernel_name_base(k).to_owned());
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
pub fn list_kernels_options<'a>(
    release: Option<NcuRelease>,
    target: impl Into<NcuTarget<'a>>,
    log_file: &Path,
) -> Vec<OsString> {
    let target: NcuTarget<'a> = target.into();
    let mut a = output_args(release);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn r(year: u32, minor: u32) -> Option<NcuRelease> {
        Some(NcuRelease { year, minor })
    }

    #[test]
    fn releases_parse_and_order() {
        assert_eq!(NcuRelease::from_version("2022.3.0.0"), r(2022, 3));
        assert_eq!(NcuRelease::from_version("2019.5.0"), r(2019, 5));
        assert_eq!(NcuRelease::from_version("unknown"), None);
        assert!(r(2022, 3) < r(2023, 1) && r(2023, 1) < r(2025, 1));
        assert_eq!(
            NcuRelease::from_version("2025.1.1.0").unwrap().to_string(),
            "2025.1"
        );
    }

    #[test]
    fn the_config_file_option_only_where_ncu_has_it() {
        let old: Vec<String> = output_args(r(2022, 3))
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(!old.iter().any(|a| a == "--config-file" || a == "off"), "{old:?}");
        assert_eq!(
            old,
            [
                "--csv",
                "--page",
                "raw",
                "--print-units",
                "base",
                "--print-kernel-base",
                "demangled",
                "--target-processes",
                "all"
            ]
        );
        for new in [r(2023, 1), r(2025, 1), None] {
            let args = output_args(new);
            assert_eq!(args.len(), OUTPUT_ARGS.len());
        }
        assert!(supports(r(2022, 3), "--metrics"));
        assert!(!supports(r(2022, 3), "--page session"));
    }
}
