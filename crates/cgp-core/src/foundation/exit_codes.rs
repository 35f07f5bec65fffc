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

/// How a command ended: what its process exit code says. Commands return it (or an
/// [`crate::Error`], whose [`ErrorClass`] gives one); `cli::main` turns it into the process's code,
/// once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// [`OK`]: the gate passed, or the command succeeded.
    Ok,
    /// [`REGRESSION`]: the gate failed.
    Regression,
    /// [`INVALID_INPUT`].
    InvalidInput,
    /// [`PROFILER_FAILURE`].
    ProfilerFailure,
}

impl Exit {
    /// The process exit code.
    pub const fn code(self) -> i32 {
        match self {
            Self::Ok => OK,
            Self::Regression => REGRESSION,
            Self::InvalidInput => INVALID_INPUT,
            Self::ProfilerFailure => PROFILER_FAILURE,
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        // The codes are 0 to 3.
        Self::from(u8::try_from(e.code()).unwrap_or(u8::MAX))
    }
}

/// What kind of failure an expected error is: the one classification of [`crate::Error`]s and
/// of the failures a run lists (`results::ErrorKind`), mapped to exit codes by [`ErrorClass::exit`]
/// only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorClass {
    /// The user must fix an input: the spec, the command line, a baseline, results file or
    /// recording (also one the measurement shows to be impossible, or a damaged recording).
    InvalidInput,
    /// The profiler or the application failed.
    Profiler,
    /// The GPU, the machine, a file system or a service (GitHub, GitLab) failed.
    Environment,
    /// An output (a report, a results file) could not be produced.
    Output,
}

impl ErrorClass {
    /// The exit code of a failure of this class: the one mapping.
    pub const fn exit(self) -> Exit {
        match self {
            Self::InvalidInput => Exit::InvalidInput,
            Self::Profiler | Self::Environment | Self::Output => Exit::ProfilerFailure,
        }
    }

    /// The class that decides the exit code of several failures: invalid input, which the user
    /// must fix first, before any other; `None` for no failures.
    pub fn first(classes: impl IntoIterator<Item = Self>) -> Option<Self> {
        classes.into_iter().min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_class_maps_to_its_documented_code() {
        assert_eq!(ErrorClass::InvalidInput.exit().code(), INVALID_INPUT);
        for c in [ErrorClass::Profiler, ErrorClass::Environment, ErrorClass::Output] {
            assert_eq!(c.exit().code(), PROFILER_FAILURE);
        }
        assert_eq!(
            ErrorClass::first([ErrorClass::Profiler, ErrorClass::InvalidInput, ErrorClass::Output]),
            Some(ErrorClass::InvalidInput)
        );
        assert_eq!(ErrorClass::first([]), None);
        let codes: Vec<i32> = [
            Exit::Ok,
            Exit::Regression,
            Exit::InvalidInput,
            Exit::ProfilerFailure,
        ]
        .map(Exit::code)
        .to_vec();
        assert_eq!(codes, TABLE.iter().map(|(c, _)| *c).collect::<Vec<_>>());
    }
}
