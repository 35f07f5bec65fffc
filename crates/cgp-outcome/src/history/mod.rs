//! Layer 4, across runs: level shifts in a history of results files (`changes`), the runner's
//! noise and what the gate can resolve on it (`calibrate`), what the history site shares with the
//! comment (`series`) and github-action-benchmark's history read as results (`import`).
//!
//! The modules are private; what other crates use is offered below.

mod calibrate;
mod changes;
mod import;
mod series;

pub use calibrate::{
    CalibrateOptions, Calibration, CalibrationBaselines, CalibrationRow, CalibrationSources, JobDrift,
    RunNoise, ThresholdReach, calibrate, calibrate_with_progress,
};
pub use changes::{
    ChangeRow, ChangesOptions, ChangesReport, InputFile, Point, Reach, SeriesPlot, SeriesReach, ShiftCommits,
    ShiftInterval, changes_exit_code, find_changes,
};
pub use import::{Imported, github_action_benchmark};
pub use series::{anchor, anchor_of_row, name_gpus};
