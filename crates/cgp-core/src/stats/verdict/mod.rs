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
//! run's alpha is spent over the looks re-measurement may take: by each row's plan
//! (`stats::spending`, `judge_all_at`), or evenly over `Config::looks` for rows judged without one.
//!
//! The parts: `checks` (what makes a row unjudgeable before any test), `exact` (deterministic
//! values compared exactly), `limit` (`min:`/`max:` rows), `rank` (noisy rows by the U test),
//! `run_level` (noisy rows whose launches come in runs), `shift` (the decision of a shifted row,
//! for both).

mod checks;
mod estimate;
mod exact;
mod limit;
mod rank;
mod rule;
mod run_level;
mod shift;
#[cfg(test)]
mod tests;

pub use estimate::{Bound, Estimate, Shift, Test};
pub use exact::exact_detectable;
pub use exact::{COUNT_JITTER_SHARE, ExactOutcome, compare_exact, counted_exactly, deciding_launch};
pub use rule::{verdict_of_interval, verdict_of_limit};

use self::checks::{constant, input_problem, sample_count_problem};
use self::exact::{exact_compare, exact_every_launch};
use self::limit::{LimitRow, prepare_limit};
use self::rank::prepare_ranked;
use self::run_level::{grouped, prepare_nested};
use self::shift::ShiftRow;
use super::mannwhitney::NullCache;
use super::multiple::{holm, holm_levels};
use super::row::{Method, RowVerdict, SideSummary};
use super::spending::{LookAt, share};
use super::summary::summarize;
use crate::foundation::threshold::{Threshold, ThresholdKind};
use crate::foundation::units::{Percent, percent};

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
    /// The between-job spread assumed before the baseline history says more, and what it is
    /// worth in degrees of freedom (`jobspread::Prior`; `settings.job_spread` sets its value).
    pub job_prior: super::jobspread::Prior,
    /// How many times the run may be judged, for rows judged without a plan ([`judge_all`]):
    /// each spends `alpha / looks` (Bonferroni). [`judge_all_at`] spends by each row's plan
    /// (`stats::spending`).
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
            job_prior: super::jobspread::Prior::default(),
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
        let p = self.job_prior;
        if !(p.spread.is_finite() && p.spread >= 0.0 && p.df.is_finite() && p.df >= 0.0) {
            return Some(format!(
                "the job spread's prior {} with {} degrees of freedom is not two non-negative numbers",
                p.spread, p.df
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

/// What a judgement of one row rules, independent ([`Judgement`], of `check`) or paired
/// (`paired::PairedJudgement`, of `ab`): the verdict, the method, the [`Estimate`] (the shift
/// with its interval and level, the test, what was left out) and why. The results take it as it
/// is (`results::Decision`), the same way for both.
#[derive(Debug, Clone, PartialEq)]
pub struct Ruling {
    pub verdict: RowVerdict,
    /// `mann-whitney+hodges-lehmann`, `mann-whitney+bootstrap`, `exact`, `sign-test+median-ci`,
    /// `run-level-t`, `paired-t`, or `none` when nothing was tested.
    pub method: Method,
    /// The numbers the verdict used: the relative change with its interval (or a `min:`/`max:`
    /// row's median interval), the interval's coverage, the test's p-values, what was left out.
    pub estimate: Estimate,
    /// One sentence: why this verdict.
    pub reason: String,
}

impl Ruling {
    /// A verdict settled without a test (an error, a row with nothing to compare), at the
    /// requested `confidence`.
    pub fn untested(verdict: RowVerdict, reason: String, confidence: f64) -> Self {
        Self {
            verdict,
            method: Method::None,
            estimate: Estimate::at(confidence),
            reason,
        }
    }

    /// Values compared exactly (`compare_exact`, `counted_exactly`): the change without an
    /// interval, the tolerance as the smallest change found, at `confidence`.
    pub fn exact(e: ExactOutcome, threshold: &Threshold, confidence: f64) -> Self {
        let mut r = Self::untested(e.verdict, e.reason, confidence);
        r.method = Method::Exact;
        r.estimate.shift = Shift::exact(e.change, exact_detectable(threshold));
        r
    }

    /// Coverage of the interval shown (the requested level for a row without one).
    pub fn confidence(&self) -> f64 {
        self.estimate.confidence.unwrap_or(f64::NAN)
    }
}

/// The verdict of one row and everything that explains it: the [`Ruling`], and what only an
/// independent comparison has.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub ruling: Ruling,
    pub baseline: Option<SideSummary>,
    pub candidate: SideSummary,
    /// Between-job spread (log scale) estimated from the baseline history and used to widen the
    /// interval; `None` without enough history.
    pub job_spread: Option<f64>,
    /// What the interval was judged against: the relative tolerance of a shift (the threshold,
    /// raised to `min_effect` / baseline median where that is larger) with where the candidate's
    /// median crosses it, or a `min:`/`max:` row's limit. `None` when nothing was tested.
    pub bound: Option<Bound>,
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
/// judgement per input row, in order. Never panics on any input. Every row spends `1 / looks`
/// of alpha (Bonferroni over [`Config::looks`]); [`judge_all_at`] spends by each row's plan.
pub fn judge_all(rows: &[Comparison<'_>], cfg: &Config) -> Vec<Judgement> {
    judge_all_at(rows, cfg, &[])
}

/// [`judge_all`] with each row at its look (`looks[i]` for row `i`): row `i` spends the share of
/// alpha its look may spend under the group sequential rule (`stats::spending`), by weighting
/// its p-values in Holm's step-down (a row is tested at `share x alpha / (m - j + 1)`). A row
/// without an entry spends `1 / cfg.looks`. Each row's interval is shown at the level its
/// decision used (docs/statistics.md, 2.8).
pub fn judge_all_at(rows: &[Comparison<'_>], cfg: &Config, looks: &[LookAt]) -> Vec<Judgement> {
    if let Some(problem) = cfg.problem() {
        return rows
            .iter()
            .map(|r| base_judgement(r, cfg, RowVerdict::Error, &format!("invalid settings: {problem}")))
            .collect();
    }
    let mut cache = NullCache::default();
    let prepared: Vec<Prepared> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            prepare(
                r,
                cfg,
                &mut cache,
                first_step_level(cfg, looks.get(i), rows.len()),
            )
        })
        .collect();
    let family = prepared.iter().filter(|p| p.p_bad().is_some()).count();
    let shares = shares_for(rows.len(), looks, cfg, family);
    let scaled = |f: fn(&Prepared) -> Option<f64>| -> Vec<Option<f64>> {
        prepared
            .iter()
            .zip(&shares)
            .map(|(p, s)| f(p).map(|x| x / s))
            .collect()
    };
    let (p_bad, p_good, p_zero) = (
        scaled(Prepared::p_bad),
        scaled(Prepared::p_good),
        scaled(Prepared::p_zero),
    );
    let adj_bad = holm(&p_bad);
    let adj_good = holm(&p_good);
    let adj_zero = holm(&p_zero);
    let level = |levels: Vec<Option<f64>>| -> Vec<f64> {
        levels
            .into_iter()
            .zip(&shares)
            .map(|(l, s)| l.map_or(cfg.alpha, |l| l * s))
            .collect()
    };
    let lv_bad = level(holm_levels(&p_bad, cfg.alpha));
    let lv_good = level(holm_levels(&p_good, cfg.alpha));
    prepared
        .into_iter()
        .enumerate()
        .zip(adj_bad.into_iter().zip(adj_good).zip(adj_zero))
        .zip(lv_bad.into_iter().zip(lv_good))
        .map(|(((i, p), ((ab, ag), az)), (lb, lg))| {
            let row_cfg = Config {
                confidence: pass_confidence(cfg.confidence, looks.get(i), cfg.looks),
                ..cfg.clone()
            };
            p.decide([ab, ag, az], [lb, lg], family, &row_cfg)
        })
        .collect()
}

/// The two-sided level of the interval a pass is read from at a row's look (issue 43): a pass
/// rejects "worse than the tolerance" at one-sided `(1 - confidence) / 2`, and a row that may
/// pass at any of its looks spends that level over them as regressions spend alpha
/// (`stats::spending`: Bonferroni's share at every look but the last, which spends the rest; a
/// row alone, since each row's pass is its own decision). One look: `confidence` itself. Without
/// a plan, `1 / looks` at each.
pub fn pass_confidence(confidence: f64, look: Option<&LookAt>, looks: u32) -> f64 {
    let g = (1.0 - confidence) / 2.0;
    let s = look.map_or(1.0 / f64::from(looks.max(1)), |l| share(g, l, 1));
    (1.0 - 2.0 * g * s).clamp(confidence, 1.0 - 1e-12)
}

/// The smallest one-sided level a row's regression test may need at its first Holm step: alpha
/// over the run's rows and the looks of the row's plan (Bonferroni's share; the spending rule of
/// `stats::spending` never gives a look less). A function of the counts alone, never of the data,
/// so choosing the test by it (`rank_floor_too_high`) keeps every level.
fn first_step_level(cfg: &Config, look: Option<&LookAt>, rows: usize) -> f64 {
    let k = look.map_or(cfg.looks, |l| {
        super::remeasure::looks(l.repetitions, l.max_repetitions)
    });
    cfg.alpha / (f64::from(k.max(1)) * rows.max(1) as f64)
}

/// The rank test keeps rows whose smallest p-value, `1 / C(m + n, m)` (no ties), is at most this
/// share of the level they may need; fewer samples go to the t test of their logs (issue 57).
const RANK_ROOM: f64 = 1e-3;

/// Does the U test's floor of `nb` against `nc` samples, one per process, lie too close to (or
/// above) `level` for the rank test to decide? Then the row is judged by the t test of the
/// processes' logs (the run-level model with one value per run), which has no floor: 3 candidate
/// against 10 baseline processes give the rank test a smallest p of 1 / 286 = 0.0035, above the
/// first look's level for 2 rows, and it could never call a regression (issue 57).
fn rank_floor_too_high(nb: usize, nc: usize, level: f64) -> bool {
    let ln_choose = |n: usize, k: usize| -> f64 {
        (1..=k.min(n - k))
            .map(|i| ((n - k.min(n - k) + i) as f64 / i as f64).ln())
            .sum()
    };
    -ln_choose(nb + nc, nc) > (RANK_ROOM * level).ln()
}

/// The share of alpha each of `n` rows spends at its look: by its plan where `looks` has one
/// (`spending::share`, computed once per distinct look), else `1 / cfg.looks`.
fn shares_for(n: usize, looks: &[LookAt], cfg: &Config, family: usize) -> Vec<f64> {
    let mut known: Vec<(LookAt, f64)> = Vec::new();
    (0..n)
        .map(|i| match looks.get(i) {
            Some(l) => {
                if let Some((_, s)) = known.iter().find(|(k, _)| k == l) {
                    *s
                } else {
                    let s = share(cfg.alpha, l, family);
                    known.push((*l, s));
                    s
                }
            }
            None => 1.0 / f64::from(cfg.looks.max(1)),
        })
        .collect()
}

/// A row after its test, before the run-wide adjustment.
enum Prepared {
    Done(Judgement),
    Shift(Box<ShiftRow>),
    Limit(LimitRow),
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
    /// families; `levels`: the one-sided levels the row was tested at in the first two.
    fn decide(self, adj: [Option<f64>; 3], levels: [f64; 2], family: usize, cfg: &Config) -> Judgement {
        let [bad, good, zero] = adj.map(|a| a.unwrap_or(1.0));
        match self {
            Self::Done(j) => j,
            Self::Shift(s) => s.decide([bad, good, zero], levels, family, cfg),
            Self::Limit(l) => l.decide(bad, levels[0], family, cfg),
        }
    }
}

/// The prior of the between-job spread a row takes: the run's, except for metrics that count work
/// (`jobspread::counts_work`), which take none.
fn prior_of(row: &Comparison<'_>, cfg: &Config) -> super::jobspread::Prior {
    if super::jobspread::counts_work(&row.key) {
        super::jobspread::Prior { spread: 0.0, df: 0.0 }
    } else {
        cfg.job_prior
    }
}

fn num(x: f64) -> String {
    crate::foundation::units::format_number(x)
}

fn base_judgement(row: &Comparison<'_>, cfg: &Config, verdict: RowVerdict, reason: &str) -> Judgement {
    Judgement {
        ruling: Ruling::untested(verdict, reason.to_owned(), cfg.confidence),
        baseline: row.baseline.map(|b| SideSummary {
            runs: Some(super::nested::count_runs(b.len(), row.baseline_runs)),
            ..summarize(b)
        }),
        candidate: SideSummary {
            runs: Some(super::nested::count_runs(row.candidate.len(), row.candidate_runs)),
            ..summarize(row.candidate)
        },
        job_spread: None,
        bound: None,
    }
}

/// The test a row needs, run: an error or a verdict settled without a test (`Done`), a limit
/// row (`Limit`) or a shift against the baseline (`Shift`, by the run-level model when the
/// launches come in runs, else by the rank test).
fn prepare(row: &Comparison<'_>, cfg: &Config, cache: &mut NullCache, first_level: f64) -> Prepared {
    let done = |v: RowVerdict, reason: String| Prepared::Done(base_judgement(row, cfg, v, &reason));
    if let Some(problem) = input_problem(row) {
        return done(RowVerdict::Error, problem);
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
    if exact_kind && constant(baseline) && !row.candidate.is_empty() {
        return Prepared::Done(exact_every_launch(row, cfg, baseline[0]));
    }
    if let Some(e) = counted_exactly(&row.key, baseline, row.candidate, row.threshold) {
        let mut j = base_judgement(row, cfg, e.verdict, &e.reason);
        j.ruling = Ruling::exact(e, row.threshold, cfg.confidence);
        return Prepared::Done(j);
    }
    if grouped(row) && nb <= MAX_SAMPLES && nc <= MAX_SAMPLES {
        return prepare_nested(row, cfg, baseline, exact_kind);
    }
    if let Some((verdict, reason)) = sample_count_problem(nb, nc) {
        return done(verdict, reason);
    }
    if rank_floor_too_high(nb, nc, first_level) {
        return prepare_nested(row, cfg, baseline, exact_kind);
    }
    prepare_ranked(row, cfg, baseline, exact_kind, cache)
}

/// How the threshold itself reads in a reason: `exact threshold`, or the relative `fraction`,
/// e.g. `3.00% threshold`.
fn threshold_text(exact_kind: bool, fraction: f64) -> String {
    if exact_kind {
        "exact threshold".to_owned()
    } else {
        format!(
            "{} threshold",
            percent(fraction, Percent::Signed2).trim_start_matches('+')
        )
    }
}

/// A threshold's `min_effect` as written in base units, e.g. `500ns`.
fn effect_text(threshold: &Threshold) -> String {
    threshold
        .min_effect
        .as_ref()
        .map_or_else(|| "0".to_owned(), ToString::to_string)
}
