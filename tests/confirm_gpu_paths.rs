//! `check --base` for `profiler: ncu` and `profiler: cupti` targets, through the same code path
//! up to the GPU (this machine has none): a scratch repository of the real example program
//! (examples/cuda/vector_add.cu), whose `settings.build` is the real nvcc; the stand-in GPU
//! (`CGP_GATE_STAND_IN_GPU`); for the ncu target the stand-in ncu (tests/standins/ncu), which has
//! the REAL ncu start each tree's real program (it fails without a GPU) and then writes a
//! SYNTHETIC repetition of examples/recordings/main, 10 % slower in the head tree (its folder is
//! named `extra10`); for the cupti target the real backend (injection library, nonce, trace
//! reader) around a SYNTHETIC stand-in program (tests/standins/cupti_app.py) that writes the trace
//! the library would, with times from the commit's build. The SASS of both builds is read with the
//! real cuobjdump.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::confirm_cli::git;
use crate::support::{self, root};

fn tool(test: &str, name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        support::skip(
            test,
            &format!("`{name}` is not installed (.ci/setup installs it)"),
        );
    }
    found
}

/// The repository `<dir>/extra10`: a base commit and a head commit of the same kernel source
/// (the head's build 10 % slower for the stand-ins), the head built in place.
fn scratch(dir: &Path) -> (PathBuf, String) {
    let repo = dir.join("extra10");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    for f in ["vector_add.cu", "common.cuh"] {
        std::fs::copy(root().join("examples/cuda").join(f), repo.join(f)).unwrap();
    }
    std::fs::copy(
        root().join("tests/standins/cupti_app.py"),
        repo.join("cupti_app.py"),
    )
    .unwrap();
    std::fs::write(
        repo.join("cgp-gate.yaml"),
        "version: 1\nsettings:\n  build: mkdir -p build && nvcc -O2 -arch=sm_70 -o build/vector_add vector_add.cu && cp slow.txt built.txt\ntargets:\n  - name: va_ncu\n    command: [./build/vector_add, --n, \"{n}\", --launches, \"3\"]\n    kernel: vector_add\n    clock_control: none\n    clocks: none\n    repetitions: 3\n    max_repetitions: 6\n    timeout: 120s\n    sizes: [{n: 1048576}]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n  - name: va_cupti\n    profiler: cupti\n    command: [python3, cupti_app.py]\n    kernel: regex:vector_add\n    clocks: none\n    repetitions: 3\n    max_repetitions: 6\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n",
    )
    .unwrap();
    std::fs::write(repo.join(".gitignore"), "build/\nbuilt.txt\n").unwrap();
    std::fs::write(repo.join("slow.txt"), "1.0\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let out = Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["rev-parse", "HEAD"])
        .output()
        .unwrap();
    let base = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    std::fs::write(repo.join("slow.txt"), "1.10\n").unwrap();
    git(&repo, &["commit", "-q", "-am", "head: 10% slower"]);
    let built = Command::new("sh")
        .arg("-c")
        .arg("mkdir -p build && nvcc -O2 -arch=sm_70 -o build/vector_add vector_add.cu && cp slow.txt built.txt")
        .current_dir(&repo)
        .status()
        .unwrap();
    assert!(built.success(), "nvcc failed");
    (repo, base)
}

#[test]
fn ncu_and_cupti_targets_are_confirmed_against_the_base_through_the_same_path() {
    let test =
        "confirm_gpu_paths::ncu_and_cupti_targets_are_confirmed_against_the_base_through_the_same_path";
    if Path::new("/dev/nvidia0").exists() {
        support::skip(test, "a GPU is present: this test is of the path without one");
        return;
    }
    let (Some(_), Some(real_ncu), Some(_)) = (tool(test, "nvcc"), tool(test, "ncu"), tool(test, "cuobjdump"))
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (repo, base) = scratch(dir.path());
    let state = dir.path().join("standin-state");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let json = dir.path().join("r.json");
    let out = support::bin()
        .current_dir(&repo)
        .args([
            "check",
            "--base",
            &base,
            "--confirm",
            "all",
            "--allow-no-baselines",
            "--baselines",
        ])
        .arg(dir.path().join("baselines"))
        .arg("--json")
        .arg(&json)
        .env(support::STAND_IN_GPU, support::stand_in_gpu())
        .env("CGP_GATE_NCU", root().join("tests/standins/ncu"))
        .env("CGP_STANDIN_REAL_NCU", &real_ncu)
        .env("CGP_STANDIN_CHECK_EACH_TREE", "1")
        .env("CGP_STANDIN_STATE", &state)
        .env("CGP_STANDIN_RECORDINGS", root().join("examples/recordings/main"))
        .env("CGP_GATE_RETRY_DELAYS_MS", "0,0")
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if text.contains("no libcupti found") {
        support::skip(test, "libcupti not installed (.ci/setup installs libcupti 11.8)");
        return;
    }
    assert_eq!(out.status.code(), Some(1), "{text}");
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["confirmation"]["status"], "ran", "{v}");
    let row = |target: &str| {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["target"] == target && r["metric"] == "gpu__time_duration.sum")
            .unwrap_or_else(|| panic!("no {target} row: {text}"))
            .clone()
    };
    for target in ["va_ncu", "va_cupti"] {
        let r = row(target);
        // New against the (empty) store; confirmed against the base by the pairs: +10 %.
        assert_eq!(r["confirmation"]["status"], "confirmed", "{r}");
        assert_eq!(r["confirmation"]["base_commit"], base.as_str(), "{r}");
        assert_eq!(r["confirmation"]["screen"]["verdict"], "new", "{r}");
        assert_eq!(r["verdict"], "regression", "{r}");
        let change = r["change"].as_f64().unwrap();
        assert!((0.07..0.13).contains(&change), "{target}: {change}");
    }
    // Both builds hold the same machine code for vector_add (real cuobjdump of each tree's
    // real nvcc build): the ncu row says so, as evidence beside its verdict.
    let ncu = row("va_ncu");
    assert_eq!(ncu["confirmation"]["same_sass"], true, "{ncu}");
    assert!(
        ncu["reason"]
            .as_str()
            .unwrap()
            .contains("identical in both builds"),
        "{ncu}"
    );
    // The real ncu started each tree's real program (the head's and the base worktree's), and
    // each failed without a GPU.
    let real = std::fs::read_to_string(state.join("real-ncu.log")).unwrap();
    let started: Vec<&str> = real
        .lines()
        .filter(|l| l.starts_with("==PROF== Connected to process"))
        .collect();
    assert!(
        started
            .iter()
            .any(|l| l.contains(&format!("{}/build/vector_add)", repo.display()))),
        "{real}"
    );
    assert!(
        started
            .iter()
            .any(|l| l.contains("/cgp-gate-worktrees-") && l.ends_with("/build/vector_add)")),
        "{real}"
    );
    assert!(
        real.contains("The application returned an error code") || real.contains("no CUDA-capable device"),
        "{real}"
    );
    // Nothing is left behind.
    assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 1, "{text}");
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "{text}");
}
