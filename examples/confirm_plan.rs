//! SYNTHETIC check of the paired stage's plan (`run::confirm::paired_plan`, docs/confirm.md):
//! `ab`'s real run and statistics (`run::simulate::simulate_ab`: ABBA pairs, the re-measure
//! loop, the paired t, Holm, the alpha spending) on three rows whose head is exactly at the 3 %
//! threshold, under several pair plans: how often a run calls any row a regression (at most alpha,
//! 1 %, is the promise) and how often a row passes (at most 2.5 %).
//!
//! `cargo build --release --example confirm_plan`, then
//! `target/release/examples/confirm_plan [--runs N]`. The noise: each row's launches
//! N(0, w) within a process and N(0, b) between processes on the log scale, fitted to the REAL
//! H100 30-launch pools (matmul w 0.20 % b 0.30 %, reduce 1.50 % / 0.40 %, vector_add 0.51 % /
//! 0.15 %), 30 launches per process, the first a warm-up.

use std::path::Path;

use cgp_core::stats::rng::{Rng, seed_for};
use cgp_engine::run::simulate::{SIM_METRIC, SimProfiler, simulate_ab};
use cgp_outcome::outcome::results::RowVerdict;
use cgp_profile::profile::Job;

const NOISE: [(f64, f64); 3] = [(0.0020, 0.0030), (0.0150, 0.0040), (0.0051, 0.0015)];

fn process(rng: &mut Rng, (w, b): (f64, f64), mu: f64) -> Vec<f64> {
    let off = b * rng.normal();
    (0..30)
        .map(|l| mu * (off + w * rng.normal()).exp() * if l == 0 { 1.05 } else { 1.0 })
        .collect()
}

fn wilson(k: usize, n: usize) -> (f64, f64) {
    let z = 1.959_964;
    let (k, n) = (k as f64, n.max(1) as f64);
    let p = k / n;
    let d = 1.0 + z * z / n;
    let c = (p + z * z / (2.0 * n)) / d;
    let h = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / d;
    ((c - h).max(0.0) * 100.0, (c + h).min(1.0) * 100.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let runs: usize = opt("--runs").map_or(2000, |v| v.parse().expect("--runs N"));
    let plans: Vec<(u32, u32)> = opt("--plans").map_or_else(
        || vec![(10, 20), (5, 15), (8, 15), (5, 20)],
        |s| {
            s.split(',')
                .map(|p| {
                    let (a, b) = p.split_once(':').expect("--plans FIRST:MOST,...");
                    (a.parse().expect("FIRST"), b.parse().expect("MOST"))
                })
                .collect()
        },
    );
    let shift: f64 = opt("--shift").map_or(0.03, |v| v.parse::<f64>().expect("--shift PCT") / 100.0);
    println!(
        "SYNTHETIC, head at {:+.1} % (threshold 3 %), {runs} runs of 3 rows per plan\n",
        shift * 100.0
    );
    println!(
        "| pairs (first -> most) | looks | runs with any regression | Wilson 95 % | rows pass | Wilson 95 % | rows regression |\n|---|---:|---:|---|---:|---|---:|"
    );
    for (first, most) in plans {
        let text = format!(
            "version: 1\ntargets:\n  - name: k\n    command: [./k]\n    repetitions: {first}\n    max_repetitions: {most}\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n    sizes:\n      - {{m: 0}}\n      - {{m: 1}}\n      - {{m: 2}}\n"
        );
        let spec = cgp_spec::spec::load_str(&text, Path::new("plan.yaml")).unwrap();
        let (mut any, mut pass, mut reg, mut rows) = (0, 0, 0, 0);
        for k in 0..runs {
            let seed = seed_for(56, &format!("plan/{first}/{most}/{k}"));
            let row = |j: &Job<'_>| {
                j.size
                    .key()
                    .trim_start_matches("m=")
                    .parse::<usize>()
                    .unwrap_or(0)
            };
            let mut brng = Rng::new(seed_for(seed, "base"));
            let mut b = SimProfiler::new(|j: Job<'_>| process(&mut brng, NOISE[row(&j)], 1e5));
            let mut hrng = Rng::new(seed_for(seed, "head"));
            let mut h =
                SimProfiler::new(|j: Job<'_>| process(&mut hrng, NOISE[row(&j)], 1e5 * (1.0 + shift)));
            let r = simulate_ab(&spec, &mut b, &mut h).unwrap();
            let mut any_reg = false;
            for x in r.rows.iter().filter(|x| x.key.metric == SIM_METRIC) {
                rows += 1;
                pass += usize::from(x.verdict() == RowVerdict::Pass);
                reg += usize::from(x.verdict() == RowVerdict::Regression);
                any_reg |= x.verdict() == RowVerdict::Regression;
            }
            any += usize::from(any_reg);
        }
        let (lo, hi) = wilson(any, runs);
        let (plo, phi) = wilson(pass, rows);
        println!(
            "| {first} -> {most} | {} | {any} of {runs} ({:.2} %) | [{lo:.2}, {hi:.2}] | {pass} of {rows} ({:.2} %) | [{plo:.2}, {phi:.2}] | {reg} |",
            cgp_core::stats::remeasure::looks(first, most),
            100.0 * any as f64 / runs as f64,
            100.0 * pass as f64 / rows as f64
        );
    }
}
