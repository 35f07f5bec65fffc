//! Power and false-alarm simulation of exactly what `check` does.
//!
//! `cargo run --release --example power [RUNS] [--ablation]` (default 2000 runs per cell; 2000
//! took 387 s on the shared 2-core build machine). `--ablation`: the CV 1 % target cells with each
//! change of the rule undone (docs/statistics.md).
//!
//! Everything printed is measured on SYNTHETIC data, not on a GPU. The noise model is the one in
//! `cgp_gate::stats::noise::NoiseModel::documented` (also used by `cgp-gate calibrate` and
//! described in docs/statistics.md): a log-normal body with the stated CV, clock dips (3 % of
//! repetitions slower by 3-9 %) and preemptions (1 % of repetitions 1.3x slower).
//!
//! Each run is one check of a 50-metric spec (each metric its own size, one sample per
//! repetition, lower is better, threshold 3 %). The gate's settings are not restated here: the
//! spec below is read by the real loader (`cgp_gate::spec::load_str`), so `repetitions`,
//! `max_repetitions` and `baseline_repetitions` are the defaults `check` and `baseline update`
//! use, and the statistical settings are `cgp_gate::engine::stats_config`, the function `check`
//! judges with. A baseline of `baseline_repetitions` from its own job, with a history of 10
//! earlier baselines (each from its own job), a candidate of `repetitions`, re-measured by
//! `repetitions` up to `max_repetitions` while doubtful, judged by `judge_all`. The judging and the
//! re-measurement are the library's (`stats::remeasure::simulate_check`, which `check` shares);
//! only the samples are drawn here instead of by ncu.
//!
//! Scenarios: no change (whole-spec false alarms: a run with ANY regression); a uniform 2 % shift
//! of every metric (a run with any regression fails); between-job drift (every job, baseline
//! history included, has a log-offset shared by all its metrics ~ N(0, 1 %) plus one per metric
//! ~ N(0, 0.5 %); the candidate's job is +1 % on top); one metric slower by 2/3/5/10 % (share of
//! runs that call THAT metric a regression), also under drift.

use std::sync::atomic::{AtomicUsize, Ordering};

use cgp_gate::results::RowVerdict;
use cgp_gate::spec::model::Threshold;
use cgp_gate::stats::noise::NoiseModel;
use cgp_gate::stats::remeasure::{SimRow, simulate_check};
use cgp_gate::stats::rng::{Rng, seed_for};
use cgp_gate::stats::{Config, median};

/// What the simulated check takes from the spec.
struct Gate {
    threshold: Threshold,
    cfg: Config,
    repetitions: u32,
    max_repetitions: u32,
    baseline_repetitions: usize,
}

fn gate() -> Gate {
    let spec = cgp_gate::spec::load_str(SPEC, std::path::Path::new("power.yaml"))
        .unwrap_or_else(|e| panic!("the simulated spec must load: {e}"));
    let t = &spec.targets[0];
    Gate {
        threshold: t.metrics[0].threshold.clone(),
        cfg: cgp_gate::engine::stats_config(&spec.settings),
        repetitions: t.repetitions,
        max_repetitions: t.max_repetitions,
        baseline_repetitions: t.baseline_repetitions as usize,
    }
}

const METRICS: usize = 50;
/// The simulated spec: one 3 % metric, every other setting at its default.
const SPEC: &str = "version: 1\ntargets:\n  - name: k\n    command: [./k]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n";
const HISTORY: usize = 10;
const MU: f64 = 100_000.0;
const DRIFT_SHARED: f64 = 0.01;
const DRIFT_OWN: f64 = 0.005;

#[derive(Clone, Copy)]
struct Scenario {
    name: &'static str,
    /// Shift of metric 0 (the others unchanged), or of every metric when `uniform`.
    shift: f64,
    uniform: bool,
    drift: bool,
}

const SCENARIOS: [Scenario; 9] = [
    Scenario {
        name: "no change",
        shift: 0.0,
        uniform: false,
        drift: false,
    },
    Scenario {
        name: "uniform 2% shift",
        shift: 0.02,
        uniform: true,
        drift: false,
    },
    Scenario {
        name: "1% job drift",
        shift: 0.0,
        uniform: false,
        drift: true,
    },
    Scenario {
        name: "2% slowdown",
        shift: 0.02,
        uniform: false,
        drift: false,
    },
    Scenario {
        name: "3% slowdown",
        shift: 0.03,
        uniform: false,
        drift: false,
    },
    Scenario {
        name: "5% slowdown",
        shift: 0.05,
        uniform: false,
        drift: false,
    },
    Scenario {
        name: "10% slowdown",
        shift: 0.10,
        uniform: false,
        drift: false,
    },
    Scenario {
        name: "5% slowdown + drift",
        shift: 0.05,
        uniform: false,
        drift: true,
    },
    Scenario {
        name: "10% slowdown + drift",
        shift: 0.10,
        uniform: false,
        drift: true,
    },
];

#[derive(Default, Clone, Copy)]
struct Tally {
    /// Runs with any regression (no change, uniform, drift) or with metric 0 a regression.
    flagged: usize,
    /// Runs where metric 0 ended inconclusive.
    inconclusive: usize,
    /// Runs where any unchanged metric was a regression (slowdown scenarios).
    others: usize,
    /// Extra repetitions measured, summed over runs (all 50 metrics).
    extra: u64,
    /// Runs where metric 0's final regression p-value (unadjusted) was below 0.01.
    p_below_1pct: usize,
    runs: usize,
}

fn one_run(s: Scenario, model: &NoiseModel, rng: &mut Rng, g: &Gate) -> (bool, bool, bool, u32, bool) {
    let threshold = &g.threshold;
    let job = |rng: &mut Rng| if s.drift { DRIFT_SHARED * rng.normal() } else { 0.0 };
    let own = if s.drift { DRIFT_OWN } else { 0.0 };
    // History: earlier baseline jobs, medians of 30 repetitions each.
    let hist_jobs: Vec<f64> = (0..HISTORY).map(|_| job(rng)).collect();
    let base_job = job(rng);
    let cand_job = base_job + if s.drift { 0.01 } else { 0.0 };
    let mut histories = Vec::with_capacity(METRICS);
    let mut baselines = Vec::with_capacity(METRICS);
    let mut cand_mu = Vec::with_capacity(METRICS);
    for i in 0..METRICS {
        let h: Vec<f64> = hist_jobs
            .iter()
            .map(|&offset| {
                let mu = MU * NoiseModel::job_offset(rng, offset, own);
                median(&model.samples(rng, g.baseline_repetitions, mu, false)).unwrap_or(mu)
            })
            .collect();
        histories.push(h);
        let bmu = MU * NoiseModel::job_offset(rng, base_job, own);
        baselines.push(model.samples(rng, g.baseline_repetitions, bmu, false));
        let shift = if s.uniform || i == 0 { s.shift } else { 0.0 };
        cand_mu.push(MU * NoiseModel::job_offset(rng, cand_job, own) * (1.0 + shift));
    }
    let keys: Vec<String> = (0..METRICS).map(|i| format!("kernel{i}/duration")).collect();
    let rows: Vec<SimRow<'_>> = (0..METRICS)
        .map(|i| SimRow {
            key: keys[i].clone(),
            baseline: &baselines[i],
            threshold,
            history: &histories[i],
        })
        .collect();
    let mut draw = |i: usize, reps: u32| model.samples(rng, reps as usize, cand_mu[i], false);
    let out = simulate_check(&rows, &g.cfg, g.repetitions, g.max_repetitions, &mut draw);
    let v = |i: usize| out.judgements[i].verdict;
    let any = (0..METRICS).any(|i| v(i) == RowVerdict::Regression);
    let others = (1..METRICS).any(|i| v(i) == RowVerdict::Regression);
    (
        if s.shift == 0.0 || s.uniform {
            any
        } else {
            v(0) == RowVerdict::Regression
        },
        v(0) == RowVerdict::Inconclusive,
        others,
        out.extra_reps,
        out.judgements[0].p.is_some_and(|p| p < 0.01),
    )
}

fn simulate(s: Scenario, cv: f64, runs: usize, g: &Gate) -> Tally {
    let model = NoiseModel::documented(cv);
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).min(2);
    let parts: Vec<Tally> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut t = Tally::default();
                    loop {
                        let run = next.fetch_add(1, Ordering::Relaxed);
                        if run >= runs {
                            return t;
                        }
                        let mut rng = Rng::new(seed_for(run as u64, &format!("{}/{cv}", s.name)));
                        let (flag, inc, others, extra, low_p) = one_run(s, &model, &mut rng, g);
                        t.flagged += usize::from(flag);
                        t.inconclusive += usize::from(inc);
                        t.others += usize::from(others);
                        t.extra += u64::from(extra);
                        t.p_below_1pct += usize::from(low_p);
                        t.runs += 1;
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    parts.into_iter().fold(Tally::default(), |a, b| Tally {
        flagged: a.flagged + b.flagged,
        inconclusive: a.inconclusive + b.inconclusive,
        others: a.others + b.others,
        extra: a.extra + b.extra,
        p_below_1pct: a.p_below_1pct + b.p_below_1pct,
        runs: a.runs + b.runs,
    })
}

/// Wilson 95 % interval of k successes in n, in percent.
fn wilson(k: usize, n: usize) -> (f64, f64) {
    let (k, n) = (k as f64, n as f64);
    let z = 1.959_963_984_540_054_f64;
    let p = k / n;
    let den = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / den;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / den;
    ((centre - half).max(0.0) * 100.0, (centre + half).min(1.0) * 100.0)
}

/// `--ablation`: the CV 1 % target cells under the rule with each of this version's changes
/// undone, to show what each one buys (docs/statistics.md, "What changed").
fn ablation(runs: usize, g: &Gate) {
    let variant = |trim: bool, ratio: f64, base: usize| Gate {
        threshold: g.threshold.clone(),
        cfg: Config {
            trim_dips: trim,
            spread_noise_ratio: ratio,
            ..g.cfg.clone()
        },
        repetitions: g.repetitions,
        max_repetitions: g.max_repetitions,
        baseline_repetitions: base,
    };
    let base = g.baseline_repetitions;
    let variants = [
        (
            "previous rule: dips kept, spread gate 2, 30 baseline repetitions",
            variant(false, 2.0, 30),
        ),
        ("+ slow outliers left out", variant(true, 2.0, 30)),
        ("+ spread gate 3", variant(true, 3.0, 30)),
        (
            "+ 50 baseline repetitions (this version)",
            variant(true, 3.0, base),
        ),
        ("this version with dips kept", variant(false, 3.0, base)),
    ];
    println!("Ablation at CV 1% ({runs} runs per cell; share of runs flagged, %, Wilson 95%)");
    println!();
    println!(
        "| rule | no change | uniform 2% shift | 1% job drift | 5% slowdown found | 3% slowdown (at the threshold): regression | 3% slowdown: final p < 0.01 |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (name, v) in &variants {
        let share = |k: usize, n: usize| {
            let (lo, hi) = wilson(k, n.max(1));
            format!("{:.2} [{lo:.2}, {hi:.2}]", 100.0 * k as f64 / n.max(1) as f64)
        };
        let cells: Vec<String> = [
            "no change",
            "uniform 2% shift",
            "1% job drift",
            "5% slowdown",
            "3% slowdown",
        ]
        .iter()
        .map(|n| {
            let s = SCENARIOS
                .iter()
                .find(|s| s.name == *n)
                .copied()
                .unwrap_or(SCENARIOS[0]);
            let t = simulate(s, 0.01, runs, v);
            if *n == "3% slowdown" {
                format!("{} | {}", share(t.flagged, t.runs), share(t.p_below_1pct, t.runs))
            } else {
                share(t.flagged, t.runs)
            }
        })
        .collect();
        println!("| {name} | {} |", cells.join(" | "));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(2000);
    let start = std::time::Instant::now();
    let g = gate();
    if args.iter().any(|a| a == "--ablation") {
        println!(
            "SYNTHETIC SIMULATION (no GPU) of `check`, noise model NoiseModel::documented, {METRICS} metrics, threshold 3%"
        );
        ablation(runs, &g);
        println!();
        println!("elapsed {:.1} s", start.elapsed().as_secs_f64());
        return;
    }
    let (reps, max_reps, base_reps) = (g.repetitions, g.max_repetitions, g.baseline_repetitions);
    let alpha = g.cfg.alpha;
    println!(
        "SYNTHETIC SIMULATION (no GPU) of `check`: {runs} runs per cell, {METRICS} metrics, threshold 3% (lower is better)"
    );
    println!(
        "Noise: NoiseModel::documented (log-normal body, 3% clock dips of 3-9%, 1% preemptions of 1.3x); {reps} candidate repetitions re-measured up to {max_reps}, {base_reps} baseline repetitions, {HISTORY} earlier baselines as history; alpha {alpha} Holm; slow outliers left out: {}",
        g.cfg.trim_dips
    );
    println!();
    println!(
        "| CV | scenario | share of runs flagged (%) | Wilson 95% | slowed metric inconclusive (%) | other 49 flagged (%) | extra repetitions per run (all 50 metrics) |"
    );
    println!("|---|---|---:|---|---:|---:|---:|");
    let mut results = Vec::new();
    for cv in [0.01, 0.03] {
        for s in SCENARIOS {
            let t = simulate(s, cv, runs, &g);
            let (lo, hi) = wilson(t.flagged, t.runs);
            let single = s.shift > 0.0 && !s.uniform;
            println!(
                "| {:.0}% | {} | {:.2} | [{lo:.2}, {hi:.2}] | {} | {} | {:.1} |",
                cv * 100.0,
                s.name,
                100.0 * t.flagged as f64 / t.runs as f64,
                if single {
                    format!("{:.1}", 100.0 * t.inconclusive as f64 / t.runs as f64)
                } else {
                    "-".to_owned()
                },
                if single {
                    format!("{:.2}", 100.0 * t.others as f64 / t.runs as f64)
                } else {
                    "-".to_owned()
                },
                t.extra as f64 / t.runs as f64,
            );
            results.push((cv, s, t));
        }
    }
    println!();
    println!("Targets at CV 1% (Wilson 95% intervals):");
    let find = |name: &str| {
        results
            .iter()
            .find(|(cv, s, _)| (*cv - 0.01).abs() < 1e-12 && s.name == name)
            .map(|(_, _, t)| *t)
            .unwrap_or_default()
    };
    for (name, what, at_most, limit) in [
        ("no change", "whole-spec false alarms", true, 1.0),
        ("uniform 2% shift", "uniform 2% shift fails the run", true, 1.0),
        ("1% job drift", "false alarms with 1% job drift", true, 1.0),
        ("5% slowdown", "5% slowdown found", false, 99.0),
    ] {
        let t = find(name);
        let p = 100.0 * t.flagged as f64 / t.runs.max(1) as f64;
        let (lo, hi) = wilson(t.flagged, t.runs.max(1));
        let met = if at_most { p <= limit } else { p >= limit };
        println!(
            "  {what} (target {} {limit}%): {}/{} = {p:.2}% [{lo:.2}, {hi:.2}] -> {}",
            if at_most { "<=" } else { ">=" },
            t.flagged,
            t.runs,
            if met { "met" } else { "NOT met" }
        );
    }
    println!();
    println!("elapsed {:.1} s", start.elapsed().as_secs_f64());
}
