//! Issue 57's tables, measured through the real `check` and `ab` (`run::simulate`: the engine's
//! work list, `run::measure`, the baselines read from a store, the re-measure loop, the
//! statistics and the alpha spending; only the launch durations come from a pool or a model).
//!
//! `cargo build-sims`, then `target/debug/examples/detection_sims [SECTION] [--pools DIR] [--runs N]`,
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
//! - `reach` (REAL): the median `detectable` of the pools' rows (what a check could find) under
//!   the old and the new prior, in one job, and in `ab`.
//! - `summary` (SYNTHETIC): rows of one value per process (a harness's summaries), 2 states, 2 %
//!   between-process noise, the plan `init --from` writes for them against the old 3 -> 6.
//!
//! Every figure printed is measured here; the REAL ones on the H100 captures, the SYNTHETIC ones
//! on a model.

use std::path::Path;

use cgp_core::stats::rng::{Rng, seed_for};
use cgp_engine::run::simulate::{SIM_METRIC, SimProfiler, simulate_check, write_baseline};
use cgp_outcome::outcome::results::RowVerdict;
use cgp_profile::profile::Job;

#[path = "sims/pools.rs"]
mod pools;
use pools::{Count, Pool, ab, check, load_pool, order, rows, spec, uniform, wilson};

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

/// The archive's spec (`spec.yaml` of the pools), with the check's plan (1 then up to 3
/// processes) or the baseline's (10), and optionally only its time rows.
fn archive_spec(root: &Path, reps: u32, max: u32, time_only: bool) -> String {
    let spec = std::fs::read_to_string(root.join("spec.yaml"))
        .unwrap_or_else(|e| panic!("spec.yaml of the pools: {e}"))
        .replace("regex:^matmul_tiled", "regex:matmul_tiled")
        .replace("  repetitions: 3\n", &format!("  repetitions: {reps}\n"))
        .replace("  max_repetitions: 6\n", &format!("  max_repetitions: {max}\n"));
    if !time_only {
        return spec;
    }
    // Metric lines are indented 6 spaces under `metrics:` (sizes are `- {...}` items there too);
    // keep the time rows alone.
    let other_metric = |l: &str| {
        let t = l.trim_start();
        l.starts_with("      ")
            && !t.starts_with('#')
            && !t.starts_with('-')
            && !l.contains("gpu__time_duration")
    };
    spec.lines()
        .filter(|l| !other_metric(l))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Multiply the time of the launches `which` (0 = the first after the warm-up) of one ncu
/// raw-page CSV by `factor`.
fn plant_csv(text: &str, which: &[usize], factor: f64) -> String {
    let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
    let Some(h) = lines.iter().position(|l| l.starts_with("\"ID\",")) else {
        return text.to_owned();
    };
    let cells = |l: &str| -> Vec<String> {
        l.trim_end_matches('\r')
            .trim_matches('"')
            .split("\",\"")
            .map(str::to_owned)
            .collect()
    };
    let Some(col) = cells(&lines[h]).iter().position(|c| c == pools::METRIC) else {
        return text.to_owned();
    };
    for (launch, line) in lines.iter_mut().skip(h + 2).enumerate() {
        if !line.starts_with('"') || launch == 0 || !which.contains(&(launch - 1)) {
            continue;
        }
        let mut row = cells(line);
        if let Ok(v) = row[col].parse::<f64>() {
            row[col] = format!("{}", (v * factor).round());
            *line = format!("\"{}\"", row.join("\",\""));
        }
    }
    lines.join("\n")
}

/// Run the binary next to this example (`target/debug/cgp-gate`) in `dir`; its exit code.
fn gate(dir: &Path, args: &[&str]) -> i32 {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("cgp-gate"))
        .unwrap_or_else(|| panic!("no target folder"));
    let out = std::process::Command::new(&bin)
        .current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}; build it with `cargo build-sims` and `cargo build`",
                bin.display()
            )
        });
    out.status.code().unwrap_or(-1)
}

/// REAL: 10 % of each process's launches at 2x (+10.3 % of the mean) in the `aa-pool`
/// processes, checked through the binary against the REAL baseline with the time rows alone (a
/// family of 3) and with the archive's nine metrics.
fn family(root: &Path, checks: usize) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temporary directory: {e}"));
    let d = dir.path();
    let copy = |from: &Path, to: &Path| {
        let status = std::process::Command::new("cp")
            .arg("-r")
            .arg(from)
            .arg(to)
            .status()
            .unwrap_or_else(|e| panic!("cp: {e}"));
        assert!(status.success());
    };
    copy(&root.join("rec"), &d.join("rec"));
    for (name, time_only) in [("nine", false), ("time", true)] {
        std::fs::write(
            d.join(format!("base-{name}.yaml")),
            archive_spec(root, 10, 10, time_only),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            d.join(format!("check-{name}.yaml")),
            archive_spec(root, 1, 3, time_only),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let code = gate(
            d,
            &[
                "baseline",
                "update",
                "--spec",
                &format!("base-{name}.yaml"),
                "--replay",
                "rec/baseline",
                "--baselines",
                &format!("B-{name}"),
            ],
        );
        assert_eq!(code, 0, "baseline update of {name}");
    }
    let aa = d.join("rec/aa-pool");
    let originals: Vec<(String, Vec<String>)> = pools::TARGETS
        .iter()
        .map(|t| {
            let size = std::fs::read_dir(aa.join(t))
                .into_iter()
                .flatten()
                .flatten()
                .next()
                .map(|e| e.path())
                .unwrap_or_else(|| panic!("no size of {t}"));
            let texts = (0..8)
                .map(|k| {
                    std::fs::read_to_string(size.join(format!("{k}.csv"))).unwrap_or_else(|e| panic!("{e}"))
                })
                .collect();
            (size.to_string_lossy().into_owned(), texts)
        })
        .collect();
    println!(
        "\n## 10 % of each process's launches at 2x (+10.3 % of the mean), REAL A/A processes, through the binary ({checks} checks, 1 then up to 3 processes)\n"
    );
    println!("| family | time rows: regression | pass | inconclusive |\n|---|---:|---:|---:|");
    let mut counts = [Count::default(), Count::default()];
    for c in 0..checks {
        let mut rng = Rng::new(seed_for(57, &format!("family/{c}")));
        let ord = order(&mut rng, 8);
        for (size, texts) in &originals {
            for (k, o) in ord.iter().take(3).enumerate() {
                let which: Vec<usize> = order(&mut rng, 29).into_iter().take(3).collect();
                std::fs::write(
                    Path::new(size).join(format!("{k}.csv")),
                    plant_csv(&texts[*o], &which, 2.0),
                )
                .unwrap_or_else(|e| panic!("{e}"));
            }
        }
        for (i, name) in ["time", "nine"].iter().enumerate() {
            let json = format!("out-{name}.json");
            gate(
                d,
                &[
                    "check",
                    "--spec",
                    &format!("check-{name}.yaml"),
                    "--replay",
                    "rec/aa-pool",
                    "--baselines",
                    &format!("B-{name}"),
                    "--json",
                    &json,
                ],
            );
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(d.join(&json)).unwrap_or_default())
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
            for r in v["rows"].as_array().into_iter().flatten() {
                if r["metric"] == pools::METRIC {
                    let verdict = match r["verdict"].as_str() {
                        Some("regression") => RowVerdict::Regression,
                        Some("pass") => RowVerdict::Pass,
                        Some("inconclusive") => RowVerdict::Inconclusive,
                        _ => RowVerdict::Error,
                    };
                    counts[i].add(verdict, r["change"].as_f64().unwrap_or(f64::NAN));
                }
            }
        }
    }
    for (label, c) in [
        ("the 3 time rows", &counts[0]),
        ("the archive's 9 metrics", &counts[1]),
    ] {
        println!(
            "| {label} | {} of {} | {} | {} |",
            c.regression,
            c.total(),
            c.pass,
            c.inconclusive
        );
    }
}

/// One SYNTHETIC process of 30 launches at level `mu` (launch 0 a warm-up 3-7 % slow), within
/// and between sds as given.
fn process(rng: &mut Rng, within: f64, between: f64, mu: f64) -> Vec<f64> {
    let off = between * rng.normal();
    let warm = uniform(rng, 0.03, 0.07);
    (0..30)
        .map(|l| mu * (off + within * rng.normal()).exp() * if l == 0 { 1.0 + warm } else { 1.0 })
        .collect()
}

const ROWS: usize = 10;

fn rows_spec(extra: &str) -> cgp_spec::spec::Spec {
    let mut text = format!(
        "version: 1\n{extra}targets:\n  - name: k\n    command: [./k]\n    repetitions: 1\n    max_repetitions: 3\n    baseline_repetitions: 10\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n    sizes:\n"
    );
    for m in 0..ROWS {
        text.push_str(&format!("      - {{m: {m}}}\n"));
    }
    cgp_spec::spec::load_str(&text, Path::new("drift.yaml")).unwrap_or_else(|e| panic!("spec: {e}"))
}

fn row_of(job: &Job<'_>) -> usize {
    job.size.key().trim_start_matches("m=").parse().unwrap_or(0)
}

/// What one SYNTHETIC check of `ROWS` rows said: each row's verdict, whether its shown interval
/// holds the true change, and the interval's stated confidence.
struct Drifted {
    verdicts: Vec<RowVerdict>,
    covered: Vec<bool>,
    confidence: Vec<f64>,
}

/// One SYNTHETIC check: every row's code changed by `shift`, each row's level offset per job
/// uniform in +-`half` (baseline's job, candidate's job), no history.
fn drifted_check(spec: &cgp_spec::spec::Spec, shift: f64, half: f64, older: usize, seed: u64) -> Drifted {
    let mut rng = Rng::new(seed);
    let noise: Vec<(f64, f64)> = (0..ROWS)
        .map(|_| (uniform(&mut rng, 0.002, 0.015), uniform(&mut rng, 0.0, 0.004)))
        .collect();
    let base_off: Vec<f64> = (0..ROWS).map(|_| uniform(&mut rng, -half, half)).collect();
    let cand_off: Vec<f64> = (0..ROWS).map(|_| uniform(&mut rng, -half, half)).collect();
    // Older baselines' medians, each from its own job: the history `check` learns the drift from.
    let history: Vec<Vec<f64>> = noise
        .iter()
        .map(|(w, b)| {
            let se = ((b * b + w * w / 29.0) / 10.0).sqrt();
            (0..older)
                .map(|_| 1e5 * (uniform(&mut rng, -half, half) + se * rng.normal()).exp())
                .collect()
        })
        .collect();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temporary directory: {e}"));
    let mut brng = Rng::new(seed_for(seed, "base"));
    let mut b = SimProfiler::new(|j: Job<'_>| {
        let i = row_of(&j);
        process(&mut brng, noise[i].0, noise[i].1, 1e5 * base_off[i].exp())
    });
    let hist = |size: &str| history[size.trim_start_matches("m=").parse::<usize>().unwrap_or(0)].clone();
    write_baseline(spec, dir.path(), &mut b, &hist).unwrap_or_else(|e| panic!("baseline: {e}"));
    let mut crng = Rng::new(seed_for(seed, "cand"));
    let mut c = SimProfiler::new(|j: Job<'_>| {
        let i = row_of(&j);
        process(
            &mut crng,
            noise[i].0,
            noise[i].1,
            1e5 * cand_off[i].exp() * (1.0 + shift),
        )
    });
    let r = simulate_check(spec, dir.path(), &mut c).unwrap_or_else(|e| panic!("check: {e}"));
    let mut out = Drifted {
        verdicts: Vec::new(),
        covered: Vec::new(),
        confidence: Vec::new(),
    };
    for i in 0..ROWS {
        let size = format!("m={i}");
        let Some(x) = r
            .rows
            .iter()
            .find(|x| x.key.size == size && x.key.metric == SIM_METRIC)
        else {
            out.verdicts.push(RowVerdict::Error);
            continue;
        };
        out.verdicts.push(x.verdict());
        let e = x.estimate();
        if let (Some([lo, hi]), Some(conf)) = (e.change_ci(), e.confidence) {
            out.covered.push(lo <= shift && shift <= hi);
            out.confidence.push(conf);
        }
    }
    out
}

/// SYNTHETIC rows under job drift, no history: at the threshold (passes, coverage, checks with any
/// regression) and beyond it (what is found), for each drift model and spec.
fn drift(runs: usize, extra: &str, older: usize, halves: &[f64]) {
    let spec = rows_spec(extra);
    println!(
        "\n## SYNTHETIC: {ROWS} rows, job drift per row per job, {older} older baseline medians, {runs} checks per cell (check, 1 -> 3 processes of 30 launches, 10-process baseline){}\n",
        if extra.is_empty() {
            String::new()
        } else {
            format!("; spec: `{}`", extra.trim().replace('\n', " "))
        }
    );
    println!(
        "| job offset per job | change of every row | checks with any regression | Wilson 95% | rows regression | rows pass | Wilson 95% | shown intervals holding the change | their stated confidence (mean) |"
    );
    println!("|---|---:|---:|---|---:|---:|---|---:|---:|");
    for &half in halves {
        for (shift, n) in [(0.03, runs), (0.0, runs / 4), (0.05, runs / 4), (0.07, runs / 4)] {
            let (mut any, mut reg, mut pass, mut total) = (0, 0, 0, 0);
            let (mut cov, mut shown, mut conf) = (0usize, 0usize, 0.0);
            for k in 0..n {
                let d = drifted_check(
                    &spec,
                    shift,
                    half,
                    older,
                    seed_for(57, &format!("drift/{half}/{shift}/{older}/{k}")),
                );
                any += usize::from(d.verdicts.contains(&RowVerdict::Regression));
                reg += d
                    .verdicts
                    .iter()
                    .filter(|v| **v == RowVerdict::Regression)
                    .count();
                pass += d.verdicts.iter().filter(|v| **v == RowVerdict::Pass).count();
                total += d.verdicts.len();
                cov += d.covered.iter().filter(|c| **c).count();
                shown += d.covered.len();
                conf += d.confidence.iter().sum::<f64>();
            }
            let (lo, hi) = wilson(any, n);
            let (plo, phi) = wilson(pass, total);
            println!(
                "| +-{:.2}% | {:+.0}% | {any} of {n} | [{lo:.2}, {hi:.2}] | {:.2}% | {:.2}% | [{plo:.2}, {phi:.2}] | {:.2}% | {:.2}% |",
                half * 100.0,
                shift * 100.0,
                100.0 * reg as f64 / total.max(1) as f64,
                100.0 * pass as f64 / total.max(1) as f64,
                100.0 * cov as f64 / shown.max(1) as f64,
                100.0 * conf / shown.max(1) as f64,
            );
        }
    }
}

/// REAL: what a check of the pools could detect (each row's `detectable`: the change its test
/// finds in 80 % of checks at the level it spent), the median over `checks` checks of A/A
/// processes (and of processes with 2 of 29 launches at 3x, judged by each process's mean), for
/// the old prior weight (8 degrees of freedom), this version's (3), the baseline's job taken as
/// the check's (`job_spread: "0%"`) and `ab` (both trees in one job).
fn reach(root: &Path, checks: usize) {
    let base = load_pool(&root.join("rec/baseline"));
    let aa = load_pool(&root.join("rec/aa-pool"));
    println!(
        "\n## What the REAL pools' rows could detect (median `detectable` over {checks} checks; check 1 -> 3 processes, ab 3 -> 6 pairs)\n"
    );
    println!("| processes | setting | matmul | reduce | vector_add |\n|---|---|---:|---:|---:|");
    let settings: [(&str, &str); 4] = [
        (
            "check, prior of 8 degrees of freedom (before)",
            "settings:\n  job_spread_df: 8\n",
        ),
        ("check, prior of 3 degrees of freedom (this version)", ""),
        (
            "check, the baseline's job taken as the check's (`job_spread: \"0%\"`)",
            "settings:\n  job_spread: \"0%\"\n",
        ),
        ("`ab` (same job)", "ab"),
    ];
    for (k, factor, label) in [(0usize, 1.0, "A/A"), (2, 3.0, "2 of 29 at 3x")] {
        for (name, extra) in settings {
            let mut by: std::collections::BTreeMap<String, Vec<f64>> = std::collections::BTreeMap::new();
            for c in 0..checks {
                let mut rng = Rng::new(seed_for(57, &format!("reach/{c}")));
                let ord = order(&mut rng, aa["matmul"].len());
                let planted = |t: &str, rep: usize| -> Vec<f64> {
                    let mut p = aa[t][ord[rep % ord.len()]].clone();
                    let mut prng = Rng::new(seed_for(c as u64, &format!("{t}/{rep}")));
                    plant(&mut p, k, factor, &mut prng);
                    p
                };
                let r = if extra == "ab" {
                    let mut b = |t: &str, rep: usize| base[t][(rep + c) % base[t].len()].clone();
                    ab(&spec(3, 6, ""), &mut b, &mut |t, rep| planted(t, rep))
                } else {
                    check(&spec(1, 3, extra), &base, &mut |t, rep| planted(t, rep))
                };
                for x in r.rows.iter().filter(|x| x.key.metric == SIM_METRIC) {
                    if let Some(d) = x.estimate().detectable() {
                        by.entry(x.key.target.clone()).or_default().push(d);
                    }
                }
            }
            let med = |v: &mut Vec<f64>| {
                v.sort_by(f64::total_cmp);
                v.get(v.len() / 2)
                    .map_or("-".to_owned(), |d| format!("{:+.2}%", d * 100.0))
            };
            let mut cells: Vec<String> = Vec::new();
            for t in pools::TARGETS {
                cells.push(med(by.entry(t.to_owned()).or_default()));
            }
            println!("| {label} | {name} | {} |", cells.join(" | "));
        }
    }
}

/// SYNTHETIC summary rows (one value per process, as an nvbench file without `--jsonbin`): 2
/// states, the processes' values log-normal with `noise` between them, the plan `reps -> 2 reps`
/// against a 10-process baseline, threshold 3 %; every state's code changed by `shift`. The
/// verdicts of the two rows and the processes each took.
fn summary_check(reps: u32, noise: f64, shift: f64, seed: u64) -> Vec<(RowVerdict, u32)> {
    let text = format!(
        "version: 1\ntargets:\n  - name: k\n    command: [./k]\n    repetitions: {reps}\n    max_repetitions: {}\n    baseline_repetitions: 10\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n    sizes:\n      - {{m: 0}}\n      - {{m: 1}}\n",
        2 * reps
    );
    let spec =
        cgp_spec::spec::load_str(&text, Path::new("summary.yaml")).unwrap_or_else(|e| panic!("spec: {e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temporary directory: {e}"));
    // Each process: its warm-up launch (dropped) and its one value.
    let one = |rng: &mut Rng, mu: f64| vec![mu * 1.05, mu * (noise * rng.normal()).exp()];
    let mut brng = Rng::new(seed_for(seed, "base"));
    let mut b = SimProfiler::new(|_: Job<'_>| one(&mut brng, 1e5));
    write_baseline(&spec, dir.path(), &mut b, &|_| Vec::new()).unwrap_or_else(|e| panic!("baseline: {e}"));
    let mut crng = Rng::new(seed_for(seed, "cand"));
    let mut c = SimProfiler::new(|_: Job<'_>| one(&mut crng, 1e5 * (1.0 + shift)));
    let r = simulate_check(&spec, dir.path(), &mut c).unwrap_or_else(|e| panic!("check: {e}"));
    r.rows
        .iter()
        .filter(|x| x.key.metric == SIM_METRIC)
        .map(|x| {
            (
                x.verdict(),
                x.sides.candidate.as_ref().and_then(|s| s.runs).unwrap_or(0) as u32,
            )
        })
        .collect()
}

/// SYNTHETIC summary rows, 2 states, 2 % between-process noise: what `init`'s plan finds.
fn summary(runs: usize) {
    let (planned, _) = cgp_core::stats::power::processes_to_decide(10, 2, 0.01);
    println!(
        "\n## SYNTHETIC summary rows (one value per process), 2 states, 2 % between-process noise, threshold 3 %, {runs} checks per cell\n"
    );
    println!(
        "| plan (processes first -> most) | change of both rows | checks with any regression | Wilson 95% | rows regression | Wilson 95% | rows pass | processes per row |"
    );
    println!("|---|---:|---:|---|---:|---|---:|---:|");
    for reps in [3, planned] {
        for (shift, n) in [(0.0, runs), (0.05, runs / 2), (0.07, runs / 2), (0.10, runs)] {
            let (mut any, mut reg, mut pass, mut total, mut procs) = (0, 0, 0, 0, 0u32);
            for k in 0..n {
                let v = summary_check(
                    reps,
                    0.02,
                    shift,
                    seed_for(57, &format!("summary/{reps}/{shift}/{k}")),
                );
                any += usize::from(v.iter().any(|x| x.0 == RowVerdict::Regression));
                reg += v.iter().filter(|x| x.0 == RowVerdict::Regression).count();
                pass += v.iter().filter(|x| x.0 == RowVerdict::Pass).count();
                total += v.len();
                procs += v.iter().map(|x| x.1).sum::<u32>();
            }
            let (lo, hi) = wilson(any, n);
            let (rlo, rhi) = wilson(reg, total);
            println!(
                "| {reps} -> {} | {:+.0}% | {any} of {n} | [{lo:.2}, {hi:.2}] | {:.1}% | [{rlo:.1}, {rhi:.1}] | {:.1}% | {:.2} |",
                2 * reps,
                shift * 100.0,
                100.0 * reg as f64 / total.max(1) as f64,
                100.0 * pass as f64 / total.max(1) as f64,
                f64::from(procs) / total.max(1) as f64
            );
        }
    }
}

fn main() {
    let args = pools::Args::read();
    let value = |name: &str| args.value(name);
    let section = args.section();
    let root = args.root();
    let runs: usize = args.runs(24);
    let started = std::time::Instant::now();
    let all = section == "all";
    if all || section == "periodic" {
        periodic(&root, runs);
    }
    if all || section == "reach" {
        reach(&root, runs);
    }
    if all || section == "summary" {
        summary(runs);
    }
    if all || section == "family" {
        family(&root, runs);
    }
    if all || section == "drift" {
        let extra = value("--extra").unwrap_or_default().replace("\\n", "\n");
        let older: usize = value("--older").and_then(|v| v.parse().ok()).unwrap_or(0);
        let halves: Vec<f64> = value("--half").map_or_else(
            || vec![0.0045, 0.009],
            |v| {
                v.split(',')
                    .filter_map(|x| x.parse::<f64>().ok())
                    .map(|x| x / 100.0)
                    .collect()
            },
        );
        drift(runs, &extra, older, &halves);
    }
    println!("\nelapsed {:.1} s", started.elapsed().as_secs_f64());
}
