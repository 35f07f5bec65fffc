//! `cgp-gate validate`: load the spec and say whether it is valid.

use std::io::Write;
use std::path::Path;

use std::collections::BTreeSet;

use super::stdout_err;
use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;
use crate::ncu::query::{self, CHIP_ENV};

/// Run `validate`.
///
/// # Errors
/// The spec's errors (file, line, column); write errors.
pub(crate) fn run(spec: &Path, out: &mut dyn Write) -> Result<Exit> {
    let s = crate::spec::load(spec)?;
    // Metric names against `ncu --query-metrics`, where ncu is installed and the chip is known.
    for note in check_spec(&s)? {
        crate::foundation::sanitize::eprint_line(&note);
    }
    let sizes: usize = s.targets.iter().map(|t| t.sizes.len()).sum();
    let metrics: usize = s.targets.iter().map(|t| t.metrics.len()).sum();
    writeln!(
        out,
        "{}: ok ({}, {}, {})",
        spec.display(),
        count(s.targets.len(), "target"),
        count(sizes, "size"),
        count(metrics, "metric")
    )
    .map_err(stdout_err)?;
    Ok(Exit::Ok)
}

/// Without ncu to ask, the spec's metric names that cgp-gate does not know and that are close to
/// one it does (`crate::spec::KNOWN_METRICS`): likely typos, said as warnings (ncu may know a
/// name cgp-gate does not).
fn built_in_suggestions(targets: &[&crate::spec::Target]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut notes = Vec::new();
    for t in targets {
        for m in &t.metrics {
            let name = m.name.as_str();
            if !name.contains("__") || crate::spec::KNOWN_METRICS.contains(&name) || !seen.insert(name) {
                continue;
            }
            let near = crate::spec::nearest_known_metrics(name);
            if !near.is_empty() {
                notes.push(format!(
                    "warning: target `{}`: metric `{name}` is not one cgp-gate knows; did you mean `{}`?",
                    t.name, near[0]
                ));
            }
        }
    }
    notes
}

/// `1 target`, `3 targets`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The chip to check a spec's metrics for: `CGP_GATE_CHIP`, else the compute capability of the
/// baselines next to the spec (`<spec dir>/baselines`). With where it came from.
fn known_chip(spec_dir: &Path) -> Option<(String, String)> {
    if let Ok(c) = std::env::var(CHIP_ENV)
        && !c.trim().is_empty()
    {
        return Some((c.trim().to_owned(), CHIP_ENV.to_owned()));
    }
    let dir = spec_dir.join("baselines");
    let files = crate::baseline::Store::new(&dir).load_all().ok()?;
    files.iter().find_map(|(path, f)| {
        let chip = query::chip_for_compute_capability(f.fingerprint.compute_capability.as_str())?;
        Some((
            chip.to_owned(),
            format!(
                "compute capability {} in {}",
                f.fingerprint.compute_capability,
                path.display()
            ),
        ))
    })
}

/// `validate`'s metric check: every ncu metric of every target, against the known chip.
/// Returns notes for stderr (what was checked, or why not).
///
/// # Errors
/// [`crate::Error::Input`] naming the spec and every metric ncu does not know for the chip.
fn check_spec(spec: &crate::spec::Spec) -> Result<Vec<String>> {
    // Only ncu targets have ncu metrics (an nsys target's `kernel:<regex>` may contain `__`).
    let ncu_targets: Vec<&crate::spec::Target> = spec
        .targets
        .iter()
        .filter(|t| t.profiler.is_nsight_compute())
        .collect();
    if ncu_targets.is_empty() {
        return Ok(Vec::new());
    }
    let Some(ncu) = crate::ncu::install::locate_ncu() else {
        let mut notes = built_in_suggestions(&ncu_targets);
        notes.push(
            "note: metric names not checked: ncu is not installed (`ncu --query-metrics` checks them without a GPU)".to_owned(),
        );
        return Ok(notes);
    };
    let Some((chip, from)) = known_chip(&spec.base_dir()) else {
        let mut notes = built_in_suggestions(&ncu_targets);
        notes.push(format!(
            "note: metric names not checked: no chip known (set {CHIP_ENV}=ga100, gh100, ... or keep baselines next to the spec)"
        ));
        return Ok(notes);
    };
    let mut metrics: Vec<String> = ncu_targets
        .iter()
        // With `explain: remeasure`, the counters a re-measurement adds are checked too.
        .flat_map(|t| crate::plan::ncu_metrics(&crate::plan::explaining(t)))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    metrics.retain(|m| m.contains("__"));
    let unknown = match query::check_metrics(&ncu, &chip, &metrics) {
        Ok(u) => u,
        Err(e) => {
            return Ok(vec![format!(
                "note: metric names not checked against chip {chip}: {e}"
            )]);
        }
    };
    if unknown.is_empty() {
        return Ok(vec![format!(
            "metric names: {} checked against `ncu --query-metrics --chips {chip}` (chip from {from})",
            metrics.len()
        )]);
    }
    let list = unknown
        .iter()
        .map(|u| {
            if u.suggestions.is_empty() {
                format!("`{}`", u.metric)
            } else {
                format!("`{}` (did you mean `{}`?)", u.metric, u.suggestions.join("`, `"))
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    Err(Error::input(
        &spec.path,
        format!(
            "ncu does not know these metrics for chip {chip} (chip from {from}): {list}; list the valid names with `ncu --query-metrics --chips {chip} --query-metrics-mode suffix --metrics BASE`"
        ),
    ))
}
