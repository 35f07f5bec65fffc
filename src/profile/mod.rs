//! Profilers: the only hardware-bound part of cgp-gate, behind one trait.
//!
//! [`Profiler::capture`] runs one repetition of one target x size and returns the raw profiler
//! output as the profiler wrote it. The live backend runs `ncu`; the replay backend reads a
//! recording. Parsing, failure classification and sample extraction are shared (`extract`), so
//! a recorded failure is classified exactly like a live one.

pub mod error;

pub use error::{FailureKind, ProfileError};

use std::path::PathBuf;

use crate::spec::{Size, Target};

/// One repetition of one target x size.
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    pub target: &'a Target,
    pub size: &'a Size,
    pub rep: u32,
}

/// Raw output of one profiler run.
#[derive(Debug, Clone)]
pub struct Capture {
    /// The profiler's output as written (ncu's `--log-file`: `==PROF==` lines and the CSV).
    pub raw: String,
    /// Where `raw` was read from or kept, for messages.
    pub origin: PathBuf,
    /// The exact argv that produced it, when known.
    pub argv: Option<Vec<String>>,
    /// Wall time of the run in seconds, when measured.
    pub wall_seconds: Option<f64>,
}

/// A source of raw profiler output.
pub trait Profiler {
    /// `ncu` or `replay`.
    fn name(&self) -> &'static str;
    /// The profiler's version string (`2025.1.1.0`), or `unknown`.
    ///
    /// # Errors
    /// When the profiler cannot be found or run.
    fn version(&mut self) -> Result<String, ProfileError>;
    /// Run (or read) one repetition.
    ///
    /// # Errors
    /// A classified [`ProfileError`].
    fn capture(&mut self, job: Job<'_>) -> Result<Capture, ProfileError>;
}
