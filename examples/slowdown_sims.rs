//! Issue 43's tables, measured through the real `check` and `ab` (`run::simulate`: the engine's
//! work list, `run::measure`, the baselines read from a store, the re-measure loop, the
//! statistics and the alpha spending; only the launch durations come from a pool or a model).
//!
//! `cargo build-sims`, then `target/debug/examples/slowdown_sims [SECTION] [--pools DIR] [--runs N]`,
//! SECTION one of `slow-share`, `disturbed`, `pools` (REAL: the 30-launch H100 pools,
//! `tar xzf ../shared/gpu/h100-30launch-pools/h100-30launch-pools.tar.gz -C DIR`, default
//! `/tmp/pools`) and `alpha`, `ab-threshold` (SYNTHETIC: the nested noise model), or `all`.
//!
//! - `slow-share`: REAL processes of unchanged code (`aa-pool`, another job than the baseline)
//!   with a share of each process's launches after the warm-up multiplied by a factor (the
//!   planted slowdown of issue 43); 8 checks per setting, each 1 to 3 processes of a seeded
//!   random order, three rows (matmul, reduce, vector_add) against the REAL 10-process baseline.
//! - `disturbed`: 20 candidate processes drawn (seeded, with replacement) from `aa-pool`, of
//!   which 2 to 4 are slowed whole; `repetitions: 20`.
//! - `pools`: the REAL pools as they are (A/A, +1 %, +3 %, +10 % builds), `CHECKS` resampled
//!   checks each.
//! - `alpha`: SYNTHETIC, 10 rows all at exactly +3 % (the threshold), each row's level offset
//!   per job uniform in +-0.45 % (two jobs differ by up to 0.9 %), within a process 0.2-1.5 %,
//!   between processes 0-0.4 %, 30 launches, 1 then up to 3 processes, a 10-process baseline and
//!   0, 2, 4 or 9 older medians from their own jobs; the rate of checks with ANY regression.
//!   Also unchanged code and +7 %.
//! - `ab-threshold`: SYNTHETIC `ab` rows at exactly the threshold: the share that pass.
//!
//! Every figure printed is measured here; the REAL ones on the H100 captures, the SYNTHETIC
//! ones on the model.

use std::collections::BTreeMap;
use std::path::Path;

use cgp_core::stats::rng::{Rng, seed_for};
use cgp_engine::run::simulate::{SIM_METRIC, SimProfiler, simulate_ab, simulate_check, write_baseline};
use cgp_outcome::outcome::results::RowVerdict;
use cgp_profile::profile::Job;
use cgp_spec::spec::Spec;

#[path = "sims/pools.rs"]
mod pools;
use pools::{Count, Pool, check, load_pool, order, rows, spec, uniform, wilson};

/// The true change of the mean launch time when `share` of the launches after the warm-up take
/// `factor` times as long, measured on the pool (every process, every target).
fn true_change(pool: &Pool, share: f64, factor: f64) -> f64 {
    let mut ratios = Vec::new();
    for runs in pool.values() {
        for r in runs {
            let after = &r[1..];
            let k = (share * after.len() as f64).round() as usize;
            let plain: f64 = after.iter().sum();
            let slowed: f64 = after
                .iter()
                .enumerate()
                .map(|(i, x)| if i < k { x * factor } else { *x })
                .sum();
            ratios.push(slowed / plain - 1.0);
        }
    }
    ratios.iter().sum::<f64>() / ratios.len() as f64
}

fn slow_share(root: &Path) {
    let base = load_pool(&root.join("rec/baseline"));
    let aa = load_pool(&root.join("rec/aa-pool"));
    let spec = spec(1, 3, "");
    println!(
        "\n## Slow launches planted in REAL A/A processes (check, 1 -> 3 processes, 8 checks x 3 rows per setting)\n"
    );
    println!(
        "| share x factor | true change of the mean | regression | pass | inconclusive | median shown change |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for share in [0.10, 0.25, 0.40] {
        for factor in [1.5, 2.0, 3.0] {
            let mut count = Count::default();
            for k in 0..8u64 {
                let mut rng = Rng::new(seed_for(43, &format!("share/{share}/{factor}/{k}")));
                let ord = order(&mut rng, aa["matmul"].len());
                let mut cand = |t: &str, rep: usize| -> Vec<f64> {
                    let mut p = aa[t][ord[rep % ord.len()]].clone();
                    let after = p.len() - 1;
                    let slow = (share * after as f64).round() as usize;
                    // Which launches: a seeded random choice per process.
                    let mut prng = Rng::new(seed_for(k, &format!("{t}/{rep}")));
                    for i in order(&mut prng, after).into_iter().take(slow) {
                        p[i + 1] *= factor;
                    }
                    p
                };
                for (_, v, c) in rows(&check(&spec, &base, &mut cand)) {
                    count.add(v, c);
                }
            }
            println!(
                "| {:.0}% x {factor} | {:+.1}% | {} | {} | {} | {:+.2}% |",
                share * 100.0,
                true_change(&aa, share, factor) * 100.0,
                count.regression,
                count.pass,
                count.inconclusive,
                count.median_change() * 100.0
            );
        }
    }
}

fn disturbed(root: &Path) {
    let base = load_pool(&root.join("rec/baseline"));
    let aa = load_pool(&root.join("rec/aa-pool"));
    let spec = spec(20, 20, "");
    println!(
        "\n## 20 REAL A/A processes, some slowed whole (check, repetitions 20; 34 checks x 3 rows per setting; the baseline's 10 REAL processes each taken twice)\n"
    );
    println!("| slowed processes x factor | true change of the mean | regression | pass | inconclusive |");
    println!("|---|---:|---:|---:|---:|");
    for (k, factor) in [(4usize, 1.3), (4, 1.15), (3, 1.5), (2, 2.0)] {
        let mut count = Count::default();
        for c in 0..34u64 {
            let mut rng = Rng::new(seed_for(43, &format!("disturbed/{k}/{factor}/{c}")));
            let picks: Vec<usize> = (0..20).map(|_| rng.below(aa["matmul"].len())).collect();
            let slowed: Vec<usize> = order(&mut rng, 20).into_iter().take(k).collect();
            let mut cand = |t: &str, rep: usize| -> Vec<f64> {
                let f = if slowed.contains(&rep) { factor } else { 1.0 };
                aa[t][picks[rep % 20]].iter().map(|x| x * f).collect()
            };
            for (_, v, ch) in rows(&check(&spec, &base, &mut cand)) {
                count.add(v, ch);
            }
        }
        println!(
            "| {k} x {factor} | {:+.1}% | {} | {} | {} |",
            (k as f64 * (factor - 1.0) / 20.0) * 100.0,
            count.regression,
            count.pass,
            count.inconclusive
        );
    }
}

fn pools(root: &Path, checks: usize) {
    let base = load_pool(&root.join("rec/baseline"));
    println!(
        "\n## The REAL 30-launch pools as recorded (check, 1 -> 3 processes of a random order, {checks} checks)\n"
    );
    for extra in ["", "settings:\n  job_spread: \"0%\"\n"] {
        let spec = spec(1, 3, extra);
        println!(
            "\n{}\n\n| pool | target | regression | pass | inconclusive | median shown change |\n|---|---|---:|---:|---:|---:|",
            if extra.is_empty() {
                "Default job spread prior (0.3 %): the baseline is from another job than the check."
            } else {
                "`job_spread: \"0%\"`: as if the baseline were from the check's own job."
            }
        );
        for name in ["aa-pool", "extra1-pool", "extra3-pool", "extra10-pool"] {
            let pool = load_pool(&root.join("rec").join(name));
            let mut by: BTreeMap<String, Count> = BTreeMap::new();
            for c in 0..checks {
                let mut rng = Rng::new(seed_for(43, &format!("pools/{name}/{c}")));
                let ord = order(&mut rng, pool["matmul"].len());
                let mut cand = |t: &str, rep: usize| -> Vec<f64> {
                    let runs = &pool[t];
                    runs[ord[rep % ord.len()] % runs.len()].clone()
                };
                for (t, v, ch) in rows(&check(&spec, &base, &mut cand)) {
                    by.entry(t).or_default().add(v, ch);
                }
            }
            for (t, c) in &by {
                println!(
                    "| {name} | {t} | {} | {} | {} | {:+.2}% |",
                    c.regression,
                    c.pass,
                    c.inconclusive,
                    c.median_change() * 100.0
                );
            }
        }
    }
}

/// The nested model's noise of one row.
#[derive(Clone, Copy)]
struct Noise {
    within: f64,
    between: f64,
}

/// One process of 30 launches at level `mu` (launch 0 a warm-up 3-7 % slow).
fn process(rng: &mut Rng, n: Noise, mu: f64) -> Vec<f64> {
    let off = n.between * rng.normal();
    let warm = uniform(rng, 0.03, 0.07);
    (0..30)
        .map(|l| mu * (off + n.within * rng.normal()).exp() * if l == 0 { 1.0 + warm } else { 1.0 })
        .collect()
}

const ROWS: usize = 10;
const HALF: f64 = 0.0045;

fn synthetic_spec() -> Spec {
    let mut text = String::from(
        "version: 1\ntargets:\n  - name: k\n    command: [./k]\n    repetitions: 1\n    max_repetitions: 3\n    baseline_repetitions: 10\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n    sizes:\n",
    );
    for m in 0..ROWS {
        text.push_str(&format!("      - {{m: {m}}}\n"));
    }
    cgp_spec::spec::load_str(&text, Path::new("alpha.yaml")).unwrap_or_else(|e| panic!("spec: {e}"))
}

fn row_of(job: &Job<'_>) -> usize {
    job.size.key().trim_start_matches("m=").parse().unwrap_or(0)
}

/// One synthetic check: every row shifted by `shift`, `older` older medians; the row verdicts.
fn synthetic_check(spec: &Spec, shift: f64, older: usize, seed: u64) -> Vec<RowVerdict> {
    let mut rng = Rng::new(seed);
    let noise: Vec<Noise> = (0..ROWS)
        .map(|_| Noise {
            within: uniform(&mut rng, 0.002, 0.015),
            between: uniform(&mut rng, 0.0, 0.004),
        })
        .collect();
    // Each row's offset in each job: the baseline's, the candidate's, each older baseline's.
    let job = |rng: &mut Rng| uniform(rng, -HALF, HALF);
    let base_off: Vec<f64> = (0..ROWS).map(|_| job(&mut rng)).collect();
    let cand_off: Vec<f64> = (0..ROWS).map(|_| job(&mut rng)).collect();
    let history: Vec<Vec<f64>> = noise
        .iter()
        .map(|n| {
            let se = ((n.between.powi(2) + n.within.powi(2) / 29.0) / 10.0).sqrt();
            (0..older)
                .map(|_| 1e5 * (job(&mut rng) + se * rng.normal()).exp())
                .collect()
        })
        .collect();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temporary directory: {e}"));
    let mut brng = Rng::new(seed_for(seed, "base"));
    let mut b = SimProfiler::new(|j: Job<'_>| {
        let i = row_of(&j);
        process(&mut brng, noise[i], 1e5 * base_off[i].exp())
    });
    let hist = |size: &str| history[size.trim_start_matches("m=").parse::<usize>().unwrap_or(0)].clone();
    write_baseline(spec, dir.path(), &mut b, &hist).unwrap_or_else(|e| panic!("baseline: {e}"));
    let mut crng = Rng::new(seed_for(seed, "cand"));
    let mut c = SimProfiler::new(|j: Job<'_>| {
        let i = row_of(&j);
        process(&mut crng, noise[i], 1e5 * cand_off[i].exp() * (1.0 + shift))
    });
    let r = simulate_check(spec, dir.path(), &mut c).unwrap_or_else(|e| panic!("check: {e}"));
    (0..ROWS)
        .map(|i| {
            let size = format!("m={i}");
            r.rows
                .iter()
                .find(|x| x.key.size == size && x.key.metric == SIM_METRIC)
                .map_or(RowVerdict::Error, |x| x.verdict())
        })
        .collect()
}

fn alpha(runs: usize) {
    let spec = synthetic_spec();
    println!(
        "\n## SYNTHETIC: {ROWS} rows, job drift +-0.9 % per row per job, {runs} checks per cell (check, 1 -> 3 processes of 30 launches)\n"
    );
    println!(
        "| change of every row | older medians | checks with any regression | Wilson 95% | rows regression | rows pass | rows inconclusive |"
    );
    println!("|---|---:|---:|---|---:|---:|---:|");
    for (shift, histories, runs) in [
        (0.03, vec![0, 2, 4, 9], runs),
        (0.0, vec![0, 9], runs / 4),
        (0.07, vec![0, 9], runs / 4),
    ] {
        for older in histories {
            let (mut any, mut reg, mut pass, mut inc) = (0, 0, 0, 0);
            for k in 0..runs {
                let v = synthetic_check(
                    &spec,
                    shift,
                    older,
                    seed_for(43, &format!("alpha/{shift}/{older}/{k}")),
                );
                any += usize::from(v.contains(&RowVerdict::Regression));
                reg += v.iter().filter(|x| **x == RowVerdict::Regression).count();
                pass += v.iter().filter(|x| **x == RowVerdict::Pass).count();
                inc += v.iter().filter(|x| **x == RowVerdict::Inconclusive).count();
            }
            let (lo, hi) = wilson(any, runs);
            let rows = (runs * ROWS) as f64;
            println!(
                "| {:+.0}% | {older} | {any} of {runs} ({:.2}%) | [{lo:.2}, {hi:.2}] | {:.2}% | {:.2}% | {:.2}% |",
                shift * 100.0,
                100.0 * any as f64 / runs as f64,
                100.0 * reg as f64 / rows,
                100.0 * pass as f64 / rows,
                100.0 * inc as f64 / rows
            );
        }
    }
}

fn ab_threshold(runs: usize) {
    let spec = {
        let mut text = String::from(
            "version: 1\ntargets:\n  - name: k\n    command: [./k]\n    repetitions: 3\n    max_repetitions: 10\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n    sizes:\n",
        );
        for m in 0..ROWS {
            text.push_str(&format!("      - {{m: {m}}}\n"));
        }
        cgp_spec::spec::load_str(&text, Path::new("ab.yaml")).unwrap_or_else(|e| panic!("spec: {e}"))
    };
    let (mut pass, mut total) = (0usize, 0usize);
    for k in 0..runs {
        let seed = seed_for(43, &format!("ab/{k}"));
        let mut rng = Rng::new(seed);
        let noise: Vec<Noise> = (0..ROWS)
            .map(|_| Noise {
                within: uniform(&mut rng, 0.002, 0.015),
                between: uniform(&mut rng, 0.0, 0.004),
            })
            .collect();
        let clock = |j: &Job<'_>| {
            let mut r = Rng::new(seed_for(seed, &format!("clock/{}/{}", j.size.key(), j.rep)));
            1.0 + uniform(&mut r, -0.03, 0.03)
        };
        let mut brng = Rng::new(seed_for(seed, "base"));
        let mut b = SimProfiler::new(|j: Job<'_>| process(&mut brng, noise[row_of(&j)], 1e5 * clock(&j)));
        let mut hrng = Rng::new(seed_for(seed, "head"));
        let mut h = SimProfiler::new(|j: Job<'_>| process(&mut hrng, noise[row_of(&j)], 1.03e5 * clock(&j)));
        let r = simulate_ab(&spec, &mut b, &mut h).unwrap_or_else(|e| panic!("ab: {e}"));
        for x in r.rows.iter().filter(|x| x.key.metric == SIM_METRIC) {
            total += 1;
            pass += usize::from(x.verdict() == RowVerdict::Pass);
        }
    }
    let (lo, hi) = wilson(pass, total);
    println!(
        "\n## SYNTHETIC `ab` rows at exactly +3 % (3 -> 10 pairs, pairs share a clock factor of +-3 %)\n\npass {pass} of {total} rows ({:.2}%, Wilson 95% [{lo:.2}, {hi:.2}])",
        100.0 * pass as f64 / total.max(1) as f64
    );
}

fn main() {
    let args = pools::Args::read();
    let section = args.section();
    let root = args.root();
    let runs: usize = args.runs(300);
    let started = std::time::Instant::now();
    let all = section == "all";
    if all || section == "slow-share" {
        slow_share(&root);
    }
    if all || section == "disturbed" {
        disturbed(&root);
    }
    if all || section == "pools" {
        pools(&root, runs.min(200));
    }
    if all || section == "alpha" {
        alpha(runs);
    }
    if all || section == "ab-threshold" {
        ab_threshold(runs / 3);
    }
    println!("\nelapsed {:.1} s", started.elapsed().as_secs_f64());
}
