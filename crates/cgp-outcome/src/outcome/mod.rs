//! Layer 4, the outcome of a run: the typed results (`results`), the one place that decides row
//! gates, the run verdict and the exit code (`decide`), what reporters render: the decided run
//! and rows with the numbers to display, not the rows themselves (`view`), the merge of
//! shards' results (`merge`), which kernels the rows show gone or new (`kernels`), the rows of
//! what is gone (`gone`: the spec no longer has it; `missing`: the application no longer ran it)
//! and the search of `bisect` (`bisect`).
//!
//! `results`, `decide` and `view` are the namespaces other crates name; the rest is private and
//! offers what other crates use below, by names that say what they are.

pub mod decide;
pub mod results;
pub mod view;

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
pub(crate) use kernels::kernel_changes;
pub(crate) use merge::gpus_of;
pub use merge::merge;
pub use missing::{MissingScope, apply_missing};
