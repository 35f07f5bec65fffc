//! A noisy row whose launches come in runs (profiler processes): the two-level model on the log
//! scale (`stats::nested`), t tests of the shift against the threshold's boundaries with a
//! within-run and a between-run noise part, the interval widened by the between-job spread.

use super::estimate::Estimate;
use super::shift::{AllIn, IntervalFrom, ShiftRow};
use super::{Comparison, Config, Prepared, base_judgement, effect_text, prior_of, threshold_text};
use crate::foundation::threshold::{Direction, Threshold, ThresholdKind};
use crate::foundation::units::{Percent, percent};
use crate::stats::hodges_lehmann::Shift;
use crate::stats::jobspread::{job_spread_noise, median_noise_var};
use crate::stats::nested::{Fit, Runs, count_runs, fit, fit_means};
use crate::stats::row::{Method, RowVerdict};

/// Does the row carry launches grouped in runs (some run on a side with two or more samples)?
/// Then the run-level model decides (`nested`); otherwise every sample is its own run and the
/// rank test does.
pub(super) fn grouped(row: &Comparison<'_>) -> bool {
    let multi = |values: usize, runs: &[u32]| {
        !runs.is_empty() && runs.len() == values && count_runs(values, runs) < values
    };
    multi(row.candidate.len(), row.candidate_runs)
        || row.baseline.is_some_and(|b| multi(b.len(), row.baseline_runs))
}

/// A noisy row with runs: the two-level model on the log scale (`nested`), t tests of the
/// shift against the threshold's boundaries, the interval widened (in quadrature) by the
/// between-job spread of the baseline history.
pub(super) fn prepare_nested(
    row: &Comparison<'_>,
    cfg: &Config,
    baseline: &[f64],
    exact_kind: bool,
) -> Prepared {
    let slow_high = row.threshold.direction == Direction::Lower;
    let bad_sign = if slow_high { 1.0 } else { -1.0 };
    let fitted = fit_row(row, baseline, slow_high, cfg.trim_dips);
    let mut j = base_judgement(row, cfg, RowVerdict::Inconclusive, "");
    let f = match fitted {
        Ok(f) => f,
        Err(why) => {
            j.ruling.reason = format!("not enough data or unusable values: {why}");
            return Prepared::Done(j);
        }
    };
    // Marks the code explains (a slow path some launches of every process take) make the
    // processes' launches bimodal: the row is judged by each process's mean launch, what a
    // program pays (issue 57), on every launch.
    let by_means = f.left_out.kept_as_code.is_some();
    let f = if by_means {
        fit_means_row(row, baseline, slow_high).map_or(f.clone(), |m| Fit {
            left_out: f.left_out.clone(),
            ..m
        })
    } else {
        f
    };
    let min_effect = row.threshold.min_effect.as_ref().map_or(0.0, |q| q.value);
    let base_median = j.baseline.as_ref().map_or(0.0, |b| b.median);
    let threshold_fraction = match row.threshold.kind {
        ThresholdKind::Relative { fraction } => fraction,
        ThresholdKind::Exact | ThresholdKind::Min { .. } | ThresholdKind::Max { .. } => 0.0,
    };
    // min_effect as a relative tolerance at the baseline's median: the test must exceed both.
    let fraction = if min_effect > 0.0 && base_median > 0.0 {
        threshold_fraction.max(min_effect / base_median)
    } else {
        threshold_fraction
    };
    // The noise of one baseline's median, from the fit's own parts (the history's medians are
    // medians of as many runs and launches as this baseline's).
    let noise_var = median_noise_var(f.between_sd, f.within_sd, f.runs.0, f.n.0);
    let spread = job_spread_noise(row.history, base_median, noise_var, prior_of(row, cfg));
    let extra_var = spread.map_or(0.0, |s| 2.0 * s.spread * s.spread);
    // The spread is an estimate with its own degrees of freedom: the t reference distribution
    // carries them (Satterthwaite over the fit's variance and the job term).
    let f = f.with_job_term(extra_var, spread.map_or(f64::INFINITY, |s| s.df));
    let q = f.quantile(cfg.confidence);
    let widen = q * ((f.se * f.se + extra_var).sqrt() - f.se);
    let ci = f.interval(cfg.confidence, extra_var);
    let shift = Shift {
        change: f.delta.exp_m1(),
        ci: [ci[0].exp_m1(), ci[1].exp_m1()],
        confidence: cfg.confidence,
    };
    let (p_bad, p_good, p_zero) = boundary_tests(&f, fraction, slow_high, extra_var);
    let tolerance_text = tolerance_text(
        row.threshold,
        exact_kind,
        threshold_fraction,
        fraction,
        min_effect,
    );
    j.ruling.method = Method::RunLevelT;
    j.ruling.estimate = Estimate::shifted(&shift, p_bad);
    j.job_spread = spread.map(|s| s.spread);
    Prepared::Shift(Box::new(ShiftRow {
        j,
        shift,
        p_bad,
        p_good,
        p_zero,
        bad_sign,
        fraction: if exact_kind && min_effect == 0.0 {
            0.0
        } else {
            fraction
        },
        effect: None,
        tolerance_text,
        effect_text: effect_text(row.threshold),
        exact_kind: exact_kind && min_effect == 0.0,
        spread,
        widen,
        dips: (0, 0),
        left_out: f.left_out.clone(),
        all_in: all_in(
            row,
            baseline,
            slow_high,
            &f,
            (extra_var, spread.map_or(f64::INFINITY, |s| s.df)),
        ),
        extra: noise_text(&f, by_means),
        from: IntervalFrom::Model(f, extra_var),
    }))
}

/// The processes' means with every launch kept (nothing left out), when the fit left out a
/// launch or a process of the candidate, or more than the stated share of the baseline: its pass
/// must hold too (`shift::AllIn`). `None` otherwise.
fn all_in(
    row: &Comparison<'_>,
    baseline: &[f64],
    slow_high: bool,
    f: &Fit,
    job: (f64, f64),
) -> Option<AllIn> {
    let (extra_var, job_df) = job;
    if !f.left_out.needs_all_in() {
        return None;
    }
    let all = fit_means_row(row, baseline, slow_high).ok()?;
    Some(AllIn::Model(all.with_job_term(extra_var, job_df), extra_var))
}

/// A row's two sides with the run of each sample: baseline, candidate.
fn sides<'a>(row: &Comparison<'a>, baseline: &'a [f64]) -> (Runs<'a>, Runs<'a>) {
    (
        Runs {
            values: baseline,
            runs: row.baseline_runs,
        },
        Runs {
            values: row.candidate,
            runs: row.candidate_runs,
        },
    )
}

/// The t test of the processes' log means of a row's two sides, every launch kept
/// (`nested::fit_means`).
fn fit_means_row(row: &Comparison<'_>, baseline: &[f64], slow_high: bool) -> Result<Fit, String> {
    let (b, c) = sides(row, baseline);
    fit_means(b, c, slow_high)
}

/// The run-level model of a row's two sides; `trim`: leave out what the machine explains.
fn fit_row(row: &Comparison<'_>, baseline: &[f64], slow_high: bool, trim: bool) -> Result<Fit, String> {
    let (b, c) = sides(row, baseline);
    fit(b, c, slow_high, trim)
}

/// The t tests of the log shift against the regression boundary, the improvement boundary (none
/// for a relative tolerance of 100 % or more) and no change, in the bad direction first: `(p_bad,
/// p_good, p_zero)`. `extra_var`: the between-job variance added to the shift's.
fn boundary_tests(f: &Fit, fraction: f64, slow_high: bool, extra_var: f64) -> (f64, f64, f64) {
    let up = fraction.ln_1p();
    let down = if fraction < 1.0 {
        (-fraction).ln_1p()
    } else {
        f64::NEG_INFINITY
    };
    if slow_high {
        (
            f.p_greater(up, extra_var),
            f.p_less(down, extra_var),
            f.p_greater(0.0, extra_var),
        )
    } else {
        (
            f.p_less(down, extra_var),
            f.p_greater(up, extra_var),
            f.p_less(0.0, extra_var),
        )
    }
}

/// How the tolerance reads in a reason: the threshold (`threshold_fraction`), and `min_effect`
/// with the relative `fraction` it comes to at the baseline's median when set.
fn tolerance_text(
    threshold: &Threshold,
    exact_kind: bool,
    threshold_fraction: f64,
    fraction: f64,
    min_effect: f64,
) -> String {
    let threshold_text = threshold_text(exact_kind, threshold_fraction);
    if min_effect > 0.0 {
        format!(
            "{threshold_text} and min effect {} ({})",
            effect_text(threshold),
            percent(fraction, Percent::Signed2).trim_start_matches('+')
        )
    } else {
        threshold_text
    }
}

/// The model's runs and noise parts, appended to the reason; `by_means`: the row was judged by
/// the processes' means.
fn noise_text(f: &Fit, by_means: bool) -> String {
    if by_means {
        return format!(
            "; judged by each process's mean launch: {} baseline and {} candidate processes ({} and {} launches), noise between the processes' means {}",
            f.runs.0,
            f.runs.1,
            f.n.0,
            f.n.1,
            percent(f.between_sd, Percent::Signed2).trim_start_matches('+')
        );
    }
    let Some(w) = f.within_sd else {
        // One value per process (a harness's summary, one sample a run): the t test of their
        // logs, which has no floor (the rank test's, at so few, is above the level it needs).
        return format!(
            "; {} baseline and {} candidate processes, one value each, judged by the t test of their logs ({:.0} degrees of freedom), noise between processes {}",
            f.runs.0,
            f.runs.1,
            f.df,
            percent(f.between_sd, Percent::Signed2).trim_start_matches('+')
        );
    };
    let within = percent(w, Percent::Signed2).trim_start_matches('+').to_owned();
    let mut text = format!(
        "; {} baseline and {} candidate runs ({} and {} launches), noise within a run {within}, between runs {}",
        f.runs.0,
        f.runs.1,
        f.n.0,
        f.n.1,
        percent(f.between_sd, Percent::Signed2).trim_start_matches('+')
    );
    for (side, left) in ["baseline", "candidate"].iter().zip(&f.disturbed_runs) {
        if !left.is_empty() {
            let each: Vec<String> = left.iter().map(|x| percent(*x, Percent::Signed2)).collect();
            text.push_str(&format!(
                "; {} disturbed {side} run(s) left out ({} from the median run)",
                left.len(),
                each.join(", ")
            ));
        }
    }
    text
}
