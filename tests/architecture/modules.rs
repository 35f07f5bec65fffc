//! The modules of a crate: the import reader, no import cycle between modules or folders, every
//! folder a module [`CRATES`] lists, the parse-only readers naming no program.

use super::*;

/// The paths a `use` tree names: `a::{b, c::{d, e}}` -> `a::b`, `a::c::d`, `a::c::e`. `text`
/// starts just after `crate::`/`super::`/`self::`.
pub fn use_paths(text: &str) -> Vec<Vec<String>> {
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

/// The strongly connected components with more than one node (Tarjan).
pub fn cycles<N: Ord + Clone>(graph: &BTreeMap<N, BTreeSet<N>>) -> Vec<Vec<N>> {
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

// ---- import cycles between the modules of a crate -------------------------------------------

/// Every module of a crate as its path (`["stats", "summary"]`, `["plan"]` for plan/mod.rs), with
/// its file.
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

/// Module -> modules of the same crate it imports (outside its test items), resolved to the
/// deepest module each path names. A module using its own ancestors (a child using what its
/// `mod.rs` declares) is not counted: the parent is the child's interface, not a peer. Modules a
/// crate re-exports from a lower crate are not its own: the crates' order covers them.
pub fn module_graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
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
        let rel = file
            .strip_prefix(src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = without_tests(&rel, &std::fs::read_to_string(file).unwrap());
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

/// No two modules of a crate import each other, even through others (submodules:
/// `baseline::format` <-> `baseline::history`; top-level folders: `run` <-> `outcome`).
pub fn module_cycles(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (krate, dir, _, _) in CRATES {
        let graph = module_graph(&root.join(dir).join("src"));
        for c in cycles(&graph) {
            let c: Vec<String> = c.iter().map(|m| m.join("::")).collect();
            out.push(format!(
                "{krate}: import cycle between modules: {}",
                c.join(" <-> ")
            ));
        }
        let mut top: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (m, deps) in &graph {
            let entry = top.entry(m[0].clone()).or_default();
            for d in deps {
                if d[0] != m[0] {
                    entry.insert(d[0].clone());
                }
            }
        }
        for c in cycles(&top) {
            out.push(format!(
                "{krate}: import cycle between folders: {}",
                c.join(" <-> ")
            ));
        }
    }
    out
}

/// Every folder of a crate's `src/` is a module [`CRATES`] lists for it, and only `lib.rs` and
/// `main.rs` sit loose in `src/`, so the layout shows the layers.
pub fn layout(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut dirs: BTreeSet<String> = BTreeSet::new();
    if let Ok(entries) = std::fs::read_dir(root.join("crates")) {
        for e in entries {
            dirs.insert(format!("crates/{}", e.unwrap().file_name().to_string_lossy()));
        }
    }
    for (krate, dir, declared, _) in CRATES {
        dirs.remove(*dir);
        let src = root.join(dir).join("src");
        let Ok(entries) = std::fs::read_dir(&src) else {
            out.push(format!("{krate}: {dir}/src is missing"));
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                if !declared.contains(&name.as_str()) {
                    out.push(format!(
                        "{krate}: {dir}/src/{name}/ is a folder CRATES does not list"
                    ));
                }
            } else if !["lib.rs", "main.rs"].contains(&name.as_str()) {
                out.push(format!(
                    "{krate}: {dir}/src/{name} sits loose in src/: move it into a module's folder"
                ));
            }
        }
        for d in *declared {
            if !src.join(d).is_dir() {
                out.push(format!("{krate}: CRATES lists {dir}/src/{d}/, which is gone"));
            }
        }
    }
    for d in dirs {
        out.push(format!(
            "{d} is a crate in no layer: add it to CRATES and docs/architecture.md"
        ));
    }
    out
}

// ---- parse-only readers ----------------------------------------------------------------------

/// The folders of a tool's file formats that are parse-only readers (docs/architecture.md,
/// "Adding a backend"): a capture's bytes in, samples out. They name neither `profile` (the
/// backends, which run programs) nor `spec` nor `plan` (`cgp-read` imports the model of Nsight
/// Systems' outputs from cgp-spec, `cgp_spec::nsys`, and nothing else of it). All of `cgp-read`
/// is one (issue 62), and starts no program either ([`readers_start_no_program`]).
pub const PARSE_ONLY: &[&str] = &["crates/cgp-profile/src/cupti", "crates/cgp-read/src"];

/// What starting a program is spelled as.
const PROGRAMS: &[&str] = &["std::process", "process::Command", "Command::new", "Stdio::"];

/// `cgp-read` starts no program (issue 62): the backends of `cgp-profile` run the tools, through
/// one runner; a reader is given the bytes they wrote. Tests left out.
pub fn readers_start_no_program(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for (krate, rel, file) in sources(root) {
        if krate != "cgp-read" {
            continue;
        }
        let text = without_tests(&rel, &std::fs::read_to_string(&file).unwrap_or_default());
        for name in PROGRAMS {
            if text.contains(name) {
                found.push(format!(
                    "cgp-read: src/{rel} names `{name}`: the readers parse what they are given; running a tool is cgp-profile's"
                ));
            }
        }
    }
    found
}

/// cgp-read may import the Nsight Systems model from cgp-spec and nothing else of it: the spec
/// named through a group or a path is found, the model's import is not.
#[test]
fn a_reader_importing_the_spec_through_its_crate_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let plant = |rel: &str, text: &str| {
        let p = dir.path().join("crates/cgp-read/src").join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    plant(
        "lib.rs",
        "pub(crate) use cgp_spec::nsys;\npub(crate) use cgp_spec::{plan, spec};\n",
    );
    plant("nsys_files/mod.rs", "use cgp_spec::spec::Target;\n");
    let mut found = parse_only_readers(dir.path());
    found.sort();
    assert_eq!(
        found,
        [
            "crates/cgp-read/src/lib.rs names `cgp_spec::{`, and crates/cgp-read/src is a parse-only reader",
            "crates/cgp-read/src/nsys_files/mod.rs names `cgp_spec::spec`, and crates/cgp-read/src is a parse-only reader",
        ]
    );
}

/// A reader that starts its tool is found (a `Command::new` in a harness reader, `std::process`
/// in a new reader folder); a test item's program is not.
#[test]
fn a_reader_that_starts_a_program_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let plant = |rel: &str, text: &str| {
        let p = dir.path().join("crates/cgp-read/src").join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    plant(
        "harness/gbench.rs",
        "fn planted() {\n    let _ = std::process::Command::new(\"bench\").output();\n}\n",
    );
    plant(
        "nsys/mod.rs",
        "use std::process;\nfn planted() {\n    process::exit(3);\n}\n",
    );
    plant(
        "harness/asv.rs",
        "#[cfg(test)]\nmod tests {\n    fn t() {\n        let _ = std::process::id();\n    }\n}\n",
    );
    let found = readers_start_no_program(dir.path());
    let at = |f: &str, n: &str| {
        found
            .iter()
            .any(|v| v.starts_with(&format!("cgp-read: src/{f} names `{n}`")))
    };
    assert!(
        at("harness/gbench.rs", "std::process") && at("harness/gbench.rs", "Command::new"),
        "{found:#?}"
    );
    assert!(at("nsys/mod.rs", "std::process"), "{found:#?}");
    assert!(found.iter().all(|v| !v.contains("asv.rs")), "{found:#?}");
}

/// Every name of `profile` or `spec` in a parse-only reader, outside its tests.
pub fn parse_only_readers(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for dir in PARSE_ONLY {
        let mut files = Vec::new();
        rust_files(&root.join(dir), &mut files);
        for f in files {
            let rel = f.strip_prefix(root).unwrap_or(&f).display().to_string();
            let text = without_tests(&rel, &std::fs::read_to_string(&f).unwrap_or_default());
            // The model of Nsight Systems' outputs (`cgp_spec::nsys`) is what a reader fills; the
            // spec and the plan are not a reader's.
            for name in [
                "crate::profile",
                "crate::spec",
                "crate::plan",
                "cgp_spec::spec",
                "cgp_spec::plan",
                "cgp_spec::{",
            ] {
                if text.contains(name) {
                    found.push(format!("{rel} names `{name}`, and {dir} is a parse-only reader"));
                }
            }
        }
    }
    found
}
