//! The examples for other CI engines: the GitLab template (parsed, then checked by
//! check-jsonschema's GitLab CI schema), the Kubernetes Indexed Job (parsed, its shard variables
//! fed to `--shard auto`, then checked by kubernetes-validate against the official schemas), and
//! the Slurm script (`bash -n`, shellcheck, and a whole submit with a stand-in `sbatch` that runs
//! the array tasks and the merge here, replaying the demo recordings: SYNTHETIC data).
//! The validators are installed by .ci/setup; a missing one is SKIPPED (a failure under CI).

use crate::support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use crate::support::root;
use serde_json::Value;

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Every YAML document of a file, as JSON values (GitLab's `!reference` tag becomes the tagged
/// value's content).
pub(crate) fn yaml_docs(rel: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(root().join(rel)).unwrap();
    let mut docs = Vec::new();
    for doc in yaml_serde::Deserializer::from_str(&text) {
        let v: yaml_serde::Value =
            serde::Deserialize::deserialize(doc).unwrap_or_else(|e| panic!("{rel}: {e}"));
        docs.push(serde_json::to_value(untag(v)).unwrap());
    }
    docs
}

fn untag(v: yaml_serde::Value) -> yaml_serde::Value {
    use yaml_serde::Value as Y;
    match v {
        Y::Tagged(t) => untag(t.value),
        Y::Sequence(s) => Y::Sequence(s.into_iter().map(untag).collect()),
        Y::Mapping(m) => Y::Mapping(m.into_iter().map(|(k, v)| (untag(k), untag(v))).collect()),
        other => other,
    }
}

fn script_text(job: &Value) -> String {
    job["script"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn gitlab_template_has_the_jobs_and_passes_the_gitlab_ci_schema() {
    let rel = "examples/gitlab/cgp-gate.gitlab-ci.yml";
    let docs = yaml_docs(rel);
    assert_eq!(docs.len(), 1);
    let ci = &docs[0];
    let check = &ci["cgp-gate:check"];
    assert_eq!(check["artifacts"]["reports"]["junit"], "cgp-gate-junit-*.xml");
    assert_eq!(check["artifacts"]["when"], "always");
    let check_script = script_text(check);
    for want in [
        "cgp-gate check",
        "--shard auto",
        "--junit",
        "--markdown",
        "--json",
    ] {
        assert!(check_script.contains(want), "check job: no `{want}`");
    }
    let note = &ci["cgp-gate:note"];
    let note_script = script_text(note);
    assert!(note_script.contains("cgp-gate merge"), "{note_script}");
    assert!(
        note_script.contains("cgp-gate gitlab-note --from"),
        "{note_script}"
    );
    assert_eq!(note["needs"][0]["job"], "cgp-gate:check");
    assert!(
        note["artifacts"]["paths"]
            .as_array()
            .unwrap()
            .contains(&Value::from("cgp-gate-report.md"))
    );
    let refresh = &ci["cgp-gate:baseline-refresh"];
    assert!(
        refresh["rules"][0]["if"]
            .as_str()
            .unwrap()
            .contains("$CI_DEFAULT_BRANCH")
    );
    assert!(script_text(refresh).contains("cgp-gate baseline update"));
    // The history site on GitLab Pages: a job named `pages` publishing `public/`.
    let pages = &ci["pages"];
    assert!(
        script_text(pages).contains("cgp-gate history"),
        "{}",
        script_text(pages)
    );
    assert!(script_text(pages).contains("--out public"));
    assert_eq!(pages["artifacts"]["paths"][0], "public");
    assert_eq!(pages["needs"][0]["job"], "cgp-gate:baseline-refresh");
    // The token never goes on a command line or into a URL.
    let text = std::fs::read_to_string(root().join(rel)).unwrap();
    assert!(!text.contains(":${GITLAB_TOKEN}@") && !text.contains(":$GITLAB_TOKEN@"));

    if !have("check-jsonschema") {
        support::skip(
            "gitlab_template_has_the_jobs_and_passes_the_gitlab_ci_schema",
            "check-jsonschema is not installed (pip install check-jsonschema)",
        );
        return;
    }
    let out = Command::new("check-jsonschema")
        .args([
            "--builtin-schema",
            "vendor.gitlab-ci",
            "--data-transform",
            "gitlab-ci",
        ])
        .arg(root().join(rel))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The validator does find mistakes: a misspelt key fails.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.gitlab-ci.yml");
    std::fs::write(&bad, text.replace("  stage: report", "  stag: report")).unwrap();
    let out = Command::new("check-jsonschema")
        .args([
            "--builtin-schema",
            "vendor.gitlab-ci",
            "--data-transform",
            "gitlab-ci",
        ])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success(), "a misspelt key should fail the schema");
}

#[test]
fn k8s_indexed_job_shards_as_shard_k_of_n_and_passes_the_kubernetes_schemas() {
    let rel = "examples/k8s/indexed-job.yaml";
    let docs = yaml_docs(rel);
    let shards = docs
        .iter()
        .find(|d| d["kind"] == "Job" && d["spec"]["completionMode"] == "Indexed")
        .expect("an Indexed Job");
    let n = shards["spec"]["completions"].as_u64().unwrap();
    assert_eq!(
        shards["spec"]["parallelism"].as_u64(),
        Some(n),
        "every shard at once"
    );
    let pod = &shards["spec"]["template"]["spec"];
    let c = &pod["containers"][0];
    assert_eq!(c["resources"]["limits"]["nvidia.com/gpu"], 1);
    // The pod's shell script (command `bash -c`): its cgp-gate line takes `--shard auto`.
    assert_eq!(c["command"], serde_json::json!(["bash", "-c"]));
    let script = c["args"][0].as_str().unwrap();
    assert!(script.contains("--shard auto"), "{script}");
    let env: BTreeMap<&str, &Value> = c["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), e))
        .collect();
    let total = env["CGP_GATE_SHARD_TOTAL"]["value"].as_str().unwrap();
    assert_eq!(
        total,
        n.to_string(),
        "CGP_GATE_SHARD_TOTAL must equal completions"
    );
    assert!(env.contains_key("JOB_COMPLETION_INDEX"));
    // What each pod's variables give: shard index+1 of completions.
    for i in 0..n {
        let vars: BTreeMap<String, String> = [
            ("JOB_COMPLETION_INDEX".to_owned(), i.to_string()),
            ("CGP_GATE_SHARD_TOTAL".to_owned(), total.to_owned()),
        ]
        .into();
        let got = cgp_spec::plan::shard_auto::from_vars(&vars).unwrap();
        assert_eq!(got.shard.to_string(), format!("{}/{n}", i + 1));
    }
    let merge = docs
        .iter()
        .find(|d| d["metadata"]["name"] == "cgp-gate-merge")
        .expect("a merge Job");
    let wait = merge["spec"]["template"]["spec"]["initContainers"][0]["env"].to_string();
    assert!(
        wait.contains(&format!("\"{n}\"")),
        "the merge waits for all {n} shards: {wait}"
    );
    assert!(
        merge["spec"]["template"]["spec"]["containers"][0]["command"]
            .to_string()
            .contains("cgp-gate merge")
    );

    if !have("kubernetes-validate") {
        support::skip(
            "k8s_indexed_job_shards_as_shard_k_of_n_and_passes_the_kubernetes_schemas",
            "kubernetes-validate is not installed (pip install kubernetes-validate)",
        );
        return;
    }
    let out = Command::new("kubernetes-validate")
        .arg("--strict")
        .arg(root().join(rel))
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    assert_eq!(said.matches("passed for resource").count(), docs.len(), "{said}");
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    let text = std::fs::read_to_string(root().join(rel)).unwrap();
    std::fs::write(
        &bad,
        text.replace("backoffLimitPerIndex:", "backoffLimitPerIndx:"),
    )
    .unwrap();
    let out = Command::new("kubernetes-validate")
        .arg("--strict")
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success(), "a misspelt field should fail the schema");
}

#[test]
fn slurm_script_is_valid_bash_and_passes_shellcheck() {
    let script = root().join("examples/slurm/gate.sbatch");
    let out = Command::new("bash").arg("-n").arg(&script).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    if !have("shellcheck") {
        support::skip(
            "slurm_script_is_valid_bash_and_passes_shellcheck",
            "shellcheck is not installed (Debian's shellcheck package)",
        );
        return;
    }
    let out = Command::new("shellcheck").arg(&script).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

/// A stand-in `sbatch`: runs an `--array=A-B` submission's tasks one after another with the
/// variables Slurm gives array tasks, and any other submission (the merge) right away; with
/// `--wait` it exits with the job's exit code, as sbatch does.
pub(crate) const FAKE_SBATCH: &str = r#"#!/bin/bash
set -u
array=""; wait=0
while [ $# -gt 0 ]; do
  case "$1" in
    --array=*) array="${1#--array=}" ;;
    --wait) wait=1 ;;
    --*) ;;
    *) break ;;
  esac
  shift
done
script="$1"; shift
echo "sbatch array=$array wait=$wait mode=$*" >> "$SBATCH_LOG"
if [ -n "$array" ]; then
  min="${array%-*}"; max="${array#*-}"
  for ((i = min; i <= max; i++)); do
    SLURM_ARRAY_JOB_ID=100 SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=$min SLURM_ARRAY_TASK_MAX=$max \
      SLURM_ARRAY_TASK_COUNT=$((max - min + 1)) bash "$script" "$@" >> "$SBATCH_LOG" 2>&1
    echo "task $i exit $?" >> "$SBATCH_LOG"
  done
  echo "100"
  exit 0
fi
bash "$script" "$@" >> "$SBATCH_LOG" 2>&1
status=$?
echo "merge exit $status" >> "$SBATCH_LOG"
echo "101"
if [ "$wait" = 1 ]; then exit "$status"; fi
"#;

fn rows(results: &Value) -> std::collections::BTreeSet<String> {
    results["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{} {} {} {}", r["target"], r["size"], r["metric"], r["verdict"]))
        .collect()
}

#[test]
fn slurm_submit_runs_the_array_then_the_merge_and_exits_with_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let sbatch = bin.join("sbatch");
    std::fs::write(&sbatch, FAKE_SBATCH).unwrap();
    std::fs::set_permissions(&sbatch, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let gate = PathBuf::from(env!("CARGO_BIN_EXE_cgp-gate"));
    let path = format!(
        "{}:{}:{}",
        bin.display(),
        gate.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let work = dir.path().join("runs");
    let log = dir.path().join("sbatch.log");
    let submit = || {
        let mut c = Command::new("bash");
        c.current_dir(root())
            .arg("examples/slurm/gate.sbatch")
            .arg("submit")
            .env("PATH", &path)
            .env("SBATCH_LOG", &log)
            .env("CGP_GATE_SHARDS", "3")
            .env("CGP_GATE_SPEC", "examples/cgp-gate.yaml")
            .env("CGP_GATE_BASELINES", "examples/baselines")
            .env("CGP_GATE_REPLAY", "examples/recordings/pr-slowdown")
            .env("CGP_GATE_WORK", &work)
            .env("CGP_GATE_WAIT", "1")
            .env_remove("GITHUB_ACTIONS");
        for v in [
            "CI_NODE_INDEX",
            "CI_NODE_TOTAL",
            "JOB_COMPLETION_INDEX",
            "CGP_GATE_SHARD",
            "CGP_GATE_SHARD_INDEX",
            "CGP_GATE_SHARD_TOTAL",
        ] {
            c.env_remove(v);
        }
        c.output().unwrap()
    };
    let out = submit();
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(
        out.status.code(),
        Some(1),
        "the slowdown regresses\n{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for k in 1..=3 {
        assert!(
            said.contains(&format!(
                "shard {k}/3 from Slurm job array (SLURM_ARRAY_TASK_ID={k}"
            )),
            "{said}"
        );
    }
    assert!(said.contains("merge exit 1"), "{said}");
    let runs: Vec<PathBuf> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(runs.len(), 1);
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(runs[0].join("merged.json")).unwrap()).unwrap();
    for f in ["junit.xml", "report.md", "report.html"] {
        assert!(runs[0].join(f).is_file(), "{f}");
    }
    assert!(work.join("costs.json").is_file(), "the next run's --shard-costs");

    // The same gate unsharded.
    let whole = dir.path().join("whole.json");
    let out = Command::new(&gate)
        .current_dir(root())
        .args([
            "check",
            "--spec",
            "examples/cgp-gate.yaml",
            "--baselines",
            "examples/baselines",
        ])
        .args(["--replay", "examples/recordings/pr-slowdown", "--json"])
        .arg(&whole)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let whole: Value = serde_json::from_str(&std::fs::read_to_string(&whole).unwrap()).unwrap();
    assert_eq!(rows(&merged), rows(&whole));

    // A second run takes the first one's costs: every task gets the same copy.
    let out = submit();
    assert_eq!(out.status.code(), Some(1));
    let second = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir() && *p != runs[0])
        .unwrap();
    assert!(second.join("costs.json").is_file());
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(second.join("merged.json")).unwrap()).unwrap();
    assert_eq!(rows(&merged), rows(&whole));
}

/// examples/k8s/wait.sh against a stand-in `kubectl` that answers the Job's conditions from a
/// script of states: a failed merge (a regression, exit 1) returns at once with 1, not after the
/// timeout; a completed one with 0; a failed Job without an exit code with 3; a Job that never
/// ends with 3 at the timeout.
#[test]
fn k8s_wait_returns_on_either_outcome_with_the_merge_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    // Each `get job/...` prints the next line of $STATES (the last one repeats); `get pods` prints
    // $EXIT_CODE.
    std::fs::write(
        bin.join("kubectl"),
        r#"#!/bin/bash
echo "$*" >> "$KLOG"
if [ "$2" = pods ]; then printf '%s\n' "$EXIT_CODE"; exit 0; fi
n=$(grep -c '^get job/' "$KLOG")
line=$(sed -n "${n}p" "$STATES"); [ -n "$line" ] || line=$(tail -n 1 "$STATES")
[ "$line" = none ] || printf '%s\n' "$line"
"#,
    )
    .unwrap();
    Command::new("chmod")
        .arg("755")
        .arg(bin.join("kubectl"))
        .status()
        .unwrap();
    let run = |states: &str, exit_code: &str, timeout: &str| {
        let states_file = dir.path().join("states");
        let log = dir.path().join("klog");
        let _ = std::fs::remove_file(&log);
        std::fs::write(&states_file, states).unwrap();
        let start = std::time::Instant::now();
        let out = Command::new("bash")
            .arg(root().join("examples/k8s/wait.sh"))
            .args(["cgp-gate-merge", timeout])
            .env(
                "PATH",
                format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
            )
            .env("STATES", &states_file)
            .env("EXIT_CODE", exit_code)
            .env("KLOG", &log)
            .env("CGP_GATE_POLL_SECONDS", "0.05")
            .output()
            .unwrap();
        let calls = std::fs::read_to_string(&log).unwrap_or_default();
        (
            out.status.code().unwrap(),
            calls,
            start.elapsed(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, calls, took, _) = run("none\nnone\nFailed\n", "1", "3600");
    assert_eq!(code, 1, "{calls}");
    assert!(
        took.as_secs() < 60 && calls.matches("get job/cgp-gate-merge").count() == 3,
        "{calls}"
    );
    assert!(calls.contains("get pods -l job-name=cgp-gate-merge"), "{calls}");
    assert_eq!(run("none\nComplete\n", "", "3600").0, 0);
    let (code, _, _, err) = run("Failed\n", "", "3600");
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("without a merge exit code"), "{err}");
    let (code, _, _, err) = run("none\n", "", "1");
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("has not ended after 1s"), "{err}");
    if have("shellcheck") {
        let out = Command::new("shellcheck")
            .arg(root().join("examples/k8s/wait.sh"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    } else {
        support::skip(
            "k8s_wait_returns_on_either_outcome_with_the_merge_exit_code",
            "shellcheck is not installed (Debian's shellcheck package)",
        );
    }
}

/// The lines of `.ci/setup`'s text that change the system (`apt-get`, `pip install`, `sed -i`)
/// without being an argument of its `change` function, which says each change before making it.
fn unannounced_changes(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_change = false;
    for line in text.lines() {
        let code = line.trim_start();
        if code.starts_with('#') {
            continue;
        }
        let announced = in_change || code.starts_with("change ");
        let changes = ["apt-get ", "pip install", "sed -i"]
            .iter()
            .any(|c| code.contains(c));
        if changes && !announced {
            out.push(line.to_owned());
        }
        in_change = announced && code.ends_with('\\');
    }
    out
}

/// Issue 59, item 3: `.ci/setup` (which `.ci/test` runs first) says each change to the system
/// before making it, `--dry-run` says them without making any, and the README names every package
/// it may install. Run here with a PATH that lacks the tools, so that every one is missing.
#[test]
fn ci_setup_says_each_system_change_first_and_the_readme_names_them() {
    let script = std::fs::read_to_string(root().join(".ci/setup")).unwrap();
    assert_eq!(unannounced_changes(&script), Vec::<String>::new());
    // The check finds a change made without a word.
    let planted = script.replace(
        "pip_install() {\n",
        "pip_install() {\n  python3 -m pip install -q \"$1\"\n",
    );
    assert_eq!(
        unannounced_changes(&planted).len(),
        1,
        "the planted line is not found"
    );

    let bare = tempfile::tempdir().unwrap();
    for tool in ["bash", "python3", "id", "grep", "env"] {
        let Some(found) = std::env::split_paths(&std::env::var_os("PATH").unwrap())
            .map(|p| p.join(tool))
            .find(|p| p.is_file())
        else {
            support::skip(
                "ci_setup_says_each_system_change_first",
                &format!("no {tool} on PATH"),
            );
            return;
        };
        std::os::unix::fs::symlink(found, bare.path().join(tool)).unwrap();
    }
    let sources = std::fs::read("/etc/apt/sources.list.d/debian.sources").ok();
    let o = Command::new(bare.path().join("bash"))
        .arg(root().join(".ci/setup"))
        .arg("--dry-run")
        .env("PATH", bare.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{said}");
    assert!(o.stdout.is_empty(), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(said.lines().all(|l| l.starts_with(".ci/setup: ")), "{said}");
    assert_eq!(
        std::fs::read("/etc/apt/sources.list.d/debian.sources").ok(),
        sources
    );
    // Each package it would install, as a Debian or PyPI package name, is named in the README.
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut named = 0;
    for line in said.lines().filter(|l| l.contains(": would install ")) {
        let words: Vec<&str> = line.rsplit(": ").next().unwrap().split_whitespace().collect();
        let at = words.iter().rposition(|w| w.starts_with('-')).unwrap();
        for package in &words[at + 1..] {
            named += 1;
            assert!(
                readme.contains(&format!("`{package}`")),
                "README does not name `{package}`: {line}"
            );
        }
    }
    if nix_root() {
        // As root, every Debian and PyPI package the tests use: 5 from apt at least, 3 from PyPI.
        assert!(named >= 8, "{said}");
    } else {
        assert!(said.contains("this is not root"), "{said}");
    }
}

fn nix_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}
