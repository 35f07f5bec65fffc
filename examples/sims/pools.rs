//! What the pool replays of `examples/slowdown_sims.rs` and `examples/detection_sims.rs` share: the REAL H100
//! 30-launch pools read from their ncu CSVs (`tar xzf
//! tests/fixtures/h100-30launch-pools/h100-30launch-pools.tar.gz -C DIR`), a spec of their three
//! time rows, `check` and `ab` of served processes through the engine (`run::simulate`), seeded
//! orders, verdict counts and Wilson intervals. Included by `#[path]`; not an example itself.

#![allow(dead_code, reason = "each example uses its own part of it")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cgp_core::measured::samples::MetricValue;
use cgp_core::stats::rng::Rng;
use cgp_engine::run::simulate::{SIM_METRIC, SimProfiler, simulate_ab, simulate_check, write_baseline};
use cgp_outcome::outcome::results::{Results, RowVerdict};
use cgp_profile::profile::Job;
use cgp_spec::spec::Spec;

pub const METRIC: &str = "gpu__time_duration.sum";
pub const TARGETS: [&str; 3] = ["matmul", "reduce", "vector_add"];

/// target -> processes -> launch durations (warm-up first).
pub type Pool = BTreeMap<String, Vec<Vec<f64>>>;

pub fn durations(csv: &Path) -> Vec<f64> {
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

pub fn load_pool(dir: &Path) -> Pool {
    let mut pool = Pool::new();
    for t in TARGETS {
        let Some(size) = std::fs::read_dir(dir.join(t))
            .into_iter()
            .flatten()
            .flatten()
            .next()
        else {
            continue;
        };
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
        pool.insert(t.to_owned(), reps.iter().map(|(_, p)| durations(p)).collect());
    }
    assert!(
        pool.values().all(|p| !p.is_empty()),
        "no pool in {}: extract the 30-launch pools there",
        dir.display()
    );
    pool
}

/// The spec of a replayed check: the three targets, one size each, threshold 3 %, a baseline of
/// `max(10, max)` processes; `metrics` the metrics block of each target (None: the time row alone).
pub fn spec_with(reps: u32, max: u32, extra: &str, metrics: Option<&dyn Fn(&str) -> String>) -> Spec {
    let base = max.max(10);
    let mut text = String::from("version: 1\n");
    text.push_str(extra);
    text.push_str("targets:\n");
    for t in TARGETS {
        let m = metrics.map_or_else(|| "      gpu__time_duration.sum: \"3%\"\n".to_owned(), |f| f(t));
        text.push_str(&format!(
            "  - name: {t}\n    command: [./{t}]\n    repetitions: {reps}\n    max_repetitions: {max}\n    baseline_repetitions: {base}\n    metrics:\n{m}"
        ));
    }
    cgp_spec::spec::load_str(&text, Path::new("pools.yaml")).unwrap_or_else(|e| panic!("spec: {e}"))
}

pub fn spec(reps: u32, max: u32, extra: &str) -> Spec {
    spec_with(reps, max, extra, None)
}

/// `check` of processes served by `cand(target, rep)` against the baseline pool `base`.
pub fn check(spec: &Spec, base: &Pool, cand: &mut dyn FnMut(&str, usize) -> Vec<f64>) -> Results {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temporary directory: {e}"));
    // A baseline of more processes than the pool holds takes them again, in order.
    let mut b = SimProfiler::new(|job: Job<'_>| {
        let runs = &base[&job.target.name];
        runs[job.rep as usize % runs.len()].clone()
    });
    write_baseline(spec, dir.path(), &mut b, &|_| Vec::new()).unwrap_or_else(|e| panic!("baseline: {e}"));
    let mut c = SimProfiler::new(|job: Job<'_>| cand(&job.target.name, job.rep as usize));
    simulate_check(spec, dir.path(), &mut c).unwrap_or_else(|e| panic!("check: {e}"))
}

/// `ab` of base processes `base(target, rep)` against head processes `head(target, rep)`.
pub fn ab(
    spec: &Spec,
    base: &mut dyn FnMut(&str, usize) -> Vec<f64>,
    head: &mut dyn FnMut(&str, usize) -> Vec<f64>,
) -> Results {
    let mut b = SimProfiler::new(|job: Job<'_>| base(&job.target.name, job.rep as usize));
    let mut h = SimProfiler::new(|job: Job<'_>| head(&job.target.name, job.rep as usize));
    simulate_ab(spec, &mut b, &mut h).unwrap_or_else(|e| panic!("ab: {e}"))
}

/// The time rows of a run: target, verdict, shown change.
pub fn rows(r: &Results) -> Vec<(String, RowVerdict, f64)> {
    if std::env::var_os("ROUND3_REASONS").is_some() {
        for x in r.rows.iter().filter(|x| x.key.metric == SIM_METRIC) {
            eprintln!("{} {}: {}", x.key.target, x.verdict().as_str(), x.reason);
        }
    }
    r.rows
        .iter()
        .filter(|x| x.key.metric == SIM_METRIC)
        .map(|x| {
            (
                x.key.target.clone(),
                x.verdict(),
                x.estimate().change().unwrap_or(f64::NAN),
            )
        })
        .collect()
}

/// A seeded random order of `n` indices.
pub fn order(rng: &mut Rng, n: usize) -> Vec<usize> {
    let mut all: Vec<usize> = (0..n).collect();
    for i in 0..n {
        let j = i + rng.below(n - i);
        all.swap(i, j);
    }
    all
}

#[derive(Default)]
pub struct Count {
    pub regression: usize,
    pub pass: usize,
    pub inconclusive: usize,
    pub other: usize,
    pub changes: Vec<f64>,
}

impl Count {
    pub fn add(&mut self, v: RowVerdict, change: f64) {
        match v {
            RowVerdict::Regression => self.regression += 1,
            RowVerdict::Pass => self.pass += 1,
            RowVerdict::Inconclusive => self.inconclusive += 1,
            _ => self.other += 1,
        }
        if change.is_finite() {
            self.changes.push(change);
        }
    }

    pub fn total(&self) -> usize {
        self.regression + self.pass + self.inconclusive + self.other
    }

    pub fn median_change(&self) -> f64 {
        let mut c = self.changes.clone();
        c.sort_by(f64::total_cmp);
        c.get(c.len() / 2).copied().unwrap_or(f64::NAN)
    }
}

/// Wilson 95 % interval of k of n, in percent.
pub fn wilson(k: usize, n: usize) -> (f64, f64) {
    let z = 1.959_964;
    let (k, n) = (k as f64, n.max(1) as f64);
    let p = k / n;
    let d = 1.0 + z * z / n;
    let c = (p + z * z / (2.0 * n)) / d;
    let h = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / d;
    ((c - h).max(0.0) * 100.0, (c + h).min(1.0) * 100.0)
}

pub fn uniform(rng: &mut Rng, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * rng.next_f64()
}

/// The command line of a pool replay: its section (`all` by default), `--pools DIR` (default
/// `/tmp/pools`) and the value of any other `--flag VALUE`.
pub struct Args {
    args: Vec<String>,
}

impl Args {
    pub fn read() -> Self {
        Self {
            args: std::env::args().skip(1).collect(),
        }
    }

    pub fn value(&self, name: &str) -> Option<String> {
        self.args
            .iter()
            .position(|a| a == name)
            .and_then(|i| self.args.get(i + 1))
            .cloned()
    }

    pub fn section(&self) -> String {
        self.args
            .first()
            .filter(|a| !a.starts_with("--"))
            .cloned()
            .unwrap_or_else(|| "all".into())
    }

    pub fn root(&self) -> PathBuf {
        PathBuf::from(self.value("--pools").unwrap_or_else(|| "/tmp/pools".into()))
    }

    pub fn runs(&self, default: usize) -> usize {
        self.value("--runs")
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }
}
