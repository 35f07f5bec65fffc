//! `cgp-gate validate`: load the spec and say whether it is valid.

use std::io::Write;
use std::path::Path;

use super::stdout_err;
use crate::error::Result;
use crate::exit_codes;

/// Run `validate`.
///
/// # Errors
/// The spec's errors (file, line, column); write errors.
pub fn run(spec: &Path, out: &mut dyn Write) -> Result<i32> {
    let s = crate::spec::load(spec)?;
    let sizes: usize = s.targets.iter().map(|t| t.sizes.len()).sum();
    let metrics: usize = s.targets.iter().map(|t| t.metrics.len()).sum();
    writeln!(
        out,
        "{}: ok ({} targets, {sizes} sizes, {metrics} metrics)",
        spec.display(),
        s.targets.len()
    )
    .map_err(stdout_err)?;
    Ok(exit_codes::OK)
}
