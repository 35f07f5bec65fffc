//! `cgp-gate merge`: the results of several shards (`check --shard K/N`), possibly measured on
//! different GPU types, become one results file, one report and one exit code.
//!
//! Inputs are grouped by GPU ([`Fingerprint::gpu_key`]); within a group the shards must be of the
//! same N, each K at most once, from the same cgp-gate version. An unsharded file is the group's
//! only shard (`1/1`). Across all inputs the spec and the commit must be the same: merging runs
//! of different specs or code would compare nothing meaningful, so that is refused (exit 2).
//! A shard that is absent (its job failed, or its artefact was not downloaded) is an error in
//! the merged results (exit 3): a gate with a hole in it must not pass.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::foundation::error::{Error, Result};
use crate::outcome::results::{
    ErrorKind, FingerprintDiff, Health, OwnedRowKey, Results, Row, RowKey, RunError,
};
use crate::plan::Shard;

/// One input's place: its GPU group and its shard.
struct Placed {
    path: PathBuf,
    results: Results,
    gpu_key: String,
    shard: Shard,
}

fn refuse(path: &Path, message: String) -> Error {
    Error::input(path, message)
}

/// Merge shards' results. The merged file has no `shard`; its rows are every input's rows (each
/// knowing its GPU), its errors every input's errors plus one `missing-shard` error per absent
/// shard; its verdict is error > regression > inconclusive > pass over all of it.
///
/// # Errors
/// [`Error::Usage`] without inputs; [`Error::Input`] naming the offending file for: a different
/// spec (`spec_hash`) or commit, an unreadable `shard`, shards of one GPU with different N or
/// cgp-gate versions, a shard given twice, a row that two shards both claim.
pub fn merge(inputs: Vec<(PathBuf, Results)>) -> Result<Results> {
    for (path, r) in &inputs {
        if let Some(problem) = crate::outcome::decide::stored_verdict_problem(r) {
            return Err(crate::Error::input(path, problem));
        }
    }
    let placed = place(inputs)?;
    let mut errors = check_groups(&placed)?;
    let rows = merged_rows(&placed)?;
    for p in &placed {
        errors.extend(p.results.errors.iter().cloned());
    }

    // A shard's own verdict counts: a shard that says `error` without an error row or a listed
    // failure is an error of the merged run, never hidden by the other shards' rows.
    let verdict = crate::outcome::decide::merged_verdict(
        &rows,
        &mut errors,
        placed.iter().map(|p| {
            (
                p.shard.to_string(),
                p.results.fingerprint.gpu_name.as_str(),
                p.path.as_path(),
                &p.results,
            )
        }),
    );

    let mut mismatch: Vec<FingerprintDiff> = Vec::new();
    let mut cost: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    let mut roofline = Vec::new();
    let mut category_bars = Vec::new();
    for p in &placed {
        for m in &p.results.fingerprint_mismatch {
            if !mismatch.contains(m) {
                mismatch.push(m.clone());
            }
        }
        for (t, s) in &p.results.cost_seconds {
            *cost
                .entry(t.clone())
                .or_default()
                .entry(p.gpu_key.clone())
                .or_default() += s;
        }
        roofline.extend(p.results.roofline.iter().cloned());
        category_bars.extend(p.results.category_bars.iter().cloned());
    }
    let head = &placed[0].results;
    Ok(Results {
        schema_version: crate::outcome::results::RESULTS_VERSION,
        verdict,
        tool_version: head.tool_version.clone(),
        spec_hash: head.spec_hash.clone(),
        spec_path: head.spec_path.clone(),
        source: joined(placed.iter().map(|p| p.results.source.as_str())).into(),
        synthetic: placed.iter().any(|p| p.results.synthetic),
        fingerprint: head.fingerprint.clone(),
        fingerprint_mismatch: mismatch,
        shard: None,
        git_commit: placed.iter().find_map(|p| p.results.git_commit.clone()),
        date: placed
            .iter()
            .map(|p| p.results.date.clone())
            .max()
            .unwrap_or_default(),
        fail_on: placed
            .iter()
            .fold(head.fail_on, |f, p| f.strictest(p.results.fail_on)),
        multiple_testing: joined(placed.iter().map(|p| p.results.multiple_testing.as_str())),
        rows,
        errors,
        health: merge_health(placed.iter().map(|p| &p.results.health)),
        // The slowest GPU's time per target: what a shard on it should plan for.
        cost_seconds: cost
            .into_iter()
            .map(|(t, by_gpu)| (t, by_gpu.into_values().fold(0.0, f64::max)))
            .collect(),
        roofline,
        sass_skip: crate::outcome::results::SassSkip::sum(
            placed.iter().filter_map(|p| p.results.sass_skip.as_ref()),
        ),
        why_cost: crate::outcome::results::WhyCost::sum(placed.iter().map(|p| &p.results.why_cost)),
        category_bars,
        category_bars_gated_only: placed.iter().any(|p| p.results.category_bars_gated_only),
        confirmation: crate::outcome::results::RunConfirmation::sum(
            placed.iter().map(|p| &p.results.confirmation),
        ),
        caveats: {
            let mut all: Vec<String> = Vec::new();
            for c in placed.iter().flat_map(|p| &p.results.caveats) {
                if !all.contains(c) {
                    all.push(c.clone());
                }
            }
            all
        },
    })
}

/// Every input with its GPU group and shard, sorted by GPU and then shard (so the merged file does
/// not depend on argument order); refuses inputs of another spec or commit.
fn place(inputs: Vec<(PathBuf, Results)>) -> Result<Vec<Placed>> {
    let Some((first_path, first)) = inputs.first() else {
        return Err(Error::Usage("merge needs at least one results file".to_owned()));
    };
    let (first_path, spec_hash, commit) = (
        first_path.clone(),
        first.spec_hash.clone(),
        first.git_commit.clone(),
    );
    let mut placed: Vec<Placed> = Vec::with_capacity(inputs.len());
    for (path, results) in inputs {
        if results.spec_hash != spec_hash {
            return Err(refuse(
                &path,
                format!(
                    "made with another spec than {} (spec hash {} vs {}); merge only the shards of one run",
                    first_path.display(),
                    short(&results.spec_hash),
                    short(&spec_hash)
                ),
            ));
        }
        if let (Some(a), Some(b)) = (&results.git_commit, &commit)
            && a != b
        {
            return Err(refuse(
                &path,
                format!(
                    "measured commit {} but {} measured {}; merge only the shards of one commit",
                    short(a),
                    first_path.display(),
                    short(b)
                ),
            ));
        }
        let shard = match &results.shard {
            None => Shard { k: 1, n: 1 },
            Some(s) => s
                .parse::<Shard>()
                .map_err(|e| refuse(&path, format!("invalid `shard`: {e}")))?,
        };
        placed.push(Placed {
            gpu_key: results.fingerprint.gpu_key(),
            path,
            results,
            shard,
        });
    }
    // Group order: by GPU, then shard, so the merged file does not depend on argument order.
    placed.sort_by(|a, b| (&a.gpu_key, a.shard).cmp(&(&b.gpu_key, b.shard)));
    Ok(placed)
}

/// Within each GPU group: the shards split the same N ways, come from one cgp-gate version, each
/// once. Returns a `missing-shard` error per absent shard.
fn check_groups(placed: &[Placed]) -> Result<Vec<RunError>> {
    let mut errors: Vec<RunError> = Vec::new();
    let mut groups: BTreeMap<&str, Vec<&Placed>> = BTreeMap::new();
    for p in placed {
        groups.entry(p.gpu_key.as_str()).or_default().push(p);
    }
    for (gpu, shards) in &groups {
        let head = shards[0];
        for p in &shards[1..] {
            if p.shard.n != head.shard.n {
                return Err(refuse(
                    &p.path,
                    format!(
                        "is shard {} but {} is shard {} on the same GPU ({gpu}); all shards of a run split the same N ways",
                        p.shard,
                        head.path.display(),
                        head.shard
                    ),
                ));
            }
            if p.results.tool_version != head.results.tool_version {
                return Err(refuse(
                    &p.path,
                    format!(
                        "was made by cgp-gate {} but {} by {}; shards of different versions may split the rows differently",
                        p.results.tool_version,
                        head.path.display(),
                        head.results.tool_version
                    ),
                ));
            }
        }
        for pair in shards.windows(2) {
            if pair[0].shard == pair[1].shard {
                return Err(refuse(
                    &pair[1].path,
                    format!(
                        "shard {} on {gpu} is given twice (also {}); pass each shard's results once",
                        pair[1].shard,
                        pair[0].path.display()
                    ),
                ));
            }
        }
        let present: BTreeSet<usize> = shards.iter().map(|p| p.shard.k).collect();
        for k in (1..=head.shard.n).filter(|k| !present.contains(k)) {
            errors.push(RunError {
                target: format!("shard {k}/{}", head.shard.n),
                size: None,
                kind: ErrorKind::MissingShard,
                message: format!(
                    "no results for shard {k}/{} on {}: its job failed or its results were not downloaded; the merged gate cannot pass without it",
                    head.shard.n, head.results.fingerprint.gpu_name
                ),
            });
        }
    }
    Ok(errors)
}

/// Every shard's rows, each knowing its GPU; refuses a row two shards both claim.
fn merged_rows(placed: &[Placed]) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    let mut owner: BTreeMap<OwnedRowKey, &Path> = BTreeMap::new();
    for p in placed {
        for r in &p.results.rows {
            let mut r = r.clone();
            if r.key.gpu.is_empty() {
                p.results.fingerprint.gpu_name.as_str().clone_into(&mut r.key.gpu);
            }
            // Keyed by the shard's GPU key (name and more), not only the row's GPU name.
            let key = RowKey {
                gpu: &p.gpu_key,
                ..r.key()
            }
            .to_owned();
            // A `missing` row of one shard and a measured row of another would also collide,
            // but check never writes rows of other shards, so any collision is an overlap.
            if let Some(other) = owner.insert(key, &p.path) {
                return Err(refuse(
                    &p.path,
                    format!(
                        "row {}[{}] {} {} on {} is also in {}; the shards overlap (made with different --shard-costs?)",
                        r.key.target,
                        r.key.size,
                        r.kernel_label(),
                        r.key.metric,
                        r.key.gpu,
                        other.display()
                    ),
                ));
            }
            rows.push(r);
        }
    }
    rows.sort_by(|a, b| (a.verdict(), a.key()).cmp(&(b.verdict(), b.key())));
    Ok(rows)
}

/// The GPUs of merged results, in row order of first appearance (one for an unmerged run).
pub(crate) fn gpus_of(results: &Results) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &results.rows {
        if !r.key.gpu.is_empty() && !out.contains(&r.key.gpu) {
            out.push(r.key.gpu.clone());
        }
    }
    out
}

fn short(s: &str) -> &str {
    s.get(..12).unwrap_or(s)
}

/// Distinct values in first-seen order, joined with `; `.
fn joined<'a>(values: impl Iterator<Item = &'a str>) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for v in values {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    seen.join("; ")
}

fn merge_health<'a>(all: impl Iterator<Item = &'a Health>) -> Health {
    fn range<T: Copy + PartialOrd>(a: Option<[T; 2]>, b: Option<[T; 2]>) -> Option<[T; 2]> {
        match (a, b) {
            (Some([a0, a1]), Some([b0, b1])) => {
                Some([if b0 < a0 { b0 } else { a0 }, if b1 > a1 { b1 } else { a1 }])
            }
            (x, None) | (None, x) => x,
        }
    }
    let mut h = Health::default();
    for x in all {
        h.sm_clock_mhz = range(h.sm_clock_mhz, x.sm_clock_mhz);
        h.mem_clock_mhz = range(h.mem_clock_mhz, x.mem_clock_mhz);
        h.temperature_c = range(h.temperature_c, x.temperature_c);
        h.power_w = range(h.power_w, x.power_w);
        h.energy_j = match (h.energy_j, x.energy_j) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        h.throttled_reps += x.throttled_reps;
        h.rerun_reps += x.rerun_reps;
        h.notes.extend(x.notes.iter().cloned());
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::results::RunVerdict;

    fn results(shard: Option<&str>, gpu: &str) -> Results {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/results/pass.json"
        ))
        .unwrap();
        let mut r: Results = crate::outcome::results::parse(&text).unwrap();
        r.shard = shard.map(str::to_owned);
        r.fingerprint.gpu_name = gpu.into();
        r
    }

    fn input(name: &str, r: Results) -> (PathBuf, Results) {
        (PathBuf::from(name), r)
    }

    #[test]
    fn refuses_another_spec_naming_the_file() {
        let mut b = results(Some("2/2"), "A");
        b.spec_hash = "f".repeat(64);
        let e = merge(vec![
            input("a.json", results(Some("1/2"), "A")),
            input("b.json", b),
        ])
        .unwrap_err();
        assert_eq!(e.exit_code(), crate::foundation::exit_codes::INVALID_INPUT);
        let msg = e.to_string();
        assert!(
            msg.starts_with("b.json: made with another spec than a.json"),
            "{msg}"
        );
    }

    #[test]
    fn refuses_a_shard_given_twice_and_mixed_n() {
        let e = merge(vec![
            input("a.json", results(Some("1/2"), "A")),
            input("b.json", results(Some("1/2"), "A")),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("shard 1/2 on a is given twice"), "{e}");
        let e = merge(vec![
            input("a.json", results(Some("1/2"), "A")),
            input("b.json", results(Some("2/3"), "A")),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("split the same N ways"), "{e}");
    }

    #[test]
    fn a_missing_shard_is_an_error_not_a_pass() {
        let r = results(Some("1/3"), "A");
        let mut r3 = results(Some("3/3"), "A");
        r3.rows.clear();
        let m = merge(vec![input("a.json", r), input("c.json", r3)]).unwrap();
        assert_eq!(m.verdict, crate::outcome::results::RunVerdict::Error);
        assert_eq!(m.errors.len(), 1);
        assert_eq!(m.errors[0].kind, ErrorKind::MissingShard);
        assert!(
            m.errors[0].message.contains("shard 2/3"),
            "{}",
            m.errors[0].message
        );
    }

    #[test]
    fn a_shard_whose_own_verdict_is_error_fails_the_merge() {
        // Shard 2/2 had work and judged nothing: no rows, no errors, only its verdict says so.
        let mut r2 = results(Some("2/2"), "A");
        r2.rows.clear();
        r2.errors.clear();
        r2.verdict = RunVerdict::Error;
        let m = merge(vec![
            input("a.json", results(Some("1/2"), "A")),
            input("b.json", r2),
        ])
        .unwrap();
        assert_eq!(m.verdict, RunVerdict::Error);
        assert_eq!(m.errors.len(), 1);
        assert_eq!(m.errors[0].kind, ErrorKind::ShardFailed);
        assert!(
            m.errors[0].message.starts_with("b.json: shard 2/2"),
            "{}",
            m.errors[0].message
        );
        assert_eq!(
            crate::outcome::decide::exit_code(m.verdict, &m.errors, m.fail_on).code(),
            3
        );
        // A shard whose error is explained by its rows adds nothing more.
        let mut r2 = results(Some("2/2"), "A");
        r2.rows[0].set_verdict(crate::outcome::results::RowVerdict::Error);
        r2.verdict = RunVerdict::Error;
        let mut r1 = results(Some("1/2"), "A");
        r1.rows.clear();
        let m = merge(vec![input("a.json", r1), input("b.json", r2)]).unwrap();
        assert_eq!(m.verdict, RunVerdict::Error);
        assert!(m.errors.is_empty());
    }

    #[test]
    fn different_gpus_merge_and_keep_their_rows_apart() {
        let a = results(None, "NVIDIA A100");
        let b = results(None, "NVIDIA H100");
        let n = a.rows.len();
        let m = merge(vec![input("h.json", b), input("a.json", a)]).unwrap();
        assert_eq!(m.rows.len(), 2 * n);
        assert_eq!(gpus_of(&m).len(), 2);
        assert_eq!(m.verdict, crate::outcome::results::RunVerdict::Pass);
        assert!(m.errors.is_empty());
        // The same GPU twice unsharded is a duplicate.
        let e = merge(vec![
            input("a.json", results(None, "X")),
            input("b.json", results(None, "X")),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("given twice"), "{e}");
    }
}
