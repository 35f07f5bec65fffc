//! `cgp-gate parse`: read one ncu CSV output and print its launches, or a harness file (or a
//! folder a harness format gathers) and print what the gate extracts from it.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::stdout_err;
use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;

/// Run `parse` on each file in turn (with `--json`, one line of JSON per file).
///
/// # Errors
/// The first unreadable or invalid file; write errors.
pub(crate) fn run_all(files: &[PathBuf], json: bool, out: &mut dyn Write) -> Result<Exit> {
    for f in files {
        run(f, json, out)?;
    }
    Ok(Exit::Ok)
}

/// `parse` of a harness file: its entries' samples, as JSON or one line per metric.
fn run_harness(
    file: &Path,
    input: std::result::Result<crate::profile::harness::Input, crate::harness::HarnessError>,
    json: bool,
    out: &mut dyn Write,
) -> Result<Exit> {
    let parsed = input
        .map_err(|e| Error::input(file, format!("{e}\nhelp: {}", e.help)))?
        .file;
    let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut *out);
    if json {
        serde_json::to_writer(&mut w, &parsed).map_err(|e| stdout_err(e.into()))?;
        writeln!(w).map_err(stdout_err)?;
    } else {
        writeln!(
            w,
            "{} file, {} entries",
            parsed.format.tool(),
            parsed.entries.len()
        )
        .map_err(stdout_err)?;
        // Names, metrics and reasons are the file's text: each one line, no workflow command.
        let line = crate::foundation::sanitize::line;
        for e in &parsed.entries {
            let key = line(&e.key());
            for m in &e.metrics {
                let mean = m.values.iter().sum::<f64>() / m.values.len().max(1) as f64;
                let what = if m.per_sample { "samples" } else { "summary" };
                writeln!(
                    w,
                    "{key}  {}  {} {what}  mean {} {}",
                    line(&m.name),
                    m.values.len(),
                    crate::foundation::units::format_number(mean),
                    m.unit
                )
                .map_err(stdout_err)?;
            }
            if let crate::harness::Status::Skipped(why) | crate::harness::Status::Error(why) = &e.status {
                writeln!(w, "{key}  {}", line(why)).map_err(stdout_err)?;
            }
        }
    }
    w.flush().map_err(stdout_err)?;
    Ok(Exit::Ok)
}

/// Run `parse` on one file.
///
/// # Errors
/// Unreadable or invalid files; write errors.
pub(crate) fn run(file: &Path, json: bool, out: &mut dyn Write) -> Result<Exit> {
    // A harness file (JSON), or a folder a harness format gathers (Criterion's).
    if let Some(input) = crate::profile::harness::read_input(file) {
        return run_harness(file, input, json, out);
    }
    // Bounded read of the bytes: the parser decodes UTF-8 or BOM-marked UTF-16 itself.
    let bytes = crate::foundation::fsutil::read_bounded(file, crate::foundation::fsutil::limits::NCU_CSV)
        .map_err(|e| e.into_error(file, "ncu CSV output"))?;
    if json {
        // Streamed: the launches are written while the file is read (on an error, what was
        // written is incomplete and the exit code says so). Buffered: stdout is line-buffered
        // and the JSON is one long line.
        let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut *out);
        crate::ncu_output::parse::write_json(&bytes, &mut w).map_err(|e| match e {
            crate::ncu_output::parse::JsonError::Parse(e) => Error::input(file, e.to_string()),
            crate::ncu_output::parse::JsonError::Io(e) => stdout_err(e),
        })?;
        writeln!(w).and_then(|()| w.flush()).map_err(stdout_err)?;
    } else {
        let parsed =
            crate::ncu_output::parse::parse_bytes(&bytes).map_err(|e| Error::input(file, e.to_string()))?;
        write!(
            out,
            "{}",
            crate::report::console::launches_table(&parsed.launches)
        )
        .map_err(stdout_err)?;
    }
    Ok(Exit::Ok)
}
