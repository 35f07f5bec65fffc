//! Layer 4, the outcome of a run: the typed results every reporter renders (`results`), the one
//! place that decides row gates, the run verdict and the exit code (`decide`), the merge of
//! shards' results (`merge`), which kernels the rows show gone or new (`kernels`), the rows of
//! what is gone (`gone`: the spec no longer has it; `missing`: the application no longer ran it)
//! and the search of `bisect` (`bisect`).
//!
//! `results` and `decide` are the two namespaces other crates name; the rest is private and
//! offers what other crates use below, by names that say what they are.

pub mod decide;
pub mod results;

mod bisect;
mod gone;
mod kernels;
mod merge;
mod missing;

pub use bisect::{
    BISECT_SCHEMA_VERSION, BisectEnd, BisectResult, BisectStep, Culprit, Levels, Said, Search, SearchEnd,
    bisect_method, classify_commit,
};
pub use gone::gone_rows;
pub use kernels::kernel_changes;
pub use merge::{gpus_of, merge};
pub use missing::{MissingScope, apply_missing};
