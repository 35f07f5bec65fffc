//! Nsight Compute, the program: argv building, running, where it is, version parsing. Its output
//! (the CSV pages and the log lines) is read by `cgp-read`'s `ncu_output`, parse-only, imported
//! here as `parse` and `log` for this crate.

pub mod command;
pub mod install;
pub mod query;
pub mod runner;
pub mod target;
pub mod version;

pub(crate) use cgp_read::ncu_output::{log, parse};
