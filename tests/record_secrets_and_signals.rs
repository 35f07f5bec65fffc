//! Issue 34, "an error is never a pass, round 3" (items 1, 2, 4, 5 and 8): `--record` never
//! deletes what cgp-gate did not write, a closed stdout keeps the verdict's exit code, CI
//! credentials never reach the profiled program, one sanitiser for every outside string, and
//! bounded YAML, costs, signals and locks. Driven through the binary, on the real H100
//! recordings (`examples/recordings/h100`, `examples/baselines-h100`) where data is involved.
//! docs/reliability.md lists each case with its behaviour.

use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};

use crate::support::{bin, copy_dir, gone, root};
use assert_cmd::Command;

mod bounds_signals_and_locks;
mod closed_stdout;
mod sanitised_messages;

fn bin_path() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cgp-gate"))
}

fn run(mut c: Command) -> (i32, String) {
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

const H100: &str = "examples/recordings/h100";
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
"#;

/// A project folder with a spec and the stand-in ncu (tests/fixtures/fake-ncu) replaying one
/// recorded log: a live run without a GPU.
struct Live {
    dir: tempfile::TempDir,
}

impl Live {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cgp-gate.yaml"), SPEC).unwrap();
        std::fs::create_dir(dir.path().join("fake")).unwrap();
        std::fs::write(dir.path().join("fake/log"), GOOD_LOG).unwrap();
        Self { dir }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = bin();
        c.current_dir(self.path())
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("GITHUB_OUTPUT")
            .env("CGP_GATE_NCU", root().join("tests/fixtures/fake-ncu/ncu"))
            .env("FAKE_NCU_DIR", self.path().join("fake"))
            .env(crate::support::STAND_IN_GPU, crate::support::stand_in_gpu())
            .env("CGP_GATE_RETRY_DELAYS_MS", "0,0")
            .args(args);
        c
    }
    fn ncu_calls(&self) -> usize {
        std::fs::read_to_string(self.path().join("fake/argv.log"))
            .unwrap_or_default()
            .split("\n\n")
            .filter(|b| !b.trim().is_empty() && !b.contains("--version"))
            .count()
    }
}

/// Every file under `dir` with its bytes, sorted: what a folder holds, to compare before and after.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                out.push((e.path(), Vec::new()));
                stack.push(e.path());
            } else {
                out.push((e.path(), std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// A web project: a `manifest.json` that is not a recording's, `.git` and `src/`.
fn web_project(dir: &Path) {
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(dir.join("src/app.js"), "console.log(1)\n").unwrap();
    std::fs::write(
        dir.join("manifest.json"),
        r#"{"name": "app", "short_name": "app", "icons": [], "schema_version": 1}"#,
    )
    .unwrap();
}

#[test]
fn record_refuses_a_folder_it_did_not_write_in_every_command() {
    let live = Live::new();
    let proj = live.path().join("proj");
    web_project(&proj);
    let before = snapshot(&proj);
    std::fs::create_dir(live.path().join("baselines")).unwrap();
    let commands: [&[&str]; 5] = [
        &["profile", "--record", "proj"],
        &["check", "--baselines", "baselines", "--record", "proj"],
        &["calibrate", "--record", "proj"],
        &[
            "baseline",
            "update",
            "--baselines",
            "baselines",
            "--record",
            "proj",
        ],
        &["ab", "--base-dir", ".", "--record", "proj"],
    ];
    for args in commands {
        let (code, out) = run(live.cmd(args));
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(out.contains("--record proj"), "{args:?} names the folder: {out}");
        assert!(
            out.contains("give a new or empty folder"),
            "{args:?} says what to do: {out}"
        );
        assert_eq!(snapshot(&proj), before, "{args:?} changed the folder");
    }
    assert_eq!(live.ncu_calls(), 0, "nothing was profiled before the refusal");
    // The same from inside the folder, as `--record "$PWD"` and `--record .`.
    for dir in [proj.to_str().unwrap(), "."] {
        let mut c = live.cmd(&["profile", "--spec", "../cgp-gate.yaml", "--record", dir]);
        c.current_dir(&proj);
        let (code, out) = run(c);
        assert_eq!(code, 2, "{dir}: {out}");
        assert_eq!(snapshot(&proj), before);
    }
    // No staging folder is left beside it.
    let left: Vec<_> = std::fs::read_dir(live.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("recording"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn record_replaces_its_own_recording_but_not_one_with_a_foreign_file_or_a_newer_schema() {
    let live = Live::new();
    // New folder, then the same folder again (an older recording of cgp-gate's): both work.
    for _ in 0..2 {
        let (code, out) = run(live.cmd(&["profile", "--record", "rec"]));
        assert_eq!(code, 0, "{out}");
        assert!(live.path().join("rec/vector_add/n=1048576/1.csv").is_file());
    }
    // An empty folder works too.
    std::fs::create_dir(live.path().join("empty")).unwrap();
    assert_eq!(run(live.cmd(&["profile", "--record", "empty"])).0, 0);
    // A note someone added to the recording would be deleted: refused.
    std::fs::write(live.path().join("rec/NOTES.md"), "keep me\n").unwrap();
    let (code, out) = run(live.cmd(&["profile", "--record", "rec"]));
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("NOTES.md"), "{out}");
    std::fs::remove_file(live.path().join("rec/NOTES.md")).unwrap();
    // A manifest of a newer schema is not one this cgp-gate wrote.
    let m = live.path().join("rec/manifest.json");
    let text =
        std::fs::read_to_string(&m)
            .unwrap()
            .replacen("\"schema_version\": 1", "\"schema_version\": 9", 1);
    std::fs::write(&m, text).unwrap();
    let (code, out) = run(live.cmd(&["profile", "--record", "rec"]));
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("schema_version 9"), "{out}");
    // A file where the folder should be.
    std::fs::write(live.path().join("file"), "x").unwrap();
    assert_eq!(run(live.cmd(&["profile", "--record", "file"])).0, 2);
    assert_eq!(std::fs::read_to_string(live.path().join("file")).unwrap(), "x");
}

#[test]
fn ab_record_refuses_a_folder_with_a_foreign_manifest_and_keeps_an_empty_one() {
    let live = Live::new();
    let dir = live.path().join("abrec");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("manifest.json"), r#"{"name": "app"}"#).unwrap();
    let before = snapshot(&dir);
    let (code, out) = run(live.cmd(&["ab", "--base-dir", ".", "--record", "abrec"]));
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("not a cgp-gate A/B recording manifest"), "{out}");
    assert_eq!(snapshot(&dir), before);
    std::fs::remove_file(dir.join("manifest.json")).unwrap();
    let (code, out) = run(live.cmd(&["ab", "--base-dir", ".", "--record", "abrec"]));
    assert!(code == 0 || code == 1, "{out}");
    assert!(dir.join("base/manifest.json").is_file() && dir.join("manifest.json").is_file());
    // Its own A/B recording may be replaced.
    let (code, out) = run(live.cmd(&["ab", "--base-dir", ".", "--record", "abrec"]));
    assert!(code == 0 || code == 1, "{out}");
}

fn h100_check(recording: &str, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "check",
        "--color",
        "never",
        "--spec",
        &format!("{H100}/check.yaml"),
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    v.extend(["--baselines", "examples/baselines-h100", "--replay"].map(str::to_owned));
    v.push(format!("{H100}/{recording}"));
    v.extend(extra.iter().map(|s| (*s).to_owned()));
    v
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// The environment the program under test received in a live `profile` run (stand-ins
/// tests/standins/run-app-ncu and dump-env), with cgp-gate given `vars` and the spec's target
/// given `extra` keys.
pub(crate) fn program_env(vars: &[(&str, &str)], extra: &str) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let spec = format!(
        "version: 1\ntargets:\n  - name: vector_add\n    command: [{}, --n, \"{{n}}\"]\n    kernel: vector_add\n    timeout: 20s\n    repetitions: 1\n    sizes: [{{n: 1048576}}]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n{extra}",
        root().join("tests/standins/dump-env").display()
    );
    std::fs::write(dir.path().join("cgp-gate.yaml"), spec).unwrap();
    let mut c = bin();
    c.current_dir(dir.path())
        .env("CGP_GATE_NCU", root().join("tests/standins/run-app-ncu"))
        .env(crate::support::STAND_IN_GPU, crate::support::stand_in_gpu())
        .env(
            "STANDIN_NCU_LOG",
            root().join("examples/recordings/main/vector_add/n=1048576/0.csv"),
        )
        .envs(vars.iter().copied())
        .args(["profile"]);
    let (code, out) = run(c);
    assert_eq!(code, 0, "{out}");
    let text = std::fs::read(dir.path().join("program-env.txt")).unwrap();
    text.split(|&b| b == 0)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let l = String::from_utf8_lossy(l);
            let (k, v) = l.split_once('=').unwrap_or((&l, ""));
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

const CI_CREDENTIALS: [(&str, &str); 16] = [
    ("GITHUB_TOKEN", "ghs_secret1"),
    ("GH_TOKEN", "ghp_secret2"),
    ("GITLAB_TOKEN", "glpat-secret3"),
    ("CI_JOB_TOKEN", "secret4"),
    ("CI_JOB_JWT", "eyJsecret5"),
    ("CI_JOB_JWT_V2", "eyJsecret6"),
    ("CI_REGISTRY_PASSWORD", "secret7"),
    ("CI_DEPLOY_PASSWORD", "secret8"),
    (
        "CI_REPOSITORY_URL",
        "https://gitlab-ci-token:secret9@gitlab.example/x.git",
    ),
    ("BUILDKITE_AGENT_ACCESS_TOKEN", "secret10"),
    ("JENKINS_SECRET", "secret11"),
    ("ACTIONS_RUNTIME_TOKEN", "secret12"),
    ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "secret13"),
    ("MY_SERVICE_SECRET", "secret14"),
    ("DB_PASSWORD", "secret15"),
    ("OPENAI_API_KEY", "secret16"),
];

#[test]
fn no_ci_credential_reaches_the_program_under_test_unless_passed_through() {
    let mut vars: Vec<(&str, &str)> = CI_CREDENTIALS.to_vec();
    vars.extend([
        ("HF_TOKEN", "hf_secret"),
        ("CUDA_VISIBLE_DEVICES", "0"),
        ("CI_JOB_ID", "42"),
    ]);
    let env = program_env(&vars, "");
    let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
    for (k, v) in vars
        .iter()
        .filter(|(k, _)| !matches!(*k, "CUDA_VISIBLE_DEVICES" | "CI_JOB_ID"))
    {
        assert!(!names.contains(k), "{k} reached the program");
        assert!(
            !env.iter().any(|(_, val)| val.contains(v)),
            "the value of {k} reached the program"
        );
    }
    assert!(
        names.contains(&"CUDA_VISIBLE_DEVICES") && names.contains(&"CI_JOB_ID"),
        "{names:?}"
    );
    assert!(names.contains(&"PATH"));
    // Passed on purpose: under the target, and under `defaults:` (one name or a list).
    let env = program_env(&vars, "    env_passthrough: [HF_TOKEN]\n");
    assert!(env.contains(&("HF_TOKEN".to_owned(), "hf_secret".to_owned())));
    assert!(!env.iter().any(|(k, _)| k == "GITLAB_TOKEN"));
    let env = program_env(&vars, "defaults:\n  env_passthrough: HF_TOKEN\n");
    assert!(env.contains(&("HF_TOKEN".to_owned(), "hf_secret".to_owned())));
}

#[test]
fn a_bad_env_passthrough_is_a_spec_error_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let spec = "version: 1\ntargets:\n  - name: t\n    command: [./b]\n    env_passthrough: [HF_TOKEN, \"1BAD\"]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n";
    let p = dir.path().join("cgp-gate.yaml");
    std::fs::write(&p, spec).unwrap();
    let mut c = bin();
    c.args(["validate", "--spec", p.to_str().unwrap()]);
    let (code, out) = run(c);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("cgp-gate.yaml:5:33:"), "{out}");
    assert!(
        out.contains("`1BAD` in the `env_passthrough` of target `t` is not an environment variable name"),
        "{out}"
    );
}

/// No line of `out` may start a GitHub workflow command, and no terminal escape may act.

#[test]
fn a_repetition_file_named_00_csv_is_named_with_the_names_the_reader_expects() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    copy_dir(&root().join(H100).join("badlaunch"), &rec);
    let size = rec.join("matmul/n=1024");
    std::fs::rename(size.join("0.csv"), size.join("00.csv")).unwrap();
    let mut c = bin();
    c.args([
        "check",
        "--spec",
        &format!("{H100}/check.yaml"),
        "--baselines",
        "examples/baselines-h100",
        "--replay",
    ])
    .arg(&rec);
    let (code, out) = run(c);
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("has no repetition 0 (it has repetitions 1..=5)"),
        "{out}"
    );
    assert!(
        out.contains("`00.csv` in that folder is not a repetition's name"),
        "{out}"
    );
    assert!(out.contains("`0.csv`, `1.csv`"), "{out}");
}

#[test]
fn a_negative_flops_expression_is_a_spec_error_at_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let spec = std::fs::read_to_string(root().join(H100).join("check.yaml")).unwrap();
    assert!(spec.contains("    flops: 2*n*n*n\n"));
    let p = dir.path().join("check.yaml");
    std::fs::write(&p, spec.replace("    flops: 2*n*n*n\n", "    flops: -2*n*n*n\n")).unwrap();
    let line = spec.lines().position(|l| l == "    flops: 2*n*n*n").unwrap() + 1;
    for args in [
        &["validate", "--spec"][..],
        &[
            "check",
            "--baselines",
            "examples/baselines-h100",
            "--replay",
            "examples/recordings/h100/badlaunch",
            "--spec",
        ][..],
    ] {
        let mut c = bin();
        c.args(args).arg(&p);
        let (code, out) = run(c);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(
            out.contains(&format!(
                "check.yaml:{line}:12: `flops` of target `matmul` is -2147483648 at size `n=1024`"
            )),
            "{out}"
        );
    }
}

/// The run's kept folder (issue 59): `$XDG_CACHE_HOME/cgp-gate/kept/<run>`, named by the
/// listing at the end of the run's output, which must be its last lines.
fn kept_listing(out: &str, cache: &Path) -> (PathBuf, Vec<String>) {
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .rposition(|l| l.starts_with("kept for you to read in "))
        .unwrap_or_else(|| panic!("no listing of the kept folder: {out}"));
    let dir = lines[at]
        .strip_prefix("kept for you to read in ")
        .unwrap()
        .split(" (cgp-gate never removes it")
        .next()
        .unwrap();
    let dir = PathBuf::from(dir);
    assert!(dir.starts_with(cache.join("cgp-gate/kept")), "{dir:?}");
    assert!(dir.is_dir(), "{dir:?}");
    let files: Vec<String> = lines[at + 1..]
        .iter()
        .map(|l| {
            l.strip_prefix("  ")
                .unwrap_or_else(|| panic!("the listing is not last: {out}"))
                .to_owned()
        })
        .collect();
    (dir, files)
}

#[test]
fn an_error_about_a_live_runs_output_cites_a_file_that_still_exists() {
    let live = Live::new();
    // ncu's output cut after the header and units rows: damaged output.
    let cut: String = GOOD_LOG
        .lines()
        .take_while(|l| !l.starts_with("\"1\"") && !l.starts_with("\"0\","))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(live.path().join("fake/log"), cut).unwrap();
    std::fs::create_dir(live.path().join("tmp")).unwrap();
    let cache = live.path().join("cache");
    let mut c = live.cmd(&["profile"]);
    c.env("TMPDIR", live.path().join("tmp"))
        .env("XDG_CACHE_HOME", &cache);
    let (code, out) = run(c);
    assert_eq!(code, 3, "{out}");
    // The copy the error cites is in the run's one kept folder, named by what it is, and the
    // end of the run lists it (issue 59: before, each failed run left `$TMPDIR/cgp-gate-output-*`).
    let (dir, files) = kept_listing(&out, &cache);
    assert_eq!(files, ["vector_add-n=1048576-rep0.csv"], "{out}");
    let kept = dir.join(&files[0]);
    assert!(kept.is_file());
    assert!(
        out.contains(&format!("rep 0: {} holds", kept.display())),
        "the error cites the copy: {out}"
    );
    // Nothing is left in $TMPDIR: the temporary work folder is gone, and nothing else is there.
    let left: Vec<_> = std::fs::read_dir(live.path().join("tmp")).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    // What is kept is said, with what to do about it (issue 46).
    assert!(
        out.lines().any(|l| l.trim_start().starts_with("help: ")
            && l.contains(&kept.display().to_string())
            && l.contains("is a copy of the output kept for you to read")
            && l.contains("delete it when done")),
        "{out}"
    );
    // `--keep-dir DIR` (a folder of the user's, with a file of the same name already in it):
    // the copy goes there, under a new name, and the user's file is left as it was.
    let mine = live.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("vector_add-n=1048576-rep0.csv"), "my notes").unwrap();
    let mut c = live.cmd(&["profile", "--keep-dir", "mine"]);
    c.env("XDG_CACHE_HOME", &cache);
    let (code, out) = run(c);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains(&format!("kept for you to read in {}", mine.display())),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(mine.join("vector_add-n=1048576-rep0.csv")).unwrap(),
        "my notes"
    );
    assert!(mine.join("vector_add-n=1048576-rep0-2.csv").is_file(), "{out}");
}

/// Issue 46: a live run whose application fails leaves nothing in $TMPDIR (its error cites no
/// output), and the "run it by hand" line it prints names no folder that is already deleted: run
/// as printed, it works. Issue 59: and it writes nothing into the folder it is run in: its output
/// goes to the run's kept folder, which the end of the run names.
#[test]
fn a_failed_live_run_leaves_nothing_and_its_run_by_hand_line_works() {
    let live = Live::new();
    std::fs::write(live.path().join("fake/exit"), "1\n").unwrap();
    std::fs::write(live.path().join("fake/stderr"), "boom\n").unwrap();
    let tmp = live.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let cache = live.path().join("cache");
    let mut c = live.cmd(&["profile"]);
    c.env("TMPDIR", &tmp).env("XDG_CACHE_HOME", &cache);
    let (code, out) = run(c);
    assert_eq!(code, 3, "{out}");
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "left in $TMPDIR: {left:?}\n{out}");
    let (dir, files) = kept_listing(&out, &cache);
    assert!(files.is_empty(), "{out}");
    assert!(
        out.contains("nothing yet; the `run it by hand` lines above write their output there"),
        "{out}"
    );
    let line = out
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("help: run it by hand to see why: "))
        .unwrap_or_else(|| panic!("no run-by-hand line: {out}"));
    assert!(!line.contains(&tmp.display().to_string()), "{line}");
    let log = dir.join("run-0.csv");
    assert!(line.contains(&format!("--log-file {}", log.display())), "{line}");
    // Run it as printed (the stand-in ncu, now exiting 0): its log goes to the kept folder,
    // nothing into the folder it is run in.
    std::fs::remove_file(live.path().join("fake/exit")).unwrap();
    let before: Vec<_> = std::fs::read_dir(live.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let argv = shlex::split(line).unwrap();
    let status = StdCommand::new(&argv[0])
        .args(&argv[1..])
        .current_dir(live.path())
        .env("FAKE_NCU_DIR", live.path().join("fake"))
        .env(crate::support::STAND_IN_GPU, crate::support::stand_in_gpu())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(log.is_file(), "{line}");
    let after: Vec<_> = std::fs::read_dir(live.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before, after, "the hand-run wrote into the folder it was run in");
}
