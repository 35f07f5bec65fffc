//! The library's error type and its mapping to exit codes.

use std::path::PathBuf;

use crate::exit_codes;
use crate::profile::ProfileError;
use crate::spec::SpecError;

/// Any failure a command can end with. Each variant maps to one documented exit code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The spec is invalid (exit 2).
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// Bad command-line usage (exit 2).
    #[error("{0}")]
    Usage(String),
    /// An input file (recording, baseline, results) is invalid (exit 2).
    #[error("{}: {message}", path.display())]
    Input { path: PathBuf, message: String },
    /// The profiler or the application failed (exit 3).
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// The GPU or the machine is not in a state to measure (exit 3).
    #[error("{0}")]
    Environment(String),
    /// A file could not be read or written (exit 3: the environment failed).
    #[error("failed to {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::Spec(_) | Self::Usage(_) | Self::Input { .. } => exit_codes::INVALID_INPUT,
            Self::Profile(_) | Self::Environment(_) | Self::Io { .. } => exit_codes::PROFILER_FAILURE,
        }
    }

    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
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
