//! Scanning ncu's own lines (`==PROF==`, `==WARNING==`, `==ERROR==`).
