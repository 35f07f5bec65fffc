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

/// No source file over [`MAX_FILE_LINES`] lines and no function over [`MAX_FN_LINES`] (issue
/// 26), tests included, so each file reads as one subject and each function as one step.
pub fn sizes(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (krate, rel, file) in sources(root) {
        let text = std::fs::read_to_string(&file).unwrap();
        let n = text.lines().count();
        if n > MAX_FILE_LINES {
            out.push(format!(
                "{krate}: src/{rel} has {n} lines (at most {MAX_FILE_LINES}): split it"
            ));
        }
        for (name, line, len) in functions(&text) {
            if len > MAX_FN_LINES {
                out.push(format!(
                    "{krate}: src/{rel}: fn {name} has {len} lines from line {line} (at most {MAX_FN_LINES})"
                ));
            }
        }
    }
    out
}
