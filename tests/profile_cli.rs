//! `cgp-gate profile` against a stand-in ncu (tests/fixtures/fake-ncu/ncu) that replays recorded
//! output, exit codes, stderr and hangs: every failure class, its message and exit code 3, plus
//! the argv cgp-gate builds and record -> replay.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

const GOOD_LOG: &str = include_str!("../examples/recordings/main/vector_add/n=1048576/0.csv");

const SPEC: &str = r#"version: 1
targets:
  - name: vector_add
    command: [./app, --n, "{n}"]
    kernel: vector_add
    timeout: 2s
    repetitions: 2
    sizes: [{n: 1048576}]
    metrics:
      gpu__time_duration.sum: "3%"
      launch__registers_per_thread: exact
"#;

struct Scenario {
    dir: tempfile::TempDir,
}

impl Scenario {
    fn new() -> Self {
        let s = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::write(s.dir.path().join("cgp-gate.yaml"), SPEC).unwrap();
        std::fs::create_dir(s.fake()).unwrap();
        s
    }
    fn fake(&self) -> PathBuf {
        self.dir.path().join("fake")
    }
    fn file(&self, name: &str, text: &str) -> &Self {
        std::fs::write(self.fake().join(name), text).unwrap();
        self
    }
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = crate::support::bin();
        c.current_dir(self.dir.path())
            .env(
                "CGP_GATE_NCU",
                Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-ncu/ncu"),
            )
            .env("FAKE_NCU_DIR", self.fake())
            .env(crate::support::STAND_IN_GPU, crate::support::stand_in_gpu())
            .env("CGP_GATE_RETRY_DELAYS_MS", "0,0")
            // A failed run keeps the output its error cites in $TMPDIR (issue 34): here, not /tmp.
            .env("TMPDIR", self.dir.path())
            .args(args);
        c
    }
    fn argv_log(&self) -> Vec<Vec<String>> {
        std::fs::read_to_string(self.fake().join("argv.log"))
            .unwrap_or_default()
            .split("\n\n")
            .filter(|b| !b.trim().is_empty())
            .map(|b| b.lines().map(str::to_owned).collect())
            .collect()
    }
}

#[test]
fn profile_prints_a_table_and_passes_every_option_explicitly() {
    let s = Scenario::new();
    s.file("log", GOOD_LOG);
    s.cmd(&["profile"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("vector_add[n=1048576] vector_add\n"))
        .stdout(predicate::str::contains("gpu__time_duration.sum"))
        .stdout(predicate::str::contains("ncu 2025.1.1.0"));
    let calls = s.argv_log();
    assert_eq!(calls[0], vec!["--version"]);
    let run = &calls[1];
    let pair = |k: &str| run.iter().position(|a| a == k).map(|i| run[i + 1].clone());
    assert_eq!(pair("--page").as_deref(), Some("raw"));
    assert_eq!(pair("--print-units").as_deref(), Some("base"));
    assert_eq!(pair("--config-file").as_deref(), Some("off"));
    assert_eq!(pair("--target-processes").as_deref(), Some("all"));
    assert_eq!(pair("--clock-control").as_deref(), Some("base"));
    assert_eq!(pair("--cache-control").as_deref(), Some("all"));
    assert_eq!(pair("--replay-mode").as_deref(), Some("kernel"));
    assert_eq!(
        pair("--metrics").as_deref(),
        Some("gpu__time_duration.sum,launch__registers_per_thread")
    );
    assert_eq!(pair("--kernel-name-base").as_deref(), Some("function"));
    assert_eq!(pair("--kernel-name").as_deref(), Some("vector_add"));
    assert!(run.contains(&"--csv".to_owned()));
    // The application comes last, with its placeholders filled, as separate arguments.
    assert_eq!(&run[run.len() - 3..], ["./app", "--n", "1048576"]);
    assert_eq!(calls.len(), 3, "one --version and two repetitions");
}

#[test]
fn record_then_replay_gives_the_same_samples() {
    let s = Scenario::new();
    s.file("log", GOOD_LOG);
    s.cmd(&["profile", "--record", "rec", "--json"]).assert().code(0);
    let rec = s.dir.path().join("rec");
    assert!(rec.join("vector_add/n=1048576/0.csv").is_file());
    assert!(rec.join("vector_add/n=1048576/1.csv").is_file());
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(rec.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["ncu_version"], "2025.1.1.0");
    assert_eq!(manifest["runs"].as_array().unwrap().len(), 2);
    assert!(
        manifest["runs"][0]["argv"][0]
            .as_str()
            .unwrap()
            .ends_with("fake-ncu/ncu")
    );
    let live = s.cmd(&["profile", "--json"]).output().unwrap();
    // Replay needs no ncu at all.
    let replay = s
        .cmd(&["profile", "--replay", "rec", "--json"])
        .env("CGP_GATE_NCU", "/nonexistent/ncu")
        .output()
        .unwrap();
    assert_eq!(
        replay.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    assert_eq!(live.stdout, replay.stdout);
    let series: serde_json::Value = serde_json::from_slice(&replay.stdout).unwrap();
    let first = &series[0];
    assert_eq!(first["metric"], "gpu__time_duration.sum");
    assert_eq!(first["unit"], "ns");
    assert_eq!(
        first["values"].as_array().unwrap().len(),
        4,
        "3 launches x 2 repetitions, each dropping its warm-up launch (`warmup: 1`)"
    );
}

#[test]
fn replay_of_an_incomplete_recording_names_what_is_missing() {
    let s = Scenario::new();
    let rec = s.dir.path().join("rec/vector_add/n=1048576");
    std::fs::create_dir_all(&rec).unwrap();
    std::fs::write(rec.join("0.csv"), GOOD_LOG).unwrap();
    s.cmd(&["profile", "--replay", "rec"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "has no repetition 1 (it has repetition 0)",
        ));
    s.cmd(&["profile", "--replay", "nowhere"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("recording directory not found"));
}

#[test]
fn ncu_not_found() {
    let s = Scenario::new();
    s.cmd(&["profile"])
        .env("CGP_GATE_NCU", "/nonexistent/ncu")
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "CGP_GATE_NCU=/nonexistent/ncu is not an executable file",
        ))
        .stderr(predicate::str::contains("install NVIDIA Nsight Compute"));
}

const PERM: &str = "==PROF== Connected to process 5268 (/tmp/app)\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0. For instructions on enabling permissions and to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM\n==PROF== Disconnected from process 5268\n==WARNING== No kernels were profiled.\n";
const BUSY: &str = "==PROF== Connected to process 7 (/tmp/app)\n==ERROR== Profiling failed because a driver resource was unavailable. Ensure that no other tool (like DCGM) is concurrently collecting profiling data. See https://docs.nvidia.com/nsight-compute/ProfilingGuide/index.html#faq for more details.\n==ERROR== An error occurred while trying to profile.\n==PROF== Disconnected from process 7\n";

#[test]
fn permission_error_says_how_to_enable_counters() {
    let s = Scenario::new();
    s.file("log", PERM).file("exit", "1");
    s.cmd(&["profile"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("ERR_NVGPUCTRPERM"))
        .stderr(predicate::str::contains("NVreg_RestrictProfilingToAdminUsers=0"));
    assert_eq!(
        s.argv_log().len(),
        2,
        "a permission failure stops the run: no second repetition"
    );
}

#[test]
fn busy_counters_are_retried_then_succeed() {
    let s = Scenario::new();
    s.file("log.1", BUSY).file("exit.1", "1").file("log", GOOD_LOG);
    s.cmd(&["profile"])
        .assert()
        .code(0)
        .stderr(predicate::str::contains("retrying"));
    assert_eq!(
        s.argv_log().len(),
        4,
        "--version, one busy attempt, two good repetitions"
    );
}

#[test]
fn busy_counters_fail_after_the_retries() {
    let s = Scenario::new();
    s.file("log", BUSY).file("exit", "1");
    s.cmd(&["profile"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("DCGM"));
    // --version, then 1 try + 2 retries for rep 0; rep 1 of the failed size is skipped.
    assert_eq!(s.argv_log().len(), 4);
}

#[test]
fn invalid_metric_is_named() {
    let s = Scenario::new();
    s.file(
        "log",
        "==PROF== Connected to process 9 (/tmp/app)\n==ERROR== Failed to find metric regex:^gpu__time_durashun.sum$\n==PROF== Disconnected from process 9\n",
    )
    .file("exit", "1");
    s.cmd(&["profile"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("gpu__time_durashun.sum"));
}

#[test]
fn filter_that_matches_nothing_lists_the_kernels_that_ran() {
    let s = Scenario::new();
    s.file("log", "==PROF== Connected to process 9 (/tmp/app)\n==PROF== Disconnected from process 9\n==WARNING== No kernels were profiled.\n");
    s.file(
        "log.list",
        &GOOD_LOG.replace("vector_add(const float *", "vec_add_v2(const float *"),
    );
    s.cmd(&["profile"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "the kernel filter `vector_add` matched nothing",
        ))
        .stderr(predicate::str::contains(
            "`vec_add_v2(const float *, const float *, float *, int)`",
        ));
}

#[test]
fn application_failure_shows_its_output_and_argv() {
    let s = Scenario::new();
    s.file(
        "log",
        "==PROF== Connected to process 9 (/tmp/app)\n==PROF== Disconnected from process 9\n",
    )
    .file("stderr", "app.cu:42: cudaMalloc: out of memory\n")
    .file("exit", "2");
    s.cmd(&["profile"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("exited with status 2"))
        .stderr(predicate::str::contains("cudaMalloc: out of memory"))
        .stderr(predicate::str::contains("run it by hand"));
}

#[test]
fn driver_error_is_a_profiler_failure() {
    let s = Scenario::new();
    s.file("log", "==PROF== Connected to process 9 (/tmp/app)\n==ERROR== An error was reported by the driver\n==PROF== Disconnected from process 9\n")
        .file("exit", "1");
    s.cmd(&["profile"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("An error was reported by the driver"));
}

#[test]
fn a_hang_is_killed_at_the_timeout_with_its_children() {
    let s = Scenario::new();
    s.file("hang", "");
    s.cmd(&["profile"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("timed out after 2s"));
    let pid: i32 = std::fs::read_to_string(s.fake().join("hang.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    assert!(
        stat.is_empty() || stat.contains(") Z "),
        "the application's child {pid} survived: {stat}"
    );
}

#[test]
fn garbage_output_is_a_parse_error_naming_the_file() {
    let s = Scenario::new();
    let bad = GOOD_LOG.replace("\"16\"", "\"sixteen\"");
    s.file("log", &bad);
    s.cmd(&["profile"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("launch__registers_per_thread"))
        .stderr(predicate::str::contains("sixteen"));
}

#[test]
fn sigterm_ends_the_profiler_and_the_application_too() {
    let s = Scenario::new();
    std::fs::write(
        s.dir.path().join("cgp-gate.yaml"),
        SPEC.replace("timeout: 2s", "timeout: 600s"),
    )
    .unwrap();
    s.file("hang", "");
    let mut child = crate::support::bin_std()
        .current_dir(s.dir.path())
        .env(
            "CGP_GATE_NCU",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-ncu/ncu"),
        )
        .env("FAKE_NCU_DIR", s.fake())
        .env(crate::support::STAND_IN_GPU, crate::support::stand_in_gpu())
        .env("GITHUB_TOKEN", "secret-token-value")
        .arg("profile")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pidfile = s.fake().join("hang.pid");
    for _ in 0..500 {
        if std::fs::read_to_string(&pidfile).is_ok_and(|t| !t.trim().is_empty()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let app: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(3),
        "cgp-gate exits 3 on SIGTERM (issue 34; 143 before)"
    );
    let stat = std::fs::read_to_string(format!("/proc/{app}/stat")).unwrap_or_default();
    assert!(
        stat.is_empty() || stat.contains(") Z "),
        "the application {app} outlived cgp-gate: {stat}"
    );
    // The CI token never reaches the benchmark's environment.
    let env = std::fs::read_to_string(s.fake().join("env.txt")).unwrap();
    assert!(!env.contains("secret-token-value"));
}

const NCU_2022_3: &str = "NVIDIA (R) Nsight Compute Command Line Profiler\nCopyright (c) 2018-2022 NVIDIA Corporation\nVersion 2022.3.0.0 (build 31729285) (public-release)\n";

#[test]
fn ncu_2022_3_gets_no_config_file_option() {
    // The banner of the real Nsight Compute 2022.3 (Debian non-free), which rejects --config-file.
    let s = Scenario::new();
    s.file("version", NCU_2022_3).file("log", GOOD_LOG);
    s.cmd(&["profile"]).assert().code(0);
    let calls = s.argv_log();
    assert!(!calls[1].iter().any(|a| a == "--config-file"), "{:?}", calls[1]);
    assert!(calls[1].iter().any(|a| a == "--page"));
}

#[test]
fn ncu_rejecting_an_option_is_an_ncu_error_naming_option_and_version() {
    // What the real ncu 2022.3 prints for `--config-file off` (stderr, exit 255), with a newer
    // version banner so cgp-gate passes the option.
    let s = Scenario::new();
    s.file(
        "stderr",
        "unrecognised option '--config-file'\n\nUse --help for further details.\n",
    )
    .file("exit", "255");
    s.cmd(&["profile"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "ncu 2025.1.1.0 rejected option `--config-file`",
        ))
        .stderr(predicate::str::contains("unrecognised option '--config-file'"))
        .stderr(predicate::str::contains("application failed").not());
}

#[test]
fn a_gated_metric_in_a_unit_cgp_gate_cannot_convert_is_named() {
    let s = Scenario::new();
    // The recorded log with its duration column's unit replaced by one no rule covers.
    let log = GOOD_LOG.replacen("\"ns\"", "\"furlong\"", 1);
    assert_ne!(log, GOOD_LOG);
    s.file("log", &log);
    s.cmd(&["profile"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "has unit `furlong`, which cgp-gate cannot convert",
        ));
}

/// ncu's own `The application returned an error code` line: the application's error (here
/// Python's argparse), not ncu's, shown in every command that profiles, beside the command line
/// to rerun (issue 23 item 4: `init` once said only "rerun the ncu command by hand").
#[test]
fn an_application_failing_under_ncu_shows_its_own_output_in_every_command() {
    let s = Scenario::new();
    s.file(
        "log",
        "==PROF== Connected to process 9 (/usr/bin/python3.12)\n==PROF== Disconnected from process 9\n==ERROR== The application returned an error code (2).\n==WARNING== No kernels were profiled.\n",
    )
    .file(
        "stderr",
        "usage: torch_work.py [-h] --n N [--iters ITERS]\ntorch_work.py: error: the following arguments are required: --n\n",
    )
    .file("stdout", "loading torch\n")
    .file("exit", "2");
    for tree in ["base", "head"] {
        std::fs::create_dir(s.dir.path().join(tree)).unwrap();
        std::fs::write(s.dir.path().join(tree).join("cgp-gate.yaml"), SPEC).unwrap();
    }
    for args in [
        vec!["profile"],
        vec!["check", "--allow-no-baselines"],
        vec!["baseline", "update"],
        vec![
            "ab",
            "--spec",
            "head/cgp-gate.yaml",
            "--base-dir",
            "base",
            "--head-dir",
            "head",
        ],
        vec!["init", "--output", "out/init.yaml", "--", "./app", "--n", "1024"],
    ] {
        std::fs::create_dir_all(s.dir.path().join("out")).unwrap();
        let out = s.cmd(&args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {text}");
        assert!(
            text.contains("the application failed under ncu"),
            "{args:?}: {text}"
        );
        assert!(
            text.contains("torch_work.py: error: the following arguments are required: --n"),
            "{args:?}: {text}"
        );
        assert!(text.contains("loading torch"), "{args:?}: {text}");
        assert!(text.contains("run it by hand to see why:"), "{args:?}: {text}");
        assert!(
            text.contains("--kernel-name") || args[0] == "init",
            "{args:?}: {text}"
        );
    }
}

/// `profile --dry-run` prints each command line shell-quoted: a `regex:a|b` kernel filter and an
/// argument with a space each stay one word when the line is pasted into a shell (issue 24).
#[test]
fn dry_run_prints_pasteable_shell_quoted_argv() {
    let s = Scenario::new();
    std::fs::write(
        s.dir.path().join("cgp-gate.yaml"),
        r#"version: 1
targets:
  - name: gemm
    command: [./app, --label, "two words", --n, "{n}"]
    kernel: regex:gemm|nvjet
    sizes: [{n: 1024}]
    metrics:
      gpu__time_duration.sum: "3%"
"#,
    )
    .unwrap();
    let out = s.cmd(&["profile", "--dry-run"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("gemm[n=1024] x"))
        .unwrap_or_else(|| panic!("no command line for gemm in:\n{text}"));
    let (_, cmd) = line.split_once(": ").unwrap();
    assert!(cmd.contains("'regex:gemm|nvjet'"), "{cmd}");
    assert!(cmd.contains("'two words'"), "{cmd}");
    // What a POSIX shell would split the pasted line into.
    let words = shlex::split(cmd).expect("the line parses as shell words");
    assert_eq!(words.first().map(String::as_str), Some("ncu"), "{words:?}");
    assert!(words.iter().any(|w| w == "regex:gemm|nvjet"), "{words:?}");
    let app = words.iter().position(|w| w == "./app").expect("the application");
    assert_eq!(
        words[app..],
        ["./app", "--label", "two words", "--n", "1024"],
        "{words:?}"
    );
}
