//! The sizes of files and functions: the function counter and the rule over every source.

use super::*;

/// The functions of a file as (name, first line (1-based), length in lines). A function runs from
/// its `fn` line to the first line after it that is a `}` at the same indentation. Hand-written
/// rather than a Rust parser crate (syn): the code is rustfmt'd (`cargo fmt` runs in CI), which
/// puts every function's closing brace alone on a line at the indentation of its `fn`, so this
/// count is exact and no dependency is needed for it.
pub fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        // Qualifiers rustfmt may put before `fn`.
        let mut rest = trimmed;
        loop {
            let before = rest;
            for q in [
                "pub(crate) ",
                "pub(super) ",
                "pub ",
                "const ",
                "async ",
                "unsafe ",
            ] {
                rest = rest.strip_prefix(q).unwrap_or(rest);
            }
            if let Some(r) = rest.strip_prefix("extern \"C\" ") {
                rest = r;
            }
            if rest == before {
                break;
            }
        }
        let Some(sig) = rest.strip_prefix("fn ") else {
            continue;
        };
        let name: String = sig
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        // A body on the `fn` line itself (`fn a() -> u8 { 1 }`).
        if trimmed.ends_with('}') && trimmed.contains('{') {
            out.push((name, i + 1, 1));
            continue;
        }
        // The signature ends at the first line ending in `{` (a body) or `;` (a declaration
        // without one, in a trait).
        let Some(open) = (i..lines.len()).find(|&j| {
            let t = lines[j].trim_end();
            t.ends_with('{') || t.ends_with(';')
        }) else {
            continue;
        };
        if lines[open].trim_end().ends_with(';') {
            continue;
        }
        let close = format!("{}}}", " ".repeat(indent));
        let end = (open + 1..lines.len())
            .find(|&j| lines[j].trim_end() == close)
            .unwrap_or_else(|| panic!("no closing brace for `fn {name}` at line {}", i + 1));
        out.push((name, i + 1, end - i + 1));
    }
    out
}

#[test]
fn the_function_counter_measures_rustfmt_code() {
    let text = "\
impl A {
    pub fn a(&self) -> u8 {
        1
    }

    fn b(
        x: u8,
    ) -> u8
    where
        u8: Copy,
    {
        let f = |y: u8| {
            y
        };
        f(x)
    }
}
trait T {
    fn c(&self);
    fn d(&self) -> u8 { 2 }
}
pub(crate) const fn e() {}
";
    assert_eq!(
        functions(text),
        [
            ("a".to_owned(), 2, 3),
            ("b".to_owned(), 6, 11),
            ("d".to_owned(), 20, 1),
            ("e".to_owned(), 22, 1),
        ]
    );
}

/// Product functions over [`MAX_FN_LINES`] still to split, as (crate, file under its `src/`,
/// function, why it is not split yet): those in crates other work of issue 62 is changing at the
/// same time (typed statistics results and the reporters, the rooms: parse-only readers, `gpu`,
/// `nsys` and the baseline store moving between crates), split after it lands. Each may keep up
/// to [`MAX_TEST_FN_LINES`]; one at or under [`MAX_FN_LINES`], or gone, fails: remove it from the
/// list. Nothing is added to it.
pub const LONG_FUNCTIONS_ALLOWED: &[(&str, &str, &str, &str)] = &[
    ("cgp-core", "stats/paired/decide.rs", "decide", STATS),
    ("cgp-core", "stats/verdict/rank.rs", "prepare_ranked", STATS),
    ("cgp-baseline", "baseline/format.rs", "validate", BASELINE),
    ("cgp-baseline", "baseline/store.rs", "write_update", BASELINE),
    ("cgp-profile", "gpu/clocks.rs", "lock_clocks", ROOMS),
    ("cgp-read", "harness/vllm.rs", "detailed", ROOMS),
    ("cgp-read", "ncu_output/log.rs", "classify", ROOMS),
    ("cgp-read", "ncu_output/parse/details.rs", "parse_details", ROOMS),
    ("cgp-read", "nsys_files/sqlite.rs", "read_sqlite", ROOMS),
    ("cgp-read", "nsys_files/text.rs", "parse_section", ROOMS),
    ("cgp-profile", "profile/extract.rs", "extract_ncu", ROOMS),
    ("cgp-profile", "profile/nsys.rs", "capture", ROOMS),
    ("cgp-profile", "profile/nsys.rs", "extract", ROOMS),
    ("cgp-report", "report/changes.rs", "chart", REPORT),
    ("cgp-report", "report/console/mod.rs", "push_notes", REPORT),
    ("cgp-report", "report/html/charts.rs", "roofline_svg", REPORT),
];

const STATS: &str = "in the statistics, reworked for typed results beside the split (issue 62)";
const BASELINE: &str = "in the baseline store, moved to cgp-baseline beside the split (issue 62)";
const ROOMS: &str = "a reader or runner of cgp-read/cgp-profile, moved beside the split (issue 62)";
const REPORT: &str = "in a reporter, reworked for the decided view beside the split (issue 62)";

/// The lines (1-based, first and last) of the test items of a source file: all of a `tests.rs`,
/// and each `#[cfg(test)]` item of any other.
fn test_lines(rel: &str, text: &str) -> Vec<(usize, usize)> {
    if is_tests_file(rel) {
        return vec![(1, usize::MAX)];
    }
    let text = uncommented(text);
    let line_of = |at: usize| text[..at].matches('\n').count() + 1;
    test_items(&text)
        .into_iter()
        .map(|r| (line_of(r.start), line_of(r.end)))
        .collect()
}

/// No source file over [`MAX_FILE_LINES`] lines (issue 26), no product function over
/// [`MAX_FN_LINES`] but those `allowed` lists (issue 62; each up to [`MAX_TEST_FN_LINES`]), and
/// no test function over [`MAX_TEST_FN_LINES`], so each file reads as one subject and each
/// function as one step. An entry of `allowed` whose function is at or under [`MAX_FN_LINES`], or
/// gone, is found too: the list only shrinks.
pub fn long_functions(root: &Path, allowed: &[(&str, &str, &str, &str)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut still_long = Vec::new();
    for (krate, rel, file) in sources(root) {
        let text = std::fs::read_to_string(&file).unwrap();
        let n = text.lines().count();
        if n > MAX_FILE_LINES {
            out.push(format!(
                "{krate}: src/{rel} has {n} lines (at most {MAX_FILE_LINES}): split it"
            ));
        }
        let tests = test_lines(&rel, &text);
        for (name, line, len) in functions(&text) {
            let test = tests.iter().any(|(a, b)| (*a..=*b).contains(&line));
            let listed = !test
                && allowed
                    .iter()
                    .any(|(k, f, n, _)| (*k, *f, *n) == (krate, rel.as_str(), name.as_str()));
            let max = if test || listed {
                MAX_TEST_FN_LINES
            } else {
                MAX_FN_LINES
            };
            if len > max {
                let kind = match (test, listed) {
                    (true, _) => "a test function",
                    (false, true) => "a listed product function",
                    (false, false) => "a product function",
                };
                out.push(format!(
                    "{krate}: src/{rel}: fn {name} has {len} lines from line {line} (at most {max} for {kind}): split it where it holds two things"
                ));
            }
            if listed && len > MAX_FN_LINES {
                still_long.push((krate, rel.clone(), name));
            }
        }
    }
    for (krate, rel, name, _) in allowed {
        if !still_long
            .iter()
            .any(|(k, f, n)| (*k, f.as_str(), n.as_str()) == (*krate, *rel, *name))
        {
            out.push(format!(
                "{krate}: src/{rel}: fn {name} is allowed to be long but is not over {MAX_FN_LINES} lines (or is gone): remove it from LONG_FUNCTIONS_ALLOWED"
            ));
        }
    }
    out
}

/// [`long_functions`] with the repository's list, [`LONG_FUNCTIONS_ALLOWED`].
pub fn sizes(root: &Path) -> Vec<String> {
    long_functions(root, LONG_FUNCTIONS_ALLOWED)
}
