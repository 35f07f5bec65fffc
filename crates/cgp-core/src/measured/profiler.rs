//! Which tool measured: a target's `profiler:` in the spec, and the `profiler` a fingerprint
//! records. It lives here, below the spec (which re-exports it as `spec::ProfilerKind`), so the
//! fingerprint and every lower layer name a profiler by this type, never by a string.
//!
//! This is the registration of the profilers (with the spec's part of it, `spec::kinds` of
//! cgp-spec): outside it and the backends (cgp-profile), code asks a kind what it does
//! ([`ProfilerKind::is_nsight_compute`], [`ProfilerKind::explains`], [`ProfilerKind::why_by`],
//! [`ProfilerKind::gates_categories`], [`ProfilerKind::is_harness`]) and never names one
//! (tests/architecture/text_rules.rs, `profilers_are_named_where_registered`).
//!
//! The benchmark harnesses whose files cgp-gate reads are one kind, [`ProfilerKind::Harness`],
//! of a [`HarnessFormat`]: each format is one line of [`harness_formats!`] below (its `profiler:`
//! name, the tool's name in text, what its targets gate); its reader, in cgp-read's `harness/`,
//! says everything else (docs/architecture.md, "Adding a backend").

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::foundation::threshold::Direction;

/// Declares [`HarnessFormat`]: one line per format, `Variant = "profiler name", "tool in text",
/// "what its targets gate (the spec's help)"`, with `only "metric"` when its files have one metric.
macro_rules! harness_formats {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal, $tool:literal, $gates:literal $(, only $only:literal)?;)+) => {
        /// A benchmark harness's file format, and the `profiler:` of its targets (docs/harnesses.md).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum HarnessFormat {
            $($(#[doc = $doc])* $variant,)+
        }

        impl HarnessFormat {
            /// Every format, in the order of registration.
            pub const ALL: [Self; [$($name),+].len()] = [$(Self::$variant),+];

            /// The `profiler:` value of its targets.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $name,)+ }
            }

            /// The harness's name in text (`Google Benchmark`).
            pub fn tool(self) -> &'static str {
                match self { $(Self::$variant => $tool,)+ }
            }

            /// What its targets gate, for the spec's messages.
            pub fn gates(self) -> &'static str {
                match self { $(Self::$variant => $gates,)+ }
            }

            /// The one metric its files have, where they have one.
            pub fn only_metric(self) -> Option<&'static str> {
                match self { $(Self::$variant => harness_formats!(@only $($only)?),)+ }
            }
        }
    };
    (@only) => { None };
    (@only $only:literal) => { Some($only) };
}

harness_formats! {
    /// nvbench: the team's own nvbench binary, run with `--json PATH --jsonbin`; its states' cold GPU times.
    Nvbench = "nvbench", "nvbench", "nvbench targets gate `nv/cold/time/gpu` (the cold GPU time: per sample with --jsonbin, else the mean of each process), `nv/cold/cycles/gpu` (with the clock sidecar) and any summary by its tag (`nv/cold/bw/global/bytes_per_second`, custom tags), e.g. `metrics: {nv/cold/time/gpu: \"5%\"}`";
    /// Google Benchmark: the team's own benchmark binary, run with `--benchmark_out=PATH`; its repetitions.
    GBench = "gbench", "Google Benchmark", "Google Benchmark targets gate `real_time` (the manual CUDA-event time under UseManualTime), `cpu_time` and user counters (`bytes_per_second`, `items_per_second`, custom), e.g. `metrics: {real_time: \"5%\"}`";
    /// pytest-benchmark: the team's own pytest invocation, run with `--benchmark-json=PATH`; its rounds.
    PytestBenchmark = "pytest-benchmark", "pytest-benchmark", "pytest-benchmark targets gate `time` (seconds per iteration of each round of `stats.data`), e.g. `metrics: {time: \"5%\"}`", only "time";
    /// PyTorch benchmark rows (the OSS benchmark database's v3 shape): Helion's, tritonbench's CI's, `cgp_gate.triton`'s.
    PytorchRows = "pytorch-rows", "PyTorch benchmark rows", "PyTorch benchmark rows gate each row's `metric.name` (`latency`, `helion_speedup`, `tflops`, ...), e.g. `metrics: {latency: \"5%\"}`";
    /// tritonbench: `--output-json PATH`, one median per input and provider of an operator.
    Tritonbench = "tritonbench", "tritonbench", "tritonbench targets gate its metrics by name (`latency`, the median of an input's repetitions; `tflops`, `gbps`, `speedup`, `accuracy`; `latency-avg`, the mean over inputs), e.g. `metrics: {latency: \"5%\"}`";
    /// Criterion.rs: the `target/criterion/**/new/` folders of `cargo bench`, or cargo-criterion's `--message-format=json`.
    Criterion = "criterion", "Criterion", "Criterion targets gate `time` (each sample's time per iteration), `time/mean`, `time/median`, `time/slope` and a throughput (`bytes_per_second`, `elements_per_second`), e.g. `metrics: {time: \"5%\"}`";
    /// airspeed velocity: results version 2 with their `benchmarks.json`; samples with `--record-samples`.
    Asv = "asv", "asv", "asv targets gate `time` (time_ benchmarks), `memory` (mem_, peakmem_) or `value` (track_), per parameter combination, e.g. `metrics: {time: \"5%\"}`";
    /// vLLM's serving benchmark: `vllm bench serve --save-result`, with `--save-detailed` the requests.
    Vllm = "vllm", "vLLM bench serve", "vLLM targets gate a run's statistics (`ttft/p99`, `ttft/median`, `tpot/*`, `itl/*`, `e2el/*`, `request_throughput`, `output_throughput`, ...) and, with `--save-detailed`, the requests (`ttft`, `tpot`, `e2el`) and their quantiles (`ttft/p90`, ...), e.g. `metrics: {ttft/p99: \"5%\"}`";
    /// hyperfine: whole commands timed, `--export-json PATH`; every run's wall time.
    Hyperfine = "hyperfine", "hyperfine", "hyperfine targets gate `time` (every run's wall time), `user_time`, `system_time` and `memory_usage_byte`, e.g. `metrics: {time: \"5%\"}`";
}

/// Whether lower or higher is better for a metric of a harness's file, by its name: rates,
/// throughputs, speedups, accuracy and clocks higher; times, latencies (vLLM's TTFT, TPOT, ITL,
/// E2EL), cycles, spreads, memory and failures lower; `None` where the name says neither (the
/// threshold gives `direction:`).
pub fn harness_direction(name: &str) -> Option<Direction> {
    let n = name.to_ascii_lowercase();
    let higher = [
        "per_second",
        "per_s",
        "rate",
        "bw/",
        "bandwidth",
        "utilization",
        "fom",
        "throughput",
        "goodput",
        "sm_clock",
        "speedup",
        "accuracy",
        "flops",
        "gbps",
        "tok/s",
        "completed",
    ];
    let lower = [
        "time", "cycles", "stdev", "iqr", "noise", "latency", "ttft", "tpot", "itl", "e2el", "duration",
        "memory", "failed",
    ];
    if higher.iter().any(|h| n.contains(h)) {
        Some(Direction::Higher)
    } else if lower.iter().any(|l| n.contains(l)) {
        Some(Direction::Lower)
    } else {
        None
    }
}

/// `profiler:` of a target, and the profiler of a measurement. Serialised as `ncu`, `nsys`,
/// `cupti` or a harness format's name (`nvbench`, `gbench`, `pytest-benchmark`, ...): the spec's
/// values, and what fingerprints in baselines and results hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum ProfilerKind {
    /// Nsight Compute: per-kernel metrics, every launch replayed.
    #[default]
    Ncu,
    /// Nsight Systems: the whole workload traced once per repetition, kernels grouped into
    /// categories (docs/nsys.md).
    Nsys,
    /// CUPTI activity tracing: the program runs once per repetition with cgp-gate's injection
    /// library, which records each kernel's start, end and launch configuration (docs/cupti.md).
    Cupti,
    /// A benchmark harness: the team's own benchmark program (or the files its CI wrote), read
    /// as the harness wrote them (docs/harnesses.md).
    Harness(HarnessFormat),
}

impl ProfilerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ncu => "ncu",
            Self::Nsys => "nsys",
            Self::Cupti => "cupti",
            Self::Harness(f) => f.as_str(),
        }
    }

    /// The kind whose `profiler:` value is `name`.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// Whether it reads a benchmark harness's own output (nvbench, Google Benchmark,
    /// pytest-benchmark, ...) rather than tracing or profiling kernels.
    pub fn is_harness(self) -> bool {
        matches!(self, Self::Harness(_))
    }

    /// The harness format of its files, for a harness kind.
    pub fn harness(self) -> Option<HarnessFormat> {
        match self {
            Self::Harness(f) => Some(f),
            Self::Ncu | Self::Nsys | Self::Cupti => None,
        }
    }

    /// Whether it is Nsight Compute itself: its counters' names are ncu's, it may lock the
    /// clocks itself (`clocks: ncu`), and its version is the fingerprint's `ncu_version` (every
    /// fingerprint written before `profiler` existed was its).
    pub fn is_nsight_compute(self) -> bool {
        self == Self::Ncu
    }

    /// Whether its targets can say why a time changed (`explain:`), with counters it or Nsight
    /// Compute measures (docs/why.md); a trace of the whole workload or a harness cannot.
    pub fn explains(self) -> bool {
        matches!(self, Self::Ncu | Self::Cupti)
    }

    /// The profiler that measures the why of its targets, when not itself: CUPTI times, Nsight
    /// Compute profiles the counters once (docs/cupti.md).
    pub fn why_by(self) -> Option<Self> {
        match self {
            Self::Cupti => Some(Self::Ncu),
            Self::Ncu | Self::Nsys | Self::Harness(_) => None,
        }
    }

    /// Whether it groups the kernels of a whole-workload trace into categories (`categories:`,
    /// `category:<name>` metrics, the stacked bars; docs/nsys.md).
    pub fn gates_categories(self) -> bool {
        self == Self::Nsys
    }

    /// The tools that are not harnesses.
    const TOOLS: [Self; 3] = [Self::Ncu, Self::Nsys, Self::Cupti];

    /// Every kind, in the order backends are registered: the tools, then the harness formats.
    pub const ALL: [Self; Self::TOOLS.len() + HarnessFormat::ALL.len()] = {
        let mut all = [Self::Ncu; Self::TOOLS.len() + HarnessFormat::ALL.len()];
        let mut i = 0;
        while i < all.len() {
            all[i] = if i < Self::TOOLS.len() {
                Self::TOOLS[i]
            } else {
                Self::Harness(HarnessFormat::ALL[i - Self::TOOLS.len()])
            };
            i += 1;
        }
        all
    };
}

impl fmt::Display for ProfilerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for HarnessFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for HarnessFormat {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl Serialize for ProfilerKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProfilerKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Self::named(&name).ok_or_else(|| {
            let known: Vec<&str> = Self::ALL.iter().map(|k| k.as_str()).collect();
            serde::de::Error::custom(format!(
                "unknown profiler `{name}`, expected one of {}",
                known.join(", ")
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{HarnessFormat, ProfilerKind};

    /// The serialised names are the spec's values and what stored fingerprints hold.
    #[test]
    fn kinds_serialise_as_the_spec_names_them() {
        for (kind, name) in [
            (ProfilerKind::Ncu, "ncu"),
            (ProfilerKind::Nsys, "nsys"),
            (ProfilerKind::Cupti, "cupti"),
            (ProfilerKind::Harness(HarnessFormat::Nvbench), "nvbench"),
            (ProfilerKind::Harness(HarnessFormat::GBench), "gbench"),
            (
                ProfilerKind::Harness(HarnessFormat::PytestBenchmark),
                "pytest-benchmark",
            ),
        ] {
            assert_eq!(kind.as_str(), name);
            assert_eq!(kind.to_string(), name);
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{name}\""));
            let back: ProfilerKind = serde_json::from_str(&format!("\"{name}\"")).unwrap();
            assert_eq!(back, kind);
        }
        assert!(serde_json::from_str::<ProfilerKind>("\"rocprof\"").is_err());
    }

    /// Every kind is in `ALL` once, the tools first, and its name is unique: `named` finds it.
    #[test]
    fn every_kind_is_registered_once_by_a_unique_name() {
        assert_eq!(
            ProfilerKind::ALL[..3],
            [ProfilerKind::Ncu, ProfilerKind::Nsys, ProfilerKind::Cupti]
        );
        for f in HarnessFormat::ALL {
            assert!(ProfilerKind::ALL.contains(&ProfilerKind::Harness(f)), "{f}");
        }
        for k in ProfilerKind::ALL {
            assert_eq!(ProfilerKind::named(k.as_str()), Some(k));
            assert_eq!(
                ProfilerKind::ALL
                    .iter()
                    .filter(|o| o.as_str() == k.as_str())
                    .count(),
                1
            );
        }
    }
}
