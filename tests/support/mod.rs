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
