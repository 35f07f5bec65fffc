//! Was a slowdown the code or the clock? nvbench's `--jsonbin` frequencies sidecar holds the SM
//! clock of every sample, so each sample's time converts to SM cycles (time x clock): the work
//! the kernel did, whatever clock it ran at. A time regression that persists in cycles is the
//! code; one that disappears in cycles is the clock (throttling, another boost state): the
//! cycle-space confirmation of nvbench-compare-robust (docs/harnesses.md, "Throttling"). Pure.

use super::order::median;

/// What made a time regression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The regression persists in cycles: the kernel does more work.
    Code,
    /// It disappears in cycles: the same work at a lower clock.
    Clock,
}

/// The cycle-space confirmation of a time regression, with the numbers it rests on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockCheck {
    pub cause: Cause,
    /// Relative change of the median time, candidate over baseline.
    pub time_change: f64,
    /// Relative change of the median cycles.
    pub cycles_change: f64,
    /// Relative change of the clock the two imply ((1 + cycles) / (1 + time) - 1).
    pub clock_change: f64,
    /// The change in cycles that still counts as a regression.
    pub bar: f64,
}

/// Decide whether a time regression is the code or the clock, from both sides' samples of time
/// and of cycles (time x SM clock, sample by sample). The regression persists in cycles when the
/// median cycles grew by more than `tolerance` (the row's relative threshold), or, without one,
/// by more than half the time's growth. `None` when either side has no usable samples.
pub fn cycle_confirmation(
    base_time: &[f64],
    cand_time: &[f64],
    base_cycles: &[f64],
    cand_cycles: &[f64],
    tolerance: Option<f64>,
) -> Option<ClockCheck> {
    let ratio = |a: &[f64], b: &[f64]| -> Option<f64> {
        let (ma, mb) = (median(a)?, median(b)?);
        (ma.is_finite() && mb.is_finite() && ma > 0.0 && mb > 0.0).then(|| mb / ma - 1.0)
    };
    let time_change = ratio(base_time, cand_time)?;
    let cycles_change = ratio(base_cycles, cand_cycles)?;
    let bar = tolerance
        .filter(|t| t.is_finite() && *t > 0.0)
        .unwrap_or(time_change / 2.0)
        .max(0.0);
    let cause = if cycles_change > bar {
        Cause::Code
    } else {
        Cause::Clock
    };
    Some(ClockCheck {
        cause,
        time_change,
        cycles_change,
        clock_change: (1.0 + cycles_change) / (1.0 + time_change) - 1.0,
        bar,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SYNTHETIC samples: a time `t` at a clock `hz`, 1 % spread.
    fn side(t: f64, hz: f64) -> (Vec<f64>, Vec<f64>) {
        let times: Vec<f64> = (0..50)
            .map(|i| t * (1.0 + 0.0004 * f64::from(i % 25) - 0.005))
            .collect();
        let cycles = times.iter().map(|x| x * hz).collect();
        (times, cycles)
    }

    #[test]
    fn a_lower_clock_is_the_clock_and_more_work_is_the_code() {
        let (bt, bc) = side(1e-3, 2.0e9);
        // 10 % longer at a clock 1/1.1 as high: the same cycles.
        let (ct, cc) = side(1.1e-3, 2.0e9 / 1.1);
        let c = cycle_confirmation(&bt, &ct, &bc, &cc, Some(0.05)).unwrap();
        assert_eq!(c.cause, Cause::Clock);
        assert!((c.time_change - 0.10).abs() < 1e-9, "{c:?}");
        assert!(c.cycles_change.abs() < 1e-9, "{c:?}");
        assert!((c.clock_change + 0.0909).abs() < 1e-3, "{c:?}");
        // 10 % longer at the same clock: 10 % more cycles.
        let (ct, cc) = side(1.1e-3, 2.0e9);
        let c = cycle_confirmation(&bt, &ct, &bc, &cc, Some(0.05)).unwrap();
        assert_eq!(c.cause, Cause::Code);
        assert!((c.cycles_change - 0.10).abs() < 1e-9, "{c:?}");
        // Half of each: 4.9 % more cycles is within a 5 % threshold, so the clock made it a
        // regression; without a threshold, half the time's growth is the bar.
        let (ct, cc) = side(1.1e-3, 2.0e9 * 1.049 / 1.1);
        let c = cycle_confirmation(&bt, &ct, &bc, &cc, Some(0.05)).unwrap();
        assert_eq!(c.cause, Cause::Clock, "{c:?}");
        let c = cycle_confirmation(&bt, &ct, &bc, &cc, None).unwrap();
        assert_eq!(c.cause, Cause::Clock, "{c:?}");
        assert!((c.bar - 0.05).abs() < 1e-9);
        // Nothing to compare: no answer.
        assert!(cycle_confirmation(&[], &ct, &bc, &cc, None).is_none());
        assert!(cycle_confirmation(&bt, &ct, &[0.0], &cc, None).is_none());
    }
}
