//! The library's error type and its mapping to exit codes.
//!
//! This is the foundation layer: it knows no spec and no profiler. The spec's and the profiler's
//! own error types (`spec::SpecError`, `profile::ProfileError`) convert into [`Error`] by `From`
//! impls that live beside them, and travel here as a [`Cause`].

use std::path::PathBuf;

use crate::foundation::exit_codes::{ErrorClass, Exit};
use crate::foundation::failure::FailureKind;
use crate::foundation::sanitize;

/// An error of a higher layer carried by [`Error`] without this module knowing its type. Its
/// message and its `source()` are the carried error's own (like `#[error(transparent)]`).
#[derive(Debug)]
pub struct Cause(Box<dyn std::error::Error + Send + Sync + 'static>);

impl Cause {
    pub fn new(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self(Box::new(e))
    }

    /// The carried error, when it is a `T` (`SpecError`, `ProfileError`).
    pub fn downcast_ref<T: std::error::Error + 'static>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Cause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Any failure a command can end with (nextest's `ExpectedError`): each variant has one
/// [`ErrorClass`] ([`Error::class`]), and the class its exit code ([`ErrorClass::exit`]).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The spec is invalid (exit 2): a `spec::SpecError`.
    #[error(transparent)]
    Spec(Cause),
    /// Bad command-line usage (exit 2).
    #[error("{}", sanitize::block(.0))]
    Usage(String),
    /// An input file (recording, baseline, results) is invalid (exit 2). The file's own strings
    /// in the message (kernel names, GPU names, fingerprint fields) are shown sanitised.
    #[error("{}: {}", sanitize::line(&path.display().to_string()), sanitize::block(message))]
    Input { path: PathBuf, message: String },
    /// The profiler or the application failed: a `profile::ProfileError` of this kind (exit 3;
    /// a damaged recording, [`FailureKind::BadRecording`], is invalid input: exit 2).
    #[error("{cause}")]
    Profile { kind: FailureKind, cause: Cause },
    /// The GPU or the machine is not in a state to measure (exit 3).
    #[error("{}", sanitize::block(.0))]
    Environment(String),
    /// A file could not be read or written (exit 3: the environment failed).
    #[error("failed to {action} {}: {source}", sanitize::line(&path.display().to_string()))]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// An output (a report, a manifest, a results file) could not be produced from the data in
    /// memory (exit 3): a serialiser's failure.
    #[error("failed to produce {what}: {}", sanitize::block(message))]
    Output { what: &'static str, message: String },
}

impl Error {
    /// What kind of failure this is.
    pub fn class(&self) -> ErrorClass {
        match self {
            Self::Spec(_) | Self::Usage(_) | Self::Input { .. } => ErrorClass::InvalidInput,
            Self::Profile { kind, .. } => kind.class(),
            Self::Environment(_) | Self::Io { .. } => ErrorClass::Environment,
            Self::Output { .. } => ErrorClass::Output,
        }
    }

    /// How a command that fails with this error ends.
    pub fn exit(&self) -> Exit {
        self.class().exit()
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        self.exit().code()
    }

    /// Whether this is a write to a reader that went away (`cgp-gate parse FILE --json | head`):
    /// the reader has what it wanted, so the command ends quietly with exit 0.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Self::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
    }

    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// A serialiser's failure to produce `what` (`the recording's manifest`, `the breakdown's JSON`).
    pub fn output(what: &'static str, e: impl std::fmt::Display) -> Self {
        Self::Output {
            what,
            message: e.to_string(),
        }
    }

    pub fn input(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self::Input {
            path: path.into(),
            message: message.into(),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
