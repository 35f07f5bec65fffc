//! Replay the REAL H100 recordings of 2026-11-24 (`/work/shared/gpu/h100-2026-11-24/`, extracted
//! to `/tmp/h100`) through the statistics, before (every launch its own sample, warm-ups kept, the
//! rank test) and after (launches grouped in runs, warm-ups dropped, the run-level model), and
//! split the noise of the launch-scaling captures into its within- and between-process parts.
//!
//! `cargo build-sims`, then `target/debug/examples/replay_pools [H100_DIR] [CHECKS]` (default
//! `/tmp/h100`, 200; docs/statistics.md 6.4).
//!
//! Pools: `validation-aa/rec/plain-pool` (54 processes of unchanged code per target) and
//! `validation-planted/rec/extra{1,3,10}-pool` (14 processes of planted slowdowns), each process
//! 3 launches per kernel; baselines: the `rec/baseline` recording of the same part (10
//! processes). A check takes consecutive processes of the pool (disjoint slices); the resampled
//! replay then runs CHECKS checks per pool, each on a seeded random ordered subset of the pool's
//! processes, once with one process first and up to 3 and once with the validation kit's plan (3
//! first, up to 6); checks share processes, so they are not independent. The family of
//! each check is its three `gpu__time_duration.sum` rows (matmul, reduce, vector_add), threshold
//! 3 %, alpha 0.01.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cgp_core::foundation::threshold::{Direction, Threshold, ThresholdKind};
use cgp_core::measured::samples::MetricValue;
use cgp_core::stats::nested::{Runs, fit};
use cgp_core::stats::spending::LookAt;
use cgp_core::stats::{Comparison, Config, judge_all_at};
use cgp_outcome::outcome::results::RowVerdict;

use cgp_engine::run::simulate::{SIM_METRIC, SimProfiler, simulate_check, write_baseline};

const METRIC: &str = "gpu__time_duration.sum";

/// target -> processes (in order) -> launch durations of the target's kernel, in order.
type Pool = BTreeMap<String, Vec<Vec<f64>>>;

/// Samples with the run of each.
type Grouped = (Vec<f64>, Vec<u32>);

fn durations(csv: &Path) -> Vec<f64> {
    let text = std::fs::read_to_string(csv).unwrap_or_else(|e| panic!("{}: {e}", csv.display()));
    let parsed =
        cgp_read::ncu_output::parse::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", csv.display()));
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
    /// The group sequential rule `check` uses (`stats::spending`), planned from `Plan`.
    Planned(Plan),
}

/// A row's plan of processes: `first` first (`repetitions`), then `first` more up to `max`
/// (`max_repetitions`); a look after each round.
#[derive(Clone, Copy, PartialEq)]
struct Plan {
    first: usize,
    max: usize,
}

impl Plan {
    /// One process first, up to 3 (the plan the gate's defaults suggest for 30-launch processes).
    const ONE_TO_THREE: Plan = Plan { first: 1, max: 3 };
    /// Three processes first, up to 6: the plan the validation kit recorded these pools with
    /// (`cgp-gate.validate.yaml`, repetitions 3, max 6).
    const THREE_TO_SIX: Plan = Plan { first: 3, max: 6 };

    fn looks(self) -> u32 {
        (self.max / self.first) as u32
    }

    fn describe(self) -> String {
        format!("{} process(es) first, up to {}", self.first, self.max)
    }
}

/// Judge one check (every target of the pool) with the pool's processes `idx`, in that order;
/// `new`: the run-level model, else the previous rule. Returns target -> verdict.
fn check(base: &Pool, pool: &Pool, idx: &[usize], new: bool, spend: Spend) -> BTreeMap<String, RowVerdict> {
    let procs = idx.len();
    let t = threshold();
    let data: Vec<(String, Grouped, Grouped)> = pool
        .iter()
        .filter_map(|(name, runs)| {
            let b = base.get(name)?;
            let c: Vec<Vec<f64>> = idx.iter().map(|&i| runs.get(i).cloned()).collect::<Option<_>>()?;
            Some((name.clone(), flat(b, new), flat(&c, new)))
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
        Spend::Planned(plan) => (
            plan.looks(),
            vec![
                LookAt {
                    repetitions: plan.first as u32,
                    max_repetitions: plan.max as u32,
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
        .map(|((n, _, _), j)| (n.clone(), j.ruling.verdict))
        .collect()
}

/// One sequential check: target -> verdict, target -> processes used.
type Sequential = (BTreeMap<String, RowVerdict>, BTreeMap<String, usize>);

/// The sequential rule: `plan.first` processes first, up to `plan.max` (the pool's processes
/// `order`, in that order), decided rows stop (alpha over the plan's looks, spent by `spend`).
fn sequential(base: &Pool, pool: &Pool, order: &[usize], plan: Plan, spend: Spend) -> Sequential {
    let mut decided: BTreeMap<String, RowVerdict> = BTreeMap::new();
    let mut used: BTreeMap<String, usize> = BTreeMap::new();
    let mut last = BTreeMap::new();
    for procs in (plan.first..=plan.max).step_by(plan.first) {
        let v = check(base, pool, &order[..procs], true, spend);
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

/// The spec of a replayed check: the pool's targets, one size each, threshold 3 %, the plan's
/// processes, a baseline of 10 processes, the warm-up launch dropped.
fn replay_spec(targets: &[&String], plan: Plan) -> cgp_spec::spec::Spec {
    let mut text = String::from("version: 1\ntargets:\n");
    for t in targets {
        text.push_str(&format!(
            "  - name: {t}\n    command: [./{t}]\n    repetitions: {}\n    max_repetitions: {}\n    baseline_repetitions: 10\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n",
            plan.first, plan.max
        ));
    }
    cgp_spec::spec::load_str(&text, Path::new("replay.yaml")).unwrap_or_else(|e| panic!("replay spec: {e}"))
}

/// The sequential rule as `check` runs it: the real `check` (`run::simulate::simulate_check`:
/// the engine's re-measure loop, `run::measure` with its warm-up drop, the baseline read from a
/// store) on a simulated profiler that serves the REAL processes `order` of the pool, in that
/// order, by `plan`; the baseline is the part's REAL baseline pool, measured through the same
/// profiler and stored (`write_baseline`).
fn engine_check(base: &Pool, pool: &Pool, order: &[usize], plan: Plan) -> Sequential {
    let names: Vec<&String> = pool.keys().filter(|t| base.contains_key(*t)).collect();
    let spec = replay_spec(&names, plan);
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temporary directory: {e}"));
    let serve = |p: &Pool, order: Option<&[usize]>, job: cgp_profile::profile::Job<'_>| -> Vec<f64> {
        let rep = job.rep as usize;
        let i = order.map_or(Some(rep), |o| o.get(rep).copied());
        p.get(&job.target.name)
            .and_then(|runs| runs.get(i?))
            .cloned()
            .unwrap_or_default()
    };
    let mut base_profiler = SimProfiler::new(|job| serve(base, None, job));
    write_baseline(&spec, dir.path(), &mut base_profiler, &|_| Vec::new())
        .unwrap_or_else(|e| panic!("replayed baseline: {e}"));
    let mut used: BTreeMap<String, usize> = BTreeMap::new();
    let mut cand = SimProfiler::new(|job| {
        *used.entry(job.target.name.clone()).or_default() += 1;
        serve(pool, Some(order), job)
    });
    let r = simulate_check(&spec, dir.path(), &mut cand).unwrap_or_else(|e| panic!("check: {e}"));
    drop(cand);
    let verdicts = r
        .rows
        .iter()
        .filter(|x| x.key.metric == SIM_METRIC)
        .map(|x| (x.key.target.clone(), x.verdict()))
        .collect();
    (verdicts, used)
}

/// The `k`-th disjoint slice of 3 consecutive processes.
fn slice3(k: usize) -> [usize; 3] {
    [3 * k, 3 * k + 1, 3 * k + 2]
}

/// A uniformly random ordered subset of `k` of the indices `0..n` (partial Fisher-Yates), drawn
/// with the library's seeded generator (`stats::rng::Rng`).
fn ordered_subset(rng: &mut cgp_core::stats::rng::Rng, n: usize, k: usize) -> Vec<usize> {
    let mut all: Vec<usize> = (0..n).collect();
    for i in 0..k.min(n) {
        let j = i + rng.below(n - i);
        all.swap(i, j);
    }
    all.truncate(k.min(n));
    all
}

/// Mean processes per verdict of `target` over the checks `s`.
fn per_verdict(s: &[Sequential], target: &str) -> f64 {
    s.iter().filter_map(|(_, u)| u.get(target)).sum::<usize>() as f64 / s.len().max(1) as f64
}

/// The resampled replay: `checks` checks per pool, each on a random ordered subset of
/// `plan.max` of the pool's processes (seeded, drawn without replacement within a check; checks
/// share processes), by `plan`, under Bonferroni over the looks, alpha spending and the real
/// `check`, each check's three rules on the same processes in the same order.
fn resampled(root: &Path, parts: &[(&str, Vec<&str>)], checks: usize, plan: Plan, first_seed: u64) {
    println!(
        "\nResampled replay, {}: {checks} checks per pool, each a random ordered subset of {} of the pool's processes (stats::rng::Rng, seed {first_seed} + pool index); checks share processes, so they are not independent\n",
        plan.describe(),
        plan.max
    );
    println!(
        "| pool | target | checks | Bonferroni over the looks | processes per verdict | alpha spending (Bonferroni until the last look, which spends the rest) | processes per verdict | `check` itself | processes per verdict | spending regression, Bonferroni not | Bonferroni regression, spending not |"
    );
    println!("|---|---|---:|---|---:|---|---:|---|---:|---:|---:|");
    let mut seed = first_seed;
    for (part, pools) in parts {
        let base = load_pool(&root.join(part).join("rec/baseline"));
        for p in pools {
            let pool = load_pool(&root.join(part).join("rec").join(p));
            let n = pool.values().map(Vec::len).min().unwrap_or(0);
            let mut rng = cgp_core::stats::rng::Rng::new(seed);
            seed += 1;
            let orders: Vec<Vec<usize>> = (0..checks)
                .map(|_| ordered_subset(&mut rng, n, plan.max))
                .collect();
            let bonf: Vec<_> = orders
                .iter()
                .map(|o| sequential(&base, &pool, o, plan, Spend::Bonferroni(plan.looks())))
                .collect();
            let spent: Vec<_> = orders
                .iter()
                .map(|o| sequential(&base, &pool, o, plan, Spend::Planned(plan)))
                .collect();
            let engine: Vec<_> = orders
                .iter()
                .map(|o| engine_check(&base, &pool, o, plan))
                .collect();
            let verdicts = |s: &[Sequential]| s.iter().map(|(v, _)| v.clone()).collect::<Vec<_>>();
            let (bv, sv, ev) = (verdicts(&bonf), verdicts(&spent), verdicts(&engine));
            for target in pool.keys() {
                let reg = |v: &BTreeMap<String, RowVerdict>| v.get(target) == Some(&RowVerdict::Regression);
                let only = |a: &[BTreeMap<String, RowVerdict>], b: &[BTreeMap<String, RowVerdict>]| {
                    a.iter().zip(b).filter(|(x, y)| reg(x) && !reg(y)).count()
                };
                println!(
                    "| {p} | {target} | {checks} | {} | {:.2} | {} | {:.2} | {} | {:.2} | {} | {} |",
                    tally(&bv, target),
                    per_verdict(&bonf, target),
                    tally(&sv, target),
                    per_verdict(&spent, target),
                    tally(&ev, target),
                    per_verdict(&engine, target),
                    only(&sv, &bv),
                    only(&bv, &sv)
                );
            }
        }
    }
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
        "| pool | target | checks | before: 2 processes, every launch a sample | after: 2 processes, runs, warm-up dropped | 1 process first, up to 3, Bonferroni over the looks | processes per verdict | 1 process first, up to 3, alpha spending (Bonferroni until the last look, which spends the rest) | processes per verdict | `check` itself (the engine on a profiler serving the real processes) | processes per verdict |"
    );
    println!("|---|---|---:|---|---|---|---:|---|---:|---|---:|");
    for (part, pools) in &parts {
        let base = load_pool(&root.join(part).join("rec/baseline"));
        for p in pools {
            let pool = load_pool(&root.join(part).join("rec").join(p));
            let n = pool.values().map(Vec::len).min().unwrap_or(0);
            let before: Vec<_> = (0..n / 2)
                .map(|k| check(&base, &pool, &[2 * k, 2 * k + 1], false, Spend::Bonferroni(1)))
                .collect();
            let after: Vec<_> = (0..n / 2)
                .map(|k| check(&base, &pool, &[2 * k, 2 * k + 1], true, Spend::Bonferroni(1)))
                .collect();
            let seq: Vec<_> = (0..n / 3)
                .map(|k| sequential(&base, &pool, &slice3(k), Plan::ONE_TO_THREE, Spend::Bonferroni(3)))
                .collect();
            let seq_v: Vec<_> = seq.iter().map(|(v, _)| v.clone()).collect();
            let spent: Vec<_> = (0..n / 3)
                .map(|k| {
                    let plan = Plan::ONE_TO_THREE;
                    sequential(&base, &pool, &slice3(k), plan, Spend::Planned(plan))
                })
                .collect();
            let spent_v: Vec<_> = spent.iter().map(|(v, _)| v.clone()).collect();
            let engine: Vec<_> = (0..n / 3)
                .map(|k| engine_check(&base, &pool, &slice3(k), Plan::ONE_TO_THREE))
                .collect();
            let engine_v: Vec<_> = engine.iter().map(|(v, _)| v.clone()).collect();
            for target in pool.keys() {
                let used = |s: &[Sequential]| per_verdict(s, target);
                println!(
                    "| {p} | {target} | {} / {} | {} | {} | {} | {:.2} | {} | {:.2} | {} | {:.2} |",
                    n / 2,
                    n / 3,
                    tally(&before, target),
                    tally(&after, target),
                    tally(&seq_v, target),
                    used(&seq),
                    tally(&spent_v, target),
                    used(&spent),
                    tally(&engine_v, target),
                    used(&engine)
                );
            }
        }
    }
    reach(&root, Plan::ONE_TO_THREE);
    let checks = std::env::args()
        .nth(2)
        .map_or(Ok(200), |a| a.parse::<usize>())
        .unwrap_or_else(|e| panic!("number of resampled checks: {e}"));
    resampled(&root, &parts, checks, Plan::ONE_TO_THREE, 35);
    resampled(&root, &parts, checks, Plan::THREE_TO_SIX, 135);
    reach(&root, Plan::THREE_TO_SIX);
    // Within and between processes: the launch-scaling captures and the 54-process pool.
    println!(
        "\n| capture | processes x launches | within a process (sd) | between processes (sd, beyond the within part) | disturbed processes left out |"
    );
    println!("|---|---|---:|---:|---:|");
    // The launch-scaling captures are of the first lease only: a root of other recordings (a
    // later lease's pools, docs/gpu-lease.md) has none, and their rows are left out.
    let scaling = root.join("launch-scaling-captures");
    let scaling = scaling.is_dir().then_some(scaling);
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
    if let Some(dir) = &scaling {
        let mm: Vec<Vec<f64>> = (1..=6)
            .map(|p| durations(&dir.join(format!("mm_L30_p{p}.csv"))))
            .collect();
        split("matmul n=1024 (mm_L30_p1-6)", &mm, true);
    }
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
    if let Some(dir) = &scaling {
        let va = durations(&dir.join("va_L300.csv"));
        let halves = [va[..va.len() / 2].to_vec(), va[va.len() / 2..].to_vec()];
        split(
            "vector_add, one process of 300 launches split in halves",
            &halves,
            true,
        );
    }
}

/// What limits a planted slowdown near the threshold: for each planted pool and target, the
/// shift over the whole pool (every process against the 10 baseline processes, warm-ups
/// dropped), the model's standard error at 1 and 3 candidate processes (the first 3 of the
/// pool), the one-sided level the last look is tested at (Holm's first step over the check's 3
/// rows, the last look's share of alpha under `stats::spending`), and what follows: the chance a
/// check finds the pool's shift at 3 processes, and the smallest change found in 80 % of checks.
fn reach(root: &Path, plan: Plan) {
    use statrs::distribution::{ContinuousCDF, Normal};
    let z = Normal::standard();
    let alpha = 0.01;
    let (first, max) = (plan.first, plan.max);
    let last = LookAt {
        repetitions: first as u32,
        max_repetitions: max as u32,
        done: max as u32,
    };
    let level = cgp_core::stats::spending::share(alpha, &last, 3) * alpha / 3.0;
    let z_level = z.inverse_cdf(1.0 - level);
    let unit = |k: usize| if k == 1 { "process" } else { "processes" };
    println!(
        "\n| pool | target | shift over the whole pool | SE, {first} {} | SE, {max} {} | the shift beyond 3%, in SEs at {max} {} | one-sided level of the last look (z) | found at {max} {} (normal approximation) | found in 80% of checks from |",
        unit(first),
        unit(max),
        unit(max),
        unit(max)
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    let base = load_pool(&root.join("validation-planted/rec/baseline"));
    for p in ["extra1-pool", "extra3-pool", "extra10-pool"] {
        let pool = load_pool(&root.join("validation-planted/rec").join(p));
        for (t, runs) in &pool {
            let Some(b) = base.get(t) else { continue };
            let (bv, br) = flat(b, true);
            let se_at = |k: usize| {
                let (cv, cr) = flat(&runs[..k.min(runs.len())], true);
                fit(
                    Runs {
                        values: &bv,
                        runs: &br,
                    },
                    Runs {
                        values: &cv,
                        runs: &cr,
                    },
                    true,
                    true,
                )
                .ok()
            };
            let (Some(all), Some(early), Some(late)) = (se_at(runs.len()), se_at(first), se_at(max)) else {
                continue;
            };
            let beyond = (all.delta - 0.03f64.ln_1p()) / late.se;
            let found = 1.0 - z.cdf(z_level - beyond);
            let reach80 = (0.03f64.ln_1p() + (z_level + z.inverse_cdf(0.8)) * late.se).exp_m1();
            println!(
                "| {p} | {t} | {:+.2}% | {:.2}% | {:.2}% | {beyond:.2} | {level:.5} ({z_level:.2}) | {:.1}% | {:+.2}% |",
                all.delta.exp_m1() * 100.0,
                early.se * 100.0,
                late.se * 100.0,
                found * 100.0,
                reach80 * 100.0
            );
        }
    }
}
