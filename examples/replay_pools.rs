//! Replay the REAL H100 recordings of 2026-11-24 (`/work/shared/gpu/h100-2026-11-24/`, extracted
//! to `/tmp/h100`) through the statistics, before (every launch its own sample, warm-ups kept, the
//! rank test) and after (launches grouped in runs, warm-ups dropped, the run-level model), and
//! split the noise of the launch-scaling captures into its within- and between-process parts.
//!
//! `cargo run --release --example replay_pools [H100_DIR]` (default `/tmp/h100`).
//!
//! Pools: `validation-aa/rec/plain-pool` (54 processes of unchanged code per target) and
//! `validation-planted/rec/extra{1,3,10}-pool` (14 processes of planted slowdowns), each process
//! 3 launches per kernel; baselines: the `rec/baseline` recording of the same part (10
//! processes). A check takes consecutive processes of the pool (disjoint slices). The family of
//! each check is its three `gpu__time_duration.sum` rows (matmul, reduce, vector_add), threshold
//! 3 %, alpha 0.01.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cgp_gate::foundation::threshold::{Direction, Threshold, ThresholdKind};
use cgp_gate::measured::samples::MetricValue;
use cgp_gate::outcome::results::RowVerdict;
use cgp_gate::stats::nested::{Runs, fit};
use cgp_gate::stats::spending::LookAt;
use cgp_gate::stats::{Comparison, Config, judge_all_at};

const METRIC: &str = "gpu__time_duration.sum";

/// target -> processes (in order) -> launch durations of the target's kernel, in order.
type Pool = BTreeMap<String, Vec<Vec<f64>>>;

/// Samples with the run of each.
type Grouped = (Vec<f64>, Vec<u32>);

fn durations(csv: &Path) -> Vec<f64> {
    let text = std::fs::read_to_string(csv).unwrap_or_else(|e| panic!("{}: {e}", csv.display()));
    let parsed = cgp_gate::ncu::parse::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", csv.display()));
    parsed
        .launches
        .iter()
        .filter_map(|l| match l.metrics.get(METRIC).map(|m| &m.value) {
            Some(MetricValue::Number(v)) => Some(*v),
            _ => None,
        })
        .collect()
}

fn load_pool(dir: &Path) -> Pool {
    let mut pool = Pool::new();
    let Ok(targets) = std::fs::read_dir(dir) else {
        return pool;
    };
    for t in targets.flatten().filter(|e| e.path().is_dir()) {
        for size in std::fs::read_dir(t.path()).into_iter().flatten().flatten() {
            let mut reps: Vec<(u32, PathBuf)> = std::fs::read_dir(size.path())
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|f| {
                    let p = f.path();
                    let n = p.file_stem()?.to_str()?.parse().ok()?;
                    (p.extension()? == "csv").then_some((n, p))
                })
                .collect();
            reps.sort();
            let runs = reps.iter().map(|(_, p)| durations(p)).collect();
            pool.insert(t.file_name().to_string_lossy().into_owned(), runs);
        }
    }
    pool
}

fn threshold() -> Threshold {
    Threshold {
        kind: ThresholdKind::Relative { fraction: 0.03 },
        direction: Direction::Lower,
        min_effect: None,
    }
}

/// Flattened values and run indices of `runs`, warm-up dropped (launch 0 of a run of >= 3) when
/// `warmup`.
fn flat(runs: &[Vec<f64>], warmup: bool) -> Grouped {
    let mut v = Vec::new();
    let mut r = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let skip = usize::from(warmup && run.len() >= 3);
        for x in &run[skip..] {
            v.push(*x);
            r.push(i as u32);
        }
    }
    (v, r)
}

/// How alpha is spent over the looks of the sequential rule.
#[derive(Clone, Copy, PartialEq)]
enum Spend {
    /// `alpha / looks` at every look (Bonferroni, the rule before issue 35).
    Bonferroni(u32),
    /// The group sequential rule `check` uses (`stats::spending`): 1 process first, up to 3.
    Planned,
}

/// Judge one check (every target of the pool) with `procs` processes from `from`; `new`: the
/// run-level model, else the previous rule. Returns target -> verdict.
fn check(
    base: &Pool,
    pool: &Pool,
    from: usize,
    procs: usize,
    new: bool,
    spend: Spend,
) -> BTreeMap<String, RowVerdict> {
    let t = threshold();
    let data: Vec<(String, Grouped, Grouped)> = pool
        .iter()
        .filter_map(|(name, runs)| {
            let b = base.get(name)?;
            let c = runs.get(from..from + procs)?;
            Some((name.clone(), flat(b, new), flat(c, new)))
        })
        .collect();
    let rows: Vec<Comparison<'_>> = data
        .iter()
        .map(|(name, b, c)| Comparison {
            key: name.clone(),
            baseline: Some(&b.0),
            candidate: &c.0,
            threshold: &t,
            history: &[],
            baseline_runs: if new { &b.1 } else { &[] },
            candidate_runs: if new { &c.1 } else { &[] },
        })
        .collect();
    let (looks, at) = match spend {
        Spend::Bonferroni(k) => (k, Vec::new()),
        Spend::Planned => (
            3,
            vec![
                LookAt {
                    repetitions: 1,
                    max_repetitions: 3,
                    done: procs as u32,
                };
                rows.len()
            ],
        ),
    };
    let cfg = Config {
        looks,
        ..Config::default()
    };
    data.iter()
        .zip(judge_all_at(&rows, &cfg, &at))
        .map(|((n, _, _), j)| (n.clone(), j.verdict))
        .collect()
}

/// One sequential check: target -> verdict, target -> processes used.
type Sequential = (BTreeMap<String, RowVerdict>, BTreeMap<String, usize>);

/// The sequential rule: 1 process first, up to 3, decided rows stop (alpha over 3 looks, spent
/// by `spend`).
fn sequential(base: &Pool, pool: &Pool, from: usize, spend: Spend) -> Sequential {
    let mut decided: BTreeMap<String, RowVerdict> = BTreeMap::new();
    let mut used: BTreeMap<String, usize> = BTreeMap::new();
    let mut last = BTreeMap::new();
    for procs in 1..=3 {
        let v = check(base, pool, from, procs, true, spend);
        for (name, verdict) in &v {
            if decided.contains_key(name) {
                continue;
            }
            used.insert(name.clone(), procs);
            if matches!(
                verdict,
                RowVerdict::Regression | RowVerdict::Pass | RowVerdict::Improvement
            ) {
                decided.insert(name.clone(), *verdict);
            }
        }
        last = v;
    }
    for (n, v) in last {
        decided.entry(n).or_insert(v);
    }
    (decided, used)
}

fn tally(vs: &[BTreeMap<String, RowVerdict>], target: &str) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for v in vs {
        if let Some(x) = v.get(target) {
            *counts.entry(x.as_str()).or_default() += 1;
        }
    }
    let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
    format!("{} of {}", parts.join(", "), vs.len())
}

fn main() {
    let root = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "/tmp/h100".to_owned()));
    println!(
        "REAL H100 recordings (2026-11-24, 3 launches per process), replayed; threshold 3%, alpha 0.01, family: the 3 time rows of a check\n"
    );
    let parts = [
        ("validation-aa", vec!["plain-pool"]),
        (
            "validation-planted",
            vec!["extra1-pool", "extra3-pool", "extra10-pool"],
        ),
    ];
    println!(
        "| pool | target | checks | before: 2 processes, every launch a sample | after: 2 processes, runs, warm-up dropped | 1 process first, up to 3, Bonferroni over the looks | processes per verdict | 1 process first, up to 3, alpha spending (HSD -2) | processes per verdict |"
    );
    println!("|---|---|---:|---|---|---|---:|---|---:|");
    for (part, pools) in parts {
        let base = load_pool(&root.join(part).join("rec/baseline"));
        for p in pools {
            let pool = load_pool(&root.join(part).join("rec").join(p));
            let n = pool.values().map(Vec::len).min().unwrap_or(0);
            let before: Vec<_> = (0..n / 2)
                .map(|k| check(&base, &pool, 2 * k, 2, false, Spend::Bonferroni(1)))
                .collect();
            let after: Vec<_> = (0..n / 2)
                .map(|k| check(&base, &pool, 2 * k, 2, true, Spend::Bonferroni(1)))
                .collect();
            let seq: Vec<_> = (0..n / 3)
                .map(|k| sequential(&base, &pool, 3 * k, Spend::Bonferroni(3)))
                .collect();
            let seq_v: Vec<_> = seq.iter().map(|(v, _)| v.clone()).collect();
            let spent: Vec<_> = (0..n / 3)
                .map(|k| sequential(&base, &pool, 3 * k, Spend::Planned))
                .collect();
            let spent_v: Vec<_> = spent.iter().map(|(v, _)| v.clone()).collect();
            for target in pool.keys() {
                let used = |s: &[Sequential]| {
                    s.iter().filter_map(|(_, u)| u.get(target)).sum::<usize>() as f64 / s.len().max(1) as f64
                };
                println!(
                    "| {p} | {target} | {} / {} | {} | {} | {} | {:.2} | {} | {:.2} |",
                    n / 2,
                    n / 3,
                    tally(&before, target),
                    tally(&after, target),
                    tally(&seq_v, target),
                    used(&seq),
                    tally(&spent_v, target),
                    used(&spent)
                );
            }
        }
    }
    // Within and between processes: the launch-scaling captures and the 54-process pool.
    println!(
        "\n| capture | processes x launches | within a process (sd) | between processes (sd, beyond the within part) | disturbed processes left out |"
    );
    println!("|---|---|---:|---:|---:|");
    let scaling = root.join("launch-scaling-captures");
    let mm: Vec<Vec<f64>> = (1..=6)
        .map(|p| durations(&scaling.join(format!("mm_L30_p{p}.csv"))))
        .collect();
    let split = |name: &str, runs: &[Vec<f64>], robust: bool| {
        let (v, r) = flat(runs, true);
        let side = Runs { values: &v, runs: &r };
        if let Ok(f) = fit(side, side, true, robust) {
            println!(
                "| {name} | {} x {} | {:.3}% | {:.3}% | {} |",
                runs.len(),
                runs.first().map_or(0, Vec::len),
                f.within_sd.unwrap_or(0.0) * 100.0,
                f.between_sd * 100.0,
                f.disturbed_runs[0].len()
            );
        }
    };
    split("matmul n=1024 (mm_L30_p1-6)", &mm, true);
    let aa = load_pool(&root.join("validation-aa/rec/plain-pool"));
    for (t, runs) in &aa {
        split(&format!("{t} (validation-aa plain-pool)"), runs, true);
        // The first 30 processes with process 12 planted +32 % (a preemption), without and
        // with the robust fit (`stats::nested`: disturbed runs left out).
        let mut planted: Vec<Vec<f64>> = runs.iter().take(30).cloned().collect();
        if let Some(p) = planted.get_mut(12) {
            p.iter_mut().for_each(|x| *x *= 1.32);
        }
        split(
            &format!("{t}, 30 processes, one planted +32%, every process kept"),
            &planted,
            false,
        );
        split(
            &format!("{t}, 30 processes, one planted +32%, robust"),
            &planted,
            true,
        );
    }
    let va = durations(&scaling.join("va_L300.csv"));
    let halves = [va[..va.len() / 2].to_vec(), va[va.len() / 2..].to_vec()];
    split(
        "vector_add, one process of 300 launches split in halves",
        &halves,
        true,
    );
}
