//! Building another commit of the user's repository, as `bisect` and `check --base` do (issue
//! 58, items 3 and 8): the build command never sees the CI job's credentials, a build that never
//! ends is stopped (`--build-timeout`), and SIGTERM or Ctrl-C leaves no worktree entry, no
//! temporary folder and no build process behind. Each on the scratch project of
//! tests/confirm_cli.rs (SYNTHETIC stand-in harness), whose base commit's build is the test's.

use std::time::{Duration, Instant};

use crate::confirm_cli::{Project, git};

/// The CI job's credentials cgp-gate knows (`foundation::secrets`), with values a build could
/// leak.
const TOKENS: [(&str, &str); 7] = [
    ("GITHUB_TOKEN", "ghs_tokenFORthebuild0001"),
    ("GITLAB_TOKEN", "glpat-tokenFORthebuild02"),
    ("CI_JOB_TOKEN", "cijobtokenFORthebuild003"),
    ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "oidcFORthebuild000000004"),
    ("ACTIONS_RUNTIME_TOKEN", "runtimeFORthebuild000005"),
    (
        "ACTIONS_ID_TOKEN_REQUEST_URL",
        "https://oidc.example/FORthebuild6",
    ),
    ("AWS_SECRET_ACCESS_KEY", "awsFORthebuild0000000007"),
];

/// A base commit whose build dumps its environment, then fails.
const DUMP_ENV: &str = "env > \"$ENVDUMP\"\nexit 1\n";

#[test]
fn no_credential_of_the_ci_job_reaches_the_build_of_bisect_or_check_base() {
    let p = Project::new("1.0", "1.08", DUMP_ENV);
    let dump = p.path("env.txt");
    let base = p.base.clone();
    let head = p.head.clone();
    let runs: [(&str, Vec<&str>); 2] = [
        ("check --base", vec!["check", "--base", &base]),
        ("bisect", vec!["bisect", "--good", &base, "--bad", &head]),
    ];
    for (what, args) in runs {
        let _ = std::fs::remove_file(&dump);
        let mut c = p.cmd(&args, "0.99");
        c.env("ENVDUMP", &dump).env("CGP_TEST_VISIBLE", "yes");
        for (k, v) in TOKENS {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
        // The build failed on purpose, after writing what it saw: exit 3.
        assert_eq!(out.status.code(), Some(3), "{what}: {text}");
        let env = std::fs::read_to_string(&dump)
            .unwrap_or_else(|_| panic!("{what}: the build did not run: {text}"));
        assert!(env.contains("CGP_TEST_VISIBLE=yes"), "{what}: {env}");
        for (k, v) in TOKENS {
            assert!(
                !env.contains(k) && !env.contains(v),
                "{what}: {k} reached the build:\n{env}"
            );
            assert!(!text.contains(v), "{what}: {k}'s value printed:\n{text}");
        }
        p.untouched(&text);
    }
}

#[test]
fn a_build_that_never_ends_is_stopped_at_build_timeout() {
    let p = Project::new("1.0", "1.08", "echo $$ > \"$BUILDLOG\"\nexec sleep 120\n");
    let base = p.base.clone();
    let head = p.head.clone();
    let runs: [(&str, Vec<&str>); 2] = [
        (
            "check --base",
            vec!["check", "--base", &base, "--build-timeout", "2s"],
        ),
        (
            "bisect",
            vec!["bisect", "--good", &base, "--bad", &head, "--build-timeout", "2s"],
        ),
    ];
    for (what, args) in runs {
        let started = Instant::now();
        let out = p
            .cmd(&args, "0.99")
            .timeout(Duration::from_secs(90))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(3), "{what}: {text}");
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{what}: {:?}",
            started.elapsed()
        );
        assert!(
            text.contains("did not end within 2s") && text.contains("sh build.sh"),
            "{what}: {text}"
        );
        let pid = std::fs::read_to_string(p.path("build.log")).unwrap();
        assert!(gone(pid.trim()), "{what}: the build {pid} still runs");
        p.untouched(&text);
    }
    // The default is stated where users look.
    for cmd in ["check", "bisect"] {
        let out = crate::support::bin().args([cmd, "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains("--build-timeout") && help.contains("Default 30m"),
            "{cmd}: {help}"
        );
    }
}

/// The process `pid` has ended (and been reaped).
fn gone(pid: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.contains(") Z ") {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// SIGTERM or SIGINT while the base's build runs: exit 3, and the worktree, its entry in the
/// repository, the temporary folder and the build are all gone.
fn signal_during_the_build(p: &Project, args: &[&str], signal: nix::sys::signal::Signal) {
    let _ = std::fs::remove_file(p.path("build.log"));
    let child = p
        .cmd_std(args, "0.99")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !p.path("build.log").exists() {
        assert!(Instant::now() < deadline, "{args:?}: the build never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The worktree is there while the build runs.
    assert_eq!(
        git(&p.repo(), &["worktree", "list"]).lines().count(),
        2,
        "{args:?}"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        signal,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{args:?}: {text}");
    assert!(
        text.contains("received") && text.contains("temporary folders removed"),
        "{args:?}: {text}"
    );
    let pid = std::fs::read_to_string(p.path("build.log")).unwrap();
    assert!(gone(pid.trim()), "{args:?}: the build {pid} still runs");
    p.untouched(&text);
    assert!(
        std::fs::read_dir(p.repo().join(".git/worktrees")).map_or(true, |mut d| d.next().is_none()),
        "{args:?}: a worktree entry is left in .git/worktrees"
    );
}

#[test]
fn sigterm_and_ctrl_c_leave_no_worktree_no_temporary_folder_and_no_build() {
    use nix::sys::signal::Signal;
    let p = Project::new("1.0", "1.08", "echo $$ > \"$BUILDLOG\"\nexec sleep 120\n");
    let base = p.base.clone();
    let head = p.head.clone();
    for signal in [Signal::SIGTERM, Signal::SIGINT] {
        signal_during_the_build(&p, &["check", "--base", &base], signal);
        signal_during_the_build(&p, &["bisect", "--good", &base, "--bad", &head], signal);
    }
}
