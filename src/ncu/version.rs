//! Parsing `ncu --version`.
