//! cgp-report's own tests of its public API on real results (one binary, as the root's
//! tests/integration.rs): no profiler, no binary of cgp-gate, only this crate and the ones below.

mod report_html;
mod report_junit;
mod report_markdown;
