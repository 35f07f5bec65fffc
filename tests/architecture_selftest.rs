//! The rules of tests/architecture.rs prove themselves: each runs on a scratch copy of the tree
//! with a planted violation and must find it, among them the violations issue 38 planted, with
//! which the old text checks still passed (`use crate::report::` and `use crate::outcome::decide`
//! in the statistics, `use crate::commands::check` and `use crate::publish::github` in
//! `run::ab`, a read of `fails_gate`, `exit_codes::REGRESSION`).

use std::path::{Path, PathBuf};

use super::architecture::{
    CRATES, MAX_FILE_LINES, MAX_TEST_FN_LINES, clap_in_cli, closed_crates, core_is_data, crate_graph,
    crate_paths, escaping, layout, module_cycles, no_environment_below_the_commands, one_place_decides,
    parse_only_readers, profilers_are_named_where_registered, pub_share, readers_start_no_program, repo,
    reporters_render_decided_results, results_types_are_typed, rust_files, sizes,
};
use super::architecture_syntax::reporters_name_no_row;

mod review;

mod fn_sizes;
mod seam;

/// A copy of what the rules read: the manifests, the lock file, `build.rs` and every crate's
/// `src/`.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let from = repo();
        let mut files: Vec<PathBuf> = ["Cargo.toml", "Cargo.lock", "crates/cgp-profile/build.rs"]
            .iter()
            .map(|f| from.join(f))
            .collect();
        for (_, krate, _, _) in CRATES {
            files.push(from.join(krate).join("Cargo.toml"));
            rust_files(&from.join(krate).join("src"), &mut files);
        }
        // The root package's test target (autotests = false names it).
        files.push(from.join("tests/integration.rs"));
        for f in files {
            let to = dir.path().join(f.strip_prefix(&from).unwrap());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&f, &to).unwrap();
        }
        Self { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn append(&self, rel: &str, text: &str) {
        let path = self.root().join(rel);
        let mut old = std::fs::read_to_string(&path).unwrap_or_default();
        old.push_str(text);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, old).unwrap();
    }

    /// Replaces the first `from` of a file with `to`.
    fn replace(&self, rel: &str, from: &str, to: &str) {
        let path = self.root().join(rel);
        let old = std::fs::read_to_string(&path).unwrap();
        let new = old.replacen(from, to, 1);
        assert_ne!(old, new, "{rel} has no `{from}`");
        std::fs::write(&path, new).unwrap();
    }

    /// Adds a dependency line to a crate's `[dependencies]`.
    fn depend(&self, krate: &str, line: &str) {
        let path = self.root().join("crates").join(krate).join("Cargo.toml");
        let old = std::fs::read_to_string(&path).unwrap();
        let new = old.replacen("[dependencies]\n", &format!("[dependencies]\n{line}\n"), 1);
        assert_ne!(old, new, "{krate} has no [dependencies]");
        std::fs::write(&path, new).unwrap();
    }
}

/// `rule` finds each of `expected` (a part of its message) in `scratch`.
fn finds(rule: fn(&Path) -> Vec<String>, scratch: &Scratch, expected: &[&str]) {
    let found = rule(scratch.root());
    for e in expected {
        assert!(
            found.iter().any(|v| v.contains(e)),
            "the planted violation `{e}` was not found; found: {found:#?}"
        );
    }
}

#[test]
fn a_clean_copy_passes_every_rule() {
    // So that what the tests below find is what they planted.
    let s = Scratch::new();
    for (name, rule) in [
        ("crate_graph", crate_graph as fn(&Path) -> Vec<String>),
        ("crate_paths", crate_paths),
        ("one_place_decides", one_place_decides),
        (
            "reporters_render_decided_results",
            reporters_render_decided_results,
        ),
        ("clap_in_cli", clap_in_cli),
        ("closed_crates", closed_crates),
        ("sizes", sizes),
        ("escaping", escaping),
        ("module_cycles", module_cycles),
        ("layout", layout),
        ("results_types_are_typed", results_types_are_typed),
        ("pub_share", pub_share),
        (
            "no_environment_below_the_commands",
            no_environment_below_the_commands,
        ),
        ("core_is_data", core_is_data),
        ("readers_start_no_program", readers_start_no_program),
        (
            "profilers_are_named_where_registered",
            profilers_are_named_where_registered,
        ),
        ("reporters_name_no_row", reporters_name_no_row),
    ] {
        let found = rule(s.root());
        assert!(found.is_empty(), "{name} on a clean copy: {found:#?}");
    }
}

#[test]
fn the_issues_planted_imports_are_found_in_code_and_in_tests() {
    let s = Scratch::new();
    s.append(
        "crates/cgp-core/src/stats/mod.rs",
        "\nuse crate::report::markdown;\n#[cfg(test)]\nmod planted {\n    use crate::outcome::decide;\n}\n",
    );
    s.append(
        "crates/cgp-engine/src/run/ab/mod.rs",
        "\nuse crate::commands::check;\nuse crate::{foundation, publish::github};\n",
    );
    finds(
        crate_paths,
        &s,
        &[
            "stats/mod.rs names `crate::report`",
            "stats/mod.rs names `crate::outcome`",
            "run/ab/mod.rs names `crate::commands`",
            "run/ab/mod.rs names `crate::publish`",
        ],
    );
}

/// Issue 49's plants, which the rules before it missed: a Markdown renderer that says "FAIL" when
/// the interval lies beyond the tolerance, HTML calling `decide::run_verdict` itself, a reporter
/// importing a part of decide that is not offered to reporters, and statistics that read an
/// environment variable. The fifth, HTML matching `Missing { fails_gate: true, .. }`, no longer
/// compiles: the field and `Row::fails_gate` are private to cgp-outcome, and the `compile_fail`
/// examples on `Missing` prove it (`cargo test --doc -p cgp-outcome`).
#[test]
fn a_reporter_that_decides_and_statistics_that_read_the_environment_are_found() {
    let s = Scratch::new();
    s.append(
        "crates/cgp-report/src/report/markdown/mod.rs",
        "\nfn planted_fail(r: &crate::outcome::results::Row) -> &'static str {\n    match (r.estimate.change_ci(), r.rule.threshold.as_ref().and_then(|t| t.tolerance)) {\n        (Some([lo, _]), Some(t)) if lo > t => \"FAIL\",\n        _ => \"\",\n    }\n}\n",
    );
    s.append(
        "crates/cgp-report/src/report/html/mod.rs",
        "\nfn planted_verdict(r: &crate::outcome::results::Results) {\n    let _ = crate::outcome::decide::run_verdict(&r.rows, &r.errors, true);\n}\n",
    );
    s.append(
        "crates/cgp-report/src/report/junit.rs",
        "\nuse crate::outcome::decide::{RowGate, exit_code};\n",
    );
    s.append(
        "crates/cgp-core/src/stats/mod.rs",
        "\nfn planted_alpha() -> f64 {\n    std::env::var(\"ALPHA\").ok().and_then(|a| a.parse().ok()).unwrap_or(0.01)\n}\n",
    );
    // Issue 62: the engine read `$GITHUB_SHA` itself.
    s.append(
        "crates/cgp-engine/src/run/engine.rs",
        "\nfn planted_sha() -> Option<String> {\n    std::env::var(\"GITHUB_SHA\").ok()\n}\n",
    );
    finds(
        reporters_render_decided_results,
        &s,
        &[
            "report/markdown/mod.rs writes the gate word \"FAIL\" itself",
            "report/html/mod.rs names decide::run_verdict",
            "report/junit.rs names decide::exit_code",
            "stats/mod.rs uses `std::env`",
            "cgp-engine: src/run/engine.rs reads an environment variable",
        ],
    );
    // The gate status decide offers reporters stays allowed.
    let found = reporters_render_decided_results(s.root());
    assert!(!found.iter().any(|f| f.contains("decide::RowGate")), "{found:#?}");
}

#[test]
fn a_crate_that_re_exports_another_is_found() {
    let s = Scratch::new();
    s.append(
        "crates/cgp-report/src/lib.rs",
        "\npub use cgp_outcome::outcome;\n",
    );
    s.append(
        "crates/cgp-profile/src/gpu/mod.rs",
        "\npub use cgp_core::gpu::*;\n",
    );
    // A crate below's modules handed on through the crate's own import of them (the engine did
    // this with `gone` and `missing` until issue 49's last round), over two lines.
    s.append(
        "crates/cgp-engine/src/run/mod.rs",
        "\nfn f() {\n    g();\n}\n\npub use crate::outcome::{\n    decide,\n    results as r,\n};\n",
    );
    // An item of a crate below named beside the crate's own types, a module of the crate
    // itself, and a `pub(crate) use` of a module below are not re-exports of another crate.
    s.append(
        "crates/cgp-engine/src/run/check/mod.rs",
        "\npub use crate::outcome::results::FailOn;\npub use crate::run::progress;\npub(crate) use crate::outcome::decide;\n",
    );
    finds(
        closed_crates,
        &s,
        &[
            "cgp-report: src/lib.rs re-exports another crate (`pub use cgp_outcome::outcome;`)",
            "cgp-profile: src/gpu/mod.rs re-exports another crate (`pub use cgp_core::gpu::*;`)",
            "cgp-engine: src/run/mod.rs re-exports module outcome::decide of a crate below",
            "cgp-engine: src/run/mod.rs re-exports module outcome::results of a crate below",
        ],
    );
    let found = closed_crates(s.root());
    assert_eq!(found.len(), 4, "{found:#?}");
}

/// Issue 62: the outside review's re-export the line rule missed (`pub use outcome::results;` in
/// cgp-report, through the root's `pub(crate) use cgp_outcome::outcome`), and its kin: through a
/// renamed import, inside an inline module over several lines, through a renamed root import,
/// through `super::` from an inline module and from a file.
#[test]
fn a_re_export_through_a_renamed_or_inline_module_is_found() {
    let s = Scratch::new();
    s.append("crates/cgp-report/src/lib.rs", "\npub use outcome::results;\n");
    s.append(
        "crates/cgp-report/src/report/mod.rs",
        "\nuse cgp_outcome::outcome as o;\npub use o::results;\npub use super::outcome::decide;\n",
    );
    s.append(
        "crates/cgp-report/src/lib.rs",
        "\npub mod planted_super {\n    pub use super::outcome::decide;\n}\n",
    );
    s.append(
        "crates/cgp-report/src/report/html/mod.rs",
        "\npub mod planted {\n    pub use cgp_outcome::outcome::{\n        decide,\n    };\n}\n",
    );
    s.append(
        "crates/cgp-engine/src/lib.rs",
        "\npub(crate) use cgp_outcome::outcome as planted_o;\n",
    );
    s.append(
        "crates/cgp-engine/src/run/mod.rs",
        "\npub use self::planted_r::results;\nuse crate::planted_o as planted_r;\n",
    );
    // A type of a crate below through an import stays allowed (the root package's `Error`).
    s.append(
        "crates/cgp-report/src/report/markdown/mod.rs",
        "\nuse cgp_outcome::outcome as o;\npub use o::results::RowVerdict;\n",
    );
    finds(
        closed_crates,
        &s,
        &[
            "cgp-report: src/lib.rs re-exports another crate (`pub use outcome::results;`, which is cgp_outcome::outcome::results)",
            "cgp-report: src/report/mod.rs re-exports another crate (`pub use o::results;`, which is cgp_outcome::outcome::results)",
            "cgp-report: src/report/html/mod.rs re-exports another crate (`pub use cgp_outcome::outcome::decide;`)",
            "cgp-engine: src/run/mod.rs re-exports module planted_o::results of a crate below (`pub use self::planted_r::results`",
            "cgp-report: src/report/mod.rs re-exports module outcome::decide of a crate below (`pub use super::outcome::decide`, which is crate::outcome::decide)",
            "cgp-report: src/lib.rs re-exports another crate (`pub use super::outcome::decide;`, which is cgp_outcome::outcome::decide)",
        ],
    );
    let found = closed_crates(s.root());
    assert_eq!(found.len(), 6, "{found:#?}");
}

#[test]
fn a_dependency_across_the_layers_is_found() {
    // The results on a profiler: no cycle, so Cargo would build it; the layers refuse it.
    let s = Scratch::new();
    s.depend("cgp-outcome", "cgp-profile.workspace = true");
    s.append("crates/cgp-outcome/src/lib.rs", "pub use cgp_profile::ncu;\n");
    finds(
        crate_graph,
        &s,
        &[
            "cgp-outcome depends on cgp-profile",
            "cgp-outcome reaches nvml-wrapper",
        ],
    );
    finds(
        crate_paths,
        &s,
        &["cgp-outcome/src/lib.rs re-exports from cgp_profile"],
    );
    // The statistics on the reports: a cycle, which Cargo itself refuses.
    let c = Scratch::new();
    c.depend("cgp-core", "cgp-report.workspace = true");
    finds(crate_graph, &c, &["cyclic package dependency"]);
}

#[test]
fn a_profiler_or_http_client_reached_through_another_crate_is_found() {
    let s = Scratch::new();
    // octocrab brings hyper; cgp-profile brings NVML and SQLite.
    s.depend("cgp-core", "octocrab.workspace = true");
    s.depend("cgp-report", "cgp-profile.workspace = true");
    // A database driver below the store, and the store speaking HTTP.
    s.depend("cgp-outcome", "postgres.workspace = true");
    s.depend("cgp-store", "octocrab.workspace = true");
    finds(
        crate_graph,
        &s,
        &[
            "cgp-core reaches octocrab",
            "cgp-core reaches hyper",
            "cgp-report depends on cgp-profile",
            "cgp-report reaches nvml-wrapper: cgp-report -> cgp-profile -> nvml-wrapper",
            "cgp-report reaches rusqlite",
            "cgp-outcome reaches postgres: cgp-outcome -> postgres",
            "cgp-store reaches octocrab",
        ],
    );
}

#[test]
fn reading_the_gate_outside_decide_is_found_even_after_a_test_module() {
    let s = Scratch::new();
    // After the file's test module (the old check stopped reading at the first `#[cfg(test)]`).
    // Outside cgp-outcome the compiler refuses the read (the field is `pub(crate)`); inside it,
    // only decide may read it.
    s.append(
        "crates/cgp-outcome/src/outcome/kernels.rs",
        "\nfn planted(r: &crate::outcome::results::Row) -> bool {\n    r.fails_gate()\n}\n",
    );
    s.append(
        "crates/cgp-engine/src/run/check/mod.rs",
        "\nconst PLANTED: i32 = crate::foundation::exit_codes::REGRESSION;\n",
    );
    s.append(
        "crates/cgp-publish/src/publish/mod.rs",
        "\nfn planted(v: RunVerdict) -> bool {\n    v == RunVerdict::Pass\n}\n",
    );
    s.append(
        "src/commands/check.rs",
        "\nfn planted(f: FailOn) -> bool {\n    f == FailOn::Inconclusive\n}\n",
    );
    finds(
        one_place_decides,
        &s,
        &[
            "outcome/kernels.rs reads `fails_gate`",
            "run/check/mod.rs names exit_codes::REGRESSION",
            "publish/mod.rs names RunVerdict::Pass",
            "commands/check.rs compares --fail-on",
        ],
    );
    // A test module may assert them.
    let t = Scratch::new();
    t.append(
        "crates/cgp-report/src/report/markdown/mod.rs",
        "\n#[cfg(test)]\nmod planted {\n    fn t(r: &Row) {\n        assert!(r.fails_gate);\n    }\n}\n",
    );
    assert!(one_place_decides(t.root()).is_empty());
}

#[test]
fn clap_outside_the_command_line_is_found() {
    let s = Scratch::new();
    s.append("src/commands/check.rs", "\nuse clap::Parser;\n");
    s.append(
        "crates/cgp-engine/src/run/mod.rs",
        "\n#[cfg(test)]\nmod planted {\n    use clap::Parser;\n}\n",
    );
    finds(
        clap_in_cli,
        &s,
        &["commands/check.rs uses clap", "run/mod.rs uses clap"],
    );
}

#[test]
fn a_long_file_and_a_long_test_function_are_found() {
    let s = Scratch::new();
    s.append(
        "crates/cgp-core/src/stats/planted.rs",
        &"// line\n".repeat(MAX_FILE_LINES + 1),
    );
    let body = "    let x = 1;\n".repeat(MAX_TEST_FN_LINES);
    s.append(
        "crates/cgp-report/src/report/junit.rs",
        &format!("\n#[cfg(test)]\nmod planted {{\n    #[test]\n    fn long() {{\n{body}    }}\n}}\n"),
    );
    finds(
        sizes,
        &s,
        &["stats/planted.rs has 801 lines", "report/junit.rs: fn long has"],
    );
}

#[test]
fn a_second_escaping_function_is_found() {
    let s = Scratch::new();
    s.append(
        "crates/cgp-report/src/report/markdown/mod.rs",
        "\nfn escape(s: &str) -> String {\n    s.to_owned()\n}\n",
    );
    finds(
        escaping,
        &s,
        &["report/markdown/: expected exactly one escaping function"],
    );
    // The history site's page, and the site's escaping used by another format.
    let s = Scratch::new();
    s.append(
        "crates/cgp-report/src/report/site/page.rs",
        "\nfn escape_text(s: &str) -> String {\n    s.to_owned()\n}\n",
    );
    s.append(
        "crates/cgp-report/src/report/junit.rs",
        "\nfn planted() -> String {\n    crate::report::site::escape_script_json(\"\")\n}\n",
    );
    finds(
        escaping,
        &s,
        &[
            "report/site/page.rs: expected exactly one escaping function",
            "report/junit.rs uses `escape_script_json`",
        ],
    );
}

#[test]
fn an_import_cycle_between_modules_is_found() {
    let s = Scratch::new();
    // stats::outliers imports stats::order; now the other way too.
    s.append(
        "crates/cgp-core/src/stats/order.rs",
        "\nuse crate::stats::outliers;\n",
    );
    finds(module_cycles, &s, &["stats::order <-> stats::outliers"]);
}

#[test]
fn a_crate_or_folder_in_no_layer_is_found() {
    let s = Scratch::new();
    s.append("crates/cgp-extra/src/lib.rs", "\n");
    s.append("crates/cgp-core/src/loose.rs", "\n");
    s.append("crates/cgp-report/src/planted/mod.rs", "\n");
    finds(
        layout,
        &s,
        &[
            "crates/cgp-extra is a crate in no layer",
            "cgp-core/src/loose.rs sits loose",
            "cgp-report/src/planted/ is a folder CRATES does not list",
        ],
    );
}

#[test]
fn a_reader_that_reaches_the_backends_or_the_spec_is_found() {
    let s = Scratch::new();
    assert!(parse_only_readers(s.root()).is_empty());
    s.append(
        "crates/cgp-read/src/harness/gbench.rs",
        "\nfn planted(t: &crate::spec::Target) -> bool {\n    t.kernel.is_some()\n}\n",
    );
    finds(
        parse_only_readers,
        &s,
        &["crates/cgp-read/src/harness/gbench.rs names `crate::spec`"],
    );
}

/// Issue 49: the row once had six `Option` fields and its estimate seven. A results type that
/// goes back to a flat list of maybes is found; the file's flat form (`wire.rs`) may keep them.
#[test]
fn a_results_type_with_four_option_fields_is_found() {
    let s = Scratch::new();
    s.append(
        "crates/cgp-outcome/src/outcome/results/row.rs",
        "\npub struct Planted {\n    pub change: Option<f64>,\n    pub change_ci: Option<[f64; 2]>,\n    pub p: Option<f64>,\n    pub p_adjusted: Option<f64>,\n}\n",
    );
    // A report of another command (calibrate's row had 12 until issue 49's last round).
    s.append(
        "crates/cgp-outcome/src/history/calibrate/mod.rs",
        "\npub struct PlantedRow {\n    pub a: Option<f64>,\n    pub b: Option<f64>,\n    pub c: Option<u32>,\n    pub d: Option<u32>,\n}\n",
    );
    // The flat forms of the files are exempt.
    for wire in ["outcome/results/wire.rs", "history/calibrate/wire.rs"] {
        s.append(
            &format!("crates/cgp-outcome/src/{wire}"),
            "\npub struct PlantedWire {\n    pub a: Option<f64>,\n    pub b: Option<f64>,\n    pub c: Option<f64>,\n    pub d: Option<f64>,\n}\n",
        );
    }
    finds(
        results_types_are_typed,
        &s,
        &[
            "results/row.rs: struct Planted has 4 `Option` fields",
            "calibrate/mod.rs: struct PlantedRow has 4 `Option` fields",
        ],
    );
    let found = results_types_are_typed(s.root());
    assert_eq!(found.len(), 2, "{found:#?}");
}

/// Issue 62: what the line rule could not see. A `pub(crate)` struct, an enum variant, `Option`
/// spelled by its path or through an alias; cgp-core's verdict types, which have no allowance
/// left: `Ruling` given back its flat numbers is found, so are a paired ruling's judgement and a
/// new verdict type over the limit.
#[test]
fn options_of_a_private_struct_an_enum_variant_a_path_or_an_alias_are_found() {
    let s = Scratch::new();
    s.append(
        "crates/cgp-outcome/src/outcome/results/row.rs",
        "\npub(crate) struct PlantedCrate {\n    change: Option<f64>,\n    change_ci: Option<[f64; 2]>,\n    p: Option<f64>,\n    p_adjusted: Option<f64>,\n}\n",
    );
    s.append(
        "crates/cgp-outcome/src/outcome/results/key.rs",
        "\nenum PlantedEnum {\n    Fine(Option<u8>),\n    Flat {\n        a: std::option::Option<f64>,\n        b: ::core::option::Option<f64>,\n        c: Maybe<f64>,\n        d: Option<\n            f64,\n        >,\n    },\n}\n",
    );
    s.append(
        "crates/cgp-outcome/src/outcome/mod.rs",
        "\npub(crate) type Maybe<T> = Option<T>;\n",
    );
    s.append(
        "crates/cgp-baseline/src/baseline/mod.rs",
        "\nmod planted {\n    use std::option::Option as Perhaps;\n    struct PlantedAliased(Perhaps<u8>, super::Maybe<u8>, Option<u8>, std::option::Option<u8>);\n}\n",
    );
    s.replace(
        "crates/cgp-core/src/stats/verdict/mod.rs",
        "pub struct Ruling {\n",
        "pub struct Ruling {\n    pub change: Option<f64>,\n    pub change_ci: Option<[f64; 2]>,\n    pub p: Option<f64>,\n    pub p_adjusted: Option<f64>,\n",
    );
    s.replace(
        "crates/cgp-core/src/stats/paired/mod.rs",
        "pub struct PairedJudgement {\n",
        "pub struct PairedJudgement {\n    pub a: Option<f64>,\n    pub b: Option<f64>,\n    pub c: Option<f64>,\n    pub d: Option<f64>,\n",
    );
    s.append(
        "crates/cgp-core/src/stats/verdict/rule.rs",
        "\npub(super) struct PlantedVerdict {\n    a: Option<f64>,\n    b: Option<f64>,\n    c: Option<f64>,\n    d: Option<f64>,\n}\n",
    );
    // A test module's helper types are not results types.
    s.append(
        "crates/cgp-outcome/src/outcome/results/row.rs",
        "\n#[cfg(test)]\nmod planted_test {\n    struct T(Option<u8>, Option<u8>, Option<u8>, Option<u8>);\n}\n",
    );
    finds(
        results_types_are_typed,
        &s,
        &[
            "results/row.rs: struct PlantedCrate has 4 `Option` fields",
            "results/key.rs: enum PlantedEnum::Flat has 4 `Option` fields",
            "baseline/mod.rs: struct PlantedAliased has 4 `Option` fields",
            "stats/verdict/mod.rs: struct Ruling has 4 `Option` fields (at most 3)",
            "stats/paired/mod.rs: struct PairedJudgement has 4 `Option` fields (at most 3)",
            "stats/verdict/rule.rs: struct PlantedVerdict has 4 `Option` fields (at most 3)",
        ],
    );
    let found = results_types_are_typed(s.root());
    assert_eq!(found.len(), 6, "{found:#?}");
}

/// Issue 49: everything public. A crate that goes back over half `pub` is found, and so is one
/// over its ceiling; `pub(crate)` items and test modules do not count as `pub`.
#[test]
fn a_crate_that_is_mostly_pub_is_found() {
    let s = Scratch::new();
    let many = |vis: &str| -> String {
        (0..200)
            .map(|i| format!("\n{vis} fn planted_{i}() {{}}\n"))
            .collect()
    };
    s.append("crates/cgp-publish/src/publish/mod.rs", &many("pub"));
    // cgp-outcome holds about half `pub`: 200 more `pub` items put it over whatever it is.
    s.append("crates/cgp-outcome/src/outcome/mod.rs", &many("pub")[..]);
    s.append(
        "crates/cgp-report/src/report/mod.rs",
        &format!(
            "{}\n#[cfg(test)]\nmod planted {{{}}}\n",
            many("pub(crate)"),
            many("pub")
        ),
    );
    finds(pub_share, &s, &["cgp-publish: 2", "cgp-outcome: "]);
    let found = pub_share(s.root());
    assert_eq!(found.len(), 2, "{found:#?}");
}

/// Issue 49: backends were branches (the spec loader's `_ => Ncu`, the engine asking for ncu's
/// version by name). A profiler named outside its backend and the registration is found, in the
/// spec loader and in the engine; in a backend, in the registration and in a test it is not.
#[test]
fn a_profiler_named_outside_its_backend_is_found() {
    let s = Scratch::new();
    s.append(
        "crates/cgp-spec/src/spec/load/target.rs",
        "\nfn planted(p: ProfilerKind) -> bool {\n    p == ProfilerKind::Nsys\n}\n",
    );
    s.append(
        "crates/cgp-engine/src/run/engine.rs",
        "\nfn planted(v: &Versions) -> Option<&str> {\n    v.version(crate::spec::ProfilerKind::PytestBenchmark)\n}\n#[cfg(test)]\nmod planted_test {\n    const K: &str = r#\"}\"#;\n    const P: ProfilerKind = ProfilerKind::Cupti;\n}\n",
    );
    s.append(
        "crates/cgp-profile/src/profile/nsys.rs",
        "\nconst PLANTED: crate::spec::ProfilerKind = crate::spec::ProfilerKind::Nsys;\n",
    );
    s.append(
        "crates/cgp-spec/src/spec/kinds.rs",
        "\nconst PLANTED: ProfilerKind = ProfilerKind::Gbench;\n",
    );
    // A harness format, by the core's name or by cgp-profile's: each one outside its reader.
    s.append(
        "crates/cgp-engine/src/run/check/harness_states.rs",
        "\nfn planted() -> bool {\n    crate::measured::profiler::HarnessFormat::Vllm.as_str().is_empty()\n}\n",
    );
    s.append(
        "src/commands/import.rs",
        "\nfn planted(f: crate::harness::Format) -> bool {\n    f == crate::harness::Format::Hyperfine\n}\nconst NOT_ONE: &str = \"ExportFormat::Json\";\n",
    );
    finds(
        profilers_are_named_where_registered,
        &s,
        &[
            "spec/load/target.rs:",
            "run/engine.rs:",
            "run/check/harness_states.rs:",
            "commands/import.rs:",
        ],
    );
    let found = profilers_are_named_where_registered(s.root());
    assert_eq!(found.len(), 4, "{found:#?}");
}

/// Issue 62: the outside review's `t.profiler.as_str() != "nsys"` in the engine, and the other
/// ways to compare a value with a profiler's registered name: a match arm (over lines, with an
/// alternative, inside `Some(..)`), `matches!`, `.eq(..)`, a name on the left. In a test module
/// it stays allowed.
#[test]
fn a_profiler_compared_by_its_name_is_found() {
    let s = Scratch::new();
    s.append(
        "crates/cgp-engine/src/run/engine.rs",
        "\nfn planted(t: &crate::spec::Target) -> bool {\n    t.profiler.as_str() != \"nsys\"\n}\n",
    );
    s.append(
        "crates/cgp-engine/src/run/check/mod.rs",
        "\nfn planted_arm(name: &str) -> u8 {\n    match name {\n        \"ncu\"\n        | \"cupti\" => 1,\n        _ => 0,\n    }\n}\nfn planted_some(name: Option<&str>) -> bool {\n    match name {\n        Some(\"nvbench\") => true,\n        _ => false,\n    }\n}\n",
    );
    s.append(
        "crates/cgp-outcome/src/outcome/mod.rs",
        "\nfn planted_macro(name: &str) -> bool {\n    matches!(name, \"gbench\") || name.eq(\"hyperfine\") || \"pytest-benchmark\" == name\n}\nconst PLANTED_ASV: &str = \"asv\";\nfn planted_const(name: &str) -> bool {\n    name == PLANTED_ASV\n}\n#[cfg(test)]\nmod planted_test {\n    fn t(name: &str) -> bool {\n        name == \"ncu\"\n    }\n}\n",
    );
    finds(
        profilers_are_named_where_registered,
        &s,
        &[
            "run/engine.rs:",
            "compares with the profiler name \"nsys\" (fn planted)",
            "run/check/mod.rs:",
            "\"ncu\" (fn planted_arm)",
            "\"cupti\" (fn planted_arm)",
            "\"nvbench\" (fn planted_some)",
            "\"gbench\" (fn planted_macro)",
            "\"hyperfine\" (fn planted_macro)",
            "\"pytest-benchmark\" (fn planted_macro)",
            "compares with the profiler name \"asv\" (outside a function)",
        ],
    );
    let found = profilers_are_named_where_registered(s.root());
    assert_eq!(found.len(), 8, "{found:#?}");
    // The one comparison named as not one, when it is gone, is found too.
    let t = Scratch::new();
    t.replace(
        "crates/cgp-spec/src/spec/load/target.rs",
        "s.text == \"ncu\"",
        "s.text.is_empty()",
    );
    finds(
        profilers_are_named_where_registered,
        &t,
        &["PROFILER_NAMES_THAT_ARE_NOT names \"ncu\" in fn other_profilers_keys"],
    );
}
