//! One judged row: what identifies it, the rule it was judged by, and its [`Outcome`].
//!
//! The results file holds rows flat (`wire::RowWire`, the same bytes as schema 1 and 2);
//! here the verdict and what only some verdicts have (`fails_gate` of a missing row, the reason a
//! row was skipped) are one enum, so a row cannot be a "passing missing row that fails the gate".

use serde::{Deserialize, Serialize};

use super::key::{OwnedRowKey, RowKey};
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
    /// The rule the row was judged by and which side is better, carried together.
    pub rule: RowRule,
    /// The statistical method that decided (`mann-whitney+hodges-lehmann`, `exact`, ...).
    pub method: Method,
    /// The baseline's and this run's samples, summarised, where the row has them.
    pub sides: Sides,
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
    /// `check --base`: whether the row was confirmed against the base commit's build (its
    /// outcome is then the paired one) or needed it and it did not run (docs/confirm.md).
    pub confirmation: super::confirm::Confirmation,
}

/// What a row came to, each variant with only its own data. The row's [`RowVerdict`] is read
/// from it ([`Row::verdict`]); what the outcome means for the gate is decided in
/// [`crate::outcome::decide`].
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Judged by the statistics, against the baseline or against a `min:`/`max:` limit: the
    /// verdict and the numbers it used (the one estimate, its interval and level, the test),
    /// which every report shows ([`Row::estimate`]). No other outcome has numbers.
    Compared(Judged, Estimate),
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
///
/// Whether it fails the gate is decided in [`crate::outcome::decide`]; no other crate can read
/// it, neither as a field nor in a pattern nor through the row:
///
/// ```compile_fail
/// use cgp_outcome::outcome::results::{Missing, MissingCause};
/// let m = Missing::failing(MissingCause::NotMeasured);
/// assert!(m.fails_gate);
/// ```
///
/// ```compile_fail
/// use cgp_outcome::outcome::results::{Missing, Outcome};
/// fn fails(o: &Outcome) -> bool {
///     matches!(o, Outcome::Missing(Missing { fails_gate: true, .. }))
/// }
/// ```
///
/// ```compile_fail
/// use cgp_outcome::outcome::results::{Missing, MissingCause, Outcome, OwnedRowKey, Row};
/// let missing = Outcome::Missing(Missing::failing(MissingCause::NotMeasured));
/// let r = Row::bare(OwnedRowKey::default(), "ns", missing, "");
/// assert!(r.fails_gate());
/// ```
///
/// ```
/// // What a reporter may do: ask decide (the same row as above).
/// use cgp_outcome::outcome::decide::{Gate, row_gate};
/// use cgp_outcome::outcome::results::{FailOn, Missing, MissingCause, Outcome, OwnedRowKey, Row};
/// let missing = Outcome::Missing(Missing::failing(MissingCause::NotMeasured));
/// let r = Row::bare(OwnedRowKey::default(), "ns", missing, "");
/// assert_eq!(row_gate(&r, FailOn::Regression).gate(), Gate::Fail);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Missing {
    /// The run should have measured it and the user did not allow it: it fails the gate (see
    /// [`crate::outcome::missing`]). Private to this crate: what it means for the gate is
    /// decided in [`crate::outcome::decide`] and nowhere else.
    pub(crate) fails_gate: bool,
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
/// `missing_cause` (`{"kind": "unselected", "ran": [...]}`); reports read it from there and never
/// from the words of the row's reason. A file written before that field existed reads as
/// [`MissingCause::NotMeasured`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum MissingCause {
    /// The target's `kernel:` filter selected none of the kernels that ran; these ran (names).
    Unselected { ran: Vec<String> },
    /// The row is of a baseline file whose target the spec no longer has
    /// ([`crate::outcome::gone_rows`]): the file, as the run named it. Empty in a results file
    /// written before the field existed.
    TargetGone {
        #[serde(default)]
        file: String,
    },
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
    pub(crate) const GONE: &str = "which the spec no longer has";

    /// For a [`MissingCause::TargetGone`] row of `target` that names its file: what its reason
    /// and every report's line for the file say, as the gate decided (`fails`: the row fails the
    /// gate; else `--allow-missing` allowed it). `None` for another cause, or a file older than
    /// the field (the row's reason says it then).
    pub fn gone_file(&self, target: &str, fails: bool) -> Option<String> {
        let Self::TargetGone { file } = self else {
            return None;
        };
        if file.is_empty() {
            return None;
        }
        let what = format!(
            "the baseline file {file} is of target `{target}`, {} (renamed or removed?)",
            Self::GONE
        );
        Some(if fails {
            format!(
                "{what}; this fails the gate: if the change is intended, refresh the baselines (delete the file and run `cgp-gate baseline update`), or allow it with --allow-missing"
            )
        } else {
            format!("{what}; allowed by --allow-missing")
        })
    }
}

pub use crate::stats::{Bound, Estimate, Shift, Test};

/// What a row takes from the statistics' ruling on it ([`crate::stats::Ruling`], the same for an
/// independent judgement of `check` and a paired one of `ab`): its estimate as the statistics
/// typed it, its method and reason ([`Row::decide`]). A compared row's outcome
/// carries its estimate; a ruling of another verdict (an error, a new row) has none.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub outcome: Outcome,
    pub method: Method,
    pub reason: String,
}

impl From<&crate::stats::Ruling> for Decision {
    fn from(r: &crate::stats::Ruling) -> Self {
        Self {
            outcome: Outcome::of(r.verdict, r.estimate.clone()),
            method: r.method.clone(),
            reason: r.reason.clone(),
        }
    }
}

/// The rule a row was judged by and which side is better: set together from the spec's metric,
/// both `None` for a row that has no spec metric (a baseline entry whose metric left the spec);
/// a row imported from another tool may know its direction only.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowRule {
    /// The threshold, with the tolerance the statistics used.
    pub threshold: Option<RowThreshold>,
    /// Which side is better.
    pub direction: Option<Direction>,
}

impl RowRule {
    /// The spec threshold's rule and direction, before anything was measured.
    pub fn of(t: &Threshold) -> Self {
        Self {
            threshold: Some(RowThreshold::of(t)),
            direction: Some(t.direction),
        }
    }

    /// For display: `3% (lower is better)`, or `-` when the row has no threshold.
    pub(crate) fn text(&self) -> String {
        self.threshold
            .as_ref()
            .map_or_else(|| "-".to_owned(), |t| t.display(self.direction))
    }

    /// Higher values are better (throughput, occupancy).
    pub(crate) fn higher_is_better(&self) -> bool {
        self.direction == Some(Direction::Higher)
    }
}

/// The two sides a row compares, summarised: a `new` row has only a candidate, a `missing` row
/// only a baseline.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sides {
    pub baseline: Option<SideSummary>,
    pub candidate: Option<SideSummary>,
}

impl Sides {
    /// A row measured now with nothing to compare with (a `new` or imported row).
    pub(crate) fn candidate(candidate: SideSummary) -> Self {
        Self {
            baseline: None,
            candidate: Some(candidate),
        }
    }
}

impl From<RowVerdict> for Outcome {
    /// The outcome of a verdict, with nothing more known: no numbers, a missing row that does
    /// not fail the gate, never a skipped row.
    fn from(v: RowVerdict) -> Self {
        Self::of(v, Estimate::default())
    }
}

/// What a row shows where its outcome has no numbers.
static NO_ESTIMATE: Estimate = Estimate {
    shift: Shift::None,
    confidence: None,
    test: None,
    left_out: None,
};

impl Outcome {
    /// The outcome of verdict `v` with the numbers that decided it: a compared verdict keeps
    /// `estimate`; any other has no numbers and drops it (a missing row that does not fail the
    /// gate, never a skipped row).
    pub(crate) fn of(v: RowVerdict, estimate: Estimate) -> Self {
        match v {
            RowVerdict::Regression => Self::Compared(Judged::Regression, estimate),
            RowVerdict::Inconclusive => Self::Compared(Judged::Inconclusive, estimate),
            RowVerdict::Improvement => Self::Compared(Judged::Improvement, estimate),
            RowVerdict::Pass => Self::Compared(Judged::Pass, estimate),
            RowVerdict::Error => Self::Error,
            RowVerdict::New => Self::New,
            RowVerdict::Missing => Self::Missing(Missing::default()),
        }
    }

    /// The verdict every report shows and the results file writes.
    pub(crate) fn verdict(&self) -> RowVerdict {
        match self {
            Self::Compared(Judged::Regression, _) => RowVerdict::Regression,
            Self::Compared(Judged::Inconclusive, _) => RowVerdict::Inconclusive,
            Self::Compared(Judged::Improvement, _) => RowVerdict::Improvement,
            Self::Compared(Judged::Pass, _) | Self::Skipped(_) => RowVerdict::Pass,
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
    /// What the statistics judged against: the relative tolerance of a shift (the threshold,
    /// raised by `min_effect`) with where the candidate's median crosses it, or a `min:`/`max:`
    /// row's limit; `None` before anything was tested.
    pub bound: Option<Bound>,
}

impl Row {
    /// A row of `key`, in `unit`, that came to `outcome` for `reason`, with no numbers yet (a
    /// missing row, an error, a new row before its numbers are set).
    pub fn bare(key: OwnedRowKey, unit: &str, outcome: Outcome, reason: &str) -> Self {
        Self {
            key,
            unit: unit.to_owned(),
            outcome,
            rule: RowRule::default(),
            method: Method::None,
            sides: Sides::default(),
            reason: reason.to_owned(),
            remeasured: 0,
            candidate_reps: Vec::new(),
            history: Vec::new(),
            why: None,
            candidate_configs: Vec::new(),
            config_change: None,
            confirmation: super::confirm::Confirmation::None,
        }
    }
}

impl Row {
    /// The row's verdict, read from its [`Outcome`].
    pub fn verdict(&self) -> RowVerdict {
        self.outcome.verdict()
    }

    /// Give the row what the statistics decided: its outcome (with the estimate of a compared
    /// row), method and reason.
    pub fn decide(&mut self, d: Decision) {
        self.outcome = d.outcome;
        self.method = d.method;
        self.reason = d.reason;
    }

    /// Give the row the outcome of another verdict: a compared row moved to another compared
    /// verdict keeps its numbers (a clock change that makes a regression doubtful); a row that
    /// becomes an error, new or missing has none (see [`Outcome::of`]).
    pub fn set_verdict(&mut self, v: RowVerdict) {
        let estimate = match std::mem::replace(&mut self.outcome, Outcome::Error) {
            Outcome::Compared(_, e) => e,
            _ => Estimate::default(),
        };
        self.outcome = Outcome::of(v, estimate);
    }

    /// The numbers the verdict used: the one estimate and interval every report shows. Empty
    /// for a row that was not compared.
    pub fn estimate(&self) -> &Estimate {
        match &self.outcome {
            Outcome::Compared(_, e) => e,
            _ => &NO_ESTIMATE,
        }
    }

    /// Why the row was not profiled, for a skipped row.
    pub fn skipped(&self) -> Option<&SkipReason> {
        match &self.outcome {
            Outcome::Skipped(r) => Some(r),
            _ => None,
        }
    }

    /// A `missing` row that the run should have measured and that the user did not allow; for
    /// [`crate::outcome::decide`] only.
    pub(crate) fn fails_gate(&self) -> bool {
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
            bound: None,
        }
    }

    /// The relative tolerance the statistics judged against, when a change was tested.
    pub fn tolerance(&self) -> Option<f64> {
        self.bound.and_then(Bound::tolerance)
    }

    /// Where the candidate's median crosses the threshold, base units, when known.
    pub fn limit(&self) -> Option<f64> {
        self.bound.and_then(Bound::limit)
    }

    /// The rule as the spec wrote it, without the direction: `3%`, `exact`, `max 5`.
    pub(crate) fn rule(&self) -> String {
        Threshold {
            kind: self.kind.clone(),
            direction: Direction::Lower,
            min_effect: None,
        }
        .rule()
    }

    /// The full display form, `3% (lower is better, min effect 500ns)`.
    pub(crate) fn display(&self, direction: Option<Direction>) -> String {
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
