//! The GPU validation kit without a GPU (issue 14, part 1).
//!
//! - Every example program and every planted variant builds with the real nvcc for sm_90, and the
//!   planted variants differ in their real machine code (`cuobjdump -sass`) exactly where they
//!   should: EXTRA_WORK_PCT changes each benchmark kernel, BAD_LAUNCH changes none (host only).
//! - `scripts/validate-gpu.sh` runs end to end: real nvcc builds, real cgp-gate, the real ncu
//!   checking every command line; a SYNTHETIC stand-in (`tests/standins/ncu`) replays the
//!   synthetic recording where the GPU itself would be needed, and `tests/standins/nvidia-smi`
//!   answers the queries. Its summary JSON and Markdown are checked.
//! - With the real ncu and no GPU, the script stops at the first profiling step with a clear
//!   message (the application-failure path, for real).
//!
//! A missing nvcc, cuobjdump or ncu prints `SKIPPED: <test> (...)` (tests/support, counted by
//! .ci/test); with CI=true the test fails instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support;

mod part_cupti;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The benchmark kernels, by mangled name, per program.
const KERNELS: &[(&str, &str)] = &[
    ("vector_add", "_Z10vector_addPKfS0_Pfi"),
    ("matmul", "_Z12matmul_tiledILi32EEvPKfS1_Pfi"),
    ("reduce", "_Z10reduce_sumILi256EEvPKfPfi"),
];

const VARIANTS: &[(&str, &[&str])] = &[
    ("plain", &[]),
    ("extra1", &["EXTRA_WORK_PCT=1"]),
    ("extra3", &["EXTRA_WORK_PCT=3"]),
    ("extra10", &["EXTRA_WORK_PCT=10"]),
    ("badlaunch", &["BAD_LAUNCH=1"]),
];

/// The tool's path, or `None` after `SKIPPED: <test> (...)` (a failure under CI).
fn tool(test: &str, name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        support::skip(
            test,
            &format!("`{name}` is not installed (Debian non-free: nvidia-cuda-toolkit, nsight-compute)"),
        );
    }
    found
}

/// Build every variant with `make -C examples/cuda` (in parallel), into `dir/<variant>/`.
fn build_all(nvcc: &Path, dir: &Path) {
    let handles: Vec<_> = VARIANTS
        .iter()
        .map(|(name, args)| {
            let out = dir.join(name);
            let nvcc = nvcc.to_path_buf();
            std::thread::spawn(move || {
                let o = Command::new("make")
                    .arg("-C")
                    .arg(Path::new(ROOT).join("examples/cuda"))
                    .arg(format!("NVCC={}", nvcc.display()))
                    .arg(format!("OUT={}", out.display()))
                    .args(*args)
                    .output()
                    .expect("make runs");
                (*name, o)
            })
        })
        .collect();
    for h in handles {
        let (name, o) = h.join().unwrap();
        assert!(
            o.status.success(),
            "building {name} failed:\n{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        let text = String::from_utf8_lossy(&o.stderr);
        assert!(
            !text.to_lowercase().contains("warning"),
            "nvcc warned building {name}:\n{text}"
        );
    }
}

/// `cuobjdump -sass`, per function: name -> its instructions (encoding comments dropped).
fn sass(cuobjdump: &Path, exe: &Path) -> (String, BTreeMap<String, String>) {
    let o = Command::new(cuobjdump).arg("-sass").arg(exe).output().unwrap();
    assert!(o.status.success(), "cuobjdump -sass {} failed", exe.display());
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut funcs: BTreeMap<String, String> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(name) = line.trim().strip_prefix("Function : ") {
            current = Some(name.trim().to_owned());
            funcs.insert(name.trim().to_owned(), String::new());
        } else if let Some(f) = &current {
            // `/*0070*/  INSTRUCTION ;  /* encoding */`; continuation lines hold an encoding only.
            let instr = line
                .split("/*")
                .nth(1)
                .and_then(|s| s.split_once("*/"))
                .map_or("", |(_, rest)| rest.trim());
            if !instr.is_empty() {
                let body = funcs.get_mut(f).unwrap();
                body.push_str(instr);
                body.push('\n');
            }
        }
    }
    (text, funcs)
}

#[test]
fn every_variant_builds_for_sm90_and_planted_code_differs_where_it_should() {
    let test = "every_variant_builds_for_sm90_and_planted_code_differs_where_it_should";
    let (Some(nvcc), Some(cuobjdump)) = (tool(test, "nvcc"), tool(test, "cuobjdump")) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    build_all(&nvcc, dir.path());
    let mut code: BTreeMap<(&str, &str), BTreeMap<String, String>> = BTreeMap::new();
    for (variant, _) in VARIANTS {
        for (prog, kernel) in KERNELS {
            let (text, funcs) = sass(&cuobjdump, &dir.path().join(variant).join(prog));
            assert!(
                text.contains("arch = sm_90"),
                "{variant}/{prog} is not sm_90 code:\n{text}"
            );
            let body = funcs
                .get(*kernel)
                .unwrap_or_else(|| panic!("{variant}/{prog} has no {kernel}; functions: {:?}", funcs.keys()));
            assert!(
                body.lines().count() > 10,
                "{variant}/{prog}: {kernel} is nearly empty"
            );
            code.insert((variant, prog), funcs);
        }
    }
    for (prog, kernel) in KERNELS {
        let k = |v: &str| code[&(v, *prog)][*kernel].clone();
        let fill = |v: &str| code[&(v, *prog)]["_Z8cgp_fillPflj"].clone();
        // Every planted extra is different device code, and each amount is its own.
        for v in ["extra1", "extra3", "extra10"] {
            assert_ne!(k("plain"), k(v), "{prog}: {v} compiled to the plain kernel");
            assert_eq!(fill("plain"), fill(v), "{prog}: {v} changed the input fill");
        }
        assert_ne!(k("extra1"), k("extra3"), "{prog}: 1% and 3% compiled the same");
        assert_ne!(k("extra3"), k("extra10"), "{prog}: 3% and 10% compiled the same");
        // BAD_LAUNCH is a host-side launch change: the same functions, the same machine code.
        assert_eq!(
            code[&("plain", *prog)],
            code[&("badlaunch", *prog)],
            "{prog}: BAD_LAUNCH changed device code; it must change the launch only"
        );
    }
    // The extra work of matmul is real FMAs: more of them than in the plain kernel.
    let ffma = |v: &str| {
        code[&(v, "matmul")]["_Z12matmul_tiledILi32EEvPKfS1_Pfi"]
            .lines()
            .filter(|l| l.contains("FFMA "))
            .count()
    };
    assert!(ffma("extra1") > ffma("plain"), "matmul extra work added no FFMA");
}

fn standins() -> PathBuf {
    Path::new(ROOT).join("tests/standins")
}

fn script() -> Command {
    let mut c = Command::new("bash");
    c.arg(Path::new(ROOT).join("scripts/validate-gpu.sh"));
    c.arg("--cgp-gate").arg(env!("CARGO_BIN_EXE_cgp-gate"));
    c.env_remove("OUT");
    // No GPU here: the SYNTHETIC stand-in passes cgp-gate's preflight so that each live step
    // reaches ncu, nsys or the CUPTI library (the real GPU runner never sets it).
    c.env(support::STAND_IN_GPU, support::stand_in_gpu());
    c
}

fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap()
}

#[test]
fn dry_run_prints_the_plan_and_measures_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let o = script()
        .args(["--dry-run", "--sec-per-run", "1.5"])
        .arg(dir.path())
        .env("NVIDIA_SMI", standins().join("nvidia-smi"))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{text}");
    // examples/cgp-gate.validate.yaml: 3 rows, repetitions 3, max 6. Baseline 10 x 3 = 30,
    // live 3 x 3 = 9, A/A pool ceil(20 x 3 x 1.25) = 75 x 3 = 225, planted 4 x 18 x 3 = 216,
    // bare: 3 rows + 8 ncu metrics alone (3 + 3 + 2; the derived metric needs none) = 11:
    // 491 runs; at 1.5 s plus 60 s: 796 s.
    assert!(text.contains("3 rows, repetitions 3, max 6"), "{text}");
    assert!(
        text.contains("75 reps x 3 rows = 225 ncu runs -> 20 replayed checks"),
        "{text}"
    );
    assert!(
        text.contains("4 builds x 18 reps x 3 rows = 216 ncu runs -> 3 checks each"),
        "{text}"
    );
    assert!(
        text.contains("total:                491 ncu runs; at 1.5s a run about 796s"),
        "{text}"
    );
    assert!(text.contains("dry run: nothing was built or measured"), "{text}");
    assert!(
        !dir.path().join("work/builds").exists(),
        "a dry run built something"
    );
    // Part `aa` alone fits one 10-minute device call at that cost.
    let o = script()
        .args(["--dry-run", "--part", "aa", "--sec-per-run", "1.5"])
        .arg(dir.path())
        .env("NVIDIA_SMI", standins().join("nvidia-smi"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    assert!(text.contains("planted pools:        not in this part"), "{text}");
    assert!(
        text.contains("total:                275 ncu runs; at 1.5s a run about 472s (budget 540s)"),
        "{text}"
    );
    // The spec runs 30 launches per process.
    assert!(
        text.contains("launches per process: 30 (a run costs about 1.5s)"),
        "{text}"
    );
}

#[test]
fn dry_run_fits_the_checks_to_the_budget_at_the_measured_cost() {
    // The H100 run of 2026-11-24 planned 20 A/A checks into `--part aa --budget-s 500` and its
    // pool was cut to 15 checks; `--part planted --budget-s 520` planned 3 checks per build and
    // made 2. Now the plan fits the checks first, at the cost measured there (2.0 s per process
    // and 14 ms per launch beyond 3: 2.378 s for 30 launches).
    let dir = tempfile::tempdir().unwrap();
    let plan = |args: &[&str]| {
        let o = script()
            .arg("--dry-run")
            .args(args)
            .arg(dir.path())
            .env("NVIDIA_SMI", standins().join("nvidia-smi"))
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success(), "{text}");
        text
    };
    // Part aa: baseline 30 + live 9 + bare 11 runs; each A/A check needs 3.75 repetitions of the
    // 3 rows. 12 checks (a pool of 45 repetitions): 185 runs x 2.378 s + 60 s = 500 s.
    let text = plan(&["--part", "aa", "--budget-s", "500"]);
    assert!(
        text.contains("launches per process: 30 (a run costs about 2.378s)"),
        "{text}"
    );
    assert!(
        text.contains("A/A pool (plain):     45 reps x 3 rows = 135 ncu runs -> 12 replayed checks"),
        "{text}"
    );
    assert!(
        text.contains("total:                185 ncu runs; at 2.378s a run about 500s (budget 500s)"),
        "{text}"
    );
    assert!(
        text.contains("note: 12 A/A checks fit the budget (wanted 20)"),
        "{text}"
    );
    assert!(!text.contains("will be shrunk"), "{text}");
    // Part planted: 3 checks per build would need 257 runs (671 s); 2 fit (185 runs, 500 s).
    let text = plan(&["--part", "planted", "--budget-s", "520"]);
    assert!(
        text.contains("4 builds x 12 reps x 3 rows = 144 ncu runs -> 2 checks each"),
        "{text}"
    );
    assert!(
        text.contains("note: 2 checks per planted build fit the budget (wanted 3)"),
        "{text}"
    );
    // A budget that holds everything keeps what was asked for.
    let text = plan(&["--part", "planted", "--budget-s", "700"]);
    assert!(
        text.contains("4 builds x 18 reps x 3 rows = 216 ncu runs -> 3 checks each"),
        "{text}"
    );
    assert!(!text.contains("fit the budget"), "{text}");
}

#[test]
fn the_script_builds_with_the_makefiles_flags_when_there_is_no_make() {
    let makefile = std::fs::read_to_string(Path::new(ROOT).join("examples/cuda/Makefile")).unwrap();
    let script = std::fs::read_to_string(Path::new(ROOT).join("scripts/validate-gpu.sh")).unwrap();
    let flags = makefile
        .lines()
        .find_map(|l| l.strip_prefix("FLAGS = "))
        .expect("the Makefile has a FLAGS line");
    assert!(
        flags.starts_with("-O3 -arch=$(ARCH) -lineinfo -DCGP_EXTRA_WORK_PCT=$(EXTRA_WORK_PCT) -DCGP_BAD_LAUNCH=$(BAD_LAUNCH)"),
        "the Makefile's flags changed: update NVCC_FLAGS in scripts/validate-gpu.sh too: {flags}"
    );
    assert!(makefile.contains("ARCH ?= sm_90"));
    assert!(script.contains("NVCC_FLAGS=(-O3 -arch=sm_90 -lineinfo)"));
    assert!(script.contains(r#""-DCGP_EXTRA_WORK_PCT=$extra" "-DCGP_BAD_LAUNCH=$bad""#));
}

#[test]
fn bad_arguments_fail_with_a_message() {
    for (args, msg) in [
        (
            &["--part", "both"][..],
            "--part must be all, aa, planted or cupti",
        ),
        (&["--aa-checks", "0"][..], "--aa-checks needs a positive integer"),
        (&["--frobnicate"][..], "unknown option --frobnicate"),
        // The example spec lets ncu lock the clocks: refused, even for a dry run.
        (
            &["--dry-run", "--spec", "examples/cgp-gate.yaml"][..],
            "never changes the GPU's clocks",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let o = script()
            .args(args)
            .arg(dir.path())
            .current_dir(ROOT)
            .output()
            .unwrap();
        assert!(!o.status.success());
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(text.contains(msg), "{args:?}: {text}");
    }
}

#[test]
fn the_whole_script_runs_with_synthetic_standins_for_the_gpu() {
    let test = "the_whole_script_runs_with_synthetic_standins_for_the_gpu";
    let (Some(_), Some(real_ncu)) = (tool(test, "nvcc"), tool(test, "ncu")) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let state = dir.path().join("standin-state");
    // A resolved interpreter: a version manager's shim would cost a few hundred ms per ncu call.
    let python = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    let python = String::from_utf8_lossy(&python.stdout).trim().to_owned();
    let o = script()
        .args([
            "--synthetic",
            "stand-in run of tests/gpu_kit/mod.rs: tests/standins/ncu replays examples/recordings/main, which is itself synthetic",
            "--aa-checks",
            "3",
            "--planted-checks",
            "1",
            "--baseline-reps",
            "4",
            "--sec-per-run",
            "0.2",
            "--jobs",
            "2",
        ])
        .arg(&out)
        .env("CGP_GATE_NCU", standins().join("ncu"))
        .env("NVIDIA_SMI", standins().join("nvidia-smi"))
        .env("CGP_STANDIN_REAL_NCU", &real_ncu)
        .env("CGP_STANDIN_STATE", &state)
        .env("CGP_STANDIN_PYTHON", &python)
        .env("CGP_STANDIN_RECORDINGS", Path::new(ROOT).join("examples/recordings/main"))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "the script failed:\n{text}");
    // The last lines (what a device call's output tail shows first) are the digest.
    let digest = &text[text
        .rfind("== validate-gpu digest SYNTHETIC ==")
        .expect("a digest")..];
    assert!(digest.contains("  A/A: 4 checks, 36 verdicts: "), "{digest}");
    assert!(
        digest.contains("  extra10: matmul regr +") && digest.contains("  badlaunch: matmul regr +"),
        "{digest}"
    );

    // The real ncu saw the real command lines and started the real programs, which failed
    // without a GPU.
    let real = std::fs::read_to_string(state.join("real-ncu.log")).unwrap();
    assert!(real.contains("--clock-control none"), "{real}");
    assert!(
        real.contains("==ERROR== The application returned an error code"),
        "{real}"
    );
    assert!(
        real.contains("builds/extra10/build/matmul") || real.contains("./build/matmul"),
        "{real}"
    );

    let s = read_json(&out.join("summary.json"));
    assert_eq!(s["synthetic"], true);
    assert!(s["synthetic_note"].as_str().unwrap().starts_with("SYNTHETIC"));
    let p = &s["parts"][0];
    assert_eq!(p["part"], "all");
    // A/A: one live check and 3 replayed slices, 9 metric verdicts each (3 + 4 + 2 metrics).
    let aa = &p["aa"];
    assert_eq!(aa["checks"], 4, "{aa}");
    assert_eq!(aa["metric_verdicts"], 36, "{aa}");
    let counted: u64 = aa["verdicts"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(counted, 36);
    assert_eq!(aa["per_check"][0]["source"], "live");
    // The pool again with 2 and 5 repetitions: as many checks as it allows (12 repetitions: 6
    // checks of 2 when nothing is re-measured, 2 of 5). Every metric ends a pass on this
    // synthetic data; a pass read at the level its looks spent (issue 43) may first need a row
    // measured again, and a re-measured check takes the pool's repetitions of the next one.
    let sweep = &aa["by_repetitions"];
    assert_eq!(sweep["3"]["checks"], 3, "{sweep}");
    let twos = sweep["2"]["checks"].as_u64().unwrap();
    assert!((4..=6).contains(&twos), "{sweep}");
    assert_eq!(sweep["5"]["checks"], 2, "{sweep}");
    assert_eq!(sweep["2"]["metric_verdicts"].as_u64(), Some(9 * twos), "{sweep}");
    assert_eq!(sweep["2"]["verdicts"]["pass"].as_u64(), Some(9 * twos), "{sweep}");
    // Each check's cost: a replay's ncu runs are those of the pool repetitions it used.
    for c in aa["per_check"].as_array().unwrap() {
        assert!(c["ncu_runs"].as_u64().unwrap() >= 9, "{c}");
        assert!(c["ncu_seconds"].as_f64().unwrap() > 0.0, "{c}");
        assert!(c["wall_seconds"].as_f64().unwrap() > 0.0, "{c}");
    }
    assert_eq!(aa["verdicts"].get("error"), None, "{aa}");
    // Planted: the synthetic +10% and +30% durations are found in every check, on every target.
    for v in ["extra10", "badlaunch"] {
        let d = &p["planted"][v];
        assert_eq!(d["checks"], 1, "{v}: {d}");
        for row in ["vector_add/n=16777216", "matmul/n=1024", "reduce/n=16777216"] {
            let m = &d["metrics"][format!("{row}/gpu__time_duration.sum")];
            let verdicts: Vec<&str> = m
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["verdict"].as_str().unwrap())
                .collect();
            assert_eq!(verdicts, ["regression"], "{v} {row}: {m}");
        }
    }
    for v in ["extra1", "extra3"] {
        assert_eq!(p["planted"][v]["checks"], 1);
    }
    // The slices are disjoint: no pool repetition is used by two checks.
    let checks = read_json(&out.join("work/checks/aa-checks.json"));
    let mut seen = std::collections::BTreeSet::new();
    for c in checks["checks"].as_array().unwrap() {
        for (row, reps) in c["pool_reps_used"].as_object().unwrap() {
            for r in reps.as_array().unwrap() {
                assert!(
                    seen.insert((row.clone(), r.as_u64().unwrap())),
                    "pool rep {row} {r} used twice"
                );
            }
        }
    }
    // Cost: per row the bare ncu run, the program alone, passes reported and per metric alone.
    let rows = p["cost"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for r in rows {
        assert!(r["bare_ncu_seconds"].as_f64().unwrap() > 0.0, "{r}");
        assert_eq!(r["bare_ncu_exit"], 0, "{r}");
        assert!(!r["passes_reported"].as_object().unwrap().is_empty(), "{r}");
        assert!(r["fewest_passes_lower_bound"].as_u64().unwrap() >= 1, "{r}");
    }
    assert!(p["cost"]["live_check"]["ncu_runs"].as_u64().unwrap() >= 9);
    // The Markdown says SYNTHETIC first, and has every section.
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.starts_with("# cgp-gate validation summary (SYNTHETIC"), "{md}");
    for h in [
        "### A/A",
        "### Planted regressions",
        "### Cost",
        "| extra10 | matmul/n=1024/gpu__time_duration.sum | regression |",
    ] {
        assert!(md.contains(h), "{h} missing:\n{md}");
    }
    // Every recording is labelled synthetic, in the tarball too.
    let manifest = read_json(&out.join("work/rec/plain-pool/manifest.json"));
    assert_eq!(manifest["synthetic"], true);
    let tarball = out.join("validation-all.tar.gz");
    let list = Command::new("tar").arg("-tzf").arg(&tarball).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    for f in [
        "./summary.json",
        "./rec/baseline/manifest.json",
        "./checks/aa-01.json",
        "./env/ncu-version.txt",
        "./keep/extra10-01/manifest.json",
    ] {
        assert!(list.lines().any(|l| l == f), "{f} not in the tarball:\n{list}");
    }
    assert!(
        !list.contains("./slices/"),
        "slices are copies and stay out of the tarball"
    );
    // The tarball alone is enough to make the summary again (as after a GPU lease).
    let x = dir.path().join("extracted");
    std::fs::create_dir_all(&x).unwrap();
    assert!(
        Command::new("tar")
            .arg("-xzf")
            .arg(&tarball)
            .arg("-C")
            .arg(&x)
            .status()
            .unwrap()
            .success()
    );
    let again = dir.path().join("again");
    let o = script().arg("--merge").arg(&x).arg(&again).output().unwrap();
    assert!(o.status.success(), "{o:?}");
    let s2 = read_json(&again.join("summary.json"));
    assert_eq!(s2["synthetic"], true);
    assert_eq!(s2["parts"][0]["aa"], s["parts"][0]["aa"]);
    assert_eq!(s2["parts"][0]["planted"], s["parts"][0]["planted"]);
    // What a device call brings back: few files, at most 2 folders down.
    let top: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_file())
        .collect();
    assert!(top.len() <= 8, "{top:?}");
}

#[test]
fn with_the_real_ncu_and_no_gpu_the_script_stops_at_the_first_profiling_step() {
    let test = "with_the_real_ncu_and_no_gpu_the_script_stops_at_the_first_profiling_step";
    let (Some(_), Some(real_ncu)) = (tool(test, "nvcc"), tool(test, "ncu")) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let o = script()
        .args([
            "--synthetic",
            "real ncu without a GPU (tests/gpu_kit/mod.rs)",
            "--part",
            "aa",
            "--jobs",
            "2",
        ])
        .arg(dir.path())
        .env("CGP_GATE_NCU", &real_ncu)
        .env("NVIDIA_SMI", standins().join("nvidia-smi"))
        .output()
        .unwrap();
    // The script logs everything (its errors too) to stdout and validate.log.
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("validate-gpu: error: cgp-gate profile --record failed for baseline (exit 3"),
        "{out}"
    );
    assert!(
        out.contains("2/8 builds") && out.contains("3/8 baseline"),
        "{out}"
    );
    assert!(!out.contains("4/8"), "it went on after the failure:\n{out}");
    // cgp-gate's own message about ncu's failure is in the output and in the logs.
    let log = std::fs::read_to_string(dir.path().join("work/rec/baseline.log")).unwrap();
    assert!(log.contains("error: vector_add[n=16777216] rep 0"), "{log}");
    let whole = std::fs::read_to_string(dir.path().join("validate.log")).unwrap();
    assert!(whole.contains("profile --record failed for baseline"), "{whole}");
    // The logs so far are packed, so a failed device call still brings them back.
    assert!(out.contains("the logs so far are in"), "{out}");
    let list = Command::new("tar")
        .arg("-tzf")
        .arg(dir.path().join("validation-aa.tar.gz"))
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(list.lines().any(|l| l == "./rec/baseline.log"), "{list}");
}
