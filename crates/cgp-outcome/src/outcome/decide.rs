//! The one place that decides what a judged run means: each row's gate status ([`row_gate`]),
//! the run's verdict ([`run_verdict`]), its gate status ([`run_gate`]) and the process exit code
//! ([`exit_code`], [`error_exit_code`]).
//!
//! The statistics judge a row's numbers (`stats::judge_all`, `stats::paired`); the engine
//! makes the rows the statistics cannot judge (error, missing, new, skipped); this module turns
//! rows and errors into the run's outcome. `check`, `ab`, `merge`, `calibrate` and every
//! reporter read it from here: a row that fails the gate is a failure in every report, the exit
//! code agrees, and no other module maps verdicts to outcomes.

use serde::{Deserialize, Serialize};

use crate::foundation::exit_codes::{ErrorClass, Exit};
use crate::outcome::results::{ErrorKind, FailOn, Row, RowVerdict, RunError, RunVerdict};

/// What a row (or a run) means for the gate under a `--fail-on` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    /// Fails the gate: a regression, a `missing` row the run should have measured
    /// ([`Row::fails_gate`]), or an inconclusive row under `--fail-on inconclusive` (exit 1).
    Fail,
    /// A failure of the tool, the input or the profiler (exit 2 or 3).
    Error,
    /// Does not fail the gate but needs a look: an inconclusive row under `--fail-on regression`.
    Warn,
    /// Does not fail the gate: pass, improvement, new, an allowed `missing` row, a row skipped
    /// because its machine code did not change.
    Pass,
}

impl Gate {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fail => "fail",
            Self::Error => "error",
            Self::Warn => "warn",
            Self::Pass => "pass",
        }
    }
}

/// Why a row fails the gate (private: reporters read a [`RowGate`] through its methods).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum FailReason {
    /// The row regressed.
    Regression,
    /// A baseline row the run should have measured and did not, not allowed ([`Row::fails_gate`]).
    Missing,
    /// An inconclusive row under `--fail-on inconclusive`.
    Inconclusive,
}

/// What one row means for the gate, and why: decided here ([`row_gate`]), rendered by every
/// reporter. The reason is private to this module: a reporter asks for the [`Gate`]
/// ([`RowGate::gate`]) and the two marks it may show beside the verdict, and cannot build or
/// take apart a gate status of its own, neither by its field nor by a variant:
///
/// ```compile_fail
/// use cgp_outcome::outcome::decide::{RowGate, row_gate};
/// use cgp_outcome::outcome::results::{FailOn, Outcome, OwnedRowKey, Row};
/// let r = Row::bare(OwnedRowKey::default(), "ns", Outcome::Error, "");
/// let RowGate(status) = row_gate(&r, FailOn::Regression);
/// ```
///
/// ```compile_fail
/// use cgp_outcome::outcome::decide::RowGate;
/// fn fails(g: RowGate) -> bool {
///     matches!(g, RowGate::Fail(_))
/// }
/// ```
///
/// ```
/// // What a reporter may do (the same row as above).
/// use cgp_outcome::outcome::decide::{Gate, row_gate};
/// use cgp_outcome::outcome::results::{FailOn, Outcome, OwnedRowKey, Row};
/// let r = Row::bare(OwnedRowKey::default(), "ns", Outcome::Error, "");
/// assert_eq!(row_gate(&r, FailOn::Regression).gate(), Gate::Error);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RowGate(Status);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Status {
    Fail(FailReason),
    /// An error row: the tool, the input or the profiler failed.
    Error,
    /// Needs a look without failing the gate: an inconclusive row under `--fail-on regression`.
    Warn,
    Pass,
}

impl RowGate {
    /// The gate status without the reason.
    pub fn gate(self) -> Gate {
        match self.0 {
            Status::Fail(_) => Gate::Fail,
            Status::Error => Gate::Error,
            Status::Warn => Gate::Warn,
            Status::Pass => Gate::Pass,
        }
    }

    /// The row fails the gate although its verdict is no failure (a missing row the run should
    /// have measured, an inconclusive row under `--fail-on inconclusive`): reports mark it as a
    /// failure beside its verdict.
    pub fn fails_beyond_its_verdict(self) -> bool {
        matches!(
            self.0,
            Status::Fail(FailReason::Missing | FailReason::Inconclusive)
        )
    }

    /// A missing row that fails the gate.
    pub fn is_failing_missing(self) -> bool {
        self.0 == Status::Fail(FailReason::Missing)
    }
}

/// The gate status of one row, with its reason: the one mapping every reporter shows.
pub fn row_gate(row: &Row, fail_on: FailOn) -> RowGate {
    RowGate(match row.verdict() {
        RowVerdict::Regression => Status::Fail(FailReason::Regression),
        RowVerdict::Error => Status::Error,
        RowVerdict::Missing if row.fails_gate() => Status::Fail(FailReason::Missing),
        RowVerdict::Inconclusive if fail_on == FailOn::Inconclusive => Status::Fail(FailReason::Inconclusive),
        RowVerdict::Inconclusive => Status::Warn,
        RowVerdict::Missing | RowVerdict::Pass | RowVerdict::Improvement | RowVerdict::New => Status::Pass,
    })
}

/// The gate status of a decided run: what its exit code says (0 pass or warn, 1 fail, 2/3 error).
pub(crate) fn run_gate(verdict: RunVerdict, fail_on: FailOn) -> Gate {
    match verdict {
        RunVerdict::Error => Gate::Error,
        RunVerdict::Regression => Gate::Fail,
        RunVerdict::Inconclusive if fail_on == FailOn::Inconclusive => Gate::Fail,
        RunVerdict::Inconclusive => Gate::Warn,
        RunVerdict::Pass => Gate::Pass,
    }
}

/// The verdict of a run: the one rule, used by `check`, `ab` and `merge`.
///
/// An error is never a pass: any failure, any error row, or a run that had work but judged
/// nothing (`had_work && rows.is_empty()`) is `error`. Otherwise any regression makes the run a
/// regression (so does a `missing` row the run should have measured: [`Row::fails_gate`]), any
/// inconclusive row makes it inconclusive, and else it passes (improvements, new rows and allowed
/// missing rows are reported but do not fail the gate).
pub fn run_verdict(rows: &[Row], errors: &[RunError], had_work: bool) -> RunVerdict {
    let gates = || {
        rows.iter()
            .map(|r| (r.verdict(), row_gate(r, FailOn::Regression).gate()))
    };
    if !errors.is_empty() || gates().any(|(_, g)| g == Gate::Error) || (had_work && rows.is_empty()) {
        RunVerdict::Error
    } else if gates().any(|(_, g)| g == Gate::Fail) {
        RunVerdict::Regression
    } else if gates().any(|(v, _)| v == RowVerdict::Inconclusive) {
        RunVerdict::Inconclusive
    } else {
        RunVerdict::Pass
    }
}

/// Why a results file's stored verdict is not the one its rows and errors give (issue 34: a
/// regression whose `rows` were emptied merged as a pass; `report` headed an edited verdict), or
/// `None` when it is. `merge` and `report` read results from disk and refuse such a file (exit 2).
/// A stored `error` is left alone: a run that had work and judged nothing is an error its rows
/// cannot show ([`merged_verdict`] names it); so is a stored `regression` whose rows and errors
/// give `error` (both fail the gate, and the errors are shown).
pub fn stored_verdict_problem(results: &crate::outcome::results::Results) -> Option<String> {
    let recomputed = run_verdict(&results.rows, &results.errors, false);
    let both_fail = results.verdict == RunVerdict::Regression && recomputed == RunVerdict::Error;
    (results.verdict != recomputed && results.verdict != RunVerdict::Error && !both_fail).then(|| {
        format!(
            "the file's verdict is `{}`, but its {} row(s) and {} error(s) give `{}`: the file was edited or damaged; use the results file as cgp-gate wrote it, or run the check again",
            results.verdict.as_str(),
            results.rows.len(),
            results.errors.len(),
            recomputed.as_str()
        )
    })
}

/// The verdict of merged shards: the rule of [`run_verdict`] over every shard's rows and errors.
/// A shard whose own stored verdict is `error` although its rows and errors do not say why (it
/// had work and judged nothing) gets a `shard-failed` error here, so it is never hidden behind
/// the other shards' rows. `shards` is each shard's label, GPU name, file and results.
pub(crate) fn merged_verdict<'a>(
    rows: &[Row],
    errors: &mut Vec<RunError>,
    shards: impl Iterator<
        Item = (
            String,
            &'a str,
            &'a std::path::Path,
            &'a crate::outcome::results::Results,
        ),
    >,
) -> RunVerdict {
    for (label, gpu, path, r) in shards {
        if r.verdict == RunVerdict::Error && run_verdict(&r.rows, &r.errors, false) != RunVerdict::Error {
            errors.push(RunError {
                target: format!("shard {label}"),
                size: None,
                kind: ErrorKind::ShardFailed,
                message: format!(
                    "{}: shard {label} on {gpu} has the verdict `error` but lists no failure (it had work and judged nothing); the merged gate cannot pass without it: look at that shard's job log and run it again",
                    path.display()
                ),
            });
        }
    }
    run_verdict(rows, errors, false)
}

/// How a decided run ends (its process exit code): the one mapping, used by `check`, `ab`,
/// `merge`, `profile` and `baseline update`.
///
/// `error` is the exit of the first failure's class ([`ErrorClass::first`], through
/// `results::ErrorKind::class`): invalid input (2) when any failure is a spec mistake the user
/// must fix or a damaged recording, else a profiler or environment failure (3).
pub fn exit_code(verdict: RunVerdict, errors: &[RunError], fail_on: FailOn) -> Exit {
    match run_gate(verdict, fail_on) {
        Gate::Error => ErrorClass::first(errors.iter().map(|e| e.kind.class()))
            .unwrap_or(ErrorClass::Environment)
            .exit(),
        Gate::Fail => Exit::Regression,
        Gate::Warn | Gate::Pass => Exit::Ok,
    }
}

/// The exit code of failures that stopped a command before any verdict (e.g. `calibrate` on a
/// recording that cannot be measured): the same mapping as [`exit_code`] for a run of these
/// errors alone.
pub fn error_exit_code(errors: &[RunError]) -> Exit {
    exit_code(RunVerdict::Error, errors, FailOn::Regression)
}

/// The exit code of `changes`: 1 when any level shift goes the bad way ([`shift_is_worse`]), or
/// with `--fail-on inconclusive` when any series is too short to find a shift of any size at the
/// run's level (the history cannot answer: by default that is said and is exit 0); else 0.
pub(crate) fn changes_exit_code(worse_shifts: usize, too_short_series: usize, fail_on: FailOn) -> Exit {
    if worse_shifts > 0 || (fail_on == FailOn::Inconclusive && too_short_series > 0) {
        Exit::Regression
    } else {
        Exit::Ok
    }
}

/// The exit code of `bisect`: 0 a culprit found, 1 no change beyond the threshold between good
/// and bad, 3 the first bad commit could not be pinned (its neighbours did not build, did not run
/// or stayed unknown). Invalid input (2) and environment failures before the search are errors.
pub fn bisect_exit_code(end: crate::outcome::BisectEnd) -> Exit {
    match end {
        crate::outcome::BisectEnd::Culprit | crate::outcome::BisectEnd::Range => Exit::Ok,
        crate::outcome::BisectEnd::NoChange => Exit::Regression,
        crate::outcome::BisectEnd::NotPinned => Exit::ProfilerFailure,
    }
}

/// Whether a level shift from `before` to `after` goes the bad way for a metric of this
/// direction (`changes`); a row without a direction is never worse.
pub(crate) fn shift_is_worse(
    direction: Option<crate::outcome::results::Direction>,
    before: f64,
    after: f64,
) -> bool {
    match direction {
        Some(crate::outcome::results::Direction::Lower) => after > before,
        Some(crate::outcome::results::Direction::Higher) => after < before,
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(verdict: RowVerdict) -> Row {
        Row::bare(
            crate::outcome::results::OwnedRowKey {
                target: "t".into(),
                size: "n=1".into(),
                kernel: Some("k".into()),
                metric: "m".into(),
                ..Default::default()
            },
            "ns",
            crate::outcome::results::Outcome::from(verdict),
            "",
        )
    }

    fn error(kind: ErrorKind) -> RunError {
        RunError {
            target: "t".into(),
            size: None,
            kind,
            message: String::new(),
        }
    }

    #[test]
    fn the_run_verdict_is_the_worst_row_and_an_error_is_never_a_pass() {
        use RowVerdict as R;
        let v = |rows: &[R], errors: &[RunError], had_work| {
            run_verdict(
                &rows.iter().map(|r| row(*r)).collect::<Vec<_>>(),
                errors,
                had_work,
            )
        };
        assert_eq!(
            v(&[R::Pass, R::Improvement, R::New, R::Missing], &[], true),
            RunVerdict::Pass
        );
        assert_eq!(
            v(&[R::Pass, R::Inconclusive], &[], true),
            RunVerdict::Inconclusive
        );
        assert_eq!(
            v(&[R::Inconclusive, R::Regression], &[], true),
            RunVerdict::Regression
        );
        assert_eq!(v(&[R::Regression, R::Error], &[], true), RunVerdict::Error);
        assert_eq!(
            v(
                &[R::Pass],
                &[error(ErrorKind::Profiler(
                    crate::foundation::failure::FailureKind::Timeout
                ))],
                true
            ),
            RunVerdict::Error
        );
        assert_eq!(v(&[], &[], true), RunVerdict::Error, "work but nothing judged");
        assert_eq!(v(&[], &[], false), RunVerdict::Pass, "nothing to do");
        let mut gone = row(R::Missing);
        gone.outcome = crate::outcome::results::Outcome::Missing(crate::outcome::results::Missing::failing(
            crate::outcome::results::MissingCause::NotMeasured,
        ));
        assert_eq!(run_verdict(&[gone], &[], true), RunVerdict::Regression);
    }

    #[test]
    fn a_row_that_fails_the_gate_is_a_failure_whatever_its_verdict() {
        let mut gone = row(RowVerdict::Missing);
        assert_eq!(
            row_gate(&gone, FailOn::Regression),
            RowGate(Status::Pass),
            "allowed"
        );
        gone.outcome = crate::outcome::results::Outcome::Missing(crate::outcome::results::Missing::failing(
            crate::outcome::results::MissingCause::NotMeasured,
        ));
        assert_eq!(
            row_gate(&gone, FailOn::Regression),
            RowGate(Status::Fail(FailReason::Missing))
        );
        assert!(row_gate(&gone, FailOn::Regression).fails_beyond_its_verdict());
        let doubt = row(RowVerdict::Inconclusive);
        assert_eq!(row_gate(&doubt, FailOn::Regression), RowGate(Status::Warn));
        assert_eq!(
            row_gate(&doubt, FailOn::Inconclusive),
            RowGate(Status::Fail(FailReason::Inconclusive))
        );
        assert!(row_gate(&doubt, FailOn::Inconclusive).fails_beyond_its_verdict());
        let worse = row_gate(&row(RowVerdict::Regression), FailOn::Inconclusive);
        assert_eq!(worse, RowGate(Status::Fail(FailReason::Regression)));
        assert!(!worse.fails_beyond_its_verdict());
        assert_eq!(
            row_gate(&row(RowVerdict::Error), FailOn::Regression),
            RowGate(Status::Error)
        );
        assert_eq!(
            row_gate(&row(RowVerdict::New), FailOn::Inconclusive),
            RowGate(Status::Pass)
        );
        // The run's gate and its exit code agree with the rows'.
        assert_eq!(
            run_gate(RunVerdict::Inconclusive, FailOn::Inconclusive),
            Gate::Fail
        );
        assert_eq!(
            exit_code(RunVerdict::Inconclusive, &[], FailOn::Inconclusive).code(),
            1
        );
    }

    #[test]
    fn exit_codes_follow_the_verdict_fail_on_and_the_kind_of_error() {
        use crate::foundation::exit_codes::{INVALID_INPUT, OK, PROFILER_FAILURE, REGRESSION};
        let exit_code = |v, e: &[RunError], f| exit_code(v, e, f).code();
        let error_exit_code = |e: &[RunError]| error_exit_code(e).code();
        let none: &[RunError] = &[];
        assert_eq!(exit_code(RunVerdict::Pass, none, FailOn::Inconclusive), OK);
        assert_eq!(exit_code(RunVerdict::Inconclusive, none, FailOn::Regression), OK);
        assert_eq!(
            exit_code(RunVerdict::Inconclusive, none, FailOn::Inconclusive),
            REGRESSION
        );
        assert_eq!(
            exit_code(RunVerdict::Regression, none, FailOn::Regression),
            REGRESSION
        );
        assert_eq!(
            exit_code(
                RunVerdict::Error,
                &[error(ErrorKind::Profiler(
                    crate::foundation::failure::FailureKind::Timeout
                ))],
                FailOn::Regression
            ),
            PROFILER_FAILURE
        );
        assert_eq!(
            exit_code(
                RunVerdict::Error,
                &[
                    error(ErrorKind::Profiler(
                        crate::foundation::failure::FailureKind::Timeout
                    )),
                    error(ErrorKind::InvalidInput)
                ],
                FailOn::Regression
            ),
            INVALID_INPUT
        );
        assert_eq!(
            error_exit_code(&[error(ErrorKind::Profiler(
                crate::foundation::failure::FailureKind::BadRecording
            ))]),
            INVALID_INPUT
        );
        assert_eq!(
            error_exit_code(&[error(ErrorKind::Profiler(
                crate::foundation::failure::FailureKind::Timeout
            ))]),
            PROFILER_FAILURE
        );
    }
}
