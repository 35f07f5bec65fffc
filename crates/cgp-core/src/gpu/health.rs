//! GPU health around each repetition: clocks, temperature, power, energy and throttle reasons.
//!
//! A repetition is read once before and once after. It is marked throttled when either reading
//! shows a slowdown reason (power cap, thermal or hardware slowdown) or, with clocks locked by
//! cgp-gate, an SM clock under `min_clock_fraction` of the locked clock. Marked repetitions are
//! re-run up to `max_throttle_reruns` times ([`should_rerun`]); what remains is reported.

use serde::{Deserialize, Serialize};

use super::device::{Reading, ThrottleReasons};

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
