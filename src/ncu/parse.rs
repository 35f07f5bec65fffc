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
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::{self, Write};

use crate::foundation::failure::FailureKind;
use crate::foundation::units::{self, Normalised};
use crate::measured::samples::{CsvShape, Launch, Measured, MetricValue, ParsedOutput};
use crate::ncu::log;

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
    // A file read as text keeps its byte-order mark; `decode` drops it, and so does this.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut sink = Collect::default();
    let (shape, warnings) = run(text, &mut sink).map_err(|e| match e {
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
    let (_, warnings) = run(&text, &mut sink)?;
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

#[derive(Default)]
struct Collect {
    launches: Vec<Launch>,
}

impl Sink for Collect {
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

    fn launch(&mut self, launch: Launch) -> io::Result<()> {
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

/// The whole parse, into a sink. Returns the shape and ncu's warnings.
fn run(text: &str, sink: &mut dyn Sink) -> Result<(CsvShape, Vec<String>), JsonError> {
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
    let header: Vec<String> = (0..header.len())
        .map(|i| String::from_utf8_lossy(&header[i]).trim().to_owned())
        .collect();
    if let Some(e) = nul_in_table(body, lines_before, &header) {
        return Err(e.into());
    }
    let has = |name: &str| header.iter().any(|h| h == name);
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
        CsvShape::Raw => parse_raw(&header, &mut table, sink)?,
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

/// A byte-order mark (U+FEFF) at the start of line `line`, which is not the file's start.
fn bom_error(line: usize) -> ParseError {
    ParseError::at(
        line,
        "a byte-order mark (U+FEFF, bytes EF BB BF) starts this line, which is not the start of \
         the file: two files were joined, or an editor added it; the table's header is not \
         recognised behind it",
    )
    .hint(
        "remove the byte-order mark (e.g. `sed -i 's/\\xEF\\xBB\\xBF//' FILE`), or use the file \
         as ncu wrote it",
    )
}

/// A NUL byte in the table: ncu never writes one (kernel names are C++ names, values are
/// text), so the file is damaged. Named with its line and, when it is in a row, the row's kernel
/// (the NUL shown as `<U+0000>`): a launch must never vanish because its name no longer matches.
fn nul_in_table(body: &str, lines_before: usize, header: &[String]) -> Option<ParseError> {
    let at = memchr::memchr(0, body.as_bytes())?;
    let start = memchr::memrchr(b'\n', &body.as_bytes()[..at]).map_or(0, |p| p + 1);
    let end = memchr::memchr(b'\n', &body.as_bytes()[at..]).map_or(body.len(), |p| at + p);
    let line = lines_before + 1 + memchr::memchr_iter(b'\n', &body.as_bytes()[..start]).count();
    let mut record = csv::ByteRecord::new();
    let kernel = header
        .iter()
        .position(|h| h == "Kernel Name")
        .filter(|_| start > 0)
        .and_then(|col| {
            csv_reader(&body.as_bytes()[start..end])
                .read_byte_record(&mut record)
                .ok()?;
            record
                .get(col)
                .map(|k| String::from_utf8_lossy(k).trim().to_owned())
        });
    let in_kernel = kernel.as_deref().is_some_and(|k| k.contains('\0'));
    Some(ParseError {
        kernel: kernel.map(|k| k.replace('\0', "<U+0000>")),
        ..ParseError::at(
            line,
            format!(
                "a NUL byte{}: ncu never writes one, so the file is damaged (a launch whose name \
                 no longer matches the kernel filter would silently drop out)",
                if in_kernel {
                    " in the kernel name"
                } else {
                    " in the table"
                }
            ),
        )
        .hint("use the file as ncu wrote it; record it again if it was damaged")
    })
}

/// The error for an input without a table: say what the file is instead.
fn no_table(text: &str) -> ParseError {
    if let Some(at) = text.find('\u{feff}') {
        let line = 1 + memchr::memchr_iter(b'\n', &text.as_bytes()[..at]).count();
        return bom_error(line);
    }
    let lines = || text.lines().map(str::trim);
    if lines().any(|l| {
        l == "Launch Settings"
            || l == "Session Info"
            || l.starts_with("\"Launch Attribute\",")
            || l.starts_with("\"Session Attribute\",")
    }) {
        return ParseError::new(
            "this is ncu's session page (`--page session`): it describes the profiling session \
             (command line, host, devices), not the kernel launches",
        )
        .hint(
            "export the launches from the same report: `ncu --import REPORT --csv --page raw \
             --print-units base`",
        );
    }
    if lines().any(|l| l.starts_with("\"Address\",\"Source\"")) {
        return ParseError::new(
            "this is ncu's source page (`--page source`): it holds per-instruction counters, not \
             launches",
        )
        .hint("export the raw page: `ncu --import REPORT --csv --page raw --print-units base`");
    }
    let connected = lines()
        .filter(|l| l.starts_with("==PROF== Connected to process"))
        .count();
    let disconnected = lines()
        .filter(|l| l.starts_with("==PROF== Disconnected from process"))
        .count();
    if connected > disconnected {
        return ParseError::new(format!(
            "ncu did not finish: the output says `==PROF== Connected to process` {connected} \
             time(s) but `Disconnected` only {disconnected} time(s), and holds no table; the run \
             was aborted (killed, timed out, or the application crashed) before ncu wrote results"
        ))
        .hint(
            "rerun the profile; if it is killed again, raise the target's `timeout` or lower \
             `launch_count`, and check that the application ends on its own",
        );
    }
    if connected > 0 {
        return ParseError::new(
            "ncu ran but printed no table: the output has `==PROF==` lines only, so the results \
             went to a report file (`--export`) or ncu was run without `--csv`",
        )
        .hint(
            "export the results from the report: `ncu --import REPORT.ncu-rep --csv --page raw \
             --print-units base > run.csv`",
        );
    }
    ParseError::new(
        "no ncu csv table found: expected a header line starting with \"ID\" (raw or details \
         page) or \"Process ID\" (summary)",
    )
    .hint(
        "pass the file ncu wrote with `--csv` (e.g. `ncu --import run.ncu-rep --csv --page raw \
         --print-units base`), not the human-readable report",
    )
}

/// Byte offset of the header line and the number of lines before it.
///
/// In order of preference: the first header-like line after the last `==PROF== Disconnected`
/// (one-phase output prints the table there; application output before it may look like
/// anything), the first header-like line anywhere (an `--import` export, or a log where ncu
/// printed the table before disconnecting), the first table-like line after the last disconnect
/// (a header that starts with some other column).
fn locate_table(text: &str) -> Option<(usize, usize)> {
    let is_header = |l: &str| {
        l.starts_with("\"ID\",") || l.starts_with("\"Process ID\",") || l.starts_with("\"Domain\",")
    };
    let mut first_header = None;
    let mut header_after_disconnect = None;
    let mut after_disconnect: Option<(usize, usize)> = None;
    let mut offset = 0;
    // Only line starts matter: `"` or `=`. Skipping the rest of each line with memchr keeps this
    // cheap on a 44 MB page.
    let bytes = text.as_bytes();
    let mut index = 0;
    while offset < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[offset..]).map_or(bytes.len(), |e| offset + e + 1);
        let line = &text[offset..end];
        if is_header(line) {
            first_header.get_or_insert((offset, index));
            header_after_disconnect.get_or_insert((offset, index));
        } else if line.starts_with("==PROF== Disconnected from process") {
            after_disconnect = Some((end, index + 1));
            header_after_disconnect = None;
        }
        offset = end;
        index += 1;
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

/// The first sign, anywhere in the table, that ncu wrote it under a decimal-comma locale:
/// a number cell whose comma is not a thousands separator (`65,77`, `1.234,5`) or that has two
/// dots (`1.234.567`). Checked over the whole table before any value is read, so such a file is
/// refused as a whole and never read 1000x off.
fn locale_evidence(body: &[u8], lines_before: usize) -> Option<ParseError> {
    let mut checked_to = 0;
    let digits_at = |from: usize| body[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    for pos in memchr::memchr2_iter(b',', b'.', body) {
        if pos < checked_to
            || pos == 0
            || !body[pos - 1].is_ascii_digit()
            || !body.get(pos + 1).is_some_and(u8::is_ascii_digit)
        {
            continue;
        }
        // Cheap local tests first: a well-formed group (`1,234`) or decimal point (`12.5`) needs
        // no look at its cell.
        let after = digits_at(pos + 1);
        let next = body.get(pos + 1 + after).copied();
        if body[pos] == b',' {
            let before = body[..pos]
                .iter()
                .rev()
                .take(4)
                .take_while(|b| b.is_ascii_digit())
                .count();
            if after == 3 && before <= 3 {
                continue;
            }
        } else if next != Some(b'.') && next != Some(b',') {
            continue;
        }
        // The quoted cell around it.
        let start = memchr::memrchr(b'"', &body[..pos]).map_or(0, |s| s + 1);
        let end = memchr::memchr(b'"', &body[pos..]).map_or(body.len(), |e| pos + e);
        checked_to = end;
        let cell = &body[start..end];
        if shows_decimal_comma(cell) {
            let line = lines_before + 1 + memchr::memchr_iter(b'\n', &body[..pos]).count();
            return Some(locale_error(line, &String::from_utf8_lossy(cell)));
        }
    }
    None
}

fn locale_error(line: usize, cell: &str) -> ParseError {
    ParseError::at(
        line,
        format!(
            "`{cell}` is written with a decimal comma (or `.` thousands separators): ncu ran \
             under a locale such as de_DE, and then every number in the file is ambiguous \
             (`117.344` ns may mean 117344 ns); the whole file is refused"
        ),
    )
    .hint(
        "rerun ncu (or `ncu --import`) with `LC_ALL=C` in its environment; cgp-gate's own ncu \
         runs already do",
    )
}

/// `1.234.567` (optionally `,5` after it): `.` thousands separators. An IPv4 address (`Host Name`
/// is `127.0.0.1`, or a real address such as `192.168.100.200`) is not one.
fn dot_grouped(item: &[u8]) -> bool {
    let int = item.split(|&b| b == b',').next().unwrap_or_default();
    let int = int.strip_prefix(b"-").unwrap_or(int);
    let groups: Vec<&[u8]> = int.split(|&b| b == b'.').collect();
    if groups.len() < 3
        || !(1..=3).contains(&groups[0].len())
        || groups[1..].iter().any(|g| g.len() != 3)
        || groups.iter().any(|g| !g.iter().all(u8::is_ascii_digit))
    {
        return false;
    }
    let ipv4 = groups.len() == 4
        && int.len() == item.len()
        && groups.iter().all(|g| {
            std::str::from_utf8(g)
                .ok()
                .and_then(|t| t.parse::<u16>().ok())
                .is_some_and(|v| v <= 255)
        });
    !ipv4
}

/// A number cell written under a decimal-comma locale (`65,77`, `1.234.567`, `1.234,5`).
fn shows_decimal_comma(cell: &[u8]) -> bool {
    looks_numeric(cell)
        && cell
            .split(|&b| b == b';')
            .map(<[u8]>::trim_ascii)
            .any(|item| dot_grouped(item) || (item.contains(&b',') && !grouped(item)))
}

/// Digits, separators, signs and exponents only, with at least one digit.
fn looks_numeric(cell: &[u8]) -> bool {
    cell.iter().any(u8::is_ascii_digit)
        && cell.iter().all(|b| {
            matches!(
                b,
                b'0'..=b'9' | b',' | b'.' | b'-' | b'+' | b'e' | b'E' | b';' | b' '
            )
        })
}

/// The CSV reader over the table, with line numbers of the whole input.
///
/// The raw page's rows (the bulk of a large file) take a fast path ([`Table::next_row`]): a line
/// of quoted cells only, `"a","b",...,"z"`, with no quote inside a cell, is split where its
/// quotes are, which reads exactly what the CSV reader would read. The first line of any other
/// shape (unquoted or escaped cells, a cell across lines, the last line without a line end)
/// hands the rest of the input to the CSV reader.
struct Table<'a> {
    body: &'a str,
    reader: csv::Reader<&'a [u8]>,
    record: csv::ByteRecord,
    lines_before: usize,
    /// Where `reader`'s input starts in `body` (after the fast path handed over).
    base: usize,
    /// On the fast path: where in `body` the next line starts.
    fast: Option<usize>,
}

fn csv_reader(input: &[u8]) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        // ncu's messages (`==PROF==`, `==WARNING==`, `==ERROR==`) start with `=`; CSV rows
        // start with `"`.
        .comment(Some(b'='))
        .buffer_capacity(1 << 16)
        .from_reader(input)
}

/// Split `"a","b",...,"z"` into `record`; `false` (and `record` left undefined) for a line of any
/// other shape. No cell may hold a quote, so each cell is exactly the bytes between its quotes,
/// as the CSV reader reads it.
fn split_quoted(line: &[u8], record: &mut csv::ByteRecord) -> bool {
    record.clear();
    let n = line.len();
    if n < 2 || line[0] != b'"' || line[n - 1] != b'"' {
        return false;
    }
    // Cells are short: a plain loop beats a `memchr` call per cell.
    let (mut start, mut i) = (1, 1);
    while i < n {
        if line[i] != b'"' {
            i += 1;
            continue;
        }
        record.push_field(&line[start..i]);
        if i == n - 1 {
            return true;
        }
        // Between two cells: exactly `,"`.
        if line.get(i + 1..i + 3) != Some(&b",\""[..]) {
            return false;
        }
        i += 3;
        start = i;
    }
    false
}

impl<'a> Table<'a> {
    fn new(body: &'a str, lines_before: usize) -> Self {
        Self {
            body,
            reader: csv_reader(body.as_bytes()),
            record: csv::ByteRecord::new(),
            lines_before,
            base: 0,
            fast: None,
        }
    }

    /// From here on, read rows on the fast path (see [`Table`]).
    fn start_fast(&mut self) {
        self.fast = Some(self.base + usize::try_from(self.reader.position().byte()).unwrap_or(0));
    }

    /// The next row: on the fast path while lines have its shape, else from the CSV reader.
    fn next_row(&mut self) -> Result<Option<&csv::ByteRecord>, ParseError> {
        if let Some(mut at) = self.fast {
            let bytes = self.body.as_bytes();
            loop {
                if at >= bytes.len() {
                    self.fast = Some(at);
                    return Ok(None);
                }
                let Some(nl) = memchr::memchr(b'\n', &bytes[at..]) else {
                    break;
                };
                let whole = &bytes[at..at + nl];
                let line = whole.strip_suffix(b"\r").unwrap_or(whole);
                // Blank lines and ncu's `==` lines are skipped, as the CSV reader skips them.
                if line.is_empty() || line[0] == b'=' {
                    at += nl + 1;
                    continue;
                }
                if !split_quoted(line, &mut self.record) {
                    break;
                }
                let mut pos = csv::Position::new();
                pos.set_byte((at - self.base) as u64);
                self.record.set_position(Some(pos));
                self.fast = Some(at + nl + 1);
                return Ok(Some(&self.record));
            }
            // Any other shape: the CSV reader reads the rest.
            self.fast = None;
            self.base = at;
            self.reader = csv_reader(&bytes[at..]);
        }
        self.next_record()
    }

    /// The next record, or `None` at the end. A record that runs to the end of the input inside
    /// a quoted cell, or that is cut short at the end of the input, is an error naming its line.
    fn next_record(&mut self) -> Result<Option<&csv::ByteRecord>, ParseError> {
        match self.reader.read_byte_record(&mut self.record) {
            Ok(true) => Ok(Some(&self.record)),
            Ok(false) => Ok(None),
            Err(e) => {
                let line = e.position().map_or(self.lines_before + 1, |p| self.line_of(p));
                Err(ParseError::at(line, format!("malformed csv: {e}")))
            }
        }
    }

    /// Whether the reader has read all of the input (never on the fast path, which reads only
    /// lines with a line end).
    fn reader_at_end(&self) -> bool {
        self.fast.is_none() && self.base as u64 + self.reader.position().byte() >= self.body.len() as u64
    }

    /// Whether the current record is the last one and the input ends inside a quoted cell.
    fn ends_in_open_quote(&self) -> bool {
        let Some(p) = self.record.position() else {
            return false;
        };
        if !self.reader_at_end() {
            return false;
        }
        let start = (self.base + usize::try_from(p.byte()).unwrap_or(0)).min(self.body.len());
        memchr::memchr_iter(b'"', &self.body.as_bytes()[start..]).count() % 2 == 1
    }

    /// Whether the current record is the last one and the input does not end with a line end.
    fn at_unterminated_end(&self) -> bool {
        self.reader_at_end() && !self.body.ends_with('\n') && !self.body.ends_with('\r')
    }

    /// Refuse a last record that was cut off: inside a quoted cell, or (without a final line
    /// end) with fewer cells than a complete row. `complete`: the cell count of a whole row.
    fn check_cut_off(&self, complete: usize) -> Result<(), ParseError> {
        if self.ends_in_open_quote() {
            return Err(ParseError::at(
                self.line(),
                "the file ends inside a quoted cell that opens on this line: it was cut off or \
                 damaged (a partly written file must not be read as data)",
            )
            .hint("use the complete file; rerun ncu if the run was interrupted"));
        }
        if self.at_unterminated_end() && self.record.len() < complete {
            return Err(ParseError::at(
                self.line(),
                format!(
                    "the last row has {} of {complete} cells and no line end: the file was cut \
                     off mid-row",
                    self.record.len()
                ),
            )
            .hint("use the complete file; rerun ncu if the run was interrupted"));
        }
        Ok(())
    }

    /// 1-based line in the whole input. Counted from the byte offset because the reader's own
    /// line count leaves out the skipped `==` lines; only error paths pay for the count.
    fn line_of(&self, p: &csv::Position) -> usize {
        self.line_at(usize::try_from(p.byte()).map_or(usize::MAX, |b| self.base.saturating_add(b)))
    }

    /// Where in `body` the current record starts.
    fn record_start(&self) -> usize {
        self.record.position().map_or(0, |p| {
            self.base.saturating_add(usize::try_from(p.byte()).unwrap_or(0))
        })
    }

    /// [`Table::line_of`] for a byte offset in `body`.
    fn line_at(&self, offset: usize) -> usize {
        let bytes = self.body.as_bytes();
        let mut start = offset.min(bytes.len());
        // The reader reports the position where it started reading, which is before the skipped
        // `==` and blank lines that precede the record.
        while matches!(bytes.get(start), Some(b'=' | b'\n' | b'\r')) {
            match memchr::memchr(b'\n', &bytes[start..]) {
                Some(nl) => start += nl + 1,
                None => break,
            }
        }
        let newlines = memchr::memchr_iter(b'\n', &bytes[..start]).count();
        self.lines_before + newlines + 1
    }

    /// 1-based line of the current record in the whole input.
    fn line(&self) -> usize {
        self.record
            .position()
            .map_or(self.lines_before + 1, |p| self.line_of(p))
    }

    /// A cell, trimmed. The input is valid UTF-8 and the reader splits at ASCII bytes, so every
    /// cell is valid UTF-8 too.
    fn cell(&self, index: usize) -> &str {
        cell_str(&self.record, index)
    }
}

fn cell_str(record: &csv::ByteRecord, index: usize) -> &str {
    record
        .get(index)
        .and_then(|b| std::str::from_utf8(b).ok())
        .map_or("", str::trim)
}

/// A cell, classified. Lists go to a shared buffer (`Val::List` ranges) so a row allocates
/// nothing once the buffers have grown.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Num(f64),
    /// A range of the row's list buffer.
    List(std::ops::Range<usize>),
    /// The text of record field `i`.
    Text(usize),
}

/// Placeholders ncu (and people) write for a value that does not exist.
fn is_absent(t: &[u8]) -> bool {
    t.is_empty()
        || t.eq_ignore_ascii_case(b"n/a")
        || t.eq_ignore_ascii_case(b"no data")
        || t.eq_ignore_ascii_case(b"(no data)")
        || t.eq_ignore_ascii_case(b"not available")
        || t == b"-"
        || t == b"--"
}

/// Classify a cell (already trimmed). `numeric`: the cell has a unit, so text is an error.
/// `None`: absent.
fn read_cell(
    text: &[u8],
    field: usize,
    numeric: bool,
    lists: &mut Vec<f64>,
    scratch: &mut Vec<u8>,
) -> Result<Option<Val>, String> {
    if is_absent(text) {
        return Ok(None);
    }
    if let Some(v) = parse_number(text, scratch) {
        return Ok(Some(Val::Num(v)));
    }
    if is_non_finite(text) {
        return Ok(Some(Val::Text(field)));
    }
    // `--print-metric-instances values` of 2022-era ncu: `AGG (i1; i2; ...)`, or `(i1; i2)`
    // without an aggregate. The aggregate is the value (the instances are dropped); a list alone
    // is the list.
    if let Some(inner) = text.strip_suffix(b")")
        && let Some(open) = inner.iter().position(|&b| b == b'(')
    {
        let (agg, items) = (inner[..open].trim_ascii(), &inner[open + 1..]);
        let all_numbers = items
            .split(|&b| b == b';')
            .all(|i| parse_number(i.trim_ascii(), scratch).is_some());
        if all_numbers {
            if agg.is_empty() {
                return read_cell(items, field, numeric, lists, scratch);
            }
            if let Some(v) = parse_number(agg, scratch) {
                return Ok(Some(Val::Num(v)));
            }
        }
    }
    if text.contains(&b';') {
        let start = lists.len();
        for item in text.split(|&b| b == b';').map(<[u8]>::trim_ascii) {
            match parse_number(item, scratch) {
                Some(v) => lists.push(v),
                None if numeric => {
                    lists.truncate(start);
                    return Err(format!(
                        "instance value `{}` in `{}` is not a number",
                        String::from_utf8_lossy(item),
                        String::from_utf8_lossy(text)
                    ));
                }
                None => {
                    lists.truncate(start);
                    return Ok(Some(Val::Text(field)));
                }
            }
        }
        return Ok(Some(Val::List(start..lists.len())));
    }
    if numeric {
        return Err(format!(
            "`{}` is not a number (a value with a unit must be numeric; thousands separators are \
             accepted only as `1,234,567.8`)",
            String::from_utf8_lossy(text)
        ));
    }
    Ok(Some(Val::Text(field)))
}

fn is_non_finite(t: &[u8]) -> bool {
    let t = t.strip_prefix(b"-").or_else(|| t.strip_prefix(b"+")).unwrap_or(t);
    [&b"nan"[..], b"inf", b"infinity"]
        .iter()
        .any(|w| t.eq_ignore_ascii_case(w))
}

/// Exact powers of ten for the fast path.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
    1e19, 1e20, 1e21, 1e22,
];

/// A decimal number, with thousands separators only in a grouped-digits pattern.
///
/// Written by hand because it is the hot loop of the parser: `[sign] digits [, ddd]* [. digits]`
/// is read in one pass into an integer mantissa and divided by an exact power of ten, which is
/// correctly rounded (both operands are exact below 2^53), so it equals `str::parse`. Anything
/// else (exponents, long mantissas) goes through `str::parse` without the separators.
fn parse_number(s: &[u8], scratch: &mut Vec<u8>) -> Option<f64> {
    let (neg, digits) = match s.first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let n = digits.len();
    let mut mantissa: u64 = 0;
    let mut i = 0;
    // The integer part: its first group, then `,ddd` groups when it is grouped.
    while i < n && digits[i].is_ascii_digit() {
        mantissa = mantissa
            .wrapping_mul(10)
            .wrapping_add(u64::from(digits[i] - b'0'));
        i += 1;
    }
    let first = i;
    let mut int_digits = i;
    if i < n && digits[i] == b',' {
        // The first group has 1 to 3 digits, every later one exactly 3.
        if first == 0 || first > 3 {
            return None;
        }
        while i < n && digits[i] == b',' {
            let group = digits.get(i + 1..i + 4)?;
            if !group.iter().all(u8::is_ascii_digit) {
                return None;
            }
            for &d in group {
                mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
            }
            i += 4;
            int_digits += 3;
        }
        if i < n && digits[i].is_ascii_digit() {
            return None;
        }
    }
    let mut frac = 0usize;
    if i < n && digits[i] == b'.' {
        i += 1;
        while i < n && digits[i].is_ascii_digit() {
            mantissa = mantissa
                .wrapping_mul(10)
                .wrapping_add(u64::from(digits[i] - b'0'));
            i += 1;
            frac += 1;
        }
    }
    if i < n {
        return match digits[i] {
            b'e' | b'E' => slow_number(s, scratch),
            _ => None,
        };
    }
    let count = int_digits + frac;
    if count == 0 {
        return None;
    }
    if count <= 15 && frac < POW10.len() {
        // At most 15 digits: the mantissa is below 2^53, so both casts are exact, and one
        // division by an exact power of ten is correctly rounded. Integers skip the division.
        #[expect(clippy::cast_possible_wrap, reason = "below 2^53")]
        let m = mantissa as i64 as f64;
        let v = if frac == 0 { m } else { m / POW10[frac] };
        return Some(if neg { -v } else { v });
    }
    slow_number(s, scratch)
}

/// `str::parse` of the number without its grouping commas (validated by the caller or here).
fn slow_number(s: &[u8], scratch: &mut Vec<u8>) -> Option<f64> {
    if s.contains(&b',') && !grouped(s) {
        return None;
    }
    scratch.clear();
    scratch.extend(s.iter().filter(|&&b| b != b','));
    let v: f64 = std::str::from_utf8(scratch).ok()?.parse().ok()?;
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
fn parse_id(text: &[u8], scratch: &mut Vec<u8>) -> Option<u64> {
    let v = parse_number(text, scratch)?;
    // The cast is exact: a non-negative integer below 2^53.
    (v >= 0.0 && v.fract() == 0.0 && v < 9_007_199_254_740_992.0).then_some(v as u64)
}

/// A time value in nanoseconds printed with a 3-digit fraction (`117.344`): ncu prints base-unit
/// nanoseconds as integers (or with 2 decimals under `--print-fp`), so this is a `.` thousands
/// separator of a decimal-comma locale.
fn dotted_nanoseconds(unit_text: &str, cell: &[u8]) -> bool {
    matches!(unit_text, "ns" | "nsecond")
        && cell.iter().filter(|&&b| b == b'.').count() == 1
        && cell
            .iter()
            .position(|&b| b == b'.')
            .is_some_and(|d| cell.len() - d - 1 == 3 && cell[..d].iter().all(u8::is_ascii_digit))
        && cell.iter().all(|b| b.is_ascii_digit() || *b == b'.')
}

/// Normalised units, cached by spelling (details rows repeat a handful of units).
#[derive(Default)]
struct Units(HashMap<String, Normalised>);

impl Units {
    fn get(&mut self, unit: &str) -> &Normalised {
        if !self.0.contains_key(unit) {
            self.0.insert(unit.to_owned(), units::normalise_or_keep(unit));
        }
        &self.0[unit]
    }
}

/// Turn a cell into a measured value in base units; `None` when absent.
fn measure(
    text: &str,
    unit_text: &str,
    unit: &Normalised,
    scratch: &mut Vec<u8>,
) -> Result<Option<Measured>, String> {
    let mut lists = Vec::new();
    let cell = read_cell(text.as_bytes(), 0, !unit_text.is_empty(), &mut lists, scratch)?;
    let Some(cell) = cell else {
        return Ok(None);
    };
    let value = match cell {
        Val::Num(v) => MetricValue::Number(v * unit.factor),
        Val::List(r) => MetricValue::List(lists[r].iter().map(|v| v * unit.factor).collect()),
        Val::Text(_) => MetricValue::Text(text.to_owned()),
    };
    Ok(Some(Measured {
        value,
        unit: unit.base.clone(),
    }))
}

/// Index of a required column.
fn column(header: &[String], name: &str, shape: &str, line: usize) -> Result<usize, ParseError> {
    if let Some(e) = repeated_column(header, name, line) {
        return Err(e);
    }
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

/// The error for a header that names `name` in two columns (names are trimmed, so
/// `"gpu__time_duration.sum "` is the same column): which one holds the values is unknown, and
/// reading either would be a guess (the last one won, once: a doubled column became a +100%
/// regression).
fn repeated_column(header: &[String], name: &str, line: usize) -> Option<ParseError> {
    let mut at = header
        .iter()
        .enumerate()
        .filter(|(_, h)| *h == name)
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

/// Launch-identity columns: everything ncu prints about a launch that is not a metric. Every
/// other column of the raw page is a metric, with or without `__` in its name.
const ATTRIBUTES: &[&str] = &[
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

struct MetricCol {
    /// Field index in the record.
    index: usize,
    name: String,
    unit_text: String,
    /// The units row says `ns` or `nsecond` (see [`dotted_nanoseconds`]).
    nanoseconds: bool,
    unit: Normalised,
    /// `"name":{"value":`, written before each value.
    json_key: Vec<u8>,
    /// `,"unit":"base"}`, written after each value.
    json_unit: Vec<u8>,
}

/// The columns of a raw page, fixed by its header and units row.
struct RawPage {
    kernel_col: usize,
    /// Metric columns, sorted by name (the order of a `BTreeMap`), one per name.
    metrics: Vec<MetricCol>,
    /// Attribute columns (field index, name), sorted by name.
    attributes: Vec<(usize, String)>,
}

/// One raw-page launch: the reused record and the values read from it.
struct RawRow<'a> {
    page: &'a RawPage,
    record: &'a csv::ByteRecord,
    id: u64,
    /// (index into `page.metrics`, value), in `page.metrics` order; absent values left out.
    values: &'a [(usize, Val)],
    lists: &'a [f64],
}

impl RawRow<'_> {
    fn field(&self, i: usize) -> &str {
        cell_str(self.record, i)
    }

    fn attributes(&self) -> impl Iterator<Item = (&str, &str)> {
        self.page.attributes.iter().filter_map(|(i, name)| {
            let v = self.field(*i);
            (!is_absent(v.as_bytes())).then_some((name.as_str(), v))
        })
    }
}

fn json_key(name: &str) -> Vec<u8> {
    let mut k = serde_json::to_vec(name).unwrap_or_default();
    k.extend_from_slice(b":{\"value\":");
    k
}

fn parse_raw(header: &[String], table: &mut Table<'_>, sink: &mut dyn Sink) -> Result<usize, JsonError> {
    let header_line = table.line();
    let id_col = column(header, "ID", "raw page", header_line)?;
    let kernel_col = column(header, "Kernel Name", "raw page", header_line)?;
    if table.next_record()?.is_none() {
        return Ok(0);
    }
    let units_line = table.line();
    table.check_cut_off(header.len())?;
    if !table.cell(id_col).is_empty() {
        return Err(ParseError::at(
            units_line,
            "expected the raw page's units row after the header (its `ID` cell is empty), found \
             a launch",
        )
        .hint(
            "export the raw page with `--csv --page raw --print-units base`; cgp-gate needs the \
             units row to scale values",
        )
        .into());
    }
    let mut by_name: BTreeMap<&str, MetricCol> = BTreeMap::new();
    let mut attributes = Vec::new();
    for (index, name) in header.iter().enumerate() {
        if index == id_col || index == kernel_col || name.is_empty() {
            continue;
        }
        if is_attribute(name) {
            attributes.push((index, name.clone()));
        } else {
            let unit_text = table.cell(index).to_owned();
            let unit = units::normalise_or_keep(&unit_text);
            let mut json_unit = b",\"unit\":".to_vec();
            json_unit.extend(serde_json::to_vec(&unit.base).unwrap_or_default());
            json_unit.push(b'}');
            let earlier = by_name.insert(
                name,
                MetricCol {
                    index,
                    name: name.clone(),
                    nanoseconds: matches!(unit_text.as_str(), "ns" | "nsecond"),
                    unit_text,
                    unit,
                    json_key: json_key(name),
                    json_unit,
                },
            );
            // Found by the map, so a header of many columns is not compared with itself.
            if earlier.is_some()
                && let Some(e) = repeated_column(header, name, header_line)
            {
                return Err(e.into());
            }
        }
    }
    attributes.sort_by(|a, b| a.1.cmp(&b.1));
    attributes.dedup_by(|a, b| a.1 == b.1);
    let page = RawPage {
        kernel_col,
        metrics: by_name.into_values().collect(),
        attributes,
    };
    let mut values: Vec<(usize, Val)> = Vec::with_capacity(page.metrics.len());
    let mut lists: Vec<f64> = Vec::new();
    let mut scratch = Vec::new();
    let mut count = 0;
    // Launch ID -> where its row starts: a row repeated with the same ID would count twice.
    let mut seen: HashMap<u64, usize> = HashMap::new();
    table.start_fast();
    while table.next_row()?.is_some() {
        table.check_cut_off(header.len())?;
        // A raw page has one cell per column in every row. A longer row with non-empty cells past
        // the header (two rows run together, a stray separator) or a shorter one is damaged:
        // which cell is which is unknown.
        let extra = table
            .record
            .iter()
            .skip(header.len())
            .filter(|c| !c.trim_ascii().is_empty())
            .count();
        if extra > 0 {
            return Err(ParseError {
                kernel: Some(table.cell(kernel_col).to_owned()),
                ..ParseError::at(
                    table.line(),
                    format!(
                        "the row has {extra} more non-empty cell(s) than the header's {} columns; the file is damaged",
                        header.len()
                    ),
                )
            }
            .into());
        }
        if table.record.len() < header.len() {
            return Err(ParseError::at(
                table.line(),
                format!(
                    "this row has {} cells but the header has {}: the file is damaged (a raw \
                     page has one cell per column in every row)",
                    table.record.len(),
                    header.len()
                ),
            )
            .into());
        }
        let record = &table.record;
        let id = parse_id(record[id_col].trim_ascii(), &mut scratch).ok_or_else(|| ParseError {
            kernel: Some(table.cell(kernel_col).to_owned()),
            ..ParseError::at(
                table.line(),
                format!(
                    "launch `ID` `{}` is not a non-negative integer",
                    table.cell(id_col)
                ),
            )
        })?;
        if let Some(first) = seen.insert(id, table.record_start()) {
            return Err(ParseError {
                kernel: Some(table.cell(kernel_col).to_owned()),
                ..ParseError::at(
                    table.line(),
                    format!(
                        "launch `ID` {id} appears twice (first on line {}): ncu writes one row \
                         per launch, so the file is damaged (a repeated row would be counted twice)",
                        table.line_at(first)
                    ),
                )
                .hint("use the file as ncu wrote it; record it again")
            }
            .into());
        }
        values.clear();
        lists.clear();
        for (k, col) in page.metrics.iter().enumerate() {
            let text = record[col.index].trim_ascii();
            let cell = read_cell(
                text,
                col.index,
                !col.unit_text.is_empty(),
                &mut lists,
                &mut scratch,
            );
            let cell = match cell {
                Ok(Some(Val::Num(_))) if col.nanoseconds && dotted_nanoseconds(&col.unit_text, text) => {
                    return Err(locale_error(table.line(), &String::from_utf8_lossy(text)).into());
                }
                Ok(Some(Val::Text(_))) | Err(_) if shows_decimal_comma(text) => {
                    return Err(locale_error(table.line(), &String::from_utf8_lossy(text)).into());
                }
                Ok(c) => c,
                Err(message) => {
                    return Err(ParseError {
                        kernel: Some(table.cell(kernel_col).to_owned()),
                        metric: Some(col.name.clone()),
                        ..ParseError::at(
                            table.line(),
                            format!(
                                "{message} (unit `{}` from the units row, line {units_line})",
                                col.unit_text
                            ),
                        )
                    }
                    .into());
                }
            };
            let Some(mut v) = cell else { continue };
            if col.unit.factor.to_bits() != 1.0f64.to_bits() {
                match &mut v {
                    Val::Num(x) => *x *= col.unit.factor,
                    Val::List(r) => lists[r.clone()].iter_mut().for_each(|x| *x *= col.unit.factor),
                    Val::Text(_) => {}
                }
            }
            values.push((k, v));
        }
        sink.raw(&RawRow {
            page: &page,
            record: &table.record,
            id,
            values: &values,
            lists: &lists,
        })?;
        count += 1;
    }
    Ok(count)
}

/// Columns of the details page and the summary that are not launch attributes.
const NOT_ATTRIBUTES: &[&str] = &[
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
            (!is_absent(v.as_bytes())).then(|| (name.clone(), v.to_owned()))
        })
        .collect()
}

/// A metric row of the details page or summary, before its key is known.
struct Row {
    section: String,
    label: String,
    name: String,
    /// `[minimum]`/`[maximum]` for the summary's extra values, empty otherwise.
    suffix: &'static str,
    m: Measured,
}

/// A launch being assembled from rows.
struct Pending {
    launch: Launch,
    rows: Vec<Row>,
}

/// The key scheme (docs/parser.md): a name that occurs once in the launch keeps its bare key;
/// a repeated name gets its section, and its body item label when the section repeats it too.
/// Only counts decide, so the keys never depend on the order of rows or sections.
fn finish(p: Pending) -> Launch {
    let mut launch = p.launch;
    let mut by_name: HashMap<(&str, &str), usize> = HashMap::new();
    let mut by_section: HashMap<(&str, &str, &str), usize> = HashMap::new();
    let mut by_label: HashMap<(&str, &str, &str, &str), usize> = HashMap::new();
    for r in &p.rows {
        *by_name.entry((&r.name, r.suffix)).or_default() += 1;
        *by_section.entry((&r.name, &r.section, r.suffix)).or_default() += 1;
        *by_label
            .entry((&r.name, &r.section, &r.label, r.suffix))
            .or_default() += 1;
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    for r in &p.rows {
        let mut key = if by_name[&(r.name.as_str(), r.suffix)] == 1 {
            r.name.clone()
        } else if by_section[&(r.name.as_str(), r.section.as_str(), r.suffix)] == 1 {
            format!("{} [{}]", r.name, r.section)
        } else {
            format!("{} [{} / {}]", r.name, r.section, r.label)
        };
        if by_label[&(r.name.as_str(), r.section.as_str(), r.label.as_str(), r.suffix)] > 1 {
            // The same name, section and label more than once: number them in row order.
            let n = seen.entry(key.clone()).or_default();
            *n += 1;
            if *n > 1 {
                key = format!("{key} #{n}");
            }
        }
        if !r.suffix.is_empty() {
            key.push(' ');
            key.push_str(r.suffix);
        }
        launch.metrics.insert(key, r.m.clone());
    }
    launch
}

fn parse_details(header: &[String], table: &mut Table<'_>) -> Result<Vec<Launch>, ParseError> {
    let header_line = table.line();
    let col = |name| column(header, name, "details page", header_line);
    let (id_col, kernel_col) = (col("ID")?, col("Kernel Name")?);
    let (name_col, unit_col, value_col) = (col("Metric Name")?, col("Metric Unit")?, col("Metric Value")?);
    let section_col = header.iter().position(|h| h == "Section Name");
    let label_col = header.iter().position(|h| h == "Body Item Label");
    let attrs = attribute_columns(header);
    let mut launches: Vec<Pending> = Vec::new();
    let mut by_id: HashMap<u64, usize> = HashMap::new();
    let mut units = Units::default();
    let mut scratch = Vec::new();
    while table.next_record()?.is_some() {
        // A metric row ends at `Metric Value` (plus a trailing comma in newer versions).
        table.check_cut_off(value_col + 1)?;
        let metric = table.cell(name_col);
        if metric.is_empty() {
            // A rule row: `Rule Name`, `Rule Type`, `Rule Description`; no metric.
            continue;
        }
        let kernel = table.cell(kernel_col);
        if table.record.len() <= value_col {
            return Err(ParseError {
                kernel: Some(kernel.to_owned()),
                metric: Some(metric.to_owned()),
                ..ParseError::at(
                    table.line(),
                    format!(
                        "this row has {} cells and ends before `Metric Value` (column {}): the \
                         file is damaged",
                        table.record.len(),
                        value_col + 1
                    ),
                )
            });
        }
        let id = parse_id(table.cell(id_col).as_bytes(), &mut scratch).ok_or_else(|| ParseError {
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
                if i + 1 != launches.len() {
                    // ncu writes a launch's rows together: rows of an earlier launch after
                    // another launch's are a repeated block, which would count twice.
                    return Err(ParseError {
                        kernel: Some(kernel.to_owned()),
                        metric: Some(metric.to_owned()),
                        ..ParseError::at(
                            table.line(),
                            format!(
                                "launch `ID` {id} appears again after the rows of launch {}: \
                                 ncu writes each launch's rows together, so the file is damaged \
                                 (a repeated launch would be counted twice)",
                                launches[launches.len() - 1].launch.id
                            ),
                        )
                        .hint("use the file as ncu wrote it; record it again")
                    });
                }
                if launches[i].launch.kernel != kernel {
                    return Err(ParseError {
                        kernel: Some(kernel.to_owned()),
                        ..ParseError::at(
                            table.line(),
                            format!(
                                "launch `ID` {id} names kernel `{kernel}` but earlier rows name `{}`",
                                launches[i].launch.kernel
                            ),
                        )
                    });
                }
                i
            }
            Entry::Vacant(e) => {
                e.insert(launches.len());
                launches.push(Pending {
                    launch: Launch {
                        id,
                        kernel: kernel.to_owned(),
                        attributes: row_attributes(table, &attrs),
                        metrics: BTreeMap::new(),
                    },
                    rows: Vec::new(),
                });
                launches.len() - 1
            }
        };
        let unit_text = table.cell(unit_col);
        let value = table.cell(value_col);
        if dotted_nanoseconds(unit_text, value.as_bytes()) {
            return Err(locale_error(table.line(), value));
        }
        let m =
            measure(value, unit_text, units.get(unit_text), &mut scratch).map_err(|message| ParseError {
                kernel: Some(kernel.to_owned()),
                metric: Some(metric.to_owned()),
                ..ParseError::at(table.line(), message)
            })?;
        if let Some(m) = m {
            launches[index].rows.push(Row {
                section: section_col.map_or("", |c| table.cell(c)).to_owned(),
                label: label_col.map_or("", |c| table.cell(c)).to_owned(),
                name: metric.to_owned(),
                suffix: "",
                m,
            });
        }
    }
    Ok(launches.into_iter().map(finish).collect())
}

fn parse_summary(header: &[String], table: &mut Table<'_>) -> Result<Vec<Launch>, ParseError> {
    let header_line = table.line();
    let col = |name| column(header, name, "summary", header_line);
    let kernel_col = col("Kernel Name")?;
    let (name_col, unit_col) = (col("Metric Name")?, col("Metric Unit")?);
    let (min_col, max_col, avg_col) = (col("Minimum")?, col("Maximum")?, col("Average")?);
    let section_col = header.iter().position(|h| h == "Section Name");
    let label_col = header.iter().position(|h| h == "Body Item Label");
    let attrs = attribute_columns(header);
    // A launch shape is identified by every identity cell except the aggregate's count.
    let identity: Vec<usize> = std::iter::once(kernel_col)
        .chain(attrs.iter().filter(|(_, n)| n != "Invocations").map(|(i, _)| *i))
        .collect();
    let mut launches: Vec<Pending> = Vec::new();
    let mut by_identity: HashMap<Vec<String>, usize> = HashMap::new();
    let mut units = Units::default();
    let mut scratch = Vec::new();
    let complete = 1 + min_col.max(max_col).max(avg_col);
    while table.next_record()?.is_some() {
        table.check_cut_off(complete)?;
        let metric = table.cell(name_col);
        if metric.is_empty() {
            continue;
        }
        let kernel = table.cell(kernel_col);
        let key: Vec<String> = identity.iter().map(|&i| table.cell(i).to_owned()).collect();
        let next = launches.len();
        let index = *by_identity.entry(key).or_insert(next);
        if index == next {
            launches.push(Pending {
                launch: Launch {
                    id: next as u64,
                    kernel: kernel.to_owned(),
                    attributes: row_attributes(table, &attrs),
                    metrics: BTreeMap::new(),
                },
                rows: Vec::new(),
            });
        }
        let unit_text = table.cell(unit_col);
        let section = section_col.map_or("", |c| table.cell(c));
        let label = label_col.map_or("", |c| table.cell(c));
        for (c, suffix) in [(avg_col, ""), (min_col, "[minimum]"), (max_col, "[maximum]")] {
            let value = table.cell(c);
            if dotted_nanoseconds(unit_text, value.as_bytes()) {
                return Err(locale_error(table.line(), value));
            }
            let m = measure(value, unit_text, units.get(unit_text), &mut scratch).map_err(|message| {
                ParseError {
                    kernel: Some(kernel.to_owned()),
                    metric: Some(metric.to_owned()),
                    ..ParseError::at(table.line(), format!("{} {message}", header[c]))
                }
            })?;
            if let Some(m) = m {
                launches[index].rows.push(Row {
                    section: section.to_owned(),
                    label: label.to_owned(),
                    name: metric.to_owned(),
                    suffix,
                    m,
                });
            }
        }
    }
    Ok(launches.into_iter().map(finish).collect())
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
        let mut s = Vec::new();
        let mut n = |t: &str| parse_number(t.as_bytes(), &mut s);
        assert_eq!(n("1,759,000.00"), Some(1_759_000.0));
        assert_eq!(n("5,156,128"), Some(5_156_128.0));
        assert_eq!(n("-1,024.5"), Some(-1024.5));
        assert_eq!(n("406240"), Some(406_240.0));
        assert_eq!(n("1.5e3"), Some(1500.0));
        assert_eq!(n("0.06"), Some(0.06));
        assert_eq!(n("123456789012345678901"), Some(123_456_789_012_345_678_901.0));
        for bad in [
            "65,77", "1,2345", "1234,567", ",123", "1,,234", "1,234,", "0x3", "", "-", ".", "1.2.3", "1,23.4",
        ] {
            assert_eq!(n(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_fast_number_path_equals_str_parse() {
        let mut s = Vec::new();
        for t in [
            "0.1",
            "0.3",
            "123.456",
            "99999.99999",
            "1.7976931348623157",
            "2098360655.74",
            "3475409836.07",
            "0.000001",
            "123456789012345.6",
        ] {
            assert_eq!(parse_number(t.as_bytes(), &mut s), t.parse().ok(), "{t}");
        }
    }

    #[test]
    fn cells_missing_text_lists_and_errors() {
        let mut s = Vec::new();
        let mut lists = Vec::new();
        let mut cell = |t: &str, numeric| read_cell(t.as_bytes(), 9, numeric, &mut lists, &mut s);
        for absent in ["n/a", "N/A", "", "no data", "No Data", "-"] {
            assert_eq!(cell(absent, true), Ok(None), "{absent}");
        }
        assert_eq!(cell("CachePreferNone", false), Ok(Some(Val::Text(9))));
        assert_eq!(cell("nan", true), Ok(Some(Val::Text(9))));
        assert_eq!(cell("1,024.00; 924.00; 0.00", true), Ok(Some(Val::List(0..3))));
        let e = cell("65,77", true).unwrap_err();
        assert!(e.contains("`65,77` is not a number"), "{e}");
        let e = cell("1.0; x", true).unwrap_err();
        assert!(e.contains("instance value `x`"), "{e}");
        assert_eq!(cell("a; b", false), Ok(Some(Val::Text(9))));
        assert_eq!(lists, vec![1024.0, 924.0, 0.0]);
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
    fn details_name_repeated_in_another_section_is_qualified_in_both() {
        let text = format!(
            "{D3_HEADER}\n\
             {D3_PREFIX},\"A\",\"Threads\",\"thread\",\"10\",\n\
             {D3_PREFIX},\"B\",\"Threads\",\"thread\",\"20\",\n"
        );
        let l = &parse(&text).unwrap().launches[0];
        // Neither section owns the bare key: the key never depends on which section came first.
        assert!(!l.metrics.contains_key("Threads"));
        assert_eq!(num(l, "Threads [A]"), 10.0);
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
        let text = "\"ID\",\"Process ID\",\"Kernel Name\",\"Block Size\",\"dram__bytes_read.sum\",\"gpu__time_duration.sum\",\"inst_executed\",\"launch__func_cache_config\",\"sm__x.sum\"\n\
                    \"\",\"\",\"\",\"\",\"Kbyte\",\"usecond\",\"inst\",\"\",\"inst\"\n\
                    \"0\",\"9\",\"k\",\"(32, 1, 1)\",\"5,156.128\",\"28.448\",\"12\",\"CachePreferNone\",\"n/a\"\n\
                    \"1\",\"9\",\"k\",\"(32, 1, 1)\",\"1.5\",\"2\",\"13\",\"CachePreferNone\",\"no data\"\n";
        let p = parse(text).unwrap();
        assert_eq!(p.shape, CsvShape::Raw);
        let l = &p.launches[0];
        assert!((num(l, "dram__bytes_read.sum") - 5_156_128.0).abs() < 1e-6);
        assert_eq!(l.metrics["dram__bytes_read.sum"].unit, "byte");
        assert!((num(l, "gpu__time_duration.sum") - 28_448.0).abs() < 1e-6);
        assert!(!l.metrics.contains_key("sm__x.sum"), "n/a is absent");
        assert!(
            !p.launches[1].metrics.contains_key("sm__x.sum"),
            "no data is absent"
        );
        // A column without `__` is a metric unless it is a known launch attribute.
        assert_eq!(num(l, "inst_executed"), 12.0);
        assert_eq!(l.attributes.get("Process ID").map(String::as_str), Some("9"));
        assert_eq!(
            l.attributes.get("Block Size").map(String::as_str),
            Some("(32, 1, 1)")
        );
        assert!(!l.attributes.contains_key("ID") && !l.attributes.contains_key("Kernel Name"));
        assert_eq!(p.launches[1].id, 1);
    }

    #[test]
    fn streamed_numbers_are_the_bytes_serde_json_writes() {
        for v in [
            0.0,
            -0.0,
            1.0,
            -3.0,
            0.5,
            -1e-7,
            123_456_789.0,
            999_999_999_999_999.0,
            1e15,
            1e16,
            9_007_199_254_740_993.0,
            1.5e300,
            f64::NAN,
            f64::INFINITY,
        ] {
            let mut out = Vec::new();
            let mut sink = JsonSink {
                out: &mut out,
                buf: Vec::new(),
                launches: 0,
            };
            sink.number(v).unwrap();
            assert_eq!(
                String::from_utf8(sink.buf).unwrap(),
                serde_json::to_string(&v).unwrap(),
                "{v}"
            );
        }
    }

    #[test]
    fn the_fast_row_path_reads_what_the_csv_reader_reads() {
        let head = "\"ID\",\"Kernel Name\",\"Grid Size\",\"gpu__time_duration.sum\",\"inst_executed\"\r\n\
                    \"\",\"\",\"\",\"ns\",\"inst\"\r\n";
        // `==` and blank lines between rows; the last row has no line end (the CSV reader reads it).
        let rows = "\"1\",\"k(int, char *)\",\"(1, 2, 3)\",\"1,234\",\"5\"\r\n\
                    ==PROF== Profiling \"k\" - 1\n\
                    \n\
                    \"2\",\"k\",\"(1, 2, 3)\",\"\",\"n/a\"\r\n\
                    \"3\",\"k\",\"(1, 2, 3)\",\"7\",\"8\"";
        // Escaped quotes: the CSV reader reads from this row on.
        let forced = "\"0\",\"say \"\"hi\"\"\",\"(1, 1, 1)\",\"1\",\"1\"\r\n";
        let fast = parse(&format!("{head}{rows}")).unwrap();
        let slow = parse(&format!("{head}{forced}{rows}")).unwrap();
        assert_eq!(slow.launches[0].kernel, "say \"hi\"");
        assert_eq!(fast.launches.len(), 3);
        assert_eq!(fast.launches[..], slow.launches[1..]);
        assert_eq!(fast.launches[0].kernel, "k(int, char *)");
        assert_eq!(num(&fast.launches[0], "gpu__time_duration.sum"), 1234.0);
        // Errors name the same lines on both paths.
        let bad = |before: &str| {
            parse(&format!("{head}{before}\"9\",\"k\",\"(1, 1, 1)\",\"x\",\"1\"\n"))
                .unwrap_err()
                .line
        };
        assert_eq!(bad(""), Some(3));
        assert_eq!(bad("==PROF== x\n\n"), Some(5));
        assert_eq!(bad(forced), Some(4));
        assert_eq!(bad("\"0\",\"two\nlines\",\"(1, 1, 1)\",\"1\",\"1\"\n"), Some(5));
        // A file cut off after rows the fast path read.
        let row = "\"1\",\"k\",\"(1, 2, 3)\",\"1\",\"5\"\n";
        let e = parse(&format!("{head}{row}\"2\",\"k\",\"(1, 2")).unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(e.message.contains("ends inside a quoted cell"), "{e}");
        let e = parse(&format!("{head}{row}\"2\",\"k\"")).unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(e.message.contains("cut off mid-row"), "{e}");
    }

    #[test]
    fn a_raw_row_with_missing_cells_is_an_error() {
        let text = "\"ID\",\"Kernel Name\",\"a__b\",\"a__c\"\n\"\",\"\",\"ns\",\"ns\"\n\"0\",\"k\",\"1\"\n\"1\",\"k\",\"1\",\"2\"\n";
        let e = parse(text).unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("3 cells but the header has 4"), "{e}");
    }

    #[test]
    fn raw_page_without_units_row_is_an_error() {
        let text = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"0\",\"k\",\"5\"\n";
        let e = parse(text).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("units row"), "{e}");
    }

    #[test]
    fn an_unknown_unit_keeps_its_value_and_unit_as_written() {
        let text = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"x__y\"\n\"\",\"\",\"furlong\",\"%/register\"\n\"0\",\"k\",\"5\",\"0.5\"\n";
        let l = &parse(text).unwrap().launches[0];
        assert_eq!(num(l, "gpu__time_duration.sum"), 5.0);
        assert_eq!(l.metrics["gpu__time_duration.sum"].unit, "furlong");
        assert_eq!(l.metrics["x__y"].unit, "%/register");
    }

    #[test]
    fn malformed_number_and_bad_id() {
        let text =
            "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n\"0\",\"k\",\"65,77\"\n";
        let e = parse(text).unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(
            e.message.contains("`65,77` is written with a decimal comma"),
            "{e}"
        );
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
                let mut s = Vec::new();
                let text = format!("{}.{frac:02}", grouped_text(n));
                let want = format!("{n}.{frac:02}").parse::<f64>().unwrap();
                prop_assert_eq!(parse_number(text.as_bytes(), &mut s), Some(want));
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

    const RAW: &str = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum\"\n\
                       \"\",\"\",\"ns\",\"\"\n\
                       \"0\",\"k\",\"1000\",\"0\"\n\
                       \"1\",\"k\",\"1010\",\"0\"\n";

    #[test]
    fn a_repeated_metric_column_is_refused_even_with_a_trailing_space() {
        for name in ["gpu__time_duration.sum", "gpu__time_duration.sum "] {
            let text = RAW
                .replace("shared.sum\"\n", &format!("shared.sum\",\"{name}\"\n"))
                .replace("\"\"\n\"0\"", "\"\",\"ns\"\n\"0\"")
                .replace("\"0\"\n\"1\"", "\"0\",\"2000\"\n\"1\"")
                .replace("\"1010\",\"0\"", "\"1010\",\"0\",\"2020\"");
            let e = parse(&text).unwrap_err();
            assert_eq!(e.line, Some(1), "{e}");
            assert_eq!(e.metric.as_deref(), Some("gpu__time_duration.sum"), "{e}");
            assert!(e.message.contains("columns 3 and 5"), "{e}");
        }
        // A repeated required column of the details page too.
        let header = D3_HEADER.replace("\"Metric Value\"", "\"Metric Value\",\"Metric Value\"");
        let e = parse(&format!(
            "{header}\n{D3_PREFIX},\"A\",\"Duration\",\"ns\",\"1\",\"2\",\n"
        ))
        .unwrap_err();
        assert!(e.message.contains("`Metric Value` twice"), "{e}");
    }

    #[test]
    fn a_repeated_launch_is_refused_in_the_raw_and_details_pages() {
        let text = format!("{RAW}\"0\",\"k\",\"1000\",\"0\"\n");
        let e = parse(&text).unwrap_err();
        assert_eq!(e.line, Some(5));
        assert!(
            e.message.contains("`ID` 0 appears twice (first on line 3)"),
            "{e}"
        );
        // Details: a launch's rows again after another launch's.
        let one = D3_PREFIX.replace("\"0\",", "\"1\",");
        let text = format!(
            "{D3_HEADER}\n{D3_PREFIX},\"A\",\"Duration\",\"ns\",\"1\",\n{one},\"A\",\"Duration\",\"ns\",\"2\",\n{D3_PREFIX},\"A\",\"Duration\",\"ns\",\"1\",\n"
        );
        let e = parse(&text).unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(
            e.message.contains("appears again after the rows of launch 1"),
            "{e}"
        );
        // Rows of one launch together, over several sections, still merge.
        let text = format!(
            "{D3_HEADER}\n{D3_PREFIX},\"A\",\"Duration\",\"ns\",\"1\",\n{D3_PREFIX},\"B\",\"Other\",\"ns\",\"2\",\n"
        );
        assert_eq!(parse(&text).unwrap().launches.len(), 1);
    }

    #[test]
    fn a_nul_byte_in_the_table_is_an_error_naming_the_kernel() {
        let text = RAW.replacen("\"k\"", "\"k\0x\"", 1);
        let e = parse(&text).unwrap_err();
        assert_eq!(e.line, Some(3));
        assert_eq!(e.kernel.as_deref(), Some("k<U+0000>x"));
        assert!(e.message.contains("NUL byte in the kernel name"), "{e}");
        // The application's output before the table may hold anything.
        let text = format!("app\0output\n==PROF== Disconnected from process 1\n{RAW}");
        assert_eq!(parse(&text).unwrap().launches.len(), 2);
    }

    #[test]
    fn byte_order_marks_and_cr_only_line_ends_are_named() {
        // A leading BOM (a file read as text keeps it) is skipped, as `parse_bytes` does.
        assert_eq!(parse(&format!("\u{feff}{RAW}")).unwrap().launches.len(), 2);
        for text in [format!("\u{feff}\u{feff}{RAW}"), format!("x\n\u{feff}{RAW}")] {
            let e = parse(&text).unwrap_err();
            assert!(e.message.contains("byte-order mark"), "{e}");
        }
        let e = parse(&RAW.replace('\n', "\r")).unwrap_err();
        assert!(e.message.contains("carriage return only"), "{e}");
    }
}
