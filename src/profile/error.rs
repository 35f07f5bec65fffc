//! Classified profiler failures. Every one maps to exit code 3 and says what to do.

use std::fmt;

/// The class of a profiler failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// `ncu` is not on `PATH` (or `CGP_GATE_NCU` points nowhere).
    NcuNotFound,
    /// `ERR_NVGPUCTRPERM`: no access to the GPU performance counters.
    Permission,
    /// Another tool (DCGM) holds the counters.
    ResourceUnavailable,
    /// ncu does not know a requested metric.
    InvalidMetric,
    /// No kernel was profiled, or the kernel filter matched nothing.
    NoKernels,
    /// The application exited non-zero.
    AppFailed,
    /// The run exceeded the target's timeout.
    Timeout,
    /// Any other `==ERROR==` from ncu or the driver.
    ProfilerError,
    /// The output could not be parsed, or lacks a requested metric.
    BadOutput,
    /// A recording lacks what the command needs.
    Recording,
    /// A recorded file is damaged or not a file cgp-gate reads (not UTF-8, cut off, not a regular
    /// file, too large): invalid input, exit 2, never a value.
    BadRecording,
    /// Files or processes could not be handled.
    Io,
}

impl FailureKind {
    /// Stable identifier used in results files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NcuNotFound => "ncu-not-found",
            Self::Permission => "permission",
            Self::ResourceUnavailable => "resource-unavailable",
            Self::InvalidMetric => "invalid-metric",
            Self::NoKernels => "no-kernels",
            Self::AppFailed => "app-failed",
            Self::Timeout => "timeout",
            Self::ProfilerError => "profiler-error",
            Self::BadOutput => "bad-output",
            Self::Recording => "recording",
            Self::BadRecording => "bad-recording",
            Self::Io => "io",
        }
    }
}

/// A profiler failure with its context and a hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileError {
    pub kind: FailureKind,
    /// `target[size] rep N`, or whatever locates the failure.
    pub context: String,
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl ProfileError {
    pub fn new(kind: FailureKind, context: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind,
            context: context.into(),
            message: message.into(),
            hint: None,
        }
    }

    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.context.is_empty() {
            write!(f, "{}", self.message)?;
        } else {
            write!(f, "{}: {}", self.context, self.message)?;
        }
        if let Some(h) = &self.hint {
            write!(f, "\n  help: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ProfileError {}

/// The crate's error carries a profiler failure as [`crate::error::Error::Profile`] (exit 3).
impl From<ProfileError> for crate::error::Error {
    fn from(e: ProfileError) -> Self {
        Self::Profile(crate::error::Cause::new(e))
    }
}
