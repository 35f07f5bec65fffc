//! Parser for ncu CSV output (raw page, details page, summary).
//!
//! The input is what ncu wrote: an `--import ... --csv` export, or one-phase output where
//! `==PROF==` lines and the application's own output come before the table. The table starts at
//! the first line that opens with `"ID",` (raw and details pages) or `"Process ID",`
//! (`--print-summary`); without such a line, at the first line after the last
//! `==PROF== Disconnected from process N`. Every later line that starts with `=` is one of ncu's
//! messages and is skipped by the CSV reader.
//!
//! Columns are mapped by name, never by position (the header changed across releases). Rows may
//! be shorter than the header (details rows end with one trailing comma); missing cells are empty.
//!
//! Shapes:
//! - **raw** (`--page raw`): row 1 names the columns, row 2 holds units, then one row per launch.
//!   A column whose name contains `__` is a metric; other columns (`Process ID`, `Block Size`,
//!   NVTX ranges, ...) are launch attributes. `ID` and `Kernel Name` are required.
//! - **details** (default page): one row per launch, section and metric; rows of the same `ID`
//!   merge into one launch, keyed by `Metric Name` (a label such as `Duration`, or the metric
//!   name with `--print-metric-name name`). Rule rows (empty `Metric Name`) are skipped. When a
//!   label repeats in another section of the same launch, the repeat is keyed
//!   `<Metric Name> [<Section Name>]`.
//! - **summary** (`--print-summary`, no `ID` column): one launch per distinct set of identity
//!   cells (kernel, launch shape, process ...), numbered from 0 in order of appearance. The
//!   metric's value is `Average`; `Minimum` and `Maximum` become the extra metrics
//!   `<name> [minimum]` and `<name> [maximum]`; `Invocations` is an attribute. Per-launch
//!   samples are lost in this shape, which is why the gate refuses it for statistics.
//!
//! Values: `n/a` and empty cells are absent, never 0. Numbers may carry thousands separators
//! (`"1,759,000.00"`), accepted only in a grouped-digits pattern, so the ambiguous
//! European-locale `"65,77"` is rejected. `;`-separated cells are instance lists. A cell with a
//! unit must be a number (or a list of numbers); a cell without a unit that is not a number is
//! text (`CachePreferNone`, `0x3`). `nan`/`inf` are kept as text so that a gate using that metric
//! fails naming it. Numbers are scaled to base units by [`crate::units::normalise`]; an unknown
//! unit is an error.
//!
//! An output that holds ncu's `==ERROR==` lines is an error (with the classified
//! [`FailureKind`] and a hint) even when a table follows: ncu's exit code cannot be trusted, and
//! a run with errors has no trustworthy samples. So is an output with no table.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

use crate::ncu::log;
use crate::profile::FailureKind;
use crate::samples::{CsvShape, Launch, Measured, MetricValue, ParsedOutput};
use crate::units::{self, Normalised, UnknownUnit};

/// A parse failure; the caller adds the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line in the input, when known.
    pub line: Option<usize>,
    pub kernel: Option<String>,
    pub metric: Option<String>,
    pub message: String,
    /// Set when the output holds ncu's own failure (`==ERROR==`, no kernels) instead of a table.
    pub failure: Option<FailureKind>,
    /// What to do about it.
    pub hint: Option<String>,
}

impl ParseError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            line: None,
            kernel: None,
            metric: None,
            message: message.into(),
            failure: None,
            hint: None,
        }
    }

    fn at(line: usize, message: impl Into<String>) -> Self {
        Self {
            line: Some(line),
            ..Self::new(message)
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut place = Vec::new();
        if let Some(l) = self.line {
            place.push(format!("line {l}"));
        }
        if let Some(m) = &self.metric {
            place.push(format!("metric `{m}`"));
        }
        if let Some(k) = &self.kernel {
            place.push(format!("kernel `{k}`"));
        }
        if place.is_empty() {
            write!(f, "{}", self.message)?;
        } else {
            write!(f, "{}: {}", place.join(", "), self.message)?;
        }
        if let Some(h) = &self.hint {
            write!(f, "\n  help: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseError {}

/// Parse ncu CSV output.
///
/// # Errors
/// [`ParseError`] naming the row, metric and text; or, with [`ParseError::failure`] set, ncu's
/// own failure when the output holds `==ERROR==` lines or `No kernels were profiled.`.
pub fn parse(text: &str) -> Result<ParsedOutput, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let scan = log::scan(text);
    if !scan.errors.is_empty() {
        return Err(failure(&scan));
    }
    let Some((offset, lines_before)) = locate_table(text) else {
        if scan.no_kernels {
            return Err(failure(&scan));
        }
        return Err(ParseError {
            hint: Some(
                "pass the file ncu wrote with `--csv` (e.g. `ncu --import run.ncu-rep --csv --page raw \
                 --print-units base`), not the human-readable report"
                    .into(),
            ),
            ..ParseError::new(
                "no ncu csv table found: expected a header line starting with \"ID\" (raw or details \
                 page) or \"Process ID\" (summary)",
            )
        });
    };
    let mut table = Table::new(&text[offset..], lines_before);
    let Some(header) = table.next_record()? else {
        return Err(ParseError::new("no ncu csv table found"));
    };
    let header: Vec<String> = header.iter().map(|h| h.trim().to_owned()).collect();
    let has = |name: &str| header.iter().any(|h| h == name);
    let (shape, launches) = if !has("ID") && has("Metric Name") && has("Average") {
        (CsvShape::Summary, parse_summary(&header, &mut table)?)
    } else if has("Metric Name") && has("Metric Value") {
        (CsvShape::Details, parse_details(&header, &mut table)?)
    } else {
        (CsvShape::Raw, parse_raw(&header, &mut table)?)
    };
    if launches.is_empty() && scan.no_kernels {
        return Err(failure(&scan));
    }
    Ok(ParsedOutput {
        shape,
        launches,
        warnings: scan.warnings,
    })
}

/// The error for an output that holds ncu's failure.
fn failure(scan: &log::LogScan) -> ParseError {
    match log::classify(scan) {
        Some((kind, message, hint)) => ParseError {
            failure: Some(kind),
            hint: Some(hint),
            ..ParseError::new(format!("ncu reported a failure: {message}"))
        },
        None => ParseError::new("ncu reported a failure"),
    }
}

/// Byte offset of the header line and the number of lines before it.
///
/// In order of preference: the first header-like line after the last `==PROF== Disconnected`
/// (one-phase output prints the table there; application output before it may look like
/// anything), the first header-like line anywhere (an `--import` export, or a log where ncu
/// printed the table before disconnecting), the first table-like line after the last disconnect
/// (a header that starts with some other column).
fn locate_table(text: &str) -> Option<(usize, usize)> {
    let is_header = |l: &str| l.starts_with("\"ID\",") || l.starts_with("\"Process ID\",");
    let mut first_header = None;
    let mut header_after_disconnect = None;
    let mut after_disconnect: Option<(usize, usize)> = None;
    let mut offset = 0;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        if is_header(line) {
            first_header.get_or_insert((offset, index));
            header_after_disconnect.get_or_insert((offset, index));
        } else if line.starts_with("==PROF== Disconnected from process") {
            after_disconnect = Some((offset + line.len(), index + 1));
            header_after_disconnect = None;
        }
        offset += line.len();
    }
    if let Some(found) = header_after_disconnect.or(first_header) {
        return Some(found);
    }
    let (start, first_index) = after_disconnect?;
    let mut offset = start;
    for (i, line) in text[start..].split_inclusive('\n').enumerate() {
        let t = line.trim();
        if !t.is_empty() && !t.starts_with("==") {
            return Some((offset, first_index + i));
        }
        offset += line.len();
    }
    None
}

/// The CSV reader over the table, with line numbers of the whole input.
struct Table<'a> {
    body: &'a str,
    reader: csv::Reader<&'a [u8]>,
    record: csv::StringRecord,
    lines_before: usize,
}

impl<'a> Table<'a> {
    fn new(body: &'a str, lines_before: usize) -> Self {
        let reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            // ncu's messages (`==PROF==`, `==WARNING==`, `==ERROR==`) start with `=`; CSV rows
            // start with `"`.
            .comment(Some(b'='))
            .from_reader(body.as_bytes());
        Self {
            body,
            reader,
            record: csv::StringRecord::new(),
            lines_before,
        }
    }

    /// The next record, or `None` at the end.
    fn next_record(&mut self) -> Result<Option<&csv::StringRecord>, ParseError> {
        match self.reader.read_record(&mut self.record) {
            Ok(true) => Ok(Some(&self.record)),
            Ok(false) => Ok(None),
            Err(e) => {
                let line = e.position().map_or(self.lines_before + 1, |p| self.line_of(p));
                Err(ParseError::at(line, format!("malformed csv: {e}")))
            }
        }
    }

    /// 1-based line in the whole input. Counted from the byte offset because the reader's own
    /// line count leaves out the skipped `==` lines; only error paths pay for the count.
    fn line_of(&self, p: &csv::Position) -> usize {
        let bytes = self.body.as_bytes();
        let mut start = usize::try_from(p.byte()).map_or(bytes.len(), |b| b.min(bytes.len()));
        // The reader reports the position where it started reading, which is before the skipped
        // `==` and blank lines that precede the record.
        while matches!(bytes.get(start), Some(b'=' | b'\n' | b'\r')) {
            match bytes[start..].iter().position(|&b| b == b'\n') {
                Some(nl) => start += nl + 1,
                None => break,
            }
        }
        let newlines = bytes[..start].iter().filter(|&&b| b == b'\n').count();
        self.lines_before + newlines + 1
    }

    /// 1-based line of the current record in the whole input.
    fn line(&self) -> usize {
        self.record
            .position()
            .map_or(self.lines_before + 1, |p| self.line_of(p))
    }

    fn cell(&self, index: usize) -> &str {
        self.record.get(index).map_or("", str::trim)
    }

    /// How many non-empty cells the current record has past the first `columns` (`None`: none).
    fn extra_cells(&self, columns: usize) -> Option<usize> {
        let n = self
            .record
            .iter()
            .skip(columns)
            .filter(|c| !c.trim().is_empty())
            .count();
        (n > 0).then_some(n)
    }
}

/// A cell, classified.
enum Cell<'a> {
    Missing,
    Number(f64),
    List(Vec<f64>),
    Text(&'a str),
}

/// Classify a cell. `numeric`: the cell has a unit, so text is an error.
fn read_cell<'a>(text: &'a str, numeric: bool, scratch: &mut String) -> Result<Cell<'a>, String> {
    if text.is_empty() || text.eq_ignore_ascii_case("n/a") {
        return Ok(Cell::Missing);
    }
    if let Some(v) = parse_number(text, scratch) {
        return Ok(Cell::Number(v));
    }
    if is_non_finite(text) {
        return Ok(Cell::Text(text));
    }
    if text.contains(';') {
        let mut values = Vec::new();
        for item in text.split(';').map(str::trim) {
            match parse_number(item, scratch) {
                Some(v) => values.push(v),
                None if numeric => {
                    return Err(format!("instance value `{item}` in `{text}` is not a number"));
                }
                None => return Ok(Cell::Text(text)),
            }
        }
        return Ok(Cell::List(values));
    }
    if numeric {
        return Err(format!(
            "`{text}` is not a number (a value with a unit must be numeric; thousands separators \
             are accepted only as `1,234,567.8`; run ncu with LC_ALL=C)"
        ));
    }
    Ok(Cell::Text(text))
}

fn is_non_finite(t: &str) -> bool {
    let t = t.strip_prefix(['-', '+']).unwrap_or(t);
    ["nan", "inf", "infinity"]
        .iter()
        .any(|w| t.eq_ignore_ascii_case(w))
}

/// A decimal number, with thousands separators only in a grouped-digits pattern.
fn parse_number(s: &str, scratch: &mut String) -> Option<f64> {
    let b = s.as_bytes();
    let mut digit = false;
    let mut comma = false;
    for &c in b {
        match c {
            b'0'..=b'9' => digit = true,
            b',' => comma = true,
            b'.' | b'-' | b'+' | b'e' | b'E' => {}
            _ => return None,
        }
    }
    if !digit {
        return None;
    }
    let v: f64 = if comma {
        if !grouped(b) {
            return None;
        }
        scratch.clear();
        for part in s.split(',') {
            scratch.push_str(part);
        }
        scratch.parse().ok()?
    } else {
        s.parse().ok()?
    };
    v.is_finite().then_some(v)
}

/// `[sign] d{1,3} (,ddd)+ [rest without commas]`.
fn grouped(b: &[u8]) -> bool {
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    let start = i;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    if !(1..=3).contains(&(i - start)) {
        return false;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b',') {
        let group = b.get(i + 1..i + 4);
        if !group.is_some_and(|g| g.iter().all(u8::is_ascii_digit)) {
            return false;
        }
        i += 4;
        if b.get(i).is_some_and(u8::is_ascii_digit) {
            return false;
        }
        groups += 1;
    }
    groups > 0 && !b[i..].contains(&b',')
}

/// A launch id: a non-negative integer.
fn parse_id(text: &str, scratch: &mut String) -> Option<u64> {
    let v = parse_number(text, scratch)?;
    // The cast is exact: a non-negative integer below 2^53.
    (v >= 0.0 && v.fract() == 0.0 && v < 9_007_199_254_740_992.0).then_some(v as u64)
}

/// Normalised units, cached by spelling (details rows repeat a handful of units).
#[derive(Default)]
struct Units(HashMap<String, Result<Normalised, UnknownUnit>>);

impl Units {
    fn get(&mut self, unit: &str) -> &Result<Normalised, UnknownUnit> {
        if !self.0.contains_key(unit) {
            self.0.insert(unit.to_owned(), units::normalise(unit));
        }
        &self.0[unit]
    }
}

/// Turn a cell into a measured value in base units; `None` when absent.
fn measure(
    text: &str,
    unit_text: &str,
    unit: &Result<Normalised, UnknownUnit>,
    scratch: &mut String,
) -> Result<Option<Measured>, String> {
    let cell = read_cell(text, !unit_text.is_empty(), scratch)?;
    if matches!(cell, Cell::Missing) {
        return Ok(None);
    }
    let n = unit.as_ref().map_err(|e| {
        format!(
            "{e} for value `{text}`; cgp-gate knows every unit ncu is documented to print, so \
             please report this unit with your ncu version"
        )
    })?;
    let value = match cell {
        Cell::Missing => return Ok(None),
        Cell::Number(v) => MetricValue::Number(v * n.factor),
        Cell::List(vs) => MetricValue::List(vs.into_iter().map(|v| v * n.factor).collect()),
        Cell::Text(t) => MetricValue::Text(t.to_owned()),
    };
    Ok(Some(Measured {
        value,
        unit: n.base.clone(),
    }))
}

/// Index of a required column.
fn column(header: &[String], name: &str, shape: &str, line: usize) -> Result<usize, ParseError> {
    header.iter().position(|h| h == name).ok_or_else(|| {
        ParseError::at(
            line,
            format!(
                "the {shape} header has no `{name}` column (columns: {})",
                header.join(", ")
            ),
        )
    })
}

struct RawColumn {
    index: usize,
    name: String,
    unit_text: String,
    unit: Result<Normalised, UnknownUnit>,
}

fn parse_raw(header: &[String], table: &mut Table<'_>) -> Result<Vec<Launch>, ParseError> {
    let header_line = table.line();
    let id_col = column(header, "ID", "raw page", header_line)?;
    let kernel_col = column(header, "Kernel Name", "raw page", header_line)?;
    let Some(units_row) = table.next_record()?.cloned() else {
        return Ok(Vec::new());
    };
    let units_line = table.line();
    if !units_row.get(id_col).unwrap_or("").trim().is_empty() {
        return Err(ParseError {
            hint: Some(
                "export the raw page with `--csv --page raw --print-units base`; cgp-gate needs \
                 the units row to scale values"
                    .into(),
            ),
            ..ParseError::at(
                units_line,
                "expected the raw page's units row after the header (its `ID` cell is empty), \
                 found a launch",
            )
        });
    }
    let mut metrics = Vec::new();
    let mut attributes = Vec::new();
    for (index, name) in header.iter().enumerate() {
        if index == id_col || index == kernel_col || name.is_empty() {
            continue;
        }
        if name.contains("__") {
            let unit_text = units_row.get(index).unwrap_or("").trim().to_owned();
            let unit = units::normalise(&unit_text);
            metrics.push(RawColumn {
                index,
                name: name.clone(),
                unit_text,
                unit,
            });
        } else {
            attributes.push((index, name.clone()));
        }
    }
    let mut launches = Vec::new();
    let mut scratch = String::new();
    while table.next_record()?.is_some() {
        let kernel = table.cell(kernel_col);
        let id = parse_id(table.cell(id_col), &mut scratch).ok_or_else(|| ParseError {
            kernel: Some(kernel.to_owned()),
            ..ParseError::at(
                table.line(),
                format!(
                    "launch `ID` `{}` is not a non-negative integer",
                    table.cell(id_col)
                ),
            )
        })?;
        // A row longer than the header has cells that belong to no column: the file is damaged
        // (two rows run together, a stray separator), and which cell is which is unknown.
        if let Some(extra) = table.extra_cells(header.len()) {
            return Err(ParseError {
                kernel: Some(kernel.to_owned()),
                ..ParseError::at(
                    table.line(),
                    format!(
                        "the row has {extra} more non-empty cell(s) than the header's {} columns; the file is damaged",
                        header.len()
                    ),
                )
            });
        }
        let mut values = Vec::with_capacity(metrics.len());
        for col in &metrics {
            let text = table.cell(col.index);
            let m = measure(text, &col.unit_text, &col.unit, &mut scratch).map_err(|message| ParseError {
                kernel: Some(kernel.to_owned()),
                metric: Some(col.name.clone()),
                ..ParseError::at(
                    table.line(),
                    format!(
                        "{message} (unit `{}` from the units row, line {units_line})",
                        col.unit_text
                    ),
                )
            })?;
            if let Some(m) = m {
                values.push((col.name.clone(), m));
            }
        }
        launches.push(Launch {
            id,
            kernel: kernel.to_owned(),
            attributes: attributes
                .iter()
                .filter_map(|(i, name)| {
                    let v = table.cell(*i);
                    (!v.is_empty()).then(|| (name.clone(), v.to_owned()))
                })
                .collect(),
            // Collecting sorts once and builds the map in bulk.
            metrics: values.into_iter().collect(),
        });
    }
    Ok(launches)
}

/// Columns of the details page and the summary that are not launch attributes.
const NOT_ATTRIBUTES: &[&str] = &[
    "ID",
    "Kernel Name",
    "Section Name",
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

fn attribute_columns(header: &[String]) -> Vec<(usize, String)> {
    header
        .iter()
        .enumerate()
        .filter(|(_, h)| !h.is_empty() && !NOT_ATTRIBUTES.contains(&h.as_str()))
        .map(|(i, h)| (i, h.clone()))
        .collect()
}

fn row_attributes(table: &Table<'_>, columns: &[(usize, String)]) -> BTreeMap<String, String> {
    columns
        .iter()
        .filter_map(|(i, name)| {
            let v = table.cell(*i);
            (!v.is_empty()).then(|| (name.clone(), v.to_owned()))
        })
        .collect()
}

/// Insert a details/summary metric; a label repeated by another section gets the section added.
fn insert_metric(launch: &mut Launch, name: &str, section: &str, m: Measured) {
    if launch.metrics.contains_key(name) {
        launch.metrics.insert(format!("{name} [{section}]"), m);
    } else {
        launch.metrics.insert(name.to_owned(), m);
    }
}

fn parse_details(header: &[String], table: &mut Table<'_>) -> Result<Vec<Launch>, ParseError> {
    let header_line = table.line();
    let col = |name| column(header, name, "details page", header_line);
    let (id_col, kernel_col) = (col("ID")?, col("Kernel Name")?);
    let (name_col, unit_col, value_col) = (col("Metric Name")?, col("Metric Unit")?, col("Metric Value")?);
    let section_col = header.iter().position(|h| h == "Section Name");
    let attrs = attribute_columns(header);
    let mut launches: Vec<Launch> = Vec::new();
    let mut by_id: HashMap<u64, usize> = HashMap::new();
    let mut units = Units::default();
    let mut scratch = String::new();
    while table.next_record()?.is_some() {
        let metric = table.cell(name_col);
        if metric.is_empty() {
            // A rule row: `Rule Name`, `Rule Type`, `Rule Description`; no metric.
            continue;
        }
        let kernel = table.cell(kernel_col);
        let id = parse_id(table.cell(id_col), &mut scratch).ok_or_else(|| ParseError {
            kernel: Some(kernel.to_owned()),
            metric: Some(metric.to_owned()),
            ..ParseError::at(
                table.line(),
                format!(
                    "launch `ID` `{}` is not a non-negative integer",
                    table.cell(id_col)
                ),
            )
        })?;
        let index = match by_id.entry(id) {
            Entry::Occupied(e) => {
                let i = *e.get();
                if launches[i].kernel != kernel {
                    return Err(ParseError {
                        kernel: Some(kernel.to_owned()),
                        ..ParseError::at(
                            table.line(),
                            format!(
                                "launch `ID` {id} names kernel `{kernel}` but earlier rows name `{}`",
                                launches[i].kernel
                            ),
                        )
                    });
                }
                i
            }
            Entry::Vacant(e) => {
                e.insert(launches.len());
                launches.push(Launch {
                    id,
                    kernel: kernel.to_owned(),
                    attributes: row_attributes(table, &attrs),
                    metrics: BTreeMap::new(),
                });
                launches.len() - 1
            }
        };
        let unit_text = table.cell(unit_col);
        let m = measure(
            table.cell(value_col),
            unit_text,
            units.get(unit_text),
            &mut scratch,
        )
        .map_err(|message| ParseError {
            kernel: Some(kernel.to_owned()),
            metric: Some(metric.to_owned()),
            ..ParseError::at(table.line(), message)
        })?;
        if let Some(m) = m {
            let section = section_col.map_or("", |c| table.cell(c));
            insert_metric(&mut launches[index], metric, section, m);
        }
    }
    Ok(launches)
}

fn parse_summary(header: &[String], table: &mut Table<'_>) -> Result<Vec<Launch>, ParseError> {
    let header_line = table.line();
    let col = |name| column(header, name, "summary", header_line);
    let kernel_col = col("Kernel Name")?;
    let (name_col, unit_col) = (col("Metric Name")?, col("Metric Unit")?);
    let (min_col, max_col, avg_col) = (col("Minimum")?, col("Maximum")?, col("Average")?);
    let section_col = header.iter().position(|h| h == "Section Name");
    let attrs = attribute_columns(header);
    // A launch shape is identified by every identity cell except the aggregate's count.
    let identity: Vec<usize> = std::iter::once(kernel_col)
        .chain(attrs.iter().filter(|(_, n)| n != "Invocations").map(|(i, _)| *i))
        .collect();
    let mut launches: Vec<Launch> = Vec::new();
    let mut by_identity: HashMap<Vec<String>, usize> = HashMap::new();
    let mut units = Units::default();
    let mut scratch = String::new();
    while table.next_record()?.is_some() {
        let metric = table.cell(name_col);
        if metric.is_empty() {
            continue;
        }
        let kernel = table.cell(kernel_col);
        let key: Vec<String> = identity.iter().map(|&i| table.cell(i).to_owned()).collect();
        let next = launches.len();
        let index = *by_identity.entry(key).or_insert(next);
        if index == next {
            launches.push(Launch {
                id: next as u64,
                kernel: kernel.to_owned(),
                attributes: row_attributes(table, &attrs),
                metrics: BTreeMap::new(),
            });
        }
        let unit_text = table.cell(unit_col);
        let section = section_col.map_or("", |c| table.cell(c)).to_owned();
        for (c, suffix) in [(avg_col, ""), (min_col, " [minimum]"), (max_col, " [maximum]")] {
            let m =
                measure(table.cell(c), unit_text, units.get(unit_text), &mut scratch).map_err(|message| {
                    ParseError {
                        kernel: Some(kernel.to_owned()),
                        metric: Some(metric.to_owned()),
                        ..ParseError::at(table.line(), format!("{} {message}", header[c]))
                    }
                })?;
            if let Some(m) = m {
                insert_metric(&mut launches[index], &format!("{metric}{suffix}"), &section, m);
            }
        }
    }
    Ok(launches)
}

#[cfg(test)]
#[expect(
    clippy::float_cmp,
    reason = "the expected values are exactly representable and parse exactly"
)]
mod tests {
    use super::*;

    fn num(l: &Launch, m: &str) -> f64 {
        match &l.metrics[m].value {
            MetricValue::Number(v) => *v,
            other => panic!("{m}: {other:?}"),
        }
    }

    const D3_HEADER: &str = r#""ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value","Rule Name","Rule Type","Rule Description","Estimated Speedup Type","Estimated Speedup""#;
    const D3_PREFIX: &str =
        r#""0","371693","gemm","127.0.0.1","gemm_kernel","1","7","(384, 1, 1)","(9, 32, 1)","0","10.0""#;

    #[test]
    fn numbers_with_grouped_separators_only() {
        let mut s = String::new();
        assert_eq!(parse_number("1,759,000.00", &mut s), Some(1_759_000.0));
        assert_eq!(parse_number("5,156,128", &mut s), Some(5_156_128.0));
        assert_eq!(parse_number("-1,024.5", &mut s), Some(-1024.5));
        assert_eq!(parse_number("406240", &mut s), Some(406_240.0));
        assert_eq!(parse_number("1.5e3", &mut s), Some(1500.0));
        for bad in [
            "65,77", "1,2345", "1234,567", ",123", "1,,234", "1,234,", "0x3", "", "-", ".",
        ] {
            assert_eq!(parse_number(bad, &mut s), None, "{bad}");
        }
    }

    #[test]
    fn cells_missing_text_lists_and_errors() {
        let mut s = String::new();
        assert!(matches!(read_cell("n/a", true, &mut s), Ok(Cell::Missing)));
        assert!(matches!(read_cell("N/A", true, &mut s), Ok(Cell::Missing)));
        assert!(matches!(read_cell("", true, &mut s), Ok(Cell::Missing)));
        assert!(matches!(
            read_cell("CachePreferNone", false, &mut s),
            Ok(Cell::Text("CachePreferNone"))
        ));
        assert!(matches!(read_cell("nan", true, &mut s), Ok(Cell::Text("nan"))));
        match read_cell("1,024.00; 924.00; 0.00", true, &mut s) {
            Ok(Cell::List(v)) => assert_eq!(v, vec![1024.0, 924.0, 0.0]),
            _ => panic!("expected a list"),
        }
        let e = read_cell("65,77", true, &mut s).err().unwrap();
        assert!(e.contains("`65,77` is not a number"), "{e}");
        let e = read_cell("1.0; x", true, &mut s).err().unwrap();
        assert!(e.contains("instance value `x`"), "{e}");
        assert!(matches!(read_cell("a; b", false, &mut s), Ok(Cell::Text("a; b"))));
    }

    #[test]
    fn details_rows_merge_trailing_commas_and_rule_rows_skipped() {
        let text = format!(
            "{D3_HEADER}\n\
             {D3_PREFIX},\"GPU Speed Of Light Throughput\",\"Duration\",\"ns\",\"406240\",\n\
             {D3_PREFIX},\"GPU Speed Of Light Throughput\",\"SM Frequency\",\"hz\",\"1239496049.13\",\n\
             {D3_PREFIX},\"SpeedOfLight\",\"\",\"\",\"\",\"SOLBottleneck\",\"OPT\",\"This workload exhibits low compute throughput.\",\"\",\"\"\n\
             {D3_PREFIX},\"Launch Statistics\",\"Function Cache Configuration\",\"\",\"CachePreferNone\",\n\
             {D3_PREFIX},\"Launch Statistics\",\"Shared Memory Configuration Size\",\"Kbyte\",\"233.47\",\n"
        );
        let p = parse(&text).unwrap();
        assert_eq!(p.shape, CsvShape::Details);
        assert_eq!(p.launches.len(), 1);
        let l = &p.launches[0];
        assert_eq!((l.id, l.kernel.as_str()), (0, "gemm_kernel"));
        assert_eq!(num(l, "Duration"), 406_240.0);
        assert_eq!(l.metrics["SM Frequency"].unit, "Hz");
        assert!((num(l, "Shared Memory Configuration Size") - 233_470.0).abs() < 1e-6);
        assert_eq!(
            l.metrics["Function Cache Configuration"].value,
            MetricValue::Text("CachePreferNone".into())
        );
        assert_eq!(l.metrics.len(), 4, "the rule row adds nothing");
        assert_eq!(l.attributes["Block Size"], "(384, 1, 1)");
        assert_eq!(l.attributes["CC"], "10.0");
        assert!(!l.attributes.contains_key("Rule Name"));
        assert!(!l.attributes.contains_key("Section Name"));
    }

    #[test]
    fn details_label_repeated_in_another_section_keeps_both() {
        let text = format!(
            "{D3_HEADER}\n\
             {D3_PREFIX},\"A\",\"Threads\",\"thread\",\"10\",\n\
             {D3_PREFIX},\"B\",\"Threads\",\"thread\",\"20\",\n"
        );
        let l = &parse(&text).unwrap().launches[0];
        assert_eq!(num(l, "Threads"), 10.0);
        assert_eq!(num(l, "Threads [B]"), 20.0);
    }

    #[test]
    fn details_id_with_two_kernels_is_an_error() {
        let other = D3_PREFIX.replace("gemm_kernel", "other");
        let text = format!(
            "{D3_HEADER}\n{D3_PREFIX},\"A\",\"Duration\",\"ns\",\"1\",\n{other},\"A\",\"Duration\",\"ns\",\"2\",\n"
        );
        let e = parse(&text).unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("earlier rows name `gemm_kernel`"), "{e}");
    }

    #[test]
    fn per_row_units_scale_each_value() {
        let h = r#""ID","Process ID","Process Name","Host Name","Kernel Name","Kernel Time","Context","Stream","Section Name","Metric Name","Metric Unit","Metric Value""#;
        let text = format!(
            "{h}\n\"0\",\"1\",\"a\",\"h\",\"k\",\"t\",\"1\",\"7\",\"S\",\"Duration\",\"usecond\",\"63.58\"\n\
             \"1\",\"1\",\"a\",\"h\",\"k\",\"t\",\"1\",\"7\",\"S\",\"Duration\",\"msecond\",\"1.5\"\n"
        );
        let p = parse(&text).unwrap();
        assert!((num(&p.launches[0], "Duration") - 63_580.0).abs() < 1e-6);
        assert!((num(&p.launches[1], "Duration") - 1_500_000.0).abs() < 1e-6);
        assert_eq!(p.launches[1].metrics["Duration"].unit, "ns");
        assert_eq!(p.launches[0].attributes["Kernel Time"], "t");
    }

    #[test]
    fn raw_page_units_row_and_identity_columns() {
        let text = "\"ID\",\"Process ID\",\"Kernel Name\",\"Block Size\",\"dram__bytes_read.sum\",\"gpu__time_duration.sum\",\"launch__func_cache_config\",\"sm__x.sum\"\n\
                    \"\",\"\",\"\",\"\",\"Kbyte\",\"usecond\",\"\",\"inst\"\n\
                    \"0\",\"9\",\"k\",\"(32, 1, 1)\",\"5,156.128\",\"28.448\",\"CachePreferNone\",\"n/a\"\n\
                    \"1\",\"9\",\"k\",\"(32, 1, 1)\",\"1.5\",\"2\",\"CachePreferNone\"\n";
        let p = parse(text).unwrap();
        assert_eq!(p.shape, CsvShape::Raw);
        let l = &p.launches[0];
        assert!((num(l, "dram__bytes_read.sum") - 5_156_128.0).abs() < 1e-6);
        assert_eq!(l.metrics["dram__bytes_read.sum"].unit, "byte");
        assert!((num(l, "gpu__time_duration.sum") - 28_448.0).abs() < 1e-6);
        assert!(!l.metrics.contains_key("sm__x.sum"), "n/a is absent");
        assert_eq!(l.attributes.get("Process ID").map(String::as_str), Some("9"));
        assert_eq!(
            l.attributes.get("Block Size").map(String::as_str),
            Some("(32, 1, 1)")
        );
        assert!(!l.attributes.contains_key("ID") && !l.attributes.contains_key("Kernel Name"));
        // A short row: the missing cell is absent.
        assert!(!p.launches[1].metrics.contains_key("sm__x.sum"));
        assert_eq!(p.launches[1].id, 1);
    }

    #[test]
    fn raw_page_without_units_row_is_an_error() {
        let text = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"0\",\"k\",\"5\"\n";
        let e = parse(text).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("units row"), "{e}");
    }

    #[test]
    fn unknown_unit_names_line_metric_and_text() {
        let text =
            "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"furlong\"\n\"0\",\"k\",\"5\"\n";
        let e = parse(text).unwrap_err();
        assert_eq!(e.line, Some(3));
        assert_eq!(e.metric.as_deref(), Some("gpu__time_duration.sum"));
        assert_eq!(e.kernel.as_deref(), Some("k"));
        assert!(e.to_string().contains("unknown unit `furlong`"), "{e}");
        assert!(
            e.to_string()
                .starts_with("line 3, metric `gpu__time_duration.sum`, kernel `k`: "),
            "{e}"
        );
        // An unknown unit on an all-`n/a` column does not matter.
        let text = "\"ID\",\"Kernel Name\",\"a__b\"\n\"\",\"\",\"furlong\"\n\"0\",\"k\",\"n/a\"\n";
        assert!(parse(text).is_ok());
    }

    #[test]
    fn malformed_number_and_bad_id() {
        let text =
            "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n\"0\",\"k\",\"65,77\"\n";
        let e = parse(text).unwrap_err();
        assert_eq!(
            (e.line, e.metric.as_deref()),
            (Some(3), Some("gpu__time_duration.sum"))
        );
        assert!(e.message.contains("`65,77` is not a number"));
        let text = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n\"x\",\"k\",\"1\"\n";
        let e = parse(text).unwrap_err();
        assert!(e.message.contains("`ID` `x`"), "{e}");
    }

    #[test]
    fn header_after_disconnect_and_prof_lines_skipped() {
        let text = "app says hi\n\"ID\" is what the app prints\n==PROF== Connected to process 5\n\
                    ==PROF== Profiling \"k\": 0%....100% - 1 passes\n==PROF== Disconnected from process 5\n\
                    \"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n\
                    ==WARNING== something odd\n\"0\",\"k\",\"7\"\n";
        let p = parse(text).unwrap();
        assert_eq!(p.launches.len(), 1);
        assert_eq!(num(&p.launches[0], "gpu__time_duration.sum"), 7.0);
        assert_eq!(p.warnings, vec!["==WARNING== something odd"]);
    }

    #[test]
    fn line_numbers_count_skipped_lines() {
        let text = "==PROF== Disconnected from process 5\n\"ID\",\"Kernel Name\",\"a__b\"\n\"\",\"\",\"ns\"\n\
                    ==PROF== x\n==PROF== y\n\"0\",\"k\",\"bad\"\n";
        assert_eq!(parse(text).unwrap_err().line, Some(6));
    }

    #[test]
    fn a_header_like_application_line_before_the_disconnect_is_skipped() {
        let text = "\"ID\",\"score\"\n\"1\",\"2\"\n==PROF== Disconnected from process 5\n\
                    \"ID\",\"Kernel Name\",\"a__b\"\n\"\",\"\",\"ns\"\n\"0\",\"k\",\"1\"\n";
        let p = parse(text).unwrap();
        assert_eq!(p.launches[0].kernel, "k");
    }

    #[test]
    fn table_printed_before_the_disconnect_line() {
        let text = "==PROF== Connected to process 5\n\"ID\",\"Kernel Name\",\"a__b\"\n\"\",\"\",\"ns\"\n\
                    \"0\",\"k\",\"1\"\n==PROF== Disconnected from process 5\n";
        assert_eq!(parse(text).unwrap().launches.len(), 1);
    }

    #[test]
    fn header_found_after_disconnect_when_it_starts_elsewhere() {
        let text = "==PROF== Disconnected from process 5\n\n\"Kernel Name\",\"ID\",\"a__b\"\n\"\",\"\",\"ns\"\n\"k\",\"3\",\"1\"\n";
        let p = parse(text).unwrap();
        assert_eq!(p.launches[0].id, 3);
    }

    #[test]
    fn errors_and_missing_table() {
        let e =
            parse("==PROF== Connected to process 1\n==WARNING== No kernels were profiled.\n").unwrap_err();
        assert_eq!(e.failure, Some(FailureKind::NoKernels));
        let e = parse("hello\n").unwrap_err();
        assert!(e.message.starts_with("no ncu csv table found"));
        assert_eq!(e.failure, None);
        let e = parse("==ERROR== An error was reported by the driver\n\"ID\",\"Kernel Name\"\n").unwrap_err();
        assert_eq!(e.failure, Some(FailureKind::ProfilerError));
        let e = parse("\"ID\",\"Process ID\",\"Metric Name\",\"Metric Value\"\n").unwrap_err();
        assert!(e.message.contains("no `Kernel Name` column"), "{e}");
        assert_eq!(e.line, Some(1));
    }

    #[test]
    fn summary_uses_average_and_keeps_min_max() {
        let text = "\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Invocations\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Minimum\",\"Maximum\",\"Average\"\n\
            \"1\",\"a\",\"h\",\"k\",\"(256, 1, 1)\",\"(8, 1, 1)\",\"0\",\"8.0\",\"5\",\"S\",\"Duration\",\"us\",\"1.00\",\"3.00\",\"2.00\"\n\
            \"1\",\"a\",\"h\",\"k\",\"(256, 1, 1)\",\"(8, 1, 1)\",\"0\",\"8.0\",\"5\",\"S\",\"Elapsed Cycles\",\"cycle\",\"599,747,068.80\",\"599,747,068.80\",\"599,747,068.80\"\n\
            \"1\",\"a\",\"h\",\"k\",\"(128, 1, 1)\",\"(8, 1, 1)\",\"0\",\"8.0\",\"2\",\"S\",\"Duration\",\"us\",\"4.00\",\"4.00\",\"4.00\"\n";
        let p = parse(text).unwrap();
        assert_eq!(p.shape, CsvShape::Summary);
        assert_eq!(p.launches.len(), 2);
        let l = &p.launches[0];
        assert_eq!(num(l, "Duration"), 2000.0);
        assert_eq!(num(l, "Duration [minimum]"), 1000.0);
        assert_eq!(num(l, "Duration [maximum]"), 3000.0);
        assert!((num(l, "Elapsed Cycles") - 599_747_068.8).abs() < 1e-6);
        assert_eq!(l.attributes["Invocations"], "5");
        assert_eq!(
            (p.launches[1].id, p.launches[1].attributes["Block Size"].as_str()),
            (1, "(128, 1, 1)")
        );
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        fn grouped_text(n: u64) -> String {
            let d = n.to_string();
            let mut out = String::new();
            for (i, c) in d.chars().enumerate() {
                if i > 0 && (d.len() - i).is_multiple_of(3) {
                    out.push(',');
                }
                out.push(c);
            }
            out
        }

        proptest! {
            #[test]
            fn grouped_numbers_round_trip(n in 0u64..1_000_000_000_000, frac in 0u32..100) {
                let mut s = String::new();
                let text = format!("{}.{frac:02}", grouped_text(n));
                let want = format!("{n}.{frac:02}").parse::<f64>().unwrap();
                prop_assert_eq!(parse_number(&text, &mut s), Some(want));
            }

            #[test]
            fn any_input_is_parsed_or_rejected_without_panic(
                lines in proptest::collection::vec("[\"a-z0-9,;./%= \\-]{0,40}", 0..8),
                header in 0usize..3,
            ) {
                let head = ["\"ID\",\"Kernel Name\",\"a__b\"\n", "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n", ""][header];
                let text = format!("{head}{}", lines.join("\n"));
                let _ = parse(&text);
                let _ = log::scan(&text);
            }
        }
    }
}
