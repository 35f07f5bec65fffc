//! Each profiler's part of the spec (issue 49, "a backend owns its spec keys and metric rules"):
//! which of the profiler-specific keys its targets read, how their `metrics:` are read, and what
//! a message says to a target of its kind. With [`ProfilerKind`]'s own properties (cgp-core,
//! `measured::profiler`) this is the registration: the loader and the schema ask [`rules`] and
//! never name a profiler (tests/architecture/text_rules.rs, `profilers_are_named_where_registered`).

use super::model::ProfilerKind;
use crate::measured::profiler::HarnessFormat;

/// What a target of one profiler may set and gate.
pub(crate) struct SpecRules {
    /// The profiler-specific keys its targets read; every key no profiler lists here is read by
    /// all.
    pub(crate) keys: &'static [&'static str],
    /// How a message names one of its targets: `an ncu`, ``a `profiler: nsys` ``.
    pub(crate) article: &'static str,
    /// How a message names the targets that read a key this profiler reads first (in the order
    /// of [`ProfilerKind::ALL`]).
    pub(crate) readers: &'static str,
    /// The note a message about a key another profiler reads first ends with when this one reads
    /// it too (empty: none).
    pub(crate) also: &'static str,
    /// How its `metrics:` are read.
    pub(crate) metrics: Metrics,
    /// Why a key it does not read does nothing on its targets, and what to do instead.
    pub(crate) unread_help: fn(&str) -> &'static str,
}

/// How a profiler's `metrics:` are read.
#[derive(Clone, Copy)]
pub(crate) enum Metrics {
    /// Nsight Compute's counters and the derived throughputs (`flops`, `bytes`).
    Counters,
    /// As [`Metrics::Counters`], of which CUPTI measures the times only (docs/cupti.md).
    CounterTimes,
    /// A whole workload's times: `gpu_time`, `category:<name>`, `kernel:<regex>` (docs/nsys.md).
    Categories,
    /// A harness's own metric names (docs/harnesses.md): what its targets gate, for messages,
    /// and the one metric its file has, where it has only one.
    Harness {
        examples: &'static str,
        only: Option<&'static str>,
    },
}

/// Keys only Nsight Compute reads: on a `profiler: nsys` target they would change nothing.
const NCU_KEYS: &[&str] = &[
    "explain",
    "kernels",
    "kernel",
    "nvtx",
    "launch_skip",
    "launch_count",
    "clock_control",
    "cache_control",
    "replay_mode",
    "flops",
    "bytes",
];

/// Ncu's keys that `profiler: cupti` targets read too (the kernel selection, operation rows, the
/// work expressions and the why, which ncu measures), and the CUPTI library's path.
const CUPTI_KEYS: &[&str] = &[
    "explain",
    "kernels",
    "kernel",
    "launch_skip",
    "launch_count",
    "flops",
    "bytes",
    "libcupti",
];

/// A harness target selects its benchmarks with `kernel:` (docs/harnesses.md).
const HARNESS_KEYS: &[&str] = &["kernel"];

const HARNESS_HELP: fn(&str) -> &'static str = |_| "a benchmark harness times its own benchmarks and cgp-gate reads the file it writes (docs/harnesses.md): only `kernel:` (which benchmarks) applies; remove the key, or use `profiler: ncu`";

/// The rules of a harness format's targets, the same for every format but for its name and what
/// it gates (`measured::profiler::harness_formats!`): made once, kept for the process.
fn harness_rules(format: HarnessFormat) -> &'static SpecRules {
    static RULES: std::sync::LazyLock<Vec<SpecRules>> = std::sync::LazyLock::new(|| {
        HarnessFormat::ALL
            .iter()
            .map(|f| SpecRules {
                keys: HARNESS_KEYS,
                article: format!("a `profiler: {f}`").leak(),
                readers: format!("`profiler: {f}`").leak(),
                also: "",
                metrics: Metrics::Harness {
                    examples: f.gates(),
                    only: f.only_metric(),
                },
                unread_help: HARNESS_HELP,
            })
            .collect()
    });
    &RULES[format as usize]
}

/// The rules of `kind`: the one place that maps a profiler to its part of the spec.
pub(crate) fn rules(kind: ProfilerKind) -> &'static SpecRules {
    match kind {
        ProfilerKind::Ncu => &SpecRules {
            keys: NCU_KEYS,
            article: "an ncu",
            readers: "Nsight Compute (`profiler: ncu`)",
            also: "",
            metrics: Metrics::Counters,
            unread_help: |_| "`categories` groups the kernels of an Nsight Systems trace; add `profiler: nsys` to the target, or remove `categories`",
        },
        ProfilerKind::Nsys => &SpecRules {
            keys: &["categories"],
            article: "a `profiler: nsys`",
            readers: "`profiler: nsys`",
            also: "",
            metrics: Metrics::Categories,
            unread_help: nsys_unread_help,
        },
        ProfilerKind::Cupti => &SpecRules {
            keys: CUPTI_KEYS,
            article: "a `profiler: cupti`",
            readers: "`profiler: cupti`",
            also: " (`profiler: cupti` targets read it too)",
            metrics: Metrics::CounterTimes,
            unread_help: cupti_unread_help,
        },
        ProfilerKind::Harness(format) => harness_rules(format),
    }
}

fn cupti_unread_help(key: &str) -> &'static str {
    match key {
        "nvtx" => {
            "CUPTI traces every kernel of the run and cgp-gate reads no NVTX ranges from it; select kernels with `kernel:`, `launch_skip` and `launch_count`, or use `profiler: ncu` for NVTX ranges (docs/cupti.md)"
        }
        "categories" => {
            "`categories` groups the kernels of an Nsight Systems trace; use `profiler: nsys`, or remove `categories`"
        }
        "clock_control" => {
            "CUPTI does not lock clocks; use `clocks: nvml-base` (cgp-gate locks them through NVML) or `clocks: none`, and remove `clock_control`"
        }
        _ => {
            "CUPTI times kernels as they run: it replays nothing and flushes no caches (docs/cupti.md); remove the key, or use `profiler: ncu`"
        }
    }
}

fn nsys_unread_help(key: &str) -> &'static str {
    match key {
        "kernel" | "nvtx" | "launch_skip" | "launch_count" => {
            "nsys traces every kernel of the run; gate one kernel with a `kernel:<regex>` metric, or remove the key"
        }
        "clock_control" => {
            "nsys does not lock clocks; use `clocks: nvml-base` (cgp-gate locks them through NVML) or `clocks: none`, and remove `clock_control`"
        }
        "explain" => {
            "nsys traces timings only, and the why needs Nsight Compute's counters; remove `explain` (docs/why.md)"
        }
        "cache_control" | "replay_mode" => {
            "nsys runs the application once and replays nothing; remove the key"
        }
        _ => {
            "`flops` and `bytes` derive throughput from ncu's kernel duration; nsys targets gate times (`gpu_time`, `category:<name>`, `kernel:<regex>`); remove the key"
        }
    }
}

/// Every profiler-specific key, in the order of [`ProfilerKind::ALL`], each once.
pub(crate) fn specific_keys() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for k in ProfilerKind::ALL.iter().flat_map(|p| rules(*p).keys) {
        if !out.contains(k) {
            out.push(k);
        }
    }
    out
}

/// Whether a target of `profiler` reads `key`: every key no profiler lists is read by all.
pub(crate) fn reads(profiler: ProfilerKind, key: &str) -> bool {
    rules(profiler).keys.contains(&key) || !specific_keys().contains(&key)
}

/// The profiler-specific keys a target of `profiler` does not read, in a fixed order.
pub(crate) fn unread_keys(profiler: ProfilerKind) -> Vec<&'static str> {
    specific_keys()
        .into_iter()
        .filter(|k| !reads(profiler, k))
        .collect()
}

/// How a message names the targets that read `key` (the first profiler that does), and the note
/// of another that reads it too (for the end of the message).
pub(crate) fn readers(key: &str) -> (&'static str, &'static str) {
    let mut reading = ProfilerKind::ALL
        .into_iter()
        .filter(|p| rules(*p).keys.contains(&key));
    let Some(first) = reading.next() else {
        return ("every", "");
    };
    let also = reading
        .map(|p| rules(p).also)
        .find(|a| !a.is_empty())
        .unwrap_or("");
    (rules(first).readers, also)
}

/// Why `key` does nothing on a target of `profiler`, and what to do instead.
pub(crate) fn unread_help(key: &str, profiler: ProfilerKind) -> &'static str {
    if key == "libcupti" {
        return "`libcupti` names the CUPTI library of a `profiler: cupti` target; add `profiler: cupti`, or remove it";
    }
    (rules(profiler).unread_help)(key)
}
