//! GPU health around each repetition: clocks, temperature, power, energy and throttle reasons.
//!
//! A repetition is read once before and once after. It is marked throttled when either reading
//! shows a slowdown reason (power cap, thermal or hardware slowdown) or, with clocks locked by
//! cgp-gate, an SM clock under `min_clock_fraction` of the locked clock. Marked repetitions are
//! re-run up to `max_throttle_reruns` times ([`should_rerun`]); what remains is reported.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::device::{Gpu, Reading, ThrottleReasons};

/// Health of the GPU during the run, where known.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Health {
    pub sm_clock_mhz: Option<[u32; 2]>,
    pub mem_clock_mhz: Option<[u32; 2]>,
    pub temperature_c: Option<[u32; 2]>,
    pub power_w: Option<[f64; 2]>,
    pub energy_j: Option<f64>,
    pub throttled_reps: u32,
    pub rerun_reps: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The health of one repetition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepHealth {
    /// A slowdown reason was seen, or the SM clock was low: re-run or mark.
    pub throttled: bool,
    /// Slowdown reasons seen (snake_case), plus `sm_clock_below_min` for a low clock.
    pub reasons: Vec<String>,
    pub sm_clock_min: Option<u32>,
    pub sm_clock_max: Option<u32>,
    pub mem_clock_min: Option<u32>,
    pub mem_clock_max: Option<u32>,
    pub temperature_min: Option<u32>,
    pub temperature_max: Option<u32>,
    pub power_w_min: Option<f64>,
    pub power_w_max: Option<f64>,
    /// Energy the GPU used between the two readings, from NVML's energy counter.
    pub energy_j: Option<f64>,
}

/// Name of the reason recorded when the SM clock fell under the minimum fraction.
pub const LOW_CLOCK_REASON: &str = "sm_clock_below_min";

/// Judge one repetition from its readings. `locked_sm_mhz` is the clock cgp-gate locked (none
/// when ncu or nobody locks: then only throttle reasons count, since the clock between ncu's
/// runs is not the clock it profiled at).
///
/// A reading that reports `gpu_idle` is not checked against the minimum clock: an idle GPU
/// lowering its clock is not a slow measurement.
pub fn assess(
    before: Option<&Reading>,
    after: &Reading,
    locked_sm_mhz: Option<u32>,
    min_clock_fraction: f64,
) -> RepHealth {
    let readings: Vec<&Reading> = before.into_iter().chain(std::iter::once(after)).collect();
    let range = |f: &dyn Fn(&Reading) -> Option<u32>| {
        let vals: Vec<u32> = readings.iter().filter_map(|r| f(r)).collect();
        (vals.iter().min().copied(), vals.iter().max().copied())
    };
    let (sm_clock_min, sm_clock_max) = range(&|r| r.sm_clock_mhz);
    let (mem_clock_min, mem_clock_max) = range(&|r| r.mem_clock_mhz);
    let (temperature_min, temperature_max) = range(&|r| r.temperature_c);
    let (pmin, pmax) = range(&|r| r.power_mw);

    let seen = readings
        .iter()
        .filter_map(|r| r.throttle)
        .fold(ThrottleReasons::NONE, ThrottleReasons::union);
    let slowdown = ThrottleReasons(seen.0 & ThrottleReasons::SLOWDOWN.0);
    let mut reasons = slowdown.names();

    let low_clock = locked_sm_mhz.is_some_and(|locked| {
        let floor = f64::from(locked) * min_clock_fraction;
        readings.iter().any(|r| {
            let idle = r.throttle.is_some_and(|t| t.contains(ThrottleReasons::GPU_IDLE));
            !idle && r.sm_clock_mhz.is_some_and(|c| f64::from(c) < floor)
        })
    });
    if low_clock {
        reasons.push(LOW_CLOCK_REASON.to_owned());
    }

    let energy_j = match (before.and_then(|b| b.energy_mj), after.energy_mj) {
        // The counter only grows; a smaller value means it was reset (driver reload).
        (Some(b), Some(a)) if a >= b => Some((a - b) as f64 / 1000.0),
        _ => None,
    };

    RepHealth {
        throttled: !reasons.is_empty(),
        reasons,
        sm_clock_min,
        sm_clock_max,
        mem_clock_min,
        mem_clock_max,
        temperature_min,
        temperature_max,
        power_w_min: pmin.map(|p| f64::from(p) / 1000.0),
        power_w_max: pmax.map(|p| f64::from(p) / 1000.0),
        energy_j,
    }
}

/// When a repetition counts as throttled and how often it is measured again. The spec's
/// `Settings` (`min_clock_fraction`, `max_throttle_reruns`) converts into this.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThrottlePolicy {
    /// A repetition whose SM clock fell under this fraction of the locked clock is throttled.
    pub min_clock_fraction: f64,
    /// How many times a throttled repetition is re-run before it is kept and marked.
    pub max_reruns: u32,
}

/// Whether a repetition should be measured again: it was throttled and it has been re-run
/// fewer than `max_reruns` times (`attempts` counts re-runs already made of this repetition, 0
/// at first).
pub fn should_rerun(rep: &RepHealth, attempts: u32, policy: impl Into<ThrottlePolicy>) -> bool {
    rep.throttled && attempts < policy.into().max_reruns
}

/// Samples one device around each repetition and aggregates into [`Health`].
#[derive(Debug, Clone)]
pub struct HealthSampler {
    device: u32,
    locked_sm_mhz: Option<u32>,
    min_clock_fraction: f64,
    before: Option<Reading>,
    reps: Vec<RepHealth>,
    reruns: u32,
}

impl HealthSampler {
    /// `locked_sm_mhz`: the SM clock cgp-gate locked (from `ClockGuard::locked`), or `None`.
    pub fn new(device: u32, locked_sm_mhz: Option<u32>, policy: impl Into<ThrottlePolicy>) -> Self {
        Self {
            device,
            locked_sm_mhz,
            min_clock_fraction: policy.into().min_clock_fraction,
            before: None,
            reps: Vec::new(),
            reruns: 0,
        }
    }

    /// Read the GPU just before a repetition.
    pub fn before(&mut self, gpu: &dyn Gpu) {
        self.before = Some(gpu.read(self.device));
    }

    /// Read the GPU just after a repetition, judge it and keep it for [`Self::summary`].
    pub fn after(&mut self, gpu: &dyn Gpu) -> RepHealth {
        let after = gpu.read(self.device);
        let rep = assess(
            self.before.take().as_ref(),
            &after,
            self.locked_sm_mhz,
            self.min_clock_fraction,
        );
        self.reps.push(rep.clone());
        rep
    }

    /// Count a repetition that was re-run because it was throttled.
    pub fn record_rerun(&mut self) {
        self.reruns += 1;
    }

    /// The repetitions judged so far, in order (re-runs included).
    pub fn reps(&self) -> &[RepHealth] {
        &self.reps
    }

    /// Ranges over all repetitions, total energy, and counts. `energy_j` is the sum over the
    /// repetitions whose energy is known; it includes every replay pass ncu made, and any other
    /// work on the GPU at the time.
    pub fn summary(&self) -> Health {
        let reps = &self.reps;
        fn span<T: PartialOrd + Copy>(
            lo: impl Iterator<Item = Option<T>>,
            hi: impl Iterator<Item = Option<T>>,
        ) -> Option<[T; 2]> {
            let lo = lo.flatten().reduce(|a, b| if b < a { b } else { a })?;
            let hi = hi.flatten().reduce(|a, b| if b > a { b } else { a })?;
            Some([lo, hi])
        }
        let energies: Vec<f64> = reps.iter().filter_map(|r| r.energy_j).collect();
        let throttled: Vec<&RepHealth> = reps.iter().filter(|r| r.throttled).collect();
        let throttled_reps = u32::try_from(throttled.len()).unwrap_or(u32::MAX);

        let mut notes = Vec::new();
        if !throttled.is_empty() {
            let reasons: BTreeSet<&str> = throttled
                .iter()
                .flat_map(|r| r.reasons.iter().map(String::as_str))
                .collect();
            notes.push(format!(
                "{} of {} repetitions ran throttled ({}); {} re-run",
                throttled.len(),
                reps.len(),
                reasons.into_iter().collect::<Vec<_>>().join(", "),
                self.reruns
            ));
        }
        if let Some(locked) = self.locked_sm_mhz
            && throttled
                .iter()
                .any(|r| r.reasons.iter().any(|x| x == LOW_CLOCK_REASON))
        {
            notes.push(format!(
                "SM clock fell under {}% of the locked {locked} MHz",
                crate::foundation::units::format_number(self.min_clock_fraction * 100.0)
            ));
        }
        if !reps.is_empty() && energies.len() < reps.len() {
            if energies.is_empty() {
                notes.push("energy not measured: the GPU has no NVML energy counter".to_owned());
            } else {
                notes.push(format!(
                    "energy measured for {} of {} repetitions",
                    energies.len(),
                    reps.len()
                ));
            }
        }

        Health {
            sm_clock_mhz: span(
                reps.iter().map(|r| r.sm_clock_min),
                reps.iter().map(|r| r.sm_clock_max),
            ),
            mem_clock_mhz: span(
                reps.iter().map(|r| r.mem_clock_min),
                reps.iter().map(|r| r.mem_clock_max),
            ),
            temperature_c: span(
                reps.iter().map(|r| r.temperature_min),
                reps.iter().map(|r| r.temperature_max),
            ),
            power_w: span(
                reps.iter().map(|r| r.power_w_min),
                reps.iter().map(|r| r.power_w_max),
            ),
            energy_j: (!energies.is_empty()).then(|| energies.iter().sum()),
            throttled_reps,
            rerun_reps: self.reruns,
            notes,
        }
    }
}
