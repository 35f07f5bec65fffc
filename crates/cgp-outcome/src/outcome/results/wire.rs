//! How typed fields are written, where the file keeps an older form or a flat one: a row is written flat
//! ([`RowWire`]) and read back into [`Row`].

use serde::{Deserialize, Serialize};

use super::confirm::{Confirmation, Confirmed, Screen};
use super::key::{Kernel, OwnedRowKey};
use super::row::{Estimate, Missing, MissingCause, Outcome, Row, RowRule, Shift, Sides, Test};
use super::{ConfigChange, Direction, Method, RowThreshold, RowVerdict, SideSummary, SkipReason};

/// `missing_cause`: read leniently. A value of another shape (a later version's, an edited
/// file's) is no reason to refuse the whole results file: the row reads as
/// [`MissingCause::NotMeasured`], and its reason still states the cause in words.
mod cause {
    use serde::{Deserialize, Deserializer};

    use super::MissingCause;

    /// Only a map is a cause (serde would read a sequence such as `[1]` as the variant of that
    /// index).
    pub(super) fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Option<MissingCause>, D::Error> {
        Ok(match Option::<serde_json::Value>::deserialize(d)? {
            Some(v @ serde_json::Value::Object(_)) => serde_json::from_value(v).ok(),
            _ => None,
        })
    }
}

/// `kernel`: a name, or `-` for none (schema 1 and 2 wrote the sentinel `-`; keeping it keeps
/// those files and older readers valid).
mod kernel {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::super::key::NO_KERNEL;

    #[expect(
        clippy::ref_option,
        reason = "serde's serialize_with passes a reference to the field"
    )]
    pub(super) fn serialize<S: Serializer>(k: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(k.as_deref().unwrap_or(NO_KERNEL))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        let k = String::deserialize(d)?;
        Ok((k != NO_KERNEL).then_some(k))
    }
}

/// A row as the results file holds it: every field flat, as schema 1 and 2 wrote them. [`Row`]
/// is the typed form; the two convert both ways without loss for every row cgp-gate writes.
#[derive(Serialize, Deserialize)]
pub(super) struct RowWire {
    target: String,
    size: String,
    /// The kernel the row measured; `None` for a row that belongs to no kernel (a whole-run or
    /// category row of `ab` and nsys targets, a target that failed before any kernel ran).
    /// Written as `-` when `None`, and `-` reads back as `None`, as schema 1 and 2 files and
    /// older readers have it.
    #[serde(with = "kernel")]
    kernel: Option<String>,
    metric: String,
    /// Base unit of every number in the row.
    unit: String,
    verdict: RowVerdict,
    /// The rule the row was judged by, with the tolerance the statistics used; `None` for rows
    /// that have no spec metric (a baseline entry whose metric left the spec). Version 1 wrote
    /// the display string (`3% (lower is better)`, or `-`); it is parsed back when read.
    #[serde(deserialize_with = "super::v1::threshold")]
    threshold: Option<RowThreshold>,
    /// Which side is better; written as `lower`/`higher` (version 1 wrote `-` for none).
    #[serde(
        serialize_with = "crate::foundation::threshold::write_direction_or_dash",
        deserialize_with = "super::v1::direction"
    )]
    direction: Option<Direction>,
    /// The statistical method that decided (`mann-whitney+hodges-lehmann`, `exact`, ...), written
    /// as the same strings as before; a method this version does not know reads as
    /// [`Method::Other`], so files of other versions still read.
    method: Method,
    /// Relative change of the candidate against the baseline (0.031 = +3.1%); `None` when not compared.
    change: Option<f64>,
    /// Confidence interval of the relative change.
    change_ci: Option<[f64; 2]>,
    /// For `min:`/`max:` rows: the interval of the candidate's median, in base units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    median_ci: Option<[f64; 2]>,
    /// Coverage of the interval shown (0.95, ...).
    confidence: Option<f64>,
    /// The smallest change (relative, the bad way) the row's test finds in 80 % of checks at the
    /// level it spent (`stats::power`, issue 57); absent where none (limits, older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    detectable: Option<f64>,
    /// One-sided p-value of the test in the regression direction (unadjusted).
    p: Option<f64>,
    /// p-value after the run-wide multiple-testing correction.
    p_adjusted: Option<f64>,
    baseline: Option<SideSummary>,
    candidate: Option<SideSummary>,
    /// Why the verdict is what it is, in one sentence.
    reason: String,
    /// How many re-measurement rounds this row took.
    #[serde(default)]
    remeasured: u32,
    /// The repetition each candidate sample came from (same order as `candidate.samples`), so a
    /// results file can become a baseline without profiling again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    candidate_reps: Vec<u32>,
    /// Medians of older baseline generations, oldest first (for trends).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    history: Vec<f64>,
    /// The GPU the row was measured on (the fingerprint's `gpu_name`), so that merged results
    /// of several GPU types keep their rows apart. Empty in files written before it existed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    gpu: String,
    /// Why the row was not profiled: `same-sass` when the kernel's machine code equals the
    /// baseline's (docs/sass-cache.md). `None` for profiled rows and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skipped: Option<SkipReason>,
    /// For a timing row that regressed, improved or is doubtful: the explanatory counters that
    /// changed beyond their noise and a one-line reading (docs/why.md). `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    why: Option<crate::measured::why::Why>,
    /// A `missing` row that the run should have measured (its target, size and metric were
    /// selected) and that the user did not allow: it fails the gate (see [`crate::outcome::apply_missing`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    fails_gate: bool,
    /// Why a `missing` row was not measured (`not-measured`, `unselected` with the kernels that
    /// ran, `target-gone`). Absent on other rows and in files written before it existed, whose
    /// missing rows read as `not-measured` (their reason states the cause in words).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "cause::lenient"
    )]
    missing_cause: Option<MissingCause>,
    /// The launch configurations (`grid (X, Y, Z) block (X, Y, Z)`) the candidate's samples came
    /// from, so a results file becomes a baseline with them. Empty when not known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    candidate_configs: Vec<String>,
    /// Set by `check` when the kernel's launch configuration differs between the baseline and
    /// this run: the row still compares the one series (the kernel did not become a new one),
    /// and every report says what changed. `None`: the same, or unknown on one side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    config_change: Option<ConfigChange>,
    /// What the test left out of the row as the machine's, or kept as the code's, with the
    /// counts per side (`[baseline, candidate]`): docs/statistics.md 2.5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    left_out: Option<crate::stats::screen::LeftOut>,
    /// `check --base`: the row confirmed against the base commit's build, or not confirmed
    /// though it needed it (docs/confirm.md). Absent on other rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    confirmation: Option<ConfirmationWire>,
}

/// Whether a row's `confirmation` holds a paired verdict.
#[derive(Serialize, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum ConfirmationStatus {
    Confirmed,
    NotRun,
    /// A status of another version: the row reads as not confirmed.
    #[serde(other)]
    Unknown,
}

/// A row's `confirmation` as the file holds it: the status, the base commit and, for a
/// confirmed row, the row's own verdict, change, interval and level (the paired ones, which the
/// row's `verdict`, `change` and `change_ci` also are: one number per row), the pairs measured
/// and what the stored baseline said (`screen`, context). Read back, the numbers come from the
/// row itself.
#[derive(Serialize, Deserialize)]
struct ConfirmationWire {
    status: ConfirmationStatus,
    base_commit: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    verdict: Option<RowVerdict>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    change: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    interval: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    confidence: Option<f64>,
    #[serde(default)]
    pairs: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    screen: Option<Screen>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    same_sass: bool,
}

impl ConfirmationWire {
    /// The flat form of a row's confirmation, with the row's own numbers.
    fn of(c: Confirmation, verdict: RowVerdict, e: &Estimate) -> Option<Self> {
        match c {
            Confirmation::None => None,
            Confirmation::NotRun { base_commit } => Some(Self {
                status: ConfirmationStatus::NotRun,
                base_commit,
                verdict: None,
                change: None,
                interval: None,
                confidence: None,
                pairs: 0,
                screen: None,
                same_sass: false,
            }),
            Confirmation::Confirmed(c) => Some(Self {
                status: ConfirmationStatus::Confirmed,
                base_commit: c.base_commit,
                verdict: Some(verdict),
                change: e.change(),
                interval: e.change_ci(),
                confidence: e.confidence,
                pairs: c.pairs,
                screen: Some(c.screen),
                same_sass: c.same_sass,
            }),
        }
    }

    /// The typed confirmation; a confirmed row without its screen is read with the row's own
    /// verdict as the screen's (a hand-edited file).
    fn typed(self, verdict: RowVerdict) -> Confirmation {
        match self.status {
            ConfirmationStatus::Unknown => Confirmation::None,
            ConfirmationStatus::NotRun => Confirmation::NotRun {
                base_commit: self.base_commit,
            },
            ConfirmationStatus::Confirmed => Confirmation::Confirmed(Confirmed {
                base_commit: self.base_commit,
                pairs: self.pairs,
                screen: self.screen.unwrap_or(Screen {
                    verdict,
                    change: None,
                    interval: None,
                    confidence: None,
                }),
                same_sass: self.same_sass,
            }),
        }
    }
}

/// The shift of a file's flat numbers: a change wins over a median interval, which no row has
/// both of; an interval without its change is nothing.
fn shift(
    change: Option<f64>,
    change_ci: Option<[f64; 2]>,
    median_ci: Option<[f64; 2]>,
    detectable: Option<f64>,
) -> Shift {
    match (change, median_ci) {
        (Some(change), _) => Shift::Change {
            change,
            ci: change_ci,
            detectable,
        },
        (None, Some(ci)) => Shift::Median { ci },
        (None, None) => Shift::None,
    }
}

impl Serialize for Row {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        RowWire::from(self.clone()).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Row {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        RowWire::deserialize(d).map(Self::from)
    }
}

impl From<RowWire> for Row {
    /// The typed row of a file's row. `fails_gate` is kept on `missing` rows and `skipped` on
    /// `pass` rows, the only rows cgp-gate writes them on; elsewhere they are dropped.
    fn from(w: RowWire) -> Self {
        let RowWire {
            target,
            size,
            kernel,
            metric,
            unit,
            verdict,
            threshold,
            direction,
            method,
            change,
            change_ci,
            median_ci,
            confidence,
            detectable,
            p,
            p_adjusted,
            baseline,
            candidate,
            reason,
            remeasured,
            candidate_reps,
            history,
            gpu,
            skipped,
            why,
            fails_gate,
            missing_cause,
            candidate_configs,
            config_change,
            left_out,
            confirmation,
        } = w;
        // A compared row's numbers; a row of another verdict has none (an older file's error
        // row may carry some: they are not what decided it, and are dropped).
        let estimate = Estimate {
            shift: shift(change, change_ci, median_ci, detectable),
            confidence,
            test: p.map(|p| Test { p, p_adjusted }),
            left_out,
        };
        let outcome = match (verdict, skipped) {
            (RowVerdict::Pass, Some(r)) => Outcome::Skipped(r),
            (RowVerdict::Missing, _) => Outcome::Missing(Missing {
                fails_gate,
                cause: missing_cause.unwrap_or_default(),
            }),
            (v, _) => Outcome::of(v, estimate),
        };
        Self {
            key: OwnedRowKey {
                gpu,
                target,
                size,
                kernel: kernel.map(Kernel::from),
                metric,
            },
            unit,
            outcome,
            rule: RowRule { threshold, direction },
            method,
            sides: Sides { baseline, candidate },
            reason,
            remeasured,
            candidate_reps,
            history,
            why,
            candidate_configs,
            config_change,
            confirmation: confirmation.map_or(Confirmation::None, |c| c.typed(verdict)),
        }
    }
}

impl From<Row> for RowWire {
    fn from(r: Row) -> Self {
        let verdict = r.verdict();
        let (skipped, fails_gate, missing_cause, estimate) = match r.outcome {
            Outcome::Skipped(s) => (Some(s), false, None, Estimate::default()),
            Outcome::Missing(Missing { fails_gate, cause }) => {
                (None, fails_gate, Some(cause), Estimate::default())
            }
            Outcome::Compared(_, e) => (None, false, None, e),
            Outcome::New | Outcome::Error => (None, false, None, Estimate::default()),
        };
        let confirmation = ConfirmationWire::of(r.confirmation, verdict, &estimate);
        let (change, change_ci, median_ci) = (estimate.change(), estimate.change_ci(), estimate.median_ci());
        let (p, p_adjusted, detectable) = (estimate.p(), estimate.p_adjusted(), estimate.detectable());
        let Estimate {
            confidence, left_out, ..
        } = estimate;
        Self {
            target: r.key.target,
            size: r.key.size,
            kernel: r.key.kernel.map(String::from),
            metric: r.key.metric,
            unit: r.unit,
            verdict,
            threshold: r.rule.threshold,
            direction: r.rule.direction,
            method: r.method,
            change,
            change_ci,
            median_ci,
            confidence,
            detectable,
            p,
            p_adjusted,
            baseline: r.sides.baseline,
            candidate: r.sides.candidate,
            reason: r.reason,
            remeasured: r.remeasured,
            candidate_reps: r.candidate_reps,
            history: r.history,
            gpu: r.key.gpu,
            skipped,
            why: r.why,
            fails_gate,
            missing_cause,
            candidate_configs: r.candidate_configs,
            config_change: r.config_change,
            left_out,
            confirmation,
        }
    }
}
