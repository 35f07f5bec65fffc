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
//!   no file over 800 lines or function over 120 (tests too), one escaping function per format,
//!   no import cycle between the modules of a crate.
//!
//! [`closed_crates`], [`results_types_are_typed`] and the comparisons of
//! [`profilers_are_named_where_registered`] read the sources as Rust (`syn`,
//! tests/architecture_syntax.rs, issue 62), where a line missed a multi-line or renamed form.
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
    // Decided results, the baseline store, the history of runs.
    (
        "cgp-outcome",
        "crates/cgp-outcome",
        &["baseline", "history", "outcome"],
        &["cgp-core", "cgp-spec"],
    ),
    // Rendering decided results.
    (
        "cgp-report",
        "crates/cgp-report",
        &["report"],
        &["cgp-core", "cgp-spec", "cgp-outcome"],
    ),
    // The profiler backends, NVML, recordings.
    (
        "cgp-profile",
        "crates/cgp-profile",
        &["cupti", "gpu", "harness", "ncu", "nsys", "profile"],
        &["cgp-core", "cgp-spec"],
    ),
    // Measure, check, ab, baseline update.
    (
        "cgp-engine",
        "crates/cgp-engine",
        &["run"],
        &["cgp-core", "cgp-spec", "cgp-outcome", "cgp-profile"],
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
            "cgp-outcome",
            "cgp-report",
            "cgp-profile",
            "cgp-engine",
            "cgp-publish",
            "cgp-store",
        ],
    ),
];

/// Crates that profile or drive a GPU, speak HTTP, parse a command line or draw progress bars
/// (a name ending in `*` is a prefix).
const PROFILERS: &[&str] = &["cgp-profile", "cgp-engine", "nvml-wrapper", "rusqlite"];
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
        "cgp-outcome",
        &[PROFILERS, DATABASES, HTTP, COMMAND_LINE, &["cgp-report"]],
    ),
    ("cgp-report", &[PROFILERS, DATABASES, HTTP, COMMAND_LINE]),
    // The engine runs the work and emits progress events; the command layer draws them
    // (issue 62): no command line, no progress bar.
    ("cgp-engine", &[COMMAND_LINE]),
    // The store drives a database (SQLite, PostgreSQL), nothing else: no profiler or GPU, no
    // HTTP client, no command line, no reporter.
    (
        "cgp-store",
        &[
            &["cgp-profile", "cgp-engine", "nvml-wrapper"],
            HTTP,
            COMMAND_LINE,
            &["cgp-report", "cgp-publish"],
        ],
    ),
];

/// The most lines a source file may have, and a function (test functions included).
pub const MAX_FILE_LINES: usize = 800;
pub const MAX_FN_LINES: usize = 120;

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
    if rel == "tests.rs" || rel.ends_with("/tests.rs") {
        return String::new();
    }
    let text = uncommented(text);
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at + "#[cfg(test)]".len()..];
        // The item ends at its `;` when that comes before any `{`, else at the `}` closing its
        // first `{`.
        let (semi, open) = (item.find(';'), item.find('{'));
        let end = match (semi, open) {
            (Some(s), Some(o)) if s < o => s + 1,
            (Some(s), None) => s + 1,
            (_, Some(o)) => o + block_end(&item[o..]),
            (None, None) => item.len(),
        };
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

// ---- the crates -----------------------------------------------------------------------------

/// `cargo metadata` of the tree at `root`: package id -> name, the workspace's members, and
/// package id -> its normal and build dependencies (dev-dependencies do not make a library
/// depend on anything).
struct Metadata {
    names: BTreeMap<String, String>,
    members: Vec<String>,
    deps: BTreeMap<String, Vec<String>>,
}

fn metadata(root: &Path) -> Result<Metadata, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    // This machine's platform, offline: every dependency it builds is in the local cache once the
    // tree has been built (the other platforms' are not).
    let rustc = std::process::Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
        .arg("-vV")
        .output()
        .map_err(|e| format!("cannot run rustc -vV: {e}"))?;
    let host = String::from_utf8_lossy(&rustc.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .ok_or("rustc -vV names no host")?;
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--filter-platform",
            &host,
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed in {}: {}",
            root.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    let names = v["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["id"].as_str().unwrap().to_owned(),
                p["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let members = v["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_owned())
        .collect();
    let mut deps = BTreeMap::new();
    for node in v["resolve"]["nodes"].as_array().unwrap() {
        let linked: Vec<String> = node["deps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| {
                d["dep_kinds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|k| k["kind"].as_str() != Some("dev"))
            })
            .map(|d| d["pkg"].as_str().unwrap().to_owned())
            .collect();
        deps.insert(node["id"].as_str().unwrap().to_owned(), linked);
    }
    Ok(Metadata { names, members, deps })
}

fn matches(name: &str, pattern: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    }
}

/// Which workspace crate depends on which, against [`CRATES`]; what the pure crates and the
/// report crate reach, against [`BANNED`].
pub fn crate_graph(root: &Path) -> Vec<String> {
    let m = match metadata(root) {
        Ok(m) => m,
        Err(e) => return vec![e],
    };
    let mut out = Vec::new();
    let layer = |name: &str| CRATES.iter().find(|c| c.0 == name);
    let members: BTreeSet<&str> = m.members.iter().map(|id| m.names[id].as_str()).collect();
    for (name, ..) in CRATES {
        if !members.contains(name) {
            out.push(format!("{name} is in CRATES but not in the workspace"));
        }
    }
    for id in &m.members {
        let name = &m.names[id];
        let Some((_, _, _, allowed)) = layer(name) else {
            out.push(format!(
                "{name} is in no layer: add it to CRATES and docs/architecture.md"
            ));
            continue;
        };
        for d in &m.deps[id] {
            let dep = &m.names[d];
            if members.contains(dep.as_str()) && !allowed.contains(&dep.as_str()) {
                out.push(format!(
                    "{name} depends on {dep}, a crate it may not depend on (CRATES)"
                ));
            }
        }
    }
    for (name, lists) in BANNED {
        let Some(start) = m.members.iter().find(|id| m.names[*id] == *name) else {
            continue;
        };
        // Breadth-first, keeping the first path to each package.
        let mut via: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = vec![start.as_str()];
        while let Some(id) = queue.pop() {
            for d in &m.deps[id] {
                if !via.contains_key(d.as_str()) && d != start {
                    via.insert(d, id);
                    queue.insert(0, d);
                }
            }
        }
        for reached in via.keys() {
            let dep = &m.names[*reached];
            if lists.iter().flat_map(|l| l.iter()).any(|p| matches(dep, p)) {
                let mut chain = vec![dep.clone()];
                let mut at = *reached;
                while let Some(prev) = via.get(at) {
                    chain.push(m.names[*prev].clone());
                    at = prev;
                }
                chain.reverse();
                out.push(format!("{name} reaches {dep}: {}", chain.join(" -> ")));
            }
        }
    }
    out
}

/// The modules a crate can name as `crate::x`: those its `lib.rs` declares (`pub mod x;`) and
/// those it re-exports (`pub use cgp_y::{x, ..};`) from a crate it may depend on; plus
/// re-exports from a crate it may not depend on, as violations.
fn crate_modules(name: &str, lib: &str, allowed: &[&str], out: &mut Vec<String>) -> BTreeSet<String> {
    let mut modules = BTreeSet::new();
    let lib = uncommented(lib);
    for line in lib.lines() {
        let line = line.trim();
        if let Some(m) = line.strip_prefix("pub mod ").and_then(|l| l.strip_suffix(';')) {
            modules.insert(m.to_owned());
        }
        // A private module that puts two crates' modules under one name (`mod gpu { .. }`).
        if let Some(m) = line.strip_prefix("mod ").and_then(|l| l.strip_suffix(" {")) {
            modules.insert(m.to_owned());
        }
    }
    // The modules of the crates below, imported for the crate alone (`pub(crate) use cgp_x::..`;
    // a `pub use` of them is refused by `closed_crates`).
    for (i, _) in lib.match_indices("use cgp_") {
        let rest = &lib[i + "use ".len()..];
        let krate: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !allowed.contains(&krate.replace('_', "-").as_str()) {
            out.push(format!(
                "{name}/src/lib.rs re-exports from {krate}, a crate it may not depend on"
            ));
        }
        let rest = &rest[krate.len()..];
        let rest = rest.strip_prefix("::").unwrap_or(rest);
        let names = match rest.strip_prefix('{') {
            Some(group) => group.split('}').next().unwrap_or(""),
            None => rest.split(';').next().unwrap_or(""),
        };
        for n in names.split(',') {
            let n = n.trim();
            if n.chars().next().is_some_and(char::is_lowercase) {
                modules.insert(n.to_owned());
            }
        }
    }
    modules
}

/// No crate re-exports another crate (issue 49, "closed crates"): a crate imports what it uses of
/// the crates below for itself (`pub(crate) use`), and its dependents name those crates
/// themselves. Refused: `pub use cgp_x...` anywhere, and a `pub use crate::m::...` that hands on a
/// module of a crate below through the crate's own import of it (`pub use crate::outcome::{gone,
/// missing}` in the engine, once). A type of a crate below that a crate's own types are made of
/// may be named beside them (`results` offers `RowVerdict` with `Row`); the root package's library
/// exports its own error type only. Read as Rust (issue 62): a module reached through the crate's
/// own or a renamed import (`pub use outcome::results`, `use cgp_outcome::outcome as o; pub use
/// o::results`), or re-exported inside an inline module, is found too.
pub fn closed_crates(root: &Path) -> Vec<String> {
    super::architecture_syntax::re_exports(root)
}

/// Every `crate::x` (and `crate::{x, ..}`) of every file, tests included, names a module its
/// crate has: a `use crate::report::..` in the statistics, or `crate::commands::..` in the
/// engine, is refused here as well as by the compiler.
pub fn crate_paths(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut modules = BTreeMap::new();
    for (name, dir, declared, allowed) in CRATES {
        let lib = std::fs::read_to_string(root.join(dir).join("src/lib.rs")).unwrap_or_default();
        let m = crate_modules(name, &lib, allowed, &mut out);
        for d in *declared {
            if !m.contains(*d) {
                out.push(format!(
                    "{name}: CRATES lists module {d}, which its lib.rs does not declare"
                ));
            }
        }
        modules.insert(*name, m);
    }
    for (krate, rel, file) in sources(root) {
        let text = uncommented(&std::fs::read_to_string(&file).unwrap());
        let has = &modules[krate];
        let mut named = BTreeSet::new();
        for (i, _) in text.match_indices("crate::") {
            if text[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
            {
                continue;
            }
            let rest = &text[i + "crate::".len()..];
            match rest.strip_prefix('{') {
                Some(group) => {
                    let group = group.split('}').next().unwrap_or("");
                    for part in group.split(',') {
                        named.insert(ident(part.trim()));
                    }
                }
                None => {
                    named.insert(ident(rest));
                }
            }
        }
        for n in named {
            if !n.is_empty() && n.chars().next().is_some_and(char::is_lowercase) && !has.contains(&n) {
                out.push(format!(
                    "{krate}: src/{rel} names `crate::{n}`, which {krate} does not have (a higher layer?)"
                ));
            }
        }
    }
    out
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

// ---- text rules -----------------------------------------------------------------------------

/// What a row means for the gate (`fails_gate`, `--fail-on`), the run verdicts and which exit
/// code a run gets are read in one module, `outcome/decide.rs`; reporters ask it and never map a
/// verdict to a failure themselves. `outcome/missing.rs` only sets `fails_gate`;
/// `outcome/results/` defines the types; the command line maps its flag; reporters render the
/// run verdict decide made. Test items may assert any of them.
pub fn one_place_decides(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (krate, rel, file) in sources(root) {
        let text = without_tests(&rel, &std::fs::read_to_string(&file).unwrap());
        let at = format!("{krate}: src/{rel}");
        let is = |p: &str| rel == p;
        if is("outcome/decide.rs") {
            continue;
        }
        let reads = text
            .matches(".fails_gate")
            .count()
            .saturating_sub(text.matches(".fails_gate = true").count());
        if reads > 0 && !is("outcome/results/mod.rs") {
            out.push(format!(
                "{at} reads `fails_gate`: a row's gate status is decide::row_gate's"
            ));
        }
        if text.contains("FailOn::Inconclusive") && !rel.starts_with("cli/") && !is("outcome/results/mod.rs")
        {
            out.push(format!("{at} compares --fail-on: decide decides what it fails"));
        }
        // A failure's exit code is its class's (`ErrorClass::exit`, in foundation/exit_codes.rs).
        for code in [
            "exit_codes::REGRESSION",
            "exit_codes::PROFILER_FAILURE",
            "Exit::Regression",
            "Exit::ProfilerFailure",
        ] {
            if text.contains(code) && !is("foundation/exit_codes.rs") {
                out.push(format!(
                    "{at} names {code}: the exit codes of a run are decide::exit_code's"
                ));
            }
        }
        for v in [
            "RunVerdict::Pass",
            "RunVerdict::Regression",
            "RunVerdict::Inconclusive",
        ] {
            if text.contains(v) && !rel.starts_with("report/") {
                out.push(format!(
                    "{at} names {v}: the run verdict is decide::run_verdict's"
                ));
            }
        }
        if text.contains("missing::fails") {
            out.push(format!("{at}: whether a missing row fails is decide::row_gate's"));
        }
    }
    out
}

/// What `decide` offers the reporters: a row's and a run's gate status, already decided. The rest
/// of it (the run verdict, the exit codes, its helpers) is its own.
const DECIDE_FOR_REPORTERS: &[&str] = &["row_gate", "run_gate", "Gate", "RowGate"];

/// Words that state a gate outcome; a reporter prints them only as `decide` and the verdict types
/// label them, never as a literal of its own.
const GATE_WORDS: &[&str] = &[
    "fail",
    "failed",
    "failure",
    "pass",
    "passed",
    "regression",
    "regressed",
    "improvement",
    "improved",
    "inconclusive",
];

/// The string literals of `text` (escapes kept as written; raw strings read as plain ones).
pub fn string_literals(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let mut prev = ' ';
    while let Some(c) = chars.next() {
        // `'"'` is a character, not a string.
        if c == '"' && prev != '\'' {
            let mut lit = String::new();
            let mut escaped = false;
            for d in chars.by_ref() {
                if escaped {
                    escaped = false;
                } else if d == '\\' {
                    escaped = true;
                } else if d == '"' {
                    break;
                }
                lit.push(d);
            }
            out.push(lit);
            prev = '"';
            continue;
        }
        prev = c;
    }
    out
}

/// Reporters render decided results (issue 49, "the guard misses what matters"): in
/// `report/`, no part of `decide`
/// but the gate status it offers them ([`DECIDE_FOR_REPORTERS`]), and no gate word of their own
/// as a literal (a renderer that returns "FAIL" when an interval lies beyond the tolerance has
/// decided). A missing row's `fails_gate` (the field and `Row::fails_gate`) is `pub(crate)` in
/// cgp-outcome, so the compiler keeps reporters from it (`compile_fail` examples on `Missing`).
/// The statistics are pure: `stats/` reads no environment, file or clock. The engine reads no
/// environment variable (issue 62): the command layer reads the CI's (`GITHUB_SHA`) and hands
/// them in as values.
pub fn reporters_render_decided_results(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (krate, rel, file) in sources(root) {
        let text = without_tests(&rel, &std::fs::read_to_string(&file).unwrap());
        let at = format!("{krate}: src/{rel}");
        if rel.starts_with("report/") {
            let mut rest = text.as_str();
            while let Some(i) = rest.find("decide::") {
                rest = &rest[i + "decide::".len()..];
                for p in use_paths(rest) {
                    if let Some(first) = p.first()
                        && !DECIDE_FOR_REPORTERS.contains(&first.as_str())
                    {
                        out.push(format!(
                            "{at} names decide::{first}: a reporter renders what decide decided (it may use {})",
                            DECIDE_FOR_REPORTERS.join(", ")
                        ));
                    }
                }
            }
            for lit in string_literals(&text) {
                let word = lit
                    .trim()
                    .trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase();
                // Allowed: a count's noun (`plural(n, "regression", ...)`) and a verdict's or gate
                // status's label in the arm that maps that variant (`RowVerdict::Pass => "✅ pass"`).
                let labelled =
                    |l: &str| l.contains("plural(") || l.contains("Verdict::") || l.contains("Gate::");
                if GATE_WORDS.contains(&word.as_str())
                    && !text
                        .lines()
                        .any(|l| l.contains(&format!("\"{lit}\"")) && labelled(l))
                {
                    out.push(format!(
                        "{at} writes the gate word \"{lit}\" itself: verdicts and gate status are labelled by their types (decide, results)"
                    ));
                }
            }
        }
        if rel.starts_with("stats/") {
            for io in [
                "std::env",
                "env::var",
                "env::args",
                "std::fs",
                "fs::read",
                "SystemTime::now",
                "Instant::now",
            ] {
                if text.contains(io) {
                    out.push(format!(
                        "{at} uses `{io}`: the statistics are pure functions of their inputs"
                    ));
                }
            }
        }
        if krate == "cgp-engine" && text.contains("env::var") {
            out.push(format!(
                "{at} reads an environment variable (`env::var`): the command layer reads it and hands the engine its value"
            ));
        }
    }
    out
}

/// The most `Option` fields a results type may have (issue 49): what only some rows have belongs
/// to a variant ([`Outcome`](../crates/cgp-outcome/src/outcome/results/row.rs)) or a part of its own
/// (`Estimate`, `RowRule`, `Sides`), not to a flat list of maybes.
pub const MAX_OPTION_FIELDS: usize = 3;

/// The types of cgp-outcome (a run's results, `changes`, `calibrate` and `bisect` reports, the
/// baseline store) and cgp-core's verdict types (`stats::verdict`) have at most
/// [`MAX_OPTION_FIELDS`] `Option` fields each, or their named allowance (issue 62's debt). Read as
/// Rust: structs of any visibility and enum variants, `std::option::Option` and aliases of it.
/// The files' flat forms (`wire.rs`, `repr.rs`, `v1.rs`) are exempt: they are the JSON's schema,
/// private to their module, and convert to and from the typed ones.
pub fn results_types_are_typed(root: &Path) -> Vec<String> {
    super::architecture_syntax::option_fields(root)
}

/// Crates that may have more `pub` items than half their items, and the most they may have: a
/// ceiling that only goes down. `cgp-test-support` exists to be used by the tests (a
/// dev-dependency: every item is there for another crate's tests).
pub const PUB_CEILINGS: &[(&str, usize)] = &[("cgp-test-support", usize::MAX)];

/// `pub` items (a `fn`, method, `struct`, `enum`, `trait`, `const`, `static`, `type`, `union` or
/// `mod` declared `pub`, tests left out) are at most half of each crate's items, or under its
/// ceiling in [`PUB_CEILINGS`] (issue 49: 1,257 `pub` against 103 `pub(crate)` once).
pub fn pub_share(root: &Path) -> Vec<String> {
    const KINDS: &[&str] = &[
        "fn", "struct", "enum", "trait", "const", "static", "type", "union", "mod",
    ];
    let mut count: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (krate, rel, file) in sources(root) {
        let text = without_tests(&rel, &std::fs::read_to_string(&file).unwrap());
        for line in text.lines() {
            let t = line.trim_start();
            let (public, mut rest) = match t.strip_prefix("pub ") {
                Some(r) => (true, r),
                None => (
                    false,
                    t.strip_prefix("pub(")
                        .and_then(|r| r.split_once(") "))
                        .map_or(t, |(_, r)| r),
                ),
            };
            while let Some(r) = ["async ", "unsafe "].iter().find_map(|m| rest.strip_prefix(m)) {
                rest = r;
            }
            let mut words = rest.split_whitespace();
            let (Some(kind), Some(name)) = (words.next(), words.next()) else {
                continue;
            };
            // `const fn f` is one item, counted as its `const`.
            if !KINDS.contains(&kind) || !name.starts_with(|c: char| c.is_alphabetic() || c == '_') {
                continue;
            }
            let e = count.entry(krate).or_default();
            e.1 += 1;
            e.0 += usize::from(public);
        }
    }
    let mut out = Vec::new();
    for (krate, (public, all)) in count {
        let ceiling = PUB_CEILINGS
            .iter()
            .find(|(k, _)| *k == krate)
            .map_or(all / 2, |(_, c)| *c);
        if public > ceiling {
            out.push(format!(
                "{krate}: {public} of its {all} items are `pub` (at most {ceiling}): make what only the crate uses pub(crate)"
            ));
        }
    }
    out
}

/// Where a profiler may be named (`ProfilerKind::Ncu`, ...): its backend (cgp-profile) and the
/// registration (`measured/profiler.rs` of cgp-core, `spec/kinds.rs` of cgp-spec). Everything
/// else asks a kind what it does (issue 49: 49 places named one, 25 in the spec loader).
pub const PROFILER_REGISTRATION: &[(&str, &str)] = &[
    ("cgp-core", "measured/profiler.rs"),
    ("cgp-spec", "spec/kinds.rs"),
];

/// No code outside the backends and the registration ([`PROFILER_REGISTRATION`]) names a
/// concrete profiler, by its kind or by its registered name in a comparison
/// (`t.profiler.as_str() != "nsys"`, issue 62); test items may.
pub fn profilers_are_named_where_registered(root: &Path) -> Vec<String> {
    let mut out = super::architecture_syntax::profiler_names_compared(root);
    for (krate, rel, file) in sources(root) {
        if krate == "cgp-profile" || PROFILER_REGISTRATION.contains(&(krate, rel.as_str())) {
            continue;
        }
        let text = without_tests(&rel, &std::fs::read_to_string(&file).unwrap());
        for (i, line) in text.lines().enumerate() {
            // A kind (`ProfilerKind::Nsys`) or a harness format (`HarnessFormat::Vllm`, or
            // `Format::Vllm` as cgp-profile's `harness` names it).
            let named = ["ProfilerKind::", "HarnessFormat::", "Format::"].iter().any(|p| {
                line.match_indices(p).any(|(at, m)| {
                    let whole = !line[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
                    let mut rest = line[at + m.len()..].chars();
                    // A variant (`Ncu`, `PytestBenchmark`), not `ALL` or `default()`.
                    whole
                        && rest.next().is_some_and(|c| c.is_ascii_uppercase())
                        && rest.next().is_some_and(|c| c.is_ascii_lowercase())
                })
            });
            if named {
                out.push(format!(
                    "{krate}: src/{rel}:{}: names a profiler: ask the kind what it does (`ProfilerKind::explains`, `spec::kinds::rules`, ...)",
                    i + 1
                ));
            }
        }
    }
    out
}

/// clap stays in the command line (`src/cli/`, `src/main.rs`), tests included.
pub fn clap_in_cli(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (krate, rel, file) in sources(root) {
        if krate == "cgp-gate" && (rel.starts_with("cli/") || rel == "main.rs") {
            continue;
        }
        let text = uncommented(&std::fs::read_to_string(&file).unwrap());
        for name in ["clap::", "clap_complete", "clap_mangen", "#[arg(", "#[command("] {
            if text.contains(name) {
                out.push(format!(
                    "{krate}: src/{rel} uses clap (`{name}`): it belongs in src/cli/"
                ));
            }
        }
    }
    out
}

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

/// Each report format has one escaping function and its reporter uses only that one.
pub fn escaping(root: &Path) -> Vec<String> {
    let report = root.join("crates/cgp-report/src/report");
    // A reporter split into a module directory (`html/`) is read as one text: all its files.
    let read = |f: &str| {
        let path = report.join(f);
        let mut files = vec![path.clone()];
        if path.is_dir() {
            files.clear();
            rust_files(&path, &mut files);
            files.sort();
        }
        let text: String = files
            .iter()
            .map(|p| std::fs::read_to_string(p).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n");
        uncommented(&text)
    };
    let mut out = Vec::new();
    // (reporter file, its format's one escaping function, the other formats' functions)
    let formats = [
        ("markdown/", "fn escape_md_cell("),
        ("html/", "pub use super::text::escape_html as escape;"),
        ("junit.rs", "fn escape("),
        ("annotations.rs", "fn escape("),
        // The history site: names reach its page inside one JSON blob (its script sets them as
        // text), so its one escaping function is the blob's.
        ("site/page.rs", "pub fn escape_script_json("),
    ];
    let others = |me: &str| -> Vec<&'static str> {
        let mut v = vec![];
        if me != "markdown/" {
            v.push("escape_md_cell");
        }
        for (f, path) in [
            ("html/", "html::escape"),
            ("junit.rs", "junit::escape"),
            ("annotations.rs", "annotations::escape"),
            ("site/page.rs", "escape_script_json"),
        ] {
            if me != f {
                v.push(path);
            }
        }
        v
    };
    // HTML's function lives below the page and the breakdown charts it includes; it is the only
    // escaping function there.
    let text = read("text.rs");
    if text.matches("fn escape").count() != 1 || !text.contains("pub fn escape_html(") {
        out.push("report/text.rs: expected exactly one escaping function, escape_html".to_owned());
    }
    for (file, own) in formats {
        let text = read(file);
        let escapers = text
            .lines()
            .filter(|l| l.contains("fn escape") || l.contains("fn sanitize") || l.contains("as escape;"))
            .count();
        if !text.contains(own) || escapers != 1 {
            out.push(format!(
                "report/{file}: expected exactly one escaping function ({own}...), found {escapers}"
            ));
        }
        for o in others(file) {
            if text.contains(o) {
                out.push(format!(
                    "report/{file} uses `{o}`, another format's escaping function"
                ));
            }
        }
    }
    out
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
/// backends, which run programs) nor `spec`.
pub const PARSE_ONLY: &[&str] = &["crates/cgp-profile/src/cupti", "crates/cgp-profile/src/harness"];

/// Every name of `profile` or `spec` in a parse-only reader, outside its tests.
pub fn parse_only_readers(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for dir in PARSE_ONLY {
        let mut files = Vec::new();
        rust_files(&root.join(dir), &mut files);
        for f in files {
            let rel = f.strip_prefix(root).unwrap_or(&f).display().to_string();
            let text = without_tests(&rel, &std::fs::read_to_string(&f).unwrap_or_default());
            for name in ["crate::profile", "crate::spec", "crate::plan", "cgp_spec"] {
                if text.contains(name) {
                    found.push(format!("{rel} names `{name}`, and {dir} is a parse-only reader"));
                }
            }
        }
    }
    found
}

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
