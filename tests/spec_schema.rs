//! The editor schema, docs/cgp-gate.schema.json (issue 46, item 1): a committed copy of what
//! `cgp-gate schema` prints (generated from the loader's key tables and defaults, so it cannot
//! drift), named by a correct relative `$schema=` comment in every spec of the repository, and
//! checked by two real JSON Schema validators (check-jsonschema, installed by .ci/setup, and the
//! jsonschema crate) against every spec and against deliberately wrong ones.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{self, bin, root};

const SCHEMA: &str = "docs/cgp-gate.schema.json";
const REGENERATE: &str = "cargo run -q -- schema > docs/cgp-gate.schema.json";

#[test]
fn the_committed_schema_is_what_the_binary_prints() {
    let out = bin().arg("schema").output().unwrap();
    assert!(out.status.success());
    let committed = std::fs::read_to_string(root().join(SCHEMA))
        .unwrap_or_else(|e| panic!("{SCHEMA}: {e}; write it with `{REGENERATE}`"));
    assert!(
        committed == String::from_utf8(out.stdout).unwrap(),
        "{SCHEMA} differs from what `cgp-gate schema` prints; regenerate it with `{REGENERATE}`"
    );
}

/// Every file under `dir` (recursively) whose name ends in `.yaml` or `.yml` and that is a spec
/// (a top-level `targets:` key).
fn spec_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml")
                && std::fs::read_to_string(&path).is_ok_and(|t| t.lines().any(|l| l.starts_with("targets:")))
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// What is wrong with the `$schema=` comments of the specs under `root`: a spec under
/// `examples/` without one, or one (anywhere) that does not lead to `docs/cgp-gate.schema.json`.
fn schema_comment_problems(root: &Path) -> Vec<String> {
    let want = root.join(SCHEMA).canonicalize().unwrap();
    let mut problems = Vec::new();
    for dir in ["examples", "tests/fixtures"] {
        for spec in spec_files(&root.join(dir)) {
            let text = std::fs::read_to_string(&spec).unwrap();
            let target = text
                .lines()
                .find_map(|l| l.strip_prefix("# yaml-language-server: $schema="));
            match target {
                None if dir == "examples" => {
                    problems.push(format!("{}: no `$schema=` comment", spec.display()));
                }
                None => {}
                Some(rel) => {
                    let to = spec.parent().unwrap().join(rel.trim());
                    if to.canonicalize().ok().as_ref() != Some(&want) {
                        problems.push(format!(
                            "{}: `$schema={rel}` does not lead to {SCHEMA}",
                            spec.display()
                        ));
                    }
                }
            }
        }
    }
    problems
}

#[test]
fn every_spec_names_the_schema_by_a_path_that_leads_to_it() {
    let problems = schema_comment_problems(&root());
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(spec_files(&root().join("examples")).len() >= 8);
    // The check finds a wrong path (the one issue 46 found) and a missing comment.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("docs")).unwrap();
    std::fs::copy(root().join(SCHEMA), dir.path().join(SCHEMA)).unwrap();
    let deep = dir.path().join("examples/recordings/h100");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::create_dir_all(dir.path().join("tests/fixtures")).unwrap();
    std::fs::write(
        deep.join("check.yaml"),
        "# yaml-language-server: $schema=../docs/cgp-gate.schema.json\nversion: 1\ntargets: []\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("examples/s.yaml"), "version: 1\ntargets: []\n").unwrap();
    let problems = schema_comment_problems(dir.path());
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(problems[0].contains("does not lead to"), "{problems:#?}");
    assert!(problems[1].contains("no `$schema=` comment"), "{problems:#?}");
}

/// Specs the schema must refuse (and `validate` too): file name -> text.
const WRONG: &[(&str, &str)] = &[
    (
        "misspelt-key.yaml",
        "version: 1\ntargets:\n  - name: a\n    comand: [./a]\n    metrics: {gpu__time_duration.sum: \"5%\"}\n",
    ),
    (
        "version-2.yaml",
        "version: 2\ntargets:\n  - name: a\n    command: [./a]\n    metrics: {gpu__time_duration.sum: \"5%\"}\n",
    ),
    ("no-targets.yaml", "version: 1\nsettings: {alpha: 0.05}\n"),
    (
        "threshold-no-percent.yaml",
        "version: 1\ntargets:\n  - name: a\n    command: [./a]\n    metrics: {gpu__time_duration.sum: \"5\"}\n",
    ),
    (
        "zero-repetitions.yaml",
        "version: 1\ndefaults: {repetitions: 0}\ntargets:\n  - name: a\n    command: [./a]\n    metrics: {gpu__time_duration.sum: \"5%\"}\n",
    ),
    (
        "alpha-over-one.yaml",
        "version: 1\nsettings: {alpha: 1.5}\ntargets:\n  - name: a\n    command: [./a]\n    metrics: {gpu__time_duration.sum: \"5%\"}\n",
    ),
    (
        "name-in-defaults.yaml",
        "version: 1\ndefaults: {name: a}\ntargets:\n  - name: a\n    command: [./a]\n    metrics: {gpu__time_duration.sum: \"5%\"}\n",
    ),
    (
        "unknown-profiler.yaml",
        "version: 1\ntargets:\n  - name: a\n    command: [./a]\n    profiler: nvprof\n    metrics: {gpu__time_duration.sum: \"5%\"}\n",
    ),
    (
        "command-not-a-list.yaml",
        "version: 1\ntargets:\n  - name: a\n    command: ./a --n 4\n    metrics: {gpu__time_duration.sum: \"5%\"}\n",
    ),
    (
        "nsys-with-kernel.yaml",
        "version: 1\ntargets:\n  - name: a\n    command: [./a]\n    profiler: nsys\n    kernel: gemm\n    metrics: {gpu_time: \"5%\"}\n",
    ),
];

#[test]
fn check_jsonschema_passes_every_spec_and_refuses_wrong_ones() {
    let test = "check_jsonschema_passes_every_spec_and_refuses_wrong_ones";
    let have = Command::new("check-jsonschema")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        support::skip(
            test,
            "check-jsonschema is not installed (pip install check-jsonschema)",
        );
        return;
    }
    let mut specs = spec_files(&root().join("examples"));
    specs.extend(spec_files(&root().join("tests/fixtures")));
    let out = Command::new("check-jsonschema")
        .arg("--schemafile")
        .arg(root().join(SCHEMA))
        .args(&specs)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in WRONG {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let out = Command::new("check-jsonschema")
        .arg("--schemafile")
        .arg(root().join(SCHEMA))
        .args(WRONG.iter().map(|(name, _)| dir.path().join(name)))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}");
    for (name, _) in WRONG {
        assert!(
            text.contains(&format!("{name}::$")),
            "{name} was not refused:\n{text}"
        );
    }
}

fn yaml_to_json(text: &str) -> Value {
    yaml_serde::from_str(text).unwrap()
}

#[test]
fn the_jsonschema_crate_agrees_and_validate_refuses_the_wrong_specs_too() {
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(root().join(SCHEMA)).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let mut specs = spec_files(&root().join("examples"));
    specs.extend(spec_files(&root().join("tests/fixtures")));
    for spec in &specs {
        let doc = yaml_to_json(&std::fs::read_to_string(spec).unwrap());
        let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", spec.display());
    }
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in WRONG {
        assert!(!v.is_valid(&yaml_to_json(text)), "{name} passes the schema");
        // The schema checks shapes only; `validate` refuses at least what it refuses.
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let out = bin().args(["validate", "--spec"]).arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}: validate accepted it");
    }
}
