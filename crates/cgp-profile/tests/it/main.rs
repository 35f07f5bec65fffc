//! cgp-profile's own tests on real tools and real captures: the ncu CSV reader on the H100
//! recordings, and the CUPTI injection library built and run under the real driver (one binary,
//! as the root's tests/integration.rs).

mod cupti_lib;
mod gpu_health;
mod parse_only_real;
