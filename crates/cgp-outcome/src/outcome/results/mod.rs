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
    ConfigChange, Decision, Estimate, Judged, Missing, MissingCause, Outcome, Row, RowRule, RowThreshold,
    Shift, Sides, SkipReason, Test,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn row(verdict: RowVerdict) -> Row {
        serde_json::from_value(serde_json::json!({
            "target": "t", "size": "n=1", "kernel": "k", "metric": "gpu__time_duration.sum",
            "unit": "ns", "verdict": verdict, "threshold": "3% (lower is better, min effect 500ns)",
            "direction": "lower", "method": "none", "change": null, "change_ci": null,
            "confidence": null, "p": null, "p_adjusted": null, "baseline": null,
            "candidate": null, "reason": ""
        }))
        .unwrap()
    }

    #[test]
    fn version_1_strings_are_read_as_types() {
        let r = row(RowVerdict::Pass);
        let t = r.rule.threshold.as_ref().unwrap();
        assert_eq!(t.kind, ThresholdKind::Relative { fraction: 0.03 });
        assert_eq!(t.min_effect.as_ref().unwrap().unit, "ns");
        assert_eq!(r.rule.direction, Some(Direction::Lower));
        assert_eq!(r.rule.text(), "3% (lower is better, min effect 500ns)");
        for (text, kind) in [
            ("exact (lower is better)", ThresholdKind::Exact),
            ("min 40 (higher is better)", ThresholdKind::Min { value: 40.0 }),
            ("max 1.5 (lower is better)", ThresholdKind::Max { value: 1.5 }),
        ] {
            assert_eq!(v1::parse_threshold(text).unwrap().kind, kind, "{text}");
        }
        assert_eq!(v1::parse_threshold("-"), None);
        let diff: Vec<FingerprintDiff> =
            serde_json::from_str(r#"[["t: driver_version", "550", "570"]]"#).unwrap();
        assert_eq!(
            diff[0],
            FingerprintDiff {
                field: "t: driver_version".into(),
                baseline: "550".into(),
                current: "570".into()
            }
        );
        let kind: ErrorKind = serde_json::from_str(r#""some-future-kind""#).unwrap();
        assert_eq!(kind, ErrorKind::Other("some-future-kind".into()));
        let kind: ErrorKind = serde_json::from_str(r#""bad-recording""#).unwrap();
        assert_eq!(kind, ErrorKind::Profiler(FailureKind::BadRecording));
        assert_eq!(
            kind.class().exit().code(),
            2,
            "a damaged recording is invalid input"
        );
        assert_eq!(ErrorKind::from("missing-shard"), ErrorKind::MissingShard);
        assert_eq!(serde_json::to_string(&kind).unwrap(), r#""bad-recording""#);
        let kind = ErrorKind::Other("some-future-kind".into());
        assert_eq!(serde_json::to_string(&kind).unwrap(), r#""some-future-kind""#);
        let f: FailOn = serde_json::from_str(r#""inconclusive""#).unwrap();
        assert_eq!(f, FailOn::Inconclusive);
    }

    #[test]
    fn older_files_get_their_category_bars_from_the_gated_category_rows() {
        let mut rows: Vec<serde_json::Value> = Vec::new();
        for (metric, b, c) in [("category:gemm", 900.0, 950.0), ("category:misc", 100.0, 90.0)] {
            let mut r = serde_json::to_value(row(RowVerdict::Pass)).unwrap();
            r["metric"] = metric.into();
            r["baseline"] = serde_json::to_value(crate::stats::summarize(&[b])).unwrap();
            r["candidate"] = serde_json::to_value(crate::stats::summarize(&[c])).unwrap();
            rows.push(r);
        }
        let text = serde_json::json!({
            "schema_version": 2, "verdict": "pass", "tool_version": "0", "spec_hash": "",
            "spec_path": "", "source": "synthetic",
            "fingerprint": serde_json::to_value(Fingerprint::default()).unwrap(),
            "fingerprint_mismatch": null,
            "shard": null, "git_commit": null, "date": "", "fail_on": "regression",
            "multiple_testing": "", "rows": rows
        })
        .to_string();
        let r = parse(&text).unwrap();
        assert!(r.category_bars_gated_only);
        assert_eq!(r.category_bars.len(), 1);
        let names: Vec<&str> = r.category_bars[0]
            .categories
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["gemm", "misc"]);
        assert_eq!(r.category_bars[0].categories[0].candidate_ns, Some(950.0));
    }

    #[test]
    fn schema_2_round_trips_and_keeps_version_1_values() {
        let mut r = row(RowVerdict::Regression);
        r.rule.threshold.as_mut().unwrap().tolerance = Some(0.04);
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["verdict"], "regression");
        assert_eq!(v["size"], "n=1");
        assert_eq!(v["direction"], "lower");
        assert_eq!(v["threshold"]["kind"], "relative");
        assert_eq!(v["threshold"]["fraction"], 0.03);
        assert_eq!(v["threshold"]["tolerance"], 0.04);
        let back: Row = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
        let mut none = row(RowVerdict::Missing);
        none.rule.threshold = None;
        none.rule.direction = None;
        let v = serde_json::to_value(&none).unwrap();
        assert_eq!(v["direction"], "-");
        assert_eq!(serde_json::from_value::<Row>(v).unwrap(), none);
    }

    #[test]
    fn every_outcome_round_trips_through_the_flat_file_form() {
        let numbers = Estimate {
            shift: Shift::Change {
                change: 0.031,
                ci: Some([0.012, 0.05]),
                detectable: Some(0.052),
            },
            confidence: Some(0.95),
            test: Some(Test {
                p: 0.001,
                p_adjusted: Some(0.004),
            }),
            left_out: None,
        };
        let outcomes = [
            Outcome::Compared(Judged::Inconclusive, numbers.clone()),
            Outcome::Compared(Judged::Pass, Estimate::default()),
            Outcome::New,
            Outcome::Missing(Missing::failing(MissingCause::NotMeasured)),
            Outcome::Missing(Missing::default()),
            Outcome::Skipped(SkipReason::SameSass),
            Outcome::Error,
        ];
        for outcome in outcomes {
            let mut r = row(RowVerdict::Pass);
            r.outcome = outcome.clone();
            let v = serde_json::to_value(&r).unwrap();
            assert_eq!(v["verdict"], r.verdict().as_str(), "{outcome:?}");
            assert_eq!(v.get("fails_gate").is_some(), r.fails_gate(), "{outcome:?}");
            assert_eq!(v["skipped"].as_str(), r.skipped().map(SkipReason::as_str));
            let back: Row = serde_json::from_value(v).unwrap();
            assert_eq!(back.outcome, outcome);
        }
        // A flag on a verdict that never carries it (an edited file) is dropped, not believed.
        let mut v = serde_json::to_value(row(RowVerdict::Regression)).unwrap();
        v["fails_gate"] = true.into();
        v["skipped"] = "same-sass".into();
        let back: Row = serde_json::from_value(v).unwrap();
        assert_eq!(
            back.outcome,
            Outcome::Compared(Judged::Regression, Estimate::default())
        );
        // Numbers on a row that was not compared (an older file's error row, written before
        // only compared rows had them) are not what decided it: read, they are dropped.
        let mut compared = row(RowVerdict::Regression);
        compared.outcome = Outcome::Compared(Judged::Regression, numbers);
        let mut v = serde_json::to_value(&compared).unwrap();
        assert_eq!(v["change"], 0.031);
        v["verdict"] = "error".into();
        let back: Row = serde_json::from_value(v).unwrap();
        assert_eq!(back.outcome, Outcome::Error);
        assert_eq!(back.estimate(), &Estimate::default());
    }

    /// A missing row's cause is written as its own field and read from it, whatever its reason
    /// says: a kernel whose name holds the words of another cause's reason no longer turns into
    /// that cause. The reason is never parsed back: a file written before the field existed, a
    /// cause kind of a newer version and a value of another shape all read as "not measured".
    #[test]
    fn a_missing_rows_cause_is_its_own_field_and_never_read_from_the_reason() {
        let mut r = row(RowVerdict::Missing);
        r.reason = format!("`odd {}` was not measured", MissingCause::GONE);
        let unselected = MissingCause::Unselected {
            ran: vec!["a, b".into(), "c".into()],
        };
        for cause in [
            MissingCause::NotMeasured,
            unselected.clone(),
            MissingCause::TargetGone {
                file: "b/h100/old.json".into(),
            },
        ] {
            r.outcome = Outcome::Missing(Missing::failing(cause.clone()));
            let v = serde_json::to_value(&r).unwrap();
            assert!(v["missing_cause"]["kind"].is_string(), "{v}");
            let back: Row = serde_json::from_value(v).unwrap();
            assert_eq!(back.outcome, Outcome::Missing(Missing::failing(cause)));
        }
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(
            v["missing_cause"],
            serde_json::json!({"kind": "target-gone", "file": "b/h100/old.json"})
        );
        // A gone row written before its file was a field: the cause, without the file.
        let mut before = v.clone();
        before["missing_cause"] = serde_json::json!({"kind": "target-gone"});
        let back: Row = serde_json::from_value(before).unwrap();
        let gone = MissingCause::TargetGone { file: String::new() };
        assert_eq!(back.outcome, Outcome::Missing(Missing::failing(gone.clone())));
        assert_eq!(gone.gone_file("t", true), None, "the row's reason says it then");
        // Older files: no field; the words of the reason are not read back.
        let mut old = v.clone();
        old.as_object_mut().unwrap().remove("missing_cause");
        old["reason"] = format!("the kernel filter selected none:{}`a, b`, `c`", MissingCause::RAN).into();
        let back: Row = serde_json::from_value(old).unwrap();
        assert_eq!(
            back.outcome,
            Outcome::Missing(Missing::failing(MissingCause::NotMeasured))
        );
        assert_ne!(MissingCause::NotMeasured, unselected);
        let mut newer = v;
        newer["missing_cause"] = serde_json::json!({"kind": "some-future-kind", "x": 1});
        let back: Row = serde_json::from_value(newer.clone()).unwrap();
        assert_eq!(
            back.outcome,
            Outcome::Missing(Missing::failing(MissingCause::NotMeasured))
        );
        // A value of another shape: the file still reads, the reason's words say nothing.
        for odd in [
            serde_json::json!(5),
            serde_json::json!("gone"),
            serde_json::json!([1]),
        ] {
            newer["missing_cause"] = odd.clone();
            let back: Row = serde_json::from_value(newer.clone()).unwrap_or_else(|e| panic!("{odd}: {e}"));
            assert_eq!(
                back.outcome,
                Outcome::Missing(Missing::failing(MissingCause::NotMeasured)),
                "{odd}"
            );
        }
        // Only missing rows carry it.
        let v = serde_json::to_value(row(RowVerdict::Pass)).unwrap();
        assert!(v.get("missing_cause").is_none());
    }

    #[test]
    fn no_kernel_is_written_and_read_as_a_dash() {
        let mut r = row(RowVerdict::Pass);
        assert_eq!(r.key.kernel_name(), Some("k"));
        assert_eq!(serde_json::to_value(&r).unwrap()["kernel"], "k");
        r.key.kernel = None;
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["kernel"], "-");
        assert_eq!(r.kernel_label(), "-");
        let back: Row = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(back.key.kernel, None);
        assert_eq!(back, r);
        let mut v = v;
        v["kernel"] = "gemm_kernel".into();
        let named: Row = serde_json::from_value(v).unwrap();
        assert_eq!(named.key.kernel_name(), Some("gemm_kernel"));
    }

    #[test]
    fn the_operation_row_kernel_is_typed_and_written_as_the_spec_name() {
        let mut v = serde_json::to_value(row(RowVerdict::Pass)).unwrap();
        v["kernel"] = crate::spec::SUM_KERNEL.into();
        let sum: Row = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(sum.key.kernel, Some(Kernel::Sum));
        assert_eq!(sum.kernel_label(), crate::spec::SUM_KERNEL);
        assert_eq!(serde_json::to_value(&sum).unwrap(), v);
        assert_eq!(Kernel::from("gemm"), Kernel::Named("gemm".to_owned()));
        assert!(
            Kernel::Sum < Kernel::from("gemm"),
            "kernels order by the name they are written as"
        );
    }

    #[test]
    fn row_keys_compare_order_and_print() {
        let mut a = row(RowVerdict::Pass);
        let mut b = a.clone();
        assert_eq!(a.key(), b.key());
        b.key.gpu = "NVIDIA H100 80GB HBM3".into();
        assert_ne!(a.key(), b.key());
        assert!(a.key() < b.key(), "an unknown GPU sorts first");
        assert_eq!(a.key().to_string(), "t[n=1] k gpu__time_duration.sum");
        assert_eq!(
            b.key().to_string(),
            a.key().to_string(),
            "the name leaves the GPU out"
        );
        a.key.kernel = None;
        assert_eq!(a.key().to_string(), "t[n=1] - gpu__time_duration.sum");
        assert!(a.key() < b.key(), "a row of no kernel sorts before the kernels");
        let owned = b.key().to_owned();
        assert_eq!(owned.as_key(), b.key());
        assert_eq!(owned.to_string(), b.key().to_string());
    }
}
