//! The crates: which crate may depend on which ([`CRATES`]), what none may reach even
//! transitively (`cargo metadata`), every `crate::x` a module of its crate, and no crate
//! re-exporting another's modules.

use super::*;

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
    super::super::architecture_syntax::re_exports(root)
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
