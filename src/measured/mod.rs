//! Layer 1 (with `stats`, `ncu`, `gpu`): the measured-data vocabulary (`samples`: launches,
//! values, series; it imports nothing) and the counter diff that says why a time changed
//! (`why`, on `stats`).

pub mod samples;
pub mod why;
