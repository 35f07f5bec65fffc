//! The re-measurement policy of `check`: which rows are doubtful and how many repetitions the next
//! round takes. `check` (src/run/check/) drives it with the profiler through the engine's loop
//! (`run::engine::until_decided`), and so does `run::simulate::simulate_check` with samples from a
//! model (`examples/power.rs`). [`simulate_ab`] still mirrors `ab`'s loop here, with the same
//! alpha spending (`stats::spending`) as `ab`.

use super::row::RowVerdict;
use super::spending::LookAt;

/// Rows whose size is measured again: the inconclusive ones. A row stops as soon as it is
/// decided (regression, pass, improvement): the alpha of every look is spent (`Config::looks`),
/// so a decision at an early look is as sound as one at the last.
pub fn is_doubtful(v: RowVerdict) -> bool {
    matches!(v, RowVerdict::Inconclusive)
}

/// Is this verdict final at the look that gave it (a row that need not be measured again)?
pub fn is_decided(v: RowVerdict) -> bool {
    matches!(
        v,
        RowVerdict::Regression | RowVerdict::Pass | RowVerdict::Improvement
    )
}

/// How many looks `check` may take at a row: the first round, then one per re-measurement round
/// of `repetitions` more up to `max_repetitions`.
pub fn looks(repetitions: u32, max_repetitions: u32) -> u32 {
    let step = repetitions.max(1);
    1 + max_repetitions.saturating_sub(repetitions).div_ceil(step)
}

/// The repetitions of the next round for a size that has `next` of them, or `None` at the cap.
pub fn next_round(next: u32, repetitions: u32, max_repetitions: u32) -> Option<(u32, u32)> {
    (next < max_repetitions).then(|| (next, next.saturating_add(repetitions).min(max_repetitions)))
}

/// The outcome of a simulated `ab` run.
#[derive(Debug, Clone)]
pub struct PairedOutcome {
    /// The final judgements, one per row.
    pub judgements: Vec<super::paired::PairedJudgement>,
    /// Pairs measured per row at the end.
    pub pairs: Vec<u32>,
}

/// What `ab` does (src/run/ab/), on simulated pairs: `repetitions` pairs per row (`draw(row, n)`
/// returns `n` more (base, head) values, each the median of one process's launches), every row
/// judged with `judge_paired_at`, alpha spent over the looks as in `check`, the inconclusive rows given
/// `repetitions` more pairs up to `max_repetitions`; a decided row keeps its first verdict.
/// Each row is its own size here. Rows of `tolerance` with lower-is-better durations.
pub fn simulate_ab(
    rows: usize,
    tolerance: f64,
    alpha: f64,
    confidence: f64,
    repetitions: u32,
    max_repetitions: u32,
    draw: &mut dyn FnMut(usize, u32) -> Vec<(f64, f64)>,
) -> PairedOutcome {
    use super::paired::{PairedJudgement, PairedRow, judge_paired_at};
    let mut pairs: Vec<Vec<(f64, f64)>> = (0..rows).map(|i| draw(i, repetitions)).collect();
    let mut done = vec![repetitions; rows];
    let mut decided: Vec<Option<PairedJudgement>> = vec![None; rows];
    loop {
        let split: Vec<(Vec<f64>, Vec<f64>)> = pairs.iter().map(|p| p.iter().copied().unzip()).collect();
        let rs: Vec<PairedRow<'_>> = split
            .iter()
            .map(|(b, h)| PairedRow {
                base: b,
                head: h,
                tolerance,
                tolerance_text: format!("{}% threshold", tolerance * 100.0),
                lower_is_better: true,
                exact_kind: false,
                min_effect: 0.0,
            })
            .collect();
        let at: Vec<LookAt> = done
            .iter()
            .map(|d| LookAt {
                repetitions,
                max_repetitions,
                done: *d,
            })
            .collect();
        let js = judge_paired_at(&rs, alpha, confidence, &at);
        let mut more = false;
        for (i, j) in js.iter().enumerate() {
            if decided[i].is_some() {
                continue;
            }
            if is_decided(j.verdict) {
                decided[i] = Some(j.clone());
                continue;
            }
            if let Some((from, to)) = next_round(done[i], repetitions, max_repetitions) {
                let got = draw(i, to - from);
                pairs[i].extend(got);
                done[i] = to;
                more = true;
            }
        }
        if !more {
            return PairedOutcome {
                judgements: js.into_iter().zip(decided).map(|(j, d)| d.unwrap_or(j)).collect(),
                pairs: done,
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
        assert!(is_doubtful(RowVerdict::Inconclusive));
        assert!(!is_doubtful(RowVerdict::Pass) && !is_doubtful(RowVerdict::Regression));
        assert_eq!(looks(10, 20), 2);
        assert_eq!(looks(1, 3), 3);
        assert_eq!(looks(10, 15), 2);
        assert_eq!(looks(5, 5), 1);
    }
}
