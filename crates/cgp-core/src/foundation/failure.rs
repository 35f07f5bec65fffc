//! How a profiler run failed: the classification every profiler backend (ncu's log scanner,
//! the live and replay profilers), the results and the reports share. `profile::ProfileError`
//! pairs it with a context and a hint.

/// The class of a profiler failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
    /// What kind of failure this is: a damaged recording is the user's input to fix (exit 2),
    /// every other kind the profiler's or the application's (exit 3).
    pub const fn class(self) -> crate::foundation::exit_codes::ErrorClass {
        use crate::foundation::exit_codes::ErrorClass;
        match self {
            Self::BadRecording => ErrorClass::InvalidInput,
            Self::NcuNotFound
            | Self::Permission
            | Self::ResourceUnavailable
            | Self::InvalidMetric
            | Self::NoKernels
            | Self::AppFailed
            | Self::Timeout
            | Self::ProfilerError
            | Self::BadOutput
            | Self::Recording
            | Self::Io => ErrorClass::Profiler,
        }
    }

    /// Every kind, for reading the stable identifiers back.
    pub const ALL: [Self; 12] = [
        Self::NcuNotFound,
        Self::Permission,
        Self::ResourceUnavailable,
        Self::InvalidMetric,
        Self::NoKernels,
        Self::AppFailed,
        Self::Timeout,
        Self::ProfilerError,
        Self::BadOutput,
        Self::Recording,
        Self::BadRecording,
        Self::Io,
    ];

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
