//! `cgp-gate parse`: read one ncu CSV output and print its launches.

use std::io::Write;
use std::path::Path;

use super::stdout_err;
use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;

/// Run `parse`.
///
/// # Errors
/// Unreadable or invalid files; write errors.
pub fn run(file: &Path, json: bool, out: &mut dyn Write) -> Result<Exit> {
    // Bounded read of the bytes: the parser decodes UTF-8 or BOM-marked UTF-16 itself.
    let bytes = crate::foundation::fsutil::read_bounded(file, crate::foundation::fsutil::limits::NCU_CSV)
        .map_err(|e| e.into_error(file, "ncu CSV output"))?;
    if json {
        // Streamed: the launches are written while the file is read (on an error, what was
        // written is incomplete and the exit code says so). Buffered: stdout is line-buffered
        // and the JSON is one long line.
        let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut *out);
        crate::ncu::parse::write_json(&bytes, &mut w).map_err(|e| match e {
            crate::ncu::parse::JsonError::Parse(e) => Error::input(file, e.to_string()),
            crate::ncu::parse::JsonError::Io(e) => stdout_err(e),
        })?;
        writeln!(w).and_then(|()| w.flush()).map_err(stdout_err)?;
    } else {
        let parsed = crate::ncu::parse::parse_bytes(&bytes).map_err(|e| Error::input(file, e.to_string()))?;
        write!(
            out,
            "{}",
            crate::report::console::launches_table(&parsed.launches)
        )
        .map_err(stdout_err)?;
    }
    Ok(Exit::Ok)
}
