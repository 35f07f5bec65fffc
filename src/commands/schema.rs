//! `cgp-gate schema`: print the spec's JSON Schema.

use std::io::Write;

use super::stdout_err;
use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;

/// Run `schema`. A schema that cannot be encoded is an error, never an empty output with exit 0.
///
/// # Errors
/// Encoding and write errors.
pub(crate) fn run(out: &mut dyn Write) -> Result<Exit> {
    let text = serde_json::to_string_pretty(&crate::spec::json_schema())
        .map_err(|e| Error::Environment(format!("cannot encode the spec's JSON Schema: {e}")))?;
    writeln!(out, "{text}").map_err(stdout_err)?;
    Ok(Exit::Ok)
}
