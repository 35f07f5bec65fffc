//! Health sampling: one device read through the [`Gpu`] trait before and after each repetition,
//! each judged ([`assess`]) and aggregated into [`Health`]. The health data and the rules that judge
//! it are `cgp_core::gpu::health`'s.

use std::collections::BTreeSet;

use super::device::Reading;
use super::driver::Gpu;
use super::health::{Health, LOW_CLOCK_REASON, RepHealth, ThrottlePolicy, assess};

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
