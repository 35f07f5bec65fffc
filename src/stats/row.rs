//! What the statistics say about one row: its verdict and the summary of each side. Defined
//! here, at the bottom, so that the statistics import nothing above them; `results` re-exports
//! both.

use serde::{Deserialize, Serialize};

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
    /// Samples (launches, after the warm-up launches each run drops).
    pub n: usize,
    /// Runs (profiler processes) the samples came from; absent where not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<usize>,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Coefficient of variation (robust: MAD * 1.4826 / median), when defined.
    pub cv: Option<f64>,
    /// Indices of samples outside Tukey's fences (reported; the samples stay whole, and the tests
    /// leave out slow-side dips by their own rule, `stats::dips`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outliers: Vec<usize>,
    pub samples: Vec<f64>,
}
