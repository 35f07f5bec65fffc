//! The first errors a newcomer meets (issue 37), each as a user meets it: a live `check` on a
//! machine without a usable GPU, ...

use std::path::Path;
use std::process::Command;

use crate::support;
use crate::support::root;

fn bin() -> Command {
    let mut c = crate::support::bin_std();
    for v in [
        "GITHUB_ACTIONS",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_OUTPUT",
        "CGP_GATE_NVML_LIB",
    ] {
        c.env_remove(v);
    }
    c
}

fn output(c: &mut Command) -> (i32, String) {
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn have(tool: &str, arg: &str) -> bool {
    Command::new(tool)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A live `check` of examples/cgp-gate.yaml against its baselines (of the synthetic GPU) with the
/// real ncu and without a usable GPU: it says there is none, with NVML's own error, and exits 3
/// (it used to say "no baseline of `matmul` for this GPU (`unknown`)" and suggest an option that
/// changes nothing). Twice: NVML's library absent (CGP_GATE_NVML_LIB pointing nowhere), and, on
/// a machine where the library is installed but no GPU is (this one after .ci/setup: Debian's
/// libnvidia-ml), the real library's refusal.
#[test]
fn a_live_check_without_a_gpu_says_so_and_exits_3() {
    if !have("ncu", "--version") {
        support::skip(
            "a_live_check_without_a_gpu_says_so_and_exits_3",
            "ncu is not installed (.ci/setup installs Debian's nsight-compute)",
        );
        return;
    }
    let check = || {
        let mut c = bin();
        c.current_dir(root().join("examples")).args([
            "check",
            "--spec",
            "cgp-gate.yaml",
            "--baselines",
            "baselines",
        ]);
        c
    };
    let (code, said) = output(check().env("CGP_GATE_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"));
    assert_eq!(code, 3, "{said}");
    assert!(
        said.contains("error: no usable GPU: no NVIDIA driver found (NVML could not be loaded"),
        "{said}"
    );
    assert!(
        !said.contains("--allow-fingerprint-mismatch") && !said.contains("no baseline of"),
        "{said}"
    );

    let gpu_here = have("nvidia-smi", "-L");
    let lib_here = [
        "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
        "/usr/lib64/libnvidia-ml.so.1",
    ]
    .iter()
    .any(|p| Path::new(p).exists());
    if gpu_here || !lib_here {
        // With a GPU the real library opens it; without the library the case above is this one.
        return;
    }
    let (code, said) = output(&mut check());
    assert_eq!(code, 3, "{said}");
    assert!(
        said.contains("error: no usable GPU: NVIDIA driver not usable (NVML failed to initialise: "),
        "{said}"
    );
    assert!(said.contains("--replay DIR"), "{said}");
}

/// A library kernel switch: the spec names the exact cuBLAS kernel `init` saw
/// (`nvjet_sm90_tst_...`), and on this run cuBLAS picked CUTLASS's kernel (the real name from
/// examples/pytorch/switch, an H100 capture). ncu's log says `No kernels were profiled.` and lists
/// `Available Kernels:`; the error names the kernel that ran, and its help names spec keys
/// (`kernel:`, `launch_skip`, `kernels: sum`), not ncu flags. The log is written here in the shape
/// the issue quotes (no real capture of this list is in the fixtures).
#[test]
fn a_filter_that_matched_nothing_names_the_kernels_that_ran() {
    let ran = "void Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_128x256_64x3_nn_align2>(Params)";
    let real =
        std::fs::read_to_string(root().join("examples/pytorch/switch/gemm-n2048-cutlass.csv")).unwrap();
    assert!(real.contains(ran), "the name is the real capture's");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cgp-gate.yaml"),
        "version: 1\ndefaults:\n  repetitions: 1\ntargets:\n  - name: gemm\n    command: [python3, torch_work.py, --n, \"{n}\"]\n    kernel: nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT\n    sizes:\n      - { n: 2048 }\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n",
    )
    .unwrap();
    let rep = dir.path().join("rec/gemm/n=2048");
    std::fs::create_dir_all(&rep).unwrap();
    std::fs::write(
        rep.join("0.csv"),
        format!(
            "==PROF== Connected to process 513 (/usr/bin/python3.12)\nok n=2048\n==PROF== Disconnected from process 513\n\
             ==WARNING== No kernels were profiled.\nAvailable Kernels:\n1. {ran}\n"
        ),
    )
    .unwrap();
    let (code, said) = output(bin().current_dir(dir.path()).args(["profile", "--replay", "rec"]));
    assert_eq!(code, 3, "{said}");
    assert!(
        said.contains(&format!("kernels the application launched: `{ran}`")),
        "{said}"
    );
    assert!(
        said.contains("`launch_skip`") && said.contains("kernels: sum"),
        "{said}"
    );
    assert!(
        !said.contains("`-k`") && !said.contains("--launch-skip"),
        "{said}"
    );
}

/// `validate` reports every error of a spec in one run, each with file:line:column, in file
/// order: five mistakes in three places (a default, a target, two thresholds and a threshold's
/// key) are five errors of one run, not five runs. A misspelt required key (`comand`) is read as
/// the key it suggests, so it is not reported again as missing. At most 20 are listed.
#[test]
fn validate_reports_every_error_of_a_spec_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("typo.yaml");
    std::fs::write(
        &spec,
        "version: 1\ndefaults:\n  repetitons: 5\ntargets:\n  - name: matmul\n    comand: [./build/matmul, --n, \"{n}\"]\n    kernel: matmul_tiled\n    sizes:\n      - { n: 1024 }\n    metrics:\n      gpu__time_duration.sum: \"3%%\"\n      launch__registers_per_thread: exactly\n  - name: other\n    command: [./x]\n    metrics:\n      gpu__time_duration.sum: { relative: \"3%\", min_efect: 1us }\n",
    )
    .unwrap();
    let (code, said) = output(bin().arg("validate").arg("--spec").arg(&spec));
    assert_eq!(code, 2, "{said}");
    let at: Vec<&str> = said
        .lines()
        .filter_map(|l| l.strip_prefix("error: "))
        .map(|l| l.split(": ").next().unwrap())
        .collect();
    let p = spec.display().to_string();
    assert_eq!(at.len(), 5, "{said}");
    for (got, line) in at.iter().zip([3, 6, 11, 12, 16]) {
        assert!(
            got.starts_with(&format!("{p}:{line}:")),
            "{got}, expected line {line}:\n{said}"
        );
    }
    assert_eq!(at.len(), 5, "{said}");
    assert!(
        said.contains("unknown key `comand`") && !said.contains("has no `command`"),
        "{said}"
    );
    assert!(said.contains("did you mean `min_effect`?"), "{said}");
    assert!(said.ends_with("5 errors in the spec\n"), "{said}");

    // A file wrong everywhere: the first 20, and how many more.
    let keys: String = (0..30).map(|i| format!("    bogus_key_{i}: 1\n")).collect();
    std::fs::write(
        &spec,
        format!("version: 1\ntargets:\n  - name: a\n    command: [./a]\n{keys}    metrics: {{gpu__time_duration.sum: \"3%\"}}\n"),
    )
    .unwrap();
    let (code, said) = output(bin().arg("validate").arg("--spec").arg(&spec));
    assert_eq!(code, 2, "{said}");
    assert_eq!(said.matches("unknown key `bogus_key_").count(), 20, "{said}");
    assert!(said.contains("10 more error(s) not shown"), "{said}");
}

/// `init --from` a details page, then a replay of that same capture against the spec it wrote
/// (the capture copied as every repetition): the `--set full` page (tests/fixtures/ncu/d3, ncu
/// 2025) holds the kernel time as `Duration` in "GPU Speed Of Light Throughput", and the
/// written `gpu__time_duration.sum` is read from it (it used to exit 2, "metric missing"); a page
/// that lacks registers for some launches gets no registers metric; a page with only
/// `gpu__time_duration.avg` gets that. Captures without any duration say so in the spec.
#[test]
fn init_from_a_details_page_writes_a_spec_its_own_capture_replays() {
    let fixtures = root().join("tests/fixtures");
    for (rel, time) in [
        ("ncu/d3/details_full.csv", "gpu__time_duration.sum"),
        ("ncu/d1/details.log", "gpu__time_duration.sum"),
        ("ncu/d2/details_nvtx.csv", "gpu__time_duration.sum"),
        ("ncu-wild/01_llmperf_details_cc120.csv", "gpu__time_duration.sum"),
        (
            "ncu-wild/19_aipe_nvtx_range_details_RECONSTRUCTED.csv",
            "gpu__time_duration.avg",
        ),
    ] {
        let capture = fixtures.join(rel);
        let dir = tempfile::tempdir().unwrap();
        let (code, said) = output(
            bin()
                .current_dir(dir.path())
                .arg("init")
                .arg("--from")
                .arg(&capture),
        );
        assert_eq!(code, 0, "{rel}: {said}");
        let spec = std::fs::read_to_string(dir.path().join("cgp-gate.yaml")).unwrap();
        assert!(
            spec.contains(&format!("      {time}: \"3%\"\n")),
            "{rel}:\n{spec}"
        );
        let loaded = cgp_spec::spec::load(&dir.path().join("cgp-gate.yaml")).unwrap();
        let t = &loaded.targets[0];
        let rep_dir = dir.path().join("rec").join(&t.name).join("default");
        std::fs::create_dir_all(&rep_dir).unwrap();
        for i in 0..t.baseline_repetitions.max(t.max_repetitions) {
            std::fs::copy(&capture, rep_dir.join(format!("{i}.csv"))).unwrap();
        }
        let (code, said) = output(bin().current_dir(dir.path()).args(["profile", "--replay", "rec"]));
        assert_eq!(code, 0, "{rel}: replaying its own capture:\n{said}\n{spec}");
        assert!(said.contains(time), "{rel}: {said}");
    }
    let dir = tempfile::tempdir().unwrap();
    let (code, said) = output(
        bin()
            .current_dir(dir.path())
            .arg("init")
            .arg("--from")
            .arg(fixtures.join("ncu-wild/02_llmperf_roofline_section.csv")),
    );
    assert_eq!(code, 0, "{said}");
    let spec = std::fs::read_to_string(dir.path().join("cgp-gate.yaml")).unwrap();
    assert!(spec.contains("The capture holds no kernel duration"), "{spec}");
}

/// `baseline_repetitions: 30` against a recording of 1 run (the SYNTHETIC demo's matmul capture):
/// the baseline is written from the 1 run, and stderr says so; with 30 runs recorded, no warning.
#[test]
fn a_baseline_from_fewer_runs_than_asked_says_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cgp-gate.yaml"),
        "version: 1\ndefaults:\n  repetitions: 1\n  baseline_repetitions: 30\ntargets:\n  - name: matmul\n    command: [./build/matmul, --n, \"{n}\"]\n    kernel: matmul_tiled\n    sizes:\n      - { n: 1024 }\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n",
    )
    .unwrap();
    let capture = root().join("examples/recordings/main/matmul/n=1024/0.csv");
    let rec = dir.path().join("rec/matmul/n=1024");
    std::fs::create_dir_all(&rec).unwrap();
    std::fs::copy(&capture, rec.join("0.csv")).unwrap();
    let update = || {
        output(bin().current_dir(dir.path()).args([
            "baseline",
            "update",
            "--replay",
            "rec",
            "--baselines",
            "b",
        ]))
    };
    let (code, said) = update();
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("warning: the baseline of matmul[n=1024] is stored from 1 run (the recording holds no more), though the spec asks `baseline_repetitions: 30`"),
        "{said}"
    );
    for i in 1..30 {
        std::fs::copy(&capture, rec.join(format!("{i}.csv"))).unwrap();
    }
    let (code, said) = update();
    assert_eq!(code, 0, "{said}");
    assert!(!said.contains("warning: the baseline of"), "{said}");
}

/// `calibrate`'s console on the SYNTHETIC demo recording: it says how its figures were made (the
/// closed form, not "0 simulated checks per figure"), and its table has the processes and
/// launches needed and the note at 200 columns, and says what it left out at 80.
#[test]
fn calibrate_console_shows_what_was_computed_and_every_column_that_fits() {
    let run = |cols: &str| {
        output(bin().current_dir(root()).env("COLUMNS", cols).args([
            "calibrate",
            "--spec",
            "examples/cgp-gate.yaml",
            "--replay",
            "examples/recordings/main",
        ]))
    };
    let (code, said) = run("200");
    assert_eq!(code, 0, "{said}");
    assert!(!said.contains("0 simulated checks"), "{said}");
    assert!(
        said.contains("figures from the run-level model's closed form (no simulation)"),
        "{said}"
    );
    let header = said.lines().find(|l| l.starts_with("target ")).unwrap();
    for col in ["procs needed", "launches needed", "note"] {
        assert!(header.contains(col), "{header}");
    }
    assert!(
        said.contains("threshold is above"),
        "the notes are in the table: {said}"
    );
    let (_, narrow) = run("80");
    assert!(
        narrow.contains("(left out to fit 80 columns:") && narrow.contains("note"),
        "{narrow}"
    );
}

/// Issue 46: `cgp-gate doctor` says, check by check, whether this machine can measure and what
/// to fix. On this machine (no GPU; ncu, nsys and libcupti installed by .ci/setup) the GPU check
/// fails with its fix and exit 3; a spec of harness targets needs none of it (exit 0); a missing
/// ncu is named with its fix.
#[test]
fn doctor_names_each_check_and_what_to_fix() {
    let test = "first_errors::doctor_names_each_check_and_what_to_fix";
    if Path::new("/dev/nvidia0").exists() {
        support::skip(test, "a GPU is present: this test is of the machine without one");
        return;
    }
    let (code, text) = output(bin().arg("doctor"));
    assert_eq!(code, 3, "{text}");
    assert!(
        text.contains("FAIL  GPU") && text.contains("fix: run on a machine whose NVIDIA GPU"),
        "{text}"
    );
    assert!(text.contains("cannot measure yet: GPU"), "{text}");
    for check in ["counter access", "ncu", "nsys", "libcupti"] {
        assert!(text.contains(check), "{check}: {text}");
    }
    let (code, text) = output(bin().arg("doctor").env("CGP_GATE_NCU", "/nonexistent/ncu"));
    assert_eq!(code, 3, "{text}");
    assert!(
        text.contains("FAIL  ncu") && text.contains("CGP_GATE_NCU"),
        "{text}"
    );

    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.yaml");
    std::fs::write(
        &spec,
        "version: 1\ntargets:\n  - name: reduce\n    profiler: gbench\n    command: [./bench]\n    metrics:\n      real_time: \"5%\"\n",
    )
    .unwrap();
    let (code, text) = output(bin().arg("doctor").arg("--spec").arg(&spec));
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("need no GPU tools") && text.contains("(not needed by this spec)"),
        "{text}"
    );
}

/// Issue 59, item 6: `doctor` finds libcupti as a cupti run does, through the dynamic loader.
/// ldconfig's cache lists none here (a stale cache: a stand-in `ldconfig` first on PATH lists
/// nothing) and the real libcupti is in a folder on LD_LIBRARY_PATH: doctor says `ok` with that
/// file and that the cache is stale, not "install libcupti-dev". A `libcupti:` that is not there
/// is named, with advice about that path, not about installing.
#[test]
fn doctor_finds_libcupti_through_the_loader_when_the_ldconfig_cache_is_stale() {
    let test = "first_errors::doctor_finds_libcupti_through_the_loader_when_the_ldconfig_cache_is_stale";
    let Ok((real, _)) = cgp_profile::cupti::locate::locate(None) else {
        support::skip(
            test,
            "libcupti is not installed (.ci/setup installs libcupti-dev)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let bin_dir = dir.path().join("bin");
    let lib_dir = dir.path().join("lib");
    std::fs::create_dir(&bin_dir).unwrap();
    std::fs::create_dir(&lib_dir).unwrap();
    std::fs::write(
        bin_dir.join("ldconfig"),
        "#!/bin/sh\necho '0 libs found in cache /etc/ld.so.cache'\n",
    )
    .unwrap();
    std::fs::set_permissions(
        bin_dir.join("ldconfig"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::os::unix::fs::symlink(std::fs::canonicalize(&real).unwrap(), lib_dir.join("libcupti.so")).unwrap();
    let spec = dir.path().join("s.yaml");
    std::fs::write(
        &spec,
        "version: 1\ntargets:\n  - name: t\n    profiler: cupti\n    command: [./app]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n",
    )
    .unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let doctor = |extra: &[(&str, &std::ffi::OsStr)]| {
        let mut c = bin();
        c.arg("doctor")
            .arg("--spec")
            .arg(&spec)
            .env("PATH", &path)
            .env("LD_LIBRARY_PATH", &lib_dir);
        for k in [
            "CGP_GATE_LIBCUPTI",
            "CUDA_HOME",
            "CUDA_PATH",
            "VIRTUAL_ENV",
            "CONDA_PREFIX",
        ] {
            c.env_remove(k);
        }
        for (k, v) in extra {
            c.env(k, v);
        }
        output(&mut c)
    };
    let (_, text) = doctor(&[]);
    let line = text
        .lines()
        .find(|l| l.contains("libcupti"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.starts_with(&format!(
            "ok    libcupti        {}/libcupti.so (found by the dynamic loader",
            lib_dir.display()
        )),
        "{text}"
    );
    assert!(
        line.contains("`ldconfig -p` lists no libcupti") && line.contains("refreshes it"),
        "{line}"
    );
    assert!(!text.contains("libcupti-dev"), "{text}");
    // A named libcupti that is not there: that path, and what to point at instead.
    let (code, text) = doctor(&[(
        "CGP_GATE_LIBCUPTI",
        std::ffi::OsStr::new("/nonexistent/libcupti.so"),
    )]);
    assert_eq!(code, 3, "{text}");
    assert!(
        text.contains("FAIL  libcupti") && text.contains("/nonexistent/libcupti.so"),
        "{text}"
    );
    assert!(!text.contains("install the CUDA toolkit's CUPTI"), "{text}");
}
