//! The live paths, reached (issue 44, item 8) and guarded by a preflight (issue 46, "preflight
//! before baselines"). A live `check` with baselines on this machine (no GPU) stops at the
//! preflight before anything runs; with the SYNTHETIC stand-in GPU (`CGP_GATE_STAND_IN_GPU`,
//! tests/standins/gpu.json plus a call log) and the stand-in ncu (tests/fixtures/fake-ncu, which
//! replays the SYNTHETIC recording examples/recordings/main) it reaches the program, and each test
//! proves it did: the program's pid file, the stand-in ncu's argv log, the stand-in GPU's log of
//! clock calls. Signals and timeouts then act on a real process tree.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::support::{STAND_IN_GPU, gone, pid_in, root};

const LOG: &str = include_str!("../examples/recordings/main/vector_add/n=1048576/0.csv");

/// A project: a spec (`timeout`, `clocks`), the stand-in ncu's scenario in `fake/`, a stand-in
/// GPU description whose calls go to `gpu-calls.log`.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new(timeout: &str, clocks: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(
            p.join("cgp-gate.yaml"),
            format!(
                "version: 1\ntargets:\n  - name: vector_add\n    command: [./app, --n, \"{{n}}\"]\n    kernel: vector_add\n    timeout: {timeout}\n    clocks: {clocks}\n    repetitions: 2\n    sizes: [{{n: 1048576}}]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n"
            ),
        )
        .unwrap();
        std::fs::create_dir(p.join("fake")).unwrap();
        std::fs::create_dir(p.join("tmp")).unwrap();
        std::fs::write(p.join("fake/log"), LOG).unwrap();
        let mut gpu: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(crate::support::stand_in_gpu()).unwrap()).unwrap();
        gpu["call_log"] = "gpu-calls.log".into();
        std::fs::write(p.join("gpu.json"), gpu.to_string()).unwrap();
        Self { dir }
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    /// cgp-gate in the project, with the stand-in ncu, and the stand-in GPU when `gpu`.
    fn cmd(&self, args: &[&str], gpu: bool) -> Command {
        let mut c = crate::support::bin_std();
        c.current_dir(self.dir.path())
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("GITHUB_OUTPUT")
            .env("CGP_GATE_NCU", root().join("tests/fixtures/fake-ncu/ncu"))
            .env("FAKE_NCU_DIR", self.path("fake"))
            .env("TMPDIR", self.path("tmp"))
            .env("CGP_GATE_RETRY_DELAYS_MS", "0,0")
            .args(args);
        if gpu {
            c.env(STAND_IN_GPU, self.path("gpu.json"));
        } else {
            // NVML cannot be loaded: the same on every machine, GPU or not.
            c.env_remove(STAND_IN_GPU)
                .env("CGP_GATE_NVML_LIB", "/nonexistent/libnvidia-ml.so.1");
        }
        c
    }
    fn run(&self, args: &[&str], gpu: bool) -> (i32, String) {
        let out = self.cmd(args, gpu).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
        )
    }
    /// The profiling calls the stand-in ncu received (its `--version` calls left out).
    fn profiled(&self) -> usize {
        std::fs::read_to_string(self.path("fake/argv.log"))
            .unwrap_or_default()
            .split("\n\n")
            .filter(|b| !b.trim().is_empty() && !b.contains("--version"))
            .count()
    }
    fn gpu_calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.path("gpu-calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
    /// Baselines of this project, measured live on the stand-in GPU (the fingerprint's GPU is
    /// the stand-in's, so the check below compares with them).
    fn with_baselines(self) -> Self {
        let (code, out) = self.run(&["baseline", "update", "--baselines", "baselines"], true);
        assert_eq!(code, 0, "{out}");
        assert!(
            std::fs::read_dir(self.path("baselines"))
                .unwrap()
                .next()
                .is_some(),
            "no baseline written: {out}"
        );
        std::fs::remove_file(self.path("fake/argv.log")).unwrap();
        std::fs::remove_file(self.path("gpu-calls.log")).ok();
        self
    }
}

/// Without a GPU a live `check` stops at the preflight, before anything runs, in every case the
/// issue names: with baselines, without (not "no baselines", exit 2), and with
/// `--allow-no-baselines` (the program is never started). The stand-in GPU is what gets past it:
/// the same commands then run the program.
#[test]
fn without_a_gpu_every_live_check_stops_at_the_preflight_before_anything_runs() {
    let p = Project::new("60s", "ncu").with_baselines();
    for args in [
        &["check", "--baselines", "baselines"][..],
        &["check", "--baselines", "no-baselines-yet"][..],
        &["check", "--baselines", "no-baselines-yet", "--allow-no-baselines"][..],
    ] {
        let (code, out) = p.run(args, false);
        assert_eq!(code, 3, "{args:?}: {out}");
        assert!(
            out.contains("error: no usable GPU: no NVIDIA driver found"),
            "{args:?}: {out}"
        );
        assert!(out.contains("cgp-gate doctor --spec"), "{args:?}: {out}");
        assert!(!out.contains("no baselines"), "{args:?}: {out}");
        assert_eq!(p.profiled(), 0, "{args:?}: ncu ran: {out}");
    }
    // With the stand-in GPU the same check runs the program (2 repetitions) and passes against
    // the baselines it measured.
    let (code, out) = p.run(&["check", "--baselines", "baselines"], true);
    assert_eq!(code, 0, "{out}");
    assert_eq!(p.profiled(), 2, "{out}");
    assert!(out.contains("SYNTHETIC stand-in GPU"), "{out}");
}

/// A cupti target needs a GPU and libcupti: without the GPU the run stops at the GPU, with the
/// stand-in GPU and no libcupti it stops at libcupti (found before the GPU is opened, when the
/// tool's version is read); the program never starts. (A harness target needs neither: the live
/// harness tests run on this machine without a stand-in.)
#[test]
fn the_preflight_checks_what_each_backend_needs() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("s.yaml"),
        "version: 1\ntargets:\n  - name: va\n    command: [sh, -c, \"touch ran\"]\n    profiler: cupti\n    kernel: vector_add\n    repetitions: 1\n    metrics:\n      gpu__time_duration.sum: \"5%\"\n",
    )
    .unwrap();
    let run = |gpu: bool, libcupti: Option<&str>| {
        let mut c = crate::support::bin();
        c.current_dir(d.path())
            .env("CGP_GATE_NVML_LIB", "/nonexistent/libnvidia-ml.so.1")
            .args(["check", "--spec", "s.yaml", "--allow-no-baselines"]);
        if gpu {
            c.env(STAND_IN_GPU, crate::support::stand_in_gpu());
        }
        if let Some(l) = libcupti {
            c.env("CGP_GATE_LIBCUPTI", l);
        }
        let out = c.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = run(false, None);
    if err.contains("no libcupti found") {
        crate::support::skip(
            "live_paths::the_preflight_checks_what_each_backend_needs",
            "libcupti not installed (.ci/setup installs libcupti 11.8)",
        );
        return;
    }
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("error: no usable GPU: no NVIDIA driver found"),
        "{err}"
    );
    let (code, err) = run(true, Some("/nonexistent/libcupti.so"));
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("libcupti") && err.contains("CGP_GATE_LIBCUPTI"),
        "{err}"
    );
    assert!(!err.contains("no usable GPU"), "the stand-in GPU passed: {err}");
    assert!(!d.path().join("ran").exists(), "the program ran");
}

/// Every terminating signal during a live `check` with baselines, on the stand-in GPU with
/// `clocks: base`: the program and ncu end, the run exits 3, and the clocks locked at the start
/// are reset (the stand-in GPU's call log), as on the GPU runner.
#[test]
fn a_signal_during_a_live_check_with_baselines_ends_the_run_and_resets_the_clocks() {
    use nix::sys::signal::Signal;
    let p = Project::new("600s", "nvml-base").with_baselines();
    for sig in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        std::fs::write(p.path("fake/hang"), "").unwrap();
        std::fs::remove_file(p.path("fake/hang.pid")).ok();
        std::fs::remove_file(p.path("gpu-calls.log")).ok();
        let mut child = p
            .cmd(&["check", "--baselines", "baselines"], true)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let app = pid_in(&p.path("fake/hang.pid"));
        let ncu = pid_in(&p.path("fake/ncu.pid"));
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
            sig,
        )
        .unwrap();
        let status = child.wait().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!(status.code(), Some(3), "{sig}: {err}");
        assert!(err.contains(&format!("{sig} received")), "{sig}: {err}");
        assert!(gone(app), "{sig}: the program (pid {app}) outlived the run");
        assert!(gone(ncu), "{sig}: ncu (pid {ncu}) outlived the run");
        let calls = p.gpu_calls();
        assert!(
            calls
                .first()
                .is_some_and(|c| c.starts_with("set_locked_sm_clocks(0, ")),
            "{sig}: the clocks were not locked: {calls:?}"
        );
        assert!(
            calls.iter().any(|c| c == "reset_locked_sm_clocks(0)"),
            "{sig}: the clocks were not reset: {calls:?}"
        );
        let left: Vec<_> = std::fs::read_dir(p.path("tmp")).unwrap().collect();
        assert!(left.is_empty(), "{sig}: temporary files left: {left:?}");
    }
}

/// A program that hangs past its `timeout:` in a live `check` with baselines is killed with its
/// children; the row is an error (exit 3), and the clocks are reset.
#[test]
fn a_timeout_during_a_live_check_with_baselines_kills_the_program_and_fails_the_run() {
    let p = Project::new("1s", "nvml-base").with_baselines();
    std::fs::write(p.path("fake/hang"), "").unwrap();
    let (code, out) = p.run(&["check", "--baselines", "baselines", "--json", "r.json"], true);
    assert_eq!(code, 3, "{out}");
    let app = pid_in(&p.path("fake/hang.pid"));
    assert!(gone(app), "the program (pid {app}) outlived its timeout");
    assert!(out.contains("timed out") || out.contains("timeout"), "{out}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.path("r.json")).unwrap()).unwrap();
    assert_eq!(r["verdict"], "error", "{r}");
    assert_eq!(r["errors"][0]["kind"], "timeout", "{r}");
    let calls = p.gpu_calls();
    assert!(
        calls.iter().any(|c| c == "reset_locked_sm_clocks(0)"),
        "{calls:?}"
    );
}
