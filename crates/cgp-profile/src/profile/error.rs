//! Classified profiler failures. Every one says what to do; its kind gives its exit code
//! (`FailureKind::class`: 3, or 2 for a damaged recording).

use std::fmt;

/// The class of a profiler failure: defined in the foundation, so that the profilers' own
/// parsers (`ncu::log`) classify without importing this layer.
pub use crate::foundation::failure::FailureKind;

/// A profiler failure with its context and a hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileError {
    pub kind: FailureKind,
    /// `target[size] rep N`, or whatever locates the failure.
    pub context: String,
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
    /// For [`FailureKind::NoKernels`] of a target with a `kernel:` filter: the kernels that ran,
    /// none of which the filter selects (a library that switched kernels). Empty otherwise.
    pub unselected: Vec<String>,
}

impl ProfileError {
    pub fn new(kind: FailureKind, context: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind,
            context: context.into(),
            message: message.into(),
            hint: None,
            unselected: Vec::new(),
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
        // The message may quote the program's output (lines kept, each sanitised); the context
        // names a target and size from the spec (one line).
        use crate::foundation::sanitize::{block, line};
        if self.context.is_empty() {
            write!(f, "{}", block(&self.message))?;
        } else {
            write!(f, "{}: {}", line(&self.context), block(&self.message))?;
        }
        if let Some(h) = &self.hint {
            write!(f, "\n  help: {}", block(h))?;
        }
        Ok(())
    }
}

impl std::error::Error for ProfileError {}

/// The crate's error carries a profiler failure as [`crate::foundation::error::Error::Profile`]
/// with its kind (exit 3; a damaged recording: 2).
impl From<ProfileError> for crate::foundation::error::Error {
    fn from(e: ProfileError) -> Self {
        Self::Profile {
            kind: e.kind,
            cause: crate::foundation::error::Cause::new(e),
        }
    }
}
