//! `init` end to end: on every real ncu capture of tests/fixtures/ncu-wild and on the example
//! recordings (each written spec checked by `validate`), `init -- PROGRAM` against the stand-in
//! ncu, and its refusals.

use std::path::{Path, PathBuf};

use super::{bin, validate};
use crate::support::root;

/// The captures of tests/fixtures/ncu-wild, sorted.
fn wild_captures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("tests/fixtures/ncu-wild"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    v.sort();
    assert!(v.len() >= 10, "the ncu-wild fixtures are missing: {v:?}");
    v
}

/// Run `init --from FILE [-- COMMAND]` into a fresh directory; returns (dir, output).
fn init_from(file: &Path, command: &[&str]) -> (tempfile::TempDir, std::process::Output) {
    let dir = tempfile::tempdir().unwrap();
    let mut c = bin();
    c.current_dir(dir.path()).arg("init").arg("--from").arg(file);
    if !command.is_empty() {
        c.arg("--").args(command);
    }
    let out = c.output().unwrap();
    (dir, out)
}

/// The function names (what ncu's `-k` matches) of every launch in a capture, via `parse --json`.
fn launched_functions(file: &Path) -> Vec<String> {
    let out = bin().arg("parse").arg("--json").arg(file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| cgp_gate::commands::init::function_name(l["kernel"].as_str().unwrap()))
        .collect()
}

/// The kernel names of every launch in a capture, as the CSV prints them, via `parse --json`.
fn launched_kernels(file: &Path) -> Vec<String> {
    let out = bin().arg("parse").arg("--json").arg(file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kernel"].as_str().unwrap().to_owned())
        .collect()
}

/// The `kernel:` value of a written spec, if any.
fn kernel_line(spec: &str) -> Option<String> {
    spec.lines()
        .find_map(|l| l.trim().strip_prefix("kernel: "))
        .map(|k| k.trim_matches('"').replace("\\\\", "\\"))
}

/// Captures that hold ncu's failure instead of launches (PROVENANCE.md: "a clear error, exit 2").
const NO_KERNELS: &[&str] = &["03_llmperf_error_only.csv", "10_moe_noprofiled_warning.csv"];

#[test]
fn init_from_every_real_capture_writes_a_spec_that_validates_and_selects_its_kernels() {
    for file in wild_captures() {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let (dir, out) = init_from(&file, &[]);
        let spec_path = dir.path().join("cgp-gate.yaml");
        let stderr = String::from_utf8_lossy(&out.stderr);
        if NO_KERNELS.contains(&name.as_str()) {
            assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
            assert!(
                stderr.contains(&name),
                "{name}: the error names the file: {stderr}"
            );
            assert!(
                !spec_path.exists(),
                "{name}: no spec is written from a failed capture"
            );
            continue;
        }
        assert_eq!(out.status.code(), Some(0), "{name}: {stderr}");
        validate(&spec_path);
        let spec = std::fs::read_to_string(&spec_path).unwrap();
        // The duration the capture holds (`gpu__time_duration.avg` when that is all it has).
        assert!(
            spec.contains("      gpu__time_duration.sum: \"3%\"\n")
                || spec.contains("      gpu__time_duration.avg: \"3%\"\n"),
            "{name}:\n{spec}"
        );
        // A library operation (`kernels: sum`, a cuBLAS capture) gates no registers: they do not
        // add up over kernels; nor does a spec from a capture without them in every launch.
        let text = std::fs::read_to_string(&file).unwrap();
        let registers_everywhere =
            text.contains("launch__registers_per_thread") || text.contains("\"Registers Per Thread\"");
        assert_eq!(
            spec.contains("      launch__registers_per_thread: exact\n"),
            !spec.contains("    kernels: sum\n") && registers_everywhere,
            "{name}:\n{spec}"
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("cgp-gate baseline update"), "{name}: {stdout}");
        assert!(stdout.contains("cgp-gate check"), "{name}: {stdout}");
        // The filter selects exactly the kernels the spec marks `+` (gated), by the rule live ncu
        // and replay share (docs/spec.md, "Selecting kernels"): replayed, the spec profiles the
        // kernels init proposed, and never a fragment of a name.
        let functions = launched_functions(&file);
        match kernel_line(&spec) {
            Some(_) => {
                let loaded = cgp_spec::spec::load(&spec_path).unwrap();
                let filter = loaded.targets[0].kernel.clone().unwrap();
                let listed: Vec<(&str, bool)> = spec
                    .lines()
                    .filter_map(|l| {
                        let l = l.trim_start().strip_prefix("#  ")?;
                        let gated = l.starts_with('+');
                        l.get(2..).map(|rest| (rest, gated))
                    })
                    .collect();
                assert!(!listed.is_empty(), "{name}:\n{spec}");
                for kernel in launched_kernels(&file) {
                    let key = cgp_core::measured::samples::kernel_key(&kernel);
                    let Some((_, gated)) = listed.iter().find(|(l, _)| l.starts_with(key.as_str())) else {
                        continue; // beyond the listed 40
                    };
                    assert_eq!(
                        cgp_profile::profile::filter::matches(&filter, &kernel),
                        *gated,
                        "{name}: `kernel: {filter}` and `{kernel}` (gated: {gated})\n{spec}"
                    );
                }
            }
            None => assert!(
                functions.iter().all(|f| f == "range"),
                "{name}: only NVTX range results may leave `kernel:` out:\n{spec}"
            ),
        }
    }
}

#[test]
fn init_names_the_program_from_the_connected_line_or_writes_a_placeholder() {
    let wild = root().join("tests/fixtures/ncu-wild");
    let (dir, out) = init_from(&wild.join("18_winpy_t4_metrics_RECONSTRUCTED.csv"), &[]);
    assert!(out.status.success());
    let spec = std::fs::read_to_string(dir.path().join("cgp-gate.yaml")).unwrap();
    assert!(
        spec.contains(r#"command: ["C:\\Python311\\python.exe"]"#),
        "{spec}"
    );
    assert!(spec.contains("  - name: python\n"), "{spec}");
    assert!(
        // cuBLAS's `volta_sgemm_128x32_nn` is matched by its family (init: library kernels).
        spec.contains("kernel: \"regex:_5x_cudnn_volta_scudnn_128x64_relu_xregs_large_nn_v1|nvjet|gemm|xmma|cutlass|_5x_cudnn_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1\""),
        "{spec}"
    );

    // 16 has a Connected line without a path (2020-era ncu): the placeholder, which validates.
    let (dir, out) = init_from(&wild.join("16_rodinia_v100_2020_hotspot.csv"), &[]);
    assert!(out.status.success());
    let spec = std::fs::read_to_string(dir.path().join("cgp-gate.yaml")).unwrap();
    assert!(spec.contains("command: [./path/to/your/benchmark]"), "{spec}");
    assert!(spec.contains("kernel: calculate_temp\n"), "{spec}");
    assert!(
        spec.contains("calculate_temp     1 launch      51.36 us  40 registers  100.0%"),
        "{spec}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("replace `./path/to/your/benchmark`"), "{stdout}");
}

#[test]
fn init_from_every_example_recording_with_its_command_line() {
    for target in ["vector_add", "matmul", "reduce"] {
        let dir = root().join("examples/recordings/main").join(target);
        for size in std::fs::read_dir(&dir).unwrap() {
            let size = size.unwrap().path();
            let n = size
                .file_name()
                .unwrap()
                .to_string_lossy()
                .trim_start_matches("n=")
                .to_owned();
            let program = format!("./build/{target}");
            let (out_dir, out) = init_from(&size.join("0.csv"), &[&program, "--n", &n, "--launches", "3"]);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let spec_path = out_dir.path().join("cgp-gate.yaml");
            validate(&spec_path);
            let spec = std::fs::read_to_string(&spec_path).unwrap();
            // `--launches` is a loop count: it stays in the command, out of the sizes.
            assert!(
                spec.contains(&format!(
                    "command: [{program}, --n, \"{{n}}\", --launches, \"3\"]"
                )),
                "{spec}"
            );
            assert!(spec.contains(&format!("      - {{ n: {n} }}\n")), "{spec}");
            assert!(spec.contains(&format!("  - name: {target}\n")), "{spec}");
            let kernel = if target == "matmul" {
                "matmul_tiled"
            } else if target == "reduce" {
                "reduce_sum"
            } else {
                "vector_add"
            };
            assert!(spec.contains(&format!("    kernel: {kernel}\n")), "{spec}");
        }
    }
}

#[test]
fn init_refuses_to_overwrite_a_spec_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("cgp-gate.yaml");
    std::fs::write(&spec, "# mine\n").unwrap();
    let capture = root().join("examples/recordings/main/vector_add/n=1048576/0.csv");
    let out = bin()
        .current_dir(dir.path())
        .args(["init", "--from"])
        .arg(&capture)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    assert_eq!(
        std::fs::read_to_string(&spec).unwrap(),
        "# mine\n",
        "left as it was"
    );
    let out = bin()
        .current_dir(dir.path())
        .args(["init", "--force", "--from"])
        .arg(&capture)
        .output()
        .unwrap();
    assert!(out.status.success());
    validate(&spec);
}

#[test]
fn init_takes_a_target_name_that_can_name_files() {
    let capture = root().join("examples/recordings/main/reduce/n=16777216/0.csv");
    let (dir, out) = {
        let dir = tempfile::tempdir().unwrap();
        let out = bin()
            .current_dir(dir.path())
            .args(["init", "--name", "sum-256", "--from"])
            .arg(&capture)
            .output()
            .unwrap();
        (dir, out)
    };
    assert!(out.status.success());
    let spec = std::fs::read_to_string(dir.path().join("cgp-gate.yaml")).unwrap();
    assert!(spec.contains("  - name: sum-256\n"), "{spec}");
    let out = bin()
        .current_dir(dir.path())
        .args(["init", "--force", "--name", "../x", "--from"])
        .arg(&capture)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be a target name"));
}

#[test]
fn init_without_a_program_or_a_capture_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin().current_dir(dir.path()).arg("init").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--from FILE"));
    assert!(!dir.path().join("cgp-gate.yaml").exists());
}

#[test]
fn init_runs_the_program_once_under_ncu_without_a_kernel_filter() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake");
    std::fs::create_dir(&fake).unwrap();
    std::fs::copy(
        root().join("examples/recordings/main/matmul/n=1024/0.csv"),
        fake.join("log"),
    )
    .unwrap();
    let out = bin()
        .current_dir(dir.path())
        .env("CGP_GATE_NCU", root().join("tests/fixtures/fake-ncu/ncu"))
        .env("FAKE_NCU_DIR", &fake)
        .env(crate::support::STAND_IN_GPU, crate::support::stand_in_gpu())
        .args(["init", "--", "./build/matmul", "--n", "1024"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let spec_path = dir.path().join("cgp-gate.yaml");
    validate(&spec_path);
    let spec = std::fs::read_to_string(&spec_path).unwrap();
    assert!(spec.contains("command: [./build/matmul, --n, \"{n}\"]"), "{spec}");
    assert!(spec.contains("      - { n: 1024 }\n"), "{spec}");
    assert!(spec.contains("    kernel: matmul_tiled\n"), "{spec}");
    // One profiling run (after `--version`): the program's argv last, every kernel, bounded.
    let log = std::fs::read_to_string(fake.join("argv.log")).unwrap();
    let runs: Vec<Vec<&str>> = log
        .split("\n\n")
        .filter(|r| !r.trim().is_empty())
        .map(|r| r.lines().collect())
        .collect();
    assert_eq!(runs.len(), 2, "{log}");
    assert_eq!(runs[0], ["--version"]);
    let run = &runs[1];
    assert_eq!(&run[run.len() - 3..], ["./build/matmul", "--n", "1024"]);
    assert!(!run.contains(&"--kernel-name"), "{run:?}");
    assert!(run.windows(2).any(|w| w == ["--launch-count", "200"]), "{run:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("void matmul_tiled<32>     3 launches    116.2 us  38 registers"),
        "{stdout}"
    );
}

#[test]
fn init_reports_a_failing_program_as_a_profiler_failure_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake");
    std::fs::create_dir(&fake).unwrap();
    std::fs::write(fake.join("exit"), "1").unwrap();
    std::fs::write(fake.join("stderr"), "bench: cannot open input\n").unwrap();
    let out = bin()
        .current_dir(dir.path())
        .env("CGP_GATE_NCU", root().join("tests/fixtures/fake-ncu/ncu"))
        .env("FAKE_NCU_DIR", &fake)
        .env(crate::support::STAND_IN_GPU, crate::support::stand_in_gpu())
        .args(["init", "--", "./bench"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bench: cannot open input"), "{stderr}");
    assert!(!dir.path().join("cgp-gate.yaml").exists());
}
