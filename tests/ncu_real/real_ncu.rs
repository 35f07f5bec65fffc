//! Through the real ncu (Nsight Compute 2022.3, `.ci/setup` installs it): the `ncu --import`
//! files of `tests/fixtures/ncu-import/` ([`IMPORTS`] lists every command) parsed, hand-checked
//! and regenerated, the version table against ncu's help, and the exact argv cgp-gate builds for
//! every spec feature run to "No kernels were profiled". Without ncu these tests print
//! `SKIPPED: ...` and return; with `CI=true` they fail instead.

use super::*;

/// The installed ncu, or `None` after printing `SKIPPED: ...` (a failure under `CI=true`).
fn real_ncu(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("ncu"))
            .find(|c| c.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test}: ncu is not installed, and CI=true: run .ci/setup (Debian non-free nsight-compute)"
        );
        println!("SKIPPED: {test}: ncu is not on PATH (install Debian's nsight-compute, see .ci/setup)");
    }
    found
}

fn ncu_version(ncu: &Path) -> String {
    let out = Command::new(ncu)
        .arg("--version")
        .output()
        .expect("ncu --version");
    cgp_profile::ncu::version::parse_version(&String::from_utf8_lossy(&out.stdout)).expect("a version line")
}

/// Every command that made the files in tests/fixtures/ncu-import: (file, arguments after
/// `ncu --import REPORT`). Each runs for both reports.
const IMPORTS: &[(&str, &[&str])] = &[
    ("raw-base", &["--csv", "--page", "raw", "--print-units", "base"]),
    ("raw-auto", &["--csv", "--page", "raw", "--print-units", "auto"]),
    (
        "details-base",
        &["--csv", "--page", "details", "--print-units", "base"],
    ),
    (
        "details-auto",
        &["--csv", "--page", "details", "--print-units", "auto"],
    ),
    ("summary-per-kernel", &["--csv", "--print-summary", "per-kernel"]),
    ("summary-per-gpu", &["--csv", "--print-summary", "per-gpu"]),
    ("summary-per-nvtx", &["--csv", "--print-summary", "per-nvtx"]),
    (
        "raw-kernel-base-function",
        &[
            "--csv",
            "--page",
            "raw",
            "--print-units",
            "base",
            "--print-kernel-base",
            "function",
        ],
    ),
    (
        "raw-kernel-base-mangled",
        &[
            "--csv",
            "--page",
            "raw",
            "--print-units",
            "base",
            "--print-kernel-base",
            "mangled",
        ],
    ),
    (
        "raw-instances",
        &[
            "--csv",
            "--page",
            "raw",
            "--print-units",
            "base",
            "--print-metric-instances",
            "values",
        ],
    ),
    ("raw-fp", &["--csv", "--page", "raw", "--print-fp"]),
    ("source", &["--csv", "--page", "source"]),
];

const REPORTS: &[&str] = &["index", "readOnlyCache"];

fn import_file(report: &str, name: &str) -> String {
    format!("ncu-import/{report}.{name}.csv")
}

#[test]
fn every_import_file_parses_and_agrees_across_options() {
    for report in REPORTS {
        let base = parse_file(&import_file(report, "raw-base"));
        assert_eq!(base.shape, CsvShape::Raw);
        for (name, _) in IMPORTS {
            let rel = import_file(report, name);
            if *name == "source" {
                // Not a table of launches: refused with a message naming the page.
                let bytes = std::fs::read(fixture(&rel)).unwrap();
                assert!(parse_bytes(&bytes).unwrap_err().message.contains("source page"));
                continue;
            }
            let p = parse_file(&rel);
            if name.starts_with("raw") {
                // The same launches and metrics whatever the units and name options: values agree
                // to the 6 decimals `--print-units auto` prints.
                assert_eq!(p.launches.len(), base.launches.len(), "{rel}");
                for (a, b) in p.launches.iter().zip(&base.launches) {
                    assert_eq!(a.id, b.id);
                    for (k, m) in &b.metrics {
                        let (MetricValue::Number(want), Some(MetricValue::Number(got))) =
                            (&m.value, a.metrics.get(k).map(|x| &x.value))
                        else {
                            continue;
                        };
                        // `base` prints 2 decimals, `auto` 6 significant places.
                        assert!(
                            (got - want).abs() <= 0.0051 + 5e-6 * want.abs(),
                            "{rel}: {k}: {got} vs {want}"
                        );
                        assert_eq!(a.metrics[k].unit, m.unit, "{rel}: {k}");
                    }
                }
            }
        }
    }
}

#[test]
fn import_files_hand_checked_values() {
    // index.raw-base.csv row 3: gpu__time_duration.sum "nsecond" "74880"; dram__bytes_read.sum
    // "byte" "32000"; launch__registers_per_thread "32"; row 4 (rowMajor): duration "1984".
    let p = parse_file("ncu-import/index.raw-base.csv");
    assert_eq!(p.launches[0].kernel, "index(int *, int, int)");
    close(num(&p.launches[0], "gpu__time_duration.sum"), 74_880.0);
    close(num(&p.launches[0], "dram__bytes_read.sum"), 32_000.0);
    close(num(&p.launches[0], "launch__registers_per_thread"), 32.0);
    close(num(&p.launches[1], "gpu__time_duration.sum"), 1984.0);
    assert_eq!(p.launches[0].attributes["Kernel Time"], "2023-Sep-13 08:29:58");
    // index.raw-auto.csv: "usecond" "74.880000", "Kbyte" "32.000000", "Gbyte/second" "0.427350".
    let p = parse_file("ncu-import/index.raw-auto.csv");
    close(num(&p.launches[0], "gpu__time_duration.sum"), 74_880.0);
    close(num(&p.launches[0], "dram__bytes_read.sum"), 32_000.0);
    close(
        num(&p.launches[0], "dram__bytes_read.sum.per_second"),
        0.427_350e9,
    );
    // readOnlyCache.raw-instances.csv: derived__avg_thread_executed "32 (32; 32; ...)": the
    // aggregate 32; numa__id_memory "(no data)" absent.
    let p = parse_file("ncu-import/readOnlyCache.raw-instances.csv");
    close(num(&p.launches[0], "derived__avg_thread_executed"), 32.0);
    close(num(&p.launches[2], "gpu__time_duration.sum"), 1952.0);
    assert_eq!(p.launches[2].kernel, "withReadCacheFunc(float *, float *)");
    // readOnlyCache.raw-kernel-base-mangled.csv: the mangled name.
    let p = parse_file("ncu-import/readOnlyCache.raw-kernel-base-mangled.csv");
    assert!(p.launches[0].kernel.starts_with("_Z"), "{}", p.launches[0].kernel);
    let p = parse_file("ncu-import/readOnlyCache.raw-kernel-base-function.csv");
    assert_eq!(p.launches[0].kernel, "withoutReadCache");
    // index.details-base.csv line 3: "Load Metrics","GLoad Throughput","byte/second","472649572.65".
    let p = parse_file("ncu-import/index.details-base.csv");
    assert_eq!(p.shape, CsvShape::Details);
    close(num(&p.launches[0], "GLoad Throughput"), 472_649_572.65);
    close(num(&p.launches[0], "Requested requests For GLoad"), 1106.0);
    // index.details-auto.csv: the same value printed in a scaled unit.
    let p = parse_file("ncu-import/index.details-auto.csv");
    assert!((num(&p.launches[0], "GLoad Throughput") - 472_649_572.65).abs() < 1e3);
    // index.summary-per-kernel.csv line 3: l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second
    // "Mbyte/second" min/max/avg "472.649573"; `Device Id` "0", `Invocations` "1".
    let p = parse_file("ncu-import/index.summary-per-kernel.csv");
    assert_eq!(p.shape, CsvShape::Summary);
    let l = &p.launches[0];
    close(
        num(l, "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second"),
        472.649_573e6,
    );
    close(
        num(
            l,
            "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second [maximum]",
        ),
        472.649_573e6,
    );
    assert_eq!(l.attributes["Invocations"], "1");
    assert_eq!(l.attributes["Device Id"], "0");
    // per-nvtx: the reports have no NVTX ranges, so the table has a header and no rows.
    assert!(
        parse_file("ncu-import/index.summary-per-nvtx.csv")
            .launches
            .is_empty()
    );
}

#[test]
fn import_files_match_what_the_real_ncu_prints_now() {
    let Some(ncu) = real_ncu("import_files_match_what_the_real_ncu_prints_now") else {
        return;
    };
    let version = ncu_version(&ncu);
    if !version.starts_with("2022.3") {
        println!("SKIPPED: the fixtures were made with ncu 2022.3, this is {version}");
        return;
    }
    let update = std::env::var_os("CGP_GATE_UPDATE_IMPORTS").is_some();
    for report in REPORTS {
        let rep = fixture(&format!("ncu-import/Lashi0812_{report}.ncu-rep"));
        for (name, args) in IMPORTS {
            let out = Command::new(&ncu)
                .arg("--import")
                .arg(&rep)
                .args(*args)
                .env("LC_ALL", "C")
                .output()
                .expect("run ncu --import");
            assert!(
                out.status.success(),
                "{report} {name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let path = fixture(&import_file(report, name));
            if update {
                std::fs::write(&path, &out.stdout).unwrap();
            }
            let committed = std::fs::read(&path).unwrap();
            assert!(
                committed == out.stdout,
                "{} differs from `ncu --import` now",
                path.display()
            );
        }
    }
}

#[test]
fn the_version_table_matches_the_real_ncu_help() {
    let Some(ncu) = real_ncu("the_version_table_matches_the_real_ncu_help") else {
        return;
    };
    let version = ncu_version(&ncu);
    let release = NcuRelease::from_version(&version);
    let help = Command::new(&ncu).arg("--help").output().expect("ncu --help");
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    assert!(help.contains("--page"), "{help}");
    for (option, first) in VERSIONED_OPTIONS {
        let has = match option.split_once(' ') {
            // An option value: the help lists the values below the option.
            Some((opt, value)) => {
                let at = help
                    .find(&format!("{opt} "))
                    .unwrap_or_else(|| panic!("{opt} in help"));
                let next = help[at + opt.len()..]
                    .find("\n  --")
                    .map_or(help.len(), |e| at + opt.len() + e);
                help[at..next].lines().any(|l| l.trim().starts_with(value))
            }
            None => help.contains(&format!("{option} ")) || help.contains(&format!("{option}\n")),
        };
        assert_eq!(
            supports(release, option),
            has,
            "ncu {version}: the table says {option} from {first}, the help says {has}"
        );
    }
    // Every option cgp-gate itself passes is in this ncu's help.
    let target = spec_targets()[0].clone();
    let argv = ncu_options_for(
        release,
        &target,
        &["gpu__time_duration.sum".into()],
        Path::new("x.csv"),
    );
    for a in argv.iter().map(|a| a.to_string_lossy().into_owned()) {
        if a.starts_with("--") {
            assert!(help.contains(&format!("{a} ")), "ncu {version} help has no {a}");
        }
    }
}

/// A spec with one target per feature the spec offers to ncu's command line.
fn spec_targets() -> Vec<cgp_spec::spec::Target> {
    let yaml = r#"version: 1
defaults:
  repetitions: 3
  timeout: 60s
targets:
  - name: plain
    command: [/bin/true]
    metrics: { gpu__time_duration.sum: "3%" }
  - name: kernel_name
    command: [/bin/true]
    kernel: vector_add
    metrics: { gpu__time_duration.sum: "3%" }
  - name: kernel_regex
    command: [/bin/true]
    kernel: regex:matmul_tiled<
    metrics: { gpu__time_duration.sum: "3%", dram__bytes_read.sum: "1%" }
  - name: kernel_regex_library
    command: [/bin/true]
    kernel: regex:nvjet|gemm|xmma|cutlass
    metrics: { gpu__time_duration.sum: "3%" }
  - name: kernel_whole_demangled_name
    command: [/bin/true]
    kernel: "void Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_128x256_64x3_nn_align2>(Params)"
    metrics: { gpu__time_duration.sum: "3%" }
  - name: nvtx
    command: [/bin/true]
    nvtx: ["gemm_range/", "regex:bench@.+/"]
    metrics: { gpu__time_duration.sum: "3%" }
  - name: launch_skip_count
    command: [/bin/true]
    kernel: reduce_sum
    launch_skip: 2
    launch_count: 5
    metrics: { gpu__time_duration.sum: "3%" }
  - name: replay_application
    command: [/bin/true]
    replay_mode: application
    cache_control: none
    metrics: { gpu__time_duration.sum: "3%" }
  - name: replay_range
    command: [/bin/true]
    replay_mode: range
    nvtx: ["region/"]
    metrics: { gpu__time_duration.sum: "3%" }
  - name: replay_app_range
    command: [/bin/true]
    replay_mode: app-range
    nvtx: ["region/"]
    metrics: { gpu__time_duration.sum: "3%" }
  - name: clocks_none
    command: [/bin/true]
    clocks: none
    clock_control: none
    metrics: { gpu__time_duration.sum: "3%" }
  - name: clocks_base
    command: [/bin/true]
    clock_control: base
    cache_control: all
    metrics: { gpu__time_duration.sum: "3%", launch__registers_per_thread: exact }
"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cgp-gate.yaml");
    std::fs::write(&path, yaml).unwrap();
    cgp_spec::spec::load(&path)
        .unwrap_or_else(|e| panic!("{e}"))
        .targets
}

#[test]
fn every_spec_feature_runs_through_the_real_ncu_to_no_kernels_profiled() {
    let Some(ncu) = real_ncu("every_spec_feature_runs_through_the_real_ncu_to_no_kernels_profiled") else {
        return;
    };
    let release = NcuRelease::from_version(&ncu_version(&ncu));
    let dir = tempfile::tempdir().unwrap();
    let targets = spec_targets();
    assert_eq!(targets.len(), 12);
    for t in &targets {
        // The kernel-matching rule (docs/spec.md, "Selecting kernels"): regex filters and whole
        // demangled names are matched against the demangled name; the real ncu accepts both.
        let argv: Vec<String> = ncu_options_for(release, t, &[], std::path::Path::new("x.csv"))
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let base = argv
            .iter()
            .position(|a| a == "--kernel-name-base")
            .map(|i| argv[i + 1].as_str());
        let want = match t.name.as_str() {
            "kernel_name" | "launch_skip_count" => Some("function"),
            "kernel_regex" | "kernel_regex_library" | "kernel_whole_demangled_name" => Some("demangled"),
            _ => None,
        };
        assert_eq!(base, want, "{}: {argv:?}", t.name);
        let log = dir.path().join(format!("{}.csv", t.name));
        let missing = cgp_profile::ncu::command::unsupported_options(release, t);
        if !missing.is_empty() {
            // cgp-gate refuses to run it (naming the option); the real ncu would reject it too.
            assert_eq!(t.name, "replay_app_range");
            assert_eq!(missing, ["--replay-mode app-range"]);
            let out = Command::new(&ncu)
                .args(["--replay-mode", "app-range", "/bin/true"])
                .output()
                .expect("run ncu");
            assert_eq!(out.status.code(), Some(255));
            let (option, _) =
                cgp_read::ncu_output::log::usage_error(&String::from_utf8_lossy(&out.stderr)).unwrap();
            assert_eq!(option, "--replay-mode");
            continue;
        }
        let metrics = cgp_spec::plan::ncu_metrics(t);
        let mut argv = ncu_options_for(release, t, &metrics, &log);
        argv.push("/bin/true".into());
        let out = Command::new(&ncu)
            .args(&argv)
            .env("LC_ALL", "C")
            .current_dir(dir.path())
            .output()
            .expect("run ncu");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{}: {argv:?}\n{stderr}", t.name);
        let written = std::fs::read_to_string(&log).unwrap_or_default();
        // Range replay profiles ranges, not kernels, and says so.
        let want = if t.name.contains("range") {
            "==WARNING== No ranges were profiled."
        } else {
            "==WARNING== No kernels were profiled."
        };
        assert!(
            written.contains(want),
            "{}: {argv:?}\nlog: {written}\nstderr: {stderr}",
            t.name
        );
        // And cgp-gate reads that log as exactly this failure.
        let e = parse(&written).unwrap_err();
        assert_eq!(
            e.failure,
            Some(cgp_profile::profile::FailureKind::NoKernels),
            "{}",
            t.name
        );
    }
}

#[test]
fn the_real_ncu_rejecting_an_option_is_an_ncu_error_naming_it() {
    let Some(ncu) = real_ncu("the_real_ncu_rejecting_an_option_is_an_ncu_error_naming_it") else {
        return;
    };
    let version = ncu_version(&ncu);
    if supports(NcuRelease::from_version(&version), "--config-file") {
        println!("SKIPPED: ncu {version} accepts --config-file; nothing to reject");
        return;
    }
    // What cgp-gate passed before it read the version: `--config-file off`.
    let out = Command::new(&ncu)
        .args(["--config-file", "off", "--csv", "/bin/true"])
        .env("LC_ALL", "C")
        .output()
        .expect("run ncu");
    assert_eq!(out.status.code(), Some(255));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (option, line) = cgp_read::ncu_output::log::usage_error(&stderr).expect("a usage error");
    assert_eq!(option, "--config-file");
    assert_eq!(line, "unrecognised option '--config-file'");
}

#[test]
fn validate_checks_metric_names_against_the_real_ncu_for_a_known_chip() {
    let Some(_) = real_ncu("validate_checks_metric_names_against_the_real_ncu_for_a_known_chip") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("cgp-gate.yaml");
    let write = |metric: &str| {
        std::fs::write(
            &spec,
            format!(
                "version: 1\ntargets:\n  - name: t\n    command: [./app]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n      launch__registers_per_thread: exact\n      {metric}: \"1%\"\n"
            ),
        )
        .unwrap();
    };
    write("dram__bytes_read.sum");
    let ok = crate::support::bin()
        .args(["validate", "--spec"])
        .arg(&spec)
        .env("CGP_GATE_CHIP", "ga100")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&ok.stderr);
    assert_eq!(ok.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("checked against `ncu --query-metrics --chips ga100`"),
        "{stderr}"
    );
    // A misspelled rollup and a misspelled base name: exit 2, both named, with suggestions.
    write("dram__bytes_reed.sum");
    let bad = crate::support::bin()
        .args(["validate", "--spec"])
        .arg(&spec)
        .env("CGP_GATE_CHIP", "ga100")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("`dram__bytes_reed.sum`"), "{stderr}");
    assert!(stderr.contains("dram__bytes_read"), "a suggestion: {stderr}");
    write("dram__bytes_read.summ");
    let bad = crate::support::bin()
        .args(["validate", "--spec"])
        .arg(&spec)
        .env("CGP_GATE_CHIP", "ga100")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("did you mean `dram__bytes_read.sum"), "{stderr}");
    // No chip known: not checked, still valid, and it says so.
    let none = crate::support::bin()
        .args(["validate", "--spec"])
        .arg(&spec)
        .env_remove("CGP_GATE_CHIP")
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&none.stderr).contains("metric names not checked: no chip known"));
}

#[test]
fn validate_without_ncu_does_not_break() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("cgp-gate.yaml");
    std::fs::write(
        &spec,
        "version: 1\ntargets:\n  - name: t\n    command: [./app]\n    metrics:\n      gpu__time_duration.summ: \"3%\"\n",
    )
    .unwrap();
    let out = crate::support::bin()
        .args(["validate", "--spec"])
        .arg(&spec)
        .env("PATH", dir.path())
        .env("CGP_GATE_CHIP", "ga100")
        .env_remove("CGP_GATE_NCU")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not checked: ncu is not installed"));
}

/// `profile --dry-run` builds the command lines for the installed ncu, says which release it
/// assumed, and without an ncu assumes the newest (with `--config-file off`).
#[test]
fn profile_dry_run_builds_the_argv_for_the_installed_ncu() {
    let dry_run = |ncu: &std::ffi::OsStr| {
        let out = crate::support::bin()
            .args(["profile", "--spec", "examples/cgp-gate.yaml", "--dry-run"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("CGP_GATE_NCU", ncu)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let none = dry_run("/nonexistent/ncu".as_ref());
    assert!(
        none.lines()
            .next()
            .unwrap()
            .contains("command lines for the newest Nsight Compute"),
        "{none}"
    );
    assert!(none.contains(" --config-file off "), "{none}");
    let Some(ncu) = real_ncu("profile_dry_run_builds_the_argv_for_the_installed_ncu") else {
        return;
    };
    let version = ncu_version(&ncu);
    let release = NcuRelease::from_version(&version).expect("a release");
    let real = dry_run(ncu.as_os_str());
    assert!(
        real.lines().next().unwrap().contains(&format!(
            "(version {version}); command lines for Nsight Compute {release}"
        )),
        "{real}"
    );
    assert_eq!(
        real.contains(" --config-file off "),
        supports(Some(release), "--config-file"),
        "{real}"
    );
    // Each printed command line is exactly what a run on this ncu passes.
    let spec =
        cgp_spec::spec::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cgp-gate.yaml")).unwrap();
    let t = &spec.targets[0];
    let argv = ncu_options_for(
        Some(release),
        t,
        &cgp_spec::plan::ncu_metrics(t),
        Path::new("<log>"),
    );
    let line: Vec<String> = std::iter::once("ncu".to_owned())
        .chain(argv.iter().map(|a| a.to_string_lossy().into_owned()))
        .collect();
    let quoted = shlex::try_join(line.iter().map(String::as_str)).unwrap();
    assert!(real.contains(&format!(": {quoted} ")), "{real}\n{line:?}");
    // A target that needs what this ncu lacks is named as refused.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("cgp-gate.yaml");
    std::fs::write(
        &spec,
        "version: 1\ntargets:\n  - name: app_range\n    command: [/bin/true]\n    replay_mode: app-range\n    nvtx: [\"region/\"]\n    metrics: { gpu__time_duration.sum: \"3%\" }\n",
    )
    .unwrap();
    let out = crate::support::bin()
        .args(["profile", "--dry-run", "--spec"])
        .arg(&spec)
        .env("CGP_GATE_NCU", &ncu)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        text.contains("app_range: this ncu has no --replay-mode app-range"),
        !supports(Some(release), "--replay-mode app-range"),
        "{text}"
    );
}
