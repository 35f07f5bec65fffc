//! Layer 4, the outcome of a run: the typed results every reporter renders (`results`), the one
//! place that decides row gates, the run verdict and the exit code (`decide`), and the merge of
//! shards' results (`merge`).

pub mod decide;
pub mod merge;
pub mod results;
