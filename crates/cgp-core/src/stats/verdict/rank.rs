//! A noisy row whose samples are each their own run, judged by rank tests: the one-sided
//! Mann-Whitney U tests of the candidate against the baseline moved to the threshold's
//! boundaries (slow outliers left out by `dips`), and the interval of the relative shift
//! (Hodges-Lehmann or bootstrap) widened by the between-job spread.

use statrs::distribution::{ContinuousCDF, Normal};

use super::estimate::Estimate;
use super::shift::{AllIn, IntervalFrom, RankSides, ShiftRow};
use super::{Comparison, Config, IntervalMethod, Prepared, base_judgement, effect_text, threshold_text};
use crate::foundation::threshold::{Direction, ThresholdKind};
use crate::stats::bootstrap;
use crate::stats::dips;
use crate::stats::hodges_lehmann::{self, Shift};
use crate::stats::jobspread::{JobSpread, job_spread_with};
use crate::stats::mannwhitney::{NullCache, mann_whitney_sorted};
use crate::stats::rng::seed_for;
use crate::stats::row::{Method, RowVerdict};
use crate::stats::screen::{KeptAsCode, LeftOut, code_explains};
use crate::stats::summary::sorted_finite;

/// A noisy row with a baseline, enough samples on each side and no runs: the shift and its
/// interval, and the U tests against the threshold's boundaries (and `min_effect`).
pub(super) fn prepare_ranked(
    row: &Comparison<'_>,
    cfg: &Config,
    baseline: &[f64],
    exact_kind: bool,
    cache: &mut NullCache,
) -> Prepared {
    let min_effect = row.threshold.min_effect.as_ref().map_or(0.0, |q| q.value);
    let nb = baseline.len();
    // Clock dips and preemptions left out, on each side alike (`dips`).
    let slow_high = row.threshold.direction == Direction::Lower;
    let (c_all, b_all) = (sorted_finite(row.candidate), sorted_finite(baseline));
    // The estimate and its interval: each side without its own slow outliers.
    // Dips are the machine's only while the candidate has no significantly larger share of them
    // than the baseline (`stats::screen`); otherwise they are the code's and every sample counts.
    let (c_trim, kc) = dips::trim_slow(&c_all, slow_high);
    let (b_trim, kb) = dips::trim_slow(&b_all, slow_high);
    let code = if cfg.trim_dips {
        code_explains(kc, c_all.len(), kb, b_all.len())
    } else {
        None
    };
    let trim = cfg.trim_dips && code.is_none();
    let (c, b) = if trim {
        (c_trim, b_trim)
    } else {
        (c_all.clone(), b_all.clone())
    };
    let Some(mut shift) = relative_shift(row, cfg, &c, &b, cache) else {
        return Prepared::Done(base_judgement(
            row,
            cfg,
            RowVerdict::Inconclusive,
            "a relative change needs positive samples and this metric has values <= 0; use a min/max threshold",
        ));
    };
    let bad_sign = match row.threshold.direction {
        Direction::Lower => 1.0,
        Direction::Higher => -1.0,
    };
    let fraction = match row.threshold.kind {
        ThresholdKind::Relative { fraction } => fraction,
        ThresholdKind::Exact | ThresholdKind::Min { .. } | ThresholdKind::Max { .. } => 0.0,
    };
    let mut j = base_judgement(row, cfg, RowVerdict::Inconclusive, "");
    let (base_median, base_cv) = j.baseline.as_ref().map_or((0.0, None), |s| (s.median, s.cv));
    let spread = job_spread_with(row.history, base_median, base_cv, nb, super::prior_of(row, cfg));
    let widen = widen_for_job_spread(&mut shift, spread, cfg.confidence);
    let effect = (min_effect > 0.0).then(|| {
        (
            min_effect,
            hodges_lehmann::absolute_shift_sorted(&c, &b, cfg.confidence, cache),
        )
    });
    let sides = Sorted {
        candidate: &c_all,
        baseline: &b_all,
        slow_high,
        trim_dips: trim,
    };
    let p = sides.boundary_tests(fraction, widen, min_effect, cache);
    let left_out = left_out(p.dips, (b_all.len(), c_all.len()), code.map(|p| (kc, p)));
    let threshold_text = threshold_text(exact_kind, fraction);
    let tolerance_text = if min_effect > 0.0 {
        format!("{threshold_text} and min effect {}", effect_text(row.threshold))
    } else {
        threshold_text
    };
    j.ruling.method = match cfg.interval {
        IntervalMethod::HodgesLehmann => Method::MannWhitneyHodgesLehmann,
        IntervalMethod::Bootstrap => Method::MannWhitneyBootstrap,
    };
    j.ruling.estimate = Estimate::shifted(&shift, p.bad);
    j.job_spread = spread.map(|s| s.spread);
    Prepared::Shift(Box::new(ShiftRow {
        j,
        shift,
        p_bad: p.bad,
        p_good: p.good,
        p_zero: p.zero,
        bad_sign,
        fraction,
        effect,
        tolerance_text,
        effect_text: effect_text(row.threshold),
        exact_kind,
        spread,
        widen,
        dips: p.dips,
        all_in: left_out.needs_all_in().then(|| {
            AllIn::Rank(RankSides {
                candidate: c_all.clone(),
                baseline: b_all.clone(),
                ..sides_for(row, cfg, spread)
            })
        }),
        left_out,
        extra: String::new(),
        from: IntervalFrom::Rank(RankSides {
            candidate: c,
            baseline: b,
            ..sides_for(row, cfg, spread)
        }),
    }))
}

/// What a rank-test row left out: the test's slow dips per side (baseline, candidate) out of
/// each side's samples, or, when the code explains the candidate's dips, their count and the
/// share test's p.
fn left_out(dips: (usize, usize), of: (usize, usize), code: Option<(usize, f64)>) -> LeftOut {
    LeftOut {
        launches: dips,
        of_launches: of,
        kept_as_code: code.map(|(launches, p)| KeptAsCode {
            launches,
            runs: 0,
            p,
            in_processes: 0,
        }),
        ..LeftOut::default()
    }
}

/// A rank row's interval settings, its sides empty (the caller fills them).
fn sides_for(row: &Comparison<'_>, cfg: &Config, spread: Option<JobSpread>) -> RankSides {
    RankSides {
        candidate: Vec::new(),
        baseline: Vec::new(),
        spread: spread.map_or(0.0, |s| s.spread),
        method: cfg.interval,
        resamples: cfg.resamples,
        seed: seed_for(cfg.seed, &row.key),
    }
}

/// The relative shift candidate / baseline - 1 with its interval, by the configured method, from
/// the sides without their slow outliers; `None` when a relative change cannot be formed (values
/// <= 0).
fn relative_shift(
    row: &Comparison<'_>,
    cfg: &Config,
    c: &[f64],
    b: &[f64],
    cache: &mut NullCache,
) -> Option<Shift> {
    match cfg.interval {
        IntervalMethod::HodgesLehmann => hodges_lehmann::relative_shift(c, b, cfg.confidence, cache),
        IntervalMethod::Bootstrap => {
            bootstrap::median_ratio(c, b, cfg.confidence, cfg.resamples, seed_for(cfg.seed, &row.key))
        }
    }
}

/// Widens the shift's interval for the between-job spread and returns the half-width added on
/// each side of the log-scale interval (0 without a spread). The offset between two jobs has
/// twice a job's variance; the interval is widened by its half-width at the interval's own
/// level.
fn widen_for_job_spread(shift: &mut Shift, spread: Option<JobSpread>, confidence: f64) -> f64 {
    let z = Normal::standard().inverse_cdf(0.5 + confidence / 2.0);
    let widen = spread.map_or(0.0, |s| z * std::f64::consts::SQRT_2 * s.spread);
    shift.ci = [
        (1.0 + shift.ci[0]) * (-widen).exp() - 1.0,
        (1.0 + shift.ci[1]) * widen.exp() - 1.0,
    ];
    widen
}

/// Both sides' finite samples, sorted, slow outliers still in, and how the tests treat them.
struct Sorted<'s> {
    candidate: &'s [f64],
    baseline: &'s [f64],
    /// Slow samples are the high ones (lower is better): an increase is bad.
    slow_high: bool,
    /// Leave each test's slow outliers out (`dips::trim_pooled`).
    trim_dips: bool,
}

/// The one-sided p-values of a shifted row, and the slow outliers the regression test left out.
struct BoundaryTests {
    /// Against the regression boundary (and `min_effect`).
    bad: f64,
    /// Against the improvement boundary (and `min_effect`).
    good: f64,
    /// Against the unmoved baseline, in the bad direction.
    zero: f64,
    /// Slow outliers left out: baseline, candidate.
    dips: (usize, usize),
}

impl Sorted<'_> {
    /// The U tests against the baseline moved to the regression and improvement boundaries (the
    /// relative threshold `fraction`, widened by `widen`) and, with `min_effect`, against the
    /// baseline moved by it (intersection-union: beyond both needs both tests), and against the
    /// unmoved baseline.
    fn boundary_tests(
        &self,
        fraction: f64,
        widen: f64,
        min_effect: f64,
        cache: &mut NullCache,
    ) -> BoundaryTests {
        let (c_all, b_all, slow_high) = (self.candidate, self.baseline, self.slow_high);
        // The baseline moved to the regression and improvement boundaries; a relative threshold
        // of 100 % or more cannot be crossed downwards by positive values.
        let up = (1.0 + fraction) * widen.exp();
        let down = (fraction < 1.0).then(|| (1.0 - fraction) * (-widen).exp());
        // Each test: slow outliers left out by a fence on its own pooled sample
        // (`dips::trim_pooled`), which keeps the test's level. The counts shown are those of the
        // regression test (the first one run).
        let dips_seen: std::cell::Cell<Option<(usize, usize)>> = std::cell::Cell::new(None);
        let test = |map: &dyn Fn(f64) -> f64, cache: &mut NullCache| {
            if self.trim_dips {
                let (ck, bk, c_out, b_out) = dips::trim_pooled(c_all, b_all, map, slow_high);
                if dips_seen.get().is_none() {
                    dips_seen.set(Some((b_out, c_out)));
                }
                mann_whitney_sorted(&ck, &bk, map, cache)
            } else {
                mann_whitney_sorted(c_all, b_all, map, cache)
            }
        };
        let greater = |map: &dyn Fn(f64) -> f64, cache: &mut NullCache| test(map, cache).p_greater;
        let less = |map: &dyn Fn(f64) -> f64, cache: &mut NullCache| test(map, cache).p_less;
        // Intersection-union: beyond the threshold AND beyond min_effect needs both tests.
        let (bad, good, zero) = if slow_high {
            let mut bad = greater(&|x| x * up, cache);
            let mut good = down.map_or(1.0, |d| less(&|x| x * d, cache));
            if min_effect > 0.0 {
                bad = bad.max(greater(&|x| x + min_effect, cache));
                good = good.max(less(&|x| x - min_effect, cache));
            }
            (bad, good, greater(&|x| x, cache))
        } else {
            let mut bad = down.map_or(1.0, |d| less(&|x| x * d, cache));
            let mut good = greater(&|x| x * up, cache);
            if min_effect > 0.0 {
                bad = bad.max(less(&|x| x - min_effect, cache));
                good = good.max(greater(&|x| x + min_effect, cache));
            }
            (bad, good, less(&|x| x, cache))
        };
        BoundaryTests {
            bad,
            good,
            zero,
            dips: dips_seen.get().unwrap_or((0, 0)),
        }
    }
}
