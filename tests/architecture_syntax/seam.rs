//! The measurement seam (issue 62): the engine measures through `profile::Measurer` only, a
//! rule of tests/architecture_syntax.rs that reads the engine's tokens; its plant is in
//! tests/architecture_selftest/seam.rs.

use std::path::Path;

use proc_macro2::{Delimiter, TokenStream, TokenTree};

use super::{is_test_file, parse, ranges};
use crate::architecture::sources;

/// Where cgp-engine may name the backend implementer's interface: the simulations, whose
/// `SimProfiler` is a `Profiler` over a model that they wrap in `profile::Measuring` themselves
/// (the examples' entry points).
pub const ENGINE_PROFILERS: &[&str] = &["run/simulate.rs"];

/// What only the measurement seam's real implementation (`profile::Measuring`) asks of a
/// profiler or reads of a capture, as token sequences: the `Profiler` trait (not the results'
/// `ErrorKind::Profiler`), its captures, probes, devices and recordings, the tools' versions, the
/// reading and filtering of a capture.
const BEHIND_THE_SEAM: &[&[&str]] = &[
    &["Profiler"],
    &[".", "capture", "("],
    &[".", "probe", "("],
    &[".", "harness_device", "("],
    &[".", "reads_a_recording", "("],
    &["Versions", ":", ":", "of"],
    &["profile", ":", ":", "extract"],
    &["profile", ":", ":", "filter"],
];

/// The tokens of `tokens`, flat, with their lines (a group as its delimiters around its tokens).
fn flat_tokens(tokens: TokenStream, out: &mut Vec<(String, usize)>) {
    for t in tokens {
        let line = t.span().start().line;
        match t {
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::None => ("", ""),
                };
                out.push((open.to_owned(), line));
                flat_tokens(g.stream(), out);
                out.push((close.to_owned(), g.span_close().start().line));
            }
            TokenTree::Ident(i) => out.push((i.to_string(), line)),
            TokenTree::Punct(p) => out.push((p.as_char().to_string(), line)),
            TokenTree::Literal(_) => out.push(("\"".to_owned(), line)),
        }
    }
}

/// The engine measures through one trait (issue 62: `profile::Measurer`, hyperfine's
/// `Executor`): outside its tests and [`ENGINE_PROFILERS`], cgp-engine names nothing of
/// [`BEHIND_THE_SEAM`], so the loop its unit tests drive through a scripted measurer is the loop
/// that runs.
pub fn engine_measures_through_the_seam(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (krate, rel, file) in sources(root) {
        if krate != "cgp-engine" || is_test_file(&rel) || ENGINE_PROFILERS.contains(&rel.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let Some(f) = parse(krate, &rel, &text, &mut out) else {
            continue;
        };
        let (mut fns, mut tests) = (Vec::new(), Vec::new());
        ranges(&f.items, &mut fns, &mut tests);
        let mut flat = Vec::new();
        flat_tokens(text.parse().unwrap(), &mut flat);
        for i in 0..flat.len() {
            for pattern in BEHIND_THE_SEAM {
                let at = &flat[i..];
                let line = flat[i].1;
                if at.len() >= pattern.len()
                    && pattern.iter().zip(at).all(|(p, (t, _))| p == t)
                    && !(pattern == &["Profiler"] && i >= 3 && flat[i - 3].0 == "ErrorKind")
                    && !tests.iter().any(|(a, b)| (*a..=*b).contains(&line))
                {
                    out.push(format!(
                        "{krate}: src/{rel}:{line}: names `{}` behind the measurement seam: the engine measures through `profile::Measurer` (docs/architecture.md, \"One engine\")",
                        pattern.concat()
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn the_engine_measures_through_the_seam() {
    let found = engine_measures_through_the_seam(&crate::architecture::repo());
    assert!(found.is_empty(), "{found:#?}");
}
