//! Spec errors: always with the file, and a line and column when the YAML has one.

use std::fmt;
use std::path::PathBuf;

/// An invalid spec. Displayed as `path:line:column: message` plus an optional `help:` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    pub path: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// What is wrong, as a lowercase fragment.
    pub message: String,
    /// What is allowed or what to do.
    pub help: Option<String>,
    /// The spec's other errors, independent of this one, in file order: `validate` and every
    /// command report them all in one run.
    pub also: Box<[SpecError]>,
}

impl SpecError {
    pub fn new(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            line: None,
            column: None,
            message: message.into(),
            help: None,
            also: Box::default(),
        }
    }

    #[must_use]
    pub fn at(mut self, line: usize, column: usize) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    #[must_use]
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The message quotes the spec's own strings (names, keys, metrics, regexes, sizes): a
        // newline or an escape in them stays on this one line, escaped.
        use crate::foundation::sanitize::{block, line};
        write!(f, "{}", line(&self.path.display().to_string()))?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        write!(f, ": {}", line(&self.message))?;
        if let Some(h) = &self.help {
            write!(f, "\n  help: {}", block(h))?;
        }
        for other in &self.also {
            write!(f, "\nerror: {other}")?;
        }
        if !self.also.is_empty() {
            write!(f, "\n{} errors in the spec", self.also.len() + 1)?;
        }
        Ok(())
    }
}

impl std::error::Error for SpecError {}

/// At most this many errors of one spec are reported in one run.
pub(crate) const MAX_REPORTED: usize = 20;

/// The errors a load kept, as one error (the first in file order, carrying the others), or
/// `Ok` when there were none.
///
/// # Errors
/// The first error, with the rest in [`SpecError::also`].
pub(crate) fn collected(mut errors: Vec<SpecError>) -> Result<(), SpecError> {
    if errors.is_empty() {
        return Ok(());
    }
    errors.sort_by_key(|e| (e.line.unwrap_or(0), e.column.unwrap_or(0)));
    errors.dedup_by(|a, b| a.line == b.line && a.column == b.column && a.message == b.message);
    // A spec that is wrong everywhere (a file that is not a spec) gets the first ones only.
    if errors.len() > MAX_REPORTED {
        let more = errors.len() - MAX_REPORTED;
        let path = errors[0].path.clone();
        errors.truncate(MAX_REPORTED);
        errors.push(
            SpecError::new(path, format!("{more} more error(s) not shown"))
                .help("fix these first, then run `cgp-gate validate` again"),
        );
    }
    let mut first = errors.remove(0);
    first.also = errors.into_boxed_slice();
    Err(first)
}

/// The crate's error carries a spec error as [`crate::foundation::error::Error::Spec`] (exit 2).
impl From<SpecError> for crate::foundation::error::Error {
    fn from(e: SpecError) -> Self {
        Self::Spec(crate::foundation::error::Cause::new(e))
    }
}
