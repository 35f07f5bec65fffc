//! Scanning ncu's own lines (`==PROF==`, `==WARNING==`, `==ERROR==`).
//!
//! ncu's messages start with one of three markers; everything else in a log is the application's
//! output or the CSV table. Errors do not reliably set ncu's exit code, and the application keeps
//! running after `ERR_NVGPUCTRPERM`, so a run is judged by these lines as much as by its status.
//!
//! A `==WARNING==` can appear in the middle of a progress line (the "Launching the workload is
//! taking more time than expected" warning is printed while the dots are being written), so a line
//! is split at every marker, and the tail of a split progress line (`....100% - 46 passes`) on a
//! later line completes the kernel it belongs to.

use std::sync::LazyLock;

use regex::Regex;

use crate::foundation::failure::FailureKind;

/// The exact line ncu prints when its filters matched nothing (or profiling failed).
pub const NO_KERNELS: &str = "==WARNING== No kernels were profiled.";

/// What ncu prints after [`NO_KERNELS`] when a kernel filter matched nothing, followed by the
/// kernels that did run, one per line (`1. Kernel2<...>`).
pub const AVAILABLE_KERNELS: &str = "Available Kernels:";

/// At most this many names are taken from an `Available Kernels:` list (a damaged log cannot
/// grow an error without bound).
const MAX_AVAILABLE: usize = 64;

const MARKERS: [&str; 3] = ["==PROF==", "==WARNING==", "==ERROR=="];

static PROGRESS: LazyLock<Regex> = LazyLock::new(|| {
    // Both variants: `Profiling "k" - 0: 0%....100% - 46 passes` and `Profiling "k": 0%....`.
    Regex::new(r#"^==PROF== Profiling "(.+?)"(?: - (\d+))?:(.*)$"#)
        .expect("the progress pattern is a valid regex")
});

static PASSES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:%|\.)\s*-\s*(\d+) pass(?:es)?\s*$").expect("the passes pattern is a valid regex")
});

/// A kernel named in a `==PROF== Profiling "..."` progress line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfiledKernel {
    /// The name between the quotes, as printed.
    pub name: String,
    /// The launch number of the older `"k" - 0:` variant; `None` for the `"k":` variant.
    pub launch: Option<u64>,
    /// Replay passes used, when the progress line finished (`- 46 passes`).
    pub passes: Option<u32>,
}

/// What a scan of ncu's output found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogScan {
    /// `==ERROR==` messages, verbatim, in order.
    pub errors: Vec<String>,
    /// `==WARNING==` messages, verbatim, in order.
    pub warnings: Vec<String>,
    /// The output holds [`NO_KERNELS`].
    pub no_kernels: bool,
    /// Kernels from progress lines, in order.
    pub profiled: Vec<ProfiledKernel>,
    /// Metrics named by `==WARNING== Unable to access the following N metrics: a, b`.
    pub unavailable_metrics: Vec<String>,
}

/// The kernels ncu lists under `Available Kernels:` when its filter matched nothing, in order,
/// without their numbers: on the following lines (`1. name`), or on the same line
/// (`Available Kernels: 1. name`). Empty when the log has no such list.
pub fn available_kernels(text: &str) -> Vec<String> {
    static ITEM: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*\d+\.\s+(\S.*?)\s*$").expect("the list pattern is a valid regex"));
    let Some(at) = text.find(AVAILABLE_KERNELS) else {
        return Vec::new();
    };
    let rest = &text[at + AVAILABLE_KERNELS.len()..];
    let mut names = Vec::new();
    for (i, line) in rest.lines().enumerate() {
        match ITEM.captures(line) {
            Some(c) => names.push(c[1].to_owned()),
            // The rest of the marker's own line may be empty.
            None if i == 0 && line.trim().is_empty() => continue,
            None => break,
        }
        if names.len() == MAX_AVAILABLE {
            break;
        }
    }
    names
}

/// Scan ncu output (a `--log-file`, or stdout with the application's lines interleaved).
pub fn scan(text: &str) -> LogScan {
    let mut s = LogScan::default();
    // Index into `s.profiled` of a progress line that has not printed its pass count yet.
    let mut pending: Option<usize> = None;
    for line in text.lines() {
        // Most lines of a large table hold no `=` at all: skip them with one SIMD search (unless
        // a split progress line waits for its pass count).
        if pending.is_none() && memchr::memchr(b'=', line.as_bytes()).is_none() {
            continue;
        }
        let first = find_marker(line, 0);
        let before = &line[..first.unwrap_or(line.len())];
        if let Some(p) = pending
            && !before.trim().is_empty()
            && let Some(n) = passes_at_end(before)
        {
            s.profiled[p].passes = Some(n);
            pending = None;
        }
        let mut at = first;
        while let Some(start) = at {
            let next = find_marker(line, start + 2);
            let segment = line[start..next.unwrap_or(line.len())].trim_end();
            s.take(segment, &mut pending);
            at = next;
        }
    }
    s
}

impl LogScan {
    fn take(&mut self, segment: &str, pending: &mut Option<usize>) {
        if segment.starts_with("==ERROR==") {
            self.errors.push(segment.to_owned());
        } else if let Some(body) = segment.strip_prefix("==WARNING==") {
            self.warnings.push(segment.to_owned());
            let body = body.trim();
            // Range replay (`--replay-mode range|app-range`) says `No ranges were profiled.`
            // (Nsight Compute 2022.3, seen here).
            if segment == NO_KERNELS
                || body.starts_with("No kernels were profiled")
                || body.starts_with("No ranges were profiled")
            {
                self.no_kernels = true;
            } else if let Some(rest) = body.strip_prefix("Unable to access the following ")
                && let Some((_, list)) = rest.split_once(':')
            {
                // Metric names never end with `.`, so a trailing `.` is the sentence's.
                let list = list.trim().trim_end_matches('.');
                self.unavailable_metrics.extend(
                    list.split(',')
                        .map(str::trim)
                        .filter(|m| !m.is_empty())
                        .map(str::to_owned),
                );
            }
            if let Some(p) = *pending
                && let Some(n) = passes_at_end(segment)
            {
                self.profiled[p].passes = Some(n);
                *pending = None;
            }
        } else if let Some(c) = PROGRESS.captures(segment) {
            let passes = passes_at_end(&c[3]);
            self.profiled.push(ProfiledKernel {
                name: c[1].to_owned(),
                launch: c.get(2).and_then(|m| m.as_str().parse().ok()),
                passes,
            });
            *pending = passes.is_none().then(|| self.profiled.len() - 1);
        }
    }

    /// The pass count of every profiled kernel that printed one.
    pub fn passes(&self) -> impl Iterator<Item = (&str, u32)> {
        self.profiled
            .iter()
            .filter_map(|k| Some((k.name.as_str(), k.passes?)))
    }
}

/// Byte offset of the first marker at or after `from`.
fn find_marker(line: &str, from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(off) = line.get(i..)?.find("==") {
        let at = i + off;
        if MARKERS.iter().any(|m| line[at..].starts_with(m)) {
            return Some(at);
        }
        i = at + 1;
    }
    None
}

fn passes_at_end(text: &str) -> Option<u32> {
    PASSES.captures(text)?.get(1)?.as_str().parse().ok()
}

/// ncu's own command-line error, printed before it runs anything (it then exits 255): the
/// rejected option and the line. Seen with Nsight Compute 2022.3:
/// `unrecognised option '--config-file'` and `the argument for option '--page' is invalid`.
pub fn usage_error(output: &str) -> Option<(String, String)> {
    const PATTERNS: &[&str] = &[
        "unrecognised option",
        "unrecognized option",
        "for option '",
        "is missing",
        "cannot be specified more than once",
        "is ambiguous",
    ];
    output.lines().map(str::trim).find_map(|line| {
        if line.starts_with("==") || !PATTERNS.iter().any(|p| line.contains(p)) {
            return None;
        }
        let option = line.split('\'').find(|part| part.starts_with('-'))?;
        Some((option.to_owned(), line.to_owned()))
    })
}

/// Classify the scan into a failure: its kind, a message and a hint saying what to do.
///
/// The most specific cause wins: a permission or resource error explains the `No kernels were
/// profiled.` that usually follows it. `None` when the output shows no failure.
pub fn classify(scan: &LogScan) -> Option<(FailureKind, String, String)> {
    let find = |needle: &str| scan.errors.iter().find(|e| e.contains(needle));
    if let Some(e) = find("ERR_NVGPUCTRPERM") {
        return Some((
            FailureKind::Permission,
            format!("ncu may not access the GPU performance counters (ERR_NVGPUCTRPERM): {e}"),
            "allow profiling for all users with the nvidia kernel module option \
             `NVreg_RestrictProfilingToAdminUsers=0` (e.g. `options nvidia NVreg_RestrictProfilingToAdminUsers=0` \
             in /etc/modprobe.d, then reload the driver or reboot), or run ncu as root, or give the \
             container `--cap-add=SYS_ADMIN`; `RmProfilingAdminOnly: 1` in /proc/driver/nvidia/params \
             confirms the restriction"
                .to_owned(),
        ));
    }
    if let Some(e) = find("driver resource was unavailable") {
        let mut hint = "another profiler holds the GPU counters: pause DCGM profiling with \
                        `dcgmi profile --pause` (and `dcgmi profile --resume` afterwards) or stop \
                        dcgm-exporter while cgp-gate runs"
            .to_owned();
        if e.contains("does not have permission") {
            hint.push_str(
                "; on WSL2, also enable access to the GPU performance counters for all users in \
                 the NVIDIA Control Panel's developer settings",
            );
        }
        return Some((
            FailureKind::ResourceUnavailable,
            format!("profiling failed because a driver resource was unavailable: {e}"),
            hint,
        ));
    }
    if let Some(e) = find("Failed to find metric") {
        let metric = e
            .split_once("Failed to find metric")
            .map(|(_, m)| {
                m.trim_start_matches(['s', ':'])
                    .trim()
                    .trim_matches(['"', '\'', '`'])
                    .trim_end_matches('.')
            })
            .unwrap_or_default();
        let message = if metric.is_empty() {
            format!("ncu does not know a requested metric: {e}")
        } else {
            format!("ncu does not know metric `{metric}`: {e}")
        };
        return Some((
            FailureKind::InvalidMetric,
            message,
            "check the metric names in the spec with `ncu --query-metrics` on this GPU; counters \
             need a rollup suffix such as `.sum`, `.avg` or `.max`"
                .to_owned(),
        ));
    }
    if let Some(e) = find("An error was reported by the driver") {
        return Some((
            FailureKind::ProfilerError,
            format!("the driver reported an error while profiling: {e}"),
            "check `dmesg` and `nvidia-smi` for Xid errors and that this ncu supports the installed \
             driver; rerun the ncu command by hand to see its full log"
                .to_owned(),
        ));
    }
    if let Some(e) = find("Failed to profile") {
        let kernel = e
            .split('"')
            .nth(1)
            .map_or_else(String::new, |k| format!(" kernel `{k}`"));
        return Some((
            FailureKind::ProfilerError,
            format!("ncu failed to profile{kernel}: {e}"),
            "rerun the ncu command by hand to see its full log; fewer metrics per run or \
             `--replay-mode application` avoid some replay failures"
                .to_owned(),
        ));
    }
    if let Some(e) = find("did not match any section") {
        return Some((
            FailureKind::ProfilerError,
            format!("ncu rejected a `--section` option: {e}"),
            "list the sections this ncu has with `ncu --list-sections` (names differ between \
             releases), and fix the section name or regex"
                .to_owned(),
        ));
    }
    if let Some(e) = find("application returned an error code") {
        // The application failed under ncu (its own error, not ncu's): the caller adds the
        // application's last output and the command line to rerun.
        return Some((
            FailureKind::AppFailed,
            format!("the application failed under ncu: {e}"),
            "its own output is above; rerun the command to see all of it".to_owned(),
        ));
    }
    if let Some(e) = scan.errors.first() {
        return Some((
            FailureKind::ProfilerError,
            format!("ncu reported an error: {e}"),
            "rerun the ncu command by hand to see its full log".to_owned(),
        ));
    }
    if scan.no_kernels {
        return Some((
            FailureKind::NoKernels,
            format!("ncu profiled no kernels (`{NO_KERNELS}`)"),
            "check the target's `kernel:` (an exact name matches the bare function name; \
             `regex:` matches part of it; a library such as cuBLAS picks its kernel by shape and \
             GPU, so gate it with a `regex:` over the family, e.g. `regex:nvjet|gemm|xmma|cutlass`, \
             and `kernels: sum`), `launch_skip`/`launch_count`, `nvtx:`, and that the application \
             launches CUDA kernels at all"
                .to_owned(),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERM: &str = "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0. For instructions on enabling permissions and to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM";
    const DCGM: &str = "==ERROR== Profiling failed because a driver resource was unavailable. Ensure that no other tool (like DCGM) is concurrently collecting profiling data. See https://docs.nvidia.com/nsight-compute/ProfilingGuide/index.html#faq for more details.";

    #[test]
    fn both_progress_variants_give_names_and_passes() {
        let s = scan(
            "==PROF== Connected to process 5268\n\
             ==PROF== Profiling \"vectorAdd_A\" - 0: 0%....50%....100% - 46 passes\n\
             ==PROF== Profiling \"triad_kernel\": 0%....50%....100% - 18 passes\n\
             ==PROF== Disconnected from process 5268\n",
        );
        assert_eq!(
            s.profiled,
            vec![
                ProfiledKernel {
                    name: "vectorAdd_A".into(),
                    launch: Some(0),
                    passes: Some(46)
                },
                ProfiledKernel {
                    name: "triad_kernel".into(),
                    launch: None,
                    passes: Some(18)
                },
            ]
        );
        assert!(s.errors.is_empty() && s.warnings.is_empty() && !s.no_kernels);
        assert_eq!(
            s.passes().collect::<Vec<_>>(),
            vec![("vectorAdd_A", 46), ("triad_kernel", 18)]
        );
    }

    #[test]
    fn a_warning_inside_a_progress_line_is_split_out() {
        let warn = "==WARNING== Launching the workload is taking more time than expected. If this continues to hang, terminate the profile and re-try by profiling the range of all related launches using '--replay-mode range'.";
        let s = scan(&format!(
            "==PROF== Profiling \"gemm\" - 3: 0%....50%{warn}\n....100% - 31 passes\n"
        ));
        assert_eq!(s.warnings, vec![warn.to_owned()]);
        assert_eq!(s.profiled.len(), 1);
        assert_eq!(s.profiled[0].name, "gemm");
        assert_eq!(s.profiled[0].launch, Some(3));
        assert_eq!(s.profiled[0].passes, Some(31));
    }

    #[test]
    fn an_unfinished_progress_line_has_no_pass_count() {
        let s = scan(
            "==PROF== Profiling \"k\": 0%....50%\n==ERROR== An error occurred while trying to profile.\n",
        );
        assert_eq!(s.profiled[0].passes, None);
        assert_eq!(
            s.errors,
            vec!["==ERROR== An error occurred while trying to profile."]
        );
    }

    #[test]
    fn application_output_is_not_a_pass_count() {
        let s = scan("==PROF== Profiling \"k\": 0%....50%\nresult - 7 passes of the solver\n");
        assert_eq!(s.profiled[0].passes, None);
    }

    #[test]
    fn unavailable_metrics_are_listed() {
        let s = scan(
            "==PROF== Connected to process 1\n==WARNING== Unable to access the following 2 metrics: ctc__rx_bytes_data_user.sum, ctc__tx_bytes_data_user.sum.\n",
        );
        assert_eq!(
            s.unavailable_metrics,
            vec!["ctc__rx_bytes_data_user.sum", "ctc__tx_bytes_data_user.sum"]
        );
        assert_eq!(classify(&s), None);
    }

    #[test]
    fn permission_error_wins_over_no_kernels() {
        let s = scan(&format!(
            "==PROF== Connected to process 3323\n{PERM}\napp output\n==PROF== Disconnected from process 3323\n{NO_KERNELS}\n"
        ));
        assert!(s.no_kernels);
        assert_eq!(s.errors, vec![PERM.to_owned()]);
        let (kind, msg, hint) = classify(&s).unwrap();
        assert_eq!(kind, FailureKind::Permission);
        assert!(msg.contains("ERR_NVGPUCTRPERM"));
        assert!(hint.contains("NVreg_RestrictProfilingToAdminUsers=0"));
        assert!(hint.contains("--cap-add=SYS_ADMIN"));
        assert!(hint.contains("root"));
    }

    #[test]
    fn dcgm_holding_the_counters() {
        let (kind, _, hint) = classify(&scan(DCGM)).unwrap();
        assert_eq!(kind, FailureKind::ResourceUnavailable);
        assert!(hint.contains("dcgmi profile --pause"));
        assert!(hint.contains("dcgm-exporter"));
        assert!(!hint.contains("WSL2"));
        let wsl = "==ERROR== Profiling failed because a driver resource was unavailable or the user does not have permission to access NVIDIA GPU Performance Counters.";
        assert!(classify(&scan(wsl)).unwrap().2.contains("WSL2"));
    }

    #[test]
    fn invalid_metric_names_the_metric() {
        let s = scan(
            "==ERROR== Failed to find metric sm__foo_bar.sum\n==ERROR== An error occurred while trying to profile.\n",
        );
        let (kind, msg, _) = classify(&s).unwrap();
        assert_eq!(kind, FailureKind::InvalidMetric);
        assert!(msg.contains("`sm__foo_bar.sum`"), "{msg}");
    }

    #[test]
    fn driver_and_per_kernel_failures() {
        let (kind, msg, _) = classify(&scan("==ERROR== An error was reported by the driver:\n")).unwrap();
        assert_eq!(kind, FailureKind::ProfilerError);
        assert!(msg.starts_with("the driver reported an error"));
        let (kind, msg, _) = classify(&scan(
            "==ERROR== Failed to profile \"risk_battle_kernel\" in process 7508\n==PROF== Trying to shutdown target application\n",
        ))
        .unwrap();
        assert_eq!(kind, FailureKind::ProfilerError);
        assert!(msg.contains("kernel `risk_battle_kernel`"), "{msg}");
        let (kind, msg, _) =
            classify(&scan("==ERROR== An error occurred while trying to profile.\n")).unwrap();
        assert_eq!(kind, FailureKind::ProfilerError);
        assert!(msg.contains("An error occurred while trying to profile."));
    }

    #[test]
    fn usage_errors_name_the_option() {
        // Verbatim from Nsight Compute 2022.3 (stderr), exit status 255.
        let out = "unrecognised option '--config-file'\n\nUse --help for further details.\n";
        assert_eq!(
            usage_error(out),
            Some((
                "--config-file".to_owned(),
                "unrecognised option '--config-file'".to_owned()
            ))
        );
        let out = "the argument for option '--page' is invalid\n\nUse --help for further details.\n";
        assert_eq!(usage_error(out).unwrap().0, "--page");
        assert_eq!(
            usage_error("app says: done\n==PROF== Connected to process 1\n"),
            None
        );
    }

    #[test]
    fn a_bad_section_option_is_named() {
        // 03_llmperf_error_only.csv (tests/fixtures/ncu-wild), verbatim.
        let s = scan(
            "==ERROR== Option '--section .*SpeedOfLight.*' did not match any section.\n==ERROR== Use --list-sections to see the list of available sections.\n",
        );
        let (kind, msg, hint) = classify(&s).unwrap();
        assert_eq!(kind, FailureKind::ProfilerError);
        assert!(msg.contains("--section .*SpeedOfLight.*"), "{msg}");
        assert!(hint.contains("ncu --list-sections"));
    }

    #[test]
    fn available_kernels_are_listed_after_the_marker() {
        let log = "==PROF== Connected to process 7 (/usr/bin/python3)\n==WARNING== No kernels were profiled.\n\
                   Available Kernels:\n1. Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>\n\
                   2. nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT\n==PROF== Disconnected\n";
        assert_eq!(
            available_kernels(log),
            [
                "Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>",
                "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"
            ]
        );
        assert_eq!(
            available_kernels("Available Kernels: 1. Kernel2<...>\nok\n"),
            ["Kernel2<...>"]
        );
        assert!(available_kernels(NO_KERNELS).is_empty());
        let long: String = std::iter::once("Available Kernels:\n".to_owned())
            .chain((1..1000).map(|i| format!("{i}. k{i}\n")))
            .collect();
        assert_eq!(available_kernels(&long).len(), MAX_AVAILABLE);
    }

    #[test]
    fn no_kernels_alone() {
        let s = scan(&format!(
            "==PROF== Connected to process 9\n==PROF== Disconnected from process 9\n{NO_KERNELS}\n"
        ));
        assert!(s.no_kernels);
        assert_eq!(classify(&s).unwrap().0, FailureKind::NoKernels);
    }

    #[test]
    fn markers_inside_other_text_only_count_as_markers() {
        let s = scan(
            "a == b\n\"ID\",\"x==y\"\n==PROF== Target process 3323 terminated before first instrumented API call.\n",
        );
        assert_eq!(s, LogScan::default());
    }
}
