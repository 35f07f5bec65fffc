//! The per-row verdict: which test applies, the run-wide Holm adjustment, and the decision.
//!
//! Three kinds of row (see `docs/statistics.md` for the reasoning and the measured error rates):
//! - both sides constant (registers, instruction counts, launch configuration): exact comparison,
//!   the threshold being the tolerance;
//! - noisy, with a baseline: decided against the threshold, not against zero. Regression = the
//!   one-sided U test of the candidate against the baseline x (1 + T) (and against baseline +
//!   `min_effect`) is significant after Holm over the run, i.e. the whole interval of the
//!   Hodges-Lehmann shift lies beyond the threshold; pass = the interval lies within it;
//!   otherwise inconclusive (re-measured; the last round decides). A shift beyond the threshold
//!   that is only significant against zero is a note in the reason. Intervals are widened by the
//!   between-job spread estimated from the baseline's history (`jobspread`);
//! - `min:`/`max:` limits: the candidate's median against the limit, by its order-statistic
//!   interval and the sign test (also in the Holm family).
//!
//! A noisy row whose launches come in runs (profiler processes: `Comparison::baseline_runs`,
//! `candidate_runs`) is judged by the run-level model instead of the rank test (`nested`): t tests
//! of the log shift with a within-run and a between-run noise part, with the same decision. The
//! run's alpha is split over the looks re-measurement may take (`Config::looks`).

use super::row::{Method, RowVerdict, SideSummary};
use crate::foundation::threshold::{Direction, Threshold, ThresholdKind};
use crate::foundation::units::{Percent, percent};

use super::bootstrap;
use super::dips;
use super::hodges_lehmann::{self, Shift};
use super::jobspread::{JobSpread, job_spread_gated};
use super::mannwhitney::{NullCache, mann_whitney_sorted};
use super::median_ci::{median_interval, sign_test};
use super::multiple::holm;
use super::rng::seed_for;
use super::summary::{sorted_finite, summarize};
use statrs::distribution::{ContinuousCDF, Normal};

/// Fewer samples than this on a side: no test, the row is inconclusive.
pub const MIN_SAMPLES: usize = 3;

/// Most samples a side may hold (a baseline entry, or a candidate row). Judging 100 000 per side
/// takes well under a second (`cargo run --release --example stats_bench`); this bound keeps every
/// row within a few seconds and a baseline file within reason. Baselines holding more are refused
/// when read.
pub const MAX_SAMPLES: usize = 200_000;

/// How the interval of the relative shift is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IntervalMethod {
    /// Hodges-Lehmann estimate with its distribution-free (Moses) interval. Deterministic.
    #[default]
    HodgesLehmann,
    /// Ratio of medians with a percentile bootstrap interval, seeded from the row key.
    Bootstrap,
}

/// Statistical settings of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Run-wide false-alarm rate (Holm over every tested row), in (0, 1).
    pub alpha: f64,
    /// Confidence level of the intervals, in (0, 1).
    pub confidence: f64,
    /// Bootstrap resamples (used by [`IntervalMethod::Bootstrap`] only).
    pub resamples: usize,
    /// Base seed; each row's stream is derived from it and the row key.
    pub seed: u64,
    pub interval: IntervalMethod,
    /// Leave each side's slow-side outliers (clock dips, preemptions) out of the test and the
    /// interval (`dips::trim_slow`). On by default; off reproduces the untrimmed rule.
    pub trim_dips: bool,
    /// How much more than a median's own noise the baseline history must vary before a
    /// between-job spread is assumed (`jobspread::NOISE_RATIO` by default).
    pub spread_noise_ratio: f64,
    /// How many times the run may be judged as rows are re-measured (the first round plus each
    /// re-measurement round `max_repetitions` allows). `alpha` is split evenly over the looks
    /// (Bonferroni alpha spending), so the false-alarm bound holds whichever look decides a row.
    pub looks: u32,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            alpha: 0.01,
            confidence: 0.95,
            resamples: 2000,
            // "cgp-gate" in ASCII.
            seed: 0x6367_702d_6761_7465,
            interval: IntervalMethod::HodgesLehmann,
            trim_dips: true,
            spread_noise_ratio: super::jobspread::NOISE_RATIO,
            looks: 1,
        }
    }
}

impl Config {
    fn problem(&self) -> Option<String> {
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Some(format!("alpha {} is not between 0 and 1", self.alpha));
        }
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return Some(format!("confidence {} is not between 0 and 1", self.confidence));
        }
        if self.looks == 0 {
            return Some("looks must be at least 1".to_owned());
        }
        if !(self.spread_noise_ratio.is_finite() && self.spread_noise_ratio >= 0.0) {
            return Some(format!(
                "spread noise ratio {} is not a non-negative number",
                self.spread_noise_ratio
            ));
        }
        None
    }
}

/// One row to judge.
#[derive(Debug, Clone)]
pub struct Comparison<'a> {
    /// Stable identity of the row (target/size/kernel/metric); seeds the bootstrap.
    pub key: String,
    /// Baseline samples in base units; `None` when the baseline has no such row.
    pub baseline: Option<&'a [f64]>,
    /// Candidate samples in base units.
    pub candidate: &'a [f64],
    pub threshold: &'a Threshold,
    /// Medians of the baseline's older generations, oldest first (each from its own job): the
    /// between-job spread is estimated from them and the current baseline. Empty: none assumed.
    pub history: &'a [f64],
    /// The run (profiler process) each baseline sample came from, same length as `baseline`;
    /// empty: every sample is its own run (baselines written before runs were kept).
    pub baseline_runs: &'a [u32],
    /// The run each candidate sample came from; empty: every sample is its own run.
    pub candidate_runs: &'a [u32],
}

/// The verdict of one row and everything that explains it.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub verdict: RowVerdict,
    /// `mann-whitney+hodges-lehmann`, `mann-whitney+bootstrap`, `exact`, `sign-test+median-ci`,
    /// `run-level-t`, or `none` when nothing was tested.
    pub method: Method,
    /// Relative change candidate / baseline - 1 (Hodges-Lehmann estimate for noisy rows).
    pub change: Option<f64>,
    /// Interval of the relative change.
    pub change_ci: Option<[f64; 2]>,
    /// Coverage of the interval shown (`change_ci`, or `median_ci` for limits); the requested
    /// level unless too few samples forced a wider, less certain one.
    pub confidence: f64,
    /// One-sided p-value in the regression direction, unadjusted.
    pub p: Option<f64>,
    /// `p` after Holm over every tested row of the run.
    pub p_adjusted: Option<f64>,
    /// One sentence: why this verdict.
    pub reason: String,
    pub baseline: Option<SideSummary>,
    pub candidate: SideSummary,
    /// For `min:`/`max:` rows: interval of the candidate's median, base units.
    pub median_ci: Option<[f64; 2]>,
    /// Between-job spread (log scale) estimated from the baseline history and used to widen the
    /// interval; `None` without enough history.
    pub job_spread: Option<f64>,
    /// The relative tolerance the test judged against: the threshold, raised to
    /// `min_effect` / baseline median where that is larger. `None` when no shift was tested.
    pub tolerance: Option<f64>,
    /// Where the candidate's median crosses the threshold, in base units (the baseline median
    /// moved by the tolerance, or a `min:`/`max:` bound with `min_effect` applied).
    pub limit: Option<f64>,
}

/// Judge one row on its own (a family of one for the multiple-testing adjustment).
pub fn judge(row: &Comparison<'_>, cfg: &Config) -> Judgement {
    judge_all(std::slice::from_ref(row), cfg)
        .pop()
        .unwrap_or_else(|| unreachable_judgement(row, cfg))
}

/// `judge_all` returns one judgement per row; this only exists so `judge` needs no `expect`.
fn unreachable_judgement(row: &Comparison<'_>, cfg: &Config) -> Judgement {
    base_judgement(row, cfg, RowVerdict::Error, "internal: no judgement produced")
}

/// Judge every row of a run: run each row's test, adjust the p-values with Holm over all tested
/// rows (regressions and improvements are separate families), then decide. The output has one
/// judgement per input row, in order. Never panics on any input.
pub fn judge_all(rows: &[Comparison<'_>], cfg: &Config) -> Vec<Judgement> {
    if let Some(problem) = cfg.problem() {
        return rows
            .iter()
            .map(|r| base_judgement(r, cfg, RowVerdict::Error, &format!("invalid settings: {problem}")))
            .collect();
    }
    // Alpha spent at this look (Bonferroni over the planned looks).
    let spent = Config {
        alpha: cfg.alpha / f64::from(cfg.looks),
        ..cfg.clone()
    };
    let cfg = &spent;
    let mut cache = NullCache::default();
    let prepared: Vec<Prepared> = rows.iter().map(|r| prepare(r, cfg, &mut cache)).collect();
    let p_bad: Vec<Option<f64>> = prepared.iter().map(Prepared::p_bad).collect();
    let p_good: Vec<Option<f64>> = prepared.iter().map(Prepared::p_good).collect();
    let p_zero: Vec<Option<f64>> = prepared.iter().map(Prepared::p_zero).collect();
    let adj_bad = holm(&p_bad);
    let adj_good = holm(&p_good);
    let adj_zero = holm(&p_zero);
    let family = p_bad.iter().flatten().count();
    prepared
        .into_iter()
        .zip(adj_bad.into_iter().zip(adj_good).zip(adj_zero))
        .map(|(p, ((ab, ag), az))| p.decide([ab, ag, az], family, cfg))
        .collect()
}

/// A row after its test, before the run-wide adjustment.
enum Prepared {
    Done(Judgement),
    Shift(Box<ShiftRow>),
    Limit(LimitRow),
}

struct ShiftRow {
    j: Judgement,
    /// The relative shift, its interval widened by the between-job spread.
    shift: Shift,
    /// U test against the baseline moved to the regression boundary (Holm: regression family).
    p_bad: f64,
    /// U test against the baseline moved to the improvement boundary (improvement family).
    p_good: f64,
    /// U test against the unmoved baseline in the bad direction (for the note only).
    p_zero: f64,
    /// +1 when an increase is bad (lower is better), -1 otherwise.
    bad_sign: f64,
    /// Relative threshold (0 for `exact`).
    fraction: f64,
    /// `min_effect` in base units, with the absolute interval when it is set.
    effect: Option<(f64, Shift)>,
    /// Text of the tolerance, e.g. `3.00% threshold` or `3.00% threshold and min effect 500ns`.
    tolerance_text: String,
    /// `min_effect` as written, e.g. `500ns`.
    effect_text: String,
    exact_kind: bool,
    spread: Option<JobSpread>,
    /// Half-width added on each side of the log-scale interval for the between-job spread.
    widen: f64,
    /// Slow outliers left out of the test (`dips`): baseline, candidate.
    dips: (usize, usize),
    /// Appended to the reason (the run-level model's noise parts and runs).
    extra: String,
}

struct LimitRow {
    j: Judgement,
    p_bad: f64,
    ci: [f64; 2],
    /// The limit with `min_effect` applied.
    limit: f64,
    is_max: bool,
}

impl Prepared {
    fn p_bad(&self) -> Option<f64> {
        match self {
            Self::Done(_) => None,
            Self::Shift(s) => Some(s.p_bad),
            Self::Limit(l) => Some(l.p_bad),
        }
    }

    fn p_good(&self) -> Option<f64> {
        match self {
            Self::Shift(s) => Some(s.p_good),
            _ => None,
        }
    }

    fn p_zero(&self) -> Option<f64> {
        match self {
            Self::Shift(s) => Some(s.p_zero),
            _ => None,
        }
    }

    /// `adj`: the Holm-adjusted p-values of the regression, improvement and against-zero
    /// families.
    fn decide(self, adj: [Option<f64>; 3], family: usize, cfg: &Config) -> Judgement {
        let [bad, good, zero] = adj.map(|a| a.unwrap_or(1.0));
        match self {
            Self::Done(j) => j,
            Self::Shift(s) => s.decide(bad, good, zero, family, cfg),
            Self::Limit(l) => l.decide(bad, family, cfg),
        }
    }
}

fn num(x: f64) -> String {
    crate::foundation::units::format_number(x)
}

fn base_judgement(row: &Comparison<'_>, cfg: &Config, verdict: RowVerdict, reason: &str) -> Judgement {
    Judgement {
        verdict,
        method: Method::None,
        change: None,
        change_ci: None,
        confidence: cfg.confidence,
        p: None,
        p_adjusted: None,
        reason: reason.to_owned(),
        baseline: row.baseline.map(|b| SideSummary {
            runs: Some(super::nested::count_runs(b.len(), row.baseline_runs)),
            ..summarize(b)
        }),
        candidate: SideSummary {
            runs: Some(super::nested::count_runs(row.candidate.len(), row.candidate_runs)),
            ..summarize(row.candidate)
        },
        median_ci: None,
        job_spread: None,
        tolerance: None,
        limit: None,
    }
}

fn non_finite(samples: &[f64]) -> Option<String> {
    let bad: Vec<String> = samples
        .iter()
        .enumerate()
        .filter(|(_, x)| !x.is_finite())
        .map(|(i, x)| format!("#{i} = {x}"))
        .collect();
    if bad.is_empty() {
        return None;
    }
    let shown: Vec<&str> = bad.iter().take(5).map(String::as_str).collect();
    let more = if bad.len() > 5 { ", ..." } else { "" };
    Some(format!(
        "{} non-finite samples ({}{more})",
        bad.len(),
        shown.join(", ")
    ))
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
        _ => {}
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
fn constant(samples: &[f64]) -> bool {
    samples.first().is_some_and(|f| samples.iter().all(|x| x == f))
}

fn prepare(row: &Comparison<'_>, cfg: &Config, cache: &mut NullCache) -> Prepared {
    let done = |v: RowVerdict, reason: String| Prepared::Done(base_judgement(row, cfg, v, &reason));
    if let Some(problem) = threshold_problem(row.threshold) {
        return done(RowVerdict::Error, format!("invalid threshold: {problem}"));
    }
    if let Some(bad) = non_finite(row.candidate) {
        return done(
            RowVerdict::Error,
            format!("candidate has {bad}; check the profiler output"),
        );
    }
    if let Some(bad) = row.baseline.and_then(non_finite) {
        return done(
            RowVerdict::Error,
            format!("baseline has {bad}; update the baseline"),
        );
    }
    if row.candidate.is_empty() {
        return done(
            RowVerdict::Error,
            "no candidate samples were measured for this metric".to_owned(),
        );
    }
    let min_effect = row.threshold.min_effect.as_ref().map_or(0.0, |q| q.value);
    match row.threshold.kind {
        ThresholdKind::Min { value } => return prepare_limit(row, cfg, value - min_effect, false),
        ThresholdKind::Max { value } => return prepare_limit(row, cfg, value + min_effect, true),
        ThresholdKind::Relative { .. } | ThresholdKind::Exact => {}
    }
    let Some(baseline) = row.baseline else {
        let median = summarize(row.candidate).median;
        return done(
            RowVerdict::New,
            format!("no baseline to compare with; candidate median {}", num(median)),
        );
    };
    if baseline.is_empty() {
        return done(
            RowVerdict::Error,
            "the baseline has no samples for this row; update the baseline".to_owned(),
        );
    }
    let exact_kind = row.threshold.kind == ThresholdKind::Exact;
    let (nb, nc) = (baseline.len(), row.candidate.len());
    if constant(baseline) && constant(row.candidate) && (exact_kind || (nb >= 2 && nc >= 2)) {
        return Prepared::Done(exact_compare(row, cfg, baseline[0], row.candidate[0]));
    }
    if grouped(row) && nb <= MAX_SAMPLES && nc <= MAX_SAMPLES {
        return prepare_nested(row, cfg, baseline, exact_kind);
    }
    if nb < MIN_SAMPLES || nc < MIN_SAMPLES {
        return done(
            RowVerdict::Inconclusive,
            format!(
                "not enough data: need at least {MIN_SAMPLES} samples per side, have {nb} baseline and {nc} candidate; raise repetitions"
            ),
        );
    }
    if nb > MAX_SAMPLES || nc > MAX_SAMPLES {
        return done(
            RowVerdict::Error,
            format!(
                "too many samples to judge: {nb} baseline and {nc} candidate, at most {MAX_SAMPLES} per side; lower repetitions or thin the baseline"
            ),
        );
    }
    // Clock dips and preemptions left out, on each side alike (`dips`).
    let slow_high = row.threshold.direction == Direction::Lower;
    let (c_all, b_all) = (sorted_finite(row.candidate), sorted_finite(baseline));
    // The estimate and its interval: each side without its own slow outliers.
    let (c, b) = if cfg.trim_dips {
        (
            dips::trim_slow(&c_all, slow_high).0,
            dips::trim_slow(&b_all, slow_high).0,
        )
    } else {
        (c_all.clone(), b_all.clone())
    };
    let shift = match cfg.interval {
        IntervalMethod::HodgesLehmann => hodges_lehmann::relative_shift(&c, &b, cfg.confidence, cache),
        IntervalMethod::Bootstrap => bootstrap::median_ratio(
            &c,
            &b,
            cfg.confidence,
            cfg.resamples,
            seed_for(cfg.seed, &row.key),
        ),
    };
    let Some(mut shift) = shift else {
        return done(
            RowVerdict::Inconclusive,
            "a relative change needs positive samples and this metric has values <= 0; use a min/max threshold".to_owned(),
        );
    };
    let bad_sign = match row.threshold.direction {
        Direction::Lower => 1.0,
        Direction::Higher => -1.0,
    };
    let fraction = match row.threshold.kind {
        ThresholdKind::Relative { fraction } => fraction,
        _ => 0.0,
    };
    let mut j = base_judgement(row, cfg, RowVerdict::Inconclusive, "");
    let (base_median, base_cv) = j.baseline.as_ref().map_or((0.0, None), |s| (s.median, s.cv));
    let spread = job_spread_gated(row.history, base_median, base_cv, nb, cfg.spread_noise_ratio);
    // The offset between two jobs has twice a job's variance; the interval is widened by its
    // half-width at the interval's own level.
    let z = Normal::standard().inverse_cdf(0.5 + cfg.confidence / 2.0);
    let widen = spread.map_or(0.0, |s| z * std::f64::consts::SQRT_2 * s.spread);
    shift.ci = [
        (1.0 + shift.ci[0]) * (-widen).exp() - 1.0,
        (1.0 + shift.ci[1]) * widen.exp() - 1.0,
    ];
    let effect = (min_effect > 0.0).then(|| {
        (
            min_effect,
            hodges_lehmann::absolute_shift_sorted(&c, &b, cfg.confidence, cache),
        )
    });
    // The baseline moved to the regression and improvement boundaries; a relative threshold of
    // 100 % or more cannot be crossed downwards by positive values.
    let up = (1.0 + fraction) * widen.exp();
    let down = (fraction < 1.0).then(|| (1.0 - fraction) * (-widen).exp());
    // Each test: slow outliers left out by a fence on its own pooled sample (`dips::trim_pooled`),
    // which keeps the test's level. The counts shown are those of the regression test (the first
    // one run).
    let dips_seen: std::cell::Cell<Option<(usize, usize)>> = std::cell::Cell::new(None);
    let test = |map: &dyn Fn(f64) -> f64, cache: &mut NullCache| {
        if cfg.trim_dips {
            let (ck, bk, c_out, b_out) = dips::trim_pooled(&c_all, &b_all, map, slow_high);
            if dips_seen.get().is_none() {
                dips_seen.set(Some((b_out, c_out)));
            }
            mann_whitney_sorted(&ck, &bk, map, cache)
        } else {
            mann_whitney_sorted(&c_all, &b_all, map, cache)
        }
    };
    let greater = |map: &dyn Fn(f64) -> f64, cache: &mut NullCache| test(map, cache).p_greater;
    let less = |map: &dyn Fn(f64) -> f64, cache: &mut NullCache| test(map, cache).p_less;
    // Intersection-union: beyond the threshold AND beyond min_effect needs both tests.
    let (p_bad, p_good, p_zero) = if bad_sign > 0.0 {
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
    let threshold_text = if exact_kind {
        "exact threshold".to_owned()
    } else {
        format!(
            "{} threshold",
            percent(fraction, Percent::Signed2).trim_start_matches('+')
        )
    };
    let tolerance_text = if min_effect > 0.0 {
        format!("{threshold_text} and min effect {}", effect_text(row.threshold))
    } else {
        threshold_text
    };
    j.method = match cfg.interval {
        IntervalMethod::HodgesLehmann => Method::MannWhitneyHodgesLehmann,
        IntervalMethod::Bootstrap => Method::MannWhitneyBootstrap,
    };
    j.change = Some(shift.change);
    j.change_ci = Some(shift.ci);
    j.confidence = shift.confidence;
    j.p = Some(p_bad);
    j.job_spread = spread.map(|s| s.spread);
    Prepared::Shift(Box::new(ShiftRow {
        j,
        shift,
        p_bad,
        p_good,
        p_zero,
        bad_sign,
        fraction,
        effect,
        tolerance_text,
        effect_text: effect_text(row.threshold),
        exact_kind,
        spread,
        widen,
        dips: dips_seen.get().unwrap_or((0, 0)),
        extra: String::new(),
    }))
}

/// Does the row carry launches grouped in runs (some run on a side with two or more samples)?
/// Then the run-level model decides (`nested`); otherwise every sample is its own run and the
/// rank test does.
fn grouped(row: &Comparison<'_>) -> bool {
    let multi = |values: usize, runs: &[u32]| {
        !runs.is_empty() && runs.len() == values && super::nested::count_runs(values, runs) < values
    };
    multi(row.candidate.len(), row.candidate_runs)
        || row.baseline.is_some_and(|b| multi(b.len(), row.baseline_runs))
}

/// A noisy row with runs: the two-level model on the log scale (`nested`), t tests of the
/// shift against the threshold's boundaries, the interval widened (in quadrature) by the
/// between-job spread of the baseline history.
fn prepare_nested(row: &Comparison<'_>, cfg: &Config, baseline: &[f64], exact_kind: bool) -> Prepared {
    use super::nested::{Runs, fit};
    let slow_high = row.threshold.direction == Direction::Lower;
    let bad_sign = if slow_high { 1.0 } else { -1.0 };
    let fitted = fit(
        Runs {
            values: baseline,
            runs: row.baseline_runs,
        },
        Runs {
            values: row.candidate,
            runs: row.candidate_runs,
        },
        slow_high,
        cfg.trim_dips,
    );
    let mut j = base_judgement(row, cfg, RowVerdict::Inconclusive, "");
    let f = match fitted {
        Ok(f) => f,
        Err(why) => {
            j.reason = format!("not enough data or unusable values: {why}");
            return Prepared::Done(j);
        }
    };
    let min_effect = row.threshold.min_effect.as_ref().map_or(0.0, |q| q.value);
    let base_median = j.baseline.as_ref().map_or(0.0, |b| b.median);
    let base_cv = j.baseline.as_ref().and_then(|b| b.cv);
    let threshold_fraction = match row.threshold.kind {
        ThresholdKind::Relative { fraction } => fraction,
        _ => 0.0,
    };
    // min_effect as a relative tolerance at the baseline's median: the test must exceed both.
    let fraction = if min_effect > 0.0 && base_median > 0.0 {
        threshold_fraction.max(min_effect / base_median)
    } else {
        threshold_fraction
    };
    let spread = job_spread_gated(
        row.history,
        base_median,
        base_cv,
        f.runs.0,
        cfg.spread_noise_ratio,
    );
    let extra_var = spread.map_or(0.0, |s| 2.0 * s.spread * s.spread);
    let q = f.quantile(cfg.confidence);
    let widen = q * ((f.se * f.se + extra_var).sqrt() - f.se);
    let ci = f.interval(cfg.confidence, extra_var);
    let shift = Shift {
        change: f.delta.exp_m1(),
        ci: [ci[0].exp_m1(), ci[1].exp_m1()],
        confidence: cfg.confidence,
    };
    let up = fraction.ln_1p();
    let down = if fraction < 1.0 {
        (-fraction).ln_1p()
    } else {
        f64::NEG_INFINITY
    };
    let (p_bad, p_good, p_zero) = if slow_high {
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
    };
    let threshold_text = if exact_kind {
        "exact threshold".to_owned()
    } else {
        format!(
            "{} threshold",
            percent(threshold_fraction, Percent::Signed2).trim_start_matches('+')
        )
    };
    let tolerance_text = if min_effect > 0.0 {
        format!(
            "{threshold_text} and min effect {} ({})",
            effect_text(row.threshold),
            percent(fraction, Percent::Signed2).trim_start_matches('+')
        )
    } else {
        threshold_text
    };
    j.method = Method::RunLevelT;
    j.change = Some(shift.change);
    j.change_ci = Some(shift.ci);
    j.confidence = shift.confidence;
    j.p = Some(p_bad);
    j.job_spread = spread.map(|s| s.spread);
    let within = f.within_sd.map_or_else(
        || "unknown (one launch per run)".to_owned(),
        |w| percent(w, Percent::Signed2).trim_start_matches('+').to_owned(),
    );
    let extra = format!(
        "; {} baseline and {} candidate runs ({} and {} launches), noise within a run {within}, between runs {}",
        f.runs.0,
        f.runs.1,
        f.n.0,
        f.n.1,
        percent(f.between_sd, Percent::Signed2).trim_start_matches('+')
    );
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
        dips: f.trimmed_launches,
        extra,
    }))
}

fn exact_compare(row: &Comparison<'_>, cfg: &Config, b: f64, c: f64) -> Judgement {
    let mut j = base_judgement(row, cfg, RowVerdict::Pass, "");
    j.method = Method::Exact;
    let e = compare_exact(b, c, row.threshold);
    (j.verdict, j.change, j.reason) = (e.verdict, e.change, e.reason);
    j
}

/// The outcome of comparing two deterministic values exactly ([`compare_exact`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ExactOutcome {
    pub verdict: RowVerdict,
    /// `(c - b) / |b|`; `None` when `b` is 0 and `c` is not.
    pub change: Option<f64>,
    pub reason: String,
}

/// Compare a deterministic value (registers, instruction counts, launch configuration: the same
/// number in every sample) exactly: baseline `b`, candidate `c`. A relative threshold is the
/// tolerance, `min_effect` (base units) the smallest difference that counts; any other
/// difference beyond them is a regression or an improvement by the threshold's direction.
/// `check` (baseline against candidate) and `ab` (base against head) both decide this way.
pub fn compare_exact(b: f64, c: f64, threshold: &Threshold) -> ExactOutcome {
    let min_effect = threshold.min_effect.as_ref().map_or(0.0, |q| q.value);
    let diff = c - b;
    let change = if b != 0.0 {
        Some(diff / b.abs())
    } else if diff == 0.0 {
        Some(0.0)
    } else {
        None
    };
    let worse = match threshold.direction {
        Direction::Lower => diff > 0.0,
        Direction::Higher => diff < 0.0,
    };
    let moved = format!("{} -> {}", num(b), num(c));
    let outcome = |verdict, reason| ExactOutcome {
        verdict,
        change,
        reason,
    };
    let beyond = match threshold.kind {
        _ if diff == 0.0 => false,
        _ if diff.abs() <= min_effect => {
            return outcome(
                RowVerdict::Pass,
                format!(
                    "deterministic value {moved} is within the min effect {}",
                    effect_text(threshold)
                ),
            );
        }
        ThresholdKind::Relative { fraction } => change.is_none_or(|ch| ch.abs() > fraction),
        _ => true,
    };
    let rel = change.map_or_else(|| "from zero".to_owned(), |c| percent(c, Percent::Signed2));
    match (beyond, worse) {
        (false, _) if diff == 0.0 => outcome(
            RowVerdict::Pass,
            format!("deterministic value unchanged at {}", num(c)),
        ),
        (false, _) => outcome(
            RowVerdict::Pass,
            format!("deterministic value {moved} ({rel}) is within the {threshold}"),
        ),
        (true, true) => outcome(
            RowVerdict::Regression,
            format!("deterministic value got worse: {moved} ({rel})"),
        ),
        (true, false) => outcome(
            RowVerdict::Improvement,
            format!("deterministic value got better: {moved} ({rel})"),
        ),
    }
}

fn prepare_limit(row: &Comparison<'_>, cfg: &Config, limit: f64, is_max: bool) -> Prepared {
    let mut j = base_judgement(row, cfg, RowVerdict::Inconclusive, "");
    let c = row.candidate;
    let side = if is_max { "at most" } else { "at least" };
    if constant(c) && c.len() >= 2 {
        let v = c[0];
        let bad = if is_max { v > limit } else { v < limit };
        j.method = Method::Exact;
        (j.verdict, j.reason) = if bad {
            (
                RowVerdict::Regression,
                format!("deterministic value {} is not {side} {}", num(v), num(limit)),
            )
        } else {
            (
                RowVerdict::Pass,
                format!("deterministic value {} is {side} {}", num(v), num(limit)),
            )
        };
        return Prepared::Done(j);
    }
    if c.len() < MIN_SAMPLES {
        j.reason = format!(
            "not enough data: need at least {MIN_SAMPLES} candidate samples, have {}; raise repetitions",
            c.len()
        );
        return Prepared::Done(j);
    }
    let sorted = sorted_finite(c);
    let Some((ci, coverage)) = median_interval(&sorted, cfg.confidence) else {
        j.reason = "no candidate samples".to_owned();
        return Prepared::Done(j);
    };
    let (above, below) = sign_test(c, limit);
    let p_bad = if is_max { above } else { below };
    j.method = Method::SignTestMedianCi;
    j.median_ci = Some(ci);
    j.confidence = coverage;
    j.p = Some(p_bad);
    Prepared::Limit(LimitRow {
        j,
        p_bad,
        ci,
        limit,
        is_max,
    })
}

impl LimitRow {
    fn decide(mut self, adj: f64, family: usize, cfg: &Config) -> Judgement {
        let j = &mut self.j;
        j.p_adjusted = Some(adj);
        j.limit = Some(self.limit);
        let (lo, hi) = (self.ci[0], self.ci[1]);
        let median = j.candidate.median;
        let side = if self.is_max { "at most" } else { "at least" };
        let wrong_side = if self.is_max {
            lo > self.limit
        } else {
            hi < self.limit
        };
        let right_side = if self.is_max {
            hi <= self.limit
        } else {
            lo >= self.limit
        };
        let interval = format!("[{}, {}]", num(lo), num(hi));
        let conf = percent(j.confidence, Percent::Plain1);
        (j.verdict, j.reason) = if wrong_side && adj <= cfg.alpha {
            (
                RowVerdict::Regression,
                format!(
                    "median {} is not {side} {}: its {conf} interval {interval} lies beyond the limit (adjusted p {:.2e})",
                    num(median),
                    num(self.limit),
                    adj
                ),
            )
        } else if right_side {
            (
                RowVerdict::Pass,
                format!(
                    "the {conf} interval {interval} of the median is {side} {}",
                    num(self.limit)
                ),
            )
        } else if wrong_side {
            (
                RowVerdict::Inconclusive,
                format!(
                    "median {} is beyond the limit {} but not significant after holm over {family} tests (adjusted p {:.2e}); measure more repetitions",
                    num(median),
                    num(self.limit),
                    adj
                ),
            )
        } else {
            (
                RowVerdict::Inconclusive,
                format!(
                    "the {conf} interval {interval} of the median straddles the limit {}; measure more repetitions",
                    num(self.limit)
                ),
            )
        };
        self.j
    }
}

impl ShiftRow {
    fn decide(
        mut self,
        adj_bad: f64,
        adj_good: f64,
        adj_zero: f64,
        family: usize,
        cfg: &Config,
    ) -> Judgement {
        let j = &mut self.j;
        j.p_adjusted = Some(adj_bad);
        let s = self.bad_sign;
        let t = self.fraction;
        let [lo, hi] = self.shift.ci;
        // Interval ends measured in the bad direction.
        let (bad_lo, bad_hi) = if s > 0.0 { (lo, hi) } else { (-hi, -lo) };
        let est_bad = s * self.shift.change;
        // For the reports: the relative tolerance (the threshold, or min_effect relative to the
        // baseline median where larger) and where the candidate's median crosses it.
        let base_median = j.baseline.as_ref().map_or(0.0, |b| b.median);
        let from_effect = match self.effect {
            Some((e, _)) if base_median > 0.0 => e / base_median,
            _ => 0.0,
        };
        let shown = t.max(from_effect);
        j.tolerance = Some(shown);
        j.limit = j.baseline.as_ref().map(|b| b.median * (1.0 + s * shown));
        let tol = &self.tolerance_text;
        let change = percent(self.shift.change, Percent::Signed2);
        let interval = format!(
            "[{}, {}]",
            percent(lo, Percent::Signed2),
            percent(hi, Percent::Signed2)
        );
        let conf = percent(self.shift.confidence, Percent::Plain1);
        // Within the tolerance: the relative interval within T, or the absolute one within
        // min_effect (a regression must exceed both).
        let within_rel = bad_hi < t;
        let within_abs = self.effect.is_some_and(|(e, a)| {
            let hi = if s > 0.0 { a.ci[1] } else { -a.ci[0] };
            hi < e
        });
        let beyond_est = est_bad > t && self.effect.is_none_or(|(e, a)| s * a.change > e);
        let sig_bad = adj_bad <= cfg.alpha;
        let sig_good = adj_good <= cfg.alpha;
        let boundary = if s > 0.0 {
            format!("baseline x {}", num(1.0 + t))
        } else {
            format!("baseline x {}", num(1.0 - t))
        };
        let mut note = String::new();
        if !sig_bad && beyond_est && adj_zero <= cfg.alpha {
            note = format!(
                "; note: the estimate is beyond the {tol} and significant against no change (adjusted p {adj_zero:.2e}), but not against the threshold"
            );
        }
        (j.verdict, j.reason) = if self.exact_kind && self.effect.is_none() {
            // `exact` on a noisy metric: the threshold is zero, so the test against zero decides.
            let how = "an exact threshold on a noisy metric is judged by the test alone";
            if sig_bad {
                (
                    RowVerdict::Regression,
                    format!(
                        "{change} (interval {interval}) is a significant worsening (adjusted p {adj_bad:.2e} after holm over {family} tests); {how}"
                    ),
                )
            } else if sig_good {
                (
                    RowVerdict::Improvement,
                    format!(
                        "{change} (interval {interval}) is a significant improvement (adjusted p {adj_good:.2e}); {how}"
                    ),
                )
            } else {
                (
                    RowVerdict::Pass,
                    format!(
                        "no significant worsening ({change}, interval {interval}, adjusted p {adj_bad:.2e}); {how}"
                    ),
                )
            }
        } else if sig_bad {
            (
                RowVerdict::Regression,
                format!(
                    "{change} (interval {interval}) is worse than the {tol}: the candidate is significantly worse than {boundary} (adjusted p {adj_bad:.2e} after holm over {family} tests)"
                ),
            )
        } else if sig_good {
            (
                RowVerdict::Improvement,
                format!(
                    "{change} (interval {interval}) is better than the {tol}, significant against the threshold (improvement adjusted p {adj_good:.2e})"
                ),
            )
        } else if within_rel || within_abs {
            let what = if within_rel {
                format!("the {conf} interval {interval} lies within the {tol}")
            } else {
                let (_, a) = self.effect.unwrap_or((0.0, self.shift));
                format!(
                    "the {conf} interval [{}, {}] of the absolute change lies within the min effect {}",
                    num(a.ci[0]),
                    num(a.ci[1]),
                    self.effect_text
                )
            };
            (RowVerdict::Pass, what)
        } else if bad_lo > t {
            (
                RowVerdict::Inconclusive,
                format!(
                    "{change}: the {conf} interval {interval} lies beyond the {tol}, but that is not significant after holm over {family} tests (adjusted p {adj_bad:.2e}); measure more repetitions"
                ),
            )
        } else {
            (
                RowVerdict::Inconclusive,
                format!(
                    "{change}: the {conf} interval {interval} straddles the {tol}; measure more repetitions{note}"
                ),
            )
        };
        if self.dips != (0, 0) {
            let (b, c) = self.dips;
            j.reason.push_str(&format!(
                "; slow outliers (clock dips, preemptions) left out of the test: {b} of {} baseline and {c} of {} candidate samples",
                j.baseline.as_ref().map_or(0, |s| s.n),
                j.candidate.n
            ));
        }
        j.reason.push_str(&self.extra);
        if let Some(sp) = self.spread {
            j.reason.push_str(&format!(
                "; interval widened by {} for a between-job spread of {} (from {} baseline medians)",
                percent(self.widen, Percent::Signed2).trim_start_matches('+'),
                percent(sp.spread, Percent::Signed2).trim_start_matches('+'),
                sp.generations
            ));
            if t > 0.0 && t < 3.0 * sp.spread {
                j.reason.push_str(&format!(
                    "; warning: the threshold is under 3x the between-job spread: raise it to at least {} or measure baseline and candidate in the same job",
                    percent(3.0 * sp.spread, Percent::Signed2).trim_start_matches('+')
                ));
            }
        }
        self.j
    }
}

/// A threshold's `min_effect` as written in base units, e.g. `500ns`.
fn effect_text(threshold: &Threshold) -> String {
    threshold
        .min_effect
        .as_ref()
        .map_or_else(|| "0".to_owned(), ToString::to_string)
}
