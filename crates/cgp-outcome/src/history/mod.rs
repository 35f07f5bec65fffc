//! Layer 4, across runs: level shifts in a history of results files (`changes`), the runner's
//! noise and what the gate can resolve on it (`calibrate`), what the history site shares with the
//! comment (`series`) and github-action-benchmark's history read as results (`import`).

pub mod calibrate;
pub mod changes;
pub mod import;
pub mod series;
