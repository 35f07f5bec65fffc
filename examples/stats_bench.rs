//! How long the statistics take at large sample counts (issue 13): one noisy row judged with
//! `n` samples per side, and its parts. A benchmark, not a test: it prints a table.
//!
//! `cargo run --release --example stats_bench`
//!
//! Data: SYNTHETIC log-normal durations (CV 1 %, about 50 us) rounded to whole nanoseconds as
//! ncu prints them, so the samples have ties; the candidate is 2 % slower. Each figure is the
//! fastest of three runs on this machine.

use std::time::Instant;

use cgp_core::stats::hodges_lehmann::relative_shift;
use cgp_core::stats::mannwhitney::{NullCache, mann_whitney};
use cgp_core::stats::noise::NoiseModel;
use cgp_core::stats::rng::Rng;
use cgp_core::stats::{Comparison, Config, judge};
use cgp_spec::spec::model::{Direction, Threshold, ThresholdKind};

fn best_of_3(mut f: impl FnMut()) -> f64 {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let threshold = Threshold {
        kind: ThresholdKind::Relative { fraction: 0.03 },
        direction: Direction::Lower,
        min_effect: None,
    };
    let model = NoiseModel::documented(0.01);
    println!("SYNTHETIC data; times in ms, fastest of 3, on this machine");
    println!("| n per side | judge one row | Hodges-Lehmann + interval | Mann-Whitney (2 tails) | verdict |");
    println!("|---:|---:|---:|---:|---|");
    for n in [1_000usize, 10_000, 50_000, 100_000, 200_000] {
        let mut rng = Rng::new(n as u64);
        let round = |v: Vec<f64>| -> Vec<f64> { v.into_iter().map(f64::round).collect() };
        let b = round(model.samples(&mut rng, n, 50_000.0, false));
        let c = round(model.samples(&mut rng, n, 51_000.0, false));
        let row = Comparison {
            key: "bench".into(),
            baseline: Some(&b),
            candidate: &c,
            threshold: &threshold,
            history: &[],
            baseline_runs: &[],
            candidate_runs: &[],
        };
        let cfg = Config::default();
        let mut verdict = String::new();
        let t_judge = best_of_3(|| verdict = format!("{:?}", judge(&row, &cfg).ruling.verdict));
        let t_hl = best_of_3(|| {
            let _ = relative_shift(&c, &b, 0.95, &mut NullCache::default());
        });
        let t_mw = best_of_3(|| {
            let _ = mann_whitney(&c, &b, &mut NullCache::default());
        });
        println!("| {n} | {t_judge:.1} | {t_hl:.1} | {t_mw:.1} | {verdict} |");
    }
}
