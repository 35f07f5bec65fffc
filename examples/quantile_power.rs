//! The power of a quantile row (docs/statistics.md, "Quantile rows"; `stats::quantile`), on
//! SYNTHETIC per-request latencies: how often a planted +10 % p99 is a regression, and how often
//! an A/A comparison is, for a range of requests per process, candidate processes and process
//! drift, at `check`'s settings (alpha 0.01, 95 % intervals) and a 3 % threshold. Beside it, the
//! same requests judged as a row of samples (the run-level model, a test of their log mean): what
//! a mean test sees of a change of the tail alone.
//!
//! The requests of a process: lognormal (sigma 0.25, p99 = 1.8 x the median, as the TTFT of the
//! shared real vLLM file; or 0.5, 3.2 x) times a process level (lognormal, 1 % sd: a server's
//! run-to-run wander), the planted change multiplying the tail
//! from the 90th percentile (by 0) up to the 99th (by the whole +10 %) and beyond; the median is
//! unchanged. 10 baseline processes, as `baseline_repetitions: 10`.
//!
//! `cargo run --release --example quantile_power [TRIALS]` (default 200).

use cgp_core::foundation::threshold::{Direction, Threshold, ThresholdKind};
use cgp_core::stats::quantile::quantile;
use cgp_core::stats::rng::Rng;
use cgp_core::stats::{Comparison, Config, RowVerdict, judge};

/// One process's requests.
fn process(rng: &mut Rng, cell: &Cell, tail: f64) -> Vec<f64> {
    let (n, drift, sigma) = (cell.n, cell.drift, cell.sigma);
    let level = (drift * rng.normal()).exp();
    (0..n)
        .map(|_| {
            let z = rng.normal();
            let u = statrs::function::erf::erfc(-z / std::f64::consts::SQRT_2) / 2.0;
            let ramp = ((u - 0.90) / 0.09).clamp(0.0, 1.0);
            level * (sigma * z).exp() * (1.0 + tail * ramp)
        })
        .collect()
}

struct Cell {
    sigma: f64,
    n: usize,
    candidates: usize,
    drift: f64,
}

/// (p99 row regressions, samples row regressions) out of `trials`, with the tail planted by `tail`.
fn rates(cell: &Cell, trials: u32, tail: f64, seed: u64, samples_row: bool) -> (f64, f64) {
    let threshold = Threshold {
        kind: ThresholdKind::Relative { fraction: 0.03 },
        direction: Direction::Lower,
        min_effect: None,
    };
    let cfg = Config::default();
    let mut rng = Rng::new(seed);
    let (mut q_found, mut mean_found) = (0u32, 0u32);
    for t in 0..trials {
        let side = |rng: &mut Rng, k: usize, tail: f64| -> Vec<Vec<f64>> {
            (0..k).map(|_| process(rng, cell, tail)).collect()
        };
        let base = side(&mut rng, 10, 0.0);
        let cand = side(&mut rng, cell.candidates, tail);
        let p99 =
            |s: &[Vec<f64>]| -> Vec<f64> { s.iter().map(|p| quantile(p, 0.99).unwrap_or(0.0)).collect() };
        let (bq, cq) = (p99(&base), p99(&cand));
        let row = Comparison {
            key: format!("ttft/p99 {t}"),
            baseline: Some(&bq),
            candidate: &cq,
            threshold: &threshold,
            history: &[],
            baseline_runs: &[],
            candidate_runs: &[],
        };
        q_found += u32::from(judge(&row, &cfg).ruling.verdict == RowVerdict::Regression);
        if !samples_row {
            continue;
        }
        // The same requests as a row of samples, each process a run.
        let flat = |s: &[Vec<f64>]| -> (Vec<f64>, Vec<u32>) {
            let mut v = Vec::new();
            let mut r = Vec::new();
            for (i, p) in s.iter().enumerate() {
                v.extend(p);
                r.extend(std::iter::repeat_n(i as u32, p.len()));
            }
            (v, r)
        };
        let ((bv, br), (cv, cr)) = (flat(&base), flat(&cand));
        let row = Comparison {
            key: format!("ttft {t}"),
            baseline: Some(&bv),
            candidate: &cv,
            threshold: &threshold,
            history: &[],
            baseline_runs: &br,
            candidate_runs: &cr,
        };
        mean_found += u32::from(judge(&row, &cfg).ruling.verdict == RowVerdict::Regression);
    }
    let f = f64::from(trials);
    (f64::from(q_found) / f, f64::from(mean_found) / f)
}

fn main() {
    let trials: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    println!(
        "SYNTHETIC SIMULATION: {trials} trials per cell; 10 baseline processes; threshold 3 % (lower is better); alpha 0.01"
    );
    println!(
        "| tail (sigma; p99 / median) | requests per process | candidate processes | p99 row: +10 % p99 found | p99 row: A/A regressions | samples row (log-mean test): +10 % p99 found |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for sigma in [0.25, 0.5] {
        for n in [1000, 2000, 5000] {
            for candidates in [3, 10] {
                let cell = Cell {
                    sigma,
                    n,
                    candidates,
                    drift: 0.01,
                };
                // The samples row is slow to judge (every request a sample): one size of it.
                let samples_row = n == 1000;
                let (q, mean) = rates(&cell, trials, 0.10, 1, samples_row);
                let (aa, _) = rates(&cell, trials, 0.0, 2, false);
                println!(
                    "| {sigma} ({:.1}x) | {n} | {candidates} | {:.1} % | {:.1} % | {} |",
                    (sigma * 2.326f64).exp(),
                    q * 100.0,
                    aa * 100.0,
                    if samples_row {
                        format!("{:.1} %", mean * 100.0)
                    } else {
                        "-".to_owned()
                    }
                );
            }
        }
    }
}
