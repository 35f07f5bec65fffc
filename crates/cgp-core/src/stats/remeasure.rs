//! The re-measurement policy of `check` and `ab`: which rows are doubtful and how many
//! repetitions the next round takes. Both drive it with their profiler through the engine's one
//! loop (`run::engine::until_decided`); the simulations (`examples/power.rs`) run those same
//! commands on a simulated profiler (`run::simulate`), so there is no second copy of the loop.

use super::row::RowVerdict;

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
