//! SYNTHETIC simulation of `cgp-gate bisect` (docs/bisect.md): how often the culprit is right and
//! what the search costs, for shifts of 1, 2 and 4 times the threshold at a random commit of 8, 32
//! and 128, and how often a search over unchanged code reports a culprit at all.
//!
//! Everything between the drawn launch durations and the culprit is the command's own code: each
//! step is `run::ab::run_ab` (through `run::simulate::simulate_ab`: ABBA pairs, the paired test, the
//! re-measure loop) at the step's level (`alpha / max_steps`), `outcome::classify_commit` reads its
//! rows and `outcome::Search` picks the next commit. Only the processes are made up: 30
//! launches each (the first a warm-up), log-normal around the commit's level with the within-process
//! and between-process spreads FITTED to the REAL H100 30-launch pools (`rec/baseline` and
//! `rec/aa-pool`, per target; `tar xzf tests/fixtures/h100-30launch-pools/h100-30launch-pools.tar.gz
//! -C /tmp/pools`), the target of each search drawn in turn from the three.
//!
//! `cargo build-sims`, then `target/debug/examples/bisect_sim [--pools DIR] [--searches N]
//! [--creep]` (default `/tmp/pools`, 200 searches per cell; `--creep`: the creep table of issue 57
//! alone, every commit a step slower than the one before).

use std::cell::Cell;
use std::path::{Path, PathBuf};

use cgp_core::stats::rng::{Rng, seed_for};
use cgp_engine::run::simulate::{SIM_METRIC, SimProfiler, simulate_ab};
use cgp_outcome::outcome::results::Row;
use cgp_outcome::outcome::{Levels, Said, Search, SearchEnd, classify_commit};
use cgp_profile::profile::Job;

#[path = "sims/pools.rs"]
mod pools;
use pools::{durations, wilson};

const TARGETS: [&str; 3] = ["matmul", "reduce", "vector_add"];
const THRESHOLD: f64 = 0.03;
const ALPHA: f64 = 0.01;

/// The spreads of one target (log scale).
#[derive(Debug, Clone, Copy)]
struct Noise {
    within: f64,
    between: f64,
}

/// The processes of `pool/target` (launch durations, warm-up first).
fn processes(dir: &Path, target: &str) -> Vec<Vec<f64>> {
    let Some(size) = std::fs::read_dir(dir.join(target))
        .into_iter()
        .flatten()
        .flatten()
        .next()
    else {
        panic!("no pool in {}: extract the 30-launch pools there", dir.display());
    };
    std::fs::read_dir(size.path())
        .into_iter()
        .flatten()
        .flatten()
        .map(|f| f.path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .map(|p| durations(&p))
        .collect()
}

fn sd(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    (x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0)).sqrt()
}

/// Within: the median over processes of the sd of log launches after the warm-up. Between: the
/// sd of log process medians, each pool centred on its own mean (another job is another level).
fn fit(root: &Path, target: &str) -> Noise {
    let mut within = Vec::new();
    let mut between = Vec::new();
    for pool in ["baseline", "aa-pool"] {
        let mut meds = Vec::new();
        for p in processes(&root.join("rec").join(pool), target) {
            let logs: Vec<f64> = p.iter().skip(1).map(|v| v.ln()).collect();
            within.push(sd(&logs));
            meds.push(cgp_core::stats::order::median(&logs).unwrap_or(f64::NAN));
        }
        let m = meds.iter().sum::<f64>() / meds.len() as f64;
        between.extend(meds.iter().map(|v| v - m));
    }
    within.sort_by(f64::total_cmp);
    let n = between.len() as f64;
    Noise {
        within: within[within.len() / 2],
        between: (between.iter().map(|v| v * v).sum::<f64>() / (n - 2.0)).sqrt(),
    }
}

/// One process of 30 launches at level `mu` (launch 0 a warm-up 5 % slow).
fn process(rng: &mut Rng, n: Noise, mu: f64) -> Vec<f64> {
    let off = n.between * rng.normal();
    (0..30)
        .map(|l| mu * (off + n.within * rng.normal()).exp() * if l == 0 { 1.05 } else { 1.0 })
        .collect()
}

fn spec(levels: &Levels, threshold: f64) -> cgp_spec::spec::Spec {
    let text = format!(
        "version: 1\nsettings:\n  alpha: {}\n  confidence: {}\ntargets:\n  - name: k\n    command: [./k]\n    repetitions: 3\n    max_repetitions: 12\n    metrics:\n      {SIM_METRIC}: \"{}%\"\n",
        levels.step_alpha,
        1.0 - 2.0 * levels.step_alpha,
        threshold * 100.0
    );
    cgp_spec::spec::load_str(&text, Path::new("bisect-sim.yaml")).unwrap_or_else(|e| panic!("spec: {e}"))
}

/// What one search did: right culprit, any culprit, commits measured, processes.
struct Outcome {
    right: bool,
    any: bool,
    measured: usize,
    processes: usize,
}

/// One search over `n` commits, the first bad one `k` (slower by `shift`), noise `noise`, each
/// step judged against `threshold`.
fn search(n: usize, k: usize, shift: f64, threshold: f64, noise: Noise, seed: u64) -> Outcome {
    let (end, measured, processes) = search_levels(
        n,
        &|i| if i >= k { 1.0 + shift } else { 1.0 },
        threshold,
        noise,
        seed,
    );
    Outcome {
        right: end == SearchEnd::Culprit(k),
        any: matches!(end, SearchEnd::Culprit(_)),
        measured,
        processes,
    }
}

/// One search over `n` commits whose level against the good one is `level(i)`: where it ended,
/// the commits measured and the processes run.
fn search_levels(
    n: usize,
    level: &dyn Fn(usize) -> f64,
    threshold: f64,
    noise: Noise,
    seed: u64,
) -> (SearchEnd, usize, usize) {
    let levels = Levels::new(ALPHA, n);
    let spec = spec(&levels, threshold);
    let mut s = Search::new(n);
    let rng = std::cell::RefCell::new(Rng::new(seed));
    let count = Cell::new(0usize);
    let mut measured = 0;
    while let Some(i) = s.next() {
        if measured >= levels.max_steps {
            break;
        }
        let mu = 1000.0 * level(i);
        let mut base = SimProfiler::new(|_: Job<'_>| {
            count.set(count.get() + 1);
            process(&mut rng.borrow_mut(), noise, 1000.0)
        });
        let mut head = SimProfiler::new(|_: Job<'_>| {
            count.set(count.get() + 1);
            process(&mut rng.borrow_mut(), noise, mu)
        });
        let r = simulate_ab(&spec, &mut base, &mut head).unwrap_or_else(|e| panic!("ab: {e}"));
        let rows: Vec<&Row> = r.rows.iter().filter(|x| x.key.metric == SIM_METRIC).collect();
        let said = classify_commit(&rows);
        measured += usize::from(said != Said::Skipped);
        s.record(i, said);
    }
    (s.end(), measured, count.get())
}

/// Creep (issue 57): `n` commits each `step` slower than the one before, against the threshold;
/// the change from good reaches it at commit `T / step`. A search is right when the range (or the
/// culprit with its predecessor) it reports brackets that commit: its good end at or before it,
/// its bad end at or after it. `bisect` exits 0 on a culprit or a range (1 on no change).
fn creep(noises: &[Noise], searches: usize) {
    println!(
        "\n## SYNTHETIC creep: every commit slower than the one before by the step; threshold {:.0} %, {searches} searches per cell\n",
        THRESHOLD * 100.0
    );
    println!(
        "| step per commit | commits | crossing at commit | range or culprit bracketing it | Wilson 95% | culprit | range | no change (exit 1) | commits measured (mean) | processes (mean) |"
    );
    println!("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|");
    for (step, n) in [(0.01, 6usize), (0.005, 12)] {
        let crossing = (THRESHOLD / step).round() as usize;
        let (mut right, mut culprit, mut range, mut none, mut measured, mut procs) = (0, 0, 0, 0, 0, 0);
        for j in 0..searches {
            let seed = seed_for(57, &format!("creep/{step}/{n}/{j}"));
            let (end, m, p) = search_levels(
                n,
                &|i| 1.0 + step * i as f64,
                THRESHOLD,
                noises[j % noises.len()],
                seed,
            );
            measured += m;
            procs += p;
            let (lo, hi) = match &end {
                SearchEnd::Culprit(k) => {
                    culprit += 1;
                    (k - 1, *k)
                }
                SearchEnd::Range(r) => {
                    range += 1;
                    (r[0] - 1, *r.last().unwrap_or(&r[0]))
                }
                SearchEnd::NoChange(_) => {
                    none += 1;
                    (usize::MAX, 0)
                }
            };
            right += usize::from(lo <= crossing && crossing <= hi);
        }
        let (lo, hi) = wilson(right, searches);
        println!(
            "| +{:.1} % | {n} | {crossing} | {:.1} % | [{lo:.1}, {hi:.1}] | {culprit} | {range} | {none} | {:.2} | {:.1} |",
            step * 100.0,
            100.0 * right as f64 / searches as f64,
            measured as f64 / searches as f64,
            procs as f64 / searches as f64
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let root = PathBuf::from(value("--pools").unwrap_or_else(|| "/tmp/pools".into()));
    let searches: usize = value("--searches").map_or(200, |v| v.parse().unwrap_or(200));
    let noises: Vec<Noise> = TARGETS.iter().map(|t| fit(&root, t)).collect();
    if args.iter().any(|a| a == "--creep") {
        creep(&noises, searches);
        return;
    }
    println!("## SYNTHETIC bisect searches, noise fitted to the REAL H100 30-launch pools\n");
    for (t, n) in TARGETS.iter().zip(&noises) {
        println!(
            "- {t}: within a process {:.2} %, between processes {:.2} %",
            n.within * 100.0,
            n.between * 100.0
        );
    }
    println!(
        "\nthreshold {:.0} %, alpha {ALPHA}, 3 -> 12 pairs per step, {searches} searches per cell (5x for no shift and for 2x over 32), the first bad commit uniform over the commits\n",
        THRESHOLD * 100.0
    );
    println!(
        "| shift | commits | culprit right | Wilson 95% | any culprit | commits measured (mean) | processes (mean) |"
    );
    println!("|---|---:|---:|---|---:|---:|---:|");
    // (shift in thresholds, the threshold the steps judge against in thresholds): the spec's, and
    // for 1x and no shift also half of 1x, as `--from changes.json` (or `--threshold`) does.
    for (m, halved) in [
        (0u32, false),
        (1, false),
        (2, false),
        (4, false),
        (0, true),
        (1, true),
    ] {
        let judge = if halved { 0.5 } else { 1.0 };
        let mult = f64::from(m);
        for n in [8usize, 32, 128] {
            // The cells the targets are about get five times the searches: the false culprits of
            // unchanged code (at most alpha) and 2x the threshold over 32 commits (>= 99 % right).
            let searches = if (m == 0 && !halved) || (m == 2 && n == 32) {
                5 * searches
            } else {
                searches
            };
            let (mut right, mut any, mut measured, mut procs) = (0, 0, 0, 0);
            for j in 0..searches {
                let seed = seed_for(48, &format!("{mult}/{n}/{j}"));
                let k = 1 + Rng::new(seed ^ 0x5eed).below(n);
                let o = search(
                    n,
                    k,
                    mult * THRESHOLD,
                    judge * THRESHOLD,
                    noises[j % noises.len()],
                    seed,
                );
                right += usize::from(o.right);
                any += usize::from(o.any);
                measured += o.measured;
                procs += o.processes;
            }
            let (lo, hi) = wilson(if m == 0 { any } else { right }, searches);
            let mut label = if m == 0 {
                "none (A/A)".to_owned()
            } else {
                format!("{mult:.0}x ({:+.0} %)", mult * THRESHOLD * 100.0)
            };
            if halved {
                label.push_str(&format!(", judged against {:.1} %", judge * THRESHOLD * 100.0));
            }
            println!(
                "| {label} | {n} | {} | [{lo:.1}, {hi:.1}] | {:.1} % | {:.2} | {:.1} |",
                if m == 0 {
                    "-".to_owned()
                } else {
                    format!("{:.1} %", 100.0 * right as f64 / searches as f64)
                },
                100.0 * any as f64 / searches as f64,
                measured as f64 / searches as f64,
                procs as f64 / searches as f64
            );
        }
    }
}
