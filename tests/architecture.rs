//! The layering rules of docs/architecture.md.
//!
//! The layers are the crates of the workspace: Cargo refuses a cycle between them, and a crate can
//! only name what it depends on, so the compiler keeps the direction. What Cargo cannot say is
//! checked here, each rule a function over a tree (the repository's root) that returns the
//! violations it finds:
//!
//! - [`crate_graph`]: which crate may depend on which ([`CRATES`], the table of
//!   docs/architecture.md), and that the pure crates and the report crate reach no profiler, HTTP
//!   client, progress bar or command-line parser, even transitively (`cargo metadata`);
//! - [`crate_paths`]: every `crate::x` in a crate names a module the crate has (its own, or one its
//!   `lib.rs` re-exports from a crate it may depend on), tests included;
//! - [`one_place_decides`]: `fails_gate`, `--fail-on`, the run verdicts and the exit codes of a
//!   run are read in `outcome::decide` only (test modules may assert them);
//! - [`reporters_render_decided_results`]: reporters use only the gate status `decide` offers and
//!   write no gate word of their own; the statistics are pure;
//! - [`results_types_are_typed`], [`profilers_are_named_where_registered`], [`pub_share`] (issue
//!   49): at most 3 `Option` fields per results type, a concrete profiler named only by its
//!   backend and the registration, at most half of each crate's items `pub`;
//! - [`clap_in_cli`], [`sizes`], [`escaping`], [`module_cycles`]: clap only in the command line,
//!   no file over 800 lines, no product function over 100 (but the shrinking list
//!   [`LONG_FUNCTIONS_ALLOWED`]) or test function over 120, one escaping function per format,
//!   no import cycle between the modules of a crate.
//!
//! [`closed_crates`], [`results_types_are_typed`] and the comparisons of
//! [`profilers_are_named_where_registered`] read the sources as Rust (`syn`,
//! tests/architecture_syntax.rs, issue 62), where a line missed a multi-line or renamed form.
//!
//! The rules live in this file's parts by subject: `architecture/crates.rs` (the crate graph, the
//! paths, closed crates), `architecture/text_rules.rs` (deciding, rendering, typed results, `pub`
//! share, profiler names, clap, escaping), `architecture/modules.rs` (imports, cycles, layout,
//! parse-only readers), `architecture/sizes.rs` (files and functions); the tables ([`CRATES`],
//! what each crate must not reach) and the readers of sources they share stay here.
//!
//! Every rule reads whole files and every folder. `tests/architecture_selftest.rs` runs each on a
//! scratch copy of the tree with a planted violation and asserts that it is found.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates, lowest first: (crate, its folder, the modules it declares (folders of its `src/`),
/// the workspace crates it may depend on). Keep in step with docs/architecture.md.
pub const CRATES: &[(&str, &str, &[&str], &[&str])] = &[
    // Pure: exit codes, units, atomic writes, errors; measured data; statistics; the GPU's data
    // types and the `Gpu` trait (NVML behind it is cgp-profile's).
    (
        "cgp-core",
        "crates/cgp-core",
        &["foundation", "gpu", "measured", "stats"],
        &[],
    ),
    // The spec, the plan of a run, the model of Nsight Systems outputs.
    (
        "cgp-spec",
        "crates/cgp-spec",
        &["nsys", "plan", "spec"],
        &["cgp-core"],
    ),
    // The versioned baseline store: its files' format and history, the lock, atomic replacement.
    (
        "cgp-baseline",
        "crates/cgp-baseline",
        &["baseline"],
        &["cgp-core"],
    ),
    // Decided results, the history of runs.
    (
        "cgp-outcome",
        "crates/cgp-outcome",
        &["history", "outcome"],
        &["cgp-core", "cgp-spec", "cgp-baseline"],
    ),
    // Rendering decided results.
    (
        "cgp-report",
        "crates/cgp-report",
        &["report"],
        &["cgp-core", "cgp-spec", "cgp-outcome"],
    ),
    // The parse-only readers of what the tools write: bytes in, samples out; no program started.
    (
        "cgp-read",
        "crates/cgp-read",
        &["cupti_trace", "harness", "ncu_output", "nsys_files"],
        &["cgp-core", "cgp-spec"],
    ),
    // The profiler backends, NVML, recordings.
    (
        "cgp-profile",
        "crates/cgp-profile",
        &["cupti", "gpu", "ncu", "nsys", "profile"],
        &["cgp-core", "cgp-spec", "cgp-read"],
    ),
    // Measure, check, ab, baseline update.
    (
        "cgp-engine",
        "crates/cgp-engine",
        &["run"],
        &[
            "cgp-core",
            "cgp-spec",
            "cgp-baseline",
            "cgp-outcome",
            "cgp-profile",
        ],
    ),
    // Files, the step summary, the pull-request comment, the merge-request note: the network.
    (
        "cgp-publish",
        "crates/cgp-publish",
        &["publish"],
        &["cgp-core", "cgp-spec", "cgp-outcome", "cgp-report"],
    ),
    // The results store: runs in SQLite or PostgreSQL (a database driver: above the decided
    // results it stores, beside the profilers and the publishers, below the commands).
    (
        "cgp-store",
        "crates/cgp-store",
        &["store"],
        &["cgp-core", "cgp-outcome"],
    ),
    // Tests only, a dev-dependency of the others: the repository's paths and fixtures, the one
    // way a test says it could not run, the binary's command, the stand-ins.
    ("cgp-test-support", "crates/cgp-test-support", &["pg"], &[]),
    // The command line (clap) and the commands.
    (
        "cgp-gate",
        ".",
        &["cli", "commands"],
        &[
            "cgp-core",
            "cgp-spec",
            "cgp-baseline",
            "cgp-outcome",
            "cgp-report",
            "cgp-read",
            "cgp-profile",
            "cgp-engine",
            "cgp-publish",
            "cgp-store",
        ],
    ),
];

/// Crates that profile or drive a GPU or read what the profilers write, speak HTTP, parse a
/// command line or draw progress bars (a name ending in `*` is a prefix).
const PROFILERS: &[&str] = &[
    "cgp-profile",
    "cgp-read",
    "cgp-engine",
    "nvml-wrapper",
    "rusqlite",
];
/// Database drivers beyond the SQLite a profiler reads (the results store's PostgreSQL client),
/// and the store itself.
const DATABASES: &[&str] = &["cgp-store", "postgres*", "tokio-postgres*"];
const HTTP: &[&str] = &["cgp-publish", "octocrab", "hyper*", "reqwest", "ureq"];
const COMMAND_LINE: &[&str] = &["cgp-gate", "clap*", "indicatif"];

/// What each crate must not reach, through any chain of normal or build dependencies.
const BANNED: &[(&str, &[&[&str]])] = &[
    (
        "cgp-core",
        &[PROFILERS, DATABASES, HTTP, COMMAND_LINE, &["cgp-report"]],
    ),
    (
        "cgp-spec",
        &[PROFILERS, DATABASES, HTTP, COMMAND_LINE, &["cgp-report"]],
    ),
    (
        "cgp-baseline",
        &[PROFILERS, DATABASES, HTTP, COMMAND_LINE, &["cgp-report"]],
    ),
    (
        "cgp-outcome",
        &[PROFILERS, DATABASES, HTTP, COMMAND_LINE, &["cgp-report"]],
    ),
    ("cgp-report", &[PROFILERS, DATABASES, HTTP, COMMAND_LINE]),
    // The readers parse what they are given: no program, GPU, database, network or reporter.
    (
        "cgp-read",
        &[
            &["cgp-profile", "cgp-engine", "nvml-wrapper"],
            DATABASES,
            HTTP,
            COMMAND_LINE,
            &["cgp-report"],
        ],
    ),
    // The engine runs the work and emits progress events; the command layer draws them
    // (issue 62): no command line, no progress bar.
    ("cgp-engine", &[COMMAND_LINE]),
    // The store drives a database (SQLite, PostgreSQL), nothing else: no profiler or GPU, no
    // HTTP client, no command line, no reporter.
    (
        "cgp-store",
        &[
            &["cgp-profile", "cgp-read", "cgp-engine", "nvml-wrapper"],
            HTTP,
            COMMAND_LINE,
            &["cgp-report", "cgp-publish"],
        ],
    ),
];

/// The most lines a source file may have, and a product function (issue 62; but those of
/// `LONG_FUNCTIONS_ALLOWED` in `architecture/sizes.rs`).
pub const MAX_FILE_LINES: usize = 800;
pub const MAX_FN_LINES: usize = 100;
/// The most lines a test function may have (in a `#[cfg(test)]` item or a `tests.rs`), and a
/// product function of `LONG_FUNCTIONS_ALLOWED`: the limit of issue 26.
pub const MAX_TEST_FN_LINES: usize = 120;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every source file of every crate as (crate, path relative to the crate's `src/`, file).
pub fn sources(root: &Path) -> Vec<(&'static str, String, PathBuf)> {
    let mut out = Vec::new();
    for (name, dir, _, _) in CRATES {
        let src = root.join(dir).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        files.sort();
        for f in files {
            let rel = f.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
            out.push((*name, rel, f));
        }
    }
    out
}

/// Where the literal starting at byte `i` of `b` ends (just past it, or the end of `b` when it
/// does not close): a string (`"a\"b"`, raw `r#"..."#`) or a character (`'{'`, `'\''`). `None`
/// when none starts there (a lifetime `'a` is not one). The one reading of literals that
/// [`uncommented`] and [`block_end`] share: a `//` or a brace inside one is text.
fn literal_end(b: &[u8], i: usize) -> Option<usize> {
    let after = |from: usize, close: &[u8]| {
        b[from..]
            .windows(close.len())
            .position(|w| w == close)
            .map_or(b.len(), |e| from + e + close.len())
    };
    match b[i] {
        b'r' if i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') => {
            let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
            (b.get(i + 1 + hashes) == Some(&b'"')).then(|| {
                let mut close = vec![b'"'];
                close.extend(std::iter::repeat_n(b'#', hashes));
                after(i + 2 + hashes, &close)
            })
        }
        b'"' => {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            Some((j + 1).min(b.len()))
        }
        b'\'' if b.get(i + 2) == Some(&b'\'') => Some(i + 3),
        b'\'' if b.get(i + 1) == Some(&b'\\') => Some(after(i + 2, b"'")),
        _ => None,
    }
}

/// Lines without their `//` comments (doc comments may name anything); a `//` inside a literal
/// on its line (`"https://..."`) is not a comment.
pub fn uncommented(text: &str) -> String {
    text.lines()
        .map(|l| {
            let b = l.as_bytes();
            let mut i = 0;
            while i < b.len() {
                if let Some(end) = literal_end(b, i) {
                    i = end;
                } else if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
                    return &l[..i];
                } else {
                    i += 1;
                }
            }
            l
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The length of the block `text` opens with its first `{`, through its closing `}` (all of
/// `text` when it does not close). Braces in literals do not count: a test's `r#""a":1}"#` does
/// not end its module.
fn block_end(text: &str) -> usize {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        if let Some(end) = literal_end(b, i) {
            i = end;
            continue;
        }
        match b[i] {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// The text without its test items: each `#[cfg(test)]` item (a `mod tests { .. }`, a helper
/// function, a `mod tests;`) is cut to its end, and only it; code after it is kept. A `tests.rs`
/// (the unit tests a `mod.rs` declares `#[cfg(test)] mod tests;`) is all test.
pub fn without_tests(rel: &str, text: &str) -> String {
    if is_tests_file(rel) {
        return String::new();
    }
    let text = uncommented(text);
    let mut out = String::new();
    let mut from = 0;
    for item in test_items(&text) {
        out.push_str(&text[from..item.start]);
        from = item.end;
    }
    out.push_str(&text[from..]);
    out
}

/// A `tests.rs`: the unit tests a `mod.rs` declares `#[cfg(test)] mod tests;`, all test.
pub fn is_tests_file(rel: &str) -> bool {
    rel == "tests.rs" || rel.ends_with("/tests.rs")
}

/// Where the `#[cfg(test)]` items of `text` (already [`uncommented`]) are, as byte ranges from
/// the attribute to the item's end: its `;` when that comes before any `{`, else the `}` closing
/// its first `{`.
pub fn test_items(text: &str) -> Vec<std::ops::Range<usize>> {
    const ATTR: &str = "#[cfg(test)]";
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(ATTR) {
        let start = from + at;
        let item = &text[start + ATTR.len()..];
        let (semi, open) = (item.find(';'), item.find('{'));
        let end = match (semi, open) {
            (Some(s), Some(o)) if s < o => s + 1,
            (Some(s), None) => s + 1,
            (_, Some(o)) => o + block_end(&item[o..]),
            (None, None) => item.len(),
        };
        from = start + ATTR.len() + end;
        out.push(start..from);
    }
    out
}

mod crates;
mod modules;
mod sizes;
mod text_rules;

pub use crates::{closed_crates, crate_graph, crate_paths};
pub use modules::{
    cycles, layout, module_cycles, module_graph, parse_only_readers, readers_start_no_program, use_paths,
};
pub use sizes::{LONG_FUNCTIONS_ALLOWED, functions, long_functions, sizes};
pub use text_rules::{
    MAX_OPTION_FIELDS, PROFILER_REGISTRATION, clap_in_cli, core_is_data, escaping,
    no_environment_below_the_commands, one_place_decides, profilers_are_named_where_registered, pub_share,
    reporters_render_decided_results, results_types_are_typed, string_literals,
};

// ---- the rules on this tree -----------------------------------------------------------------

fn assert_clean(rule: &str, found: &[String]) {
    assert!(found.is_empty(), "{rule} (docs/architecture.md): {found:#?}");
}

#[test]
fn crates_depend_only_downwards_and_the_pure_and_report_crates_reach_no_profiler_network_or_cli() {
    assert_clean("crate dependencies", &crate_graph(&repo()));
}

#[test]
fn every_crate_path_names_a_module_of_its_crate() {
    assert_clean("crate:: paths", &crate_paths(&repo()));
}

#[test]
fn row_gates_verdicts_and_exit_codes_are_decided_in_one_place() {
    assert_clean("one place decides", &one_place_decides(&repo()));
}

#[test]
fn reporters_render_decided_results_and_the_statistics_are_pure() {
    assert_clean(
        "reporters render decided results",
        &reporters_render_decided_results(&repo()),
    );
}

#[test]
fn cgp_core_is_data_outside_its_foundation() {
    assert_clean("cgp-core is data", &core_is_data(&repo()));
}

#[test]
fn the_stores_spec_and_reporters_read_no_environment_variable() {
    assert_clean(
        "no environment below the commands",
        &no_environment_below_the_commands(&repo()),
    );
}

#[test]
fn results_types_have_at_most_three_option_fields() {
    assert_clean("typed results", &results_types_are_typed(&repo()));
}

#[test]
fn at_most_half_of_each_crates_items_are_pub() {
    assert_clean("pub share", &pub_share(&repo()));
}

#[test]
fn profilers_are_named_only_by_their_backends_and_registration() {
    assert_clean("profiler names", &profilers_are_named_where_registered(&repo()));
}

#[test]
fn string_literals_are_read_whole() {
    assert_eq!(
        string_literals(r#"f("FAIL", '"', "a \"b\" c"); g("")"#),
        ["FAIL", r#"a \"b\" c"#, ""]
    );
}

#[test]
fn no_crate_re_exports_another() {
    assert_clean("closed crates", &closed_crates(&repo()));
}

#[test]
fn clap_is_only_in_the_command_line() {
    assert_clean("clap", &clap_in_cli(&repo()));
}

#[test]
fn no_file_or_function_is_too_long() {
    assert_clean("sizes", &sizes(&repo()));
}

#[test]
fn each_format_has_one_escaping_function_and_its_reporter_uses_only_that_one() {
    assert_clean("escaping", &escaping(&repo()));
}

#[test]
fn no_two_modules_import_each_other_even_through_others() {
    assert_clean("module cycles", &module_cycles(&repo()));
}

#[test]
fn every_module_lives_in_its_crates_folder() {
    assert_clean("layout", &layout(&repo()));
}

#[test]
fn the_format_readers_are_parse_only() {
    assert_clean("parse-only readers", &parse_only_readers(&repo()));
}

#[test]
fn the_readers_crate_starts_no_program() {
    assert_clean("readers start no program", &readers_start_no_program(&repo()));
}

#[test]
fn the_import_reader_sees_groups_nested_paths_and_super() {
    assert_eq!(
        use_paths("a::{b, c::{d, e}}, x;"),
        [vec!["a", "b"], vec!["a", "c", "d"], vec!["a", "c", "e"]]
    );
    assert_eq!(use_paths("stats::median(&v)"), [vec!["stats", "median"]]);
    // The graph of a crate sees a `super::` import: stats::outliers uses stats::order.
    let g = module_graph(&repo().join("crates/cgp-core/src"));
    let m = |s: &str| s.split("::").map(str::to_owned).collect::<Vec<_>>();
    assert!(g[&m("stats::outliers")].contains(&m("stats::order")), "{g:?}");
    // And a cycle among three modules is found.
    let mut tiny: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    tiny.insert("a", ["b"].into());
    tiny.insert("b", ["c"].into());
    tiny.insert("c", ["a"].into());
    tiny.insert("d", ["a"].into());
    assert_eq!(cycles(&tiny), [vec!["a", "b", "c"]]);
}

/// Only test items are cut: code after a test module, or after a test helper, is read.
#[test]
fn test_items_are_cut_and_only_they() {
    let text = "\
fn a() {}
#[cfg(test)]
fn helper() { x.fails_gate }
#[cfg(test)]
mod tests;
fn b() { y.fails_gate }
#[cfg(test)]
mod tests {
    fn c() { if z { w.fails_gate } }
}
fn d() {}
";
    let kept = without_tests("m.rs", text);
    assert_eq!(kept.matches("fails_gate").count(), 1, "{kept}");
    assert!(
        kept.contains("fn a()") && kept.contains("fn b()") && kept.contains("fn d()"),
        "{kept}"
    );
    assert!(
        !kept.contains("fn c()") && !kept.contains("fn helper()"),
        "{kept}"
    );
    assert_eq!(without_tests("x/tests.rs", text), "");
}
