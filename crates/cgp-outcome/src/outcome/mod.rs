//! Layer 4, the outcome of a run: the typed results every reporter renders (`results`), the one
//! place that decides row gates, the run verdict and the exit code (`decide`), the merge of
//! shards' results (`merge`), which kernels the rows show gone or new (`kernels`), and the rows
//! of what is gone (`gone`: the spec no longer has it; `missing`: the application no longer ran it).

pub mod bisect;
pub mod decide;
pub mod gone;
pub mod kernels;
pub mod merge;
pub mod missing;
pub mod results;
