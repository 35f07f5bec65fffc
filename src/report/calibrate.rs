//! The calibration (`cgp-gate calibrate`) as a Markdown table; every name escaped.

use super::markdown::escape_md_cell as esc;
use crate::calibrate::{Calibration, pct};

fn opt_pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), pct)
}

fn opt_pct2(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), |v| format!("{:.2}%", v * 100.0))
}

/// The calibration as a Markdown table, escaped for any name.
pub fn markdown(c: &Calibration) -> String {
    let mut out = String::new();
    out.push_str("### cgp-gate calibrate\n\n");
    if c.synthetic {
        out.push_str("> SYNTHETIC data: the recording was not measured on a GPU.\n\n");
    }
    out.push_str(&format!(
        "Source: {}. Noise within a run (process) and between runs, from the run-level model the gate judges with. Suggested threshold: identical code passes in 95% of checks; min detectable: a slowdown found in 95% of checks at the spec's settings (alpha {} over {} tested rows); processes / launches needed: the fewest processes per check (at the launches measured), or launches per process (at the spec's repetitions), with which identical code passes at the spec's threshold. Closed form of the model, no simulation.\n\n",
        esc(&c.source),
        c.alpha,
        c.family,
    ));
    out.push_str("| target | size | kernel | metric | reps | launches/run | CV | within run | between runs | outliers | clock dips | threshold | min detectable | suggested threshold | processes needed | launches needed | note |\n");
    out.push_str("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|\n");
    for r in &c.rows {
        let flag = if r.below_detectable { " ⚠" } else { "" };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.1} | {:.2}% | {} | {} | {:.1}% | {:.1}% | {}{flag} | {} | {} | {} | {} | {} |\n",
            esc(&r.target),
            esc(&r.size),
            esc(&r.kernel),
            esc(&r.metric),
            r.repetitions,
            r.launches_per_run,
            r.cv * 100.0,
            opt_pct2(r.within_cv),
            opt_pct2(r.between_cv),
            r.outlier_rate * 100.0,
            r.dip_share * 100.0,
            esc(&r.threshold),
            opt_pct(r.min_detectable),
            opt_pct(r.suggested_threshold),
            r.processes_needed.map_or_else(|| "-".to_owned(), |p| p.to_string()),
            r.launches_needed.map_or_else(|| "-".to_owned(), |p| p.to_string()),
            esc(&r.note)
        ));
    }
    out
}
