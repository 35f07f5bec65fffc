//! cgp-gate: a CI performance-regression gate for GPU kernels, built on NVIDIA Nsight Compute.
//!
//! Data flows one way: spec -> plan -> profile -> samples -> statistics -> verdict -> reports.
//!
//! The layers are the crates of this workspace (`crates/`), so the compiler keeps the direction;
//! this crate is the command layer. Its library is small: [`cli`], [`commands`], [`Error`] and
//! [`Result`]; each layer is used through its own crate (tests and examples name them:
//! `cgp_core::stats`, `cgp_outcome::outcome`, ...), and no crate re-exports another's modules
//! (tests/architecture.rs). Inside this crate the layers' modules read under one name:
//!
//! - `cgp-core`: [`foundation`] (exit codes, units, atomic writes, the threshold type, the crate's
//!   error), [`measured`] (parsed launches and sample series, the counter diff), [`stats`] (pure
//!   statistics and the per-row verdict), the GPU's data types ([`gpu::fingerprint`](mod@gpu::fingerprint),
//!   [`gpu::health`], [`gpu::roofline`]).
//! - `cgp-spec`: [`spec`] (`cgp-gate.yaml`, validated into [`spec::Spec`]), [`plan`] (the work list,
//!   the shard's part, what to re-measure), the model of Nsight Systems outputs ([`nsys`]).
//! - `cgp-profile`: [`profile`] (the [`profile::Profiler`] trait: live `ncu`, nsys, CUPTI, replay of
//!   a recording; SASS hashes), [`ncu`], [`nsys::read`], [`cupti`], [`gpu`] (NVML, clocks, `env`).
//! - `cgp-baseline`: [`baseline`] (the versioned baseline store).
//! - `cgp-outcome`: [`outcome::results`] (the run's results, the JSON every reporter renders),
//!   [`outcome::decide`] (the one place that decides each row's gate status, the run's verdict and
//!   the exit code), [`history`] (level shifts in a history of results files, calibration).
//! - `cgp-report`: [`report`]: console, JSON, JUnit, Markdown, HTML, GitHub.
//! - `cgp-engine`: [`run`]: measure, the one engine of `check` and `ab`, `baseline update`.
//! - `cgp-publish`: [`publish`]: files, the step summary, the pull-request comment, the
//!   merge-request note.
//! - this crate: [`cli`] (clap) and [`commands`] (one file per command).
//!
//! Layers and who may depend on whom: `docs/architecture.md` (crates: `Cargo.toml`; what crates
//! cannot say: `tests/architecture.rs`).

pub mod cli;
pub mod commands;

pub(crate) use cgp_baseline::baseline;
pub(crate) use cgp_core::{foundation, measured, stats};
pub(crate) use cgp_engine::run;
pub(crate) use cgp_outcome::{history, outcome};
pub(crate) use cgp_profile::{ncu, profile};
pub(crate) use cgp_publish::publish;
pub(crate) use cgp_read::{harness, ncu_output};
pub(crate) use cgp_report::report;
pub(crate) use cgp_spec::{plan, spec};

/// The GPU under one name in this crate: its data and trait (`cgp_core::gpu`) and NVML, clocks
/// and `env` (`cgp_profile::gpu`).
mod gpu {
    pub(crate) use cgp_core::gpu::*;
    pub(crate) use cgp_profile::gpu::*;
}

/// Nsight Systems under one name in this crate: the model (`cgp_spec::nsys`) and its readers
/// (`cgp_profile::nsys`).
mod nsys {
    pub(crate) use cgp_profile::nsys::*;
    pub(crate) use cgp_spec::nsys::*;
}

pub use foundation::error::{Error, Result};
