//! cgp-gate: a CI performance-regression gate for GPU kernels, built on NVIDIA Nsight Compute.
//!
//! Data flows one way: spec -> plan -> profile -> samples -> statistics -> verdict -> reports.
//!
//! - [`spec`]: `cgp-gate.yaml`, validated into [`spec::Spec`].
//! - [`profile`]: the [`profile::Profiler`] trait (live `ncu`, replay of a recording).
//! - [`ncu`]: Nsight Compute's argv, its log lines and its CSV output.
//! - [`nsys`]: Nsight Systems outputs, kernel categories and GPU-time breakdowns.
//! - [`samples`]: parsed launches and sample series.
//! - [`stats`]: pure statistics and the per-row verdict.
//! - [`baseline`]: the versioned baseline store.
//! - [`results`]: the run's results, the JSON that every reporter renders.
//! - [`decide`]: the one place that decides each row's gate status, the run's verdict and the
//!   exit code.
//! - [`report`]: console, JSON, JUnit, Markdown, HTML, GitHub.
//! - [`gpu`]: fingerprint, clocks, health, roofline.
//! - [`plan`]: the work list, the shard's part, what to re-measure; [`measure`] runs it.
//! - [`ab`]: base and head trees measured in alternation, judged pair by pair; [`changes`]:
//!   level shifts in a history of results files (`docs/ab-and-changes.md`).
//! - [`cli`] (clap) and [`commands`] (one file per command): the command layer.
//!
//! Layers and who may import whom: `docs/architecture.md` (enforced by `tests/architecture.rs`).

pub mod ab;
pub mod baseline;
pub mod calibrate;
pub mod changes;
pub mod check;
pub mod cli;
pub mod commands;
pub mod decide;
pub mod engine;
pub mod error;
pub mod exit_codes;
pub mod failure;
pub mod fsutil;
pub mod gone;
pub mod gpu;
pub mod measure;
pub mod merge;
pub mod missing;
pub mod ncu;
pub mod nsys;
pub mod plan;
pub mod profile;
pub mod progress;
pub mod report;
pub mod results;
pub mod samples;
pub mod sass;
pub mod session;
pub mod spec;
pub mod stats;
pub mod threshold;
pub mod units;
pub mod update;
pub mod why;

pub use error::{Error, Result};
