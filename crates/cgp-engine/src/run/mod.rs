//! Layer 4, the run: measure the work and report its progress, the one engine that `check` and
//! `ab` share, baseline rows a run should have measured (`missing`) and baseline files of targets
//! the spec no longer has (`gone`), `baseline update`, and `check` on simulated candidates through the
//! same loop (`simulate`).

pub mod ab;
pub mod check;
pub mod clock;
pub mod confirm;
pub mod engine;
pub mod measure;
#[cfg(test)]
mod mock;
pub mod ncu_why;
pub mod progress;
pub mod session;
pub mod simulate;
pub mod update;
