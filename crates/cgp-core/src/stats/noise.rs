//! The noise model shared by the power simulation (`examples/power.rs`), `cgp-gate calibrate` and
//! `docs/statistics.md`: one definition, so the documented numbers and the calibration mean the
//! same thing. Everything drawn from it is SYNTHETIC.
//!
//! Per repetition, a sample is `mu * job * exp(sigma * z) * event` where
//! - `z` is standard normal and `sigma = sqrt(ln(1 + cv^2))`: a log-normal body with CV `cv`;
//! - `event` is a clock dip with probability `dip_rate` (the sample is slower by a uniform
//!   `dip_lo..dip_hi`), else a preemption with probability `preempt_rate` (slower by
//!   `preempt_factor`), else 1;
//! - `job` is the job's offset: `exp(shared + own)`, `shared` common to every metric of a job and
//!   `own` per metric, each normal with the given standard deviations (drawn by the caller once per
//!   job, [`NoiseModel::job_offset`]).
//!
//! "Slower" is in the metric's bad direction: for a throughput the event divides instead.

use super::rng::Rng;

/// Parameters of the noise of one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseModel {
    /// CV of the log-normal body (0.01 = 1 %).
    pub cv: f64,
    /// Share of repetitions with a clock dip.
    pub dip_rate: f64,
    /// Range of the dip's slowdown (0.03..0.09 = 3 to 9 % slower).
    pub dip_lo: f64,
    pub dip_hi: f64,
    /// Share of repetitions preempted.
    pub preempt_rate: f64,
    /// Slowdown factor of a preempted repetition (1.3 = 30 % slower).
    pub preempt_factor: f64,
}

impl NoiseModel {
    /// The documented default runner: CV `cv`, 3 % clock dips of 3-9 %, 1 % preemptions of 1.3x.
    pub fn documented(cv: f64) -> Self {
        Self {
            cv,
            dip_rate: 0.03,
            dip_lo: 0.03,
            dip_hi: 0.09,
            preempt_rate: 0.01,
            preempt_factor: 1.3,
        }
    }

    /// Clean log-normal noise only.
    pub fn clean(cv: f64) -> Self {
        Self {
            cv,
            dip_rate: 0.0,
            dip_lo: 0.0,
            dip_hi: 0.0,
            preempt_rate: 0.0,
            preempt_factor: 1.0,
        }
    }

    /// One sample around `mu`; `higher_is_better` turns slowdowns into drops.
    pub fn sample(&self, rng: &mut Rng, mu: f64, higher_is_better: bool) -> f64 {
        let sigma = (1.0 + self.cv * self.cv).ln().sqrt();
        let body = (sigma * rng.normal()).exp();
        let u = rng.next_f64();
        let event = if u < self.dip_rate {
            1.0 + self.dip_lo + (self.dip_hi - self.dip_lo) * rng.next_f64()
        } else if u < self.dip_rate + self.preempt_rate {
            self.preempt_factor
        } else {
            1.0
        };
        let event = if higher_is_better { 1.0 / event } else { event };
        mu * body * event
    }

    /// `n` samples around `mu`.
    pub fn samples(&self, rng: &mut Rng, n: usize, mu: f64, higher_is_better: bool) -> Vec<f64> {
        (0..n).map(|_| self.sample(rng, mu, higher_is_better)).collect()
    }

    /// A job's multiplicative offset from a shared log-offset and a per-metric standard deviation.
    pub fn job_offset(rng: &mut Rng, shared: f64, own_sd: f64) -> f64 {
        (shared + own_sd * rng.normal()).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_model_has_its_stated_event_rates() {
        let m = NoiseModel::documented(0.001);
        let mut rng = Rng::new(3);
        let n = 200_000;
        let xs = m.samples(&mut rng, n, 1.0, false);
        let dips = xs.iter().filter(|x| (1.02..1.10).contains(*x)).count() as f64 / n as f64;
        let pre = xs.iter().filter(|x| **x > 1.2).count() as f64 / n as f64;
        assert!((0.027..0.033).contains(&dips), "{dips}");
        assert!((0.008..0.012).contains(&pre), "{pre}");
        let up = NoiseModel::documented(0.001).samples(&mut rng, 1000, 1.0, true);
        assert!(up.iter().all(|x| *x < 1.01));
    }
}
