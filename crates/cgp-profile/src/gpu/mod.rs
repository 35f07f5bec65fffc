//! The GPU environment: the data and the [`Gpu`] trait (`cgp_core::gpu`, re-exported here), NVML
//! behind the trait, clock locking, `cgp-gate env`.
//!
//! - [`nvml`]: NVML behind the trait ([`open`]).
//! - [`stand_in`]: the SYNTHETIC stand-in GPU of `CGP_GATE_STAND_IN_GPU`, for the live paths' tests.
//! - [`clocks`]: [`lock_clocks`] and the [`ClockGuard`] that always resets them.
//! - [`env`](mod@env): `cgp-gate env`.

pub(crate) use cgp_core::gpu::*;

pub mod clocks;
pub mod env;
pub mod nvml;
pub mod stand_in;

pub use clocks::{
    ClockGuard, LockedClocks, lock_clocks, pending_restores, reset_all_clocks, restore_pending_clocks,
};
pub use env::{env_report, render_text};
pub use nvml::{NvmlGpu, open};
