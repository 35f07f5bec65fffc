//! Nsight Compute: output parsing, log scanning, version parsing, argv building and running.

pub mod command;
pub mod install;
pub mod log;
pub mod parse;
pub mod query;
pub mod runner;
pub mod target;
pub mod version;
