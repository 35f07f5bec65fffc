//! `baseline show`: the store's contents as text for a terminal.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::format::{BaselineFile, Entry};
use crate::foundation::sanitize::line;
use crate::foundation::units::{Percent, human, percent};

/// Render baselines for a person: per file its GPU, driver, ncu, date, commit and tool version,
/// then one row per entry with n, median, unit, the change against the previous generation and
/// how many generations the history holds.
pub fn render_show(files: &[(PathBuf, BaselineFile)]) -> String {
    if files.is_empty() {
        return "no baselines found; record some with `cgp-gate baseline update`\n".to_owned();
    }
    let mut out = String::new();
    for (i, (path, f)) in files.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let fp = &f.fingerprint;
        let _ = writeln!(out, "{}", line(&path.display().to_string()));
        let header_line = format!(
            "  target {}, gpu {} (key {}, cc {}), driver {}, {} {}, clocks {}",
            f.target,
            fp.gpu_name,
            fp.gpu_key(),
            fp.compute_capability,
            fp.driver_version,
            fp.profiler,
            fp.profiler_version,
            fp.clocks
        );
        let _ = writeln!(out, "{}", line(&header_line));
        let measured = format!(
            "  measured {} at commit {} with cgp-gate {}, spec {}",
            f.date,
            f.git_commit.as_deref().unwrap_or("unknown"),
            f.tool_version,
            short_hash(&f.spec_hash)
        );
        let _ = writeln!(out, "{}", line(&measured));
        if f.entries.is_empty() {
            out.push_str("  (no entries)\n");
            continue;
        }
        let header = [
            "size", "kernel", "metric", "n", "median", "unit", "vs prev", "gens",
        ];
        let rows: Vec<[String; 8]> = f.entries.iter().map(row).collect();
        let mut widths = header.map(str::len);
        for r in &rows {
            for (w, cell) in widths.iter_mut().zip(r) {
                *w = (*w).max(cell.chars().count());
            }
        }
        write_row(&mut out, &header.map(str::to_owned), &widths);
        for r in &rows {
            write_row(&mut out, r, &widths);
        }
    }
    out
}

fn row(e: &Entry) -> [String; 8] {
    let median = e.median();
    let vs_prev = e
        .older_medians()
        .last()
        .and_then(|&prev| relative_change(prev, median))
        .map_or_else(|| "-".to_owned(), |c| percent(c, Percent::Signed2));
    // Every string of the file is shown sanitised: a kernel name holding a newline or an escape
    // sequence stays one visible cell.
    [
        line(&e.size),
        line(&e.kernel),
        line(&e.metric),
        e.samples.len().to_string(),
        human(median, &e.unit),
        if e.unit.is_empty() {
            "-".to_owned()
        } else {
            line(&e.unit)
        },
        vs_prev,
        e.history.len().to_string(),
    ]
}

/// `(now - before) / before`, when defined.
fn relative_change(before: f64, now: f64) -> Option<f64> {
    let c = (now - before) / before.abs();
    c.is_finite().then_some(c)
}

/// Columns: text left-aligned, numbers (n, median, vs prev, gens) right-aligned.
fn write_row(out: &mut String, cells: &[String; 8], widths: &[usize; 8]) {
    const RIGHT: [bool; 8] = [false, false, false, true, true, false, true, true];
    let mut line = String::from("  ");
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            line.push_str("  ");
        }
        let pad = widths[i].saturating_sub(cell.chars().count());
        if RIGHT[i] {
            line.extend(std::iter::repeat_n(' ', pad));
            line.push_str(cell);
        } else {
            line.push_str(cell);
            line.extend(std::iter::repeat_n(' ', pad));
        }
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

fn short_hash(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}
