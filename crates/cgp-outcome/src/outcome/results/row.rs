//! One judged row: what identifies it, the rule it was judged by, and its [`Outcome`].
//!
//! The results file holds rows flat (`wire::RowWire`, the same bytes as schema 1 and 2);
//! here the verdict and what only some verdicts have (`fails_gate` of a missing row, the reason a
//! row was skipped) are one enum, so a row cannot be a "passing missing row that fails the gate".

use serde::{Deserialize, Serialize};

use super::key::{Kernel, OwnedRowKey, RowKey};
use super::{Direction, Method, RowVerdict, SideSummary, Threshold, ThresholdKind};
use crate::foundation::units::Quantity;

/// One judged row.
/// Written and read through its flat form, `wire::RowWire` (see the `Serialize` impl there).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// What identifies the row: GPU, target, size, kernel and metric (see [`OwnedRowKey`]).
    pub key: OwnedRowKey,
    /// Base unit of every number in the row.
    pub unit: String,
    /// What the row came to: compared, new, missing, skipped or an error.
    pub outcome: Outcome,
    /// The rule the row was judged by, with the tolerance the statistics used; `None` for rows
    /// that have no spec metric (a baseline entry whose metric left the spec).
    pub threshold: Option<RowThreshold>,
    /// Which side is better.
    pub direction: Option<Direction>,
    /// The statistical method that decided (`mann-whitney+hodges-lehmann`, `exact`, ...).
    pub method: Method,
    /// The numbers the verdict used: the one estimate and interval every report shows.
    pub estimate: Estimate,
    pub baseline: Option<SideSummary>,
    pub candidate: Option<SideSummary>,
    /// Why the verdict is what it is, in one sentence.
    pub reason: String,
    /// How many re-measurement rounds this row took.
    pub remeasured: u32,
    /// The repetition each candidate sample came from (same order as `candidate.samples`), so a
    /// results file can become a baseline without profiling again.
    pub candidate_reps: Vec<u32>,
    /// Medians of older baseline generations, oldest first (for trends).
    pub history: Vec<f64>,
    /// For a timing row that regressed, improved or is doubtful: the explanatory counters that
    /// changed beyond their noise and a one-line reading (docs/why.md). `None` otherwise.
    pub why: Option<crate::measured::why::Why>,
    /// The launch configurations (`grid (X, Y, Z) block (X, Y, Z)`) the candidate's samples came
    /// from, so a results file becomes a baseline with them. Empty when not known.
    pub candidate_configs: Vec<String>,
    /// Set by `check` when the kernel's launch configuration differs between the baseline and
    /// this run: the row still compares the one series (the kernel did not become a new one),
    /// and every report says what changed. `None`: the same, or unknown on one side.
    pub config_change: Option<ConfigChange>,
}

/// What a row came to. The row's [`RowVerdict`] is read from it ([`Row::verdict`]); what the
/// outcome means for the gate is decided in [`crate::outcome::decide`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Judged by the statistics, against the baseline or against a `min:`/`max:` limit (the
    /// numbers are in [`Row::estimate`]).
    Compared(Judged),
    /// Measured now, no baseline to compare with.
    New,
    /// In the baseline, not measured now.
    Missing(Missing),
    /// Not profiled, and a pass: see [`SkipReason`].
    Skipped(SkipReason),
    /// Could not be judged (a profiler failure, samples of another unit than the baseline's);
    /// the run's errors say why.
    Error,
}

/// The verdict of a compared row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Judged {
    Regression,
    Inconclusive,
    Improvement,
    Pass,
}

/// A baseline row the run did not measure.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Missing {
    /// The run should have measured it and the user did not allow it: it fails the gate (see
    /// [`crate::run::missing`]).
    pub fails_gate: bool,
    /// Why it was not measured, as far as the run knows.
    pub cause: MissingCause,
}

impl Missing {
    /// A missing row of this cause that fails the gate.
    pub fn failing(cause: MissingCause) -> Self {
        Self {
            fails_gate: true,
            cause,
        }
    }
}

/// Why a baseline row was not measured. The results file keeps it in the row's
/// `missing_cause` (`{"kind": "unselected", "ran": [...]}`); a file written before that field
/// existed has it only in the row's `reason`, and reading such a file recovers it from there once
/// ([`MissingCause::of_reason`]), so no reporter reads the reason's words.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum MissingCause {
    /// The target's `kernel:` filter selected none of the kernels that ran; these ran (names).
    Unselected { ran: Vec<String> },
    /// The row is of a baseline file whose target the spec no longer has (`crate::run::gone`).
    TargetGone,
    /// Not measured: renamed, no longer launched, or a size the spec no longer has. A kind this
    /// version does not know (a newer file) reads as this one (serde's `other` variant, last).
    #[default]
    #[serde(other)]
    NotMeasured,
}

impl MissingCause {
    /// What the reason of a row of this cause says after its first clause: `the kernel filter
    /// selected none of the kernels that ran: the application ran `a`, `b``.
    pub const RAN: &str = " the application ran ";
    /// The words of a [`MissingCause::TargetGone`] row's reason.
    pub const GONE: &str = "which the spec no longer has";

    /// The cause a missing row's reason states, as cgp-gate writes it (for results files, whose
    /// rows keep the cause only in their reason).
    pub fn of_reason(reason: &str) -> Self {
        if reason.contains(Self::GONE) {
            Self::TargetGone
        } else if let Some((_, ran)) = reason.split_once(Self::RAN) {
            // `a`, `b`: split between the backticks, as C++ names hold ", " themselves.
            let inner = ran
                .strip_prefix('`')
                .and_then(|r| r.strip_suffix('`'))
                .unwrap_or(ran);
            Self::Unselected {
                ran: inner.split("`, `").map(str::to_owned).collect(),
            }
        } else {
            Self::NotMeasured
        }
    }
}

/// The numbers a compared row's verdict used; every field is `None` where the row has no such
/// number (a limit row has a `median_ci` and no change; a missing row has none).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Estimate {
    /// Relative change of the candidate against the baseline (0.031 = +3.1%).
    pub change: Option<f64>,
    /// Confidence interval of the relative change.
    pub change_ci: Option<[f64; 2]>,
    /// For `min:`/`max:` rows: the interval of the candidate's median, in base units.
    pub median_ci: Option<[f64; 2]>,
    /// Coverage of the interval shown (0.95, ...).
    pub confidence: Option<f64>,
    /// One-sided p-value of the test in the regression direction (unadjusted).
    pub p: Option<f64>,
    /// p-value after the run-wide multiple-testing correction.
    pub p_adjusted: Option<f64>,
    /// What the test left out as the machine's (far launches, slow-side dips, disturbed
    /// processes), or kept as the code's (`stats::screen`); `None` where no outlier rule applies.
    pub left_out: Option<crate::stats::screen::LeftOut>,
}

impl From<RowVerdict> for Outcome {
    /// The outcome of a verdict, with nothing more known: a missing row that does not fail the
    /// gate, never a skipped row.
    fn from(v: RowVerdict) -> Self {
        match v {
            RowVerdict::Regression => Self::Compared(Judged::Regression),
            RowVerdict::Inconclusive => Self::Compared(Judged::Inconclusive),
            RowVerdict::Improvement => Self::Compared(Judged::Improvement),
            RowVerdict::Pass => Self::Compared(Judged::Pass),
            RowVerdict::Error => Self::Error,
            RowVerdict::New => Self::New,
            RowVerdict::Missing => Self::Missing(Missing::default()),
        }
    }
}

impl Outcome {
    /// The verdict every report shows and the results file writes.
    pub fn verdict(&self) -> RowVerdict {
        match self {
            Self::Compared(Judged::Regression) => RowVerdict::Regression,
            Self::Compared(Judged::Inconclusive) => RowVerdict::Inconclusive,
            Self::Compared(Judged::Improvement) => RowVerdict::Improvement,
            Self::Compared(Judged::Pass) | Self::Skipped(_) => RowVerdict::Pass,
            Self::New => RowVerdict::New,
            Self::Missing(_) => RowVerdict::Missing,
            Self::Error => RowVerdict::Error,
        }
    }
}

/// A launch configuration that changed between the baseline and this run (see
/// [`Row::config_change`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigChange {
    /// The configurations of the baseline's samples, sorted.
    pub baseline: Vec<String>,
    /// The configurations of this run's samples, sorted.
    pub candidate: Vec<String>,
}

impl ConfigChange {
    /// `grid (64, 1, 1) block (256, 1, 1) -> grid (128, 1, 1) block (256, 1, 1)`.
    pub fn describe(&self) -> String {
        format!("{} -> {}", self.baseline.join(" + "), self.candidate.join(" + "))
    }
}

/// Why a row was not profiled. Written as a kebab-case string; a reason this version does not
/// know is kept as it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum SkipReason {
    /// `same-sass`: the kernel's machine code equals the baseline's (docs/sass-cache.md); the row
    /// is a pass.
    SameSass,
    /// A reason written by another version.
    Other(String),
}

impl SkipReason {
    pub fn as_str(&self) -> &str {
        match self {
            Self::SameSass => "same-sass",
            Self::Other(s) => s,
        }
    }

    /// The word every report shows in place of the verdict: `unchanged` for the same machine
    /// code, `skipped` for a reason this version does not know.
    pub fn label(&self) -> &'static str {
        match self {
            Self::SameSass => "unchanged",
            Self::Other(_) => "skipped",
        }
    }
}

impl From<String> for SkipReason {
    fn from(s: String) -> Self {
        if s == "same-sass" {
            Self::SameSass
        } else {
            Self::Other(s)
        }
    }
}

impl From<SkipReason> for String {
    fn from(r: SkipReason) -> Self {
        r.as_str().to_owned()
    }
}

/// A row's threshold: the spec's rule and what the statistics made of it (as `repr::ThresholdRepr`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "super::repr::ThresholdRepr", try_from = "super::repr::ThresholdRepr")]
pub struct RowThreshold {
    /// `relative` (with `fraction`), `exact`, `min` or `max` (with `value`, base units).
    pub kind: ThresholdKind,
    /// Changes smaller than this absolute amount are never a regression or an improvement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_effect: Option<Quantity>,
    /// The relative tolerance the statistics judged against (the threshold, raised by
    /// `min_effect`), when a change was tested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    /// Where the candidate's median crosses the threshold, base units, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<f64>,
}

impl Row {
    /// A row that was not statistically judged (missing, or an error), with no numbers yet.
    pub fn bare(
        target: &str,
        size: &str,
        kernel: Option<&str>,
        metric: &str,
        unit: &str,
        verdict: RowVerdict,
        reason: &str,
    ) -> Self {
        Self {
            key: OwnedRowKey {
                gpu: String::new(),
                target: target.to_owned(),
                size: size.to_owned(),
                kernel: kernel.map(Kernel::from),
                metric: metric.to_owned(),
            },
            unit: unit.to_owned(),
            outcome: Outcome::from(verdict),
            threshold: None,
            direction: None,
            method: Method::None,
            estimate: Estimate::default(),
            baseline: None,
            candidate: None,
            reason: reason.to_owned(),
            remeasured: 0,
            candidate_reps: Vec::new(),
            history: Vec::new(),
            why: None,
            candidate_configs: Vec::new(),
            config_change: None,
        }
    }
}

impl Row {
    /// The row's verdict, read from its [`Outcome`].
    pub fn verdict(&self) -> RowVerdict {
        self.outcome.verdict()
    }

    /// Give the row the plain outcome of a verdict (see `From<RowVerdict> for Outcome`).
    pub fn set_verdict(&mut self, v: RowVerdict) {
        self.outcome = Outcome::from(v);
    }

    /// Why the row was not profiled, for a skipped row.
    pub fn skipped(&self) -> Option<&SkipReason> {
        match &self.outcome {
            Outcome::Skipped(r) => Some(r),
            _ => None,
        }
    }

    /// A `missing` row that the run should have measured and that the user did not allow.
    pub fn fails_gate(&self) -> bool {
        matches!(self.outcome, Outcome::Missing(Missing { fails_gate: true, .. }))
    }

    /// The kernel as reports print it: its name, or `-` for a row that belongs to no kernel.
    pub fn kernel_label(&self) -> &str {
        self.key.kernel_label()
    }

    /// The key that identifies this row in a run, borrowed (see [`RowKey`]).
    pub fn key(&self) -> RowKey<'_> {
        self.key.as_key()
    }
}

impl RowThreshold {
    /// The spec's threshold, before anything was measured.
    pub fn of(t: &Threshold) -> Self {
        Self {
            kind: t.kind.clone(),
            min_effect: t.min_effect.clone(),
            tolerance: None,
            limit: None,
        }
    }

    /// The rule as the spec wrote it, without the direction: `3%`, `exact`, `max 5`.
    pub fn rule(&self) -> String {
        Threshold {
            kind: self.kind.clone(),
            direction: Direction::Lower,
            min_effect: None,
        }
        .rule()
    }

    /// The full display form, `3% (lower is better, min effect 500ns)`.
    pub fn display(&self, direction: Option<Direction>) -> String {
        match direction {
            Some(direction) => Threshold {
                kind: self.kind.clone(),
                direction,
                min_effect: self.min_effect.clone(),
            }
            .to_string(),
            None => self.rule(),
        }
    }
}

/// A row's threshold for display: `3% (lower is better)`, or `-` when the row has none.
pub fn threshold_text(row: &Row) -> String {
    row.threshold
        .as_ref()
        .map_or_else(|| "-".to_owned(), |t| t.display(row.direction))
}
