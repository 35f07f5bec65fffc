//! Power and false-alarm simulation of exactly what `check` and `ab` do, on the nested noise
//! model fitted to the H100 numbers (docs/statistics.md, section 6).
//!
//! `cargo run --release --example power [RUNS] [--reps N] [--max N] [--base N] [--launches N]
//! [--drift-pct P] [--ab-only]` (`--drift-pct`: two jobs differ by up to +-P %, default 0.9) (default 1000 runs per cell, and the spec defaults for the gate's settings).
//!
//! Everything printed is measured on SYNTHETIC data, not on a GPU. The noise model, per metric
//! and per simulated run, fitted to `/work/shared/gpu/h100-2026-11-24/README.md`:
//! - within a process (launch to launch): log-normal, sd uniform in 0.2-1.5 %;
//! - between processes: log-normal offset per process, sd uniform in 0-0.4 %;
//! - warm-up: launch 0 of every process is slower by uniform 3-7 %;
//! - clock dips: 1 % of launches slower by uniform 3-9 %;
//! - job drift: each job (the baseline's, the candidate's, each of 10 earlier baselines in the
//!   history) has an offset shared by all its metrics, uniform in +-0.45 %, so two jobs differ by
//!   up to +-0.9 % (measured: -0.89 % to +0.27 %).
//!
//! `check`: a 50-metric spec (one kernel at 50 sizes, each row its own size, lower is better,
//! threshold 3 %), read by the real loader (`cgp_spec::spec::load_str`) with the settings given
//! (`repetitions`, `max_repetitions`, `baseline_repetitions`). Every process is `--launches`
//! launches of the kernel, served by a simulated profiler (`run::simulate::SimProfiler`: the
//! `Profiler` trait, ncu's raw CSV page); the baseline is measured through it and stored as
//! `baseline update` stores it (`run::simulate::write_baseline`, with a history of 10 earlier
//! medians), and the check is the real `check` (`run::simulate::simulate_check`, i.e.
//! `run::check::run_check`: the work list, `run::measure` with the warm-up drop, the baselines
//! read from the store, `run::engine::until_decided`, the statistics and alpha spending).
//!
//! `ab`: 50 rows, each pair of processes (base, head) back to back shares a clock factor uniform
//! in +-3 % (the paired noise model of docs/ab-and-changes.md) on top of the model above (no job
//! drift: one job); the real `ab` (`run::simulate::simulate_ab`, i.e. `run::ab::run_ab`) on two
//! simulated profilers, one per tree.

use std::path::Path;

use cgp_core::stats::Config;
use cgp_core::stats::rng::{Rng, seed_for};
use cgp_engine::run::simulate::{SIM_METRIC, SimProfiler, simulate_ab, simulate_check, write_baseline};
use cgp_outcome::outcome::results::{Results, RowVerdict};
use cgp_profile::profile::Job;
use cgp_spec::spec::Spec;

#[path = "sims/pools.rs"]
mod pools;
use pools::wilson;

/// Metrics per simulated check (`--metrics`).
const METRICS: usize = 50;
const HISTORY: usize = 10;
const MU: f64 = 100_000.0;
/// Default half-range of a job's offset (two jobs differ by up to twice it); `--drift-pct`.
const JOB_HALF_RANGE: f64 = 0.0045;

/// What the simulated check takes from the spec.
struct Gate {
    /// One kernel `k` at `metrics` sizes (`{m: 0}` ...), each row its own size.
    spec: Spec,
    cfg: Config,
    repetitions: u32,
    max_repetitions: u32,
    baseline_repetitions: u32,
    warmup: u32,
    launches: usize,
    /// Half-range of a job's offset.
    drift: f64,
    /// Metrics (rows) per check: the Holm family.
    metrics: usize,
}

/// The simulated spec: one kernel at `metrics` sizes with the settings given (the loader's
/// defaults for the rest).
fn spec_text(reps: Option<u32>, max: Option<u32>, base: Option<u32>, metrics: usize) -> String {
    let mut spec = String::from(
        "version: 1\ntargets:\n  - name: k\n    command: [./k]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n",
    );
    for (key, v) in [
        ("repetitions", reps),
        ("max_repetitions", max),
        ("baseline_repetitions", base),
    ] {
        if let Some(v) = v {
            spec.push_str(&format!("    {key}: {v}\n"));
        }
    }
    spec.push_str("    sizes:\n");
    for m in 0..metrics {
        spec.push_str(&format!("      - {{m: {m}}}\n"));
    }
    spec
}

fn load(text: &str) -> Spec {
    cgp_spec::spec::load_str(text, Path::new("power.yaml"))
        .unwrap_or_else(|e| panic!("the simulated spec must load: {e}"))
}

fn gate(reps: Option<u32>, max: Option<u32>, base: Option<u32>, launches: usize, metrics: usize) -> Gate {
    let spec = load(&spec_text(reps, max, base, metrics));
    let t = &spec.targets[0];
    Gate {
        cfg: cgp_engine::run::engine::stats_config(&spec.settings),
        repetitions: t.repetitions,
        max_repetitions: t.max_repetitions,
        baseline_repetitions: t.baseline_repetitions,
        warmup: t.warmup,
        launches,
        drift: JOB_HALF_RANGE,
        metrics,
        spec,
    }
}

/// The row (size `m=<i>`) of a job.
fn index(job: &Job<'_>) -> usize {
    job.size.key().trim_start_matches("m=").parse().unwrap_or(0)
}

/// One metric's noise in one simulated run.
#[derive(Clone, Copy)]
struct Noise {
    within: f64,
    between: f64,
    warm: f64,
}

fn uniform(rng: &mut Rng, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * rng.next_f64()
}

fn noise(rng: &mut Rng) -> Noise {
    Noise {
        within: uniform(rng, 0.002, 0.015),
        between: uniform(rng, 0.0, 0.004),
        warm: uniform(rng, 0.03, 0.07),
    }
}

/// One process: `launches` launches at level `mu`, launch 0 a warm-up (the gate drops it), 1 % of
/// launches a clock dip.
fn process(rng: &mut Rng, n: &Noise, mu: f64, launches: usize) -> Vec<f64> {
    let off = n.between * rng.normal();
    (0..launches)
        .map(|l| {
            let mut x = mu * (off + n.within * rng.normal()).exp();
            if l == 0 {
                x *= 1.0 + n.warm;
            }
            if rng.next_f64() < 0.01 {
                x *= 1.0 + uniform(rng, 0.03, 0.09);
            }
            x
        })
        .collect()
}

/// The verdict of row `i` (size `m=<i>`) in a simulated run's results.
fn verdict(r: &Results, i: usize) -> RowVerdict {
    let size = format!("m={i}");
    r.rows
        .iter()
        .find(|x| x.key.size == size && x.key.metric == SIM_METRIC)
        .map_or(RowVerdict::Error, |x| x.verdict())
}

#[derive(Clone, Copy)]
struct Scenario {
    name: &'static str,
    shift: f64,
    uniform: bool,
}

const SCENARIOS: [Scenario; 9] = [
    Scenario {
        name: "no change",
        shift: 0.0,
        uniform: false,
    },
    Scenario {
        name: "uniform 2% shift",
        shift: 0.02,
        uniform: true,
    },
    Scenario {
        name: "1.5% slowdown",
        shift: 0.015,
        uniform: false,
    },
    Scenario {
        name: "2% slowdown",
        shift: 0.02,
        uniform: false,
    },
    Scenario {
        name: "3% slowdown",
        shift: 0.03,
        uniform: false,
    },
    Scenario {
        name: "4% slowdown",
        shift: 0.04,
        uniform: false,
    },
    Scenario {
        name: "5% slowdown",
        shift: 0.05,
        uniform: false,
    },
    Scenario {
        name: "7% slowdown",
        shift: 0.07,
        uniform: false,
    },
    Scenario {
        name: "10% slowdown",
        shift: 0.10,
        uniform: false,
    },
];

#[derive(Default, Clone, Copy)]
struct Tally {
    flagged: usize,
    inconclusive: usize,
    others: usize,
    /// Candidate processes, summed over runs and rows.
    processes: u64,
    /// Candidate processes of metric 0, summed over runs.
    processes0: u64,
    runs: usize,
}

fn job(rng: &mut Rng, half: f64) -> f64 {
    uniform(rng, -half, half)
}

fn one_check(s: Scenario, rng: &mut Rng, g: &Gate, seed: u64) -> (bool, bool, bool, u32, u32) {
    let base_job = job(rng, g.drift);
    let cand_job = job(rng, g.drift);
    let hist_jobs: Vec<f64> = (0..HISTORY).map(|_| job(rng, g.drift)).collect();
    let noises: Vec<Noise> = (0..g.metrics).map(|_| noise(rng)).collect();
    let mus: Vec<f64> = (0..g.metrics).map(|i| MU * (1.0 + 0.1 * i as f64)).collect();
    // Earlier baselines: the median of a baseline measured in its own job (its noise drawn from
    // the run-level model rather than from every launch, to keep the simulation fast).
    let histories: Vec<Vec<f64>> = noises
        .iter()
        .zip(&mus)
        .map(|(n, mu)| {
            let per_run = n.between.powi(2) + n.within.powi(2) / (g.launches.max(2) - 1) as f64;
            let se = (per_run / f64::from(g.baseline_repetitions)).sqrt();
            hist_jobs
                .iter()
                .map(|j| mu * (j + se * rng.normal()).exp())
                .collect()
        })
        .collect();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("a temporary directory: {e}"));
    // The baseline, measured in its job through the simulated profiler and stored.
    let mut brng = Rng::new(seed_for(seed, "baseline"));
    let mut base = SimProfiler::new(|job| {
        let i = index(&job);
        process(&mut brng, &noises[i], mus[i] * base_job.exp(), g.launches)
    });
    let history = |size: &str| -> Vec<f64> {
        let i: usize = size.trim_start_matches("m=").parse().unwrap_or(0);
        histories[i].clone()
    };
    write_baseline(&g.spec, dir.path(), &mut base, &history)
        .unwrap_or_else(|e| panic!("the simulated baseline: {e}"));
    let cand_mu: Vec<f64> = (0..g.metrics)
        .map(|i| {
            let shift = if s.uniform || i == 0 { s.shift } else { 0.0 };
            mus[i] * cand_job.exp() * (1.0 + shift)
        })
        .collect();
    let mut processes = vec![0u32; g.metrics];
    let mut crng = Rng::new(seed_for(seed, "candidate"));
    let mut cand = SimProfiler::new(|job| {
        let i = index(&job);
        processes[i] += 1;
        process(&mut crng, &noises[i], cand_mu[i], g.launches)
    });
    let r = simulate_check(&g.spec, dir.path(), &mut cand).unwrap_or_else(|e| panic!("check: {e}"));
    drop(cand);
    let v = |i: usize| verdict(&r, i);
    let any = (0..g.metrics).any(|i| v(i) == RowVerdict::Regression);
    let others = (1..g.metrics).any(|i| v(i) == RowVerdict::Regression);
    (
        if s.shift == 0.0 || s.uniform {
            any
        } else {
            v(0) == RowVerdict::Regression
        },
        v(0) == RowVerdict::Inconclusive,
        others,
        processes.iter().sum(),
        processes[0],
    )
}

fn simulate(s: Scenario, runs: usize, g: &Gate) -> Tally {
    let mut t = Tally::default();
    for k in 0..runs {
        let seed = seed_for(0x9e37_79b9, &format!("{}/{k}", s.name));
        let mut rng = Rng::new(seed);
        let (flag, inc, others, procs, p0) = one_check(s, &mut rng, g, seed);
        t.flagged += usize::from(flag);
        t.inconclusive += usize::from(inc);
        t.others += usize::from(others);
        t.processes += u64::from(procs);
        t.processes0 += u64::from(p0);
        t.runs += 1;
    }
    t
}

/// One `ab` run: `METRICS` rows, row 0 slowed by `shift`; returns (row 0 a regression, any other
/// row a regression, any row a regression, pairs summed over rows). The two trees' processes of
/// a pair share a clock factor (drawn from the pair's own seed, so each tree's profiler finds
/// it).
fn one_ab(shift: f64, rng: &mut Rng, g: &Gate, spec: &Spec, seed: u64) -> (bool, bool, bool, u32) {
    let noises: Vec<Noise> = (0..METRICS).map(|_| noise(rng)).collect();
    let clock = |job: &Job<'_>| {
        let mut r = Rng::new(seed_for(seed, &format!("clock/{}/{}", job.size.key(), job.rep)));
        1.0 + uniform(&mut r, -0.03, 0.03)
    };
    let mut pairs = [0u32; METRICS];
    let mut brng = Rng::new(seed_for(seed, "base"));
    let mut base = SimProfiler::new(|job| {
        let i = index(&job);
        process(&mut brng, &noises[i], MU * clock(&job), g.launches)
    });
    let mut hrng = Rng::new(seed_for(seed, "head"));
    let mut head = SimProfiler::new(|job| {
        let i = index(&job);
        pairs[i] += 1;
        let slow = if i == 0 { 1.0 + shift } else { 1.0 };
        process(&mut hrng, &noises[i], MU * clock(&job) * slow, g.launches)
    });
    let r = simulate_ab(spec, &mut base, &mut head).unwrap_or_else(|e| panic!("ab: {e}"));
    drop(head);
    let reg = |i: usize| verdict(&r, i) == RowVerdict::Regression;
    (
        reg(0),
        (1..METRICS).any(reg),
        (0..METRICS).any(reg),
        pairs.iter().sum(),
    )
}

fn ab_section(runs: usize, g: &Gate) {
    println!(
        "\nSYNTHETIC SIMULATION (no GPU) of `ab`: {runs} runs per cell, {METRICS} rows, threshold 3%, {} launches per process, pairs share a clock factor uniform in +-3%",
        g.launches
    );
    println!();
    println!(
        "| pairs (repetitions -> max) | scenario | runs flagged (%) | Wilson 95% | other rows flagged (%) | pairs per row |"
    );
    println!("|---|---|---:|---|---:|---:|");
    for (reps, max) in [(10u32, 10u32), (3, 10)] {
        let spec = load(&spec_text(Some(reps), Some(max), None, METRICS));
        for (name, shift) in [
            ("no change (A/A)", 0.0),
            ("5% slowdown", 0.05),
            ("10% slowdown", 0.10),
        ] {
            let (mut flagged, mut others, mut pairs) = (0usize, 0usize, 0u64);
            for k in 0..runs {
                let seed = seed_for(0xab, &format!("{name}/{reps}/{k}"));
                let mut rng = Rng::new(seed);
                let (r0, o, any, p) = one_ab(shift, &mut rng, g, &spec, seed);
                flagged += usize::from(if shift == 0.0 { any } else { r0 });
                others += usize::from(o);
                pairs += u64::from(p);
            }
            let (lo, hi) = wilson(flagged, runs);
            println!(
                "| {reps} -> {max} | {name} | {:.2} | [{lo:.2}, {hi:.2}] | {:.2} | {:.2} |",
                100.0 * flagged as f64 / runs as f64,
                100.0 * others as f64 / runs as f64,
                pairs as f64 / (runs * METRICS) as f64
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| -> Option<u32> {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
    };
    let runs: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let launches = flag("--launches").unwrap_or(30) as usize;
    let metrics = flag("--metrics").map_or(METRICS, |m| (m as usize).max(1));
    let mut g = gate(flag("--reps"), flag("--max"), flag("--base"), launches, metrics);
    if let Some(d) = args
        .iter()
        .position(|a| a == "--drift-pct")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse::<f64>().ok())
    {
        g.drift = d / 200.0;
    }
    // `--only "no change,3% slowdown"`: those scenarios alone.
    let only: Option<Vec<String>> = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.split(',').map(|x| x.trim().to_owned()).collect());
    let started = std::time::Instant::now();
    if !args.iter().any(|a| a == "--ab-only") {
        println!(
            "SYNTHETIC SIMULATION (no GPU) of `check`: {runs} runs per cell, {} metrics, threshold 3% (lower is better)",
            g.metrics
        );
        println!(
            "Nested noise model: within a process 0.2-1.5%, between processes 0-0.4%, warm-up +3-7% on launch 0 (dropped: warmup {}), 1% clock dips of 3-9%, job drift up to +-{:.2}%; {launches} launches per process; repetitions {} -> max_repetitions {} (looks: {}), baseline {} processes, {HISTORY} earlier baselines as history; alpha {} spent over the looks (docs/statistics.md 2.6), Holm",
            g.warmup,
            g.drift * 200.0,
            g.repetitions,
            g.max_repetitions,
            cgp_core::stats::remeasure::looks(g.repetitions, g.max_repetitions),
            g.baseline_repetitions,
            g.cfg.alpha
        );
        println!();
        println!(
            "| scenario | share of runs flagged (%) | Wilson 95% | slowed metric inconclusive (%) | other {} flagged (%) | processes per row (all {}) | processes of the slowed row |",
            g.metrics - 1,
            g.metrics
        );
        println!("|---|---:|---|---:|---:|---:|---:|");
        for s in SCENARIOS {
            if only.as_ref().is_some_and(|o| !o.iter().any(|n| n == s.name)) {
                continue;
            }
            let t = simulate(s, runs, &g);
            let (lo, hi) = wilson(t.flagged, t.runs);
            let slowed = s.shift > 0.0 && !s.uniform;
            println!(
                "| {} | {:.2} | [{lo:.2}, {hi:.2}] | {} | {} | {:.2} | {:.2} |",
                s.name,
                100.0 * t.flagged as f64 / t.runs as f64,
                if slowed {
                    format!("{:.2}", 100.0 * t.inconclusive as f64 / t.runs as f64)
                } else {
                    "-".to_owned()
                },
                if slowed {
                    format!("{:.2}", 100.0 * t.others as f64 / t.runs as f64)
                } else {
                    "-".to_owned()
                },
                t.processes as f64 / (t.runs * g.metrics) as f64,
                t.processes0 as f64 / t.runs as f64
            );
        }
    }
    if only.is_none() {
        ab_section((runs / 5).max(20), &g);
    }
    println!("\nelapsed {:.1} s", started.elapsed().as_secs_f64());
}
