//! SYNTHETIC benchmark of `check --base` (issue 56), through the binary: `check` alone against a
//! stored baseline, `check --base` (that check, then the doubtful rows confirmed against the
//! base commit's build in the same job) and `ab`, at +0, +3 (exactly the threshold), +4, +5 and
//! +10 %. Not a timed test: `scripts/confirm-bench.sh [--runs N] [--parallel P]` builds
//! everything and runs it (docs/statistics.md 6.7 has its table).
//!
//! Every run is real cgp-gate work on this machine: a scratch git repository (base commit and
//! head commit, the build `cp slow.txt built.txt`), a spec of one `profiler: gbench` target whose
//! program is this example itself in its stand-in mode, writing real Google Benchmark JSON; a
//! baseline stored by `cgp-gate baseline update` at the base build in a job of its own; then
//! `check`, `check --base <base>` and `ab --base-dir <built base tree>`, each in a job of its own.
//!
//! The model (nested, SYNTHETIC; the spreads fitted to the REAL H100 30-launch pools, as in
//! docs/bisect.md): three benchmarks (rows) per process, each process 30 repetitions (the
//! launches; the first is left out as the warm-up); per row, a launch deviates from its process by
//! N(0, w) and a process from the row's level by N(0, b) on the log scale (matmul w 0.20 % b 0.30 %,
//! reduce 1.50 % / 0.40 %, vector_add 0.51 % / 0.15 %); every job (one cgp-gate invocation, the
//! baseline's included) offsets each row by a factor uniform in +-0.9 %, shared by all its
//! processes, base and head alike. The head commit is slower by the shift on every row. The spec
//! is cgp-gate's defaults: threshold 3 %, `repetitions: 10`, `max_repetitions: 20`,
//! `baseline_repetitions: 50`, alpha 0.01.
//!
//! GPU time is counted in processes from the stand-in's own log (one line per process, naming the
//! tree it ran in); `check --base`'s screen is its processes minus the paired stage's
//! (`confirmation.processes` of its results).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use cgp_core::stats::rng::{Rng, seed_for};

/// (benchmark, level ns, within-process spread, between-process spread), log scale.
const ROWS: [(&str, f64, f64, f64); 3] = [
    ("BM_matmul", 100_000.0, 0.0020, 0.0030),
    ("BM_reduce", 50_000.0, 0.0150, 0.0040),
    ("BM_vector_add", 20_000.0, 0.0051, 0.0015),
];
const SHIFTS: [f64; 5] = [0.0, 0.03, 0.04, 0.05, 0.10];
const DRIFT: f64 = 0.009;
const REPS_PER_PROCESS: usize = 30;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("standin") {
        std::process::exit(standin(&args[2..]));
    }
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let runs: usize = opt("--runs").map_or(100, |v| v.parse().expect("--runs N"));
    let parallel: usize = opt("--parallel").map_or(2, |v| v.parse().expect("--parallel P"));
    let bin = PathBuf::from(opt("--bin").unwrap_or_else(|| "target/debug/cgp-gate".to_owned()));
    let bin = std::fs::canonicalize(&bin).unwrap_or_else(|e| panic!("--bin {}: {e}", bin.display()));
    let shifts: Vec<f64> = opt("--shifts").map_or_else(
        || SHIFTS.to_vec(),
        |s| {
            s.split(',')
                .map(|x| x.parse::<f64>().expect("--shifts") / 100.0)
                .collect()
        },
    );
    // `--job-spread 0.52%`: the spec's `settings.job_spread` (the screen's prior of the job drift;
    // 0.52 % is the spread of offsets uniform in +-0.9 %); default: cgp-gate's prior.
    let job_spread = opt("--job-spread");
    let work = tempfile::Builder::new()
        .prefix("confirm-bench-")
        .tempdir()
        .unwrap();
    let me = std::fs::canonicalize(&args[0]).unwrap();
    eprintln!(
        "confirm_bench: {runs} runs per shift, {parallel} at a time, binary {}",
        bin.display()
    );
    let mut table = Vec::new();
    for &shift in &shifts {
        let started = std::time::Instant::now();
        let cell = run_shift(
            &Setup {
                bin: &bin,
                me: &me,
                root: work.path(),
                job_spread: job_spread.as_deref(),
            },
            shift,
            runs,
            parallel,
        );
        eprintln!(
            "shift {:+.0}%: {runs} runs in {:.0} s",
            shift * 100.0,
            started.elapsed().as_secs_f64()
        );
        table.push((shift, cell));
    }
    print_table(&table, runs, job_spread.as_deref());
}

struct Setup<'a> {
    bin: &'a Path,
    me: &'a Path,
    root: &'a Path,
    job_spread: Option<&'a str>,
}

/// What one mode said over the runs of a shift.
#[derive(Default, Clone)]
struct Tally {
    regression: usize,
    pass: usize,
    inconclusive: usize,
    other: usize,
    runs_with_regression: usize,
    processes: usize,
    /// `check --base`: its screen's processes, and the runs with a paired stage.
    screen: usize,
    confirmed_runs: usize,
    confirmed_processes: usize,
    confirmed_screen: usize,
}

type Cell = BTreeMap<&'static str, Tally>;

fn run_shift(s: &Setup<'_>, shift: f64, runs: usize, parallel: usize) -> Cell {
    let dir = s.root.join(format!("shift{}", (shift * 100.0).round()));
    // One repository per worker (each `check --base` adds its own worktree).
    let repos: Vec<(PathBuf, String, PathBuf)> = (0..parallel)
        .map(|w| project(s, &dir.join(format!("w{w}")), shift))
        .collect();
    let cell = std::sync::Mutex::new(Cell::new());
    std::thread::scope(|scope| {
        for (w, (repo, base, base_tree)) in repos.iter().enumerate() {
            let cell = &cell;
            scope.spawn(move || {
                for i in (w..runs).step_by(parallel) {
                    let seed = seed_for(56, &format!("{shift}/{i}"));
                    let one = one_run(s, repo, base, base_tree, seed);
                    let mut c = cell.lock().unwrap();
                    for (mode, t) in one {
                        add(c.entry(mode).or_default(), &t);
                    }
                }
            });
        }
    });
    cell.into_inner().unwrap()
}

fn add(into: &mut Tally, t: &Tally) {
    into.regression += t.regression;
    into.pass += t.pass;
    into.inconclusive += t.inconclusive;
    into.other += t.other;
    into.runs_with_regression += t.runs_with_regression;
    into.processes += t.processes;
    into.screen += t.screen;
    into.confirmed_runs += t.confirmed_runs;
    into.confirmed_processes += t.confirmed_processes;
    into.confirmed_screen += t.confirmed_screen;
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@b",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

/// A repository with the base commit (factor 1) and the head commit (1 + shift), the head built
/// in the work tree; and a built copy of the base tree for `ab`. Returns (repo, base SHA, base
/// tree).
fn project(s: &Setup<'_>, dir: &Path, shift: f64) -> (PathBuf, String, PathBuf) {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let spread = s
        .job_spread
        .map_or_else(String::new, |j| format!("  job_spread: \"{j}\"\n"));
    let spec = format!(
        "version: 1\nsettings:\n  build: cp slow.txt built.txt\n{spread}targets:\n  - name: kernels\n    profiler: gbench\n    command: [{:?}, standin, --benchmark_repetitions={REPS_PER_PROCESS}]\n    metrics:\n      real_time: \"3%\"\n",
        s.me.display().to_string()
    );
    std::fs::write(repo.join("cgp-gate.yaml"), &spec).unwrap();
    std::fs::write(repo.join(".gitignore"), "built.txt\n").unwrap();
    std::fs::write(repo.join("slow.txt"), "1\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let out = Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["rev-parse", "HEAD"])
        .output()
        .unwrap();
    let base = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let base_tree = dir.join("base");
    std::fs::create_dir_all(&base_tree).unwrap();
    std::fs::write(base_tree.join("cgp-gate.yaml"), &spec).unwrap();
    std::fs::write(base_tree.join("built.txt"), "1\n").unwrap();
    std::fs::write(repo.join("slow.txt"), format!("{}\n", 1.0 + shift)).unwrap();
    // The head commit changes the code (a comment) even when it is no slower.
    std::fs::write(repo.join("kernel.cu"), "// head\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "head"]);
    std::fs::write(repo.join("built.txt"), format!("{}\n", 1.0 + shift)).unwrap();
    (repo, base, base_tree)
}

/// The job offsets of one job: a factor per row, uniform in +-0.9 %.
fn job(rng: &mut Rng) -> String {
    ROWS.iter()
        .map(|_| format!("{}", 1.0 + DRIFT * (2.0 * rng.next_f64() - 1.0)))
        .collect::<Vec<_>>()
        .join(",")
}

/// cgp-gate in `repo`, in a job of its own, logging its processes to `log`.
fn cgp(
    s: &Setup<'_>,
    repo: &Path,
    args: &[&str],
    job: &str,
    log: &Path,
    factors: Option<&str>,
) -> (i32, serde_json::Value) {
    let _ = std::fs::remove_file(log);
    let json = log.with_extension("json");
    let _ = std::fs::remove_file(&json);
    let mut c = Command::new(s.bin);
    c.current_dir(repo)
        .args(args)
        .env("CONFIRM_BENCH_JOB", job)
        .env("CONFIRM_BENCH_LOG", log)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    if args[0] != "baseline" {
        c.arg("--json").arg(&json);
    }
    if let Some(f) = factors {
        c.env("CONFIRM_BENCH_FACTORS", f);
    }
    let out = c.output().unwrap();
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "cgp-gate {args:?} exit {code}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v =
        serde_json::from_slice(&std::fs::read(&json).unwrap_or_default()).unwrap_or(serde_json::Value::Null);
    (code, v)
}

fn processes(log: &Path) -> usize {
    std::fs::read_to_string(log).map_or(0, |t| t.lines().count())
}

/// One run of every mode: a stored baseline from its own job, then `check`, `check --base` and
/// `ab`, each in its own job.
fn one_run(
    s: &Setup<'_>,
    repo: &Path,
    base: &str,
    base_tree: &Path,
    seed: u64,
) -> Vec<(&'static str, Tally)> {
    let mut rng = Rng::new(seed);
    let dir = repo.parent().unwrap();
    let store = dir.join("baselines");
    let _ = std::fs::remove_dir_all(&store);
    let store_s = store.to_string_lossy().into_owned();
    let log = dir.join("log");
    cgp(
        s,
        repo,
        &["baseline", "update", "--baselines", &store_s],
        &job(&mut rng),
        &log,
        Some("1,1,1"),
    );
    let mut out = Vec::new();
    let (_, v) = cgp(
        s,
        repo,
        &["check", "--baselines", &store_s],
        &job(&mut rng),
        &log,
        None,
    );
    out.push(("check", tally(&v, processes(&log), None)));
    let (_, v) = cgp(
        s,
        repo,
        &["check", "--baselines", &store_s, "--base", base],
        &job(&mut rng),
        &log,
        None,
    );
    let paired = v["confirmation"]["processes"].as_u64().unwrap_or(0) as usize;
    out.push(("check --base", tally(&v, processes(&log), Some(paired))));
    let bt = base_tree.to_string_lossy().into_owned();
    let (_, v) = cgp(
        s,
        repo,
        &["ab", "--base-dir", &bt, "--head-dir", "."],
        &job(&mut rng),
        &log,
        None,
    );
    out.push(("ab", tally(&v, processes(&log), None)));
    out
}

fn tally(v: &serde_json::Value, procs: usize, paired: Option<usize>) -> Tally {
    let mut t = Tally {
        processes: procs,
        ..Tally::default()
    };
    let rows = v["rows"].as_array().cloned().unwrap_or_default();
    assert_eq!(rows.len(), ROWS.len(), "{v}");
    for r in &rows {
        match r["verdict"].as_str() {
            Some("regression") => t.regression += 1,
            Some("pass") => t.pass += 1,
            Some("inconclusive") => t.inconclusive += 1,
            _ => t.other += 1,
        }
    }
    t.runs_with_regression = usize::from(t.regression > 0);
    if let Some(p) = paired {
        t.screen = procs - p;
        if p > 0 {
            t.confirmed_runs = 1;
            t.confirmed_processes = procs;
            t.confirmed_screen = procs - p;
        }
    }
    t
}

fn print_table(table: &[(f64, Cell)], runs: usize, job_spread: Option<&str>) {
    let mut o = std::io::stdout().lock();
    let prior = job_spread.map_or_else(
        || "cgp-gate's default job-drift prior".to_owned(),
        |j| format!("`job_spread: {j}`"),
    );
    let _ = writeln!(
        o,
        "\n## `check --base` (SYNTHETIC, through the binary): {runs} runs per shift, 3 rows each, job offsets uniform in +-0.9 %, {prior}\n"
    );
    let _ = writeln!(
        o,
        "| shift | mode | rows regression | rows pass | rows inconclusive | runs with any regression | processes per run | `--base`: runs confirmed | GPU time vs screen, runs confirmed | runs not confirmed |"
    );
    let _ = writeln!(o, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (shift, cell) in table {
        for mode in ["check", "check --base", "ab"] {
            let Some(t) = cell.get(mode) else { continue };
            let rows = (t.regression + t.pass + t.inconclusive + t.other) as f64;
            let pct = |n: usize| format!("{:.1} %", 100.0 * n as f64 / rows.max(1.0));
            let (conf, ratio, plain) = if mode == "check --base" {
                let plain_runs = runs - t.confirmed_runs;
                let plain_ratio = if plain_runs > 0 {
                    let procs = (t.processes - t.confirmed_processes) as f64;
                    let screen = (t.screen - t.confirmed_screen) as f64;
                    format!("{plain_runs} at {:.2}x", procs / screen.max(1.0))
                } else {
                    "-".to_owned()
                };
                (
                    format!("{}", t.confirmed_runs),
                    if t.confirmed_runs > 0 {
                        format!(
                            "{:.2}x",
                            t.confirmed_processes as f64 / t.confirmed_screen.max(1) as f64
                        )
                    } else {
                        "-".to_owned()
                    },
                    plain_ratio,
                )
            } else {
                ("-".to_owned(), "-".to_owned(), "-".to_owned())
            };
            let _ = writeln!(
                o,
                "| {:+.0} % | {mode} | {} | {} | {} | {} of {runs} | {:.1} | {conf} | {ratio} | {plain} |",
                shift * 100.0,
                pct(t.regression),
                pct(t.pass),
                pct(t.inconclusive),
                t.runs_with_regression,
                t.processes as f64 / runs as f64,
            );
        }
    }
}

/// The stand-in benchmark program: Google Benchmark's JSON (`--benchmark_out=PATH`), one entry
/// per repetition and row, times from the model above; the commit's factors from `built.txt`
/// (or `CONFIRM_BENCH_FACTORS`), the job's from `CONFIRM_BENCH_JOB`; one line per process in
/// `CONFIRM_BENCH_LOG` naming the tree it ran in.
fn standin(args: &[String]) -> i32 {
    let flag = |p: &str| args.iter().find_map(|a| a.strip_prefix(p)).map(str::to_owned);
    let Some(out) = flag("--benchmark_out=") else {
        eprintln!("stand-in: no --benchmark_out=");
        return 2;
    };
    let reps: usize = flag("--benchmark_repetitions=")
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let cwd = std::env::current_dir().unwrap();
    let factors = |text: &str| -> Vec<f64> {
        let v: Vec<f64> = text
            .trim()
            .split(',')
            .filter_map(|x| x.trim().parse().ok())
            .collect();
        if v.len() == 1 { vec![v[0]; ROWS.len()] } else { v }
    };
    let commit = std::env::var("CONFIRM_BENCH_FACTORS")
        .ok()
        .or_else(|| std::fs::read_to_string(cwd.join("built.txt")).ok())
        .map_or_else(|| vec![1.0; ROWS.len()], |t| factors(&t));
    let jobf = std::env::var("CONFIRM_BENCH_JOB").map_or_else(|_| vec![1.0; ROWS.len()], |t| factors(&t));
    if let Ok(log) = std::env::var("CONFIRM_BENCH_LOG")
        && let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(log)
    {
        let _ = writeln!(f, "{}", cwd.display());
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut rng = Rng::new(seed_for(nanos ^ u64::from(std::process::id()), "standin"));
    let mut entries = Vec::new();
    for (i, (name, level, w, b)) in ROWS.iter().enumerate() {
        let process = (b * rng.normal()).exp();
        let run = format!("{name}/manual_time");
        for r in 0..reps {
            let t = level * commit[i] * jobf[i] * process * (w * rng.normal()).exp();
            entries.push(serde_json::json!({
                "name": run, "family_index": i, "per_family_instance_index": 0, "run_name": run,
                "run_type": "iteration", "repetitions": reps, "repetition_index": r, "threads": 1,
                "iterations": 100, "real_time": t, "cpu_time": t * 1.02, "time_unit": "ns"
            }));
        }
    }
    let doc = serde_json::json!({
        "context": {"date": "2026-12-01T00:00:00+00:00", "host_name": "confirm-bench", "executable": "standin",
                    "num_cpus": 2, "mhz_per_cpu": 2000, "cpu_scaling_enabled": false, "library_version": "v1.9.5",
                    "library_build_type": "release", "json_schema_version": 1, "gpu": "SYNTHETIC confirm-bench GPU"},
        "benchmarks": entries
    });
    match std::fs::write(&out, doc.to_string()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("stand-in: {out}: {e}");
            3
        }
    }
}
