//! Issue 44, "an error is never a pass, round 4", item 1: one output rule for every command that
//! writes. No output path may be an input of the run, another output of the run, a FIFO, a
//! device or a symbolic link. Every test runs the binary on copies of the REAL H100 recordings
//! (`examples/recordings/h100`, `examples/baselines-h100`) and asserts exit 2, the refusal's
//! message, and that the file the output would have replaced is byte for byte unchanged
//! (docs/reliability.md, "Round 4").

use std::path::{Path, PathBuf};

use crate::support::{copy_dir, root};
use assert_cmd::Command;

const H100: &str = "examples/recordings/h100";
const BASELINES: &str = "examples/baselines-h100";

fn bin() -> Command {
    let mut c = crate::support::bin();
    c.env("CGP_GATE_NCU", "/nonexistent/ncu");
    c
}

/// A temporary folder with the real recording `aa-live` (as `rec/`), the real baselines (as
/// `baselines/`) and the real spec (as `check.yaml`).
fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root().join(H100).join("aa-live"), &dir.path().join("rec"));
    copy_dir(&root().join(BASELINES), &dir.path().join("baselines"));
    std::fs::copy(
        root().join(H100).join("check.yaml"),
        dir.path().join("check.yaml"),
    )
    .unwrap();
    dir
}

/// Run `cmd`; assert exit 2 with `refusing to write FLAG here` and that `kept` did not change.
fn refused(cmd: &mut Command, flag: &str, kept: &Path) {
    let before = std::fs::read(kept).unwrap();
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{flag} onto {}: {text}",
        kept.display()
    );
    assert!(text.contains(&format!("refusing to write {flag} here")), "{text}");
    assert_eq!(
        std::fs::read(kept).unwrap(),
        before,
        "{flag} changed {}",
        kept.display()
    );
}

fn csv(d: &Path) -> PathBuf {
    d.join("rec/matmul/n=1024/0.csv")
}

#[test]
fn ab_never_writes_over_its_spec_or_its_recording() {
    let dir = setup();
    let d = dir.path();
    let spec = d.join("check.yaml");
    for flag in ["--json", "--markdown", "--html", "--junit"] {
        for kept in [spec.clone(), csv(d), d.join("rec/manifest.json")] {
            refused(
                bin()
                    .args(["ab", "--spec"])
                    .arg(&spec)
                    .arg("--replay")
                    .arg(d.join("rec"))
                    .arg(flag)
                    .arg(&kept),
                flag,
                &kept,
            );
        }
    }
}

#[test]
fn calibrate_never_writes_over_its_spec_or_its_recording() {
    let dir = setup();
    let d = dir.path();
    let spec = d.join("check.yaml");
    for (flag, kept) in [("--json", spec.clone()), ("--markdown", csv(d))] {
        refused(
            bin()
                .args(["calibrate", "--spec"])
                .arg(&spec)
                .arg("--replay")
                .arg(d.join("rec"))
                .arg(flag)
                .arg(&kept),
            flag,
            &kept,
        );
    }
}

/// A real results file of `check --replay` on the real recording.
fn results(d: &Path, name: &str) -> PathBuf {
    let json = d.join(name);
    let out = bin()
        .args(["check", "--color", "never", "--spec"])
        .arg(d.join("check.yaml"))
        .arg("--baselines")
        .arg(d.join("baselines"))
        .arg("--replay")
        .arg(d.join("rec"))
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json
}

#[test]
fn changes_and_breakdown_never_write_over_their_inputs() {
    let dir = setup();
    let d = dir.path();
    let a = results(d, "a.json");
    for flag in ["--json", "--markdown", "--html"] {
        refused(
            bin().arg("changes").arg(&a).arg(&a).arg(&a).arg(flag).arg(&a),
            flag,
            &a,
        );
    }
    // `breakdown k.csv --json k.csv`: refused before the file is read.
    let k = d.join("k.csv");
    std::fs::write(&k, "kernel,ns\n").unwrap();
    for flag in ["--json", "--csv", "--html"] {
        refused(bin().arg("breakdown").arg(&k).arg(flag).arg(&k), flag, &k);
    }
}

#[test]
fn two_outputs_onto_one_path_are_refused() {
    let dir = setup();
    let d = dir.path();
    let both = d.join("both");
    std::fs::write(&both, "mine").unwrap();
    refused(
        bin()
            .args(["check", "--spec"])
            .arg(d.join("check.yaml"))
            .arg("--baselines")
            .arg(d.join("baselines"))
            .arg("--replay")
            .arg(d.join("rec"))
            .arg("--json")
            .arg(&both)
            .arg("--markdown")
            .arg(&both),
        "--markdown",
        &both,
    );
    let a = results(d, "a.json");
    refused(
        bin()
            .arg("changes")
            .arg(&a)
            .arg(&a)
            .arg("--json")
            .arg(&both)
            .arg("--html")
            .arg(&both),
        "--html",
        &both,
    );
}

#[cfg(unix)]
#[test]
fn links_fifos_and_devices_are_refused_without_opening_them() {
    let dir = setup();
    let d = dir.path();
    let user = d.join("user-file");
    std::fs::write(&user, "the user's own data").unwrap();
    let link = d.join("link.json");
    std::os::unix::fs::symlink(&user, &link).unwrap();
    let fifo = d.join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let check = |out: &Path| {
        let mut c = bin();
        c.args(["check", "--spec"])
            .arg(d.join("check.yaml"))
            .arg("--baselines")
            .arg(d.join("baselines"))
            .arg("--replay")
            .arg(d.join("rec"))
            .arg("--json")
            .arg(out);
        c
    };
    refused(&mut check(&link), "--json", &user);
    // A FIFO with no reader: refused from its type, never opened (an open would block here).
    let out = check(&fifo).output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("FIFO"), "{text}");
    let out = check(Path::new("/dev/null")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("a symbolic link")
            || String::from_utf8_lossy(&out.stderr).contains("a device")
    );
    // `man --dir` writes no page through a link.
    let man = d.join("man");
    std::fs::create_dir_all(&man).unwrap();
    std::os::unix::fs::symlink(&user, man.join("cgp-gate-check.1")).unwrap();
    refused(bin().args(["man", "--dir"]).arg(&man), "man --dir", &user);
    // `init --output` onto its own `--from` capture.
    let from = csv(d);
    refused(
        bin()
            .args(["init", "--force", "--from"])
            .arg(&from)
            .arg("--output")
            .arg(&from),
        "--output",
        &from,
    );
}

// ---- Item 4: secrets --------------------------------------------------------------------------

/// A live `check` (the stand-in ncu `tests/standins/run-app-ncu` runs the program as ncu would)
/// of a program that prints secrets and fails: no report, nor the console, holds them.
#[test]
fn secrets_the_program_prints_reach_no_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spec = "version: 1\ntargets:\n  - name: leaky\n    command: [sh, -c, \"echo GH_PAT=ghsecretvalue1; echo token=tksecretvalue2 >&2; echo OPENAI_KEY: sk-proj-AAAAAAAAAAAAAAAAAAAAAAAA >&2; exit 1\"]\n    kernel: vector_add\n    timeout: 20s\n    repetitions: 1\n    sizes: [{n: 1}]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n";
    std::fs::write(d.join("cgp-gate.yaml"), spec).unwrap();
    std::fs::create_dir_all(d.join("baselines")).unwrap();
    let out = crate::support::bin()
        .current_dir(d)
        .env("CGP_GATE_NCU", root().join("tests/standins/run-app-ncu"))
        .env(crate::support::STAND_IN_GPU, crate::support::stand_in_gpu())
        .env(
            "STANDIN_NCU_LOG",
            root().join("examples/recordings/main/vector_add/n=1048576/0.csv"),
        )
        .env("GITHUB_STEP_SUMMARY", d.join("summary.md"))
        .args([
            "check",
            "--allow-no-baselines",
            "--baselines",
            "baselines",
            "--json",
            "r.json",
        ])
        .args(["--markdown", "r.md", "--html", "r.html", "--junit", "r.xml"])
        .output()
        .unwrap();
    let console = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{console}");
    let json = std::fs::read_to_string(d.join("r.json")).unwrap();
    // The live path was reached: the run error quotes the program's output, redacted.
    assert!(json.contains("GH_PAT=[redacted]"), "{json}");
    let mut texts = vec![("console", console), ("json", json)];
    for f in ["r.md", "r.html", "r.xml"] {
        let text = std::fs::read_to_string(d.join(f)).unwrap();
        assert!(
            text.contains("[redacted]"),
            "{f} does not quote the output:\n{text}"
        );
        texts.push((f, text));
    }
    texts.push((
        "summary",
        std::fs::read_to_string(d.join("summary.md")).unwrap_or_default(),
    ));
    for (what, text) in &texts {
        for secret in ["ghsecretvalue1", "tksecretvalue2", "sk-proj-AAAA"] {
            assert!(!text.contains(secret), "{secret} in {what}:\n{text}");
        }
    }
}

#[test]
fn secret_like_variables_do_not_reach_the_program() {
    let vars = [
        ("GH_PAT", "secretA"),
        ("OPENAI_KEY", "secretB"),
        ("SSH_AUTH_SOCK", "/tmp/secretC"),
        ("DOCKER_AUTH_CONFIG", "secretD"),
        ("MY_TOKEN_2", "secretE"),
        ("MAX_TOKENS", "512"),
    ];
    let env = crate::record_secrets_and_signals::program_env(&vars, "");
    for (k, v) in &vars[..5] {
        assert!(
            !env.iter().any(|(n, val)| n == k || val == v),
            "{k} reached the program"
        );
    }
    assert!(env.contains(&("MAX_TOKENS".to_owned(), "512".to_owned())));
}

#[test]
fn env_passthrough_of_a_ci_credential_needs_a_second_key() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cgp-gate.yaml");
    for name in [
        "GITHUB_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
        "CI_JOB_TOKEN",
        "GITLAB_TOKEN",
    ] {
        let spec = format!(
            "version: 1\ntargets:\n  - name: t\n    command: [./b]\n    env_passthrough: [HF_TOKEN, {name}]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n"
        );
        std::fs::write(&p, &spec).unwrap();
        let out = bin().args(["validate", "--spec"]).arg(&p).output().unwrap();
        let text = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {text}");
        assert!(text.contains("cgp-gate.yaml:5:33:"), "{text}");
        assert!(
            text.contains(&format!(
                "`{name}` in the `env_passthrough` of target `t` is a credential of the CI job"
            )),
            "{text}"
        );
        assert!(text.contains("env_passthrough_ci_credentials"), "{text}");
        // Acknowledged by the second key: valid.
        let acked = spec.replace(
            "    metrics:",
            &format!("    env_passthrough_ci_credentials: [{name}]\n    metrics:"),
        );
        std::fs::write(&p, acked).unwrap();
        let out = bin().args(["validate", "--spec"]).arg(&p).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

// ---- Item 7 ------------------------------------------------------------------------------------

#[test]
fn a_negative_share_of_the_peak_is_damaged_input() {
    let dir = setup();
    let d = dir.path();
    crate::reliability_samples::set_cell(
        &csv(d),
        0,
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "-5",
    );
    let out = bin()
        .args(["check", "--spec"])
        .arg(d.join("check.yaml"))
        .arg("--baselines")
        .arg(d.join("baselines"))
        .arg("--replay")
        .arg(d.join("rec"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("negative share of the peak"), "{text}");
}

#[test]
fn changes_with_last_zero_is_a_usage_error() {
    let dir = setup();
    let d = dir.path();
    let a = results(d, "same.json");
    let out = bin()
        .arg("changes")
        .arg(&a)
        .arg(&a)
        .args(["--last", "0"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("--last 0 leaves no results file"), "{text}");
}
