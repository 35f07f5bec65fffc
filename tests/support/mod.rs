//! The root's integration tests reach what tests share through the support crate
//! (crates/cgp-test-support); only the binary's path is this package's to give.

pub(crate) use cgp_test_support::*;

/// The binary's cache folder in the tests (`XDG_CACHE_HOME`: the CUPTI injection library, and
/// the kept folder of each failed live run, issue 59), under cargo's target/tmp rather than the
/// user's ~/.cache. A test that looks at a kept folder sets its own.
const TEST_CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache");

/// The `cgp-gate` binary, run from the repository root, without GitHub Actions' variables of the
/// runner the tests may run on (a test that wants them sets them).
pub fn bin() -> assert_cmd::Command {
    let mut c = command(env!("CARGO_BIN_EXE_cgp-gate"));
    c.env("XDG_CACHE_HOME", TEST_CACHE);
    c
}

/// [`bin`] as a `std::process::Command`, for a test that spawns the binary and signals or waits
/// on it.
pub fn bin_std() -> std::process::Command {
    let mut c = command_std(env!("CARGO_BIN_EXE_cgp-gate"));
    c.env("XDG_CACHE_HOME", TEST_CACHE);
    c
}

/// The real nsys keeps one agent per machine: two of its runs at once (the tests run as threads
/// of one binary) can cut each other off ("End of file"). Every test that runs the real nsys,
/// in any file, takes its turn here.
pub fn real_nsys_turn() -> std::sync::MutexGuard<'static, ()> {
    static REAL_NSYS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    REAL_NSYS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `examples/cgp-gate.yaml` with `settings.job_spread: "0%"`, written into `dir`: the SYNTHETIC demo
/// recordings and baselines (examples/recordings, examples/baselines) come from one seeded model
/// with no drift between jobs (examples/synthesize_recording.rs), so tests of what sharding or
/// merging does with their verdicts take none. A real runner keeps the default prior (issue 57:
/// with it, the planted +6 % is decided at the second look, and nearer the level a shard spends).
pub fn synthetic_spec_without_job_drift(dir: &std::path::Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(root().join("examples/cgp-gate.yaml")).unwrap();
    let at = text
        .find("version: 1\n")
        .expect("examples/cgp-gate.yaml has `version: 1`")
        + "version: 1\n".len();
    let path = dir.join("cgp-gate.synthetic.yaml");
    std::fs::write(
        &path,
        format!("{}settings:\n  job_spread: \"0%\"\n{}", &text[..at], &text[at..]),
    )
    .unwrap();
    path
}

/// The processes a spec `init` wrote asks for (its `repetitions:`): a test that imports files for
/// it imports that many copies, as a user following the spec's comment would (issue 57: `init
/// --from` a file of summaries plans enough processes for the t test to decide).
pub fn spec_repetitions(spec: &std::path::Path) -> usize {
    let text = std::fs::read_to_string(spec).unwrap();
    text.lines()
        .find_map(|l| l.trim().strip_prefix("repetitions: ")?.trim().parse().ok())
        .unwrap_or_else(|| panic!("{} has no `repetitions:`\n{text}", spec.display()))
}

/// `git -C dir ARGS` as a scratch repository's committer (no signing), its stdout trimmed; a
/// failure fails the test with git's stderr.
pub fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}
