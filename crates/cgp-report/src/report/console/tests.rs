//! Unit tests of the console: when colour is on, that only our own colour codes act, short metric names.

use super::*;

fn env_of<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned())
}

#[test]
fn colour_follows_the_flag_the_terminal_and_the_environment() {
    let none = env_of(&[]);
    assert!(ColorChoice::Auto.enabled(true, &none));
    assert!(
        !ColorChoice::Auto.enabled(false, &none),
        "a pipe or a file gets no colour"
    );
    assert!(ColorChoice::Always.enabled(false, &none));
    assert!(!ColorChoice::Never.enabled(true, &none));
    let no_color = env_of(&[("NO_COLOR", "1")]);
    assert!(!ColorChoice::Auto.enabled(true, &no_color));
    assert!(
        ColorChoice::Always.enabled(true, &no_color),
        "the flag wins over NO_COLOR"
    );
    let empty = env_of(&[("NO_COLOR", "")]);
    assert!(
        ColorChoice::Auto.enabled(true, &empty),
        "an empty NO_COLOR is unset"
    );
    let actions = env_of(&[("GITHUB_ACTIONS", "true")]);
    assert!(
        !ColorChoice::Auto.enabled(true, &actions),
        "Actions logs: only when asked"
    );
    assert!(
        ColorChoice::Always.enabled(false, &actions),
        "asked with the flag"
    );
    let asked = env_of(&[("GITHUB_ACTIONS", "true"), ("CLICOLOR_FORCE", "1")]);
    assert!(
        ColorChoice::Auto.enabled(false, &asked),
        "asked in the workflow's env"
    );
    assert!(!ColorChoice::Auto.enabled(true, &env_of(&[("TERM", "dumb")])));
    assert!(ColorChoice::Auto.enabled(false, &env_of(&[("CLICOLOR_FORCE", "1")])));
}

#[test]
fn only_the_tables_own_colour_codes_reach_the_terminal() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/results/mixed.json"
    ))
    .unwrap();
    let mut results = crate::outcome::results::parse(&text).unwrap();
    results.rows[0].key.kernel = Some("evil\u{1b}[2J\u{202e}gemm".into());
    results.rows[0].key.target = "t\u{1b}]0;title\u{7}".to_owned();
    let style = ConsoleStyle {
        width: None,
        color: true,
    };
    let out = results_table_styled(&results, style);
    assert!(out.contains("evil<U+001B>[2J<U+202E>gemm"), "{out}");
    assert!(out.contains("t<U+001B>]0;title<U+0007>"), "{out}");
    assert!(
        out.contains("\u{1b}[31m"),
        "the verdicts are still coloured: {out}"
    );
    let escapes = out.matches('\u{1b}').count();
    let ours = out.matches("\u{1b}[").count();
    assert_eq!(escapes, ours, "every ESC is one of our SGR codes");
}

#[test]
fn well_known_metrics_have_short_names_and_others_keep_theirs() {
    assert_eq!(short_metric_name("gpu__time_duration.sum"), Some("time"));
    assert_eq!(
        short_metric_name("launch__registers_per_thread"),
        Some("registers")
    );
    assert_eq!(
        short_metric_name("smsp__sass_inst_executed_op_shared_ld.sum"),
        None
    );
}

/// Kernels that share a family keep what tells them apart: the shared start goes, the tile
/// shape stays; a lone library identifier keeps its start (and tile shape), not its end.
#[test]
fn kernel_cells_keep_what_tells_kernels_apart() {
    use super::kernel_cells;
    let a = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT".to_owned();
    let b = "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopB_NNT".to_owned();
    let cells = kernel_cells(&[a.clone(), b.clone(), a.clone()], 30);
    assert_eq!(cells[0], "…256x128_64x4_1x2_h_bz_coopA_…");
    assert_eq!(cells[1], "…128x256_64x4_2x1_v_bz_coopB_…");
    assert_eq!(cells[0], cells[2]);
    assert!(cells.iter().all(|c| c.chars().count() <= 30));
    let lone = kernel_cells(std::slice::from_ref(&a), 30);
    assert_eq!(lone[0], "nvjet_sm90_tst_256x128_64x4_1…");
    let layer = kernel_cells(
        &["void unnamed>::vectorized_layer_norm_kernel<Half, float, 0>(int, float)".to_owned()],
        30,
    );
    assert!(
        layer[0].starts_with("vectorized_") && layer[0].ends_with("float, 0>"),
        "{}",
        layer[0]
    );
}

/// The headline wears the colour of the run's gate: an inconclusive run is yellow under
/// `--fail-on regression` (exit 0) and red under `--fail-on inconclusive` (exit 1).
#[test]
fn the_headline_is_coloured_by_the_gate_not_the_verdict() {
    use crate::outcome::results::{FailOn, RunVerdict};
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/results/mixed.json"
    ))
    .unwrap();
    let mut results = crate::outcome::results::parse(&text).unwrap();
    results
        .rows
        .retain(|r| matches!(r.verdict(), RowVerdict::Pass | RowVerdict::Inconclusive));
    results.errors.clear();
    results.verdict = crate::outcome::decide::run_verdict(&results.rows, &results.errors, true);
    assert_eq!(results.verdict, RunVerdict::Inconclusive);
    let style = ConsoleStyle {
        width: None,
        color: true,
    };
    let painted = |results: &crate::outcome::results::Results, s: anstyle::Style| {
        let head = crate::report::text::visible(&headline(results.into()));
        format!("{s}{head}{s:#}\n")
    };
    let yellow = verdict_style(RowVerdict::Inconclusive).bold();
    let red = verdict_style(RowVerdict::Regression).bold();
    let warn = results_table_styled(&results, style);
    assert!(warn.contains(&painted(&results, yellow)), "{warn}");
    results.fail_on = FailOn::Inconclusive;
    let fail = results_table_styled(&results, style);
    assert!(fail.contains(&painted(&results, red)), "{fail}");
    assert!(!fail.contains(&painted(&results, yellow)), "{fail}");
}
