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
