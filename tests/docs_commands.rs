//! Every `cgp-gate ...` command line in README.md and docs/*.md (code blocks, and inline code
//! spans that are a whole command) must work as written: each is parsed by the real command line
//! (`cgp_gate::cli::accepts`, the parser `main` uses, with conflicts and required options checked,
//! which `--help` would skip), and each that can run here is run in a project-like directory
//! (the example spec, its baselines and the SYNTHETIC demo recordings) and must exit 0 or 1
//! (a verdict, not an error). The ones that cannot run here are listed below with the reason.
//! docs/getting-started.md's console commands build on each other and run in order in
//! `cli_ux::getting_started_shows_what_the_commands_print`; here they are parsed.

use std::path::{Path, PathBuf};

use crate::support::root;

/// Commands that profile a live GPU (ncu or NVML); this machine has none.
const NEEDS_GPU: &[(&str, &str)] = &[
    (
        "check",
        "profiles the spec's programs with ncu (the replayed form runs below)",
    ),
    ("check --markdown report.md", "profiles with ncu"),
    ("baseline update", "profiles with ncu"),
    ("env", "reads the GPU's fingerprint through NVML"),
    (
        "doctor",
        "checks the GPU through NVML (tests/first_errors.rs runs it on this machine: exit 3)",
    ),
    ("init -- ./build/matmul --n 1024", "runs the program under ncu"),
    ("check --markdown comment.md", "profiles with ncu"),
    (
        "check --base origin/main --build make -C kernels",
        "builds the base commit and profiles both trees with ncu (tests/confirm_cli.rs runs --base on a stand-in harness)",
    ),
    (
        "check --base origin/main --build make -C kernels --markdown comment.md",
        "builds the base commit and profiles both trees with ncu",
    ),
    ("check --base-dir ../base", "profiles two built trees with ncu"),
    ("ab --base-dir ../base", "profiles two built trees with ncu"),
    ("init -- ./build/my_bench --n 1024", "runs the program under ncu"),
    (
        "init --output ci/cgp-gate.yaml -- python3 torch_work.py --n 2048 --iters 3",
        "runs PyTorch under ncu",
    ),
    (
        "ab --spec cgp-gate.yaml --base-dir ../base --head-dir . --json ab.json --markdown ab.md",
        "profiles two built trees with ncu",
    ),
];

/// Commands whose inputs are the reader's own files, which the page names but does not ship.
const READERS_FILES: &[(&str, &str)] = &[
    (
        "init --from run.csv -- ./build/matmul --n 1024",
        "run.csv: the reader's ncu capture",
    ),
    ("init --from run.csv", "run.csv: the reader's ncu capture"),
    (
        "breakdown before.sqlite after.sqlite --categories categories.yaml --html breakdown.html",
        "the reader's Nsight Systems exports",
    ),
    (
        "changes history/*.json --last 30 --json changes.json --markdown changes.md --html changes.html",
        "main's history of results files",
    ),
    (
        "history --import-github-action-benchmark data.js --out site",
        "data.js: the reader's github-action-benchmark history",
    ),
    (
        "history --import-github-action-benchmark data.js history/*.json --out site",
        "data.js and history/: the reader's github-action-benchmark history and results files",
    ),
    (
        "merge results-*.json",
        "the shards' results files of a sharded run",
    ),
    ("report --from results.json", "a results file of an earlier check"),
    ("validate", "the reader's cgp-gate.yaml (`init` writes it)"),
    ("changes history/*.json", "main's history of results files"),
    (
        "bisect --from changes.json",
        "the reader's changes.json and repository (tests/bisect_cli.rs runs bisect on a scratch repository)",
    ),
    (
        "bisect --spec cgp-gate.yaml --good v1.4.0 --bad main --json bisect.json --markdown bisect.md",
        "the reader's repository and its commits (tests/bisect_cli.rs runs bisect on a scratch repository)",
    ),
    (
        "bisect --spec cgp-gate.yaml --from changes.json --row 0 --build make -C examples/cuda",
        "the reader's changes.json and repository (tests/bisect_cli.rs runs bisect on a scratch repository)",
    ),
    (
        "gitlab-note --from results.json",
        "a results file, inside a GitLab merge-request pipeline",
    ),
    (
        "check --replay extra3 --spec check.yaml --baselines baselines --markdown comment.md",
        "run in a copy of tests/fixtures/h100-planted (below)",
    ),
    (
        "import --spec cgp-gate.yaml --into recording run1.json run2.json run3.json",
        "the reader's harness files (tests/harness_import.rs runs import on the shared real ones)",
    ),
    (
        "baseline update --spec cgp-gate.yaml --replay recording",
        "the recording `import` makes of the reader's harness files",
    ),
    (
        "check --spec cgp-gate.yaml --replay recording",
        "the recording `import` makes of the reader's harness files",
    ),
    (
        "init --from bench.json -- ./build/bench",
        "bench.json: the reader's Google Benchmark file (tests/harness_init.rs runs init on real ones)",
    ),
    (
        "import --into rec bench.json",
        "bench.json: the reader's harness file",
    ),
    (
        "check --replay rec",
        "rec: the recording `import` makes of the reader's harness file",
    ),
    (
        "store push --store sqlite:perf.db results.json",
        "perf.db: the store the `check` before it pushed to, in another folder (tests/store_cli.rs runs these steps)",
    ),
    (
        "history --store sqlite:perf.db --branch main --out site",
        "perf.db: the store the `check` before it pushed to, in another folder (tests/store_cli.rs runs these steps)",
    ),
    (
        "changes --store sqlite:perf.db --branch main --since 2026-01-01",
        "perf.db: the store the `check` before it pushed to, in another folder (tests/store_cli.rs runs these steps)",
    ),
    (
        "store export --store sqlite:perf.db --format hud-v3 --out hud.jsonl",
        "perf.db: the store the `check` before it pushed to, in another folder (tests/store_cli.rs runs these steps)",
    ),
    (
        "history --store sqlite:perf.db --branch main --since 2026-01-01 --out site",
        "perf.db: the reader's results store (docs/store.md; tests/store_cli.rs reads one)",
    ),
];

/// A command as the docs write it: the words after `cgp-gate`, up to a redirection, pipe,
/// separator or comment.
fn words(line: &str) -> Option<Vec<String>> {
    let rest = line.trim().trim_start_matches("$ ").trim_start();
    let rest = rest.strip_prefix("cgp-gate ")?;
    let mut out = Vec::new();
    for w in shlex::split(rest)? {
        if w.starts_with('#')
            || [">", ">>", "|", ";", "&&", "||", "2>&1"].contains(&w.as_str())
            || w.starts_with('>')
        {
            break;
        }
        out.push(w);
    }
    (!out.is_empty()).then_some(out)
}

/// A usage synopsis, not a command: `[options]`, `FILE...`, `A | B`, placeholders in capitals.
fn is_synopsis(line: &str) -> bool {
    line.contains('[')
        || line.contains("...")
        || line.contains('|')
        || line.contains('<')
        || line
            .split(|c: char| c.is_whitespace() || c == '/' || c == '=')
            .any(|w| w.len() > 1 && w.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
}

/// Every command line of a Markdown text, with its line number: code-block lines (a `\`
/// continues a line) and inline code spans that hold a whole command.
fn commands(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    // Prose, joined into one line (an inline span may cross a line break), with each
    // character's line number.
    let mut prose = String::new();
    let mut prose_lines = Vec::new();
    let mut in_block = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            if let Some((n, mut acc)) = pending.take() {
                acc.push(' ');
                acc.push_str(line.trim().trim_end_matches('\\'));
                if line.trim_end().ends_with('\\') {
                    pending = Some((n, acc));
                } else {
                    out.push((n, acc));
                }
                continue;
            }
            let t = line.trim().trim_start_matches("$ ");
            if t.starts_with("cgp-gate ") {
                if t.trim_end().ends_with('\\') {
                    pending = Some((i + 1, t.trim_end().trim_end_matches('\\').to_owned()));
                } else {
                    out.push((i + 1, t.to_owned()));
                }
            }
            continue;
        }
        // Tables hold usage synopses and quoted messages, not command lines.
        if line.trim_start().starts_with('|') {
            prose.push(' ');
            prose_lines.push(i + 1);
            continue;
        }
        for c in line.chars().chain([' ']) {
            prose.push(c);
            prose_lines.push(i + 1);
        }
    }
    let mut at = 0;
    for (k, part) in prose.split('`').enumerate() {
        // A span of one word after `cgp-gate` names a command (`cgp-gate ab`); it is not a command line.
        // So does one whose arguments are all options without values (`cgp-gate check --json`).
        let names_only = part
            .split_whitespace()
            .skip(1)
            .all(|w| w.starts_with('-') || w.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
            && part.split_whitespace().skip(2).all(|w| w.starts_with('-'));
        if k % 2 == 1 && part.starts_with("cgp-gate ") && part.split_whitespace().count() > 2 && !names_only {
            let line = prose_lines[prose[..at].chars().count()];
            out.push((line, part.split_whitespace().collect::<Vec<_>>().join(" ")));
        }
        at += part.len() + 1;
    }
    out.sort_by_key(|(l, _)| *l);
    out
}

fn docs() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut d: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    d.sort();
    files.extend(d);
    files
}

/// A project-like directory: the example spec as `cgp-gate.yaml`, its baselines, the demo
/// recordings and `examples/` (SYNTHETIC data).
fn sandbox(doc: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    // docs/pytorch.md's commands run in examples/pytorch, as the page says.
    if doc == "docs/pytorch.md" {
        for e in std::fs::read_dir(root().join("examples/pytorch")).unwrap() {
            let e = e.unwrap();
            std::os::unix::fs::symlink(e.path(), p.join(e.file_name())).unwrap();
        }
        return dir;
    }
    std::fs::copy(root().join("examples/cgp-gate.yaml"), p.join("cgp-gate.yaml")).unwrap();
    for (link, to) in [
        ("baselines", "examples/baselines"),
        ("recordings", "examples/recordings"),
        ("examples", "examples"),
    ] {
        std::os::unix::fs::symlink(root().join(to), p.join(link)).unwrap();
    }
    dir
}

fn run_in(dir: &Path, args: &[String]) -> (i32, String) {
    let out = crate::support::bin()
        .current_dir(dir)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .env("COLUMNS", "100")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn every_command_in_the_readme_and_docs_parses_and_runs_where_it_can() {
    let mut parsed = 0;
    let mut ran = 0;
    let mut failures = Vec::new();
    let mut listed_seen = std::collections::BTreeSet::new();
    for file in docs() {
        let text = std::fs::read_to_string(&file).unwrap();
        let rel = file.strip_prefix(root()).unwrap().display().to_string();
        for (line, cmd) in commands(&text) {
            let Some(args) = words(&cmd) else { continue };
            if is_synopsis(&args.join(" ")) {
                continue;
            }
            if let Err(e) = cgp_gate::cli::accepts(&args) {
                failures.push(format!("{rel}:{line}: `{cmd}` is rejected:\n{e}"));
                continue;
            }
            parsed += 1;
            let joined = args.join(" ");
            if let Some((c, _)) = NEEDS_GPU.iter().chain(READERS_FILES).find(|(c, _)| *c == joined) {
                listed_seen.insert(*c);
                continue;
            }
            if rel == "docs/getting-started.md" {
                continue;
            }
            let dir = sandbox(&rel);
            let (code, said) = run_in(dir.path(), &args);
            ran += 1;
            if !(code == 0 || code == 1) {
                failures.push(format!("{rel}:{line}: `{cmd}` exits {code}:\n{said}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(parsed >= 15 && ran >= 5, "{parsed} parsed, {ran} ran");
    // Each listed exception is still in the docs (a stale list hides nothing).
    let stale: Vec<&str> = NEEDS_GPU
        .iter()
        .chain(READERS_FILES)
        .map(|(c, _)| *c)
        .filter(|c| !listed_seen.contains(c))
        .collect();
    assert!(stale.is_empty(), "listed but not in the docs: {stale:?}");
}

/// README's real-check example runs as written in a copy of tests/fixtures/h100-planted.
#[test]
fn readme_sample_comment_command_runs_in_the_h100_fixture() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let (_, cmd) = commands(&readme)
        .into_iter()
        .find(|(_, c)| c.starts_with("cgp-gate check --replay extra3"))
        .expect("README names the command of docs/sample-comment.md");
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("cp")
        .arg("-r")
        .arg(root().join("tests/fixtures/h100-planted/."))
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let (code, said) = run_in(dir.path(), &words(&cmd).unwrap());
    assert_eq!(code, 1, "the EXTRA_WORK_PCT=3 build regresses: {said}");
    assert!(dir.path().join("comment.md").is_file());
}

/// The checks find what they look for: a command with conflicting options (the README's old
/// `ab` usage) is rejected by the parser, and the extractor finds commands in code blocks,
/// continued lines and inline spans.
#[test]
fn the_docs_command_check_catches_a_planted_conflict() {
    let planted = "```sh\ncgp-gate ab --base-dir ../base --replay rec   # both\n```\nand `cgp-gate check \
                   --replay recordings/pr-same`.\n```\ncgp-gate validate \\\n  --spec x.yaml\n```\n";
    let found = commands(planted);
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(found[1].1, "cgp-gate check --replay recordings/pr-same");
    assert_eq!(found[2].1, "cgp-gate validate  --spec x.yaml");
    let err = cgp_gate::cli::accepts(words(&found[0].1).unwrap()).unwrap_err();
    assert!(err.contains("cannot be used with"), "{err}");
    assert!(cgp_gate::cli::accepts(words(&found[1].1).unwrap()).is_ok());
    assert!(is_synopsis("cgp-gate report --from RESULTS.json [--html PATH]"));
}

/// scripts/getting-started.sh (the outputs of docs/getting-started.md): exit 0 when every step
/// exits as the page shows; exit 1, naming the step, when one does not (a stand-in binary that
/// fails `validate` with 3) or when the binary is missing (it used to print `[exit 127]` for
/// every step and exit 0).
#[test]
fn getting_started_script_fails_when_a_step_fails() {
    let script = root().join("scripts/getting-started.sh");
    let run = |bin: &Path| {
        let out = std::process::Command::new("bash")
            .arg(&script)
            .arg(bin)
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("GITHUB_OUTPUT")
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let real = Path::new(env!("CARGO_BIN_EXE_cgp-gate"));
    let (code, out, err) = run(real);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.matches("[exit 0]").count(), 4, "{out}");
    assert_eq!(out.matches("[exit 1]").count(), 1, "{out}");

    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = run(&dir.path().join("no-such-cgp-gate"));
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("no cgp-gate binary at"), "{err}");
    assert!(!out.contains("[exit 127]"), "{out}");

    let stand_in = dir.path().join("cgp-gate");
    std::fs::write(
        &stand_in,
        format!(
            "#!/bin/bash\nif [ \"$1\" = validate ]; then echo 'error: planted' >&2; exit 3; fi\nexec {} \"$@\"\n",
            real.display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("755")
        .arg(&stand_in)
        .status()
        .unwrap();
    let (code, out, err) = run(&stand_in);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("2. validate: exit 3, expected 0"), "{err}");
    assert!(
        out.contains("4. check, a 6% slower matmul"),
        "every step still runs: {out}"
    );
}

/// Paths the pages name in code spans that are not files of this repository, each with why.
const NOT_REPOSITORY_FILES: &[(&str, &str)] = &[
    (
        ".github/workflows/perf.yml",
        "the workflow the reader writes in their own project",
    ),
    ("tests/it/", "each crate's own tests folder, as a pattern"),
    (
        "examples/throughput.cu",
        "nvbench's example, in nvbench's repository (docs/gpu-lease.md)",
    ),
    (
        "tests/fixtures/harness/h200-throughput/",
        "where docs/gpu-lease.md says to commit a capture not yet made",
    ),
];

/// The repository paths a page names in code spans (`crates/...`, `tests/...`, `scripts/...`)
/// that do not exist, as `line: path`. Placeholders (`<name>`, `{a,b}`, `*`) are not paths.
fn missing_paths(text: &str) -> Vec<String> {
    const ROOTS: &[&str] = &[
        "crates/",
        "src/",
        "tests/",
        "scripts/",
        "examples/",
        "docs/",
        ".ci/",
        ".github/",
    ];
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for (k, span) in line.split('`').enumerate() {
            let path = span.split([':', ' ']).next().unwrap_or("");
            if k % 2 == 0
                || !ROOTS.iter().any(|r| path.starts_with(r))
                || path.contains(['<', '{', '*'])
                || NOT_REPOSITORY_FILES.iter().any(|(p, _)| *p == path)
            {
                continue;
            }
            if !root().join(path).exists() {
                out.push(format!("{}: {path}", n + 1));
            }
        }
    }
    out
}

/// Issue 59: docs/cupti.md named `crates/cgp-profile/src/cupti/trace.rs` after the module became
/// a folder. Every repository file the README and docs name exists; a planted stale name is found.
#[test]
fn every_repository_file_the_docs_name_exists() {
    let planted =
        "read by `cupti::trace::parse` (`crates/cgp-profile/src/cupti/trace.rs`), see `docs/cupti.md`";
    assert_eq!(
        missing_paths(planted),
        ["1: crates/cgp-profile/src/cupti/trace.rs"]
    );
    let mut missing = Vec::new();
    for doc in docs() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let name = doc.strip_prefix(root()).unwrap().display().to_string();
        missing.extend(missing_paths(&text).into_iter().map(|m| format!("{name}:{m}")));
    }
    assert!(missing.is_empty(), "named but not there: {missing:#?}");
}

/// Issue 59: docs/spec.md said `job_spread` defaults to "0.1%" while the code assumes 0.3 %.
/// The default the page states is the prior the statistics start from.
#[test]
fn the_job_spread_default_docs_spec_states_is_the_codes() {
    let spec = std::fs::read_to_string(root().join("docs/spec.md")).unwrap();
    let row = spec
        .lines()
        .find(|l| l.starts_with("| `job_spread` |"))
        .expect("docs/spec.md has a row for `job_spread`");
    let stated: f64 = row
        .split('|')
        .nth(2)
        .unwrap()
        .trim()
        .trim_matches(['`', '"', '%'])
        .parse()
        .unwrap_or_else(|_| panic!("{row}"));
    let code = cgp_core::stats::jobspread::Prior::default().spread * 100.0;
    assert!(
        (stated - code).abs() < 1e-9,
        "docs/spec.md says {stated}%, the code {code}%"
    );
}

/// Issue 59, item 1: `bash examples/demo.sh` runs an installed cgp-gate (`CGP_GATE=...`, or one on
/// PATH) without building anything, and says which one on its first line; here with no cargo on
/// PATH at all, in a copy of the demo's files (it writes target/demo beside them).
#[test]
fn the_demo_runs_an_installed_cgp_gate_without_building() {
    let d = tempfile::tempdir().unwrap();
    for part in ["examples/recordings/h100", "examples/baselines-h100"] {
        crate::support::copy_dir(&root().join(part), &d.path().join(part));
    }
    std::fs::copy(root().join("examples/demo.sh"), d.path().join("examples/demo.sh")).unwrap();
    let bin = env!("CARGO_BIN_EXE_cgp-gate");
    // A PATH of the folders that hold no cargo and no cgp-gate.
    let path: Vec<PathBuf> = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .filter(|p| !p.join("cargo").exists() && !p.join("cgp-gate").exists())
        .collect();
    let run = |env: &[(&str, &str)]| {
        let mut c = std::process::Command::new("bash");
        c.arg(d.path().join("examples/demo.sh"))
            .env("PATH", std::env::join_paths(&path).unwrap())
            .env_remove("CGP_GATE");
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        (o.status.code(), out + &String::from_utf8_lossy(&o.stderr))
    };
    let (code, out) = run(&[("CGP_GATE", bin)]);
    assert_eq!(code, Some(0), "{out}");
    let first = out.lines().next().unwrap();
    assert!(
        first.starts_with(&format!("== cgp-gate: {bin} (cgp-gate ")) && first.ends_with("; CGP_GATE)"),
        "{first}"
    );
    assert!(!out.contains("building"), "{out}");
    assert!(
        out.contains("unchanged code: exit 0 (expected 0); EXTRA_WORK_PCT=3: exit 1 (expected 1)"),
        "{out}"
    );
    assert!(d.path().join("target/demo/report.html").is_file());
    // Nothing installed and no cargo: it says what to do, before trying to build.
    let (code, out) = run(&[]);
    assert_eq!(code, Some(3), "{out}");
    assert!(out.lines().next().unwrap().contains("none installed"), "{out}");
    assert!(
        out.contains("cargo is not installed") && out.contains("CGP_GATE"),
        "{out}"
    );
}
