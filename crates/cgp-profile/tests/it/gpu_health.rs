//! Health sampling around repetitions, on scripted (synthetic) GPU readings.

use cgp_core::gpu::health::{LOW_CLOCK_REASON, assess};
use cgp_core::gpu::{Reading, ThrottleReasons, should_rerun};
use cgp_profile::gpu::{FakeDevice, FakeGpu, HealthSampler};
use cgp_spec::spec::model::Settings;

fn reading(sm: u32, temp: u32, power_w: u32, energy_j: u64, throttle: ThrottleReasons) -> Reading {
    Reading {
        sm_clock_mhz: Some(sm),
        mem_clock_mhz: Some(2619),
        temperature_c: Some(temp),
        power_mw: Some(power_w * 1000),
        energy_mj: Some(energy_j * 1000),
        throttle: Some(throttle),
    }
}

const LOCKED: ThrottleReasons = ThrottleReasons::APPLICATIONS_CLOCKS_SETTING;

#[test]
fn clean_repetition_is_not_throttled() {
    let b = reading(1590, 40, 300, 1000, LOCKED);
    let a = reading(1590, 47, 420, 1012, LOCKED);
    let r = assess(Some(&b), &a, Some(1590), 0.9);
    assert!(!r.throttled);
    assert!(r.reasons.is_empty());
    assert_eq!((r.temperature_min, r.temperature_max), (Some(40), Some(47)));
    assert_eq!((r.power_w_min, r.power_w_max), (Some(300.0), Some(420.0)));
    assert_eq!(r.energy_j, Some(12.0));
}

#[test]
fn thermal_slowdown_marks_and_reruns() {
    let b = reading(1590, 80, 600, 0, LOCKED);
    let a = reading(
        1590,
        88,
        690,
        30,
        LOCKED.union(ThrottleReasons::SW_THERMAL_SLOWDOWN),
    );
    let r = assess(Some(&b), &a, None, 0.9);
    assert!(r.throttled);
    assert_eq!(r.reasons, ["sw_thermal_slowdown"]);
    let settings = Settings::default();
    assert_eq!(settings.max_throttle_reruns, 2);
    assert!(should_rerun(&r, 0, &settings));
    assert!(should_rerun(&r, 1, &settings));
    assert!(!should_rerun(&r, 2, &settings));
    let clean = assess(None, &reading(1590, 40, 300, 0, LOCKED), None, 0.9);
    assert!(!should_rerun(&clean, 0, &settings));
}

#[test]
fn low_clock_counts_only_when_locked_and_busy() {
    // 1300 < 0.9 * 1590 = 1431.
    let slow = reading(1300, 60, 500, 0, LOCKED);
    let r = assess(None, &slow, Some(1590), 0.9);
    assert!(r.throttled);
    assert_eq!(r.reasons, [LOW_CLOCK_REASON]);
    // Unknown locked clock (ncu locks): the clock between ncu runs says nothing.
    assert!(!assess(None, &slow, None, 0.9).throttled);
    // An idle GPU may lower its clock.
    let idle = reading(345, 35, 70, 0, ThrottleReasons::GPU_IDLE);
    assert!(!assess(None, &idle, Some(1590), 0.9).throttled);
    // Exactly at the floor is fine.
    assert!(!assess(None, &reading(1431, 60, 500, 0, LOCKED), Some(1590), 0.9).throttled);
}

#[test]
fn energy_counter_reset_or_missing_gives_no_energy() {
    let b = reading(1590, 40, 300, 5000, LOCKED);
    let a = reading(1590, 40, 300, 10, LOCKED);
    assert_eq!(assess(Some(&b), &a, None, 0.9).energy_j, None);
    let no_counter = Reading {
        energy_mj: None,
        ..a.clone()
    };
    assert_eq!(assess(Some(&b), &no_counter, None, 0.9).energy_j, None);
    assert_eq!(assess(None, &a, None, 0.9).energy_j, None);
}

#[test]
fn sampler_aggregates_a_run() {
    let mut dev = FakeDevice::new("NVIDIA H200");
    // Synthetic: three repetitions, the second one power-capped and re-run once.
    dev.readings = vec![
        reading(1590, 41, 310, 100, LOCKED),
        reading(1590, 52, 450, 110, LOCKED),
        reading(1590, 52, 455, 110, LOCKED),
        reading(1500, 70, 700, 125, LOCKED.union(ThrottleReasons::SW_POWER_CAP)),
        reading(1590, 55, 460, 125, LOCKED),
        reading(1590, 58, 470, 134, LOCKED),
        reading(1590, 58, 470, 134, LOCKED),
        reading(1590, 60, 480, 143, LOCKED),
    ];
    let gpu = FakeGpu::new(vec![dev]);
    let settings = Settings::default();
    let mut s = HealthSampler::new(0, Some(1590), &settings);
    let mut flagged = Vec::new();
    for rep in 0..3 {
        let mut attempts = 0;
        loop {
            s.before(&gpu);
            let h = s.after(&gpu);
            if should_rerun(&h, attempts, &settings) {
                attempts += 1;
                s.record_rerun();
                continue;
            }
            flagged.push((rep, h.throttled));
            break;
        }
    }
    assert_eq!(flagged, [(0, false), (1, false), (2, false)]);
    assert_eq!(s.reps().len(), 4);
    let h = s.summary();
    assert_eq!(h.sm_clock_mhz, Some([1500, 1590]));
    assert_eq!(h.mem_clock_mhz, Some([2619, 2619]));
    assert_eq!(h.temperature_c, Some([41, 70]));
    assert_eq!(h.power_w, Some([310.0, 700.0]));
    assert_eq!(h.energy_j, Some(10.0 + 15.0 + 9.0 + 9.0));
    assert_eq!((h.throttled_reps, h.rerun_reps), (1, 1));
    assert_eq!(
        h.notes,
        ["1 of 4 repetitions ran throttled (sw_power_cap); 1 re-run"]
    );
}

#[test]
fn sampler_without_energy_counter_says_so() {
    let mut dev = FakeDevice::new("Tesla P100-PCIE-16GB");
    dev.energy_error = Some(cgp_profile::gpu::GpuError::NotSupported);
    let gpu = FakeGpu::new(vec![dev]);
    let mut s = HealthSampler::new(0, None, &Settings::default());
    s.before(&gpu);
    s.after(&gpu);
    let h = s.summary();
    assert_eq!(h.energy_j, None);
    assert_eq!(
        h.notes,
        ["energy not measured: the GPU has no NVML energy counter"]
    );
    // The default fake reading is an idle GPU: no throttling.
    assert_eq!(h.throttled_reps, 0);
    assert_eq!(h.temperature_c, Some([35, 35]));
}

#[test]
fn low_clock_note_names_the_locked_clock() {
    let mut dev = FakeDevice::new("NVIDIA H200");
    dev.readings = vec![
        reading(1590, 50, 400, 0, LOCKED),
        reading(1200, 50, 400, 1, LOCKED),
    ];
    let gpu = FakeGpu::new(vec![dev]);
    let settings = Settings {
        max_throttle_reruns: 0,
        ..Settings::default()
    };
    let mut s = HealthSampler::new(0, Some(1590), &settings);
    s.before(&gpu);
    let h = s.after(&gpu);
    assert!(h.throttled && !should_rerun(&h, 0, &settings));
    let notes = s.summary().notes;
    assert_eq!(
        notes,
        [
            "1 of 1 repetitions ran throttled (sm_clock_below_min); 0 re-run",
            "SM clock fell under 90% of the locked 1590 MHz"
        ]
    );
}
