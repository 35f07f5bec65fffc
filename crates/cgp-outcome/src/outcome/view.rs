//! What reporters receive: a decided run ([`RunView`]) and its decided rows ([`RowView`]), made
//! here from the results with [`decide`](super::decide)'s gate status, and holding the numbers
//! to display already chosen: the one change the decision used, its interval for display, the
//! p-value shown, where the median would cross the threshold (for a chart's line) and the
//! rule's display text. Not the row: a reporter holds no [`Row`], so it cannot reach the rule's
//! threshold or tolerance, nor the statistics' `Estimate`, and cannot compute a verdict of its
//! own from them (issue 62). The fields are private; a reporter reads the methods.
//!
//! A reporter takes `impl Into<RunView<'a>>`, so its callers hand it `&Results` as before.

use super::decide::{Gate, RowGate, row_gate, run_gate};
use super::results::{
    ConfigChange, Confirmation, FailOn, FingerprintDiff, Health, Method, MissingCause, OwnedRowKey, Results,
    Row, RowVerdict, RunConfirmation, RunError, RunVerdict, SassSkip, Sides, SkipReason, Test, ThresholdKind,
    WhyCost,
};
use crate::gpu::fingerprint::Fingerprint;

/// A decided run, as reporters see it: what the run was (its GPU, spec, source, errors, ...),
/// its verdict and gate status, and its rows as [`RowView`]s ([`RunView::rows`]).
#[derive(Debug, Clone, Copy)]
pub struct RunView<'a> {
    results: &'a Results,
    pub verdict: RunVerdict,
    /// The run's gate status ([`run_gate`]): what its exit code says.
    pub gate: Gate,
    pub fail_on: FailOn,
    pub errors: &'a [RunError],
    pub fingerprint: &'a Fingerprint,
    pub fingerprint_mismatch: &'a [FingerprintDiff],
    pub tool_version: &'a str,
    pub spec_hash: &'a str,
    pub spec_path: &'a str,
    pub source: &'a crate::measured::source::Source,
    pub synthetic: bool,
    pub shard: Option<&'a str>,
    pub git_commit: Option<&'a str>,
    pub date: &'a str,
    /// Run-wide false-alarm control, e.g. `holm alpha=0.01`.
    pub multiple_testing: &'a str,
    pub health: &'a Health,
    pub cost_seconds: &'a std::collections::BTreeMap<String, f64>,
    pub sass_skip: Option<&'a SassSkip>,
    pub why_cost: &'a WhyCost,
    pub category_bars: &'a [crate::nsys::bars::CategoryBars],
    pub category_bars_gated_only: bool,
    pub confirmation: &'a RunConfirmation,
    pub caveats: &'a [String],
    /// Spec-declared derived metrics and roofline data per target x size, when known.
    pub roofline: &'a [super::results::RooflinePoint],
}

impl<'a> From<&'a Results> for RunView<'a> {
    fn from(r: &'a Results) -> Self {
        Self {
            results: r,
            verdict: r.verdict,
            gate: run_gate(r.verdict, r.fail_on),
            fail_on: r.fail_on,
            errors: &r.errors,
            fingerprint: &r.fingerprint,
            fingerprint_mismatch: &r.fingerprint_mismatch,
            tool_version: &r.tool_version,
            spec_hash: &r.spec_hash,
            spec_path: &r.spec_path,
            source: &r.source,
            synthetic: r.synthetic,
            shard: r.shard.as_deref(),
            git_commit: r.git_commit.as_deref(),
            date: &r.date,
            multiple_testing: &r.multiple_testing,
            health: &r.health,
            cost_seconds: &r.cost_seconds,
            sass_skip: r.sass_skip.as_ref(),
            why_cost: &r.why_cost,
            category_bars: &r.category_bars,
            category_bars_gated_only: r.category_bars_gated_only,
            confirmation: &r.confirmation,
            caveats: &r.caveats,
            roofline: &r.roofline,
        }
    }
}

impl<'a> RunView<'a> {
    /// The decided rows, in the run's order, each with its gate status under the run's `--fail-on`.
    pub fn rows(self) -> impl DoubleEndedIterator<Item = RowView<'a>> + ExactSizeIterator + Clone + 'a {
        let fail_on = self.fail_on;
        self.results.rows.iter().map(move |row| RowView::of(row, fail_on))
    }

    /// Every GPU the rows were measured on ([`super::gpus_of`]).
    pub fn gpus(self) -> Vec<String> {
        super::gpus_of(self.results)
    }

    /// The kernels that disappeared and appeared (target, kernel), from the rows' outcomes.
    pub fn kernel_changes(
        self,
    ) -> (
        Vec<super::kernels::TargetKernel>,
        Vec<super::kernels::TargetKernel>,
    ) {
        super::kernel_changes(&self.results.rows)
    }

    /// The results file's text (`--json`): the results themselves.
    ///
    /// # Errors
    /// A serialiser's failure ([`crate::Error::Output`]).
    pub fn to_json(self) -> Result<String, crate::Error> {
        self.results.to_json()
    }
}

/// A decided row, as reporters see it: what identifies it, its verdict and gate status, the
/// context it shows (its sides' summaries, its reason, its why) and, through its methods, the
/// numbers to display, chosen here. It holds no rule: no threshold, no tolerance.
///
/// ```
/// // What a reporter does: show what the view chose (the same row as below).
/// fn cells(r: cgp_outcome::outcome::view::RowView<'_>) -> String {
///     format!("{} {:?} {:?} {}", r.verdict.as_str(), r.change(), r.interval(), r.rule_text())
/// }
/// ```
///
/// ```compile_fail
/// // A reporter cannot read a tolerance off the view to decide for itself (issue 62).
/// fn slower_than_allowed(r: cgp_outcome::outcome::view::RowView<'_>) -> bool {
///     let [lo, _] = r.interval().unwrap_or_default();
///     lo > r.tolerance().unwrap_or(0.0)
/// }
/// ```
///
/// ```compile_fail
/// // Nor reach the row, its rule or its threshold.
/// fn slower_than_allowed(r: cgp_outcome::outcome::view::RowView<'_>) -> bool {
///     r.row.rule.threshold.is_some()
/// }
/// ```
///
/// ```compile_fail
/// // Nor the statistics' estimate behind the numbers.
/// fn interval(r: cgp_outcome::outcome::view::RowView<'_>) -> Option<[f64; 2]> {
///     r.estimate().change_ci()
/// }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct RowView<'a> {
    row: &'a Row,
    /// The row's gate status ([`row_gate`] under the run's `--fail-on`).
    pub gate: RowGate,
    pub verdict: RowVerdict,
    /// What identifies the row: GPU, target, size, kernel and metric.
    pub key: &'a OwnedRowKey,
    /// Base unit of every number in the row.
    pub unit: &'a str,
    /// Why the verdict is what it is, in one sentence.
    pub reason: &'a str,
    /// The statistical method that decided.
    pub method: &'a Method,
    /// The baseline's and this run's samples, summarised (context: the medians, the samples a
    /// chart draws).
    pub sides: &'a Sides,
    /// How many re-measurement rounds the row took.
    pub remeasured: u32,
    /// Medians of older baseline generations, oldest first (for trends).
    pub history: &'a [f64],
    pub why: Option<&'a crate::measured::why::Why>,
    pub config_change: Option<&'a ConfigChange>,
    pub confirmation: &'a Confirmation,
    /// Why the row was not profiled, for a skipped row.
    pub skipped: Option<&'a SkipReason>,
    /// Higher values are better (throughput, occupancy).
    pub higher_is_better: bool,
    /// Which side is better, as reports label it: `lower`, `higher` or `-`.
    pub direction: &'static str,
}

impl<'a> RowView<'a> {
    /// The view of `row` with its gate status under `fail_on`.
    fn of(row: &'a Row, fail_on: FailOn) -> Self {
        Self {
            row,
            gate: row_gate(row, fail_on),
            verdict: row.verdict(),
            key: &row.key,
            unit: &row.unit,
            reason: &row.reason,
            method: &row.method,
            sides: &row.sides,
            remeasured: row.remeasured,
            history: &row.history,
            why: row.why.as_ref(),
            config_change: row.config_change.as_ref(),
            confirmation: &row.confirmation,
            skipped: row.skipped(),
            higher_is_better: row.rule.higher_is_better(),
            direction: super::results::Direction::label(row.rule.direction),
        }
    }

    /// Why a missing row was not measured; `None` for another outcome.
    pub fn missing_cause(self) -> Option<&'a MissingCause> {
        match &self.row.outcome {
            super::results::Outcome::Missing(m) => Some(&m.cause),
            _ => None,
        }
    }

    /// The one number the decision used: the relative change (0.031 = +3.1%); `None` for a row
    /// that was not compared, or a `min:`/`max:` row.
    pub fn change(self) -> Option<f64> {
        self.row.estimate().change()
    }

    /// The interval of that change, for display, at [`Self::confidence`].
    pub fn interval(self) -> Option<[f64; 2]> {
        self.row.estimate().change_ci()
    }

    /// A `min:`/`max:` row's interval of the candidate's median, base units, for display.
    pub fn median_interval(self) -> Option<[f64; 2]> {
        self.row.estimate().median_ci()
    }

    /// Coverage of the interval shown (0.95, ...).
    pub fn confidence(self) -> Option<f64> {
        self.row.estimate().confidence
    }

    /// The p-value shown: the test's after the run-wide correction, or its own where none.
    pub fn p(self) -> Option<f64> {
        let e = self.row.estimate();
        e.p_adjusted().or(e.p())
    }

    /// The test's p-values, unadjusted and adjusted, where a test was run.
    pub fn test(self) -> Option<Test> {
        self.row.estimate().test
    }

    /// The smallest change (the bad way) the row's test finds in 80 % of checks.
    pub fn detectable(self) -> Option<f64> {
        self.row.estimate().detectable()
    }

    /// What the test left out as the machine's or kept as the code's.
    pub fn left_out(self) -> Option<&'a crate::stats::screen::LeftOut> {
        self.row.estimate().left_out.as_ref()
    }

    /// The rule for display: `3% (lower is better)`, or `-` when the row has none.
    pub fn rule_text(self) -> String {
        self.row.rule.text()
    }

    /// Where the candidate's median crosses the threshold, base units, as the statistics stored
    /// it; `None` when not known.
    pub fn crossing(self) -> Option<f64> {
        self.row.rule.threshold.as_ref().and_then(|t| t.limit())
    }

    /// Where a chart draws the threshold's line, base units: [`Self::crossing`], or for results
    /// of version 1, which did not store it, the baseline median moved by the relative rule.
    pub fn crossing_line(self) -> Option<f64> {
        let t = self.row.rule.threshold.as_ref()?;
        if let Some(l) = t.limit() {
            return Some(l);
        }
        let fraction = match t.kind {
            ThresholdKind::Relative { fraction } => fraction,
            ThresholdKind::Exact | ThresholdKind::Min { .. } | ThresholdKind::Max { .. } => return None,
        };
        let f = t.tolerance().unwrap_or(fraction);
        let base = self.row.sides.baseline.as_ref()?.median;
        Some(if self.row.rule.higher_is_better() {
            base * (1.0 - f)
        } else {
            base * (1.0 + f)
        })
    }

    /// The label of that line: the rule, and `min_effect` when it set the tolerance (`3%, min
    /// effect 500ns = 4.2%`); `-` without a rule.
    pub fn crossing_label(self) -> String {
        let Some(t) = &self.row.rule.threshold else {
            return "-".to_owned();
        };
        let mut label = t.rule();
        if let Some(m) = &t.min_effect {
            label.push_str(&format!(", min effect {m}"));
            let fraction = match t.kind {
                ThresholdKind::Relative { fraction } => fraction,
                ThresholdKind::Exact | ThresholdKind::Min { .. } | ThresholdKind::Max { .. } => 0.0,
            };
            if let Some(tol) = t.tolerance().filter(|tol| *tol > fraction) {
                label.push_str(&format!(" = {:.1}%", tol * 100.0));
            }
        }
        label
    }
}
