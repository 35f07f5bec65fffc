//! cgp-store (docs/store.md, docs/architecture.md): the results store. Runs in a database,
//! SQLite (`sqlite:PATH`) or PostgreSQL (`postgres://...`), behind one trait; the versioned
//! schema and its migrations; reading runs back as the results files they were; the rows of
//! PyTorch's `oss_ci_benchmark_v3` table. Above the decided results (it stores and reads
//! `outcome::results`), beside the profilers and the publishers, used by the command layer only:
//! no profiler, no HTTP client, no command line.

pub mod store;

pub(crate) use cgp_core::{Error, foundation};
pub(crate) use cgp_outcome::outcome;
