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

/// The gate for rows whose launches come in runs, where a median's noise is the run-level
/// model's `sigma_b^2 / R + (pi / 2) sigma_w^2 / N` (docs/statistics.md 2.3, chosen by
/// `examples/power.rs`).
pub const RUN_NOISE_RATIO: f64 = 2.0;

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
    let within = cv
        .filter(|c| c.is_finite())
        .map_or(0.0, |c| std::f64::consts::FRAC_PI_2 * c * c / n.max(1) as f64);
    job_spread_noise(history, median, within, noise_ratio)
}

/// The variance of one baseline's median (log scale) when its launches come in runs: the
/// run-level model's own parts, `sigma_b^2 / R + (pi / 2) sigma_w^2 / N` (`R` runs, `N` launches
/// in all), not `(pi / 2) cv^2 / R` from the launch-level CV, which is right for one sample per
/// run and overstates a 30-launch median's noise 2x to 46x (issue 35). `within_sd`: `None` when
/// no run holds two launches (then `between_sd` is the whole per-run spread).
pub fn median_noise_var(between_sd: f64, within_sd: Option<f64>, runs: usize, launches: usize) -> f64 {
    let (r, n) = (runs.max(1) as f64, launches.max(1) as f64);
    let b = if between_sd.is_finite() { between_sd } else { 0.0 };
    match within_sd.filter(|w| w.is_finite()) {
        Some(w) => b * b / r + std::f64::consts::FRAC_PI_2 * w * w / n,
        None => std::f64::consts::FRAC_PI_2 * b * b / r,
    }
}

/// The estimate with the noise of one median given as a variance (log scale, `noise_var`): the
/// history's spread beyond it, when the history varies more than `noise_ratio` times that
/// noise's spread. Never NaN: a gate under 1 lets a history through that varies less than its
/// noise, and the spread is then 0, not the square root of a negative.
pub fn job_spread_noise(history: &[f64], median: f64, noise_var: f64, noise_ratio: f64) -> Option<JobSpread> {
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
    let within = if noise_var.is_finite() {
        noise_var.max(0.0)
    } else {
        0.0
    };
    let spread = if total > noise_ratio * noise_ratio * within {
        (total - within).max(0.0).sqrt()
    } else {
        0.0
    };
    Some(JobSpread {
        spread: if spread.is_finite() { spread } else { 0.0 },
        generations: logs.len(),
    })
}

/// What a between-job spread costs a check against the relative tolerance `t`: the smallest
/// change found in 80 % of checks at a one-sided 1 % level, `exp(ln(1 + t) + (z_0.99 + z_0.8) SE)
/// - 1`, with the drift (`SE^2 + 2 spread^2`: the baseline's job and the candidate's each carry
/// an offset) and without it (`se`: the standard error of the processes alone). `check` states it
/// per row, `calibrate` per metric (docs/statistics.md 2.3).
pub fn drift_cost(t: f64, se: f64, spread: f64) -> (f64, f64) {
    const Z: f64 = 2.326_348 + 0.841_621;
    let at = |se: f64| (t.ln_1p() + Z * se).exp_m1();
    (at((se * se + 2.0 * spread * spread).sqrt()), at(se))
}

/// The job drift is too large for the relative tolerance `t`: the threshold is under three
/// spreads, or the drift raises the smallest change found in 80 % of checks
/// ([`drift_cost`]) by more than a third of `t`. `se`: the processes' standard error, when known.
pub fn drift_too_large(t: f64, spread: f64, se: Option<f64>) -> bool {
    let raised = se.is_some_and(|se| {
        let (with, without) = drift_cost(t, se, spread);
        with - without > t / 3.0
    });
    t > 0.0 && (t < 3.0 * spread || raised)
}

/// The sentence `check` and `calibrate` both write when [`drift_too_large`]: the numbers, and
/// that `cgp-gate ab` removes the drift; `None` when the drift fits the threshold.
pub fn drift_warning(t: f64, spread: f64, se: Option<f64>) -> Option<String> {
    use crate::foundation::units::{Percent, percent};
    if !drift_too_large(t, spread, se) {
        return None;
    }
    let pct = |x: f64| percent(x, Percent::Signed2);
    let cost = se.map_or_else(String::new, |se| {
        let (with, without) = drift_cost(t, se, spread);
        format!(
            ": with it a change must be about {} to be found in 80% of checks ({} without it)",
            pct(with),
            pct(without)
        )
    });
    Some(format!(
        "warning: the job drift is too large for the {} threshold{cost}; `cgp-gate ab` measures baseline and candidate in the same job, which removes it, or raise the threshold to at least {}",
        pct(t).trim_start_matches('+'),
        pct(3.0 * spread).trim_start_matches('+')
    ))
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
    fn a_gate_under_one_never_makes_a_nan_spread() {
        // The history varies less than a median's noise: with a gate of 0.5 it passes the gate,
        // and the spread must be 0, not sqrt(negative) (issue 35).
        let h = [100.0, 100.1, 99.9, 100.05, 99.95];
        for ratio in [0.0, 0.5, 0.99, 1.0, 2.0] {
            let s = job_spread_gated(&h, 100.0, Some(0.05), 30, ratio).unwrap();
            assert!(s.spread.is_finite() && s.spread >= 0.0, "ratio {ratio}: {s:?}");
            let s = job_spread_noise(&h, 100.0, 1e-4, ratio).unwrap();
            assert!(s.spread.is_finite() && s.spread >= 0.0, "ratio {ratio}: {s:?}");
        }
    }

    #[test]
    fn a_median_of_many_launches_is_quieter_than_the_launch_cv_says() {
        // 30 runs of 30 launches, within 1 %, between 0.1 %: the median's variance is set by
        // the runs and the 900 launches, far below (pi/2) 1 %^2 / 30.
        let v = median_noise_var(0.001, Some(0.01), 30, 900);
        let old = std::f64::consts::FRAC_PI_2 * 0.01 * 0.01 / 30.0;
        assert!(v < old / 10.0, "{v} vs {old}");
        assert!((v - (0.001f64.powi(2) / 30.0 + std::f64::consts::FRAC_PI_2 * 1e-4 / 900.0)).abs() < 1e-15);
        // One launch per run: the per-run spread is all there is.
        assert!((median_noise_var(0.01, None, 30, 30) - old).abs() < 1e-15);
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
