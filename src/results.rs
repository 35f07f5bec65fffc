//! The results of a gate run: pure data, written as JSON by `check --json`, read back by
//! `report --from`, `merge` and `baseline update --from`. Reporters render this; they decide nothing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::gpu::fingerprint::Fingerprint;

/// Schema version of the results file. Readers refuse newer versions.
pub const RESULTS_VERSION: u32 = 1;

/// The overall verdict of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunVerdict {
    Pass,
    Regression,
    Inconclusive,
    Error,
}

impl RunVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Regression => "regression",
            Self::Inconclusive => "inconclusive",
            Self::Error => "error",
        }
    }
}

/// The verdict of one target x size x kernel x metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowVerdict {
    Regression,
    Error,
    Inconclusive,
    Improvement,
    Pass,
    /// Measured now, no baseline to compare with.
    New,
    /// In the baseline, not measured now.
    Missing,
}

impl RowVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Regression => "regression",
            Self::Error => "error",
            Self::Inconclusive => "inconclusive",
            Self::Improvement => "improvement",
            Self::Pass => "pass",
            Self::New => "new",
            Self::Missing => "missing",
        }
    }
}

/// Summary of one side's samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideSummary {
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Coefficient of variation (robust: MAD * 1.4826 / median), when defined.
    pub cv: Option<f64>,
    /// Indices of samples outside Tukey's fences (reported, never dropped).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outliers: Vec<usize>,
    pub samples: Vec<f64>,
}

/// One judged row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub target: String,
    pub size: String,
    pub kernel: String,
    pub metric: String,
    /// Base unit of every number in the row.
    pub unit: String,
    pub verdict: RowVerdict,
    /// The threshold as written, e.g. `3% (lower is better)`.
    pub threshold: String,
    pub direction: String,
    /// The statistical method that decided (`mann-whitney+hodges-lehmann`, `exact`, `min`, ...).
    pub method: String,
    /// Relative change of the candidate against the baseline (0.031 = +3.1%); `None` when not compared.
    pub change: Option<f64>,
    /// Confidence interval of the relative change.
    pub change_ci: Option<[f64; 2]>,
    /// For `min:`/`max:` rows: the interval of the candidate's median, in base units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ci: Option<[f64; 2]>,
    /// Coverage of the interval shown (0.95, ...).
    pub confidence: Option<f64>,
    /// One-sided p-value of the test in the regression direction (unadjusted).
    pub p: Option<f64>,
    /// p-value after the run-wide multiple-testing correction.
    pub p_adjusted: Option<f64>,
    pub baseline: Option<SideSummary>,
    pub candidate: Option<SideSummary>,
    /// Why the verdict is what it is, in one sentence.
    pub reason: String,
    /// How many re-measurement rounds this row took.
    #[serde(default)]
    pub remeasured: u32,
    /// The repetition each candidate sample came from (same order as `candidate.samples`), so a
    /// results file can become a baseline without profiling again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidate_reps: Vec<u32>,
    /// Medians of older baseline generations, oldest first (for trends).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<f64>,
    /// The GPU the row was measured on (the fingerprint's `gpu_name`), so that merged results
    /// of several GPU types keep their rows apart. Empty in files written before it existed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub gpu: String,
}

/// A failure that stopped a target or size from being measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunError {
    pub target: String,
    pub size: Option<String>,
    /// Failure class (`ncu-not-found`, `permission`, `timeout`, ...).
    pub kind: String,
    pub message: String,
}

/// Health of the GPU during the run, where known.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Health {
    pub sm_clock_mhz: Option<[u32; 2]>,
    pub mem_clock_mhz: Option<[u32; 2]>,
    pub temperature_c: Option<[u32; 2]>,
    pub power_w: Option<[f64; 2]>,
    pub energy_j: Option<f64>,
    pub throttled_reps: u32,
    pub rerun_reps: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Everything a run produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub schema_version: u32,
    pub verdict: RunVerdict,
    pub tool_version: String,
    /// SHA-256 of the spec file.
    pub spec_hash: String,
    pub spec_path: String,
    /// Where samples came from: `ncu`, or `replay:<dir>`.
    pub source: String,
    /// True when the samples are known to be synthetic (a recording whose manifest says so).
    #[serde(default)]
    pub synthetic: bool,
    pub fingerprint: Fingerprint,
    /// The baseline's fingerprint, when it differed and the mismatch was allowed.
    pub fingerprint_mismatch: Option<Vec<[String; 3]>>,
    /// Shard `K/N` this run covered, if sharded.
    pub shard: Option<String>,
    pub git_commit: Option<String>,
    /// RFC 3339 time the run finished.
    pub date: String,
    pub fail_on: String,
    /// Run-wide false-alarm control, e.g. `holm alpha=0.01`.
    pub multiple_testing: String,
    pub rows: Vec<Row>,
    #[serde(default)]
    pub errors: Vec<RunError>,
    #[serde(default)]
    pub health: Health,
    /// Wall time spent per target, in seconds (for shard balancing).
    #[serde(default)]
    pub cost_seconds: BTreeMap<String, f64>,
    /// Spec-declared derived metrics and roofline data per target x size, when known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roofline: Vec<RooflinePoint>,
}

/// Where a target x size x kernel sits on the roofline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RooflinePoint {
    pub target: String,
    pub size: String,
    pub kernel: String,
    pub flops: f64,
    pub bytes: f64,
    pub duration_ns: f64,
    pub achieved_tflops: f64,
    pub achieved_gbps: f64,
    pub intensity: f64,
    pub peak_tflops: Option<f64>,
    pub peak_gbps: Option<f64>,
    pub bound: Option<String>,
}

impl Results {
    /// Count rows with a verdict.
    pub fn count(&self, v: RowVerdict) -> usize {
        self.rows.iter().filter(|r| r.verdict == v).count()
    }
}

impl Results {
    /// Write the results as pretty JSON, atomically.
    ///
    /// # Errors
    /// [`crate::Error::Io`] naming the path.
    pub fn write(&self, path: &std::path::Path) -> Result<(), crate::Error> {
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|e| crate::Error::Environment(format!("cannot encode results: {e}")))?;
        text.push('\n');
        crate::fsutil::write_atomic(path, text.as_bytes())
    }
}
