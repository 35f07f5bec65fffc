//! Mutation fuzzing of every reader of untrusted input: the spec loader, the ncu CSV parser, and
//! the baseline, results and recording-manifest readers (issue 13), and the CUPTI trace reader
//! (issue 36). Not part of `cargo test`.
//!
//! ```text
//! cargo run --example fuzz -- TARGET COUNT [SEED] [--seconds N] [--from INDEX]
//! ```
//!
//! TARGET: spec | csv | baseline | results | manifest | cupti | all. `--seconds N` stops each target
//! after N seconds of wall time (the table then counts the inputs actually run).
//!
//! Why not cargo-fuzz: it needs a nightly compiler plus `cargo install cargo-fuzz` (a C++
//! libFuzzer build) on a shared 2-core machine, and its harness cannot run in CI's stable
//! toolchain. This harness runs on stable: proptest's deterministic `TestRng` drives structure-
//! aware mutations of real seed files (the repository's examples and fixtures), so every run
//! with the same SEED makes the same inputs and a crash is reproduced by its SEED and index.
//!
//! Each input runs inside `catch_unwind`; a panic is a crash: the input is written to
//! `target/fuzz-crashes/TARGET-SEED-INDEX.bin` and counted. An input that takes more than one
//! second is written there too (`.slow`). A stack overflow aborts the process: the last progress
//! line names the batch, and `--from INDEX` reruns from there with every input saved first.
//! Inputs that parse are rendered and re-read further (reports from results, `render` and
//! `parse` round trips of baselines), so the consumers of parsed data are exercised too.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

// proptest's `TestRng` implements `rand`'s `Rng`, which proptest's prelude re-exports.
use proptest::prelude::Rng as _;
use proptest::test_runner::{RngAlgorithm, TestRng};

const TARGETS: &[&str] = &["spec", "csv", "baseline", "results", "manifest", "cupti"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir` whose name ends with one of `exts`.
fn files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, exts, out);
        } else if exts.iter().any(|x| p.to_string_lossy().ends_with(x)) {
            out.push(p);
        }
    }
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let r = root();
    let mut paths = Vec::new();
    match target {
        "spec" => {
            paths.push(r.join("examples/cgp-gate.yaml"));
            files(&r.join("tests/fixtures/specs"), &[".yaml"], &mut paths);
        }
        "csv" => {
            files(
                &r.join("tests/fixtures/ncu"),
                &[".csv", ".log", ".txt"],
                &mut paths,
            );
            files(
                &r.join("examples/recordings/main/vector_add"),
                &[".csv"],
                &mut paths,
            );
            paths.truncate(40);
            files(
                Path::new("/work/shared/fixtures/ncu-wild"),
                &[".csv", ".log"],
                &mut paths,
            );
        }
        "baseline" => files(&r.join("examples/baselines"), &[".json"], &mut paths),
        "results" => files(&r.join("tests/fixtures/results"), &[".json"], &mut paths),
        "manifest" => files(&r.join("examples/recordings"), &["manifest.json"], &mut paths),
        "cupti" => files(&r.join("tests/fixtures/cupti/traces"), &[".cupti"], &mut paths),
        _ => {}
    }
    let mut out: Vec<Vec<u8>> = paths
        .iter()
        .filter_map(|p| std::fs::read(p).ok())
        // Big seeds make every input slow; mutations reach the same code on small ones.
        .filter(|b| !b.is_empty() && b.len() <= 64 << 10)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Tokens that matter to each format: inserted or substituted whole.
fn dictionary(target: &str) -> &'static [&'static str] {
    match target {
        "spec" => &[
            "[",
            "]",
            "{",
            "}",
            ":",
            "- ",
            "\n",
            "\n  ",
            "\n    - ",
            "&a ",
            "*a",
            "<<: *a",
            "!!str ",
            "!!map ",
            "\"",
            "'",
            "#",
            "---\n",
            "...\n",
            "{n}",
            "{{",
            "regex:(",
            "regex:.*",
            "1e400",
            "-1",
            "0",
            "4294967295",
            "18446744073709551616",
            "nan",
            ".inf",
            "-.inf",
            "~",
            "null",
            "true",
            "\"3%\"",
            "\"inf%\"",
            "exact",
            "{min: 1}",
            "{max: 2}",
            "500ns",
            "1us",
            "1.5s",
            "2*n*n*n",
            "((((n))))",
            "n/0",
            "matrix",
            "sizes:",
            "metrics:",
            "targets:",
            "version: 1",
            "command: [a]",
            "allow_missing: true",
            "repetitions: 4000000000",
            "max_repetitions: 1001",
            "- {n: 1}\n      - {n: 1}",
            "clocks: {sm_mhz: 1}",
            "\u{202e}",
            "\u{1b}[31m",
            "\t",
            "\r\n",
        ],
        "csv" => &[
            "\"",
            "\",\"",
            ",",
            "\n",
            "\r\n",
            "==PROF== ",
            "==ERROR== ",
            "==WARNING== ",
            "n/a",
            "N/A",
            "\"\"",
            "1e308",
            "1e400",
            "-5",
            "-0",
            "nan",
            "inf",
            "1,234",
            "12;34;56",
            "(1, 2, 3)",
            "\"ID\"",
            "\"Kernel Name\"",
            "\"gpu__time_duration.sum\"",
            "\"ns\"",
            "\"us\"",
            "\"byte\"",
            "\"%\"",
            "Metric Name",
            "Metric Value",
            "\"Section Name\"",
            "\u{feff}",
            "\u{1b}]0;x\u{7}",
            "\u{202e}",
            "\0",
            "\r",
            "\"0\"",
            "\"gpu__time_duration.sum \"",
        ],
        "cupti" => &[
            "\n",
            "{\"cgp_gate_cupti\":1,\"cupti_version\":18,\"pid\":1}\n",
            "{\"cgp_gate_cupti\":2,\"pid\":1}\n",
            "{\"end\":1,\"records\":0,\"dropped\":0}\n",
            "{\"end\":1,\"records\":18446744073709551615,\"dropped\":1}",
            "{\"error\":\"cuptiActivityEnable\",\"code\":15,\"message\":\"x\"}\n",
            "\"m\":\"_Z1kv\",",
            "\"m\":\"_ZZZZZZ\",",
            "\"k\":\"k()\",",
            "\"grid\":[1,1,1],",
            "\"grid\":[4294967296,1,1],",
            "\"start\":18446744073709551615,",
            "\"end\":0,",
            "\"graph\":-1,",
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"",
            "null",
            "-1",
            "0",
            "1e999",
            "\"\\ud800\"",
            "\u{202e}",
            "\r\n",
        ],
        _ => &[
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"",
            "null",
            "true",
            "1e999",
            "-1e999",
            "-0",
            "1e-400",
            "NaN",
            "18446744073709551616",
            "-1",
            "0",
            "\"unit\": \"us\"",
            "\"samples\": []",
            "\"samples\": [1]",
            "\"samples\": [0, 0]",
            "\"entries\": []",
            "\"schema_version\": 99",
            "\"schema_version\": 0",
            "\"shard\": \"1/4294967295\"",
            "\"shard\": \"2/1\"",
            "\"verdict\": \"missing\"",
            "\"verdict\": \"error\"",
            "\"\\u0000\"",
            "\"\\ud800\"",
            "\"\\u202e\"",
            "\"\\u001b[31m\"",
        ],
    }
}

struct Mutator {
    rng: TestRng,
}

impl Mutator {
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            usize::try_from(self.rng.next_u64() % n as u64).unwrap_or(0)
        }
    }

    fn mutate(&mut self, seeds: &[Vec<u8>], dict: &[&str]) -> Vec<u8> {
        let mut b = seeds[self.below(seeds.len())].clone();
        let rounds = 1 + self.below(8);
        for _ in 0..rounds {
            let len = b.len();
            match self.below(11) {
                0 if len > 0 => {
                    let i = self.below(len);
                    b[i] ^= 1 << self.below(8);
                }
                1 if len > 0 => {
                    let i = self.below(len);
                    b[i] = u8::try_from(self.below(256)).unwrap_or(0);
                }
                2 | 3 => {
                    let i = self.below(len + 1);
                    let t = dict[self.below(dict.len())].as_bytes().to_vec();
                    b.splice(i..i, t);
                }
                4 if len > 0 => {
                    let i = self.below(len);
                    let n = 1 + self.below(32.min(len - i));
                    b.drain(i..i + n);
                }
                5 if len > 0 => {
                    let i = self.below(len);
                    let n = 1 + self.below(256.min(len - i));
                    let copy = b[i..i + n].to_vec();
                    let at = self.below(b.len() + 1);
                    b.splice(at..at, copy);
                }
                6 if len > 0 => b.truncate(self.below(len)),
                7 => {
                    // Splice in part of another seed.
                    let other = &seeds[self.below(seeds.len())];
                    if !other.is_empty() {
                        let i = self.below(other.len());
                        let n = 1 + self.below(512.min(other.len() - i));
                        let at = self.below(b.len() + 1);
                        b.splice(at..at, other[i..i + n].iter().copied());
                    }
                }
                8 if len > 0 => {
                    // Replace a run of digits with a dictionary token or an extreme number.
                    let i = self.below(len);
                    if let Some(start) = (i..len).find(|&j| b[j].is_ascii_digit()) {
                        let end = (start..len).find(|&j| !b[j].is_ascii_digit()).unwrap_or(len);
                        let t = [
                            "0",
                            "-1",
                            "1e400",
                            "4294967296",
                            "99999999999999999999",
                            "0.0000001",
                            "nan",
                        ][self.below(7)];
                        b.splice(start..end, t.bytes());
                    }
                }
                9 if len > 1 => {
                    // Repeat a small chunk many times (deep nesting, long lines).
                    let i = self.below(len);
                    let n = 1 + self.below(4.min(len - i));
                    let chunk = b[i..i + n].to_vec();
                    let times = 1 + self.below(2000);
                    let rep: Vec<u8> = chunk.iter().copied().cycle().take(n * times).collect();
                    b.splice(i..i, rep);
                }
                _ if len > 1 => {
                    // Swap two lines.
                    let lines: Vec<&[u8]> = b.split(|c| *c == b'\n').collect();
                    if lines.len() > 2 {
                        let (x, y) = (self.below(lines.len()), self.below(lines.len()));
                        let mut l: Vec<Vec<u8>> = lines.iter().map(|s| s.to_vec()).collect();
                        l.swap(x, y);
                        b = l.join(&b'\n');
                    }
                }
                _ => {}
            }
        }
        // Keep inputs bounded: the readers' own size limits are tested elsewhere.
        b.truncate(1 << 20);
        b
    }
}

/// Run one input through a target's reader and whatever consumes its output.
fn run_one(target: &str, input: &[u8]) {
    let text = String::from_utf8_lossy(input);
    let path = Path::new("fuzz-input");
    match target {
        "spec" => {
            if let Ok(spec) = cgp_spec::spec::load_str(&text, path) {
                for t in &spec.targets {
                    for s in &t.sizes {
                        let _ = cgp_spec::plan::app_argv(t, s);
                        let _ = s.key();
                    }
                    let _ = cgp_profile::ncu::command::ncu_options(t, &cgp_spec::plan::ncu_metrics(t), path);
                    let _ = cgp_spec::plan::shard::estimated_cost(t);
                }
                let _ = cgp_spec::spec::json_schema();
            }
        }
        "csv" => {
            if let Ok(parsed) = cgp_read::ncu_output::parse::parse(&text) {
                let _ = cgp_report::report::console::launches_table(&parsed.launches);
                let _ = serde_json::to_string(&parsed);
            }
            let _ = cgp_read::ncu_output::log::classify(&cgp_read::ncu_output::log::scan(&text));
        }
        "baseline" => {
            if let Ok(file) = cgp_baseline::baseline::parse(path, &text) {
                let rendered = cgp_baseline::baseline::render(&file);
                let back =
                    cgp_baseline::baseline::parse(path, &rendered).expect("a rendered baseline reads back");
                assert!(back == file, "render/parse round trip changed the baseline");
                let _ = cgp_baseline::baseline::render_show(&[(PathBuf::from("x.json"), file)]);
            }
        }
        "results" => {
            if let Ok(r) = cgp_outcome::outcome::results::parse(&text) {
                let _ = cgp_report::report::console::results_table(&r);
                let _ = cgp_report::report::markdown::markdown(
                    &r,
                    &cgp_report::report::markdown::MarkdownOptions::default(),
                );
                let _ = cgp_report::report::html::html(&r);
                let _ = cgp_report::report::junit::junit(&r);
                let _ = cgp_report::report::annotations::annotations(&r);
                let _ = cgp_outcome::outcome::merge(vec![(PathBuf::from("a.json"), r)]);
            }
        }
        "manifest" => {
            let _ = cgp_profile::profile::record::Manifest::parse(path, &text);
        }
        "cupti" => {
            if let Ok(t) = cgp_read::cupti_trace::parse(input) {
                let total = t
                    .kernels
                    .iter()
                    .fold(0u64, |a, k| a.saturating_add(k.end_ns - k.start_ns));
                let _ = (total, t.error.map(|e| e.message.len()));
            }
        }
        _ => unreachable!(),
    }
}

fn fuzz(target: &str, count: u64, seed: u64, from: u64, limit: Option<Duration>) -> (u64, u64, u64) {
    let seeds = seeds(target);
    assert!(!seeds.is_empty(), "no seed files for {target}");
    let dict = dictionary(target);
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(&(target.len() as u64).to_le_bytes());
    key[16] = target.as_bytes()[0];
    let mut m = Mutator {
        rng: TestRng::from_seed(RngAlgorithm::ChaCha, &key),
    };
    let crashes_dir = root().join("target/fuzz-crashes");
    let _ = std::fs::create_dir_all(&crashes_dir);
    let (mut crashes, mut slow, mut parsed_bytes) = (0u64, 0u64, 0u64);
    let start = Instant::now();
    let mut ran = 0u64;
    for i in 0..count {
        if limit.is_some_and(|l| start.elapsed() >= l) {
            break;
        }
        let input = m.mutate(&seeds, dict);
        if i < from {
            continue;
        }
        if from > 0 {
            let _ = std::fs::write(crashes_dir.join(format!("{target}-{seed}-current.bin")), &input);
        }
        parsed_bytes += input.len() as u64;
        ran += 1;
        let t0 = Instant::now();
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| run_one(target, &input)));
        let took = t0.elapsed();
        if r.is_err() {
            crashes += 1;
            let p = crashes_dir.join(format!("{target}-{seed}-{i}.bin"));
            let _ = std::fs::write(&p, &input);
            eprintln!("CRASH {target} seed {seed} input {i}: saved {}", p.display());
        } else if took > Duration::from_secs(1) {
            slow += 1;
            let p = crashes_dir.join(format!("{target}-{seed}-{i}.slow"));
            let _ = std::fs::write(&p, &input);
            eprintln!(
                "SLOW {target} seed {seed} input {i} ({took:?}): saved {}",
                p.display()
            );
        }
        if (i + 1) % 100_000 == 0 {
            eprintln!(
                "{target}: {} inputs, {crashes} crashes, {slow} slow, {:.0} s",
                i + 1,
                start.elapsed().as_secs_f64()
            );
        }
    }
    let _ = parsed_bytes;
    (ran, crashes, slow)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let target = args.first().map_or("all", String::as_str).to_owned();
    let count: u64 = args.get(1).and_then(|c| c.parse().ok()).unwrap_or(10_000);
    let seed: u64 = args.get(2).and_then(|c| c.parse().ok()).unwrap_or(1);
    let from: u64 = args
        .iter()
        .position(|a| a == "--from")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let limit = args
        .iter()
        .position(|a| a == "--seconds")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .map(Duration::from_secs);
    // Panics are counted and saved; their default message would flood the terminal.
    std::panic::set_hook(Box::new(|info| {
        let msg = info.to_string();
        eprintln!("panic: {}", msg.lines().next().unwrap_or_default());
    }));
    let list: Vec<&str> = if target == "all" {
        TARGETS.to_vec()
    } else {
        vec![target.as_str()]
    };
    println!("| target | seed | inputs | crashes | slow (>1 s) | seconds |");
    println!("|---|---|---|---|---|---|");
    let mut any = false;
    for t in list {
        assert!(
            TARGETS.contains(&t),
            "unknown target {t}; one of {TARGETS:?} or all"
        );
        let start = Instant::now();
        let (n, crashes, slow) = fuzz(t, count, seed, from, limit);
        any |= crashes > 0;
        println!(
            "| {t} | {seed} | {n} | {crashes} | {slow} | {:.0} |",
            start.elapsed().as_secs_f64()
        );
    }
    if any {
        std::process::exit(1);
    }
}
