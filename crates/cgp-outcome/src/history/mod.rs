//! Layer 4, across runs: level shifts in a history of results files (`changes`) and the runner's
//! noise and what the gate can resolve on it (`calibrate`).

pub mod calibrate;
pub mod changes;
