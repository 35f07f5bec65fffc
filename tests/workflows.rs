//! The example workflows (examples/workflows/*.yml) call cgp-gate with options that exist: every
//! `cgp-gate SUBCOMMAND ...` line of every `run:` step is parsed by the real command line (with
//! `--help` appended, so that nothing runs and required options are not needed). A renamed or
//! removed option fails here instead of in a user's CI.

use crate::support::root;

/// Every `run:` script of every step of every job.
fn run_scripts(workflow: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for job in workflow["jobs"].as_object().into_iter().flat_map(|j| j.values()) {
        for step in job["steps"].as_array().into_iter().flatten() {
            if let Some(run) = step["run"].as_str() {
                out.push(run.to_owned());
            }
        }
    }
    out
}

/// The words of each `cgp-gate SUBCOMMAND ...` command in a script, up to the end of the command
/// (a newline without a continuation, `;`, `&&`, `||`, `|`, `>`).
fn cgp_gate_commands(script: &str) -> Vec<Vec<String>> {
    let joined = script.replace("\\\n", " ");
    let mut out = Vec::new();
    for line in joined.lines() {
        let line = line.trim();
        let Some(start) = line.find("cgp-gate ") else {
            continue;
        };
        // `cargo install ... cgp-gate` installs it; it is not a call.
        if line[..start].contains("cargo install") || line.starts_with('#') {
            continue;
        }
        let mut words = Vec::new();
        for w in line[start + "cgp-gate ".len()..].split_whitespace() {
            if [";", "&&", "||", "|", ">", ">>", "2>&1"].contains(&w) || w.starts_with('>') {
                break;
            }
            words.push(w.trim_matches('"').to_owned());
        }
        out.push(words);
    }
    out
}

#[test]
fn every_cgp_gate_call_in_the_example_workflows_parses() {
    let dir = root().join("examples/workflows");
    let mut calls = 0;
    let mut subcommands = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "yml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let workflow: serde_json::Value = yaml_serde::from_str(&text).unwrap();
        for script in run_scripts(&workflow) {
            for words in cgp_gate_commands(&script) {
                let out = crate::support::bin().args(&words).arg("--help").output().unwrap();
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "{}: `cgp-gate {}` does not parse:\n{}",
                    path.display(),
                    words.join(" "),
                    String::from_utf8_lossy(&out.stderr)
                );
                calls += 1;
                subcommands.insert(words[0].clone());
            }
        }
    }
    // The workflows the docs describe: the creep search on main, the merge of sharded results
    // (the check and the pull-request A/B run go through action.yml, `mode: ab`).
    let ab = std::fs::read_to_string(dir.join("perf-ab.yml")).unwrap();
    let ab: serde_json::Value = yaml_serde::from_str(&ab).unwrap();
    let uses_ab_mode = ab["jobs"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|j| j["steps"].as_array().unwrap())
        .any(|s| s["uses"].as_str().is_some_and(|u| u.contains("cgp-gate@")) && s["with"]["mode"] == "ab");
    assert!(uses_ab_mode, "perf-ab.yml runs the action with `mode: ab`");
    for sub in ["changes", "merge"] {
        assert!(
            subcommands.contains(sub),
            "no `cgp-gate {sub}` call found in {subcommands:?}"
        );
    }
    assert!(calls >= 2);
}
