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
//! zero, from three medians on. It is pooled with a prior ([`DEFAULT_PRIOR`] or
//! `settings.job_spread`, worth [`PRIOR_DF`] degrees of freedom) weighted by their degrees of
//! freedom, so a new project's first checks carry a job term too, and nothing zeroes the
//! estimate because the history looks quiet: that pre-test, the gate of earlier versions, spent
//! alpha it did not account for (issue 43; docs/statistics.md 2.3).

/// An estimate of the between-job spread of one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobSpread {
    /// Standard deviation of a job's offset on the log scale (0.01 = about 1 %).
    pub spread: f64,
    /// How many baseline medians it came from (0 to 2: the prior alone).
    pub generations: usize,
    /// Degrees of freedom of the estimate: the prior's plus the history's ([`PRIOR_DF`],
    /// [`MAD_DF_PER_DIFF`]); the t reference distribution of a row carries them (Satterthwaite).
    pub df: f64,
    /// The prior it started from (log scale).
    pub prior: f64,
}

/// Fewest medians (older generations plus the current one) for the history to add to the prior.
pub const MIN_GENERATIONS: usize = 3;

/// The between-job spread assumed before any history (log scale, 0.3 %), fitted to the real H100
/// data (docs/statistics.md 2.3): the same build measured in two jobs on one card differed by
/// -0.89 %, +0.25 % and +0.27 % (matmul, reduce, vector_add; 2026-11-24, 15 minutes apart) and by
/// -0.25 %, +0.03 % and -0.04 % (the 30-launch pools' `baseline` and `aa-pool`): their root mean
/// square, 0.41 %, is the spread of a difference of two jobs, `sqrt(2)` times a job's. A runner
/// that drifts more or less says so with `settings.job_spread` (what `cgp-gate calibrate
/// --baselines` measures).
pub(crate) const DEFAULT_PRIOR: f64 = 0.003;

/// What the prior is worth, in degrees of freedom: as wide as its evidence (issue 57). The value
/// rests on six differences of two jobs, three kernels in each of two job pairs on one card. Six
/// independent differences would be 6 degrees of freedom (each is one draw of a normal of twice a
/// job's variance); a pair's three kernels ran in the same two jobs, and two pairs cannot tell how
/// much of a job's state its kernels share (the intraclass correlation of the six is anything from
/// 0 to 1 within what two groups can show). Counted at the middle of that range, 0.5, the design
/// effect `1 + (3 - 1) 0.5 = 2` makes them worth 3. Measured (docs/statistics.md 2.3, 6.6): under
/// job offsets uniform within +-0.9 % per job and no history, 8 degrees of freedom passed 6.7 % of
/// rows at exactly the threshold and covered unchanged code's 98.3 % intervals 90 % of the time;
/// 3 pass 2.35 % and cover 98.2 %.
pub const PRIOR_DF: f64 = 3.0;

/// Degrees of freedom one successive difference of the history adds: the median absolute
/// deviation's efficiency at the normal (0.37).
pub const MAD_DF_PER_DIFF: f64 = 0.37;

/// The prior of the between-job spread: its value (log scale) and its degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prior {
    pub spread: f64,
    pub df: f64,
}

impl Default for Prior {
    fn default() -> Self {
        Self {
            spread: DEFAULT_PRIOR,
            df: PRIOR_DF,
        }
    }
}

/// Does the metric of a row (`key`: `target/size/kernel/metric`) count work rather than time it?
/// Bytes, instructions, sectors, requests, wavefronts and launch attributes are what the program
/// did; a job on another node or boot does them alike, so the prior of a job drift is not
/// assumed for them (their history still measures one). Durations, rates and percentages of peak
/// move with the machine: they take the prior. Unknown names take it too (the safe side).
pub(crate) fn counts_work(key: &str) -> bool {
    let metric = key.rsplit('/').next().unwrap_or(key);
    let rate = ["per_second", "pct", "throughput", "time", "cycles"]
        .iter()
        .any(|r| metric.contains(r));
    let count = ["bytes", "inst", "sectors", "requests", "wavefronts", "registers"]
        .iter()
        .any(|c| metric.contains(c))
        || metric.starts_with("launch__");
    count && !rate
}

/// Estimate from the older generations' medians (`history`, oldest first) and the current
/// baseline (its median, robust CV and sample count), with the default prior. Non-positive or
/// non-finite medians are skipped.
pub fn job_spread(history: &[f64], median: f64, cv: Option<f64>, n: usize) -> Option<JobSpread> {
    job_spread_with(history, median, cv, n, Prior::default())
}

/// [`job_spread`] with another prior.
pub(crate) fn job_spread_with(
    history: &[f64],
    median: f64,
    cv: Option<f64>,
    n: usize,
    prior: Prior,
) -> Option<JobSpread> {
    let within = cv
        .filter(|c| c.is_finite())
        .map_or(0.0, |c| std::f64::consts::FRAC_PI_2 * c * c / n.max(1) as f64);
    job_spread_noise(history, median, within, prior)
}

/// The variance of one baseline's median (log scale) when its launches come in runs: the
/// run-level model's own parts, `sigma_b^2 / R + (pi / 2) sigma_w^2 / N` (`R` runs, `N` launches
/// in all), not `(pi / 2) cv^2 / R` from the launch-level CV, which is right for one sample per
/// run and overstates a 30-launch median's noise 2x to 46x (issue 35). `within_sd`: `None` when
/// no run holds two launches (then `between_sd` is the whole per-run spread).
pub(crate) fn median_noise_var(between_sd: f64, within_sd: Option<f64>, runs: usize, launches: usize) -> f64 {
    let (r, n) = (runs.max(1) as f64, launches.max(1) as f64);
    let b = if between_sd.is_finite() { between_sd } else { 0.0 };
    match within_sd.filter(|w| w.is_finite()) {
        Some(w) => b * b / r + std::f64::consts::FRAC_PI_2 * w * w / n,
        None => std::f64::consts::FRAC_PI_2 * b * b / r,
    }
}

/// The spread with the noise of one median given as a variance (log scale, `noise_var`): the
/// prior's variance and the history's (the successive differences' robust variance less a
/// median's own noise, floored at 0), weighted by their degrees of freedom (issue 43). No
/// history is needed and nothing is zeroed by a pre-test (the earlier gate that set the spread to
/// 0 when the history looked quiet was a test-then-test rule, and it cost alpha): with fewer than
/// [`MIN_GENERATIONS`] medians the prior stands alone. `None` only when the prior is 0 and the
/// history gives no estimate. Never NaN.
pub(crate) fn job_spread_noise(
    history: &[f64],
    median: f64,
    noise_var: f64,
    prior: Prior,
) -> Option<JobSpread> {
    let logs: Vec<f64> = history
        .iter()
        .chain(std::iter::once(&median))
        .filter(|m| m.is_finite() && **m > 0.0)
        .map(|m| m.ln())
        .collect();
    let p = if prior.spread.is_finite() {
        prior.spread.max(0.0)
    } else {
        0.0
    };
    let p_df = if prior.df.is_finite() {
        prior.df.max(0.0)
    } else {
        0.0
    };
    let (est, h_df) = if logs.len() >= MIN_GENERATIONS {
        let mut diffs: Vec<f64> = logs.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
        diffs.sort_by(f64::total_cmp);
        let mad = super::summary::median_sorted(&diffs).unwrap_or(0.0);
        let total = (1.4826 * mad).powi(2) / 2.0;
        let within = if noise_var.is_finite() {
            noise_var.max(0.0)
        } else {
            0.0
        };
        ((total - within).max(0.0), MAD_DF_PER_DIFF * diffs.len() as f64)
    } else {
        (0.0, 0.0)
    };
    let weight = p_df + h_df;
    if (p == 0.0 || p_df == 0.0) && h_df == 0.0 {
        return None;
    }
    let var = if weight > 0.0 {
        (p_df * p * p + h_df * est) / weight
    } else {
        p * p
    };
    let spread = var.max(0.0).sqrt();
    Some(JobSpread {
        spread: if spread.is_finite() { spread } else { 0.0 },
        generations: logs.len(),
        df: if weight > 0.0 { weight } else { f64::INFINITY },
        prior: p,
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

    const NONE: Prior = Prior { spread: 0.0, df: 0.0 };

    #[test]
    fn without_history_the_prior_stands_alone() {
        let s = job_spread(&[], 100.0, Some(0.01), 30).unwrap();
        assert_eq!((s.spread, s.df, s.generations), (DEFAULT_PRIOR, PRIOR_DF, 1));
        let s = job_spread(&[101.0], 100.0, Some(0.01), 30).unwrap();
        assert_eq!((s.spread, s.df), (DEFAULT_PRIOR, PRIOR_DF));
        // No prior and no history: no term at all.
        assert_eq!(job_spread_with(&[101.0], 100.0, Some(0.01), 30, NONE), None);
        assert_eq!(
            job_spread_with(&[0.0, -1.0, f64::NAN], 100.0, None, 30, NONE),
            None
        );
    }

    #[test]
    fn history_adds_its_degrees_of_freedom_and_pulls_towards_what_it_saw() {
        // SYNTHETIC: 9 older medians drifting by a 1 % spread.
        let mut rng = crate::stats::rng::Rng::new(9);
        let medians: Vec<f64> = (0..10).map(|_| 1000.0 * (0.01 * rng.normal()).exp()).collect();
        let (cur, older) = medians.split_last().unwrap();
        let s = job_spread(older, *cur, Some(0.0), 30).unwrap();
        assert!((s.df - (PRIOR_DF + 9.0 * MAD_DF_PER_DIFF)).abs() < 1e-12);
        // Pulled from the prior towards the 1 % the history saw, by the two weights.
        assert!(s.spread > 1.5 * DEFAULT_PRIOR && s.spread < 0.01, "{}", s.spread);
        // A quiet history is never zeroed below the prior's pull by a pre-test.
        let s = job_spread(&[100.0; 9], 100.0, Some(0.01), 30).unwrap();
        assert!(s.spread > 0.0 && s.spread < DEFAULT_PRIOR, "{}", s.spread);
    }

    #[test]
    fn counts_take_no_prior_and_times_do() {
        for key in [
            "vector_add/n=1/vector_add/dram__bytes_read.sum",
            "m/default/k/smsp__inst_executed.sum",
            "m/default/k/launch__registers_per_thread",
        ] {
            assert!(counts_work(key), "{key}");
        }
        for key in [
            "m/default/k/gpu__time_duration.sum",
            "m/default/k/dram__throughput.avg.pct_of_peak_sustained_elapsed",
            "m/default/k/dram__bytes_read.sum.per_second",
            "m/default/k/cgp__achieved_flops.per_second",
            "m/default/k/something_new",
        ] {
            assert!(!counts_work(key), "{key}");
        }
    }

    #[test]
    fn never_nan() {
        let h = [100.0, 100.1, 99.9, 100.05, 99.95];
        for noise in [0.0, 1e-8, 1e-4, f64::NAN, f64::INFINITY] {
            for prior in [
                Prior::default(),
                NONE,
                Prior {
                    spread: f64::NAN,
                    df: 1.0,
                },
            ] {
                if let Some(s) = job_spread_noise(&h, 100.0, noise, prior) {
                    assert!(
                        s.spread.is_finite() && s.spread >= 0.0,
                        "{noise} {prior:?}: {s:?}"
                    );
                }
            }
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
        let s = job_spread_with(older, *cur, Some(0.0), 30, NONE).unwrap();
        assert!((0.006..0.016).contains(&s.spread), "{}", s.spread);
    }
}
