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
