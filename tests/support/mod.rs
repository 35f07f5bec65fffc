//! The root's integration tests reach what tests share through the support crate
//! (crates/cgp-test-support); only the binary's path is this package's to give.

pub(crate) use cgp_test_support::*;

/// The `cgp-gate` binary, run from the repository root, without GitHub Actions' variables of the
/// runner the tests may run on (a test that wants them sets them).
pub fn bin() -> assert_cmd::Command {
    command(env!("CARGO_BIN_EXE_cgp-gate"))
}

/// [`bin`] as a `std::process::Command`, for a test that spawns the binary and signals or waits
/// on it.
pub fn bin_std() -> std::process::Command {
    command_std(env!("CARGO_BIN_EXE_cgp-gate"))
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
