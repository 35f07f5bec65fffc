//! The layering rule of docs/architecture.md, enforced: a module may import (`crate::x`) only
//! modules of its own layer or of lower layers. Also: clap only in the command layer, and the run
//! verdict is made in one place.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each folder of `src/` is one layer: a module's layer is the layer of the folder it lives in
/// (`src/run/check/mod.rs` -> `run` -> 4). Lowest first; keep in step with docs/architecture.md.
const LAYERS: &[&[&str]] = &[
    // 0. foundation: exit codes, units, atomic writes, the threshold type, the crate's error, the
    //    kinds of profiler failure; no knowledge of GPUs, specs or runs
    &["foundation"],
    // 1. leaves: pure statistics, Nsight Compute's formats, the GPU through NVML, and `measured`:
    //    the measured-data vocabulary (`samples`, which imports nothing) and the counter diff that
    //    says why a time changed (`why`, on `stats`); CUPTI's injection library and trace files
    &["stats", "ncu", "gpu", "measured", "cupti"],
    // 2. the spec
    &["spec"],
    // 3. from spec to samples: what to run, how to run it (with the SASS hashes,
    //    `profile::sass`), what came out, what is stored
    &["plan", "profile", "baseline", "nsys"],
    // 4. the run (`run`: measure, the engine, check, ab, missing, gone, update), its outcome
    //    (`outcome`: results, decide, merge) and the history of runs (`history`: changes,
    //    calibrate)
    &["run", "outcome", "history"],
    // 5. rendering typed results
    &["report"],
    // 6. publishing what was rendered: files, the Actions step summary, outputs and annotations,
    //    the pull-request comment and the merge-request note (the network)
    &["publish"],
    // 7. commands and the command line
    &["commands", "cli"],
];

/// Imports that break the rule, each to be removed. None are left (issue 10); should one ever
/// be listed here, the test fails once it is fixed and still listed, so this list stays the truth.
const KNOWN_VIOLATIONS: &[(&str, &str)] = &[];

/// The layer of a folder of `src/` (or of what `crate::` names first).
fn layer_of(folder: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&folder))
}

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The folder a file lives in (`src/ncu/parse/raw.rs` -> `ncu`, `src/run/check/mod.rs` -> `run`), `None`
/// for the crate root and `main.rs`; a loose file's own name (which the layout test rejects).
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

/// [`code`] of a file; a `tests.rs` beside a `mod.rs` that declares it `#[cfg(test)] mod tests;`
/// is that module's unit tests, which may use anything: nothing.
pub(crate) fn source(file: &Path) -> String {
    if file.file_name().is_some_and(|n| n == "tests.rs") {
        let parent = std::fs::read_to_string(file.with_file_name("mod.rs")).unwrap_or_default();
        assert!(
            parent.contains("#[cfg(test)]") && parent.contains("\nmod tests;"),
            "{}: a file named tests.rs is a unit-test module, declared `#[cfg(test)] mod tests;` in its mod.rs",
            file.display()
        );
        return String::new();
    }
    code(&std::fs::read_to_string(file).unwrap())
}

fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let Some(m) = module_of(src, &f) else { continue };
        let text = source(&f);
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
            panic!("folder `{m}` is in no layer: add it to LAYERS here and to docs/architecture.md")
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

/// The layout shows the layers: every module lives in a folder of `src/` that has a layer; only
/// the crate root (`lib.rs`) and `main.rs` sit loose in `src/`.
#[test]
fn every_module_lives_in_a_layer_folder() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        if rel.components().count() == 1 {
            assert!(
                rel == Path::new("lib.rs") || rel == Path::new("main.rs"),
                "src/{} sits loose in src/: move it into the folder of its layer (docs/architecture.md)",
                rel.display()
            );
            continue;
        }
        let folder = module_of(&src, f).unwrap();
        assert!(
            layer_of(&folder).is_some(),
            "src/{folder}/ is in no layer: add it to LAYERS here and to docs/architecture.md"
        );
    }
    // Every layer's folders exist, so the table stays the truth.
    for folder in LAYERS.iter().flat_map(|l| l.iter()) {
        assert!(
            src.join(folder).is_dir(),
            "LAYERS names src/{folder}/, which is gone"
        );
    }
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
        let text = source(&f);
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
        if rel == Path::new("outcome/decide.rs") || rel.starts_with("report") {
            continue;
        }
        let text = source(&f);
        // Outside decide.rs (which decides) and the reporters (which render), no code names a
        // run verdict other than to compare with `Error`.
        for v in [
            "RunVerdict::Pass",
            "RunVerdict::Regression",
            "RunVerdict::Inconclusive",
        ] {
            assert!(
                !text.contains(v),
                "{} names {v}: the run verdict is decide::run_verdict's to decide",
                rel.display()
            );
        }
    }
}

/// What a row means for the gate (`fails_gate`, `--fail-on`) and which exit code a verdict gets
/// are read in one module, `outcome/decide.rs`; the reporters ask it (`decide::row_gate`) and never
/// map a verdict to a failure themselves. `run/missing.rs` only sets `fails_gate`; `outcome/results/`
/// defines the types; the command line maps its flag.
#[test]
fn row_gates_and_exit_codes_are_decided_in_one_place() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut checked = 0;
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_path_buf();
        if rel == Path::new("outcome/decide.rs")
            || rel == Path::new("outcome/results/mod.rs")
            || rel == Path::new("foundation/exit_codes.rs")
        {
            continue;
        }
        let text = source(&f);
        checked += 1;
        let sets_only = text
            .matches(".fails_gate")
            .count()
            .saturating_sub(text.matches(".fails_gate = true").count());
        assert_eq!(
            sets_only,
            0,
            "{} reads `fails_gate`: a row's gate status is decide::row_gate's to decide",
            rel.display()
        );
        if !rel.starts_with("cli") {
            assert!(
                !text.contains("FailOn::Inconclusive"),
                "{} compares --fail-on: decide::row_gate / run_gate / exit_code decide what it fails",
                rel.display()
            );
        }
        // A failure's exit code is its class's (`ErrorClass::exit`, in foundation/exit_codes.rs).
        for code in [
            "exit_codes::REGRESSION",
            "exit_codes::PROFILER_FAILURE",
            "Exit::Regression",
            "Exit::ProfilerFailure",
        ] {
            assert!(
                !text.contains(code),
                "{} names {code}: exit codes of a run are decide::exit_code's",
                rel.display()
            );
        }
        assert!(
            !text.contains("missing::fails"),
            "{}: whether a missing row fails is decide::row_gate's",
            rel.display()
        );
    }
    assert!(checked > 50, "only {checked} files read");
}

#[test]
fn each_format_has_one_escaping_function_and_its_reporter_uses_only_that_one() {
    let report = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/report");
    // (reporter file, its format's one escaping function, the other formats' functions)
    let formats = [
        ("markdown.rs", "fn escape_md_cell("),
        ("html.rs", "pub use super::text::escape_html as escape;"),
        ("junit.rs", "fn escape("),
        ("annotations.rs", "fn escape("),
    ];
    let others = |me: &str| -> Vec<&'static str> {
        let mut v = vec![];
        if me != "markdown.rs" {
            v.push("escape_md_cell");
        }
        for (f, path) in [
            ("html.rs", "html::escape"),
            ("junit.rs", "junit::escape"),
            ("annotations.rs", "annotations::escape"),
        ] {
            if me != f {
                v.push(path);
            }
        }
        v
    };
    // HTML's function lives below the page and the breakdown charts it includes; it is the
    // only escaping function there.
    let text = code(&std::fs::read_to_string(report.join("text.rs")).unwrap());
    assert_eq!(text.matches("fn escape").count(), 1, "src/report/text.rs");
    assert!(text.contains("pub fn escape_html("));
    for (file, own) in formats {
        let text = code(&std::fs::read_to_string(report.join(file)).unwrap());
        let escapers = text
            .lines()
            .filter(|l| l.contains("fn escape") || l.contains("fn sanitize") || l.contains("as escape;"))
            .count();
        assert!(
            text.contains(own) && escapers == 1,
            "src/report/{file}: expected exactly one escaping function ({own}...), found {escapers}"
        );
        for o in others(file) {
            assert!(
                !text.contains(o),
                "src/report/{file} uses `{o}`, another format's escaping function"
            );
        }
    }
}

// ---- import cycles --------------------------------------------------------------------------

/// Every module of the crate as its path (`["stats", "summary"]`, `["plan"]` for plan/mod.rs),
/// with its file.
fn module_paths(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut out = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap().with_extension("");
        let mut path: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if path.last().is_some_and(|l| l == "mod") {
            path.pop();
        }
        if path == ["lib"] || path == ["main"] {
            continue;
        }
        out.insert(path, f);
    }
    out
}

/// The paths a `use` tree names: `a::{b, c::{d, e}}` -> `a::b`, `a::c::d`, `a::c::e`. `text`
/// starts just after `crate::`/`super::`/`self::`.
fn use_paths(text: &str) -> Vec<Vec<String>> {
    fn tree(s: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let mut path = prefix.to_vec();
        let mut rest = s.trim_start();
        loop {
            let ident: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if ident.is_empty() {
                if let Some(inner) = rest.strip_prefix('{') {
                    // Split the group at top-level commas.
                    let (mut depth, mut start) = (0usize, 0usize);
                    for (i, c) in inner.char_indices() {
                        match c {
                            '{' => depth += 1,
                            '}' if depth == 0 => {
                                tree(&inner[start..i], &path, out);
                                return;
                            }
                            '}' => depth -= 1,
                            ',' if depth == 0 => {
                                tree(&inner[start..i], &path, out);
                                start = i + 1;
                            }
                            _ => {}
                        }
                    }
                }
                break;
            }
            rest = &rest[ident.len()..];
            path.push(ident);
            match rest.strip_prefix("::") {
                Some(r) => rest = r.trim_start(),
                None => break,
            }
        }
        if path.len() > prefix.len() {
            out.push(path);
        }
    }
    let mut out = Vec::new();
    tree(text, &[], &mut out);
    out
}

/// Module -> modules it imports, resolved to the deepest module each path names. A module using
/// its own ancestors (a child using what its `mod.rs` declares) is not counted: the parent is
/// the child's interface, not a peer.
fn module_graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let modules = module_paths(src);
    let resolve = |p: &[String]| -> Option<Vec<String>> {
        (1..=p.len())
            .rev()
            .map(|n| p[..n].to_vec())
            .find(|c| modules.contains_key(c))
    };
    let mut graph = BTreeMap::new();
    for (m, file) in &modules {
        let is_mod_rs = file.file_name().is_some_and(|n| n == "mod.rs");
        let text = source(file);
        let mut deps = BTreeSet::new();
        for (kw, base) in [
            ("crate::", Vec::new()),
            // `super` of a/b.rs is a; of a/b/mod.rs (module a::b) also a.
            ("super::", m[..m.len().saturating_sub(1)].to_vec()),
            (
                "self::",
                if is_mod_rs {
                    m.clone()
                } else {
                    m[..m.len() - 1].to_vec()
                },
            ),
        ] {
            for (i, _) in text.match_indices(kw) {
                // Not the tail of a longer path (`foo::crate::`) or identifier (`myself::`).
                let before = text[..i].chars().next_back();
                if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                for p in use_paths(&text[i + kw.len()..]) {
                    let full: Vec<String> = base.iter().cloned().chain(p).collect();
                    if let Some(d) = resolve(&full)
                        && d != *m
                        && !m.starts_with(&d)
                    {
                        deps.insert(d);
                    }
                }
            }
        }
        graph.insert(m.clone(), deps);
    }
    graph
}

/// The strongly connected components with more than one node (Tarjan).
fn cycles<N: Ord + Clone>(graph: &BTreeMap<N, BTreeSet<N>>) -> Vec<Vec<N>> {
    struct T<'g, N> {
        g: &'g BTreeMap<N, BTreeSet<N>>,
        index: BTreeMap<N, usize>,
        low: BTreeMap<N, usize>,
        stack: Vec<N>,
        on: BTreeSet<N>,
        out: Vec<Vec<N>>,
    }
    impl<N: Ord + Clone> T<'_, N> {
        fn visit(&mut self, v: &N) {
            let i = self.index.len();
            self.index.insert(v.clone(), i);
            self.low.insert(v.clone(), i);
            self.stack.push(v.clone());
            self.on.insert(v.clone());
            for w in self.g.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if self.on.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = Vec::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on.remove(&w);
                    comp.push(w.clone());
                    if w == *v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    self.out.push(comp);
                }
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.out
}

#[test]
fn the_import_reader_sees_groups_nested_paths_and_super() {
    assert_eq!(
        use_paths("a::{b, c::{d, e}}, x;"),
        [vec!["a", "b"], vec!["a", "c", "d"], vec!["a", "c", "e"]]
    );
    assert_eq!(use_paths("stats::median(&v)"), [vec!["stats", "median"]]);
    // The graph of this crate sees a `super::` import: stats::outliers uses stats::order.
    let g = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
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

#[test]
fn no_two_modules_import_each_other_even_through_others() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    // Submodules: `baseline::format` <-> `baseline::history` and the like.
    let found: Vec<String> = cycles(&graph)
        .iter()
        .map(|c| c.iter().map(|m| m.join("::")).collect::<Vec<_>>().join(" <-> "))
        .collect();
    assert!(found.is_empty(), "import cycles between modules: {found:?}");
    // Top-level folders (`run` -> `outcome` -> `run`), apart from the known
    // layer violations, which are upward imports and listed to be removed.
    let known: BTreeSet<(String, String)> = KNOWN_VIOLATIONS
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
    let mut top: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, deps) in &graph {
        let entry = top.entry(m[0].clone()).or_default();
        for d in deps {
            if d[0] != m[0] && !known.contains(&(m[0].clone(), d[0].clone())) {
                entry.insert(d[0].clone());
            }
        }
    }
    let found = cycles(&top);
    assert!(
        found.is_empty(),
        "import cycles between top-level folders: {found:?}"
    );
}

// ---- sizes ----------------------------------------------------------------------------------

/// The most lines a file of `src/` may have, and a function (test functions included).
const MAX_FILE_LINES: usize = 800;
const MAX_FN_LINES: usize = 120;

/// The functions of a file as (name, first line (1-based), length in lines). A function runs from
/// its `fn` line to the first line after it that is a `}` at the same indentation. Hand-written
/// rather than a Rust parser crate (syn): the code is rustfmt'd (`cargo fmt` runs in CI), which
/// puts every function's closing brace alone on a line at the indentation of its `fn`, so this
/// count is exact and no dependency is needed for it.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
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

/// Issue 26: no file of `src/` over about 800 lines and no function over about 120, so each file
/// reads as one subject and each function as one step.
#[test]
fn no_file_or_function_is_too_long() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut over = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(f).unwrap();
        let n = text.lines().count();
        if n > MAX_FILE_LINES {
            over.insert(rel.clone(), format!("{n} lines"));
        }
        for (name, line, len) in functions(&text) {
            if len > MAX_FN_LINES {
                over.insert(format!("{rel}::{name}"), format!("{len} lines from line {line}"));
            }
        }
    }
    let over: Vec<_> = over.iter().map(|(k, v)| format!("{k} ({v})")).collect();
    assert!(
        over.is_empty(),
        "over {MAX_FILE_LINES} lines a file or {MAX_FN_LINES} a function: split them: {over:#?}"
    );
}
