//! Every integration test in one binary (ripgrep's layout): one link of the crate and its
//! dependencies instead of one per file. Each module is a file of tests/ as before; run one with
//! `cargo test --test integration <module>::`.
//!
//! Measured on the 2-core development machine on 2026-11-25 (issue 26, item 7), the same tree in
//! both layouts, dependencies already built, `cargo clean -p cgp-gate` before each build:
//! - `cargo test --no-run`: 38 binaries 56.3 s wall (82.6 s user), one binary 43.0 s (72.1 s user);
//! - `CI=true bash .ci/test` with the binaries built: 159.1 s wall, one binary 135.5 s; 702 tests
//!   passed in both.
//!
//! A test that runs its own binary again as a child (`--exact NAME`) names itself with
//! `support::test_name(module_path!(), NAME)`: the test's path now begins with its module.

mod support;

mod ab_cli;
mod action_e2e;
mod architecture;
mod architecture_selftest;
mod architecture_shell;
mod architecture_syntax;
mod base_builds;
mod bisect_cli;
mod calibrate_cli;
mod changes_cli;
mod check_cli;
mod ci_base;
mod ci_examples;
mod cli_ux;
mod confirm_cli;
mod confirm_gpu_paths;
mod console_table;
mod cupti_gate;
mod damaged_input;
mod docs_commands;
mod first_errors;
mod gpu_clocks;
mod gpu_env;
mod gpu_kit;
mod h100_real;
mod harness2_import;
mod harness2_live;
mod harness_gate;
mod harness_import;
mod harness_init;
mod harness_input_safety;
mod history_site;
mod install;
mod live_paths;
mod names_in_reports_and_traces;
mod ncu_real;
mod nsys_cli;
mod nsys_gate;
mod output_paths_and_secrets;
mod outputs_and_stand_ins;
mod parse_cli;
mod profile_cli;
mod pytorch_example;
mod record_secrets_and_signals;
mod reliability;
mod reliability_samples;
mod report_cli;
mod report_github;
mod report_gitlab;
mod report_one_number;
mod report_real_check;
mod sass_cache;
mod shard_auto;
mod shard_merge;
mod spec_cli;
mod spec_schema;
mod stats_launch_pools;
mod stats_real;
mod stats_slow_paths;
mod store_cli;
mod store_faults;
mod store_hud;
mod store_pg;
mod threshold_kinds;
mod why_cli;
mod why_planted;
mod workflows;
