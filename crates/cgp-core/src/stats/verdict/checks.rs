//! The checks of a row before any test: what makes it unjudgeable (an unusable threshold,
//! non-finite or missing samples, too few or too many of them), and whether a side is constant.

use super::{Comparison, MAX_SAMPLES, MIN_SAMPLES};
use crate::foundation::threshold::{Threshold, ThresholdKind};
use crate::stats::row::RowVerdict;

/// Why a row cannot be judged at all (an error): an unusable threshold, non-finite samples on
/// either side, or no candidate samples. `None` when the row can be judged.
pub(super) fn input_problem(row: &Comparison<'_>) -> Option<String> {
    if let Some(problem) = threshold_problem(row.threshold) {
        return Some(format!("invalid threshold: {problem}"));
    }
    if let Some(bad) = non_finite(row.candidate) {
        return Some(format!("candidate has {bad}; check the profiler output"));
    }
    if let Some(bad) = row.baseline.and_then(non_finite) {
        return Some(format!("baseline has {bad}; update the baseline"));
    }
    if row.candidate.is_empty() {
        return Some("no candidate samples were measured for this metric".to_owned());
    }
    None
}

/// Too few samples for the rank test (`nb` baseline, `nc` candidate: inconclusive), or too many
/// to judge in time (an error). `None` when the counts are fine.
pub(super) fn sample_count_problem(nb: usize, nc: usize) -> Option<(RowVerdict, String)> {
    if nb < MIN_SAMPLES || nc < MIN_SAMPLES {
        return Some((
            RowVerdict::Inconclusive,
            format!(
                "not enough data: need at least {MIN_SAMPLES} samples per side, have {nb} baseline and {nc} candidate; raise repetitions"
            ),
        ));
    }
    if nb > MAX_SAMPLES || nc > MAX_SAMPLES {
        return Some((
            RowVerdict::Error,
            format!(
                "too many samples to judge: {nb} baseline and {nc} candidate, at most {MAX_SAMPLES} per side; lower repetitions or thin the baseline"
            ),
        ));
    }
    None
}

/// The samples' non-finite values, named (`stats::finite`: the one check).
fn non_finite(samples: &[f64]) -> Option<String> {
    crate::stats::finite::Finite::new(samples)
        .err()
        .map(|e| e.to_string())
}

fn threshold_problem(t: &Threshold) -> Option<String> {
    let ok = |x: f64| x.is_finite();
    match t.kind {
        ThresholdKind::Relative { fraction } if !(ok(fraction) && fraction >= 0.0) => {
            return Some(format!(
                "relative threshold {fraction} is not a non-negative number"
            ));
        }
        ThresholdKind::Min { value } | ThresholdKind::Max { value } if !ok(value) => {
            return Some(format!("limit {value} is not a finite number"));
        }
        ThresholdKind::Relative { .. }
        | ThresholdKind::Exact
        | ThresholdKind::Min { .. }
        | ThresholdKind::Max { .. } => {}
    }
    match &t.min_effect {
        Some(q) if !(ok(q.value) && q.value >= 0.0) => {
            Some(format!("min_effect {} is not a non-negative number", q.value))
        }
        _ => None,
    }
}

/// All values equal (and at least one). Deterministic counters repeat bit for bit; a margin
/// would call a noisy metric deterministic.
#[expect(
    clippy::float_cmp,
    reason = "exact repetition is the definition of a deterministic counter"
)]
pub(super) fn constant(samples: &[f64]) -> bool {
    samples.first().is_some_and(|f| samples.iter().all(|x| x == f))
}
