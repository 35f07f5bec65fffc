//! The CI templates pass the base commit to `check --base` by default (issue 56, docs/confirm.md):
//! the Action (`base: auto` with `build`), GitLab (CI_MERGE_REQUEST_DIFF_BASE_SHA), Slurm
//! (`git merge-base HEAD origin/HEAD`) and Kubernetes (`CGP_GATE_BASE`). The Action and Slurm run
//! the real binary on the scratch project of tests/confirm_cli.rs (SYNTHETIC stand-in harness);
//! GitLab's and Kubernetes' scripts run with a stand-in `cgp-gate` that records its arguments
//! (their schemas are checked in tests/ci_examples.rs).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::confirm_cli::{BUILD, Project, git};
use crate::support::root;

/// A folder with a `cgp-gate` that writes its arguments, one per line, to `$ARGV_LOG`.
fn recording_gate(dir: &Path) -> PathBuf {
    let bin = dir.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(
        bin.join("cgp-gate"),
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$ARGV_LOG\"\n",
    )
    .unwrap();
    std::fs::set_permissions(
        bin.join("cgp-gate"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    bin
}

fn path_with(bin: &Path) -> String {
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

/// The arguments the stand-in `cgp-gate` got, or none when it did not run.
fn argv(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn base_arg(args: &[String]) -> Option<&str> {
    args.windows(2).find(|w| w[0] == "--base").map(|w| w[1].as_str())
}

/// The check job's own script lines (the `!reference`d install and build steps left out), with
/// its variables.
fn gitlab_check() -> (String, Vec<(String, String)>) {
    let ci = &crate::ci_examples::yaml_docs("examples/gitlab/cgp-gate.gitlab-ci.yml")[0];
    let lines: Vec<String> = ci["cgp-gate:check"]["script"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str().map(str::to_owned))
        .collect();
    let vars = ci["variables"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
        .collect();
    (lines.join("\n"), vars)
}

#[test]
fn the_gitlab_check_job_passes_the_merge_request_base() {
    let p = Project::new("1.0", "1.0", BUILD);
    let bin = recording_gate(p.dir.path());
    let log = p.path("argv");
    let (script, vars) = gitlab_check();
    let run = |extra: &[(&str, &str)]| -> Output {
        let _ = std::fs::remove_file(&log);
        let mut c = Command::new("sh");
        c.arg("-ec")
            .arg(&script)
            .current_dir(p.repo())
            .env("PATH", path_with(&bin))
            .env("ARGV_LOG", &log);
        for (k, v) in &vars {
            c.env(k, v);
        }
        c.env("CI_MERGE_REQUEST_DIFF_BASE_SHA", &p.base);
        for (k, v) in extra {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let out = run(&[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let args = argv(&log);
    assert_eq!(base_arg(&args), Some(p.base.as_str()), "{args:?}");
    assert!(args.windows(2).any(|w| w == ["--shard", "auto"]), "{args:?}");
    // A build command of its own, when given.
    run(&[("CGP_GATE_BUILD", "make -C kernels")]);
    let args = argv(&log);
    assert!(
        args.windows(2).any(|w| w == ["--build", "make -C kernels"]),
        "{args:?}"
    );
    // Turned off.
    run(&[("CGP_GATE_BASE", "")]);
    assert_eq!(base_arg(&argv(&log)), None);
    // A base this clone does not have and cannot fetch (no `origin` here) fails the job before
    // cgp-gate runs.
    let out = run(&[(
        "CI_MERGE_REQUEST_DIFF_BASE_SHA",
        "0123456789012345678901234567890123456789",
    )]);
    assert!(!out.status.success());
    assert!(argv(&log).is_empty());
}

#[test]
fn the_kubernetes_shard_passes_its_base() {
    let docs = crate::ci_examples::yaml_docs("examples/k8s/indexed-job.yaml");
    let shards = docs
        .iter()
        .find(|d| d["spec"]["completionMode"] == "Indexed")
        .unwrap();
    let c = &shards["spec"]["template"]["spec"]["containers"][0];
    let script = c["args"][0].as_str().unwrap();
    let env: Vec<(String, String)> = c["env"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| Some((e["name"].as_str()?.to_owned(), e["value"].as_str()?.to_owned())))
        .collect();
    assert!(
        env.iter().any(|(k, v)| k == "CGP_GATE_BASE" && v == "BASE"),
        "{env:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let bin = recording_gate(dir.path());
    let log = dir.path().join("argv");
    for (base, want) in [("a1b2c3d4e5f6", Some("a1b2c3d4e5f6")), ("", None)] {
        let mut cmd = Command::new("bash");
        cmd.arg("-c")
            .arg(script)
            .env("PATH", path_with(&bin))
            .env("ARGV_LOG", &log);
        for (k, v) in &env {
            cmd.env(k, v);
        }
        cmd.env("CGP_GATE_BASE", base).env("JOB_COMPLETION_INDEX", "0");
        assert!(cmd.status().unwrap().success());
        let args = argv(&log);
        assert_eq!(base_arg(&args), want, "{args:?}");
        assert!(
            args.contains(&"/results/COMMIT/results-0.json".to_owned()),
            "{args:?}"
        );
    }
}

/// `scripts/action.sh run` in the project's repository, as the Action runs it on a pull request
/// whose base is the project's base commit.
fn action(p: &Project, inputs: &[(&str, &str)]) -> (Output, Value) {
    let results = p.path("action.json");
    let _ = std::fs::remove_file(&results);
    let mut c = Command::new("bash");
    c.arg(root().join("scripts/action.sh"))
        .arg("run")
        .current_dir(p.dir.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", p.dir.path())
        .env("TMPDIR", p.path("tmp"))
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", p.path("gh_output"))
        .env("GITHUB_STEP_SUMMARY", p.path("gh_summary"))
        .env("CGP_STANDIN_JOB", "0.99")
        .env("INPUT_PATH", env!("CARGO_BIN_EXE_cgp-gate"))
        .env("INPUT_WORKING_DIRECTORY", p.repo())
        .env("INPUT_BASELINES", p.path("baselines"))
        .env("INPUT_RESULTS", &results)
        .env("INPUT_JUNIT", "")
        .env("INPUT_PR_BASE_SHA", &p.base);
    for (k, v) in inputs {
        c.env(format!("INPUT_{k}"), v);
    }
    let out = c.output().unwrap();
    let v = serde_json::from_slice(&std::fs::read(&results).unwrap_or_default()).unwrap_or(Value::Null);
    (out, v)
}

#[test]
fn the_action_confirms_against_the_pull_request_base_when_build_is_given() {
    let p = Project::new("1.0", "1.08", BUILD);
    // `base: auto` (the default) with `build`: the pull request's base commit, confirmed.
    let (out, v) = action(&p, &[("BUILD", "sh build.sh")]);
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert_eq!(v["confirmation"]["base_commit"], p.base.as_str(), "{v}");
    assert_eq!(v["confirmation"]["status"], "ran", "{v}");
    // The step summary (the comment's Markdown) says against which commit.
    let summary = std::fs::read_to_string(p.path("gh_summary")).unwrap();
    assert!(
        summary.contains(&format!("Confirmed against base {}", p.base)),
        "{summary}"
    );
    p.untouched(&text);
    // Without `build`, `auto` is off; `base: ''` is off with it.
    for inputs in [vec![], vec![("BUILD", "sh build.sh"), ("BASE", "")]] {
        let (out, v) = action(&p, &inputs);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{inputs:?}");
        assert!(v.get("confirmation").is_none(), "{inputs:?}: {v}");
    }
    // A base the checkout lacks and cannot fetch is exit 3, saying what to do; a base that reads
    // as an option is exit 2.
    let (out, _) = action(&p, &[("BASE", "0123456789012345678901234567890123456789")]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("fetch-depth: 0"));
    let (out, _) = action(&p, &[("BASE", "--output=x")]);
    assert_eq!(out.status.code(), Some(2));
}

/// A stand-in `sbatch` (tests/ci_examples.rs's): array tasks one after another, then the merge.
fn sbatch(dir: &Path) -> PathBuf {
    let bin = dir.join("sbatch-bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("sbatch"), crate::ci_examples::FAKE_SBATCH).unwrap();
    std::fs::set_permissions(
        bin.join("sbatch"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    bin
}

#[test]
fn slurm_confirms_against_the_merge_base_with_the_default_branch() {
    let p = Project::new("1.0", "1.08", BUILD);
    // The default branch as a clone knows it: origin/HEAD at the base commit.
    git(&p.repo(), &["update-ref", "refs/remotes/origin/main", &p.base]);
    git(
        &p.repo(),
        &[
            "symbolic-ref",
            "refs/remotes/origin/HEAD",
            "refs/remotes/origin/main",
        ],
    );
    let bin = sbatch(p.dir.path());
    let gate = PathBuf::from(env!("CARGO_BIN_EXE_cgp-gate"));
    let path = format!("{}:{}", gate.parent().unwrap().display(), path_with(&bin));
    let work = p.path("runs");
    let out = Command::new("bash")
        .arg(root().join("examples/slurm/gate.sbatch"))
        .arg("submit")
        .current_dir(p.repo())
        .env("PATH", &path)
        .env("SBATCH_LOG", p.path("sbatch.log"))
        .env("CGP_GATE_SHARDS", "1")
        .env("CGP_GATE_BASELINES", p.path("baselines"))
        .env("CGP_GATE_WORK", &work)
        .env("CGP_GATE_WAIT", "1")
        .env("CGP_STANDIN_JOB", "0.99")
        .env("TMPDIR", p.path("tmp"))
        .env_remove("GITHUB_ACTIONS")
        .env_remove("CGP_GATE_BASE")
        .output()
        .unwrap();
    let said = std::fs::read_to_string(p.path("sbatch.log")).unwrap_or_default();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|d| d.is_dir() && d.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .unwrap();
    let merged: Value = serde_json::from_slice(&std::fs::read(run.join("merged.json")).unwrap()).unwrap();
    assert_eq!(merged["confirmation"]["base_commit"], p.base.as_str(), "{merged}");
    assert_eq!(merged["confirmation"]["status"], "ran", "{merged}");
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        report.contains(&format!("Confirmed against base {}", p.base)),
        "{report}"
    );
}
