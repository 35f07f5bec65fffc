//! Layer 4, the outcome of a run: the typed results every reporter renders (`results`), the one
//! place that decides row gates, the run verdict and the exit code (`decide`), the merge of
//! shards' results (`merge`), and which kernels the rows show gone or new (`kernels`).

pub mod decide;
pub mod kernels;
pub mod merge;
pub mod results;
