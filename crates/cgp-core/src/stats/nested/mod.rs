//! Launches grouped in runs (processes): a two-level noise model on the log scale and the
//! t statistic of the shift it gives (docs/statistics.md, section 2.5).
//!
//! Every sample is one launch of a kernel, and launches come in runs: one profiler process each.
//! On a real H100 (`docs/statistics.md`, 2.5) launches within a process vary by 0.2-1.5 % and
//! processes differ by a further 0-0.4 %, so launches of one process are NOT independent
//! replicates of the row: treating 30 launches of one process as 30 processes would shrink the
//! standard error by `sqrt(30)` where only the within-run part shrinks. The model:
//!
//! `ln x_rl = mu_side + b_r + e_rl`,  `b_r ~ (0, sigma_b^2)` per run, `e_rl ~ (0, sigma_w^2)` per
//! launch.
//!
//! - Each run's location `L_r` is the mean of its log launches (after the slow-side dips below);
//!   `Var(L_r) = sigma_b^2 + sigma_w^2 / n_r`.
//! - `sigma_w^2` is the pooled within-run variance (`sum (n_r - 1)` degrees of freedom: many).
//! - `sigma_b^2` is the variance of the run locations on each side minus their within-run part,
//!   pooled over the two sides (the baseline's stored runs and the candidate's), floored at 0.
//! - The shift `Delta = mean(L_cand) - mean(L_base)` has
//!   `SE^2 = sigma_b^2 (1/R + 1/S) + sigma_w^2 (h_b / R + h_c / S)` (`h` the mean of `1/n_r`),
//!   never less than its within-run part; degrees of freedom by Satterthwaite's rule over the
//!   two variance estimates. With one launch per run this is the pooled two-sample t test on
//!   the runs; with a single candidate run the between-run part comes from the baseline's runs.
//! - Robustness (`screened`): far launches (`stats::screen`), launches beyond Tukey's fence on
//!   the slow side of the pooled within-run residuals (clock dips inside a process, at most a
//!   fifth of a run) and, on a side of at least 20 runs, its disturbed runs (more than 5 robust
//!   standard deviations from its median run, either side: `fence_runs`) are marked on both
//!   sides. They are left out only when the candidate's share of them is no larger than the
//!   baseline's (the machine's); otherwise they are the code's and every launch is kept. What
//!   was left out is counted per side in `Fit::left_out`.
//!
//! Pure; no I/O.

use std::collections::BTreeMap;

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::order::quantile_sorted;
use super::outliers::TUKEY_K;
use super::screen::{FarLaunch, LeftOut, Marks, NAMED, far_launches, run_centre};

/// At most this share of a run's launches, or of a side's runs, is left out as slow outliers.
const MAX_SHARE: f64 = 0.2;
/// Fewest values for a Tukey fence.
const MIN_FOR_FENCE: usize = 4;
/// Fewest runs on a side for its disturbed runs (a preempted process) to be fenced: the median
/// absolute deviation of fewer run levels is too noisy a scale (on the real 10-run H100 baselines
/// it put a matmul process only 0.62 % from the others at 15 of them).
pub(crate) const MIN_RUNS_FOR_FENCE: usize = 20;
/// A run whose level lies further than this many robust standard deviations from the side's
/// median run is a disturbed run: reported and left out.
pub(crate) const RUN_FENCE_K: f64 = 5.0;

/// One side of a row: its samples and the run each came from (same length), or no runs (each
/// sample its own run).
#[derive(Debug, Clone, Copy)]
pub struct Runs<'a> {
    pub values: &'a [f64],
    /// The run (process) of each value; empty: every value is its own run.
    pub runs: &'a [u32],
}

/// The fitted model of one row.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// Estimated shift of the candidate, log scale (`ln(cand / base)`).
    pub delta: f64,
    /// Its standard error (both noise parts, no between-job part).
    pub se: f64,
    /// Degrees of freedom of the t reference distribution.
    pub df: f64,
    /// Within-run standard deviation, log scale; `None` when no run has two launches.
    pub within_sd: Option<f64>,
    /// Between-run standard deviation, log scale (0 when not distinguishable from the within
    /// part; when no run has two launches it holds the whole per-run spread).
    pub between_sd: f64,
    /// Runs used, baseline and candidate.
    pub runs: (usize, usize),
    /// Launches used, baseline and candidate.
    pub n: (usize, usize),
    /// Disturbed runs left out (a preempted or throttled process), baseline and candidate: each
    /// run's level relative to the side's median run (0.32 = 32 % above it).
    pub disturbed_runs: [Vec<f64>; 2],
    /// What was left out of the fit as the machine's, or kept as the code's (`stats::screen`).
    pub left_out: LeftOut,
}

impl Fit {
    /// One-sided p of "the shift is at most `boundary`" (log scale) against larger shifts, with
    /// an extra variance `extra_var` (the between-job part) added to the standard error's square.
    pub(crate) fn p_greater(&self, boundary: f64, extra_var: f64) -> f64 {
        self.standardized(boundary, extra_var).map_or_else(
            || self.exact_p(extra_var, self.delta > boundary),
            |t| student(self.df).map_or(1.0, |d| 1.0 - d.cdf(t)),
        )
    }

    /// One-sided p of "the shift is at least `boundary`" against smaller shifts.
    pub(crate) fn p_less(&self, boundary: f64, extra_var: f64) -> f64 {
        self.standardized(boundary, extra_var).map_or_else(
            || self.exact_p(extra_var, self.delta < boundary),
            |t| student(self.df).map_or(1.0, |d| d.cdf(t)),
        )
    }

    /// The shift's distance from `boundary` in standard errors, with `extra_var` added; `None`
    /// where there is nothing to divide by (no spread at all, or a value that is not a number), so
    /// statrs never sees the NaN such a division makes.
    fn standardized(&self, boundary: f64, extra_var: f64) -> Option<f64> {
        let se = (self.se * self.se + extra_var).sqrt();
        (se > 0.0 && se.is_finite() && !self.delta.is_nan()).then(|| (self.delta - boundary) / se)
    }

    /// The p of a shift without a standard error: with no spread at all (identical runs on both
    /// sides) the shift is known exactly, 0 where it is `shown` beyond the boundary; otherwise 1.
    fn exact_p(&self, extra_var: f64, shown: bool) -> f64 {
        if self.se * self.se + extra_var == 0.0 && shown {
            0.0
        } else {
            1.0
        }
    }

    /// The fit with a between-job variance `extra_var` of `job_df` degrees of freedom to be added
    /// to its standard error's square: the degrees of freedom of the sum, by Satterthwaite's
    /// rule (`(se^2 + v)^2 / (se^4 / df + v^2 / job_df)`), so an estimate of the job spread from
    /// a short history (or a prior) widens the t distribution, not only the standard error.
    #[must_use]
    pub(crate) fn with_job_term(&self, extra_var: f64, job_df: f64) -> Self {
        let mut f = self.clone();
        let (a, v) = (self.se * self.se, extra_var.max(0.0));
        if v > 0.0 && job_df.is_finite() && job_df > 0.0 && self.df > 0.0 {
            let denom = a * a / self.df + v * v / job_df;
            if denom > 0.0 {
                f.df = ((a + v).powi(2) / denom).clamp(1.0, self.df.max(1.0) + job_df);
            }
        }
        f
    }

    /// Two-sided interval of the shift (log scale) at `confidence`, with `extra_var` added.
    pub(crate) fn interval(&self, confidence: f64, extra_var: f64) -> [f64; 2] {
        let se = (self.se * self.se + extra_var).sqrt();
        let q = student(self.df).map_or(f64::INFINITY, |d| d.inverse_cdf(0.5 + confidence / 2.0));
        [self.delta - q * se, self.delta + q * se]
    }

    /// The t quantile of the interval at `confidence` (for "widened by" texts).
    pub(crate) fn quantile(&self, confidence: f64) -> f64 {
        student(self.df).map_or(f64::INFINITY, |d| d.inverse_cdf(0.5 + confidence / 2.0))
    }
}

fn student(df: f64) -> Option<StudentsT> {
    StudentsT::new(0.0, 1.0, df.max(1.0)).ok()
}

/// A run after trimming: its launches' log mean, their count, and their squared deviations.
#[derive(Debug, Clone, Copy)]
struct Run {
    mean: f64,
    n: usize,
    ss: f64,
}

/// Log values of one side grouped by run, in run order (values in measured order).
fn group(side: &Runs<'_>) -> Result<Vec<Vec<f64>>, String> {
    if !side.runs.is_empty() && side.runs.len() != side.values.len() {
        return Err(format!(
            "{} samples but {} run indices",
            side.values.len(),
            side.runs.len()
        ));
    }
    if let Some(v) = side.values.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
        return Err(format!(
            "a relative change needs positive samples and this metric has {v}; use a min/max threshold"
        ));
    }
    if side.runs.is_empty() {
        return Ok(side.values.iter().map(|v| vec![v.ln()]).collect());
    }
    let mut by: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for (v, r) in side.values.iter().zip(side.runs) {
        by.entry(*r).or_default().push(v.ln());
    }
    Ok(by.into_values().collect())
}

/// The run of each group [`group`] makes, in its order: the sorted distinct run indices, or
/// `0..n` when every value is its own run.
fn run_ids(side: &Runs<'_>) -> Vec<u32> {
    if side.runs.is_empty() {
        return (0..u32::try_from(side.values.len()).unwrap_or(u32::MAX)).collect();
    }
    let mut r = side.runs.to_vec();
    r.sort_unstable();
    r.dedup();
    r
}

/// The slow-side Tukey fence of `values` (unsorted); `None` with too few values.
fn slow_fence(values: &[f64], slow_high: bool) -> Option<f64> {
    if values.len() < MIN_FOR_FENCE {
        return None;
    }
    let mut s = values.to_vec();
    s.sort_by(f64::total_cmp);
    let q1 = quantile_sorted(&s, 0.25)?;
    let q3 = quantile_sorted(&s, 0.75)?;
    let iqr = q3 - q1;
    Some(if slow_high {
        q3 + TUKEY_K * iqr
    } else {
        q1 - TUKEY_K * iqr
    })
}

fn median_of(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    super::summary::median_sorted(&s).unwrap_or(0.0)
}

/// Is `x` beyond the slow fence?
fn beyond(x: f64, fence: f64, slow_high: bool) -> bool {
    if slow_high { x > fence } else { x < fence }
}

/// Leave out the slow launches of every run (a fence on the within-run residuals of both sides
/// pooled), at most a fifth of a run; returns the runs and how many launches each run of each side
/// lost.
fn trim_launches(sides: [Vec<Vec<f64>>; 2], slow_high: bool, trim: bool) -> ([Vec<Run>; 2], [Vec<usize>; 2]) {
    let centres: [Vec<f64>; 2] = [
        sides[0].iter().map(|r| median_of(r)).collect(),
        sides[1].iter().map(|r| median_of(r)).collect(),
    ];
    let residuals: Vec<f64> = sides
        .iter()
        .zip(&centres)
        .flat_map(|(runs, cs)| {
            runs.iter()
                .zip(cs)
                .filter(|(r, _)| r.len() >= 3)
                .flat_map(|(r, c)| r.iter().map(move |x| x - c))
        })
        .collect();
    let fence = if trim {
        slow_fence(&residuals, slow_high)
    } else {
        None
    };
    let mut lost = [Vec::new(), Vec::new()];
    let out = [0, 1].map(|s| {
        sides[s]
            .iter()
            .zip(&centres[s])
            .map(|(r, c)| {
                let mut kept: Vec<f64> = r.clone();
                let mut dips = 0;
                if let Some(f) = fence.filter(|_| r.len() >= 3) {
                    let cap = (r.len() as f64 * MAX_SHARE).floor() as usize;
                    // The slowest first, up to the cap.
                    let mut idx: Vec<usize> =
                        (0..r.len()).filter(|&i| beyond(r[i] - c, f, slow_high)).collect();
                    idx.sort_by(|&a, &b| {
                        if slow_high {
                            r[b].total_cmp(&r[a])
                        } else {
                            r[a].total_cmp(&r[b])
                        }
                    });
                    idx.truncate(cap);
                    dips = idx.len();
                    kept = r
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| !idx.contains(i))
                        .map(|(_, x)| *x)
                        .collect();
                }
                lost[s].push(dips);
                let n = kept.len();
                let mean = kept.iter().sum::<f64>() / n as f64;
                let ss = kept.iter().map(|x| (x - mean).powi(2)).sum();
                Run { mean, n, ss }
            })
            .collect()
    });
    (out, lost)
}

/// Leave out a side's disturbed runs: with at least [`MIN_RUNS_FOR_FENCE`] runs, those whose
/// level lies more than [`RUN_FENCE_K`] robust standard deviations from the median run (the
/// scale: `1.4826 MAD` of the run levels, never below a run level's own within-run noise), at
/// most a fifth of the runs, the farthest first. Both tails: a fence on one side of the levels
/// would move the side's level; at 5 standard deviations a normal side practically never loses
/// a run (5.7e-7 per run), while one process slowed by a preemption (+32 % on the H100 pool,
/// issue 35) no longer sets the between-run noise of every row it touches. Returns the kept runs
/// and the left-out runs' levels relative to the median run.
fn fence_runs(runs: Vec<Run>, within_var: f64) -> (Vec<Run>, Vec<f64>) {
    if runs.len() < MIN_RUNS_FOR_FENCE {
        return (runs, Vec::new());
    }
    let means: Vec<f64> = runs.iter().map(|r| r.mean).collect();
    let centre = median_of(&means);
    let dev: Vec<f64> = means.iter().map(|m| (m - centre).abs()).collect();
    let h = runs.iter().map(|r| 1.0 / r.n as f64).sum::<f64>() / runs.len() as f64;
    let scale = (1.4826 * median_of(&dev)).max((within_var.max(0.0) * h).sqrt());
    if !(scale > 0.0 && scale.is_finite()) {
        return (runs, Vec::new());
    }
    let cap = (runs.len() as f64 * MAX_SHARE).floor() as usize;
    let mut out: Vec<usize> = (0..runs.len())
        .filter(|&i| dev[i] > RUN_FENCE_K * scale)
        .collect();
    out.sort_by(|&a, &b| dev[b].total_cmp(&dev[a]));
    out.truncate(cap);
    let left: Vec<f64> = out.iter().map(|&i| (means[i] - centre).exp_m1()).collect();
    let kept = runs
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !out.contains(i))
        .map(|(_, r)| r)
        .collect();
    (kept, left)
}

/// Per-side moments of the run locations.
struct SideMoments {
    runs: usize,
    launches: usize,
    mean: f64,
    /// Sample variance of the run locations (0 with one run).
    var: f64,
    df: f64,
    /// Mean of `1 / n_r`.
    h: f64,
}

fn moments(runs: &[Run]) -> SideMoments {
    let r = runs.len();
    let mean = runs.iter().map(|x| x.mean).sum::<f64>() / r as f64;
    let var = if r >= 2 {
        runs.iter().map(|x| (x.mean - mean).powi(2)).sum::<f64>() / (r - 1) as f64
    } else {
        0.0
    };
    SideMoments {
        runs: r,
        launches: runs.iter().map(|x| x.n).sum(),
        mean,
        var,
        df: r.saturating_sub(1) as f64,
        h: runs.iter().map(|x| 1.0 / x.n as f64).sum::<f64>() / r as f64,
    }
}

/// Fit the model to a row. `slow_high`: the slow side is the high end (lower is better);
/// `trim`: leave slow launches and runs out.
///
/// # Errors
/// A sentence for the row's reason: no samples, a value that is not positive, mismatched run
/// indices, or fewer than 2 runs on both sides together beyond one (the between-run part
/// cannot be estimated).
pub fn fit(base: Runs<'_>, cand: Runs<'_>, slow_high: bool, trim: bool) -> Result<Fit, String> {
    let b = group(&base).map_err(|e| format!("baseline: {e}"))?;
    let c = group(&cand).map_err(|e| format!("candidate: {e}"))?;
    if b.is_empty() || c.is_empty() {
        return Err("no samples on a side".to_owned());
    }
    let ids = [run_ids(&base), run_ids(&cand)];
    let (sides, left_out, disturbed_runs) = screened([b, c], &ids, slow_high, trim);
    let within_ss: f64 = sides.iter().flatten().map(|r| r.ss).sum();
    let within_df: f64 = sides.iter().flatten().map(|r| r.n.saturating_sub(1) as f64).sum();
    let within_var = (within_df > 0.0).then(|| within_ss / within_df);
    let [mb, mc] = [moments(&sides[0]), moments(&sides[1])];
    let df_runs = mb.df + mc.df;
    if df_runs < 1.0 {
        return Err(format!(
            "{} baseline and {} candidate run(s): the noise between runs needs at least 2 runs on one side; store a baseline of at least 2 runs (`baseline update`) or raise repetitions",
            mb.runs, mc.runs
        ));
    }
    let w = within_var.unwrap_or(0.0);
    let a = 1.0 / mb.runs as f64 + 1.0 / mc.runs as f64;
    let k_within = mb.h / mb.runs as f64 + mc.h / mc.runs as f64;
    // sigma_b^2 = sum_s df_s (var_s - h_s w) / df_runs; SE^2 = a sigma_b^2 + k_within w.
    let between_raw = (mb.df * (mb.var - mb.h * w) + mc.df * (mc.var - mc.h * w)) / df_runs;
    let between = between_raw.max(0.0);
    let se2_raw = a * between_raw + k_within * w;
    let se2_floor = k_within * w;
    let se2 = (a * between + k_within * w).max(se2_floor).max(se2_raw);
    // Satterthwaite over the two independent estimates: the pooled variance of the run
    // locations (df_runs) and the within-run variance (within_df):
    // SE^2 = a * pooled + k * w.
    let pooled = (mb.df * mb.var + mc.df * mc.var) / df_runs;
    let k = k_within - a * (mb.df * mb.h + mc.df * mc.h) / df_runs;
    let mut denom = (a * pooled).powi(2) / df_runs;
    if within_df > 0.0 {
        denom += (k * w).powi(2) / within_df;
    }
    let cap = df_runs + within_df;
    // When the run levels vary less than their within-run part (the between part floored at 0),
    // the standard error used is the within part alone, and its degrees of freedom are the
    // within-run ones: Satterthwaite's rule over the unfloored sum gave a handful there (issue
    // 43: a slowdown of every tenth launch leaves the run levels alike and the launches bimodal,
    // and its interval was read at a handful of degrees of freedom instead of the hundreds of the
    // within-run part).
    let df = if between_raw <= 0.0 && within_df > 0.0 && se2_floor > 0.0 {
        within_df.max(1.0)
    } else if denom > 0.0 && se2_raw > 0.0 {
        (se2_raw * se2_raw / denom).clamp(1.0, cap)
    } else {
        df_runs.max(1.0)
    };
    Ok(Fit {
        delta: mc.mean - mb.mean,
        se: se2.sqrt(),
        df,
        within_sd: within_var.map(f64::sqrt),
        between_sd: between.sqrt(),
        runs: (mb.runs, mc.runs),
        n: (mb.launches, mc.launches),
        disturbed_runs,
        left_out,
    })
}

/// What the machine explains is left out, what the code explains is kept (`stats::screen`):
/// every side's far launches, then its slow-side dips, then (with 20 runs or more) its disturbed
/// runs are marked; when the candidate's share of marked launches or of marked runs is
/// significantly larger than the baseline's, nothing is left out on either side.
fn screened(
    groups: [Vec<Vec<f64>>; 2],
    ids: &[Vec<u32>; 2],
    slow_high: bool,
    trim: bool,
) -> ([Vec<Run>; 2], LeftOut, [Vec<f64>; 2]) {
    let of_launches = (
        groups[0].iter().map(Vec::len).sum(),
        groups[1].iter().map(Vec::len).sum(),
    );
    let of_runs = (groups[0].len(), groups[1].len());
    let keep_all = |groups: [Vec<Vec<f64>>; 2]| {
        let (sides, _) = trim_launches(groups, slow_high, false);
        sides
    };
    let far_of = |flags: &[Vec<bool>]| -> Vec<usize> {
        flags.iter().map(|f| f.iter().filter(|x| **x).count()).collect()
    };
    if !trim {
        let left = LeftOut {
            of_launches,
            of_runs,
            ..LeftOut::default()
        };
        return (keep_all(groups), left, [Vec::new(), Vec::new()]);
    }
    let flags = [far_launches(&groups[0]), far_launches(&groups[1])];
    let mut named = Vec::new();
    let mut far = [0usize; 2];
    let kept: [Vec<Vec<f64>>; 2] = [0, 1].map(|s| {
        groups[s]
            .iter()
            .zip(&flags[s])
            .enumerate()
            .map(|(r, (run, fl))| {
                let id = ids[s].get(r).copied().unwrap_or(u32::MAX);
                let (kept, left) = leave_far_out(run, fl, s, id, &mut named);
                far[s] += left;
                kept
            })
            .collect()
    });
    let (sides, dips) = trim_launches(kept, slow_high, true);
    let ss: f64 = sides.iter().flatten().map(|r| r.ss).sum();
    let df: f64 = sides.iter().flatten().map(|r| r.n.saturating_sub(1) as f64).sum();
    let w = if df > 0.0 { ss / df } else { 0.0 };
    let [sb, sc] = sides;
    let ((kb, lb), (kc, lc)) = (fence_runs(sb, w), fence_runs(sc, w));
    let sum = |v: &[usize]| v.iter().sum::<usize>();
    let launches = (far[0] + sum(&dips[0]), far[1] + sum(&dips[1]));
    let runs = (lb.len(), lc.len());
    // Processes holding a marked launch (far or a dip): a mark that recurs is the code's.
    let marked = |s: usize| {
        far_of(&flags[s])
            .iter()
            .zip(&dips[s])
            .filter(|(f, d)| **f + **d > 0)
            .count()
    };
    let marks = Marks {
        launches,
        of_launches,
        runs,
        of_runs,
        marked_runs: (marked(0), marked(1)),
    };
    if let Some(code) = marks.the_codes() {
        let left = LeftOut {
            of_launches,
            of_runs,
            kept_as_code: Some(code),
            ..LeftOut::default()
        };
        return (keep_all(groups), left, [Vec::new(), Vec::new()]);
    }
    named.sort_by(|a, b| {
        (b.value / b.centre)
            .ln()
            .abs()
            .total_cmp(&(a.value / a.centre).ln().abs())
    });
    named.truncate(NAMED);
    let left = LeftOut {
        launches,
        of_launches,
        runs,
        of_runs,
        kept_as_code: None,
        named,
    };
    ([kb, kc], left, [lb, lc])
}

/// The launches of one run (logs) without its far ones (`flags`), and how many were far; each far
/// launch is named in `named` with its side, run and the run's centre.
fn leave_far_out(
    run: &[f64],
    flags: &[bool],
    side: usize,
    id: u32,
    named: &mut Vec<FarLaunch>,
) -> (Vec<f64>, usize) {
    let centre = run_centre(run, flags);
    let mut kept = Vec::with_capacity(run.len());
    let mut far = 0;
    for (x, f) in run.iter().zip(flags) {
        if *f {
            far += 1;
            named.push(FarLaunch {
                side,
                run: id,
                value: x.exp(),
                centre: centre.exp(),
            });
        } else {
            kept.push(*x);
        }
    }
    (kept, far)
}

/// The number of distinct runs in `runs` (`values` long); an empty `runs` counts every value.
pub(crate) fn count_runs(values: usize, runs: &[u32]) -> usize {
    if runs.is_empty() {
        return values;
    }
    let mut r = runs.to_vec();
    r.sort_unstable();
    r.dedup();
    r.len()
}

mod means;
#[cfg(test)]
mod tests;

pub use means::{RunMeans, fit_means, run_means, run_means_toward};
