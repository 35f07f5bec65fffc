//! What Nsight Compute writes, parse-only: the `--csv` pages ([`parse`]: raw, details, summary,
//! into launches) and the log lines around them ([`log`]: errors, usage errors, the kernels it
//! lists). Running ncu (argv, the runner, where it is, its version) is `cgp-profile`'s `ncu`,
//! which imports these two for itself as `crate::ncu::parse` and `crate::ncu::log`.

pub mod log;
pub mod parse;
