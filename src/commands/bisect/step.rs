//! One step of `bisect`: a commit's tree measured paired and interleaved with the good commit's,
//! exactly as `ab` measures a base and a head tree (`crate::run::ab::run_ab`, its re-measure loop
//! adding pairs only to rows still open), at the step's level; `outcome::classify_commit` reads
//! the judged rows.

use std::path::Path;
use std::time::Instant;

use crate::foundation::error::Result;
use crate::outcome::results::{Direction, FailOn, Row, RowVerdict};
use crate::outcome::{Levels, Said, classify_commit};

/// What measuring one commit against the good one gave.
pub(crate) struct Measured {
    pub said: Said,
    pub change: Option<f64>,
    pub change_ci: Option<[f64; 2]>,
    pub row: String,
    pub reason: String,
    pub processes: u32,
    pub seconds: f64,
}

impl Measured {
    /// A commit that was not measured (it did not build or did not start).
    pub(crate) fn skipped(reason: String, seconds: f64) -> Self {
        Self {
            said: Said::Skipped,
            change: None,
            change_ci: None,
            row: String::new(),
            reason,
            processes: 0,
            seconds,
        }
    }
}

/// The spec as it lies in one tree, judged at the step's level: `alpha` (the regression test)
/// and the interval that makes a pass (`1 - 2 * step_alpha`, one-sided `step_alpha`); with
/// `threshold`, every relative threshold replaced by it (`--threshold`, or half a `changes`
/// row's shift).
pub(crate) fn spec_in(
    text: &str,
    tree: &Path,
    rel: &Path,
    levels: &Levels,
    threshold: Option<f64>,
) -> Result<crate::spec::Spec> {
    let mut s = crate::spec::load_str(text, &tree.join(rel))?;
    s.settings.alpha = levels.step_alpha;
    s.settings.confidence = 1.0 - 2.0 * levels.step_alpha;
    if let Some(t) = threshold {
        for m in s.targets.iter_mut().flat_map(|t| t.metrics.iter_mut()) {
            use crate::foundation::threshold::ThresholdKind;
            // Each kind named, so a new one is a compile error here (tests/threshold_kinds.rs):
            // only a relative threshold has a fraction to replace.
            match &mut m.threshold.kind {
                ThresholdKind::Relative { fraction } => *fraction = t,
                ThresholdKind::Exact | ThresholdKind::Min { .. } | ThresholdKind::Max { .. } => {}
            }
        }
    }
    Ok(s)
}

/// `--threshold`: `2%` or `0.02`, in (0, 1).
///
/// # Errors
/// [`crate::Error::Usage`] naming the value.
pub(crate) fn parse_threshold(text: &str) -> Result<f64> {
    let t = text.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(crate::Error::Usage(format!(
            "--threshold {text}: give a relative change between 0 and 100%, e.g. 2% or 0.02"
        ))),
    }
}

/// The targets of `spec` that the search measures.
pub(crate) fn pick<'s>(spec: &'s crate::spec::Spec, names: &[String]) -> Vec<&'s crate::spec::Target> {
    spec.targets
        .iter()
        .filter(|t| names.is_empty() || names.contains(&t.name))
        .collect()
}

/// How far a row's change goes the bad way (larger is worse).
fn badness(r: &Row) -> f64 {
    let c = r.estimate().change().unwrap_or(0.0);
    match r.rule.direction {
        Some(Direction::Higher) => -c,
        _ => c,
    }
}

/// The row that decided: the regressed row for a bad commit, an open row for an unknown one,
/// else the row that moved furthest the bad way.
fn deciding<'r>(rows: &[&'r Row], said: Said) -> Option<&'r Row> {
    let want = match said {
        Said::Bad => Some(RowVerdict::Regression),
        Said::Unknown => Some(RowVerdict::Inconclusive),
        Said::Good | Said::Skipped => None,
    };
    rows.iter()
        .copied()
        .filter(|r| want.is_none_or(|v| r.verdict() == v))
        .max_by(|a, b| badness(a).total_cmp(&badness(b)))
}

/// Measure `head` (a commit's tree) paired with `good` (the good commit's), both specs already
/// at the step's level. A tree whose target cannot start, or whose runs failed, is skipped.
pub(crate) fn measure(
    good: (&crate::spec::Spec, &[&crate::spec::Target]),
    head: (&crate::spec::Spec, &[&crate::spec::Target]),
    session: &crate::run::session::Session,
    progress: &mut dyn crate::run::progress::Progress,
) -> Result<Measured> {
    let start = Instant::now();
    let mut base = super::super::open_profiler(None, good.0, good.1)?;
    let mut head_p = match super::super::open_profiler(None, head.0, head.1) {
        Ok(p) => p,
        Err(e) => return Ok(Measured::skipped(e.to_string(), start.elapsed().as_secs_f64())),
    };
    let opts = crate::run::ab::AbOptions {
        fail_on: FailOn::Regression,
        allow_missing: false,
        gpu: session.gpu.as_deref(),
        manifest: None,
        // The head is another commit's worktree, not the commit the CI names: its own HEAD.
        ci_commit: None,
    };
    let mut watch = session.watch(&head.0.settings);
    let run = crate::run::ab::run_ab(
        head.0,
        &mut crate::run::ab::Sides {
            base: &mut crate::profile::Measuring::new(base.as_mut()),
            head: &mut crate::profile::Measuring::new(head_p.as_mut()),
            base_targets: good.1,
            head_targets: head.1,
        },
        None,
        watch.as_mut(),
        &opts,
        progress,
    )?;
    let seconds = start.elapsed().as_secs_f64();
    let processes = u32::try_from(run.order.len()).unwrap_or(u32::MAX);
    let results = run.results;
    if let Some(e) = results.errors.first() {
        let mut m = Measured::skipped(
            format!("{}: {}", e.target, crate::foundation::sanitize::line(&e.message)),
            seconds,
        );
        m.processes = processes;
        return Ok(m);
    }
    let rows: Vec<&Row> = results.rows.iter().collect();
    let said = classify_commit(&rows);
    let row = deciding(&rows, said);
    Ok(Measured {
        said,
        change: row.and_then(|r| r.estimate().change()),
        change_ci: row.and_then(|r| r.estimate().change_ci()),
        row: row.map(|r| r.key.to_string()).unwrap_or_default(),
        reason: row
            .map(|r| r.reason.clone())
            .unwrap_or_else(|| "no rows".to_owned()),
        processes,
        seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threshold_is_a_percentage_or_a_fraction_between_0_and_1() {
        assert!((parse_threshold("1.5%").unwrap() - 0.015).abs() < 1e-12);
        assert!((parse_threshold(" 0.02 ").unwrap() - 0.02).abs() < 1e-12);
        for bad in ["0", "100%", "-1%", "two", "1.5"] {
            let e = parse_threshold(bad).unwrap_err().to_string();
            assert!(e.contains("between 0 and 100%"), "{bad}: {e}");
        }
    }
}
