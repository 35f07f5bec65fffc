//! cgp-baseline's own tests of the baseline store: atomic writes, the lock between writers (a
//! child process of this binary writes while the test does), history, and the `show` rendering
//! (one binary, as the root's tests/integration.rs).

mod baseline_store;
