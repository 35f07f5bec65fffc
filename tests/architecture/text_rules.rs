//! Rules over the text of the sources: one place decides, reporters render decided results,
//! typed results, the share of `pub` items, profilers named where registered, clap in the command
//! line, one escaping function per report format.

use super::*;

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

/// The crates below the command layer that read no environment variable (issue 62): the spec, the
/// baseline store, the decided results, the reporters and the results store. The command layer
/// reads a variable and hands its value in (`commands::ci_commit`, `commands::baseline_store`);
/// the engine's rule is in [`reporters_render_decided_results`]. `cgp-core` (the credentials
/// rule reads the environment it is given), `cgp-profile` (what a program under test gets) and
/// `cgp-publish` (the CI's own variables) read theirs.
pub const NO_ENVIRONMENT: &[&str] = &[
    "cgp-spec",
    "cgp-baseline",
    "cgp-outcome",
    "cgp-report",
    "cgp-store",
];

/// No crate of [`NO_ENVIRONMENT`] reads an environment variable (`env::var`, `var_os`, `vars`)
/// outside its tests.
pub fn no_environment_below_the_commands(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (krate, rel, file) in sources(root) {
        if !NO_ENVIRONMENT.contains(&krate) {
            continue;
        }
        let text = without_tests(&rel, &std::fs::read_to_string(&file).unwrap());
        if text.contains("env::var") {
            out.push(format!(
                "{krate}: src/{rel} reads an environment variable (`env::var`): the command layer reads it and hands the value in"
            ));
        }
    }
    out
}

/// What `cgp-core` outside `foundation/` (its atomic writes and exit codes) may not name: files,
/// processes, or a GPU device. The GPU there is the model (issue 62): the `Gpu` trait, the fake GPU
/// that wrote its log file, health sampling and reading a fingerprint are `cgp-profile`'s `gpu`.
pub const CORE_IS_DATA: &[&str] = &[
    "std::fs",
    "File::",
    "OpenOptions",
    "std::process",
    "trait Gpu",
    "dyn Gpu",
];

/// `cgp-core` is data and pure functions outside `foundation/`: no file, process or GPU device
/// ([`CORE_IS_DATA`]), tests left out.
pub fn core_is_data(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (krate, rel, file) in sources(root) {
        if krate != "cgp-core" || rel.starts_with("foundation/") {
            continue;
        }
        let text = without_tests(&rel, &std::fs::read_to_string(&file).unwrap());
        for name in CORE_IS_DATA {
            if text.contains(name) {
                out.push(format!(
                    "cgp-core: src/{rel} names `{name}`: files, processes and the GPU device are cgp-profile's (cgp-core outside foundation/ is data)"
                ));
            }
        }
    }
    out
}

/// The device side of the GPU planted back in cgp-core's model (a `Gpu` trait, a fake device
/// writing its log) is found, and so is a process started from `measured/`; `foundation/`'s file
/// I/O and a test item's are not.
#[test]
fn a_device_or_file_io_in_cgp_core_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let plant = |rel: &str, text: &str| {
        let p = dir.path().join("crates/cgp-core/src").join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    plant(
        "gpu/device.rs",
        "pub trait Gpu: Send + Sync {\n    fn name(&self) -> String;\n}\n",
    );
    plant(
        "gpu/fake.rs",
        "fn log(p: &std::path::Path) {\n    let _ = std::fs::OpenOptions::new().append(true).open(p);\n}\n",
    );
    plant(
        "measured/why.rs",
        "fn run() {\n    let _ = std::process::Command::new(\"ncu\").status();\n}\n",
    );
    plant(
        "foundation/fsutil.rs",
        "fn w(p: &std::path::Path) {\n    let _ = std::fs::write(p, b\"\");\n}\n",
    );
    plant(
        "stats/mod.rs",
        "#[cfg(test)]\nmod tests {\n    fn t() {\n        let _ = std::fs::read(\"x\");\n    }\n}\n",
    );
    let found = core_is_data(dir.path());
    let at = |f: &str, n: &str| {
        found
            .iter()
            .any(|v| v.starts_with(&format!("cgp-core: src/{f} names `{n}`")))
    };
    assert!(at("gpu/device.rs", "trait Gpu"), "{found:#?}");
    assert!(
        at("gpu/fake.rs", "std::fs") && at("gpu/fake.rs", "OpenOptions"),
        "{found:#?}"
    );
    assert!(at("measured/why.rs", "std::process"), "{found:#?}");
    assert_eq!(found.len(), 4, "{found:#?}");
}

/// Issue 62: the baseline store read `$CGP_GATE_LOCK_TIMEOUT_S` itself; the command layer hands
/// it in now. The rule finds a read planted in the baseline store and one in the results store, not
/// one in a test item, on a tree of those two files.
#[test]
fn a_store_reading_an_environment_variable_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let plant = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    plant(
        "crates/cgp-baseline/src/baseline/lock.rs",
        "fn planted_timeout() -> Option<String> {\n    std::env::var(LOCK_TIMEOUT_ENV).ok()\n}\n",
    );
    plant(
        "crates/cgp-store/src/store/url.rs",
        "fn planted_url() -> Option<std::ffi::OsString> {\n    std::env::var_os(\"CGP_GATE_STORE\")\n}\n",
    );
    plant(
        "crates/cgp-outcome/src/outcome/mod.rs",
        "#[cfg(test)]\nmod planted_test {\n    fn t() {\n        let _ = std::env::var(\"HOME\");\n    }\n}\n",
    );
    let found = no_environment_below_the_commands(dir.path());
    assert_eq!(
        found,
        [
            "cgp-baseline: src/baseline/lock.rs reads an environment variable (`env::var`): the command layer reads it and hands the value in",
            "cgp-store: src/store/url.rs reads an environment variable (`env::var`): the command layer reads it and hands the value in",
        ]
    );
}

/// The most `Option` fields a results type may have (issue 49): what only some rows have belongs
/// to a variant ([`Outcome`](../crates/cgp-outcome/src/outcome/results/row.rs)) or a part of its own
/// (`Estimate`, `RowRule`, `Sides`), not to a flat list of maybes.
pub const MAX_OPTION_FIELDS: usize = 3;

/// The types of cgp-outcome (a run's results, `changes`, `calibrate` and `bisect` reports), of
/// cgp-baseline (the baseline store) and cgp-core's verdict types (`stats::verdict`) have at most
/// [`MAX_OPTION_FIELDS`] `Option` fields each, or their named allowance (issue 62's debt). Read as
/// Rust: structs of any visibility and enum variants, `std::option::Option` and aliases of it.
/// The files' flat forms (`wire.rs`, `repr.rs`, `v1.rs`) are exempt: they are the JSON's schema,
/// private to their module, and convert to and from the typed ones.
pub fn results_types_are_typed(root: &Path) -> Vec<String> {
    super::super::architecture_syntax::option_fields(root)
}

/// Crates that may have more `pub` items than half their items, and the most they may have: a
/// ceiling that only goes down. `cgp-test-support` exists to be used by the tests (a
/// dev-dependency: every item is there for another crate's tests). `cgp-outcome` had 144 `pub` of
/// 280 once the baseline store, with its private lock, history and format helpers, became
/// `cgp-baseline` (issue 62), and 151 of 295 once reporters read the decided view
/// (`outcome::view`: `RunView` and `RowView` offer the numbers to display as methods, where
/// reporters read the rows' fields before; made on a branch beside the move, merged after it).
/// Every one of them is reachable from the crate's root (`-W unreachable_pub` finds none) and
/// named by another crate (reporters, the engine, the commands).
pub const PUB_CEILINGS: &[(&str, usize)] = &[("cgp-test-support", usize::MAX), ("cgp-outcome", 151)];

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

/// Where a profiler may be named (`ProfilerKind::Ncu`, ...): its backend (cgp-profile, with its
/// readers in cgp-read) and the registration (`measured/profiler.rs` of cgp-core, `spec/kinds.rs` of cgp-spec). Everything
/// else asks a kind what it does (issue 49: 49 places named one, 25 in the spec loader).
pub const PROFILER_REGISTRATION: &[(&str, &str)] = &[
    ("cgp-core", "measured/profiler.rs"),
    ("cgp-spec", "spec/kinds.rs"),
];

/// No code outside the backends and the registration ([`PROFILER_REGISTRATION`]) names a
/// concrete profiler, by its kind or by its registered name in a comparison
/// (`t.profiler.as_str() != "nsys"`, issue 62); test items may.
pub fn profilers_are_named_where_registered(root: &Path) -> Vec<String> {
    let mut out = super::super::architecture_syntax::profiler_names_compared(root);
    for (krate, rel, file) in sources(root) {
        if ["cgp-profile", "cgp-read"].contains(&krate)
            || PROFILER_REGISTRATION.contains(&(krate, rel.as_str()))
        {
            continue;
        }
        let text = without_tests(&rel, &std::fs::read_to_string(&file).unwrap());
        for (i, line) in text.lines().enumerate() {
            // A kind (`ProfilerKind::Nsys`) or a harness format (`HarnessFormat::Vllm`, or
            // `Format::Vllm` as cgp-read's `harness` names it).
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
