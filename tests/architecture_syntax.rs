//! The rules of tests/architecture.rs that read the sources as Rust (syn), not as lines (issue
//! 62: an outside review planted violations the line rules could not see): a re-export through a
//! module's renamed or `pub(crate)` name or inside an inline module, a profiler compared by its
//! name (`t.profiler.as_str() != "nsys"`), an `Option` field of a `pub(crate)` struct, of an enum
//! variant, written `std::option::Option` or through an alias, a reporter that names a results
//! row's rule, threshold or raw interval. Each is proven by a plant in
//! tests/architecture_selftest.rs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::{Attribute, Fields, Item, Meta, Type, UseTree, Visibility};

use super::architecture::{CRATES, MAX_OPTION_FIELDS, PROFILER_REGISTRATION, sources};

mod reporters;
pub use reporters::reporters_name_no_row;
mod seam;
pub use seam::engine_measures_through_the_seam;

/// A file as Rust. A file that does not parse is a violation of its own (the compiler would say
/// so too): the guard never passes what it could not read.
/// Each rule parses only the files that can break it (a `pub use`, a profiler's name in quotes,
/// ...): syn parses the 78k lines of the sources in about 1.4 s of a debug build's CPU, and the
/// self-test runs each rule on several copies.
fn parse(krate: &str, rel: &str, text: &str, out: &mut Vec<String>) -> Option<syn::File> {
    match syn::parse_file(text) {
        Ok(f) => Some(f),
        Err(e) => {
            out.push(format!(
                "{krate}: src/{rel} does not parse as Rust ({e}): the guard cannot read it"
            ));
            None
        }
    }
}

/// Whether an item is test code: `#[test]`, `#[cfg(test)]` or `#[cfg(all(test, ..))]`.
fn is_test(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg")
                && matches!(&a.meta, Meta::List(l) if {
                    let t = l.tokens.to_string();
                    t == "test" || (t.starts_with("all (") && t.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == "test"))
                }))
    })
}

fn is_test_file(rel: &str) -> bool {
    rel == "tests.rs" || rel.ends_with("/tests.rs")
}

// ---- re-exports -------------------------------------------------------------------------------

/// The paths a `use` tree ends in, each with the name it binds (`None` for a glob).
fn leaves(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            leaves(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) => {
            let mut path = prefix.clone();
            path.push(n.ident.to_string());
            out.push((path, Some(n.ident.to_string())));
        }
        UseTree::Rename(r) => {
            let mut path = prefix.clone();
            path.push(r.ident.to_string());
            out.push((path, Some(r.rename.to_string())));
        }
        UseTree::Glob(_) => {
            let mut path = prefix.clone();
            path.push("*".to_owned());
            out.push((path, None));
        }
        UseTree::Group(g) => {
            for t in &g.items {
                leaves(t, prefix, out);
            }
        }
    }
}

/// The names a module's `use` items bind (any visibility), to the paths they name.
fn aliases(items: &[Item]) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for item in items {
        if let Item::Use(u) = item {
            let mut found = Vec::new();
            leaves(&u.tree, &mut Vec::new(), &mut found);
            for (path, name) in found {
                if let Some(name) = name.filter(|n| n != "_" && n != "self") {
                    out.insert(name, path);
                }
            }
        }
    }
    out
}

/// `path` with its first name followed through the imports of the module it is written in
/// (`o::results`, `o` imported as `cgp_outcome::outcome`), `self::` dropped and `super::` taken
/// to the enclosing inline module, or to the crate's root (`crate::`) from a file one level
/// below it, at most a few steps. `scopes` are the imports of the file's module and of each
/// inline module down to the one `path` is written in; `depth` is how far the file's module lies
/// below the crate's root.
fn resolve(mut path: Vec<String>, scopes: &[BTreeMap<String, Vec<String>>], depth: usize) -> Vec<String> {
    let mut level = scopes.len() - 1;
    for _ in 0..8 {
        match path.first().map(String::as_str) {
            Some("self") => {
                path.remove(0);
                continue;
            }
            Some("super") if level > 0 => {
                path.remove(0);
                level -= 1;
                continue;
            }
            Some("super") if depth == 1 => {
                path[0] = "crate".to_owned();
                break;
            }
            _ => {}
        }
        match path.first().and_then(|f| scopes[level].get(f)) {
            Some(to) if path.len() > 1 || to.last() != path.first() => {
                let mut p = to.clone();
                p.extend(path.drain(1..));
                path = p;
            }
            _ => break,
        }
    }
    path
}

/// Whether `segs` (a path inside crate `lib`, as `cgp_outcome`) names a module of that crate's
/// sources.
fn is_module_of(root: &Path, lib: &str, segs: &[String]) -> bool {
    let Some((_, dir, _, _)) = CRATES.iter().find(|c| c.0.replace('-', "_") == lib) else {
        return false;
    };
    let rel = segs.join("/");
    let src = root.join(dir).join("src");
    !segs.is_empty() && (src.join(format!("{rel}.rs")).is_file() || src.join(&rel).join("mod.rs").is_file())
}

/// What a crate's root imports from the crates below it, by the name it binds there
/// (`pub(crate) use cgp_outcome::outcome;` binds `outcome`).
fn root_imports(root: &Path, dir: &str) -> BTreeMap<String, Vec<String>> {
    let text = std::fs::read_to_string(root.join(dir).join("src/lib.rs")).unwrap_or_default();
    let Ok(file) = syn::parse_file(&text) else {
        return BTreeMap::new();
    };
    aliases(&file.items)
        .into_iter()
        .filter(|(_, p)| p.first().is_some_and(|f| f.starts_with("cgp_")))
        .collect()
}

/// The re-exports of another crate in one module's items (and its inline modules'), by
/// [`closed_crates`](super::architecture::closed_crates)'s rule.
fn module_re_exports(
    root: &Path,
    at: &str,
    items: &[Item],
    scopes: &mut Vec<BTreeMap<String, Vec<String>>>,
    depth: usize,
    crate_root: &BTreeMap<String, Vec<String>>,
    out: &mut Vec<String>,
) {
    scopes.push(aliases(items));
    for item in items {
        match item {
            Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    module_re_exports(root, at, inner, scopes, depth, crate_root, out);
                }
            }
            Item::ExternCrate(e) if matches!(e.vis, Visibility::Public(_)) => {
                out.push(format!(
                    "{at} re-exports another crate (`pub extern crate {};`): let dependents name that crate",
                    e.ident
                ));
            }
            Item::Use(u) if matches!(u.vis, Visibility::Public(_)) => {
                let mut found = Vec::new();
                leaves(&u.tree, &mut Vec::new(), &mut found);
                for (path, _) in found {
                    let written = path.join("::");
                    let resolved = resolve(path, scopes, depth);
                    let via = if resolved.join("::") == written {
                        String::new()
                    } else {
                        format!(", which is {}", resolved.join("::"))
                    };
                    let foreign = resolved.first().is_some_and(|f| f.starts_with("cgp_"));
                    // Written out, anything of another crate; through an import, a module of it
                    // or all of one (the root package's `pub use foundation::error::Error` hands
                    // on a type, as `results` does `RowVerdict`).
                    let module = || {
                        resolved.last().is_some_and(|l| l == "*")
                            || is_module_of(root, &resolved[0], &resolved[1..])
                    };
                    if foreign && (via.is_empty() || module()) {
                        out.push(format!(
                            "{at} re-exports another crate (`pub use {written};`{via}): import it with `pub(crate) use`, and let dependents name that crate"
                        ));
                    } else if resolved.first().is_some_and(|f| f == "crate") {
                        // `crate::outcome::decide`: `outcome` is the root's import of a crate below.
                        let inner = &resolved[1..];
                        let Some(to) = inner.first().and_then(|f| crate_root.get(f)) else {
                            continue;
                        };
                        let mut segs = to[1..].to_vec();
                        segs.extend(inner[1..].iter().cloned());
                        if is_module_of(root, &to[0], &segs) {
                            out.push(format!(
                                "{at} re-exports module {} of a crate below (`pub use {written}`{via}): let dependents name that crate's own items",
                                inner.join("::")
                            ));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    scopes.pop();
}

/// How far the module of the file at `rel` (under `src/`) lies below its crate's root.
fn module_depth(rel: &str) -> usize {
    if rel == "lib.rs" || rel == "main.rs" {
        return 0;
    }
    let parts = rel.split('/').count();
    if rel.ends_with("/mod.rs") {
        parts - 1
    } else {
        parts
    }
}

/// No crate re-exports another crate or a module of one: `pub use cgp_x..` (or `pub extern
/// crate`), and `pub use` of a module of a crate below reached through the crate's own import of
/// it, however it is named (`crate::outcome::results`, `outcome::results` beside the root's
/// `pub(crate) use cgp_outcome::outcome`, `o::results` after `use cgp_outcome::outcome as o`,
/// `super::outcome::results`), in inline modules too. Test code included.
pub fn re_exports(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let roots: BTreeMap<&str, _> = CRATES.iter().map(|c| (c.0, root_imports(root, c.1))).collect();
    for (krate, rel, file) in sources(root) {
        let text = std::fs::read_to_string(&file).unwrap();
        // rustfmt writes `pub use` and `pub extern crate` so (CI checks it).
        if !text.contains("pub use") && !text.contains("pub extern crate") {
            continue;
        }
        let Some(f) = parse(krate, &rel, &text, &mut out) else {
            continue;
        };
        module_re_exports(
            root,
            &format!("{krate}: src/{rel}"),
            &f.items,
            &mut Vec::new(),
            module_depth(&rel),
            &roots[krate],
            &mut out,
        );
    }
    out
}

// ---- Option fields ----------------------------------------------------------------------------

/// The names that stand for `Option` in the sources: `type Maybe<T> = Option<T>;` and `use
/// std::option::Option as Maybe;`, followed through each other.
fn option_names<'f>(files: impl Iterator<Item = &'f syn::File>) -> BTreeSet<String> {
    let mut names = BTreeSet::from(["Option".to_owned()]);
    let mut aliases: Vec<(String, Type)> = Vec::new();
    let mut uses: Vec<(String, Vec<String>)> = Vec::new();
    fn walk(items: &[Item], aliases: &mut Vec<(String, Type)>, uses: &mut Vec<(String, Vec<String>)>) {
        for item in items {
            match item {
                Item::Type(t) => aliases.push((t.ident.to_string(), (*t.ty).clone())),
                Item::Use(u) => {
                    let mut found = Vec::new();
                    leaves(&u.tree, &mut Vec::new(), &mut found);
                    uses.extend(found.into_iter().filter_map(|(p, n)| Some((n?, p))));
                }
                Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        walk(inner, aliases, uses);
                    }
                }
                _ => {}
            }
        }
    }
    for f in files {
        walk(&f.items, &mut aliases, &mut uses);
    }
    loop {
        let before = names.len();
        for (name, ty) in &aliases {
            if is_option(ty, &names) {
                names.insert(name.clone());
            }
        }
        for (name, path) in &uses {
            if path.last().is_some_and(|l| names.contains(l))
                && path.len() > 1
                && path[path.len() - 2] == "option"
            {
                names.insert(name.clone());
            }
        }
        if names.len() == before {
            return names;
        }
    }
}

/// `Option<T>`, `std::option::Option<T>`, `core::option::Option<T>` or an alias of it.
fn is_option(ty: &Type, names: &BTreeSet<String>) -> bool {
    match ty {
        Type::Group(g) => is_option(&g.elem, names),
        Type::Paren(p) => is_option(&p.elem, names),
        Type::Path(p) if p.qself.is_none() => {
            let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
            // `Option` itself alone or under `option::`; an alias by any path (`super::Maybe`).
            match segs.as_slice() {
                [one] => names.contains(one),
                [.., module, last] if last == "Option" => module == "option",
                [.., last] => names.contains(last),
                [] => false,
            }
        }
        _ => false,
    }
}

fn options_in(fields: &Fields, names: &BTreeSet<String>) -> usize {
    fields.iter().filter(|f| is_option(&f.ty, names)).count()
}

/// Each struct and each enum variant (any visibility, inline modules too, tests left out) in
/// `items` with its `Option` fields: (its name, the count).
fn option_counts(items: &[Item], names: &BTreeSet<String>, out: &mut Vec<(String, usize)>) {
    for item in items {
        match item {
            Item::Struct(s) if !is_test(&s.attrs) => {
                out.push((format!("struct {}", s.ident), options_in(&s.fields, names)));
            }
            Item::Enum(e) if !is_test(&e.attrs) => {
                for v in &e.variants {
                    out.push((
                        format!("enum {}::{}", e.ident, v.ident),
                        options_in(&v.fields, names),
                    ));
                }
            }
            Item::Mod(m) if !is_test(&m.attrs) => {
                if let Some((_, inner)) = &m.content {
                    option_counts(inner, names, out);
                }
            }
            _ => {}
        }
    }
}

/// Where the Option rule applies: the types of cgp-outcome (a run's results, `changes`,
/// `calibrate` and `bisect` reports), of cgp-baseline (the baseline store) and cgp-core's verdict
/// types (`stats::verdict`: `Ruling`, `Judgement`, the typed `Estimate` and their parts;
/// `stats::paired`: `PairedJudgement` and its parts). The files' flat forms (`wire.rs`,
/// `repr.rs`, `v1.rs`) are exempt: they are the JSON's schema, private to their module, and
/// convert to and from the typed ones.
fn typed_results_file(krate: &str, rel: &str) -> bool {
    let exempt = ["wire.rs", "repr.rs", "v1.rs"].iter().any(|f| rel.ends_with(f));
    let verdict = rel.starts_with("stats/verdict/") || rel.starts_with("stats/paired/");
    !exempt
        && !is_test_file(rel)
        && (["cgp-outcome", "cgp-baseline"].contains(&krate) || (krate == "cgp-core" && verdict))
}

/// The types of [`typed_results_file`] have at most [`MAX_OPTION_FIELDS`] `Option` fields each
/// (issue 49; since issue 62 cgp-core's verdict types too, with no allowance left: `Ruling` went
/// from 7 to 0, `Judgement` from 4 to 3, `ShiftRow` from 5 to 3): structs of any visibility and
/// each enum variant, `Option` however it is spelled.
pub fn option_fields(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    // The files the rule covers, and those that may declare an alias of `Option` they can name (a
    // `type`, or `Option` imported under another name, in cgp-outcome or a crate below it).
    let mut files = Vec::new();
    for (krate, rel, file) in sources(root) {
        let text = std::fs::read_to_string(&file).unwrap();
        let below = ["cgp-core", "cgp-spec", "cgp-baseline", "cgp-outcome"].contains(&krate);
        let declares = below && (text.contains("type ") || text.contains("Option as"));
        if !typed_results_file(krate, &rel) && !declares {
            continue;
        }
        if let Some(f) = parse(krate, &rel, &text, &mut out) {
            files.push((krate, rel, f));
        }
    }
    let names = option_names(files.iter().map(|f| &f.2));
    for (krate, rel, f) in &files {
        if !typed_results_file(krate, rel) {
            continue;
        }
        let mut counts = Vec::new();
        option_counts(&f.items, &names, &mut counts);
        for (name, options) in counts {
            if options > MAX_OPTION_FIELDS {
                out.push(format!(
                    "{krate}: src/{rel}: {name} has {options} `Option` fields (at most {MAX_OPTION_FIELDS}): group what is set together, or make what only some rows have a variant"
                ));
            }
        }
    }
    out
}

// ---- profilers compared by name ----------------------------------------------------------------

/// The names a profiler is registered by (`ncu`, `nsys`, `cupti` and each harness format's), read
/// from the registration: `Self::Ncu => "ncu",` of `ProfilerKind::as_str`, and `Nvbench =
/// "nvbench", ..` of `harness_formats!`.
pub fn profiler_names(root: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(root.join("crates/cgp-core/src/measured/profiler.rs")).unwrap();
    let mut out = BTreeSet::new();
    for line in text.lines().map(str::trim) {
        let rest = match line.split_once(" = \"") {
            Some((head, rest))
                if head.chars().all(|c| c.is_ascii_alphanumeric())
                    && head.starts_with(|c: char| c.is_ascii_uppercase()) =>
            {
                rest
            }
            _ => match line.split_once(" => \"") {
                Some((head, rest)) if head.starts_with("Self::") && line.ends_with("\",") => rest,
                _ => continue,
            },
        };
        if let Some((name, _)) = rest.split_once('"') {
            out.insert(name.to_owned());
        }
    }
    out
}

/// String comparisons that `profiler_names` may be compared in: `x.eq("nsys")`, ...
const COMPARING_METHODS: &[&str] = &[
    "eq",
    "ne",
    "starts_with",
    "ends_with",
    "strip_prefix",
    "eq_ignore_ascii_case",
];

/// Comparisons of a profiler's name outside the registration that are not one: the `clocks:`
/// setting `ncu` (Nsight Compute locks the clocks) is a value of `ClockSetting`, which the spec
/// loader refuses for targets of other profilers. (crate, file, function, name).
pub const PROFILER_NAMES_THAT_ARE_NOT: &[(&str, &str, &str, &str)] =
    &[("cgp-spec", "spec/load/target.rs", "other_profilers_keys", "ncu")];

fn punct(t: Option<&TokenTree>, c: char) -> Option<Spacing> {
    match t {
        Some(TokenTree::Punct(p)) if p.as_char() == c => Some(p.spacing()),
        _ => None,
    }
}

/// The lines of `tokens` where a string in `names` is compared: an operand of `==` or `!=`, a
/// match arm's pattern (`"nsys" =>`, `"ncu" | "nsys" =>`, `Some("nsys") =>`), an argument of a
/// [`COMPARING_METHODS`] call, anything `matches!` is given, or the whole value of a `const`,
/// `static` or `let` (kept to compare with).
fn compared(tokens: TokenStream, names: &BTreeSet<String>, in_pattern: bool, out: &mut Vec<(usize, String)>) {
    let t: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tt) in t.iter().enumerate() {
        match tt {
            TokenTree::Literal(l) => {
                let syn::Lit::Str(s) = syn::Lit::new(l.clone()) else {
                    continue;
                };
                if !names.contains(&s.value()) {
                    continue;
                }
                let before_eq = i >= 2
                    && punct(t.get(i - 1), '=') == Some(Spacing::Alone)
                    && matches!(
                        punct(t.get(i - 2), '=').or(punct(t.get(i - 2), '!')),
                        Some(Spacing::Joint)
                    );
                let after_eq = punct(t.get(i + 1), '=') == Some(Spacing::Joint)
                    && (punct(t.get(i + 2), '=').is_some() || punct(t.get(i + 2), '>').is_some());
                let alternative = punct(t.get(i + 1), '|') == Some(Spacing::Alone);
                // `const NSYS: &str = "nsys";`, `let name = "nsys";`: a name kept to compare with.
                let bound = !before_eq
                    && punct(t.get(i.wrapping_sub(1)), '=') == Some(Spacing::Alone)
                    && punct(t.get(i + 1), ';').is_some();
                if in_pattern || before_eq || after_eq || alternative || bound {
                    out.push((l.span().start().line, s.value()));
                }
            }
            TokenTree::Group(g) => {
                let ident = |k: usize| match i.checked_sub(k).and_then(|k| t.get(k)) {
                    Some(TokenTree::Ident(id)) => id.to_string(),
                    _ => String::new(),
                };
                let method = g.delimiter() == Delimiter::Parenthesis
                    && COMPARING_METHODS.contains(&ident(1).as_str())
                    && punct(i.checked_sub(2).and_then(|k| t.get(k)), '.').is_some();
                let matches_macro = i >= 2 && ident(2) == "matches" && punct(t.get(i - 1), '!').is_some();
                let arm =
                    punct(t.get(i + 1), '=') == Some(Spacing::Joint) && punct(t.get(i + 2), '>').is_some();
                compared(
                    g.stream(),
                    names,
                    method || matches_macro || (arm && g.delimiter() == Delimiter::Parenthesis),
                    out,
                );
            }
            _ => {}
        }
    }
}

/// The functions of `items` (methods too) and the test items, as line ranges.
fn ranges(items: &[Item], fns: &mut Vec<(String, usize, usize)>, tests: &mut Vec<(usize, usize)>) {
    let lines = |s: proc_macro2::Span| (s.start().line, s.end().line);
    for item in items {
        let attrs: &[Attribute] = match item {
            Item::Fn(f) => &f.attrs,
            Item::Mod(m) => &m.attrs,
            Item::Impl(i) => &i.attrs,
            Item::Const(c) => &c.attrs,
            Item::Static(s) => &s.attrs,
            Item::Use(u) => &u.attrs,
            Item::Struct(s) => &s.attrs,
            Item::Enum(e) => &e.attrs,
            Item::Trait(t) => &t.attrs,
            Item::Macro(m) => &m.attrs,
            _ => &[],
        };
        if is_test(attrs) {
            tests.push(lines(item.span()));
            continue;
        }
        match item {
            Item::Fn(f) => {
                let (a, b) = lines(f.span());
                fns.push((f.sig.ident.to_string(), a, b));
            }
            Item::Impl(imp) => {
                for ii in &imp.items {
                    if let syn::ImplItem::Fn(f) = ii {
                        let (a, b) = lines(f.span());
                        if is_test(&f.attrs) {
                            tests.push((a, b));
                        } else {
                            fns.push((f.sig.ident.to_string(), a, b));
                        }
                    }
                }
            }
            Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    ranges(inner, fns, tests);
                }
            }
            _ => {}
        }
    }
}

/// No code outside the backends (cgp-profile, and cgp-read, their readers) and the registration ([`PROFILER_REGISTRATION`])
/// compares a value with a profiler's registered name (`t.profiler.as_str() != "nsys"`, `match
/// name { "ncu" => .. }`): it asks the kind what it does. Test items may.
pub fn profiler_names_compared(root: &Path) -> Vec<String> {
    let names = profiler_names(root);
    let mut out = Vec::new();
    let mut excused = BTreeSet::new();
    for (krate, rel, file) in sources(root) {
        if ["cgp-profile", "cgp-read"].contains(&krate)
            || PROFILER_REGISTRATION.contains(&(krate, rel.as_str()))
            || is_test_file(&rel)
        {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        // A name is compared as a literal: `"nsys"`, also inside `r"nsys"` and `r#"nsys"#`.
        if !names.iter().any(|n| text.contains(&format!("\"{n}\""))) {
            continue;
        }
        let Some(f) = parse(krate, &rel, &text, &mut out) else {
            continue;
        };
        let (mut fns, mut tests) = (Vec::new(), Vec::new());
        ranges(&f.items, &mut fns, &mut tests);
        let tokens: TokenStream = text.parse().unwrap();
        let mut found = Vec::new();
        compared(tokens, &names, false, &mut found);
        for (line, name) in found {
            if tests.iter().any(|(a, b)| (*a..=*b).contains(&line)) {
                continue;
            }
            let func = fns
                .iter()
                .filter(|(_, a, b)| (*a..=*b).contains(&line))
                .min_by_key(|(_, a, b)| b - a)
                .map_or("", |f| f.0.as_str());
            let place = if func.is_empty() {
                "outside a function".to_owned()
            } else {
                format!("fn {func}")
            };
            if let Some(e) = PROFILER_NAMES_THAT_ARE_NOT
                .iter()
                .find(|e| **e == (krate, rel.as_str(), func, name.as_str()))
            {
                excused.insert(*e);
                continue;
            }
            out.push(format!(
                "{krate}: src/{rel}:{line}: compares with the profiler name \"{name}\" ({place}): ask the kind what it does (`ProfilerKind::explains`, `spec::kinds::rules`, ...)"
            ));
        }
    }
    for e in PROFILER_NAMES_THAT_ARE_NOT {
        if !excused.contains(e) {
            out.push(format!(
                "{}: PROFILER_NAMES_THAT_ARE_NOT names \"{}\" in fn {} of src/{}, which compares with it no more: remove the line",
                e.0, e.3, e.2, e.1
            ));
        }
    }
    out
}

#[test]
fn the_profiler_names_read_from_the_registration_are_every_kinds() {
    // The text read of `measured/profiler.rs` misses no kind, and reads nothing else.
    let registered: BTreeSet<String> = cgp_core::measured::profiler::ProfilerKind::ALL
        .iter()
        .map(|k| k.as_str().to_owned())
        .collect();
    assert_eq!(profiler_names(&super::architecture::repo()), registered);
}
