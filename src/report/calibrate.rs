//! The calibration (`cgp-gate calibrate`) as a Markdown table; every name escaped.

use super::markdown::escape_md_cell as esc;
use crate::calibrate::{Calibration, pct};

fn opt_pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), pct)
}

/// The calibration as a Markdown table, escaped for any name.
pub fn markdown(c: &Calibration) -> String {
    let mut out = String::new();
    out.push_str("### cgp-gate calibrate\n\n");
    if c.synthetic {
        out.push_str("> SYNTHETIC data: the recording was not measured on a GPU.\n\n");
    }
    out.push_str(&format!(
        "Source: {}. Suggested threshold: identical code passes in 95% of checks; min detectable: a slowdown found in 95% of checks at the spec's settings (alpha {} over {} tested rows, {} simulated checks per figure).\n\n",
        esc(&c.source),
        c.alpha,
        c.family,
        c.trials
    ));
    out.push_str("| target | size | kernel | metric | reps | CV | outliers | clock dips | threshold | min detectable | suggested threshold | note |\n");
    out.push_str("|---|---|---|---|---:|---:|---:|---:|---|---:|---:|---|\n");
    for r in &c.rows {
        let flag = if r.below_detectable { " ⚠" } else { "" };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.2}% | {:.1}% | {:.1}% | {}{flag} | {} | {} | {} |\n",
            esc(&r.target),
            esc(&r.size),
            esc(&r.kernel),
            esc(&r.metric),
            r.repetitions,
            r.cv * 100.0,
            r.outlier_rate * 100.0,
            r.dip_share * 100.0,
            esc(&r.threshold),
            opt_pct(r.min_detectable),
            opt_pct(r.suggested_threshold),
            esc(&r.note)
        ));
    }
    out
}
