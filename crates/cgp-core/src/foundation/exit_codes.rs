//! Process exit codes: part of cgp-gate's public interface.
//!
//! CI scripts branch on these, so they never change meaning. "Regression" and "the tool or the GPU
//! failed" are distinct on purpose: an error is never a pass, and never looks like a regression.

/// The gate passed (improvements and inconclusive rows are warnings), or the command succeeded.
pub const OK: i32 = 0;
/// At least one regression (or, under `--fail-on inconclusive`, an inconclusive row).
pub const REGRESSION: i32 = 1;
/// Invalid input or usage: the spec, the command line, a baseline or results file.
pub const INVALID_INPUT: i32 = 2;
/// The profiler or the environment failed: ncu, the application, the GPU, permissions, a fingerprint mismatch.
pub const PROFILER_FAILURE: i32 = 3;

/// Every code with its one-line meaning, for `--help` and the docs.
pub const TABLE: &[(i32, &str)] = &[
    (
        OK,
        "pass: no regression (improvements and inconclusive rows are warnings)",
    ),
    (
        REGRESSION,
        "at least one regression (or inconclusive row with --fail-on inconclusive)",
    ),
    (
        INVALID_INPUT,
        "invalid input or usage: spec, arguments, baseline or results files",
    ),
    (
        PROFILER_FAILURE,
        "profiler or environment failure: ncu, the application, the GPU, permissions",
    ),
];

/// The exit-code section of `--help`, from [`TABLE`].
pub fn help() -> String {
    let mut s = String::from("Exit codes:");
    for (code, meaning) in TABLE {
        s.push_str(&format!("\n  {code}  {meaning}"));
    }
    s
}
