//! The versioned baseline store: `baselines/<gpu_key>/<target>.json`, reviewable in a
//! pull-request diff, replaced atomically under a lock. The format is documented in
//! `docs/baselines.md`.

mod date;
mod format;
mod history;
mod lock;
mod show;
mod store;

pub use date::rfc3339_utc;
pub use format::{BaselineFile, CounterSamples, Entry, Generation, SCHEMA_VERSION, parse, render};
pub use lock::{LOCK_TIMEOUT_ENV, LockTimeout};
pub use show::render_show;
pub use store::{Store, UpdateMeta};
