//! cgp-spec's own tests that need more than one module: the GPU's health readings against the
//! spec's settings (one binary, as the root's tests/integration.rs).

mod gpu_health;
