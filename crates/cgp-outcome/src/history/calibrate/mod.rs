//! `cgp-gate calibrate`: the runner's own noise, and what the gate can and cannot see on it.
//!
//! From repetitions of unchanged code (a live run, or every repetition a recording holds), for
//! every target x size x kernel x metric:
//! - the noise: robust CV (`1.4826 MAD / median`), the share of Tukey outliers, and the share of
//!   clock dips (outliers on the slow side: above the upper fence for durations, below the lower
//!   fence for throughputs);
//! - `suggested_threshold`: the smallest relative threshold at which identical code passes
//!   outright (not `inconclusive`) in 95 % of checks;
//! - `min_detectable`: the smallest relative change that the gate, with the spec's threshold,
//!   repetitions, baseline repetitions and re-measurement, reports as a regression in 95 % of
//!   checks (it is above the threshold by the noise margin);
//! - where the spec's threshold is below `suggested_threshold`, the repetitions it would take.
//!
//! The figures are the closed form (normal approximation) of the run-level model the gate judges
//! with (docs/statistics.md 2.5), fitted robustly to the row's runs (a disturbed process is left
//! out and named in the note), at the spec's `alpha` split over the run's tested rows (Holm's
//! first step) and the last look's share under the spending rule (`stats::spending`); no checks
//! are simulated (`--trials` is gone). Deterministic. Pure: the command layer measures and writes
//! files; `report::calibrate` renders the table.

use serde::Serialize;

mod wire;

use crate::foundation::threshold::{Direction, Threshold, ThresholdKind};
use crate::foundation::units::{Percent, percent};
use crate::measured::samples::SampleSet;
use crate::spec::model::{Settings, Target};
use crate::stats::{Config, summarize, tukey_outliers};

/// Version of the calibration JSON.
pub(crate) const CALIBRATION_VERSION: u32 = 1;

/// Share of simulated checks that must pass (A/A) or find the change.
pub(crate) const COVERAGE: f64 = 0.95;

/// Largest repetition count searched for when the spec's threshold is too tight.
pub(crate) const MAX_SEARCH_REPETITIONS: u32 = 1000;

/// Settings of a calibration.
#[derive(Debug, Clone, Copy)]
pub struct CalibrateOptions {
    /// Simulated checks per estimate.
    pub trials: usize,
    pub seed: u64,
}

impl Default for CalibrateOptions {
    fn default() -> Self {
        Self {
            trials: 400,
            seed: 0x6361_6c69_6272_6174,
        }
    }
}

/// One target x size x kernel x metric. Relative quantities are fractions (0.012 = 1.2 %).
/// Written flat, one field per figure (`wire::CalibrationRowWire`, the file's form since version
/// 1); here what is known together travels together, and a figure that does not apply to a row
/// is a missing part, not a set of `None`s.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(into = "wire::CalibrationRowWire")]
pub struct CalibrationRow {
    pub target: String,
    /// `key=value` label, as in results.
    pub size: String,
    pub kernel: String,
    pub metric: String,
    pub unit: String,
    /// Samples and repetitions measured.
    pub samples: usize,
    pub repetitions: usize,
    pub median: f64,
    /// Robust CV; 0 for a deterministic metric.
    pub cv: f64,
    /// Share of samples outside Tukey's fences.
    pub outlier_rate: f64,
    /// Share of samples beyond the fence on the slow side (clock dips, preemption).
    pub dip_share: f64,
    /// The same value in every repetition.
    pub deterministic: bool,
    /// The spec's threshold as written.
    pub threshold: String,
    /// The spec's relative threshold and what this runner resolves against it; `None` for a
    /// `min:`/`max:` limit, which is judged against the limit, not against a baseline.
    pub reach: Option<ThresholdReach>,
    /// Launches per run measured (after warm-up).
    pub launches_per_run: f64,
    /// The noise of the run-level model fitted to the unchanged runs, and what it takes to
    /// resolve the threshold on it; `None` where no model was fitted (a limit, a deterministic
    /// metric, too few samples or values <= 0, a single run).
    pub noise: Option<RunNoise>,
    /// The between-job drift `check` estimates from the stored baseline's history
    /// (`calibrate --baselines DIR`, docs/statistics.md 2.3); `None` without a baseline entry,
    /// with too short a history, or for a rule that is not relative.
    pub drift: Option<JobDrift>,
    /// One sentence for the reader.
    pub note: String,
}

/// A relative (or `exact`) threshold against this runner's noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThresholdReach {
    /// The spec's relative threshold (`exact`: 0).
    pub spec_threshold: f64,
    /// Smallest relative change found in 95 % of checks at the spec's settings; `None` when the
    /// row could not be calibrated (too few samples, a single run).
    pub min_detectable: Option<f64>,
    /// Smallest threshold at which identical code passes in 95 % of checks; `None` as above.
    pub suggested_threshold: Option<f64>,
    /// The spec's threshold is below `suggested_threshold`.
    pub below_detectable: bool,
    /// Check repetitions that would make the spec's threshold reachable, when it is below (and
    /// some count up to the search's limit does).
    pub repetitions_needed: Option<u32>,
}

/// The run-level noise of a row (`stats::nested`), log scale (about a CV), and the counts that
/// would resolve the spec's threshold on it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunNoise {
    /// Noise within a run (process); `None` with one launch per run.
    pub within_cv: Option<f64>,
    /// Noise between runs beyond the within part.
    pub between_cv: f64,
    /// Fewest processes per check (at `launches_per_run` launches each) with which identical
    /// code passes in 95 % of checks at the spec's threshold.
    pub processes_needed: Option<u32>,
    /// Fewest launches per process (at the spec's `repetitions` processes) with which identical
    /// code passes in 95 % of checks; `None` when the noise between runs alone prevents it.
    pub launches_needed: Option<u32>,
}

/// The between-job spread (log scale, about a CV) `check` estimates for a row from its stored
/// baseline's history, by the same rule (docs/statistics.md 2.3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobDrift {
    pub spread: f64,
    /// How many baseline medians (older generations and the current one) it came from.
    pub medians: usize,
    /// Too large for the spec's threshold (`stats::jobspread::drift_too_large`): `check` warns
    /// on this row; `cgp-gate ab` removes the drift.
    pub too_large: bool,
    /// The smallest change found in 80 % of checks at a one-sided 1 % level with the drift, at
    /// the spec's `max_repetitions` (`stats::jobspread::drift_cost`), when the row's noise is
    /// known.
    pub found_with_drift: Option<f64>,
    /// The same without the drift (what `ab`, which removes it, needs).
    pub found_without_drift: Option<f64>,
}

impl CalibrationRow {
    /// Flagged in every report: a threshold below what the runner resolves, or a job drift too
    /// large for it.
    pub fn flagged(&self) -> bool {
        self.reach.is_some_and(|r| r.below_detectable) || self.drift.is_some_and(|d| d.too_large)
    }
}

/// A whole calibration.
#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub schema_version: u32,
    /// Where the samples came from (`replay:DIR` or `ncu`).
    pub source: String,
    /// The samples were not measured on a GPU (a synthetic recording).
    pub synthetic: bool,
    pub alpha: f64,
    /// Rows tested in one check (the Holm family the simulation assumes).
    pub family: usize,
    pub trials: usize,
    pub rows: Vec<CalibrationRow>,
}

#[expect(
    clippy::float_cmp,
    reason = "exact repetition is the definition of a deterministic counter"
)]
fn constant(v: &[f64]) -> bool {
    v.first().is_some_and(|f| v.iter().all(|x| x == f))
}

/// Standard normal quantile.
fn z(p: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::standard().inverse_cdf(p)
}

/// The run-level noise of one row (`stats::nested`), log scale, and the standard error of the
/// shift it gives a check of `s` candidate runs of `n` launches against `r` baseline runs.
#[derive(Debug, Clone, Copy)]
struct Noise {
    within: f64,
    between: f64,
}

impl Noise {
    fn se(&self, r: f64, s: f64, n: f64) -> f64 {
        ((self.between.powi(2) + self.within.powi(2) / n.max(1.0)) * (1.0 / r.max(1.0) + 1.0 / s.max(1.0)))
            .sqrt()
    }
}

/// Round a fraction up to the next 0.1 percentage point (a threshold people can write).
fn round_up(x: f64) -> f64 {
    ((x * 1000.0).ceil() / 1000.0).max(0.001)
}

/// Calibrate every measured series of the spec's metrics. `_opts` is kept for callers; the
/// closed form needs no trials or seed.
pub fn calibrate(
    targets: &[&Target],
    samples: &SampleSet,
    settings: &Settings,
    source: &str,
    synthetic: bool,
    _opts: &CalibrateOptions,
) -> Calibration {
    calibrate_with_progress(
        targets,
        samples,
        settings,
        CalibrationSources {
            source,
            synthetic,
            baselines: None,
        },
        _opts,
        &mut |_, _, _| {},
    )
}

/// The stored baselines of the targets (by target name), whose history says how much the jobs
/// drift (`calibrate --baselines DIR`).
pub type CalibrationBaselines = std::collections::BTreeMap<String, crate::baseline::BaselineFile>;

/// Where a calibration's samples came from, and the stored baselines, when given.
#[derive(Clone, Copy)]
pub struct CalibrationSources<'a> {
    /// `replay:DIR` or `ncu`.
    pub source: &'a str,
    /// The samples were not measured on a GPU.
    pub synthetic: bool,
    /// The stored baselines: their history gives each row's job drift, as `check` reads it.
    pub baselines: Option<&'a CalibrationBaselines>,
}

/// [`calibrate`], telling `progress(done, total, row)` before each row (the command shows it).
pub fn calibrate_with_progress(
    targets: &[&Target],
    samples: &SampleSet,
    settings: &Settings,
    from: CalibrationSources<'_>,
    _opts: &CalibrateOptions,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Calibration {
    let wanted: Vec<(&Target, &crate::measured::samples::Series, &Threshold)> = samples
        .series
        .values()
        .filter_map(|s| {
            let t = targets.iter().find(|t| t.name == s.key.target)?;
            let m = t.metrics.iter().find(|m| m.name == s.key.metric)?;
            Some((*t, s, &m.threshold))
        })
        .collect();
    let family = wanted
        .iter()
        .filter(|(_, s, _)| !constant(&s.values()))
        .count()
        .max(1);
    let cfg = Config {
        alpha: settings.alpha / family as f64,
        confidence: settings.confidence,
        ..Config::default()
    };
    let total = wanted.len();
    let rows = wanted
        .iter()
        .enumerate()
        .map(|(i, (t, s, th))| {
            progress(
                i,
                total,
                &format!("{}[{}] {}", s.key.target, s.key.size, s.key.metric),
            );
            let entry = from
                .baselines
                .and_then(|b| b.get(&s.key.target))
                .and_then(|f| f.entry_for(&s.key));
            let mut r = row(t, s, th, &cfg);
            if let Some(e) = entry {
                job_drift(&mut r, t, s, th, e, settings);
            }
            r
        })
        .collect();
    progress(total, total, "");
    Calibration {
        schema_version: CALIBRATION_VERSION,
        source: from.source.to_owned(),
        synthetic: from.synthetic,
        alpha: settings.alpha,
        family,
        // The figures are a closed form of the run-level model: no simulated checks.
        trials: 0,
        rows,
    }
}

/// What one series shows before any model: its median, spread, outliers and dips, whether it
/// is deterministic, and the spec's threshold as a fraction (`None` for a min/max limit).
fn describe(s: &crate::measured::samples::Series, threshold: &Threshold) -> CalibrationRow {
    let values = &s.values();
    let summary = summarize(values);
    let mut reps = s.reps();
    reps.sort_unstable();
    reps.dedup();
    let n_reps = reps.len().max(1);
    let higher = threshold.direction == Direction::Higher;
    let outliers = tukey_outliers(values);
    let median = summary.median;
    let dips: Vec<f64> = outliers
        .iter()
        .map(|&i| values[i])
        .filter(|x| if higher { *x < median } else { *x > median })
        .collect();
    let n = values.len().max(1) as f64;
    let deterministic = constant(values);
    let spec_threshold = match threshold.kind {
        ThresholdKind::Relative { fraction } => Some(fraction),
        ThresholdKind::Exact => Some(0.0),
        ThresholdKind::Min { .. } | ThresholdKind::Max { .. } => None,
    };
    let reach = spec_threshold.map(|spec_threshold| ThresholdReach {
        spec_threshold,
        min_detectable: None,
        suggested_threshold: None,
        below_detectable: false,
        repetitions_needed: None,
    });
    CalibrationRow {
        target: s.key.target.clone(),
        size: s.key.size.clone(),
        kernel: s.key.kernel.clone(),
        metric: s.key.metric.clone(),
        unit: s.unit.clone(),
        samples: values.len(),
        repetitions: reps.len(),
        median,
        cv: if deterministic {
            0.0
        } else {
            summary.cv.unwrap_or(0.0)
        },
        outlier_rate: outliers.len() as f64 / n,
        dip_share: dips.len() as f64 / n,
        deterministic,
        threshold: threshold.to_string(),
        reach,
        launches_per_run: values.len() as f64 / n_reps as f64,
        noise: None,
        drift: None,
        note: String::new(),
    }
}

fn row(
    target: &Target,
    s: &crate::measured::samples::Series,
    threshold: &Threshold,
    cfg: &Config,
) -> CalibrationRow {
    let mut out = describe(s, threshold);
    let Some(mut reach) = out.reach else {
        out.note = "min/max limit: judged against the limit, not against a baseline".to_owned();
        return out;
    };
    calibrate_reach(&mut out, &mut reach, target, s, threshold, cfg);
    out.reach = Some(reach);
    out
}

/// What the runner resolves against a relative (or `exact`) threshold: the row's `reach`, its
/// `noise`, `launches_per_run` and `note`.
fn calibrate_reach(
    out: &mut CalibrationRow,
    reach: &mut ThresholdReach,
    target: &Target,
    s: &crate::measured::samples::Series,
    threshold: &Threshold,
    cfg: &Config,
) {
    let (values, median, higher) = (&s.values(), out.median, threshold.direction == Direction::Higher);
    let t = reach.spec_threshold;
    if out.deterministic {
        reach.min_detectable = Some(t);
        reach.suggested_threshold = Some(0.0);
        out.note = "deterministic: every repetition gave the same value, so any change beyond the threshold is found exactly".to_owned();
        return;
    }
    if values.len() < 3 || median <= 0.0 || values.iter().any(|x| *x <= 0.0) {
        out.note = "too few samples, or values <= 0: no calibration".to_owned();
        return;
    }
    // The two noise parts of the run-level model the gate judges with (docs/statistics.md 2.5),
    // fitted to the unchanged runs; the figures below are its closed form (normal
    // approximation), not a simulation: instant on any pool.
    let side = crate::stats::nested::Runs {
        values,
        runs: &s.reps(),
    };
    let Ok(fit) = crate::stats::nested::fit(side, side, !higher, cfg.trim_dips) else {
        out.note = "a single run: the noise between runs cannot be estimated; measure at least 2".to_owned();
        return;
    };
    let launches = fit.n.0 as f64 / fit.runs.0.max(1) as f64;
    let noise = Noise {
        within: fit.within_sd.unwrap_or(0.0),
        between: fit.between_sd,
    };
    out.launches_per_run = launches;
    // The last look's share of alpha under the spending rule `check` uses (`stats::spending`).
    let last_look = crate::stats::spending::LookAt {
        repetitions: target.repetitions,
        max_repetitions: target.max_repetitions,
        done: target.max_repetitions.max(target.repetitions),
    };
    let z_alpha = z(1.0 - cfg.alpha * crate::stats::spending::share(cfg.alpha, &last_look, 1));
    let z_cover = z(COVERAGE);
    let q = z(0.5 + cfg.confidence / 2.0);
    let r_base = f64::from(target.baseline_repetitions);
    let reps = f64::from(target.repetitions);
    // Unchanged code passes when the interval's bad end is under the threshold: in 95 % of
    // checks at (z_95 + q) standard errors.
    let floor_at = |s: f64, n: f64| ((z_cover + q) * noise.se(r_base.max(s), s, n)).exp_m1();
    let floor = round_up(floor_at(reps, launches));
    reach.suggested_threshold = Some(floor);
    let effect = threshold.min_effect.as_ref().map_or(0.0, |e| e.value / median);
    let tol = t.max(effect).ln_1p();
    let last = f64::from(target.max_repetitions);
    reach.min_detectable = Some((tol + (z_alpha + z_cover) * noise.se(r_base, last, launches)).exp_m1());
    let t_log = t.max(effect);
    let processes_needed = (1..=MAX_SEARCH_REPETITIONS).find(|&p| floor_at(f64::from(p), launches) < t_log);
    out.noise = Some(RunNoise {
        within_cv: fit.within_sd,
        between_cv: fit.between_sd,
        processes_needed,
        launches_needed: (1..=100_000u32)
            .find(|&n| floor_at(reps, f64::from(n)) < t_log)
            .filter(|_| noise.within > 0.0),
    });
    if threshold.kind == ThresholdKind::Exact {
        out.note = "exact threshold on a noisy metric: judged by the test against no change".to_owned();
        return;
    }
    if t < floor {
        reach.below_detectable = true;
        reach.repetitions_needed = processes_needed;
        out.note = match reach.repetitions_needed {
            Some(r) => format!(
                "the {} threshold is below what this runner resolves at {} repetitions ({} needed): identical code would often be inconclusive; raise the threshold to {} or repetitions to {r}",
                percent(t, Percent::Plain1),
                target.repetitions,
                percent(floor, Percent::Plain1),
                percent(floor, Percent::Plain1)
            ),
            None => format!(
                "the {} threshold is below what this runner resolves even at {MAX_SEARCH_REPETITIONS} repetitions; raise it to at least {}",
                percent(t, Percent::Plain1),
                percent(floor, Percent::Plain1)
            ),
        };
    } else {
        out.note = format!(
            "the {} threshold is above the noise floor {}",
            percent(t, Percent::Plain1),
            percent(floor, Percent::Plain1)
        );
    }
    disturbed_note(out, &fit);
}

/// The job drift of a row with a stored baseline `entry`: the between-job spread `check` would
/// use, read by `check`'s own judgement (`stats::judge` of the baseline and its history against
/// these unchanged samples: the same rule, docs/statistics.md 2.3), and, when it is too large for
/// the threshold, `check`'s warning (`stats::jobspread::drift_warning`) at the spec's
/// `max_repetitions`, which says that `ab` removes it.
fn job_drift(
    out: &mut CalibrationRow,
    target: &Target,
    s: &crate::measured::samples::Series,
    threshold: &Threshold,
    entry: &crate::baseline::Entry,
    settings: &Settings,
) {
    let history = entry.older_medians();
    let medians = history.len() + 1;
    let t = match threshold.kind {
        ThresholdKind::Relative { fraction } => fraction,
        // Job drift is a relative spread: an exact or limit rule has no relative threshold to
        // hold it against.
        ThresholdKind::Exact | ThresholdKind::Min { .. } | ThresholdKind::Max { .. } => return,
    };
    if out.deterministic {
        return;
    }
    let row = crate::stats::Comparison {
        key: format!(
            "{}/{}/{}/{}",
            s.key.target, s.key.size, s.key.kernel, s.key.metric
        ),
        baseline: Some(&entry.samples),
        candidate: &s.values(),
        threshold,
        history: &history,
        baseline_runs: &entry.reps,
        candidate_runs: &s.reps(),
    };
    // The history alone: calibrate measures this runner's drift (what `settings.job_spread`
    // should say), not the prior `check` starts from.
    let cfg = crate::stats::Config {
        job_prior: crate::stats::jobspread::Prior { spread: 0.0, df: 0.0 },
        ..crate::spec::stats_config(settings)
    };
    let judged = crate::stats::judge(&row, &cfg);
    let Some(spread) = judged.job_spread else {
        out.note.push_str(&format!(
            "; job drift: not estimated, the baseline holds {medians} median(s) ({} needed)",
            crate::stats::jobspread::MIN_GENERATIONS
        ));
        return;
    };
    // The standard error of a check at the spec's most processes, from this runner's noise.
    let se = out
        .noise
        .and_then(|n| n.within_cv.map(|w| (w, n.between_cv)))
        .map(|(w, b)| {
            let n = out.launches_per_run.max(1.0);
            let (r, last) = (
                f64::from(target.baseline_repetitions),
                f64::from(target.max_repetitions.max(target.repetitions)),
            );
            Noise {
                within: w,
                between: b,
            }
            .se(r, last, n)
        });
    let cost = se.map(|se| crate::stats::jobspread::drift_cost(t, se, spread));
    out.drift = Some(JobDrift {
        spread,
        medians,
        too_large: crate::stats::jobspread::drift_too_large(t, spread, se),
        found_with_drift: cost.map(|c| c.0),
        found_without_drift: cost.map(|c| c.1),
    });
    let pct = |x: f64| percent(x, Percent::Signed2).trim_start_matches('+').to_owned();
    // What that many medians are worth (`jobspread::MAD_DF_PER_DIFF` per successive difference):
    // the weight the setting carries against the history `check` adds to it (issue 57).
    let df = (crate::stats::jobspread::MAD_DF_PER_DIFF * medians.saturating_sub(1) as f64).max(1.0);
    out.note.push_str(&format!(
        "; job drift {} (between-job spread from {medians} baseline medians, as `check` estimates it from the history; `settings.job_spread: \"{}\"` with `job_spread_df: {df:.1}` makes check assume it, as much as {medians} medians tell, before its history is long)",
        pct(spread),
        pct(spread)
    ));
    match crate::stats::jobspread::drift_warning(t, spread, se) {
        Some(w) => {
            out.note.push_str("; ");
            out.note.push_str(&w);
        }
        None => out
            .note
            .push_str(&format!(": within what the {} threshold allows", pct(t))),
    }
}

/// The disturbed runs the robust fit left out (`stats::nested`), appended to the note: the
/// figures above are those of the other runs.
fn disturbed_note(out: &mut CalibrationRow, fit: &crate::stats::nested::Fit) {
    let left = &fit.disturbed_runs[0];
    if left.is_empty() {
        return;
    }
    let each: Vec<String> = left.iter().map(|x| percent(*x, Percent::Signed2)).collect();
    out.note.push_str(&format!(
        "; {} of {} runs left out of the noise figures as disturbed ({} from the median run: a preempted or throttled process)",
        left.len(),
        fit.runs.0 + left.len(),
        each.join(", ")
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measured::samples::SeriesKey;
    use crate::stats::noise::NoiseModel;
    use crate::stats::rng::Rng;

    fn target(threshold: &str) -> Target {
        let yaml = format!(
            "version: 1\ntargets:\n  - name: t\n    command: [./t]\n    metrics: {{gpu__time_duration.sum: \"{threshold}\"}}\n"
        );
        crate::spec::load_str(&yaml, std::path::Path::new("cgp-gate.yaml"))
            .unwrap()
            .targets
            .remove(0)
    }

    fn series(values: &[f64]) -> SampleSet {
        let mut set = SampleSet::default();
        let key = SeriesKey {
            target: "t".into(),
            size: String::new(),
            kernel: "k".into(),
            metric: "gpu__time_duration.sum".into(),
        };
        for (i, v) in values.iter().enumerate() {
            set.push(&key, "ns", *v, i as u32);
        }
        set
    }

    #[test]
    fn quiet_runner_suggests_a_threshold_near_its_noise_and_flags_a_tight_one() {
        // SYNTHETIC: 30 repetitions at CV 1 % from the documented model.
        let mut rng = Rng::new(11);
        let values = NoiseModel::clean(0.01).samples(&mut rng, 30, 50_000.0, false);
        let opts = CalibrateOptions {
            trials: 60,
            ..CalibrateOptions::default()
        };
        let t = target("3%");
        let c = calibrate(&[&t], &series(&values), &Settings::default(), "test", true, &opts);
        let r = &c.rows[0];
        assert!((0.006..0.016).contains(&r.cv), "{r:?}");
        let s = r.reach.unwrap().suggested_threshold.unwrap();
        assert!((0.005..0.03).contains(&s), "{r:?}");
        let d = r.reach.unwrap().min_detectable.unwrap();
        assert!(d > 0.03 && d < 0.07, "{r:?}");
        assert!(!r.reach.unwrap().below_detectable, "{r:?}");
        // A 0.3 % threshold is below what 10 repetitions resolve at CV 1 %.
        let t = target("0.3%");
        let c = calibrate(&[&t], &series(&values), &Settings::default(), "test", true, &opts);
        let r = &c.rows[0];
        assert!(r.reach.unwrap().below_detectable, "{r:?}");
        let need = r.reach.unwrap().repetitions_needed.unwrap();
        assert!(need > 10, "{r:?}");
        assert!(r.note.contains("raise the threshold"), "{}", r.note);
        // The report marks it (⚠): tests/calibrate_cli.rs.
    }

    #[test]
    fn deterministic_and_dipping_series() {
        let t = target("3%");
        let c = calibrate(
            &[&t],
            &series(&[32.0; 10]),
            &Settings::default(),
            "x",
            false,
            &CalibrateOptions::default(),
        );
        let r = &c.rows[0];
        assert!(r.deterministic && r.cv == 0.0 && r.reach.unwrap().suggested_threshold == Some(0.0));
        // Two clock dips of +6 % among 20 quiet values.
        let mut v: Vec<f64> = (0..18).map(|i| 1000.0 + f64::from(i % 3)).collect();
        v.extend([1060.0, 1061.0]);
        let opts = CalibrateOptions {
            trials: 30,
            ..CalibrateOptions::default()
        };
        let c = calibrate(&[&t], &series(&v), &Settings::default(), "x", false, &opts);
        let r = &c.rows[0];
        assert!((r.dip_share - 0.1).abs() < 1e-12, "{r:?}");
        assert!((r.outlier_rate - 0.1).abs() < 1e-12, "{r:?}");
    }
}
