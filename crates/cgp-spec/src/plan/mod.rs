//! From spec to work: what to measure. `plan` owns the work list (every size of every target,
//! with its repetitions: [`work`]), the shard's part of it (`--shard K/N`: [`shard`]), the choice
//! of what to re-measure ([`remeasure`]), and what one run asks for: argv templates filled per
//! size and the ncu metrics a target needs ([`job`]).
//!
//! Inside, imports point one way: `work` -> `shard` -> `job`.

pub mod job;
pub mod shard;
pub mod shard_auto;
pub mod work;

pub use job::{DURATION_METRIC, app_argv, explaining, ncu_for_why, ncu_metrics};
pub use shard::{Selection, Shard};
pub use shard_auto::{AutoShard, ShardRequest};
pub use work::{Work, baseline_work, cap_to_recording, initial_work, remeasure};
