//! Layer 1 (with `stats`, `ncu`, `gpu`): the measured-data vocabulary (`samples`: launches,
//! values, series; it imports nothing), which tool measured (`profiler`: `ProfilerKind`), where samples came from (`source`), what a metric's value can be (`plausible`), and the counter diff that says why a time
//! changed (`why`, on `stats`).

pub mod plausible;
pub mod profiler;
pub mod samples;
pub mod source;
pub mod why;
