//! Shared by integration tests: the one way a test says it could not run.

use std::io::Write;

/// Whether this is a CI run (`CI=true`, as GitHub Actions sets it), where a missing tool fails.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Record that `test` could not run because of `why`: under CI it fails; elsewhere it prints one
/// `SKIPPED: <test> (<why>)` line that `.ci/test` counts and takes off the passed count.
///
/// Written to the process's stderr directly, not through `eprintln!`, which the test harness
/// captures and shows only for failing tests.
pub fn skip(test: &str, why: &str) {
    assert!(
        !in_ci(),
        "{test} cannot run under CI: {why}; .ci/setup must install what it needs"
    );
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "SKIPPED: {test} ({why})");
    let _ = err.flush();
}

/// The full name of test `name` of the module at `module_path` (pass `module_path!()`) in the one
/// integration-test binary (tests/integration.rs): `gpu_clocks::child_locks_and_waits`, for a
/// test that runs its own binary again as a child with `--exact`.
pub fn test_name(module_path: &str, name: &str) -> String {
    match module_path.split_once("::") {
        Some((_, module)) => format!("{module}::{name}"),
        None => name.to_owned(),
    }
}

/// The repository root (where `cargo test` runs the tests, and where their relative paths start).
pub fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `cgp-gate` binary, run from the repository root, without GitHub Actions' variables of the
/// runner the tests may run on (a test that wants them sets them).
pub fn bin() -> assert_cmd::Command {
    let mut c = assert_cmd::cargo::cargo_bin_cmd!("cgp-gate");
    c.current_dir(root())
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .env_remove("GITHUB_SHA");
    c
}

/// Copy the folder `from` to `to`, recursively (a link to a folder is copied as the folder).
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}
