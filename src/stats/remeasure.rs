//! The re-measurement policy of `check`: which rows are doubtful and how many repetitions the next
//! round takes. `check` (src/check.rs) drives it with the profiler; [`simulate_check`] drives the
//! same policy and the same `judge_all` with samples from a model, for the power simulation
//! (`examples/power.rs`) and `cgp-gate calibrate`.

use crate::threshold::Threshold;

use super::row::RowVerdict;
use super::verdict::{Comparison, Config, Judgement, judge_all};

/// Rows whose size is measured again: inconclusive ones, and regressions (confirmed by more data).
pub fn is_doubtful(v: RowVerdict) -> bool {
    matches!(v, RowVerdict::Inconclusive | RowVerdict::Regression)
}

/// The repetitions of the next round for a size that has `next` of them, or `None` at the cap.
pub fn next_round(next: u32, repetitions: u32, max_repetitions: u32) -> Option<(u32, u32)> {
    (next < max_repetitions).then(|| (next, next.saturating_add(repetitions).min(max_repetitions)))
}

/// One row of a simulated check; each row is its own size (re-measured alone).
#[derive(Debug, Clone)]
pub struct SimRow<'a> {
    pub key: String,
    pub baseline: &'a [f64],
    pub threshold: &'a Threshold,
    pub history: &'a [f64],
}

/// The outcome of a simulated check.
#[derive(Debug, Clone)]
pub struct SimOutcome {
    /// The last round's judgements, one per row.
    pub judgements: Vec<Judgement>,
    /// Repetitions measured beyond the first round, over all rows.
    pub extra_reps: u32,
}

/// What `check` does, on simulated candidates: measure `repetitions` repetitions per row
/// (`draw(row, reps)` returns the samples of that many more repetitions), judge every row with
/// `judge_all` (one Holm family), re-measure the doubtful rows by `repetitions` more up to
/// `max_repetitions`, judge again; the last round decides.
pub fn simulate_check(
    rows: &[SimRow<'_>],
    cfg: &Config,
    repetitions: u32,
    max_repetitions: u32,
    draw: &mut dyn FnMut(usize, u32) -> Vec<f64>,
) -> SimOutcome {
    let mut cand: Vec<Vec<f64>> = (0..rows.len()).map(|i| draw(i, repetitions)).collect();
    let mut done: Vec<u32> = vec![repetitions; rows.len()];
    let mut extra = 0;
    loop {
        let comparisons: Vec<Comparison<'_>> = rows
            .iter()
            .zip(&cand)
            .map(|(r, c)| Comparison {
                key: r.key.clone(),
                baseline: Some(r.baseline),
                candidate: c,
                threshold: r.threshold,
                history: r.history,
            })
            .collect();
        let judgements = judge_all(&comparisons, cfg);
        let mut more = false;
        for (i, j) in judgements.iter().enumerate() {
            if !is_doubtful(j.verdict) {
                continue;
            }
            if let Some((from, to)) = next_round(done[i], repetitions, max_repetitions) {
                let got = draw(i, to - from);
                cand[i].extend(got);
                extra += to - from;
                done[i] = to;
                more = true;
            }
        }
        if !more {
            return SimOutcome {
                judgements,
                extra_reps: extra,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_step_by_repetitions_up_to_the_cap() {
        assert_eq!(next_round(10, 10, 20), Some((10, 20)));
        assert_eq!(next_round(10, 10, 15), Some((10, 15)));
        assert_eq!(next_round(20, 10, 20), None);
        assert!(is_doubtful(RowVerdict::Regression) && is_doubtful(RowVerdict::Inconclusive));
        assert!(!is_doubtful(RowVerdict::Pass));
    }
}
