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

/// The statistical method that decided a row. Written as the strings earlier versions wrote
/// (`mann-whitney+hodges-lehmann`, `exact`, ...); a method this version does not know (from an
/// older or newer file) is kept as it was read, so such a file still reads.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum Method {
    /// `none`: nothing was tested (error, new, missing and skipped rows).
    None,
    /// `exact`: both sides are constant (deterministic counters); compared as numbers.
    Exact,
    /// `mann-whitney+hodges-lehmann`: rank test, Hodges-Lehmann interval of the shift.
    MannWhitneyHodgesLehmann,
    /// `mann-whitney+bootstrap`: rank test, bootstrap interval of the shift.
    MannWhitneyBootstrap,
    /// `sign-test+median-ci`: a `min:`/`max:` bound tested on the candidate's median.
    SignTestMedianCi,
    /// `run-level-t`: t interval over the per-run medians (runs differ more than launches).
    RunLevelT,
    /// `paired-t`: `ab`'s paired t test on the per-pair log ratios.
    PairedT,
    /// A method written by another version.
    Other(String),
}

impl Method {
    /// Every method this version writes (for tests and docs).
    pub(crate) const KNOWN: [Method; 7] = [
        Self::None,
        Self::Exact,
        Self::MannWhitneyHodgesLehmann,
        Self::MannWhitneyBootstrap,
        Self::SignTestMedianCi,
        Self::RunLevelT,
        Self::PairedT,
    ];

    pub fn as_str(&self) -> &str {
        match self {
            Self::None => "none",
            Self::Exact => "exact",
            Self::MannWhitneyHodgesLehmann => "mann-whitney+hodges-lehmann",
            Self::MannWhitneyBootstrap => "mann-whitney+bootstrap",
            Self::SignTestMedianCi => "sign-test+median-ci",
            Self::RunLevelT => "run-level-t",
            Self::PairedT => "paired-t",
            Self::Other(s) => s,
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<String> for Method {
    fn from(s: String) -> Self {
        Self::KNOWN
            .into_iter()
            .find(|m| m.as_str() == s)
            .unwrap_or(Self::Other(s))
    }
}

impl From<Method> for String {
    fn from(m: Method) -> Self {
        match m {
            Method::Other(s) => s,
            known => known.as_str().to_owned(),
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

#[cfg(test)]
mod tests {
    use super::Method;

    #[test]
    fn methods_round_trip_and_unknown_ones_are_kept() {
        for m in Method::KNOWN {
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(json, format!("\"{}\"", m.as_str()));
            assert_eq!(serde_json::from_str::<Method>(&json).unwrap(), m);
        }
        assert_eq!(
            serde_json::from_str::<Method>("\"mann-whitney+hodges-lehmann\"").unwrap(),
            Method::MannWhitneyHodgesLehmann
        );
        let future: Method = serde_json::from_str("\"wilcoxon+bca\"").unwrap();
        assert_eq!(future, Method::Other("wilcoxon+bca".to_owned()));
        assert_eq!(serde_json::to_string(&future).unwrap(), "\"wilcoxon+bca\"");
        assert_eq!(future.to_string(), "wilcoxon+bca");
    }
}
