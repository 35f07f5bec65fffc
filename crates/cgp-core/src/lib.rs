//! cgp-core, the bottom of cgp-gate's layers (docs/architecture.md): pure code that every other
//! crate builds on, and that builds on no profiler, reporter, network client or command line
//! (its `Cargo.toml` says so, and `tests/architecture.rs` checks it).
//!
//! - [`foundation`]: exit codes, units, atomic writes, the threshold type, the crate's error.
//! - [`measured`]: parsed launches and sample series ([`measured::samples`]), the counter diff
//!   ([`measured::why`]).
//! - [`stats`]: pure statistics and the per-row verdict.
//! - [`gpu`]: the GPU's data: what a measurement was taken on ([`gpu::fingerprint`](mod@gpu::fingerprint)),
//!   health and roofline data, what a device reports (the device itself, the `Gpu` trait and
//!   NVML behind it, is `cgp-profile`'s `gpu`).

pub mod foundation;
pub mod gpu;
pub mod measured;
pub mod stats;

pub use foundation::error::{Error, Result};
