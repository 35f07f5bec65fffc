//! The GPU environment: fingerprint, clock locking, health, roofline.

pub mod fingerprint;
