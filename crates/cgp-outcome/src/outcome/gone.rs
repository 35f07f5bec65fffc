//! Baseline files of targets the spec no longer has.
//!
//! A target renamed in the spec (`vector_add` -> `vadd`) measures rows that have no baseline
//! (`new`), and its old baseline file is never read: without this module a +10% slowdown passed
//! with exit 0. So a run that covers the whole spec turns every entry of such a file into a
//! `missing` row that fails the gate ([`Row::fails_gate`]) unless `--allow-missing` is given, and
//! its reason names the file and the two ways out (refresh the baselines, or allow it). The
//! rows are the kind [`crate::outcome::missing`] makes, so every report lists them (and the kernels that
//! disappeared) as it lists a renamed kernel's.
//!
//! Which runs look: a run of every target of the spec (no `--target`), unsharded, or shard 1 of
//! a sharded run, so that `merge` sees each file's rows exactly once over the union of its shards
//! (rows claimed by two shards are refused as an overlap). Only the folders of the GPUs this run
//! measured on are looked at: another GPU's baselines are that GPU's runs' business.
//!
//! `allow_missing: true` is a key of a target, and the target is gone: only `--allow-missing`
//! (or deleting the file) allows it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::baseline::BaselineFile;
use crate::outcome::results::{Missing, MissingCause, Outcome, OwnedRowKey, Row};

/// The `missing` rows of the baseline files in `stored` whose target is not in `spec_targets`,
/// among the files in the folders named by `gpu_keys` (`<baselines>/<gpu key>/<target>.json`).
/// Each fails the gate unless `allow` (`--allow-missing`). Sorted by file, then entry.
pub fn gone_rows(
    stored: &[(PathBuf, BaselineFile)],
    gpu_keys: &BTreeSet<String>,
    spec_targets: &BTreeSet<&str>,
    allow: bool,
) -> Vec<Row> {
    let mut out = Vec::new();
    for (path, file) in stored {
        if !in_gpu_folder(path, gpu_keys) || spec_targets.contains(file.target.as_str()) {
            continue;
        }
        let cause = MissingCause::TargetGone {
            file: path.display().to_string(),
        };
        let reason = cause.gone_file(&file.target, !allow).unwrap_or_default();
        for e in &file.entries {
            let mut row = Row::bare(
                OwnedRowKey::from(&e.key(&file.target)),
                &e.unit,
                Outcome::Missing(Missing::default()),
                &reason,
            );
            row.sides.baseline = Some(crate::stats::summarize(&e.samples));
            row.history = e.older_medians();
            row.outcome = Outcome::Missing(Missing {
                fails_gate: !allow,
                cause: cause.clone(),
            });
            out.push(row);
        }
    }
    out
}

fn in_gpu_folder(path: &Path, gpu_keys: &BTreeSet<String>) -> bool {
    path.parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .is_some_and(|n| gpu_keys.contains(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::{Entry, SCHEMA_VERSION};

    fn file(target: &str) -> BaselineFile {
        BaselineFile {
            schema_version: SCHEMA_VERSION,
            target: target.to_owned(),
            date: String::new(),
            git_commit: None,
            tool_version: String::new(),
            spec_hash: String::new(),
            fingerprint: crate::gpu::fingerprint::Fingerprint::default(),
            entries: vec![Entry {
                size: "n=1".to_owned(),
                kernel: "k".to_owned(),
                metric: "gpu__time_duration.sum".to_owned(),
                unit: "ns".to_owned(),
                samples: vec![1.0, 2.0],
                reps: vec![0, 1],
                configs: Vec::new(),
                history: Vec::new(),
            }],
            sass: Default::default(),
            counters: Vec::new(),
        }
    }

    #[test]
    fn only_files_of_gone_targets_in_this_gpus_folder_become_failing_rows() {
        let stored = vec![
            (PathBuf::from("b/gpu-a/old.json"), file("old")),
            (PathBuf::from("b/gpu-a/kept.json"), file("kept")),
            (PathBuf::from("b/gpu-b/old.json"), file("old")),
        ];
        let keys: BTreeSet<String> = ["gpu-a".to_owned()].into();
        let targets: BTreeSet<&str> = ["kept", "new"].into();
        let rows = gone_rows(&stored, &keys, &targets, false);
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(
            (r.key.target.as_str(), r.verdict()),
            ("old", crate::outcome::results::RowVerdict::Missing)
        );
        assert_eq!(
            crate::outcome::decide::row_gate(r, crate::outcome::results::FailOn::Regression).gate(),
            crate::outcome::decide::Gate::Fail
        );
        assert!(r.reason.contains("b/gpu-a/old.json") && r.reason.contains("--allow-missing"));
        assert!(matches!(
            &r.outcome,
            Outcome::Missing(Missing {
                cause: MissingCause::TargetGone { file },
                fails_gate: true
            }) if file == "b/gpu-a/old.json"
        ));
        let allowed = super::gone_rows(&stored, &keys, &targets, true);
        assert_ne!(
            crate::outcome::decide::row_gate(&allowed[0], crate::outcome::results::FailOn::Regression).gate(),
            crate::outcome::decide::Gate::Fail
        );
    }
}
