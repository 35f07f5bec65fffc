//! Between-job spread: how much a metric's level moves from one CI job to the next (another node,
//! another boot, another driver state), estimated from the stored history of baseline medians.
//!
//! Every baseline generation was measured in its own job, so the spread of their medians is the
//! between-job spread plus the noise of a median within a job. Generations also differ by real
//! code changes (each baseline update follows a merge), so the estimate uses the successive
//! differences of the log medians and their median absolute value: a few real steps in the
//! history do not inflate it. With `d_k = ln(med_{k+1}) - ln(med_k)`:
//!
//! `s_job^2 = (1.4826 * median|d_k|)^2 / 2  -  (pi / 2) * cv^2 / n`
//!
//! (the second term is the variance of a median of `n` samples with robust CV `cv`), floored at
//! zero. Fewer than three medians: no estimate, and the gate assumes no spread (docs/statistics.md,
//! "Between-job spread"). A spread is also assumed zero unless the medians vary clearly more than
//! their own noise explains (the spread of the differences more than [`NOISE_RATIO`] times that
//! of a median's noise): with ten generations the estimate is itself noisy, and widening every
//! interval by an estimate of noise would cost power on every row for nothing. Measured with the
//! power simulation (SYNTHETIC, documented noise model, 30-sample medians, no drift): a ratio of
//! 2 assumed a spread for 5.7 % of metrics (34 of 600) and cost the 5 % slowdown about 3 points of
//! power; 3 assumes one for about 1 % (6 of 600), while a real 1 % job drift (about 5x a median's
//! noise) is still found.

/// An estimate of the between-job spread of one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobSpread {
    /// Standard deviation of a job's offset on the log scale (0.01 = about 1 %).
    pub spread: f64,
    /// How many baseline medians it came from.
    pub generations: usize,
}

/// Fewest medians (older generations plus the current one) for an estimate.
pub const MIN_GENERATIONS: usize = 3;

/// How much more than a median's own noise the history must vary before a spread is assumed.
pub const NOISE_RATIO: f64 = 3.0;

/// Estimate from the older generations' medians (`history`, oldest first) and the current
/// baseline (its median, robust CV and sample count). Non-positive or non-finite medians are
/// skipped.
pub fn job_spread(history: &[f64], median: f64, cv: Option<f64>, n: usize) -> Option<JobSpread> {
    job_spread_gated(history, median, cv, n, NOISE_RATIO)
}

/// [`job_spread`] with another gate than [`NOISE_RATIO`] (`examples/power.rs` measures the
/// choice).
pub fn job_spread_gated(
    history: &[f64],
    median: f64,
    cv: Option<f64>,
    n: usize,
    noise_ratio: f64,
) -> Option<JobSpread> {
    let logs: Vec<f64> = history
        .iter()
        .chain(std::iter::once(&median))
        .filter(|m| m.is_finite() && **m > 0.0)
        .map(|m| m.ln())
        .collect();
    if logs.len() < MIN_GENERATIONS {
        return None;
    }
    let mut diffs: Vec<f64> = logs.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    diffs.sort_by(f64::total_cmp);
    let mad = super::summary::median_sorted(&diffs)?;
    let total = (1.4826 * mad).powi(2) / 2.0;
    let within = cv
        .filter(|c| c.is_finite())
        .map_or(0.0, |c| std::f64::consts::FRAC_PI_2 * c * c / n.max(1) as f64);
    let spread = if total > noise_ratio * noise_ratio * within {
        (total - within).sqrt()
    } else {
        0.0
    };
    Some(JobSpread {
        spread,
        generations: logs.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_little_history_means_no_estimate() {
        assert_eq!(job_spread(&[], 100.0, Some(0.01), 30), None);
        assert_eq!(job_spread(&[101.0], 100.0, Some(0.01), 30), None);
        assert_eq!(job_spread(&[0.0, -1.0, f64::NAN], 100.0, None, 30), None);
    }

    #[test]
    fn history_within_its_median_noise_is_no_spread() {
        // SYNTHETIC: medians of 30 samples at CV 1 %, no job offsets: their noise is ~0.23 %.
        let mut rng = crate::stats::rng::Rng::new(9);
        let medians: Vec<f64> = (0..10)
            .map(|_| {
                let v: Vec<f64> = (0..30).map(|_| 1000.0 * (0.01 * rng.normal()).exp()).collect();
                crate::stats::median(&v).unwrap()
            })
            .collect();
        let (cur, older) = medians.split_last().unwrap();
        assert!(job_spread(older, *cur, Some(0.01), 30).unwrap().spread.abs() < f64::MIN_POSITIVE);
    }

    #[test]
    fn steady_history_has_no_spread_beyond_the_median_noise() {
        let s = job_spread(&[100.0; 9], 100.0, Some(0.01), 30).unwrap();
        assert_eq!(s.generations, 10);
        assert!(s.spread.abs() < 1e-12);
    }

    #[test]
    fn recovers_a_simulated_spread_and_ignores_one_real_step() {
        // Synthetic: 40 job offsets with a 1 % spread, one real 10 % step halfway.
        let mut rng = crate::stats::rng::Rng::new(5);
        let medians: Vec<f64> = (0..40)
            .map(|i| {
                let step = if i >= 20 { 1.10 } else { 1.0 };
                1000.0 * step * (0.01 * rng.normal()).exp()
            })
            .collect();
        let (cur, older) = medians.split_last().unwrap();
        let s = job_spread(older, *cur, Some(0.0), 30).unwrap();
        assert!((0.006..0.016).contains(&s.spread), "{}", s.spread);
    }
}
