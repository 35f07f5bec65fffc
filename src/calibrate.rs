//! `cgp-gate calibrate`: the runner's own noise, and what the gate can and cannot see on it.
//!
//! From repetitions of unchanged code (a live run, or every repetition a recording holds), for
//! every target x size x kernel x metric:
//! - the noise: robust CV (`1.4826 MAD / median`), the share of Tukey outliers, and the share of
//!   clock dips (outliers on the slow side: above the upper fence for durations, below the lower
//!   fence for throughputs);
//! - `suggested_threshold`: the smallest relative threshold at which identical code passes
//!   outright (not `inconclusive`) in 95 % of checks: the 95th percentile, over simulated A/A
//!   checks, of the bad end of the interval the gate computes;
//! - `min_detectable`: the smallest relative change that the gate, with the spec's threshold,
//!   repetitions, baseline repetitions and re-measurement, reports as a regression in 95 % of
//!   checks (it is above the threshold by the noise margin);
//! - where the spec's threshold is below `suggested_threshold`, the repetitions it would take.
//!
//! The simulated checks draw from [`NoiseModel`] fitted to the row (the model of
//! docs/statistics.md, with the row's CV and clock-dip share) and run the gate's own
//! [`simulate_check`] (`judge_all` plus `check`'s re-measurement policy) at the spec's `alpha`
//! split over the run's tested rows (Holm's first step). Deterministic. Pure: the command layer
//! measures and writes files; `report::calibrate` renders the table.

use serde::Serialize;

use crate::samples::SampleSet;
use crate::spec::model::{Settings, Target};
use crate::stats::noise::NoiseModel;
use crate::stats::remeasure::{SimRow, simulate_check};
use crate::stats::rng::{Rng, seed_for};
use crate::stats::{Config, summarize, tukey_outliers};
use crate::threshold::{Direction, Threshold, ThresholdKind};

/// Version of the calibration JSON.
pub const CALIBRATION_VERSION: u32 = 1;

/// Share of simulated checks that must pass (A/A) or find the change.
pub const COVERAGE: f64 = 0.95;

/// Largest repetition count searched for when the spec's threshold is too tight.
pub const MAX_SEARCH_REPETITIONS: u32 = 1000;

/// Settings of a calibration.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Simulated checks per estimate.
    pub trials: usize,
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            trials: 400,
            seed: 0x6361_6c69_6272_6174,
        }
    }
}

/// One target x size x kernel x metric. Relative quantities are fractions (0.012 = 1.2 %).
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// The spec's relative threshold, when it is one (`exact`: 0).
    pub spec_threshold: Option<f64>,
    /// Smallest relative change found in 95 % of checks at the spec's settings; `None` for
    /// `min:`/`max:` limits.
    pub min_detectable: Option<f64>,
    /// Smallest threshold at which identical code passes in 95 % of checks; `None` for limits.
    pub suggested_threshold: Option<f64>,
    /// The spec's threshold is below `suggested_threshold`.
    pub below_detectable: bool,
    /// Check repetitions that would make the spec's threshold reachable (when it is below).
    pub repetitions_needed: Option<u32>,
    /// One sentence for the reader.
    pub note: String,
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

/// The gate's settings for one row.
struct Gate<'a> {
    threshold: &'a Threshold,
    repetitions: u32,
    max_repetitions: u32,
    baseline_repetitions: u32,
    samples_per_rep: usize,
    cfg: Config,
    higher: bool,
    /// The row's median: the simulation runs at the real level, so `min_effect` keeps its meaning.
    mu: f64,
}

impl Gate<'_> {
    /// One simulated check of a true relative change `delta` (in the bad direction): `reps`
    /// check repetitions, doubtful rows re-measured up to `max_reps`, a baseline of `base_reps`.
    /// Returns the judgement of the last round.
    fn check(
        &self,
        model: &NoiseModel,
        rng: &mut Rng,
        delta: f64,
        reps: u32,
        max_reps: u32,
        base_reps: u32,
    ) -> crate::stats::Judgement {
        let spr = self.samples_per_rep;
        let mu = self.mu;
        let baseline = model.samples(rng, base_reps as usize * spr, mu, self.higher);
        let factor = if self.higher { 1.0 - delta } else { 1.0 + delta };
        let rows = [SimRow {
            key: String::new(),
            baseline: &baseline,
            threshold: self.threshold,
            history: &[],
            baseline_runs: &[],
        }];
        let mut draw = |_: usize, r: u32| {
            model
                .samples(rng, r as usize * spr, mu * factor, self.higher)
                .into_iter()
                .map(|x| vec![x])
                .collect()
        };
        let out = simulate_check(&rows, &self.cfg, reps, max_reps, &mut draw);
        out.judgements.into_iter().next().unwrap_or_else(|| {
            crate::stats::judge(
                &crate::stats::Comparison {
                    key: String::new(),
                    baseline: Some(&baseline),
                    candidate: &baseline,
                    threshold: self.threshold,
                    history: &[],
                    baseline_runs: &[],
                    candidate_runs: &[],
                },
                &self.cfg,
            )
        })
    }

    /// 95th percentile of the interval's bad end under no change, first round only, at `reps`
    /// check repetitions.
    fn noise_floor(&self, model: &NoiseModel, seed: u64, trials: usize, reps: u32) -> f64 {
        let mut rng = Rng::new(seed);
        let base_reps = self.baseline_repetitions.max(reps);
        let mut ends: Vec<f64> = (0..trials)
            .map(|_| {
                let j = self.check(model, &mut rng, 0.0, reps, reps, base_reps);
                j.change_ci
                    .map_or(f64::INFINITY, |[lo, hi]| if self.higher { -lo } else { hi })
            })
            .collect();
        ends.sort_by(f64::total_cmp);
        let idx = ((trials as f64 * COVERAGE).ceil() as usize).clamp(1, trials) - 1;
        ends[idx].max(0.0)
    }

    /// Share of checks that report a regression for a true change `delta`.
    fn detection(&self, model: &NoiseModel, seed: u64, trials: usize, delta: f64) -> f64 {
        let mut rng = Rng::new(seed);
        let found = (0..trials)
            .filter(|_| {
                self.check(
                    model,
                    &mut rng,
                    delta,
                    self.repetitions,
                    self.max_repetitions,
                    self.baseline_repetitions,
                )
                .verdict
                    == crate::results::RowVerdict::Regression
            })
            .count();
        found as f64 / trials as f64
    }

    /// Smallest change found in 95 % of checks: bracket by doubling the margin over the
    /// threshold, then bisect to 0.05 percentage points.
    fn min_detectable(&self, model: &NoiseModel, seed: u64, trials: usize, t: f64) -> Option<f64> {
        let ok = |d: f64| self.detection(model, seed, trials, d) >= COVERAGE;
        let mut margin = 0.0025;
        let mut hi = t + margin;
        while !ok(hi) {
            margin *= 2.0;
            hi = t + margin;
            if margin > 4.0 {
                return None;
            }
        }
        let mut lo = t + margin / 2.0;
        if margin <= 0.0025 {
            lo = t;
        }
        while hi - lo > 0.0005 {
            let mid = (lo + hi) / 2.0;
            if ok(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(hi)
    }
}

/// Round a fraction up to the next 0.1 percentage point (a threshold people can write).
fn round_up(x: f64) -> f64 {
    ((x * 1000.0).ceil() / 1000.0).max(0.001)
}

/// Calibrate every measured series of the spec's metrics.
pub fn calibrate(
    targets: &[&Target],
    samples: &SampleSet,
    settings: &Settings,
    source: &str,
    synthetic: bool,
    opts: &Options,
) -> Calibration {
    let wanted: Vec<(&Target, &crate::samples::Series, &Threshold)> = samples
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
        .filter(|(_, s, _)| !constant(&s.values))
        .count()
        .max(1);
    let cfg = Config {
        alpha: settings.alpha / family as f64,
        confidence: settings.confidence,
        ..Config::default()
    };
    let rows = wanted
        .iter()
        .map(|(t, s, th)| row(t, s, th, &cfg, opts))
        .collect();
    Calibration {
        schema_version: CALIBRATION_VERSION,
        source: source.to_owned(),
        synthetic,
        alpha: settings.alpha,
        family,
        trials: opts.trials,
        rows,
    }
}

fn row(
    target: &Target,
    s: &crate::samples::Series,
    threshold: &Threshold,
    cfg: &Config,
    opts: &Options,
) -> CalibrationRow {
    let values = &s.values;
    let summary = summarize(values);
    let mut reps = s.reps.clone();
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
        _ => None,
    };
    let mut out = CalibrationRow {
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
        spec_threshold,
        min_detectable: None,
        suggested_threshold: None,
        below_detectable: false,
        repetitions_needed: None,
        note: String::new(),
    };
    let Some(t) = spec_threshold else {
        out.note = "min/max limit: judged against the limit, not against a baseline".to_owned();
        return out;
    };
    if deterministic {
        out.min_detectable = Some(t);
        out.suggested_threshold = Some(0.0);
        out.note = "deterministic: every repetition gave the same value, so any change beyond the threshold is found exactly".to_owned();
        return out;
    }
    if values.len() < 3 || median <= 0.0 || values.iter().any(|x| *x <= 0.0) {
        out.note = "too few samples, or values <= 0: no calibration".to_owned();
        return out;
    }
    // Dip sizes as seen: relative distance of the slow outliers from the median.
    let sizes: Vec<f64> = dips.iter().map(|x| (x / median - 1.0).abs()).collect();
    let (dip_lo, dip_hi) = sizes
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(*x), b.max(*x)));
    let model = NoiseModel {
        cv: out.cv.max(1e-6),
        dip_rate: out.dip_share,
        dip_lo: if sizes.is_empty() { 0.0 } else { dip_lo },
        dip_hi,
        preempt_rate: 0.0,
        preempt_factor: 1.0,
    };
    let gate = Gate {
        threshold,
        repetitions: target.repetitions,
        max_repetitions: target.max_repetitions,
        baseline_repetitions: target.baseline_repetitions,
        samples_per_rep: values.len().div_ceil(n_reps).max(1),
        cfg: cfg.clone(),
        higher,
        mu: median,
    };
    let key = format!(
        "{}/{}/{}/{}",
        s.key.target, s.key.size, s.key.kernel, s.key.metric
    );
    let seed = seed_for(opts.seed, &key);
    let trials = opts.trials.max(20);
    let floor = round_up(gate.noise_floor(&model, seed, trials, target.repetitions));
    out.suggested_threshold = Some(floor);
    out.min_detectable = gate.min_detectable(&model, seed ^ 1, trials, t);
    if threshold.kind == ThresholdKind::Exact {
        out.note = "exact threshold on a noisy metric: judged by the test against no change".to_owned();
        return out;
    }
    if t < floor {
        out.below_detectable = true;
        let mut r = target.repetitions;
        let needed = loop {
            r = r.saturating_mul(2).min(MAX_SEARCH_REPETITIONS);
            if gate.noise_floor(&model, seed, trials, r) < t {
                break Some(r);
            }
            if r >= MAX_SEARCH_REPETITIONS {
                break None;
            }
        };
        // Narrow the doubling step down to within 10 % of the smallest count that reaches it.
        out.repetitions_needed = needed.map(|hi| {
            let (mut lo, mut hi) = (hi / 2, hi);
            while hi - lo > (hi / 10).max(1) {
                let mid = (lo + hi) / 2;
                if gate.noise_floor(&model, seed, trials, mid) < t {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            hi
        });
        out.note = match out.repetitions_needed {
            Some(r) => format!(
                "the {} threshold is below what this runner resolves at {} repetitions ({} needed): identical code would often be inconclusive; raise the threshold to {} or repetitions to {r}",
                pct(t),
                target.repetitions,
                pct(floor),
                pct(floor)
            ),
            None => format!(
                "the {} threshold is below what this runner resolves even at {MAX_SEARCH_REPETITIONS} repetitions; raise it to at least {}",
                pct(t),
                pct(floor)
            ),
        };
    } else {
        out.note = format!("the {} threshold is above the noise floor {}", pct(t), pct(floor));
    }
    out
}

/// A fraction as a percentage with one decimal.
pub fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::SeriesKey;

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
        let opts = Options {
            trials: 60,
            ..Options::default()
        };
        let t = target("3%");
        let c = calibrate(&[&t], &series(&values), &Settings::default(), "test", true, &opts);
        let r = &c.rows[0];
        assert!((0.006..0.016).contains(&r.cv), "{r:?}");
        let s = r.suggested_threshold.unwrap();
        assert!((0.005..0.03).contains(&s), "{r:?}");
        let d = r.min_detectable.unwrap();
        assert!(d > 0.03 && d < 0.07, "{r:?}");
        assert!(!r.below_detectable, "{r:?}");
        // A 0.3 % threshold is below what 10 repetitions resolve at CV 1 %.
        let t = target("0.3%");
        let c = calibrate(&[&t], &series(&values), &Settings::default(), "test", true, &opts);
        let r = &c.rows[0];
        assert!(r.below_detectable, "{r:?}");
        let need = r.repetitions_needed.unwrap();
        assert!(need > 10, "{r:?}");
        assert!(r.note.contains("raise the threshold"), "{}", r.note);
        let md = crate::report::calibrate::markdown(&c);
        assert!(md.contains("| t |") && md.contains("⚠"), "{md}");
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
            &Options::default(),
        );
        let r = &c.rows[0];
        assert!(r.deterministic && r.cv == 0.0 && r.suggested_threshold == Some(0.0));
        // Two clock dips of +6 % among 20 quiet values.
        let mut v: Vec<f64> = (0..18).map(|i| 1000.0 + f64::from(i % 3)).collect();
        v.extend([1060.0, 1061.0]);
        let opts = Options {
            trials: 30,
            ..Options::default()
        };
        let c = calibrate(&[&t], &series(&v), &Settings::default(), "x", false, &opts);
        let r = &c.rows[0];
        assert!((r.dip_share - 0.1).abs() < 1e-12, "{r:?}");
        assert!((r.outlier_rate - 0.1).abs() < 1e-12, "{r:?}");
    }
}
