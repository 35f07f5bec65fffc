//! `ncu::parse::parse_only` (what `check`, `calibrate` and `profile` parse with: only the metrics
//! the spec names) gives the launches, attributes and values of a full parse, on every real ncu
//! capture: `tests/fixtures` (the wild set, the `--import` pages, the H100 archives and
//! recordings) and `../shared/fixtures/ncu-*` where it exists. Nothing here is synthetic.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use cgp_core::measured::samples::ParsedOutput;
use cgp_read::ncu_output::parse::{decode, parse_bytes, parse_only};

use cgp_test_support as support;
use cgp_test_support::root;

/// Every file under `dir` that may hold ncu output (`.csv`, `.log`, `.txt`), sorted.
fn outputs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            outputs(&p, out);
        } else if p
            .extension()
            .is_some_and(|x| x == "csv" || x == "log" || x == "txt")
        {
            out.push(p);
        }
    }
}

/// Checks one file; `Some(true)` when it was compared, `None` when the full parse refuses it.
fn compare(path: &Path) -> Option<bool> {
    let bytes = std::fs::read(path).unwrap();
    let full: ParsedOutput = parse_bytes(&bytes).ok()?;
    let text = decode(&bytes).unwrap();
    let names: BTreeSet<String> = full
        .launches
        .iter()
        .flat_map(|l| l.metrics.keys().cloned())
        .collect();
    // Every other metric, and a name the file does not have.
    let mut wanted: BTreeSet<String> = names.iter().step_by(2).cloned().collect();
    wanted.insert("no__such_metric.sum".to_owned());
    let only = parse_only(&text, &wanted)
        .unwrap_or_else(|e| panic!("{}: the filtered parse failed: {e}", path.display()));
    assert_eq!(only.shape, full.shape, "{}", path.display());
    assert_eq!(only.warnings, full.warnings, "{}", path.display());
    assert_eq!(only.launches.len(), full.launches.len(), "{}", path.display());
    for (a, b) in only.launches.iter().zip(&full.launches) {
        assert_eq!((a.id, &a.kernel, &a.attributes), (b.id, &b.kernel, &b.attributes));
        let expected: Vec<_> = b.metrics.iter().filter(|(k, _)| wanted.contains(*k)).collect();
        let got: Vec<_> = a.metrics.iter().collect();
        assert_eq!(got, expected, "{} launch {}", path.display(), b.id);
    }
    // Asking for every metric is the full parse.
    assert_eq!(parse_only(&text, &names).unwrap(), full, "{}", path.display());
    Some(true)
}

#[test]
fn a_filtered_parse_gives_the_full_parses_values_on_every_real_capture() {
    let test = "a_filtered_parse_gives_the_full_parses_values_on_every_real_capture";
    let mut files = Vec::new();
    outputs(&root().join("tests/fixtures"), &mut files);
    outputs(&root().join("examples/recordings"), &mut files);
    // The H100 archives, extracted.
    let tmp = tempfile::tempdir().unwrap();
    let archives = root().join("tests/fixtures/h100-2026-11-24");
    let mut extracted = 0;
    for entry in std::fs::read_dir(&archives).unwrap() {
        let archive = entry.unwrap().path();
        if !archive.to_string_lossy().ends_with(".tar.gz") {
            continue;
        }
        let dest = tmp.path().join(archive.file_name().unwrap());
        std::fs::create_dir_all(&dest).unwrap();
        match Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(&dest)
            .output()
        {
            Ok(o) => assert!(o.status.success(), "tar -xzf {}", archive.display()),
            Err(_) => {
                support::skip(test, "tar is not installed (the H100 archives are not compared)");
                return;
            }
        }
        extracted += 1;
    }
    assert_eq!(extracted, 4);
    outputs(tmp.path(), &mut files);
    // The shared real captures, beside the checkout (`../shared`, or `../../shared` from a
    // worktree): not part of the repository.
    let shared = [
        root().join("../shared/fixtures"),
        root().join("../../shared/fixtures"),
    ]
    .into_iter()
    .find(|d| d.is_dir());
    let mut shared_files = 0;
    match &shared {
        Some(dir) => {
            for entry in std::fs::read_dir(dir).unwrap() {
                let p = entry.unwrap().path();
                if p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("ncu-"))
                {
                    let before = files.len();
                    outputs(&p, &mut files);
                    shared_files += files.len() - before;
                }
            }
        }
        None => eprintln!(
            "note: {test}: no ../shared/fixtures beside the checkout; its captures are not compared"
        ),
    }
    let mut compared = 0;
    let mut refused = 0;
    for f in &files {
        match compare(f) {
            Some(_) => compared += 1,
            None => refused += 1,
        }
    }
    // The archives alone hold 580 ncu CSVs (tests/h100_real.rs counts them); the refused files
    // are the damaged and error captures of tests/fixtures/ncu.
    assert!(
        compared >= 600,
        "{compared} compared, {refused} refused of {}",
        files.len()
    );
    if shared.is_some() {
        assert!(shared_files > 0);
    }
    eprintln!(
        "compared {compared} real captures ({shared_files} shared), {refused} refused by the full parse"
    );
}
