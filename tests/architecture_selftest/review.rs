//! Issue 62's plants: the outside review's, which the line rules missed, each found by its rule
//! on a scratch copy of the tree (the [`Scratch`] of the self-test).

use std::path::Path;

use super::{Scratch, finds};
use crate::architecture::{
    closed_crates, profilers_are_named_where_registered, reporters_render_decided_results,
    results_types_are_typed,
};
use crate::architecture_syntax::reporters_name_no_row;

/// A rule of the guard: the violations it finds in a tree.
type Rule = fn(&Path) -> Vec<String>;

/// Issue 62: the review's missed plant, a Markdown reporter that says "slower than allowed" (no
/// gate word) when the row's interval lies beyond its tolerance, and its kin: the raw parts
/// named inside a macro's arguments, imported, or taken apart in a pattern. Written against the
/// decided view (`RowView`) the same reporter does not compile: `RowView` has no tolerance, no
/// rule and no estimate (the `compile_fail` examples on it, `cargo test --doc -p cgp-outcome`).
/// In a test module it stays allowed; an allowance that names nothing any more is found.
#[test]
fn a_reporter_that_decides_from_the_interval_without_a_gate_word_is_found() {
    let s = Scratch::new();
    s.append(
        "crates/cgp-report/src/report/markdown/mod.rs",
        SLOWER_THAN_ALLOWED,
    );
    s.append(
        "crates/cgp-report/src/report/html/mod.rs",
        "\nfn planted_cell(results: &crate::outcome::results::Results) -> String {\n    results.rows.iter().map(|r| format!(\"{} {:?}\", r.rule.text(), r.estimate().median_ci())).collect()\n}\n",
    );
    s.append(
        "crates/cgp-report/src/report/junit.rs",
        "\nuse crate::outcome::results::{Estimate, RowThreshold};\n",
    );
    s.append(
        "crates/cgp-report/src/report/console/mod.rs",
        "\nfn planted_pattern(results: &crate::outcome::results::Results) -> usize {\n    results.rows.iter().filter(|crate::outcome::results::Row { outcome, .. }| outcome.verdict_is_bad()).count()\n}\n#[cfg(test)]\nmod planted_test {\n    fn t(r: &crate::outcome::results::Row) -> Option<f64> {\n        r.rule.threshold.as_ref().and_then(|t| t.tolerance())\n    }\n}\n",
    );
    finds(
        reporters_name_no_row,
        &s,
        &[
            "src/report/markdown/mod.rs:",
            "names `Row`",
            "names `.estimate`",
            "names `.change_ci`",
            "names `.rule`",
            "names `.threshold`",
            "names `.tolerance`",
            "src/report/html/mod.rs:",
            "names `.median_ci`",
            "src/report/junit.rs:",
            "names `Estimate`",
            "names `RowThreshold`",
            "src/report/console/mod.rs:",
        ],
    );
    let found = reporters_name_no_row(s.root());
    // markdown: Row, .estimate, .change_ci, .rule, .threshold, .tolerance; html: .rule,
    // .estimate, .median_ci; junit: Estimate, RowThreshold; console: Row (not its test module).
    assert_eq!(found.len(), 12, "{found:#?}");
    // An allowance for a member the file no longer names is found.
    let t = Scratch::new();
    t.replace(
        "crates/cgp-report/src/report/calibrate.rs",
        "esc(&r.threshold)",
        "esc(\"\")",
    );
    t.replace(
        "crates/cgp-report/src/report/calibrate.rs",
        "visible(&x.threshold)",
        "visible(\"\")",
    );
    finds(
        reporters_name_no_row,
        &t,
        &["REPORTER_MEMBERS_THAT_ARE_NOT names `.threshold` in src/report/calibrate.rs"],
    );
}

/// The review's plant: a reporter that decides a row from its interval and tolerance, and says
/// so in words that are no gate word.
const SLOWER_THAN_ALLOWED: &str = "\nfn planted_slower(r: &crate::outcome::results::Row) -> &'static str {\n    match (r.estimate().change_ci(), r.rule.threshold.as_ref().and_then(|t| t.tolerance())) {\n        (Some([lo, _]), Some(t)) if lo > t => \"slower than allowed\",\n        _ => \"\",\n    }\n}\n";

/// Issue 62's figure: every plant of the outside review and of the self-test before it, in one
/// copy, is found by its rule: the Markdown "slower than allowed" (no gate word) and "FAIL"
/// reporters, `pub use outcome::results;` in cgp-report through its own `pub(crate)` name, a
/// re-export through a renamed module, `t.profiler.as_str() != "nsys"` in the engine, a
/// `pub(crate) struct` with four `Option`s and a struct of `std::option::Option` fields.
#[test]
fn the_reviews_plants_are_all_found() {
    let s = Scratch::new();
    s.append(
        "crates/cgp-report/src/report/markdown/mod.rs",
        SLOWER_THAN_ALLOWED,
    );
    s.append(
        "crates/cgp-report/src/report/html/mod.rs",
        &SLOWER_THAN_ALLOWED
            .replace("slower than allowed", "FAIL")
            .replace("planted_slower", "planted_fail"),
    );
    s.append("crates/cgp-report/src/lib.rs", "\npub use outcome::results;\n");
    s.append(
        "crates/cgp-report/src/report/mod.rs",
        "\nuse cgp_outcome::outcome as o;\npub use o::decide;\n",
    );
    s.append(
        "crates/cgp-engine/src/run/engine.rs",
        "\nfn planted(t: &crate::spec::Target) -> bool {\n    t.profiler.as_str() != \"nsys\"\n}\n",
    );
    s.append(
        "crates/cgp-outcome/src/outcome/results/row.rs",
        "\npub(crate) struct PlantedCrate {\n    change: Option<f64>,\n    change_ci: Option<[f64; 2]>,\n    p: Option<f64>,\n    p_adjusted: Option<f64>,\n}\npub struct PlantedPath {\n    a: std::option::Option<f64>,\n    b: std::option::Option<f64>,\n    c: std::option::Option<f64>,\n    d: std::option::Option<f64>,\n}\n",
    );
    let plants: [(Rule, &str); 8] = [
        (reporters_name_no_row, "src/report/markdown/mod.rs:"),
        (reporters_name_no_row, "src/report/html/mod.rs:"),
        (
            reporters_render_decided_results,
            "report/html/mod.rs writes the gate word \"FAIL\" itself",
        ),
        (
            closed_crates,
            "cgp-report: src/lib.rs re-exports another crate (`pub use outcome::results;`",
        ),
        (
            closed_crates,
            "cgp-report: src/report/mod.rs re-exports another crate (`pub use o::decide;`",
        ),
        (
            profilers_are_named_where_registered,
            "compares with the profiler name \"nsys\" (fn planted)",
        ),
        (
            results_types_are_typed,
            "results/row.rs: struct PlantedCrate has 4 `Option` fields",
        ),
        (
            results_types_are_typed,
            "results/row.rs: struct PlantedPath has 4 `Option` fields",
        ),
    ];
    let missed: Vec<&str> = plants
        .iter()
        .filter(|(rule, what)| !rule(s.root()).iter().any(|f| f.contains(what)))
        .map(|(_, what)| *what)
        .collect();
    assert!(missed.is_empty(), "plants the rules missed: {missed:#?}");
}
