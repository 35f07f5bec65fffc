//! `cgp-gate parse`: read one ncu CSV output and print its launches.

use std::io::Write;
use std::path::Path;

use super::stdout_err;
use crate::error::{Error, Result};
use crate::exit_codes;

/// Run `parse`.
///
/// # Errors
/// Unreadable or invalid files; write errors.
pub fn run(file: &Path, json: bool, out: &mut dyn Write) -> Result<i32> {
    let text = crate::fsutil::read_text(file, crate::fsutil::limits::NCU_CSV)
        .map_err(|e| e.into_error(file, "ncu CSV output"))?;
    let parsed = crate::ncu::parse::parse(&text).map_err(|e| Error::input(file, e.to_string()))?;
    if json {
        // Buffered: stdout is line-buffered and the JSON is one long line.
        let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut *out);
        serde_json::to_writer(&mut w, &parsed).map_err(|e| stdout_err(std::io::Error::other(e)))?;
        writeln!(w).and_then(|()| w.flush()).map_err(stdout_err)?;
    } else {
        write!(
            out,
            "{}",
            crate::report::console::launches_table(&parsed.launches)
        )
        .map_err(stdout_err)?;
    }
    Ok(exit_codes::OK)
}
