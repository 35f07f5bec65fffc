//! The results of a gate run: typed data, written as JSON by `check --json`, read back by
//! `report --from`, `merge` and `baseline update --from`. Reporters render this; they decide nothing.
//!
//! What the rows and errors mean for the gate (row gate status, run verdict, exit code) is
//! decided in one place, [`crate::outcome::decide`]; this module holds the types and the file format.
//!
//! Schema 2 (this version) types what version 1 stored as display strings: the threshold,
//! the direction, `fail_on`, error kinds and the fingerprint mismatch. Version 1 files are still
//! read (see the `v1` deserialisers below); every field name and value that version 1 had and
//! schema 2 still has is unchanged: lowercase verdicts, `size` as `key=value` pairs,
//! `rows[].target/size/kernel/metric/verdict`, the top-level `verdict` and `fingerprint`.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use crate::foundation::exit_codes::ErrorClass;
pub use crate::foundation::failure::FailureKind;
pub use crate::foundation::threshold::{Direction, Threshold, ThresholdKind};
use crate::gpu::fingerprint::Fingerprint;

/// Schema version of the results file. Readers accept this and older versions, and refuse newer.
pub const RESULTS_VERSION: u32 = 2;

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

pub use crate::stats::{Method, RowVerdict, SideSummary};

/// A failure that stopped a target or size from being measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunError {
    pub target: String,
    pub size: Option<String>,
    /// Failure class (`ncu-not-found`, `permission`, `timeout`, ...).
    pub kind: ErrorKind,
    pub message: String,
}

pub use crate::gpu::health::Health;
pub use crate::gpu::roofline::RooflinePoint;

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
    pub source: crate::measured::source::Source,
    /// True when the samples are known to be synthetic (a recording whose manifest says so).
    #[serde(default)]
    pub synthetic: bool,
    pub fingerprint: Fingerprint,
    /// How the baseline's fingerprint differed, when the mismatch was allowed; empty when it
    /// did not differ (written as `null`, as before).
    #[serde(with = "null_when_empty")]
    pub fingerprint_mismatch: Vec<FingerprintDiff>,
    /// Shard `K/N` this run covered, if sharded.
    pub shard: Option<String>,
    pub git_commit: Option<String>,
    /// RFC 3339 time the run finished.
    pub date: String,
    pub fail_on: FailOn,
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
    /// Kernels not profiled because their SASS equals the baseline's, and the GPU time that saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sass_skip: Option<SassSkip>,
    /// What Nsight Compute cost for the why of `profiler: cupti` targets (docs/cupti.md): the
    /// sizes it profiled once for their counters, and its wall seconds. Absent when none.
    #[serde(default, skip_serializing_if = "WhyCost::is_none")]
    pub why_cost: WhyCost,
    /// GPU time by category of each `profiler: nsys` target x size, every category, baseline
    /// against candidate (medians): the stacked bars. Absent in older files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub category_bars: Vec<crate::nsys::bars::CategoryBars>,
    /// True when `category_bars` holds only the gated categories: read from a file written
    /// before `category_bars` existed, rebuilt from its `category:<name>` rows by [`parse`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub category_bars_gated_only: bool,
    /// `check --base`: the base commit, which rows were confirmed against its build and how, or
    /// why the confirmation did not run (docs/confirm.md). Absent without `--base`.
    #[serde(default, skip_serializing_if = "RunConfirmation::is_none")]
    pub confirmation: RunConfirmation,
    /// What every report of this run must say about trusting its numbers: a run that gates code
    /// from a pull request with a profiler whose times the program under test can write
    /// (`profile::Backend::program_can_forge`: CUPTI's trace, a harness's own file). Absent when
    /// none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<String>,
}

/// The ncu runs behind the why of `profiler: cupti` rows (docs/cupti.md); zero when there were none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WhyCost {
    /// Target sizes ncu profiled once.
    pub sizes: usize,
    /// ncu's wall time for them, seconds.
    pub seconds: f64,
}

impl WhyCost {
    /// The costs of several shards together.
    pub(crate) fn sum<'a>(parts: impl Iterator<Item = &'a Self>) -> Self {
        parts.fold(Self::default(), |a, p| Self {
            sizes: a.sizes + p.sizes,
            seconds: a.seconds + p.seconds,
        })
    }

    /// No ncu run for a why (the field is left out of the file).
    pub(crate) fn is_none(&self) -> bool {
        self.sizes == 0 && self.seconds == 0.0
    }
}

/// What the SASS cache saved in a run (docs/sass-cache.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SassSkip {
    /// (target, size, kernel) triples not profiled.
    pub kernels: usize,
    /// Target sizes not profiled (a size is skipped only when all its kernels are unchanged).
    pub sizes: usize,
    /// Kernel GPU time not spent, in ns: the baseline's median duration of each skipped kernel
    /// times the repetitions a check runs; ncu's replay passes and application start-up, which
    /// cost more, are not counted. `None` when the baseline has no `gpu__time_duration.sum`.
    pub gpu_time_saved_ns: Option<f64>,
}

impl SassSkip {
    /// The skips of several shards together; `None` when none skipped anything.
    pub(crate) fn sum<'a>(parts: impl Iterator<Item = &'a Self>) -> Option<Self> {
        parts.fold(None, |acc: Option<Self>, p| {
            Some(match acc {
                None => p.clone(),
                Some(a) => Self {
                    kernels: a.kernels + p.kernels,
                    sizes: a.sizes + p.sizes,
                    gpu_time_saved_ns: match (a.gpu_time_saved_ns, p.gpu_time_saved_ns) {
                        (None, None) => None,
                        (x, y) => Some(x.unwrap_or(0.0) + y.unwrap_or(0.0)),
                    },
                },
            })
        })
    }
}

impl Results {
    /// Count rows with a verdict.
    pub fn count(&self, v: RowVerdict) -> usize {
        self.rows.iter().filter(|r| r.verdict() == v).count()
    }

    /// Write [`Results::to_json`] atomically, or to standard output for `-`
    /// ([`crate::Error::Io`] naming the path when not).
    pub fn write(&self, path: &std::path::Path) -> Result<(), crate::Error> {
        crate::foundation::fsutil::write_output(path, self.to_json()?.as_bytes())
    }

    /// The results file's text, pretty JSON and a newline ([`crate::Error::Output`] when not).
    pub fn to_json(&self) -> Result<String, crate::Error> {
        let text = serde_json::to_string_pretty(self).map_err(|e| crate::Error::output("results", e))?;
        Ok(text + "\n")
    }
}

/// Read a results file, refusing newer schema versions.
///
/// # Errors
/// [`crate::Error::Io`] when unreadable; [`crate::Error::Input`] (with line and column) when not valid results.
pub fn read(path: &std::path::Path) -> Result<Results, crate::Error> {
    let text = crate::foundation::fsutil::read_text(path, crate::foundation::fsutil::limits::RESULTS)
        .map_err(|e| e.into_error(path, "results file"))?;
    parse(&text).map_err(|m| crate::Error::input(path, m))
}

/// Parse results JSON; the error is a message for [`crate::Error::Input`].
///
/// # Errors
/// A message with the position of the problem, or the version mismatch and what to do.
pub fn parse(text: &str) -> Result<Results, String> {
    // Read the version first: a newer file may not fit today's structs, and "upgrade cgp-gate"
    // is a better message than the first unknown field.
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    let version = v.get("schema_version").ok_or_else(|| {
        "no `schema_version` field; is this a results file written by `cgp-gate check --json`?".to_owned()
    })?;
    let version = version
        .as_u64()
        .ok_or_else(|| format!("`schema_version` is {version}, not a whole number"))?;
    if version > u64::from(RESULTS_VERSION) {
        return Err(format!(
            "results schema_version {version} is newer than this cgp-gate reads ({RESULTS_VERSION}); upgrade cgp-gate"
        ));
    }
    let mut results: Results = serde_json::from_str(text).map_err(|e| format!("invalid results: {e}"))?;
    if results.category_bars.is_empty() {
        results.category_bars = gated_category_bars(&results.rows);
        results.category_bars_gated_only = !results.category_bars.is_empty();
    }
    Ok(results)
}

/// The stacked bars of a results file written before `category_bars` existed: its gated
/// `category:<name>` rows (in ns), grouped by target and size, in row order.
fn gated_category_bars(rows: &[Row]) -> Vec<crate::nsys::bars::CategoryBars> {
    use crate::nsys::bars::{CategoryBars, CategoryMedians};
    let mut out: Vec<CategoryBars> = Vec::new();
    for r in rows.iter().filter(|r| r.unit == "ns") {
        let Some(name) = crate::spec::category_of(&r.key.metric) else {
            continue;
        };
        let c = CategoryMedians {
            name: name.to_owned(),
            baseline_ns: r.sides.baseline.as_ref().map(|s| s.median),
            candidate_ns: r.sides.candidate.as_ref().map(|s| s.median),
        };
        match out
            .iter_mut()
            .find(|g| g.target == r.key.target && g.size == r.key.size)
        {
            Some(g) => g.categories.push(c),
            None => out.push(CategoryBars {
                target: r.key.target.clone(),
                size: r.key.size.clone(),
                categories: vec![c],
            }),
        }
    }
    out
}

/// What makes a run exit non-zero besides errors.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailOn {
    /// Only regressions fail the gate (inconclusive rows are warnings).
    #[default]
    Regression,
    /// Regressions and inconclusive rows fail the gate.
    Inconclusive,
}

impl FailOn {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Regression => "regression",
            Self::Inconclusive => "inconclusive",
        }
    }

    /// The stricter of two settings.
    #[must_use]
    pub(crate) fn strictest(self, other: Self) -> Self {
        if self == Self::Inconclusive || other == Self::Inconclusive {
            Self::Inconclusive
        } else {
            Self::Regression
        }
    }
}

/// One fingerprint field in which the baseline and this run differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "v1::FingerprintDiffRepr")]
pub struct FingerprintDiff {
    /// `target: field`.
    pub field: String,
    /// The baseline's value.
    pub baseline: String,
    /// This run's value.
    pub current: String,
}

/// The class of a failure that stopped a target or size (or the run) from being judged: a
/// profiler run's [`FailureKind`] (the one classification of profiler failures, shared with
/// `ncu::log` and the profilers), or one of the run's own.
///
/// Written as a kebab-case string; a kind this version does not know is kept as it was read.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum ErrorKind {
    /// A profiler run failed (`ncu-not-found`, `permission`, `timeout`, `bad-recording`, ...).
    Profiler(FailureKind),
    /// A shard's results were not among `merge`'s inputs.
    MissingShard,
    /// A shard's results say `error` but list no failure (`merge`).
    ShardFailed,
    /// The spec asks for something the measurement shows to be impossible (exit 2).
    InvalidInput,
    /// `check --base`: the base commit did not build, start or run, so the doubtful rows could
    /// not be confirmed (exit 3).
    BaseFailed,
    /// A kind written by another version.
    Other(String),
}

impl ErrorKind {
    const RUN: &[(Self, &'static str)] = &[
        (Self::MissingShard, "missing-shard"),
        (Self::ShardFailed, "shard-failed"),
        (Self::InvalidInput, "invalid-input"),
        (Self::BaseFailed, "base-failed"),
    ];

    /// What kind of failure this is, as [`crate::Error::class`] says it: invalid input (exit 2)
    /// for a spec mistake the measurement revealed and (by [`FailureKind::class`]) a damaged
    /// recording; a shard's absence or failure, or another version's kind: the environment (3).
    pub(crate) fn class(&self) -> ErrorClass {
        match self {
            Self::Profiler(k) => k.class(),
            Self::InvalidInput => ErrorClass::InvalidInput,
            Self::MissingShard | Self::ShardFailed | Self::BaseFailed | Self::Other(_) => {
                ErrorClass::Environment
            }
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Self::Profiler(k) => k.as_str(),
            Self::Other(s) => s,
            k => Self::RUN.iter().find(|(n, _)| n == k).map_or("other", |(_, s)| s),
        }
    }
}

impl From<String> for ErrorKind {
    fn from(s: String) -> Self {
        if let Some(k) = FailureKind::ALL.iter().find(|k| k.as_str() == s) {
            return Self::Profiler(*k);
        }
        Self::RUN
            .iter()
            .find(|(_, name)| *name == s)
            .map_or(Self::Other(s), |(k, _)| k.clone())
    }
}

impl From<&str> for ErrorKind {
    fn from(s: &str) -> Self {
        Self::from(s.to_owned())
    }
}

impl From<ErrorKind> for String {
    fn from(k: ErrorKind) -> Self {
        k.as_str().to_owned()
    }
}

impl From<FailureKind> for ErrorKind {
    fn from(k: FailureKind) -> Self {
        Self::Profiler(k)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A list written as `null` when empty, and `null` read as empty (the form of an `Option<Vec>`).
mod null_when_empty {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<T: Serialize, S: Serializer>(v: &[T], s: S) -> Result<S::Ok, S::Error> {
        if v.is_empty() {
            s.serialize_none()
        } else {
            s.serialize_some(v)
        }
    }

    pub(super) fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<T>, D::Error> {
        Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
    }
}

mod confirm;
mod key;
mod repr;
mod row;
mod v1;
mod wire;

pub use confirm::{ConfirmMode, ConfirmStatus, Confirmation, Confirmed, RunConfirmation, Screen};
pub use key::{Kernel, OwnedRowKey, RowKey};
pub use row::{
    Bound, ConfigChange, Decision, Estimate, Judged, Missing, MissingCause, Outcome, Row, RowRule,
    RowThreshold, Shift, Sides, SkipReason, Test,
};

#[cfg(test)]
mod tests;
