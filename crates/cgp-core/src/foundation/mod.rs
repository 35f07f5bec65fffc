//! Layer 0, the foundation: exit codes, units, atomic writes, the threshold type, the crate's
//! error and the kinds of profiler failure. No knowledge of GPUs, specs or runs.

pub mod cleanup;
pub mod error;
pub mod exit_codes;
pub mod failure;
pub mod fsutil;
pub mod pipe;
pub mod program;
pub mod redact;
pub mod sanitize;
pub mod secrets;
pub mod threshold;
pub mod units;
