//! Which tool measured: a target's `profiler:` in the spec, and the `profiler` a fingerprint
//! records. It lives here, below the spec (which re-exports it as `spec::ProfilerKind`), so the
//! fingerprint and every lower layer name a profiler by this type, never by a string.
//!
//! This is the registration of the profilers (with the spec's part of it, `spec::kinds` of
//! cgp-spec): outside it and the backends (cgp-profile), code asks a kind what it does
//! ([`ProfilerKind::is_nsight_compute`], [`ProfilerKind::explains`], [`ProfilerKind::why_by`],
//! [`ProfilerKind::gates_categories`], [`ProfilerKind::is_harness`]) and never names one
//! (tests/architecture.rs, `profilers_are_named_where_registered`).

use std::fmt;

use serde::{Deserialize, Serialize};

/// `profiler:` of a target, and the profiler of a measurement. Serialised as `ncu`, `nsys`,
/// `cupti`, `nvbench`, `gbench`, `pytest-benchmark` (the spec's values, and what fingerprints in baselines and results hold).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
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
    /// nvbench: the team's own nvbench binary, run with `--json PATH --jsonbin`; its states'
    /// cold GPU times (docs/harnesses.md).
    Nvbench,
    /// Google Benchmark: the team's own benchmark binary, run with `--benchmark_out=PATH`; its
    /// repetitions (docs/harnesses.md).
    Gbench,
    /// pytest-benchmark: the team's own pytest invocation, run with `--benchmark-json=PATH`;
    /// its rounds (docs/harnesses.md).
    PytestBenchmark,
}

impl ProfilerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ncu => "ncu",
            Self::Nsys => "nsys",
            Self::Cupti => "cupti",
            Self::Nvbench => "nvbench",
            Self::Gbench => "gbench",
            Self::PytestBenchmark => "pytest-benchmark",
        }
    }

    /// Whether it reads a benchmark harness's own output (nvbench, Google Benchmark,
    /// pytest-benchmark) rather than tracing or profiling kernels.
    pub fn is_harness(self) -> bool {
        matches!(self, Self::Nvbench | Self::Gbench | Self::PytestBenchmark)
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
            Self::Ncu | Self::Nsys | Self::Nvbench | Self::Gbench | Self::PytestBenchmark => None,
        }
    }

    /// Whether it groups the kernels of a whole-workload trace into categories (`categories:`,
    /// `category:<name>` metrics, the stacked bars; docs/nsys.md).
    pub fn gates_categories(self) -> bool {
        self == Self::Nsys
    }

    /// Every kind, in the order backends are registered.
    pub const ALL: [Self; 6] = [
        Self::Ncu,
        Self::Nsys,
        Self::Cupti,
        Self::Nvbench,
        Self::Gbench,
        Self::PytestBenchmark,
    ];
}

impl fmt::Display for ProfilerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ProfilerKind;

    /// The serialised names are the spec's values and what stored fingerprints hold.
    #[test]
    fn kinds_serialise_as_the_spec_names_them() {
        for (kind, name) in [
            (ProfilerKind::Ncu, "ncu"),
            (ProfilerKind::Nsys, "nsys"),
            (ProfilerKind::Cupti, "cupti"),
            (ProfilerKind::Nvbench, "nvbench"),
            (ProfilerKind::Gbench, "gbench"),
            (ProfilerKind::PytestBenchmark, "pytest-benchmark"),
        ] {
            assert_eq!(kind.as_str(), name);
            assert_eq!(kind.to_string(), name);
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{name}\""));
            let back: ProfilerKind = serde_json::from_str(&format!("\"{name}\"")).unwrap();
            assert_eq!(back, kind);
        }
        assert!(serde_json::from_str::<ProfilerKind>("\"rocprof\"").is_err());
    }
}
