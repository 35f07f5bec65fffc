//! Nsight Compute: output parsing, log scanning, version parsing, argv building and running.

pub mod log;
pub mod parse;
pub mod version;
