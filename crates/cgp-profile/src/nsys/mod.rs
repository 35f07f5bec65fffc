//! Nsight Systems: the model of its outputs (`cgp_spec::nsys`, re-exported here: categories,
//! breakdowns, bars) and [`read`]: every form nsys writes GPU activity in (`.nsys-rep`, its SQLite
//! export, the CSV of the trace and summary reports, old and new names), into one [`Workload`].

pub(crate) use cgp_spec::nsys::*;

pub mod read;

pub use read::{read_path, read_text};
