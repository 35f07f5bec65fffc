//! SYNTHETIC simulation (no GPU) of the two drift-resistant modes: `ab` (paired decision) and
//! `changes` (E-Divisive change points). Prints the tables in docs/ab-and-changes.md.
//!
//! Run: `cargo run --release --example ab_changes_power` (a few minutes in a debug build).

use std::time::Instant;

use cgp_core::stats::changepoint::{NullCache, Settings, e_divisive_shared};
use cgp_core::stats::paired::{PairedRow, judge_paired};
use cgp_core::stats::rng::Rng;
use cgp_core::stats::{Comparison, Config, judge_all, median};
use cgp_outcome::outcome::results::RowVerdict;
use cgp_spec::spec::{Direction, Threshold, ThresholdKind};

/// Paired noise model: each pair shares a clock factor uniform in +-3%; each run has its own
/// log-normal noise of CV 0.3%; the head is `shift` slower.
fn pairs(n: usize, shift: f64, rng: &mut Rng) -> (Vec<f64>, Vec<f64>) {
    (0..n)
        .map(|_| {
            let clock = 1.0 + 0.06 * (rng.next_f64() - 0.5);
            let b = 1000.0 * clock * (0.003 * rng.normal()).exp();
            let h = 1000.0 * (1.0 + shift) * clock * (0.003 * rng.normal()).exp();
            (b, h)
        })
        .unzip()
}

fn pct(k: usize, n: usize) -> String {
    format!("{:.1}", 100.0 * k as f64 / n as f64)
}

fn paired_table(runs: usize) {
    let threshold = Threshold {
        kind: ThresholdKind::Relative { fraction: 0.01 },
        direction: Direction::Lower,
        min_effect: None,
    };
    let cfg = Config::default();
    println!(
        "\n### `ab`: paired decision vs check's unpaired rule on the same runs ({runs} runs per cell)\n"
    );
    println!(
        "Threshold 1%, alpha 0.01. Rows per run: 1, or 10 (the slowed one and 9 unchanged, Holm over 10).\n"
    );
    println!(
        "| pairs | rows | shift | ab regression | ab pass | ab inconclusive | ab false alarms (other 9) | unpaired regression | unpaired pass |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut rng = Rng::new(17);
    for n in [5usize, 10, 20] {
        for rows in [1usize, 10] {
            for shift in [0.0, 0.01, 0.02, 0.03, 0.05] {
                let (mut reg, mut pass, mut inc, mut other, mut ureg, mut upass) = (0, 0, 0, 0, 0, 0);
                for _ in 0..runs {
                    let data: Vec<(Vec<f64>, Vec<f64>)> = (0..rows)
                        .map(|k| pairs(n, if k == 0 { shift } else { 0.0 }, &mut rng))
                        .collect();
                    let prs: Vec<PairedRow<'_>> = data
                        .iter()
                        .map(|(b, h)| PairedRow {
                            base: b,
                            head: h,
                            tolerance: 0.01,
                            min_effect: 0.0,
                            tolerance_text: "1% threshold".into(),
                            lower_is_better: true,
                            exact_kind: false,
                            left_out: Default::default(),
                            all_in: None,
                        })
                        .collect();
                    let j = judge_paired(&prs, 0.01, 0.95);
                    reg += usize::from(j[0].ruling.verdict == RowVerdict::Regression);
                    pass += usize::from(j[0].ruling.verdict == RowVerdict::Pass);
                    inc += usize::from(j[0].ruling.verdict == RowVerdict::Inconclusive);
                    other += usize::from(j[1..].iter().any(|x| x.ruling.verdict == RowVerdict::Regression));
                    let cmp: Vec<Comparison<'_>> = data
                        .iter()
                        .map(|(b, h)| Comparison {
                            key: "k".into(),
                            baseline: Some(b),
                            candidate: h,
                            threshold: &threshold,
                            history: &[],
                            baseline_runs: &[],
                            candidate_runs: &[],
                        })
                        .collect();
                    let u = judge_all(&cmp, &cfg);
                    ureg += usize::from(u[0].ruling.verdict == RowVerdict::Regression);
                    upass += usize::from(u[0].ruling.verdict == RowVerdict::Pass);
                }
                let others = if rows > 1 { pct(other, runs) } else { "-".into() };
                println!(
                    "| {n} | {rows} | {:.0}% | {} | {} | {} | {others} | {} | {} |",
                    shift * 100.0,
                    pct(reg, runs),
                    pct(pass, runs),
                    pct(inc, runs),
                    pct(ureg, runs),
                    pct(upass, runs)
                );
            }
        }
    }
}

fn series(step: f64, rng: &mut Rng) -> Vec<f64> {
    (0..30)
        .map(|i| if i >= 15 { 1000.0 * (1.0 + step) } else { 1000.0 } * (0.01 * rng.normal()).exp())
        .collect()
}

fn settings(level: f64, seed: u64) -> Settings {
    Settings {
        level,
        max_permutations: Settings::permutations_for(level),
        stop_after_exceedances: 10,
        min_segment: 3,
        seed,
    }
}

fn changes_table(runs: usize) {
    println!("\n### `changes`: one series of 30 results, CV 1%, step at 15 ({runs} series per cell)\n");
    println!(
        "Level per test = alpha 0.01 / m series (Bonferroni). Found: a change point at 15 +- 1 of at least 1%.\n"
    );
    println!("| m series | step | found at 15+-1 | any change point | median reported size (found) |");
    println!("|---|---|---|---|---|");
    let mut rng = Rng::new(99);
    // One shared null per segment length for all the series, as `changes` keeps one per run.
    let mut nulls = NullCache::new(0);
    for m in [1usize, 16, 100] {
        let level = 0.01 / m as f64;
        for step in [0.01, 0.02, 0.03] {
            let (mut found, mut any) = (0, 0);
            let mut sizes = Vec::new();
            for seed in 0..runs as u64 {
                let x = series(step, &mut rng);
                let cps = e_divisive_shared(&x, &settings(level, seed), &mut nulls);
                any += usize::from(!cps.is_empty());
                let mut bounds = vec![0];
                bounds.extend(cps.iter().map(|c| c.index));
                bounds.push(x.len());
                for (k, c) in cps.iter().enumerate() {
                    let b = median(&x[bounds[k]..bounds[k + 1]]).unwrap_or(f64::NAN);
                    let a = median(&x[bounds[k + 1]..bounds[k + 2]]).unwrap_or(f64::NAN);
                    let size = a / b - 1.0;
                    if c.index.abs_diff(15) <= 1 && size.abs() >= 0.01 {
                        found += 1;
                        sizes.push(size);
                        break;
                    }
                }
            }
            let med = median(&sizes).map_or_else(|| "-".to_owned(), |s| format!("{:+.2}%", s * 100.0));
            println!(
                "| {m} | {:.0}% | {} | {} | {med} |",
                step * 100.0,
                pct(found, runs),
                pct(any, runs)
            );
        }
    }
    println!(
        "\nFlat histories (no change), m = 16 series of 30, CV 1%, {runs} runs: share of runs with any change point of at least 1%:"
    );
    let mut runs_with = 0;
    for r in 0..runs as u64 {
        let mut hit = false;
        for s in 0..16u64 {
            let x = series(0.0, &mut rng);
            let cps = e_divisive_shared(&x, &settings(0.01 / 16.0, r * 16 + s), &mut nulls);
            let mut bounds = vec![0];
            bounds.extend(cps.iter().map(|c| c.index));
            bounds.push(x.len());
            hit |= (0..cps.len()).any(|k| {
                let b = median(&x[bounds[k]..bounds[k + 1]]).unwrap_or(f64::NAN);
                let a = median(&x[bounds[k + 1]..bounds[k + 2]]).unwrap_or(f64::NAN);
                (a / b - 1.0).abs() >= 0.01
            });
        }
        runs_with += usize::from(hit);
    }
    println!("  {runs_with}/{runs} = {}%", pct(runs_with, runs));
}

fn main() {
    let t = Instant::now();
    println!(
        "SYNTHETIC SIMULATION (no GPU): seeded noise models, see the comments in examples/ab_changes_power.rs"
    );
    paired_table(1000);
    changes_table(200);
    println!("\nelapsed {:.1} s", t.elapsed().as_secs_f64());
}
