//! The columns ncu writes: which are launch attributes and which metrics, and finding a column
//! by name in a header.

use super::*;

/// Launch-identity columns: everything ncu prints about a launch that is not a metric. Every
/// other column of the raw page is a metric, with or without `__` in its name.
pub(super) const ATTRIBUTES: &[&str] = &[
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Kernel Time",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "Device Id",
    "Device Name",
    "CC",
    "Invocations",
    "Function",
    "Demangled Name",
    "Mangled Name",
    "Domain",
];

/// Whether a raw-page column is a launch attribute (`Block Size`, NVTX range columns such as
/// `thread Domain:Push/Pop_Range:PL_Type:...`) rather than a metric.
pub fn is_attribute(column: &str) -> bool {
    ATTRIBUTES.contains(&column)
        || column.contains(":PL_Type:")
        || column.starts_with("NVTX")
        || column.starts_with("nvtx ")
}

/// Columns of the details page and the summary that are not launch attributes.
pub(super) const NOT_ATTRIBUTES: &[&str] = &[
    "ID",
    "Kernel Name",
    "Section Name",
    "Body Item Label",
    "Metric Name",
    "Metric Unit",
    "Metric Value",
    "Rule Name",
    "Rule Type",
    "Rule Description",
    "Estimated Speedup Type",
    "Estimated Speedup",
    "Minimum",
    "Maximum",
    "Average",
];

/// Index of a required column.
pub(super) fn column(header: &[&str], name: &str, shape: &str, line: usize) -> Result<usize, ParseError> {
    if let Some(e) = repeated_column(header, name, line) {
        return Err(e);
    }
    header.iter().position(|h| *h == name).ok_or_else(|| {
        ParseError::at(
            line,
            format!(
                "the {shape} header has no `{name}` column (columns: {})",
                header.join(", ")
            ),
        )
    })
}

/// The error for a header that names `name` in two columns (names are trimmed, so
/// `"gpu__time_duration.sum "` is the same column): which one holds the values is unknown, and
/// reading either would be a guess (the last one won, once: a doubled column became a +100%
/// regression).
pub(super) fn repeated_column(header: &[&str], name: &str, line: usize) -> Option<ParseError> {
    let mut at = header
        .iter()
        .enumerate()
        .filter(|(_, h)| **h == name)
        .map(|(i, _)| i + 1);
    let (first, second) = (at.next()?, at.next()?);
    Some(ParseError {
        metric: (!is_attribute(name) && !NOT_ATTRIBUTES.contains(&name)).then(|| name.to_owned()),
        ..ParseError::at(
            line,
            format!(
                "the header names column `{name}` twice (columns {first} and {second}; names \
                 are compared without surrounding spaces): which one holds the values is \
                 unknown, so the file is damaged"
            ),
        )
        .hint("use the file as ncu wrote it (ncu names each column once); record it again")
    })
}
