//! Power and false-alarm simulation of cgp-gate's verdict against the rules of other tools.
//!
//! `cargo run --release --example power`
//!
//! Everything printed is measured on SYNTHETIC data from the noise model below, not on a GPU.
//! Each cell simulates `RUNS` gate runs of a 50-metric spec (every metric a kernel duration with the
//! same noise); in each run one metric's candidate is slower by `shift`, the other 49 are
//! unchanged. At shift 0 the table gives the share of runs where ANY of the 50 metrics was reported
//! as a regression (whole-spec false alarm); at shift > 0 the share of runs where the slowed metric
//! was reported as a regression.
//!
//! Noise model, per sample: `mu * exp(sigma * t5) * drop`, where `t5` is a Student-t variate with 5
//! degrees of freedom scaled to unit variance (a heavier tail than the normal), `sigma` gives the
//! body the stated CV, and `drop` is 1 except, with probability 2 %, a clock-drop outlier that makes
//! the sample 5-25 % slower (uniform). Samples are independent: baseline and candidate measured in
//! the same job, on the same GPU. Between-job drift is NOT modelled (see docs/statistics.md).

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use cgp_gate::results::RowVerdict;
use cgp_gate::spec::model::{Direction, Threshold, ThresholdKind};
use cgp_gate::stats::mannwhitney::{NullCache, mann_whitney};
use cgp_gate::stats::rng::{Rng, seed_for};
use cgp_gate::stats::{Comparison, Config, IntervalMethod, judge_all};
use statrs::distribution::{ContinuousCDF, StudentsT};

const RUNS: usize = 2000;
const METRICS: usize = 50;
const THRESHOLD: f64 = 0.03;
const SAMPLES: [usize; 3] = [5, 10, 20];
const CVS: [f64; 3] = [0.003, 0.01, 0.03];
const SHIFTS: [f64; 6] = [0.0, 0.01, 0.02, 0.03, 0.05, 0.10];
const OUTLIER_P: f64 = 0.02;
const T_DOF: f64 = 5.0;
const MU: f64 = 100_000.0;

/// Rules compared in each cell.
const RULES: [&str; 5] = [
    "cgp-gate",
    "gbench U 0.05",
    "gh-action 200%",
    "nvbench legacy",
    "bencher t 0.99",
];

struct Model {
    sigma: f64,
}

impl Model {
    fn new(cv: f64) -> Self {
        // Log-normal body with CV `cv`: sigma^2 = ln(1 + cv^2).
        Self {
            sigma: (1.0 + cv * cv).ln().sqrt(),
        }
    }

    fn sample(&self, rng: &mut Rng, mu: f64) -> f64 {
        let z = rng.normal();
        let chi2: f64 = (0..T_DOF as usize).map(|_| rng.normal().powi(2)).sum();
        let t = z / (chi2 / T_DOF).sqrt();
        let unit_t = t / (T_DOF / (T_DOF - 2.0)).sqrt();
        let drop = if rng.next_f64() < OUTLIER_P {
            1.05 + 0.20 * rng.next_f64()
        } else {
            1.0
        };
        mu * (self.sigma * unit_t).exp() * drop
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn sd(v: &[f64]) -> f64 {
    let m = mean(v);
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

/// google/benchmark tools/compare.py: two-sided Mann-Whitney U at alpha 0.05; counted as a
/// regression report when significant and the candidate's mean is larger.
fn gbench(b: &[f64], c: &[f64], cache: &mut NullCache) -> bool {
    let Ok(mw) = mann_whitney(c, b, cache) else {
        return false;
    };
    let two_sided = (2.0 * mw.p_greater.min(mw.p_less)).min(1.0);
    two_sided < 0.05 && mean(c) > mean(b)
}

/// github-action-benchmark: alert when current / previous > 200 % (values: the side means).
fn gh_action(b: &[f64], c: &[f64]) -> bool {
    mean(c) / mean(b) > 2.0
}

/// nvbench_compare.py (legacy): SLOW when (cmp - ref) / ref > min(ref_noise, cmp_noise), noise
/// being the relative standard deviation.
fn nvbench_legacy(b: &[f64], c: &[f64]) -> bool {
    let (mb, mc) = (mean(b), mean(c));
    let noise = (sd(b) / mb).min(sd(c) / mc);
    (mc - mb) / mb > noise
}

/// Bencher t_test, upper boundary 0.99: the new value (candidate mean) against the baseline
/// samples as history, limit mean + t_{0.99, n-1} * sd * sqrt(1 + 1/n).
fn bencher(b: &[f64], c: &[f64], t99: f64) -> bool {
    let n = b.len() as f64;
    mean(c) > mean(b) + t99 * sd(b) * (1.0 + 1.0 / n).sqrt()
}

#[derive(Clone, Copy)]
struct Cell {
    n: usize,
    cv: f64,
    shift: f64,
}

#[derive(Default, Clone)]
struct Tally {
    /// Per rule: runs flagged (any metric at shift 0, the slowed metric otherwise).
    flagged: [usize; RULES.len()],
    /// cgp-gate: runs where the slowed metric was inconclusive.
    inconclusive: usize,
    /// cgp-gate at shift > 0: runs where any of the 49 unchanged metrics was flagged.
    others_flagged: usize,
    runs: usize,
}

fn simulate(cell: Cell, runs: usize, cfg: &Config) -> Tally {
    let seed = seed_for(
        0x0070_6f77_6572,
        &format!("{}/{}/{}/{}", cell.n, cell.cv, cell.shift, cfg.interval as u8),
    );
    let mut rng = Rng::new(seed);
    let model = Model::new(cell.cv);
    let threshold = Threshold {
        kind: ThresholdKind::Relative { fraction: THRESHOLD },
        direction: Direction::Lower,
        min_effect: None,
    };
    let t99 = StudentsT::new(0.0, 1.0, (cell.n - 1) as f64)
        .map(|t| t.inverse_cdf(0.99))
        .unwrap_or(f64::INFINITY);
    let keys: Vec<String> = (0..METRICS).map(|i| format!("kernel{i}/duration")).collect();
    let mut cache = NullCache::default();
    let mut tally = Tally {
        runs,
        ..Tally::default()
    };
    for _ in 0..runs {
        let sides: Vec<(Vec<f64>, Vec<f64>)> = (0..METRICS)
            .map(|m| {
                let mu_c = if m == 0 { MU * (1.0 + cell.shift) } else { MU };
                let b = (0..cell.n).map(|_| model.sample(&mut rng, MU)).collect();
                let c = (0..cell.n).map(|_| model.sample(&mut rng, mu_c)).collect();
                (b, c)
            })
            .collect();
        let rows: Vec<Comparison<'_>> = sides
            .iter()
            .zip(&keys)
            .map(|((b, c), key)| Comparison {
                key: key.clone(),
                baseline: Some(b),
                candidate: c,
                threshold: &threshold,
                history: &[],
            })
            .collect();
        let judged = judge_all(&rows, cfg);
        let cgp: Vec<bool> = judged
            .iter()
            .map(|j| j.verdict == RowVerdict::Regression)
            .collect();
        if judged[0].verdict == RowVerdict::Inconclusive {
            tally.inconclusive += 1;
        }
        if cgp[1..].iter().any(|&f| f) {
            tally.others_flagged += 1;
        }
        let per_rule: [Vec<bool>; RULES.len()] = [
            cgp,
            sides.iter().map(|(b, c)| gbench(b, c, &mut cache)).collect(),
            sides.iter().map(|(b, c)| gh_action(b, c)).collect(),
            sides.iter().map(|(b, c)| nvbench_legacy(b, c)).collect(),
            sides.iter().map(|(b, c)| bencher(b, c, t99)).collect(),
        ];
        for (r, flags) in per_rule.iter().enumerate() {
            let hit = if cell.shift == 0.0 {
                flags.iter().any(|&f| f)
            } else {
                flags[0]
            };
            if hit {
                tally.flagged[r] += 1;
            }
        }
    }
    tally
}

/// cgp-gate with one re-measurement round: rows inconclusive after `n` samples per side get `n`
/// more on both sides and the whole run is judged again (Holm over all 50 rows again). Returns
/// (runs with a regression on the slowed metric, or on any metric at shift 0; runs where the slowed
/// metric is still inconclusive).
fn simulate_remeasure(cell: Cell, runs: usize, cfg: &Config) -> (usize, usize) {
    let seed = seed_for(
        0x7265_6d65_6173,
        &format!("{}/{}/{}", cell.n, cell.cv, cell.shift),
    );
    let mut rng = Rng::new(seed);
    let model = Model::new(cell.cv);
    let threshold = Threshold {
        kind: ThresholdKind::Relative { fraction: THRESHOLD },
        direction: Direction::Lower,
        min_effect: None,
    };
    let keys: Vec<String> = (0..METRICS).map(|i| format!("kernel{i}/duration")).collect();
    let (mut flagged, mut inconclusive) = (0, 0);
    for _ in 0..runs {
        let sides: Vec<(Vec<f64>, Vec<f64>)> = (0..METRICS)
            .map(|m| {
                let mu_c = if m == 0 { MU * (1.0 + cell.shift) } else { MU };
                let b = (0..2 * cell.n).map(|_| model.sample(&mut rng, MU)).collect();
                let c = (0..2 * cell.n).map(|_| model.sample(&mut rng, mu_c)).collect();
                (b, c)
            })
            .collect();
        let rows = |len: &dyn Fn(usize) -> usize| -> Vec<Comparison<'_>> {
            sides
                .iter()
                .zip(&keys)
                .enumerate()
                .map(|(i, ((b, c), key))| Comparison {
                    key: key.clone(),
                    baseline: Some(&b[..len(i)]),
                    candidate: &c[..len(i)],
                    threshold: &threshold,
                    history: &[],
                })
                .collect()
        };
        let first = judge_all(&rows(&|_| cell.n), cfg);
        let again: Vec<bool> = first
            .iter()
            .map(|j| j.verdict == RowVerdict::Inconclusive)
            .collect();
        let last = judge_all(&rows(&|i| if again[i] { 2 * cell.n } else { cell.n }), cfg);
        let regressed: Vec<bool> = first
            .iter()
            .zip(&last)
            .map(|(a, b)| a.verdict == RowVerdict::Regression || b.verdict == RowVerdict::Regression)
            .collect();
        let hit = if cell.shift == 0.0 {
            regressed.iter().any(|&r| r)
        } else {
            regressed[0]
        };
        if hit {
            flagged += 1;
        }
        if last[0].verdict == RowVerdict::Inconclusive {
            inconclusive += 1;
        }
    }
    (flagged, inconclusive)
}

/// Run cells on two threads (the CI machine has two cores), results in cell order.
fn run_cells(cells: &[Cell], runs: usize, cfg: &Config) -> Vec<Tally> {
    let next = AtomicUsize::new(0);
    let out = Mutex::new(vec![Tally::default(); cells.len()]);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(cell) = cells.get(i) else { break };
                    let t = simulate(*cell, runs, cfg);
                    if let Ok(mut o) = out.lock() {
                        o[i] = t;
                    }
                }
            });
        }
    });
    // A worker panic already propagated out of the scope; a poisoned lock here is unreachable.
    out.into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn pct(k: usize, n: usize) -> String {
    format!("{:.1}", 100.0 * k as f64 / n as f64)
}

/// Wilson 95 % interval of k/n, in percent.
fn wilson(k: usize, n: usize) -> String {
    let (k, n) = (k as f64, n as f64);
    let z = 1.96_f64;
    let p = k / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    format!(
        "[{:.2}, {:.2}]",
        100.0 * (centre - half).max(0.0),
        100.0 * (centre + half).min(1.0)
    )
}

fn calibration() {
    println!(
        "Noise calibration (synthetic, 200000 samples per CV): body CV -> realised stdev/mean, robust CV"
    );
    for cv in CVS {
        let model = Model::new(cv);
        let mut rng = Rng::new(1);
        let v: Vec<f64> = (0..200_000).map(|_| model.sample(&mut rng, MU)).collect();
        let s = cgp_gate::stats::summarize(&v);
        println!(
            "  CV {:.1}% -> stdev/mean {:.2}%, robust CV {:.2}%, Tukey outliers {:.1}%",
            cv * 100.0,
            100.0 * sd(&v) / mean(&v),
            100.0 * s.cv.unwrap_or(f64::NAN),
            100.0 * s.outliers.len() as f64 / v.len() as f64
        );
    }
    println!();
}

fn main() {
    let started = std::time::Instant::now();
    println!(
        "SYNTHETIC SIMULATION (no GPU): {RUNS} runs per cell, {METRICS} metrics per spec, threshold {:.0}% (lower is better)",
        THRESHOLD * 100.0
    );
    println!(
        "Model: log-normal body x Student-t({T_DOF}) tail, {:.0}% clock-drop outliers 5-25% slower, i.i.d. within the job",
        OUTLIER_P * 100.0
    );
    println!("cgp-gate: default config (alpha 0.01 Holm over 50 rows, 95% Hodges-Lehmann interval)");
    println!(
        "shift 0%: share of runs with ANY of the 50 metrics flagged; shift > 0: share of runs flagging the slowed metric"
    );
    println!();
    calibration();

    let cells: Vec<Cell> = SAMPLES
        .iter()
        .flat_map(|&n| {
            CVS.iter()
                .flat_map(move |&cv| SHIFTS.iter().map(move |&shift| Cell { n, cv, shift }))
        })
        .collect();
    let cfg = Config::default();
    let tallies = run_cells(&cells, RUNS, &cfg);

    print!("| n/side | CV | shift |");
    for r in RULES {
        print!(" {r} |");
    }
    println!(" cgp-gate inconclusive | cgp-gate other 49 flagged |");
    println!("|---|---|---|{}---|---|", "---|".repeat(RULES.len()));
    for (cell, t) in cells.iter().zip(&tallies) {
        print!(
            "| {} | {:.1}% | {:.0}% |",
            cell.n,
            cell.cv * 100.0,
            cell.shift * 100.0
        );
        for k in t.flagged {
            print!(" {} |", pct(k, t.runs));
        }
        if cell.shift == 0.0 {
            println!(" - | - |");
        } else {
            println!(
                " {} | {} |",
                pct(t.inconclusive, t.runs),
                pct(t.others_flagged, t.runs)
            );
        }
    }
    println!();
    println!(
        "Values in %. Monte-Carlo error: with {RUNS} runs a share p has a 95% half-width of 1.96*sqrt(p(1-p)/{RUNS}),"
    );
    println!(
        "at most {:.1} points (p = 50%); 0 of {RUNS} means a 95% upper bound of {:.2}%.",
        100.0 * 1.96 * (0.25 / RUNS as f64).sqrt(),
        100.0 * (1.0 - 0.05f64.powf(1.0 / RUNS as f64))
    );
    println!();

    println!("Targets (cgp-gate, n = 10 per side, CV 1%), with Wilson 95% intervals:");
    let find = |n: usize, cv: f64, shift: f64| {
        cells
            .iter()
            .position(|c| c.n == n && (c.cv - cv).abs() < 1e-12 && (c.shift - shift).abs() < 1e-12)
            .map(|i| &tallies[i])
    };
    let target = |label: &str, shift: f64, ok: &dyn Fn(f64) -> bool| {
        if let Some(t) = find(10, 0.01, shift) {
            let k = t.flagged[0];
            let p = k as f64 / t.runs as f64;
            println!(
                "  {label}: {k}/{} = {}% {} -> {}",
                t.runs,
                pct(k, t.runs),
                wilson(k, t.runs),
                if ok(p) { "met" } else { "NOT met" }
            );
        }
    };
    target("whole-spec false alarms at 0% (target <= 1%)", 0.0, &|p| {
        p <= 0.01
    });
    target("2% slowdown called a regression (target <= 5%)", 0.02, &|p| {
        p <= 0.05
    });
    target("5% slowdown found (target >= 95%)", 0.05, &|p| p >= 0.95);
    println!();

    // Cross-check of the bootstrap interval (ratio of medians), fewer runs: it costs 2000
    // resamples per row.
    let boot_runs = 400;
    let boot_cfg = Config {
        interval: IntervalMethod::Bootstrap,
        ..Config::default()
    };
    let boot_cells: Vec<Cell> = [0.0, 0.02, 0.05]
        .iter()
        .map(|&shift| Cell {
            n: 10,
            cv: 0.01,
            shift,
        })
        .collect();
    let boot = run_cells(&boot_cells, boot_runs, &boot_cfg);
    println!(
        "cgp-gate with IntervalMethod::Bootstrap (ratio of medians, 2000 resamples), n = 10, CV 1%, {boot_runs} runs per cell:"
    );
    println!("| shift | regression | inconclusive | Wilson 95% of regression |");
    println!("|---|---|---|---|");
    for (cell, t) in boot_cells.iter().zip(&boot) {
        println!(
            "| {:.0}% | {} | {} | {} |",
            cell.shift * 100.0,
            pct(t.flagged[0], t.runs),
            if cell.shift == 0.0 {
                "-".to_owned()
            } else {
                pct(t.inconclusive, t.runs)
            },
            wilson(t.flagged[0], t.runs)
        );
    }
    println!();

    // Two ways past the n = 10 limit, measured: more samples, or re-measuring doubtful rows.
    println!("Follow-up, cgp-gate only, CV 1%, {RUNS} runs per cell:");
    println!("| setting | shift | regression | inconclusive | Wilson 95% of regression |");
    println!("|---|---|---|---|---|");
    let follow: Vec<Cell> = [0.0, 0.02, 0.05]
        .iter()
        .map(|&shift| Cell {
            n: 12,
            cv: 0.01,
            shift,
        })
        .collect();
    for (cell, t) in follow.iter().zip(run_cells(&follow, RUNS, &cfg)) {
        println!(
            "| 12 per side | {:.0}% | {} | {} | {} |",
            cell.shift * 100.0,
            pct(t.flagged[0], t.runs),
            if cell.shift == 0.0 {
                "-".to_owned()
            } else {
                pct(t.inconclusive, t.runs)
            },
            wilson(t.flagged[0], t.runs)
        );
    }
    let remeasured: Vec<(f64, (usize, usize))> = std::thread::scope(|s| {
        let handles: Vec<_> = [0.0, 0.02, 0.05]
            .iter()
            .map(|&shift| {
                let cfg = &cfg;
                (
                    shift,
                    s.spawn(move || {
                        simulate_remeasure(
                            Cell {
                                n: 10,
                                cv: 0.01,
                                shift,
                            },
                            RUNS,
                            cfg,
                        )
                    }),
                )
            })
            .collect();
        handles
            .into_iter()
            .map(|(shift, h)| (shift, h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))))
            .collect()
    });
    for (shift, (k, inc)) in remeasured {
        println!(
            "| 10 per side, inconclusive rows re-measured once to 20 | {:.0}% | {} | {} | {} |",
            shift * 100.0,
            pct(k, RUNS),
            if shift == 0.0 {
                "-".to_owned()
            } else {
                pct(inc, RUNS)
            },
            wilson(k, RUNS)
        );
    }
    println!(
        "(At shift 0 the re-measured rows count a regression from either round: every look is a chance of a false alarm.)"
    );
    println!();
    println!("elapsed {:.1} s", started.elapsed().as_secs_f64());
}
