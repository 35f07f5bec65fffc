//! The layering rule of docs/architecture.md, enforced: a module may import (`crate::x`) only
//! modules of its own layer or of lower layers. Also: clap only in the command layer, and the run
//! verdict is made in one place.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lowest first; keep in step with docs/architecture.md.
const LAYERS: &[&[&str]] = &[
    // 0. foundation: no knowledge of GPUs, specs or runs
    &["exit_codes", "units", "fsutil", "threshold", "error"],
    // 1. leaves: pure statistics, Nsight Compute's formats, the GPU through NVML
    &["stats", "ncu", "gpu"],
    // 2. the spec
    &["spec"],
    // 3. from spec to samples: what to run, how to run it, what came out, what is stored
    &["plan", "shard", "samples", "profile", "baseline"],
    // 4. the run: measure, decide, assemble results
    &[
        "measure", "session", "results", "check", "merge", "update", "ab", "changes",
    ],
    // 5. rendering typed results
    &["report"],
    // 6. commands and the command line
    &["commands", "cli"],
];

/// Imports that break the rule today, each to be removed (issue 10). The test fails when one is
/// fixed and still listed, so this list stays the truth.
const KNOWN_VIOLATIONS: &[(&str, &str)] = &[
    // Nsight Compute's parser builds samples for profile jobs of spec targets.
    ("ncu", "profile"),
    ("ncu", "samples"),
    ("ncu", "spec"),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file belongs to (`src/ncu/parse.rs` -> `ncu`), `None` for the crate
/// root and `main.rs`.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    let m = first.strip_suffix(".rs").unwrap_or(&first).to_owned();
    (m != "lib" && m != "main").then_some(m)
}

/// Code lines, without `//` comments (doc comments may name any module) and without the unit
/// tests at the end of a file (`#[cfg(test)]`), which may use anything.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or(text);
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let Some(m) = module_of(src, &f) else { continue };
        let text = code(&std::fs::read_to_string(&f).unwrap());
        let deps = graph.entry(m.clone()).or_default();
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != m {
                deps.insert(name);
            }
        }
        // `use crate::{a, b}` groups.
        for (i, _) in text.match_indices("crate::{") {
            let rest = &text[i + "crate::{".len()..];
            let group = rest.split('}').next().unwrap_or("");
            for part in group.split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && name != m {
                    deps.insert(name);
                }
            }
        }
    }
    graph
}

#[test]
fn lower_layers_never_import_higher_ones() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = imports(&src);
    let mut violations = BTreeSet::new();
    for (m, deps) in &graph {
        let from = layer_of(m).unwrap_or_else(|| {
            panic!("module `{m}` is in no layer: add it to LAYERS here and to docs/architecture.md")
        });
        for d in deps {
            let Some(to) = layer_of(d) else {
                // `crate::Error`, `crate::Result` (re-exports of the crate root).
                assert!(
                    d.chars().next().is_some_and(char::is_uppercase),
                    "`{m}` imports `crate::{d}`, which is in no layer"
                );
                continue;
            };
            if to > from {
                violations.insert((m.clone(), d.clone()));
            }
        }
    }
    let known: BTreeSet<(String, String)> = KNOWN_VIOLATIONS
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
    let new: Vec<_> = violations.difference(&known).collect();
    assert!(
        new.is_empty(),
        "these modules import a higher layer (docs/architecture.md): {new:?}"
    );
    let fixed: Vec<_> = known.difference(&violations).collect();
    assert!(
        fixed.is_empty(),
        "these imports are gone: remove them from KNOWN_VIOLATIONS: {fixed:?}"
    );
}

#[test]
fn the_statistics_import_nothing_but_the_foundation() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let deps = &imports(&src)["stats"];
    for d in deps {
        assert!(
            layer_of(d) == Some(0),
            "stats imports `{d}`: the statistics are pure and sit below everything but the foundation"
        );
    }
}

#[test]
fn clap_is_only_in_the_command_line_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        if rel.starts_with("cli") || rel == Path::new("main.rs") {
            continue;
        }
        let text = code(&std::fs::read_to_string(&f).unwrap());
        for name in ["clap::", "clap_complete", "#[arg(", "#[command("] {
            assert!(
                !text.contains(name),
                "{} uses clap (`{name}`): move it to src/cli/",
                rel.display()
            );
        }
    }
}

#[test]
fn the_run_verdict_is_decided_in_one_place() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_path_buf();
        if rel == Path::new("results.rs") || rel.starts_with("report") {
            continue;
        }
        let text = code(&std::fs::read_to_string(&f).unwrap());
        // Outside results.rs (which decides) and the reporters (which render), no code names a
        // run verdict other than to compare with `Error`.
        for v in [
            "RunVerdict::Pass",
            "RunVerdict::Regression",
            "RunVerdict::Inconclusive",
        ] {
            assert!(
                !text.contains(v),
                "{} names {v}: the run verdict is results::run_verdict's to decide",
                rel.display()
            );
        }
    }
}

#[test]
fn each_format_has_one_escaping_function_and_its_reporter_uses_only_that_one() {
    let report = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/report");
    // (reporter file, its format's one escaping function, the other formats' functions)
    let formats = [
        ("markdown.rs", "fn escape_md_cell("),
        ("html.rs", "fn escape("),
        ("junit.rs", "fn escape("),
        ("github.rs", "fn escape("),
    ];
    let others = |me: &str| -> Vec<&'static str> {
        let mut v = vec![];
        if me != "markdown.rs" {
            v.push("escape_md_cell");
        }
        for (f, path) in [
            ("html.rs", "html::escape"),
            ("junit.rs", "junit::escape"),
            ("github.rs", "github::escape"),
        ] {
            if me != f {
                v.push(path);
            }
        }
        v
    };
    for (file, own) in formats {
        let text = code(&std::fs::read_to_string(report.join(file)).unwrap());
        let escapers = text
            .lines()
            .filter(|l| l.contains("fn escape") || l.contains("fn sanitize"))
            .count();
        assert!(
            text.contains(own) && escapers == 1,
            "src/report/{file}: expected exactly one escaping function ({own}...), found {escapers}"
        );
        // The GitHub reporter writes the step summary in Markdown, so it may use Markdown's.
        for o in others(file) {
            if file == "github.rs" && o == "escape_md_cell" {
                continue;
            }
            assert!(
                !text.contains(o),
                "src/report/{file} uses `{o}`, another format's escaping function"
            );
        }
    }
}
