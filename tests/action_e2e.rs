//! The GitHub Action's script (scripts/action.sh, what action.yml runs) end to end, without
//! GitHub: the runner's variables are simulated (GITHUB_ACTIONS, GITHUB_OUTPUT,
//! GITHUB_STEP_SUMMARY, GITHUB_WORKSPACE), the `path` input points at the binary under test, and
//! samples come from the demo recordings (SYNTHETIC data) or from a stand-in ncu.

use crate::support::root;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A simulated runner: a workspace and the files GitHub would provide.
struct Runner {
    dir: tempfile::TempDir,
}

impl Runner {
    fn new() -> Self {
        let r = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir(r.workspace()).unwrap();
        r
    }
    fn workspace(&self) -> PathBuf {
        self.dir.path().join("workspace")
    }
    fn output_file(&self) -> PathBuf {
        self.dir.path().join("github_output")
    }
    fn summary_file(&self) -> PathBuf {
        self.dir.path().join("step_summary")
    }

    /// Run `scripts/action.sh run` with these inputs (`INPUT_*`) on top of the runner's variables.
    fn run(&self, inputs: &[(&str, &str)], extra_env: &[(&str, &Path)]) -> Output {
        let mut c = Command::new("bash");
        c.arg(root().join("scripts/action.sh"))
            .arg("run")
            .current_dir(self.workspace())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_OUTPUT", self.output_file())
            .env("GITHUB_STEP_SUMMARY", self.summary_file())
            .env("GITHUB_WORKSPACE", self.workspace())
            .env("GITHUB_ACTION_PATH", root())
            .env("GITHUB_REPOSITORY", "octo/kernels")
            .env("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
            .env("RUNNER_TEMP", self.dir.path())
            .env("INPUT_PATH", env!("CARGO_BIN_EXE_cgp-gate"));
        for (k, v) in inputs {
            c.env(format!("INPUT_{k}"), v);
        }
        for (k, v) in extra_env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    /// `$GITHUB_OUTPUT` parsed: every `name<<DELIM` entry, the last value of a name winning.
    fn outputs(&self) -> BTreeMap<String, String> {
        let text = std::fs::read_to_string(self.output_file()).unwrap_or_default();
        let mut out = BTreeMap::new();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            let (name, delim) = line
                .split_once("<<")
                .expect("every output uses the delimiter form");
            let mut value = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                value.push(l);
            }
            out.insert(name.to_owned(), value.join("\n"));
        }
        out
    }

    fn summary(&self) -> String {
        std::fs::read_to_string(self.summary_file()).unwrap_or_default()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The inputs of a check of the example spec against a demo recording.
fn replay_inputs(recording: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "SPEC",
            root().join("examples/cgp-gate.yaml").display().to_string(),
        ),
        (
            "BASELINES",
            root().join("examples/baselines").display().to_string(),
        ),
        (
            "REPLAY",
            root()
                .join("examples/recordings")
                .join(recording)
                .display()
                .to_string(),
        ),
        ("RESULTS", "out/results.json".to_owned()),
        ("JUNIT", "out/junit.xml".to_owned()),
    ]
}

fn borrowed<'a>(v: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    v.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[test]
fn identical_code_passes_with_outputs_and_a_summary() {
    let r = Runner::new();
    std::fs::create_dir(r.workspace().join("out")).unwrap();
    let inputs = replay_inputs("pr-same");
    let o = r.run(&borrowed(&inputs), &[]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
    let out = r.outputs();
    assert_eq!(out["verdict"], "pass");
    assert_eq!(out["regressions"], "0");
    let results = PathBuf::from(&out["results"]);
    assert!(results.is_absolute() && results.is_file(), "{results:?}");
    assert_eq!(
        results,
        r.workspace().join("out/results.json").canonicalize().unwrap()
    );
    assert_eq!(out["junit-path"], "out/junit.xml");
    assert!(r.workspace().join("out/junit.xml").is_file());
    let summary = r.summary();
    assert!(summary.contains("cgp-gate: pass"), "{summary}");
    assert!(
        summary.contains("Synthetic data"),
        "the demo data is labelled synthetic: {summary}"
    );
    assert!(!text(&o.stdout).contains("::error"), "no annotation on a pass");
}

#[test]
fn a_regression_fails_the_step_and_says_where() {
    let r = Runner::new();
    std::fs::create_dir(r.workspace().join("out")).unwrap();
    let inputs = replay_inputs("pr-slowdown");
    let o = r.run(&borrowed(&inputs), &[]);
    assert_eq!(o.status.code(), Some(1), "stderr: {}", text(&o.stderr));
    let out = r.outputs();
    assert_eq!(out["verdict"], "regression");
    assert_eq!(out["regressions"], "1");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out["results"]).unwrap()).unwrap();
    assert_eq!(results["verdict"], "regression");
    let stdout = text(&o.stdout);
    assert!(
        stdout.contains("::error ") && stdout.contains("matmul[n=1024]"),
        "annotations name the regressed row: {stdout}"
    );
    let summary = r.summary();
    assert!(summary.contains("1 regression"), "{summary}");
    assert!(summary.contains("matmul"), "{summary}");
}

#[test]
fn fail_on_inconclusive_and_shard_inputs_reach_cgp_gate() {
    let r = Runner::new();
    std::fs::create_dir(r.workspace().join("out")).unwrap();
    let mut inputs = replay_inputs("pr-same");
    inputs.push(("SHARD", "2/3".to_owned()));
    inputs.push(("FAIL_ON", "Inconclusive".to_owned()));
    let o = r.run(&borrowed(&inputs), &[]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(r.workspace().join("out/results.json")).unwrap())
            .unwrap();
    assert_eq!(results["shard"], "2/3");
    assert_eq!(results["fail_on"], "inconclusive");
}

const SPEC: &str = r#"version: 1
targets:
  - name: vector_add
    command: [./app, --n, "{n}"]
    kernel: vector_add
    timeout: 5s
    repetitions: 2
    sizes: [{n: 1048576}]
    metrics:
      gpu__time_duration.sum: "3%"
"#;

const PERM: &str = "==PROF== Connected to process 5268 (/tmp/app)\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0. For instructions on enabling permissions and to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM\n==PROF== Disconnected from process 5268\n==WARNING== No kernels were profiled.\n";

#[test]
fn a_profiler_permission_error_is_exit_3_with_verdict_error() {
    let r = Runner::new();
    let project = r.workspace().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("cgp-gate.yaml"), SPEC).unwrap();
    let fake = r.dir.path().join("fake-ncu");
    std::fs::create_dir(&fake).unwrap();
    std::fs::write(fake.join("log"), PERM).unwrap();
    std::fs::write(fake.join("exit"), "1").unwrap();
    let ncu = root().join("tests/fixtures/fake-ncu/ncu");
    // The first run: no baselines yet (without the input, that alone is exit 2, tested below).
    let o = r.run(
        &[
            ("WORKING_DIRECTORY", "project"),
            ("JUNIT", ""),
            ("ALLOW_NO_BASELINES", "true"),
        ],
        &[
            ("CGP_GATE_NCU", &ncu),
            ("FAKE_NCU_DIR", &fake),
            (crate::support::STAND_IN_GPU, &crate::support::stand_in_gpu()),
        ],
    );
    assert_eq!(o.status.code(), Some(3), "stderr: {}", text(&o.stderr));
    let out = r.outputs();
    assert_eq!(out["verdict"], "error");
    assert_eq!(
        PathBuf::from(&out["results"]),
        project.join("cgp-gate-results.json").canonicalize().unwrap(),
        "the default results path, in the working directory"
    );
    assert!(!out.contains_key("junit-path"), "junit: '' writes no JUnit");
    let stdout = text(&o.stdout);
    assert!(
        stdout.contains("::error ") && stdout.contains("permission"),
        "{stdout}"
    );
    assert!(r.summary().contains("ERR_NVGPUCTRPERM"), "{}", r.summary());
}

#[test]
fn a_missing_ncu_is_exit_3_and_the_script_reports_the_verdict() {
    let r = Runner::new();
    std::fs::write(r.workspace().join("cgp-gate.yaml"), SPEC).unwrap();
    let missing = r.dir.path().join("no-such-ncu");
    let o = r.run(&[], &[("CGP_GATE_NCU", &missing)]);
    assert_eq!(o.status.code(), Some(3), "stderr: {}", text(&o.stderr));
    let out = r.outputs();
    assert_eq!(
        out["verdict"], "error",
        "cgp-gate stopped before judging; the script says so"
    );
    assert_eq!(out["regressions"], "0");
    assert!(!out.contains_key("results"), "there are no results to point at");
    assert!(text(&o.stderr).contains("no-such-ncu") || text(&o.stderr).contains("ncu"));
}

#[test]
fn bad_inputs_are_exit_2_with_an_annotation() {
    for (input, value, says) in [
        (
            "MODE",
            "benchmark",
            "input 'mode' must be check, ab or update-baselines",
        ),
        ("COMMENT", "yes", "input 'comment' must be true or false"),
        (
            "FAIL_ON",
            "error",
            "input 'fail-on' must be regression or inconclusive",
        ),
        (
            "ALLOW_NO_BASELINES",
            "maybe",
            "input 'allow-no-baselines' must be true or false",
        ),
        (
            "WORKING_DIRECTORY",
            "nowhere",
            "input 'working-directory' 'nowhere' is not a directory",
        ),
        (
            "PATH",
            "/nonexistent/cgp-gate",
            "no cgp-gate binary at '/nonexistent/cgp-gate'",
        ),
    ] {
        let r = Runner::new();
        let o = r.run(&[(input, value)], &[]);
        assert_eq!(o.status.code(), Some(2), "{input}={value}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains(says), "{input}: {}", text(&o.stderr));
        assert!(
            text(&o.stdout).contains(&format!("::error title=cgp-gate action::{says}")),
            "{input}: {}",
            text(&o.stdout)
        );
    }
}

#[test]
fn no_baselines_is_exit_2_unless_the_first_run_says_so() {
    let r = Runner::new();
    let mut inputs = replay_inputs("pr-same");
    inputs[1].1 = r.dir.path().join("no-baselines-here").display().to_string();
    let o = r.run(&borrowed(&inputs), &[]);
    assert_eq!(o.status.code(), Some(2), "stderr: {}", text(&o.stderr));
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains("no-baselines-here") && stderr.contains("cgp-gate baseline update"),
        "{stderr}"
    );
    inputs.push(("ALLOW_NO_BASELINES", "true".to_owned()));
    let o = r.run(&borrowed(&inputs), &[]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
    assert_eq!(r.outputs()["verdict"], "pass");
}

#[test]
fn an_invalid_shard_is_exit_2_from_cgp_gate() {
    let r = Runner::new();
    let mut inputs = replay_inputs("pr-same");
    inputs.push(("SHARD", "4/3".to_owned()));
    let o = r.run(&borrowed(&inputs), &[]);
    assert_eq!(o.status.code(), Some(2), "stderr: {}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("shard `4/3` has K outside 1..=N"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn update_baselines_mode_writes_baselines_from_a_results_file() {
    let r = Runner::new();
    std::fs::create_dir(r.workspace().join("out")).unwrap();
    let inputs = replay_inputs("pr-same");
    assert_eq!(r.run(&borrowed(&inputs), &[]).status.code(), Some(0));
    let from = r.workspace().join("out/results.json").display().to_string();
    let spec = root().join("examples/cgp-gate.yaml").display().to_string();
    let o = r.run(
        &[
            ("MODE", "update-baselines"),
            ("SPEC", &spec),
            ("BASELINES", "new-baselines"),
            ("FROM", &from),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
    for t in ["vector_add", "matmul", "reduce"] {
        let p = r
            .workspace()
            .join("new-baselines/synthetic-gpu-no-hardware")
            .join(format!("{t}.json"));
        assert!(p.is_file(), "{p:?}");
    }
    // Results holding a regression are refused unless `accept-regressions: true` (issue 46).
    let inputs = replay_inputs("pr-slowdown");
    assert_eq!(r.run(&borrowed(&inputs), &[]).status.code(), Some(1));
    let update = |accept: &str| {
        r.run(
            &[
                ("MODE", "update-baselines"),
                ("SPEC", &spec),
                ("BASELINES", "slow-baselines"),
                ("FROM", &from),
                ("ACCEPT_REGRESSIONS", accept),
            ],
            &[],
        )
    };
    let o = update("false");
    assert_eq!(o.status.code(), Some(2), "stderr: {}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("--accept-regressions"),
        "{}",
        text(&o.stderr)
    );
    assert!(!r.workspace().join("slow-baselines").exists());
    let o = update("True");
    assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
    assert!(
        r.workspace()
            .join("slow-baselines/synthetic-gpu-no-hardware/matmul.json")
            .is_file()
    );
    assert_eq!(update("yes").status.code(), Some(2));
}

#[test]
fn action_yml_passes_every_input_through_env_not_into_scripts() {
    let yml = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let mut in_run = false;
    let mut runs = 0;
    for line in yml.lines() {
        let t = line.trim_start();
        if t.starts_with("run:") {
            in_run = true;
            runs += 1;
            assert!(!t.contains("${{"), "an expression inside a run script: {line}");
            continue;
        }
        if in_run && !t.is_empty() && line.starts_with("      ") && !t.contains(':') {
            assert!(!t.contains("${{"), "an expression inside a run script: {line}");
        } else {
            in_run = false;
        }
    }
    assert_eq!(runs, 3);
    let shells = yml.matches("shell: bash").count();
    assert_eq!(shells, runs, "every run step says shell: bash");
    for input in [
        "spec",
        "mode",
        "baselines",
        "shard",
        "junit",
        "comment",
        "fail-on",
        "github-token",
        "working-directory",
        "version",
        "path",
    ] {
        assert!(
            yml.contains(&format!("\n  {input}:\n")),
            "input {input} is declared"
        );
    }
    for output in ["verdict", "regressions", "results"] {
        assert!(
            yml.contains(&format!("\n  {output}:\n"))
                && yml.contains(&format!("steps.run.outputs.{output} }}")),
            "output {output} is declared and re-exported"
        );
    }
}

#[test]
fn prepare_keys_the_cache_on_os_arch_and_source_and_skips_it_for_a_given_binary() {
    let prepare = |r: &Runner, env: &[(&str, &str)]| {
        let mut c = Command::new("bash");
        c.arg(root().join("scripts/action.sh"))
            .arg("prepare")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_OUTPUT", r.output_file())
            .env("GITHUB_ACTION_PATH", root())
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .env("RUNNER_TOOL_CACHE", "/opt/hostedtoolcache");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let r = Runner::new();
    assert_eq!(prepare(&r, &[]).status.code(), Some(0));
    let out = r.outputs();
    assert_eq!(out["install"], "true");
    let key = &out["key"];
    let hash = key.strip_prefix("cgp-gate-Linux-X64-").expect(key);
    assert!(
        hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()),
        "{key}"
    );
    assert_eq!(out["dir"], format!("/opt/hostedtoolcache/cgp-gate/{key}"));
    // The same tree gives the same key: the cache is reused.
    let again = Runner::new();
    prepare(&again, &[]);
    assert_eq!(&again.outputs()["key"], key);

    // Named by a release tag: keyed on the tag (its binary is downloaded) and the tree.
    let r = Runner::new();
    prepare(&r, &[("ACTION_REF", "v1.2.0")]);
    let tagged = &r.outputs()["key"];
    assert_eq!(tagged.len(), "cgp-gate-Linux-X64-v1.2.0-".len() + 16, "{tagged}");
    assert!(tagged.starts_with("cgp-gate-Linux-X64-v1.2.0-"), "{tagged}");
    // A branch is no release: keyed on the tree alone, as without a ref.
    let r = Runner::new();
    prepare(&r, &[("ACTION_REF", "main")]);
    assert_eq!(&r.outputs()["key"], key);

    let r = Runner::new();
    prepare(&r, &[("INPUT_VERSION", "v1.2.0")]);
    assert_eq!(r.outputs()["key"], "cgp-gate-Linux-X64-v1.2.0");
    let o = prepare(&Runner::new(), &[("INPUT_VERSION", "v1; rm -rf /")]);
    assert_eq!(o.status.code(), Some(2));

    let r = Runner::new();
    prepare(&r, &[("INPUT_PATH", "/usr/local/bin/cgp-gate")]);
    let out = r.outputs();
    assert_eq!(out["install"], "false");
    assert!(!out.contains_key("key"));
}

/// `mode: ab` with a SYNTHETIC A/B recording (tests/ab_cli.rs's paired noise model) in place of
/// the two trees: the step passes on A/A and fails on a 5% slower head, with the outputs, the
/// summary and the `html` report; without `base-dir` (and no recording) it is exit 2.
#[test]
fn ab_mode_judges_base_against_head_and_writes_html() {
    for (slowdown, code, verdict) in [(0.0, 0, "pass"), (0.05, 1, "regression")] {
        let r = Runner::new();
        let ws = r.workspace();
        std::fs::write(ws.join("cgp-gate.yaml"), crate::ab_cli::SPEC).unwrap();
        crate::ab_cli::recording(&ws.join("rec"), 10, slowdown, 11, true);
        let o = r.run(
            &[
                ("MODE", "ab"),
                ("REPLAY", "rec"),
                ("HTML", "ab.html"),
                ("RESULTS", "ab.json"),
            ],
            &[],
        );
        assert_eq!(o.status.code(), Some(code), "stderr: {}", text(&o.stderr));
        let out = r.outputs();
        assert_eq!(out["verdict"], verdict, "{out:?}");
        assert!(PathBuf::from(&out["results"]).is_file(), "{out:?}");
        let html = std::fs::read_to_string(ws.join("ab.html")).unwrap();
        assert!(
            html.starts_with("<!DOCTYPE html>") && html.contains("saxpy"),
            "{html:.200}"
        );
        assert!(r.summary().contains("saxpy"), "{}", r.summary());
    }
    let r = Runner::new();
    std::fs::write(r.workspace().join("cgp-gate.yaml"), crate::ab_cli::SPEC).unwrap();
    let o = r.run(&[("MODE", "ab")], &[]);
    assert_eq!(o.status.code(), Some(2), "stderr: {}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("needs the input 'base-dir'"),
        "{}",
        text(&o.stderr)
    );
    let o = r.run(&[("MODE", "ab"), ("BASE_DIR", "."), ("SHARD", "1/2")], &[]);
    assert_eq!(o.status.code(), Some(2), "stderr: {}", text(&o.stderr));
}

/// `html` reaches `check` too.
#[test]
fn html_input_writes_the_report_of_a_check() {
    let r = Runner::new();
    std::fs::create_dir(r.workspace().join("out")).unwrap();
    let mut inputs = replay_inputs("pr-same");
    inputs.push(("HTML", "out/report.html".to_owned()));
    let o = r.run(&borrowed(&inputs), &[]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
    let html = std::fs::read_to_string(r.workspace().join("out/report.html")).unwrap();
    assert!(html.contains("matmul"), "{html:.200}");
}

/// The inputs of action.yml (the keys under `inputs:`), in order.
fn action_inputs(yml: &str) -> Vec<String> {
    let v: serde_json::Value = yaml_serde::from_str(yml).unwrap();
    v["inputs"].as_object().unwrap().keys().cloned().collect()
}

/// The first column of README's table of inputs (the table under "Inputs (all optional):").
fn readme_inputs(readme: &str) -> Vec<String> {
    let after = readme
        .split_once("Inputs (all optional):")
        .expect("README has the Action's inputs table")
        .1;
    after
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .filter_map(|l| l.split('|').nth(1))
        .map(|c| c.trim().trim_matches('`').to_owned())
        .collect()
}

/// README's table lists every input of action.yml, no more, in the same order; a row dropped
/// from the table (as `allow-no-baselines` once was) is caught.
#[test]
fn readme_lists_every_input_of_action_yml() {
    let yml = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let want = action_inputs(&yml);
    assert!(
        want.len() > 10 && want.contains(&"allow-no-baselines".to_owned()),
        "{want:?}"
    );
    assert_eq!(
        readme_inputs(&readme),
        want,
        "README's inputs table against action.yml"
    );
    // The comparison fails on a planted omission.
    let planted: String = readme
        .lines()
        .filter(|l| !l.starts_with("| `html` |"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(readme_inputs(&planted), want);
}
