//! Parser for ncu CSV output (raw page, details page, summary).
//!
//! The reference is `docs/parser.md` (shapes, key scheme, units, what is refused and why); this
//! comment is the short version.
//!
//! The input is what ncu wrote: an `--import ... --csv` export, or one-phase output where
//! `==PROF==` lines and the application's own output come before the table. UTF-8 (a BOM is
//! skipped) or UTF-16 with a BOM (what a PowerShell redirect writes) is read. The table starts at
//! the first line that opens with `"ID",` (raw and details pages), `"Process ID",` or `"Domain",`
//! (`--print-summary`); without such a line, at the first line after the last
//! `==PROF== Disconnected from process N`. Every later line that starts with `=` is one of ncu's
//! messages and is skipped by the CSV reader.
//!
//! Columns are mapped by name, never by position (the header changed across releases).
//!
//! Shapes:
//! - **raw** (`--page raw`): row 1 names the columns, row 2 holds units, then one row per launch.
//!   The launch attributes are a known list of columns ([`is_attribute`]: `Process ID`,
//!   `Block Size`, NVTX ranges, ...); every other column is a metric (`inst_executed` too).
//! - **details** (default page): one row per launch, section and metric; rows of the same `ID`
//!   merge into one launch. Rule rows (empty `Metric Name`) are skipped. Keys: a metric name that
//!   occurs once in a launch keeps its bare key; a repeated one is keyed `NAME [Section]`, or
//!   `NAME [Section / Body Item Label]` when the section repeats it too. Keys never depend on the
//!   order of sections.
//! - **summary** (`--print-summary`, no `ID` column): one launch per distinct set of identity
//!   cells, numbered from 0 in order of appearance. The value is `Average`; `Minimum` and
//!   `Maximum` become `<key> [minimum]` and `<key> [maximum]`. Per-launch samples are lost in this
//!   shape, which is why the gate refuses it for statistics.
//!
//! Values: `n/a`, `no data` and empty cells are absent, never 0. Numbers may carry thousands
//! separators (`"1,759,000.00"`) in a grouped-digits pattern only. A file written under a
//! decimal-comma locale (`65,77`, `1.234.567`, or nanoseconds with a 3-digit fraction) is refused
//! as a whole, before any value is read. A cell with a unit must be a number (or a `; ` list of
//! numbers); a cell without a unit that is not a number is text. Units are normalised by rule
//! ([`crate::foundation::units::normalise`]); a unit cgp-gate cannot convert keeps its value and its unit as
//! written (the gate refuses it only for a metric a threshold needs).
//!
//! The raw page is streamed: one reused record, no allocation per cell, and [`write_json`]
//! serialises each launch while reading, so `parse --json` on a 44 MB page needs about the
//! file's size in memory.

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::io::{self, Write};

use crate::foundation::failure::FailureKind;
use crate::foundation::units::{self, Normalised};
use crate::measured::samples::{CsvShape, Launch, Measured, MetricValue, ParsedOutput};
use crate::ncu_output::log;

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

    fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
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

/// A failure of [`write_json`]: the input, or the output stream.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    #[error("{0}")]
    Parse(#[from] ParseError),
    #[error("write error: {0}")]
    Io(#[from] io::Error),
}

/// Parse ncu CSV output.
///
/// # Errors
/// [`ParseError`] naming the line, metric and text; or, with [`ParseError::failure`] set, ncu's
/// own failure when the output holds `==ERROR==` lines or `No kernels were profiled.`.
pub fn parse(text: &str) -> Result<ParsedOutput, ParseError> {
    parse_filtered(text, None)
}

/// Parse ncu CSV output, building only the metrics named in `wanted` (keys as a launch's
/// `metrics` map holds them); launches, their identity and attributes are as [`parse`] gives
/// them, and the values of the wanted metrics are the same. The other metric columns of a raw
/// page are not read, only checked for the decimal-comma locale, which refuses the file as a
/// whole; a cell of theirs that [`parse`] would refuse (text with a unit) is not looked at.
///
/// # Errors
/// As [`parse`], for the table and the wanted metrics.
pub fn parse_only(text: &str, wanted: &BTreeSet<String>) -> Result<ParsedOutput, ParseError> {
    parse_filtered(text, Some(wanted))
}

fn parse_filtered(text: &str, wanted: Option<&BTreeSet<String>>) -> Result<ParsedOutput, ParseError> {
    // A file read as text keeps its byte-order mark; `decode` drops it, and so does this.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut sink = Collect {
        launches: Vec::new(),
        wanted,
    };
    let (shape, warnings) = run(text, &mut sink, wanted).map_err(|e| match e {
        JsonError::Parse(p) => p,
        // Collecting into memory does no I/O.
        JsonError::Io(e) => ParseError::new(e.to_string()),
    })?;
    Ok(ParsedOutput {
        shape,
        launches: sink.launches,
        warnings,
    })
}

/// Parse the bytes of a file: UTF-8 (with or without a BOM) or UTF-16 with a BOM.
///
/// # Errors
/// As [`parse`]; also for an encoding that is not UTF-8 or BOM-marked UTF-16.
pub fn parse_bytes(input: &[u8]) -> Result<ParsedOutput, ParseError> {
    parse(&decode(input)?)
}

/// Parse the bytes of a file and write what [`parse_bytes`] returns, as JSON (the same bytes
/// `serde_json` writes for a [`ParsedOutput`]), while reading: a raw page's launches are written
/// one by one and never held in memory. On an error the output written so far is incomplete and
/// must be discarded (the caller exits non-zero).
///
/// # Errors
/// [`JsonError::Parse`] as [`parse_bytes`]; [`JsonError::Io`] when writing fails.
pub fn write_json(input: &[u8], out: &mut dyn Write) -> Result<(), JsonError> {
    let text = decode(input)?;
    let mut sink = JsonSink {
        out,
        buf: Vec::with_capacity(1 << 17),
        launches: 0,
    };
    let (_, warnings) = run(&text, &mut sink, None)?;
    sink.flush_buf(true)?;
    sink.out.write_all(b"]")?;
    if !warnings.is_empty() {
        sink.out.write_all(b",\"warnings\":")?;
        serde_json::to_writer(&mut *sink.out, &warnings).map_err(io::Error::from)?;
    }
    sink.out.write_all(b"}")?;
    Ok(())
}

/// The text of a file: UTF-8 without its BOM, or UTF-16 (LE or BE, with a BOM) decoded.
///
/// # Errors
/// Invalid UTF-8 (naming the line), invalid UTF-16, or UTF-16 without a BOM.
pub fn decode(input: &[u8]) -> Result<Cow<'_, str>, ParseError> {
    let utf16 = |le: bool| -> Result<Cow<'_, str>, ParseError> {
        let body = &input[2..];
        if !body.len().is_multiple_of(2) {
            return Err(ParseError::new(
                "the file starts with a UTF-16 byte-order mark but has an odd number of bytes: it \
                 is cut off or not UTF-16",
            ));
        }
        let units = body.chunks_exact(2).map(|p| {
            if le {
                u16::from_le_bytes([p[0], p[1]])
            } else {
                u16::from_be_bytes([p[0], p[1]])
            }
        });
        char::decode_utf16(units)
            .collect::<Result<String, _>>()
            .map(Cow::Owned)
            .map_err(|e| {
                ParseError::new(format!(
                    "the file is marked UTF-16 but holds an invalid code unit ({e})"
                ))
                .hint("write ncu's output to a file with `--log-file`, or convert it to UTF-8")
            })
    };
    match input {
        [0xEF, 0xBB, 0xBF, rest @ ..] => utf8(rest),
        [0xFF, 0xFE, ..] => utf16(true),
        [0xFE, 0xFF, ..] => utf16(false),
        [a, b, ..] if *a == 0 || *b == 0 => Err(ParseError::at(
            1,
            "the file holds NUL bytes: it looks like UTF-16 without a byte-order mark, which \
             cgp-gate cannot read reliably",
        )
        .hint("write ncu's output with `--log-file FILE` (UTF-8), or convert the file to UTF-8")),
        _ => utf8(input),
    }
}

fn utf8(bytes: &[u8]) -> Result<Cow<'_, str>, ParseError> {
    std::str::from_utf8(bytes).map(Cow::Borrowed).map_err(|e| {
        let at = e.valid_up_to();
        let line = 1 + memchr::memchr_iter(b'\n', &bytes[..at]).count();
        ParseError::at(
            line,
            "the file is not valid UTF-8 (nor UTF-16 with a byte-order mark)",
        )
        .hint("pass the file ncu wrote (`--log-file`, or `ncu --import ... --csv > FILE`)")
    })
}

/// Where parsed launches go: collected ([`parse`]) or written as JSON ([`write_json`]).
trait Sink {
    fn start(&mut self, shape: CsvShape) -> io::Result<()>;
    /// One raw-page launch, straight from the reused record.
    fn raw(&mut self, row: &RawRow<'_>) -> io::Result<()>;
    fn launch(&mut self, launch: Launch) -> io::Result<()>;
}

struct Collect<'w> {
    launches: Vec<Launch>,
    /// Only these metrics are kept (a raw page reads no others; see [`parse_only`]).
    wanted: Option<&'w BTreeSet<String>>,
}

impl Sink for Collect<'_> {
    fn start(&mut self, _: CsvShape) -> io::Result<()> {
        Ok(())
    }

    fn raw(&mut self, row: &RawRow<'_>) -> io::Result<()> {
        let mut metrics = BTreeMap::new();
        for (col, value) in row.values {
            let c = &row.page.metrics[*col];
            let value = match value {
                Val::Num(v) => MetricValue::Number(*v),
                Val::List(r) => MetricValue::List(row.lists[r.clone()].to_vec()),
                Val::Text(i) => MetricValue::Text(row.field(*i).to_owned()),
            };
            metrics.insert(
                c.name.clone(),
                Measured {
                    value,
                    unit: c.unit.base.clone(),
                },
            );
        }
        self.launches.push(Launch {
            id: row.id,
            kernel: row.field(row.page.kernel_col).to_owned(),
            attributes: row
                .attributes()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            metrics,
        });
        Ok(())
    }

    fn launch(&mut self, mut launch: Launch) -> io::Result<()> {
        if let Some(w) = self.wanted {
            launch.metrics.retain(|k, _| w.contains(k));
        }
        self.launches.push(launch);
        Ok(())
    }
}

/// Writes JSON as `serde_json` would for a [`ParsedOutput`], launch by launch.
struct JsonSink<'w> {
    out: &'w mut dyn Write,
    /// Written to `out` in large pieces: appending to a `Vec` inlines, a `dyn Write` call per
    /// piece does not.
    buf: Vec<u8>,
    launches: usize,
}

impl JsonSink<'_> {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.buf.extend_from_slice(bytes);
        Ok(())
    }

    /// Hand the buffer to `out` once it is large (or at the end: `force`).
    fn flush_buf(&mut self, force: bool) -> io::Result<()> {
        if force || self.buf.len() >= 1 << 16 {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn separator(&mut self) -> io::Result<()> {
        if self.launches > 0 {
            self.put(b",")?;
        }
        self.launches += 1;
        Ok(())
    }

    fn string(&mut self, s: &str) -> io::Result<()> {
        // Most cells need no escaping: write them as they are.
        if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
            self.put(b"\"")?;
            self.put(s.as_bytes())?;
            self.put(b"\"")
        } else {
            serde_json::to_writer(&mut self.buf, s).map_err(io::Error::from)
        }
    }

    fn number(&mut self, v: f64) -> io::Result<()> {
        // Integral values below 1e15 are what serde_json prints as `<digits>.0`: written with
        // itoa, which is faster. (Integral: the value survives the round trip through i64 bit for
        // bit; -0.0 does not.) Every other value is written by serde_json itself (`1e+16`,
        // `-1e-7`, `null` for a non-finite value), so the bytes are the same whatever its version.
        #[expect(
            clippy::cast_possible_truncation,
            reason = "checked to be integral and below 1e15"
        )]
        let i = v as i64;
        if v.abs() < 1e15 && (i as f64).to_bits() == v.to_bits() {
            let mut b = itoa::Buffer::new();
            self.put(b.format(i).as_bytes())?;
            self.put(b".0")
        } else {
            serde_json::to_writer(&mut self.buf, &v).map_err(io::Error::from)
        }
    }
}

impl Sink for JsonSink<'_> {
    fn start(&mut self, shape: CsvShape) -> io::Result<()> {
        self.put(b"{\"shape\":")?;
        serde_json::to_writer(&mut self.buf, &shape).map_err(io::Error::from)?;
        self.put(b",\"launches\":[")
    }

    fn raw(&mut self, row: &RawRow<'_>) -> io::Result<()> {
        self.separator()?;
        self.put(b"{\"id\":")?;
        let mut ids = itoa::Buffer::new();
        self.put(ids.format(row.id).as_bytes())?;
        self.put(b",\"kernel\":")?;
        self.string(row.field(row.page.kernel_col))?;
        let mut first = true;
        for (name, value) in row.attributes() {
            self.put(if first { b",\"attributes\":{" } else { b"," })?;
            first = false;
            self.string(name)?;
            self.put(b":")?;
            self.string(value)?;
        }
        if !first {
            self.put(b"}")?;
        }
        self.put(b",\"metrics\":{")?;
        for (k, (col, value)) in row.values.iter().enumerate() {
            let c = &row.page.metrics[*col];
            if k > 0 {
                self.put(b",")?;
            }
            self.put(&c.json_key)?;
            match value {
                Val::Num(v) => self.number(*v)?,
                Val::List(r) => {
                    self.put(b"[")?;
                    for (i, v) in row.lists[r.clone()].iter().enumerate() {
                        if i > 0 {
                            self.put(b",")?;
                        }
                        self.number(*v)?;
                    }
                    self.put(b"]")?;
                }
                Val::Text(i) => self.string(row.field(*i))?,
            }
            self.put(&c.json_unit)?;
        }
        self.put(b"}}")?;
        self.flush_buf(false)
    }

    fn launch(&mut self, launch: Launch) -> io::Result<()> {
        self.separator()?;
        serde_json::to_writer(&mut self.buf, &launch).map_err(io::Error::from)?;
        self.flush_buf(false)
    }
}

/// The whole parse, into a sink (of the `wanted` metrics only, when given). Returns the shape and
/// ncu's warnings.
fn run(
    text: &str,
    sink: &mut dyn Sink,
    wanted: Option<&BTreeSet<String>>,
) -> Result<(CsvShape, Vec<String>), JsonError> {
    // `contains('\n')` stops at the first line end: free on any file with one.
    if !text.contains('\n') && text.contains('\r') {
        return Err(ParseError::new(
            "the file's lines end with a carriage return only (CR, the old Mac line ending), so \
             it reads as one single line; ncu writes LF (or CRLF) line endings",
        )
        .hint(
            "use the file as ncu wrote it, or convert its line endings: `tr '\\r' '\\n' < FILE > \
             FIXED.csv`",
        )
        .into());
    }
    let scan = log::scan(text);
    if !scan.errors.is_empty() {
        return Err(failure(&scan).into());
    }
    let Some((offset, lines_before)) = locate_table(text) else {
        if scan.no_kernels {
            return Err(failure(&scan).into());
        }
        return Err(no_table(text).into());
    };
    let body = &text[offset..];
    if body.starts_with('\u{feff}') {
        return Err(bom_error(lines_before + 1).into());
    }
    if let Some(e) = second_table(text) {
        return Err(e.into());
    }
    // The whole table is checked before any value is read. A raw page (the large shape) is
    // checked cell by cell instead, as it streams: a number cell that shows the locale fails there.
    let raw_page = !body.lines().next().is_some_and(|h| h.contains("\"Metric Name\""));
    if !raw_page && let Some(e) = locale_evidence(body.as_bytes(), lines_before) {
        return Err(e.into());
    }
    let mut table = Table::new(body, lines_before);
    let Some(header) = table.next_record()? else {
        return Err(ParseError::new("no ncu csv table found").into());
    };
    // The names borrow one copy of the header record: no allocation per column.
    let header_record = header.clone();
    let header: Vec<&str> = (0..header_record.len())
        .map(|i| cell_str(&header_record, i))
        .collect();
    if let Some(e) = nul_in_table(body, lines_before, &header) {
        return Err(e.into());
    }
    let has = |name: &str| header.contains(&name);
    let shape = if !has("ID") && has("Metric Name") && has("Average") {
        CsvShape::Summary
    } else if has("Metric Name") && has("Metric Value") {
        CsvShape::Details
    } else if has("Address") && has("Source") {
        return Err(ParseError::at(
            table.line(),
            "this is ncu's source page (`--page source`): it holds per-instruction counters, not \
             launches",
        )
        .hint("export the raw page: `ncu --import REPORT --csv --page raw --print-units base`")
        .into());
    } else {
        CsvShape::Raw
    };
    sink.start(shape)?;
    let launches = match shape {
        CsvShape::Raw => parse_raw(&header, &mut table, sink, wanted)?,
        CsvShape::Details => emit(parse_details(&header, &mut table)?, sink)?,
        CsvShape::Summary => emit(parse_summary(&header, &mut table)?, sink)?,
    };
    if launches == 0 && scan.no_kernels {
        return Err(failure(&scan).into());
    }
    Ok((shape, scan.warnings))
}

fn emit(launches: Vec<Launch>, sink: &mut dyn Sink) -> io::Result<usize> {
    let n = launches.len();
    for l in launches {
        sink.launch(l)?;
    }
    Ok(n)
}

mod columns;
mod details;
mod input;
mod raw;
mod summary;
mod table;

use self::details::*;
use self::input::*;
use self::raw::*;
use self::summary::*;
use self::table::*;

pub use self::columns::is_attribute;

#[cfg(test)]
#[expect(
    clippy::float_cmp,
    reason = "the expected values are exactly representable and parse exactly"
)]
mod tests;
