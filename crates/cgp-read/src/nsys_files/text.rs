//! The CSV forms: `cuda_gpu_trace` (`gputrace`) and the kernel summaries, what `nsys stats` writes.

use super::*;

/// What a CSV header line is.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Header {
    Trace {
        start: (usize, f64),
        duration: (usize, f64),
        name: usize,
    },
    Summary {
        total: (usize, f64),
        instances: usize,
        name: usize,
    },
    /// Another nsys report (`cuda_api_sum`, `nvtx_sum`, ...): its first columns, for the message.
    Other(String),
}

/// `Total Time (ns)` -> `totaltime(ns)`.
pub(super) fn norm(cell: &str) -> String {
    cell.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The factor to ns of a normalised header with a unit suffix: `duration(us)` -> 1000.
pub(super) fn unit_factor(h: &str, base: &str) -> Option<f64> {
    let rest = h.strip_prefix(base)?;
    match rest {
        "" | "(ns)" => Some(1.0),
        "(us)" | "(µs)" => Some(1e3),
        "(ms)" => Some(1e6),
        "(s)" | "(sec)" => Some(1e9),
        _ => None,
    }
}

pub(super) fn classify_header(cells: &[String]) -> Option<Header> {
    let n: Vec<String> = cells.iter().map(|c| norm(c)).collect();
    let name = n.iter().position(|c| c == "name")?;
    let find = |base: &str| {
        n.iter()
            .enumerate()
            .find_map(|(i, c)| unit_factor(c, base).map(|f| (i, f)))
    };
    if let (Some(start), Some(duration)) = (find("start"), find("duration")) {
        return Some(Header::Trace {
            start,
            duration,
            name,
        });
    }
    if let (Some(total), Some(instances)) = (find("totaltime"), n.iter().position(|c| c == "instances")) {
        return Some(Header::Summary {
            total,
            instances,
            name,
        });
    }
    // A header of some other report: it has a Name column and mostly non-numeric cells.
    let numeric = cells.iter().filter(|c| c.trim().parse::<f64>().is_ok()).count();
    (numeric == 0 && cells.len() >= 2)
        .then(|| Header::Other(cells.iter().take(4).cloned().collect::<Vec<_>>().join(",")))
}

pub(super) fn split_csv_line(line: &str) -> Vec<String> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(line.as_bytes());
    r.records()
        .next()
        .and_then(Result::ok)
        .map(|rec| rec.iter().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// A console table: nsys's `--format column` (or the default `nsys stats` output).
pub(super) fn is_console_table(line: &str) -> bool {
    let t = line.trim();
    if t.starts_with("** ") && t.ends_with("):") {
        return true;
    }
    // The rule under the header: runs of dashes separated by spaces.
    t.len() >= 8
        && t.contains("  ")
        && t.split_whitespace()
            .all(|w| w.len() >= 2 && w.bytes().all(|b| b == b'-'))
}

/// Read CSV text as `nsys stats --format csv` writes it (to a file, or to stdout with its
/// preamble). With several reports in one text, the first trace is used, else the first summary.
///
/// # Errors
/// [`Error::Input`] naming `origin` (and the line) for anything that is not a supported report.
pub fn read_text(text: &str, origin: &Path) -> Result<Workload, Error> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(Error::input(
            origin,
            "is empty: nsys leaves a 0-byte file when a report has no data (were any CUDA kernels traced? profile with `nsys profile -t cuda`)",
        ));
    }
    let lines: Vec<(usize, &str)> = line_offsets(text);
    let mut trace: Option<(usize, Header)> = None;
    let mut summary: Option<(usize, Header)> = None;
    let mut other: Option<String> = None;
    let mut skipped: Option<&str> = None;
    let section_end = |from: usize| {
        lines[from + 1..]
            .iter()
            .position(|(_, l)| l.trim().is_empty() || l.trim_start().starts_with("Processing ["))
            .map_or(lines.len(), |p| from + 1 + p)
    };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].1;
        i += 1;
        if is_console_table(line) {
            return Err(Error::input(
                origin,
                format!(
                    "line {i}: this is a console table (`nsys stats` without `--format csv`), and console tables cut long kernel names"
                ),
            )
            .with_help("write the report as CSV: `nsys stats --report cuda_gpu_trace --format csv --output PREFIX REPORT.nsys-rep`, or give the .nsys-rep / .sqlite itself"));
        }
        let t = line.trim();
        if t.is_empty() || t.starts_with("NOTICE:") || t.starts_with("Processing [") || line.starts_with(' ')
        {
            continue;
        }
        if t.starts_with("SKIPPED:") || t.contains("does not contain") {
            skipped.get_or_insert(t);
            continue;
        }
        if !t.contains(',') {
            continue;
        }
        match classify_header(&split_csv_line(t)) {
            Some(h @ Header::Trace { .. }) => {
                trace = Some((i - 1, h));
                break;
            }
            Some(h @ Header::Summary { .. }) => {
                summary.get_or_insert((i - 1, h));
                i = section_end(i - 1);
            }
            Some(Header::Other(cols)) => {
                other.get_or_insert(cols);
                i = section_end(i - 1);
            }
            None => {}
        }
    }
    let Some((first, header)) = trace.or(summary) else {
        let why = if let Some(s) = skipped {
            format!("nsys wrote no GPU kernel table: `{s}`")
        } else if let Some(cols) = other {
            format!(
                "this is not a GPU kernel report (its header starts `{cols}`); cgp-gate reads cuda_gpu_trace (gputrace), cuda_gpu_kern_sum (gpukernsum) and cuda_gpu_kern_gb_sum"
            )
        } else {
            "no nsys report header found: expected `Start (ns),Duration (ns),...,Name` (cuda_gpu_trace) or `Time (%),Total Time (ns),Instances,...,Name` (cuda_gpu_kern_sum)".to_owned()
        };
        return Err(Error::input(origin, why).with_help(
            "write one with `nsys stats --report cuda_gpu_trace --format csv --output PREFIX REPORT.nsys-rep`, or give the .nsys-rep / .sqlite",
        ));
    };
    // The section runs from its header to the next blank line or `Processing [` line.
    let begin = lines[first].0;
    let end = lines.get(section_end(first)).map_or(text.len(), |(off, _)| *off);
    parse_section(&text[begin..end], first + 1, &header, origin)
}

/// Byte offset and text (without the line ending) of every line.
pub(super) fn line_offsets(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut off = 0;
    for l in text.split_inclusive('\n') {
        out.push((off, l.trim_end_matches(['\n', '\r'])));
        off += l.len();
    }
    out
}

/// A quoted cell that opens and never closes (issue 34: it was read as data). In CSV a quote
/// inside a quoted cell is doubled, so quotes pair up in a whole file; one left open is a file
/// cut inside a cell, which the csv reader would take as a value. The error names its line.
pub(super) fn unterminated_quote(section: &str, first_line: usize, origin: &Path) -> Result<(), Error> {
    let (mut line, mut open) = (0, None);
    for b in section.bytes() {
        match b {
            b'\n' => line += 1,
            b'"' => open = if open.is_some() { None } else { Some(line) },
            _ => {}
        }
    }
    match open {
        None => Ok(()),
        Some(opened) => Err(Error::input(
            origin,
            format!(
                "line {}: a quoted cell starts here and never ends: the file was cut off or damaged; use the report as nsys wrote it, or export it again",
                first_line + opened
            ),
        )),
    }
}

pub(super) fn parse_section(
    section: &str,
    first_line: usize,
    header: &Header,
    origin: &Path,
) -> Result<Workload, Error> {
    unterminated_quote(section, first_line, origin)?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(section.as_bytes());
    let (shape, format) = match header {
        Header::Trace { .. } => (Shape::Trace, "cuda_gpu_trace csv"),
        Header::Summary { .. } => (Shape::Summary, "cuda_gpu_kern_sum csv"),
        Header::Other(_) => unreachable!("only trace and summary headers are parsed"),
    };
    let mut names = Names::default();
    let mut activities = Vec::new();
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                let line = e
                    .position()
                    .map_or(first_line, |p| first_line + p.line() as usize - 1);
                return Err(Error::input(origin, format!("line {line}: invalid CSV: {e}")));
            }
        }
        let line = record
            .position()
            .map_or(0, |p| first_line + p.line() as usize - 1);
        if activities.len() >= MAX_ROWS {
            return Err(Error::input(
                origin,
                format!("has more than {MAX_ROWS} rows; cgp-gate refuses larger reports"),
            ));
        }
        let cell = |i: usize, what: &str| -> Result<&str, Error> {
            record.get(i).ok_or_else(|| {
                Error::input(
                    origin,
                    format!(
                        "line {line}: the row has {} cells, no `{what}` (column {})",
                        record.len(),
                        i + 1
                    ),
                )
            })
        };
        let activity = match header {
            Header::Trace {
                start,
                duration,
                name,
            } => {
                let n = cell(*name, "Name")?;
                let s = ns(cell(start.0, "Start")?, start.1, "Start", line, n, origin)?;
                let d = ns(
                    cell(duration.0, "Duration")?,
                    duration.1,
                    "Duration",
                    line,
                    n,
                    origin,
                )?;
                Activity {
                    name: names.id(&modern_name(n)),
                    start_ns: Some(s),
                    duration_ns: d,
                    instances: 1,
                }
            }
            Header::Summary {
                total,
                instances,
                name,
            } => {
                let n = cell(*name, "Name")?;
                let t = ns(
                    cell(total.0, "Total Time")?,
                    total.1,
                    "Total Time",
                    line,
                    n,
                    origin,
                )?;
                let raw = cell(*instances, "Instances")?;
                let count: u64 = raw.trim().parse().map_err(|_| {
                    Error::input(
                        origin,
                        format!(
                            "line {line}: `Instances` of kernel `{}` is `{raw}`, not a count",
                            short(n)
                        ),
                    )
                })?;
                Activity {
                    name: names.id(&modern_name(n)),
                    start_ns: None,
                    duration_ns: t,
                    instances: count,
                }
            }
            Header::Other(_) => unreachable!("only trace and summary headers are parsed"),
        };
        activities.push(activity);
    }
    Ok(Workload {
        file: origin.to_path_buf(),
        shape,
        format: format.to_owned(),
        names: names.names,
        activities,
    })
}

/// A long C++ name, cut for messages.
pub(super) fn short(name: &str) -> String {
    const MAX: usize = 120;
    if name.chars().count() <= MAX {
        return name.to_owned();
    }
    let cut: String = name.chars().take(MAX).collect();
    format!("{cut}...")
}

/// A time cell in ns: integers as they are, decimals (other units) scaled and rounded.
pub(super) fn ns(
    raw: &str,
    factor: f64,
    column: &str,
    line: usize,
    name: &str,
    origin: &Path,
) -> Result<u64, Error> {
    let t = raw.trim();
    let bad = || {
        Error::input(
            origin,
            format!(
                "line {line}: `{column}` of `{}` is `{t}`, not a time",
                short(name)
            ),
        )
    };
    if (factor - 1.0).abs() < f64::EPSILON
        && let Ok(v) = t.parse::<u64>()
    {
        return Ok(v);
    }
    let v: f64 = t.parse().map_err(|_| bad())?;
    let scaled = (v * factor).round();
    if !scaled.is_finite() || !(0.0..=1.8e19).contains(&scaled) {
        return Err(bad());
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "checked finite, >= 0 and < 2^64 above"
    )]
    Ok(scaled as u64)
}
