//! The CSV table under the parsers: a streaming reader with a fast path for quoted lines, cell
//! and number reading, units and column lookup by name.

use super::*;

/// The CSV reader over the table, with line numbers of the whole input.
///
/// Rows ncu writes (every row of a raw page, the header of every page) take a fast path
/// ([`Table::next_row`]): a line of quoted cells only, `"a","b",...,"z"`, with no quote inside a
/// cell, is split where its quotes are, which reads exactly what the CSV reader would read. The
/// first line of any other shape (unquoted or escaped cells, a cell across lines, the last line
/// without a line end) hands the rest of the input to the CSV reader, which is built only then:
/// a file that never needs it does not pay for its set-up.
pub(super) struct Table<'a> {
    pub(super) body: &'a str,
    /// The CSV reader over `body[base..]`, once the fast path handed over.
    pub(super) reader: Option<csv::Reader<&'a [u8]>>,
    pub(super) record: csv::ByteRecord,
    pub(super) lines_before: usize,
    /// Where `reader`'s input starts in `body` (after the fast path handed over).
    pub(super) base: usize,
    /// On the fast path: where in `body` the next line starts.
    pub(super) fast: Option<usize>,
}

pub(super) fn csv_reader(input: &[u8]) -> csv::Reader<&[u8]> {
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
pub(super) fn split_quoted(line: &[u8], record: &mut csv::ByteRecord) -> bool {
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
    pub(super) fn new(body: &'a str, lines_before: usize) -> Self {
        Self {
            body,
            reader: None,
            record: csv::ByteRecord::new(),
            lines_before,
            base: 0,
            fast: Some(0),
        }
    }

    /// From here on, read rows on the fast path (see [`Table`]), also after a hand-over.
    pub(super) fn start_fast(&mut self) {
        if let Some(reader) = self.reader.take() {
            self.fast = Some(self.base + usize::try_from(reader.position().byte()).unwrap_or(0));
        }
    }

    /// The next row: on the fast path while lines have its shape, else from the CSV reader.
    pub(super) fn next_row(&mut self) -> Result<Option<&csv::ByteRecord>, ParseError> {
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
            self.reader = Some(csv_reader(&bytes[at..]));
        }
        self.read_record()
    }

    /// The next record, or `None` at the end (the same as [`Table::next_row`]).
    pub(super) fn next_record(&mut self) -> Result<Option<&csv::ByteRecord>, ParseError> {
        self.next_row()
    }

    /// The next record from the CSV reader. A record that runs to the end of the input inside
    /// a quoted cell, or that is cut short at the end of the input, is an error naming its line.
    fn read_record(&mut self) -> Result<Option<&csv::ByteRecord>, ParseError> {
        let reader = self
            .reader
            .get_or_insert_with(|| csv_reader(&self.body.as_bytes()[self.base..]));
        match reader.read_byte_record(&mut self.record) {
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
    pub(super) fn reader_at_end(&self) -> bool {
        self.fast.is_none()
            && self
                .reader
                .as_ref()
                .is_some_and(|r| self.base as u64 + r.position().byte() >= self.body.len() as u64)
    }

    /// Whether the current record is the last one and the input ends inside a quoted cell.
    pub(super) fn ends_in_open_quote(&self) -> bool {
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
    pub(super) fn at_unterminated_end(&self) -> bool {
        self.reader_at_end() && !self.body.ends_with('\n') && !self.body.ends_with('\r')
    }

    /// Refuse a last record that was cut off: inside a quoted cell, or (without a final line
    /// end) with fewer cells than a complete row. `complete`: the cell count of a whole row.
    pub(super) fn check_cut_off(&self, complete: usize) -> Result<(), ParseError> {
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
    pub(super) fn line_of(&self, p: &csv::Position) -> usize {
        self.line_at(usize::try_from(p.byte()).map_or(usize::MAX, |b| self.base.saturating_add(b)))
    }

    /// Where in `body` the current record starts.
    pub(super) fn record_start(&self) -> usize {
        self.record.position().map_or(0, |p| {
            self.base.saturating_add(usize::try_from(p.byte()).unwrap_or(0))
        })
    }

    /// [`Table::line_of`] for a byte offset in `body`.
    pub(super) fn line_at(&self, offset: usize) -> usize {
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
    pub(super) fn line(&self) -> usize {
        self.record
            .position()
            .map_or(self.lines_before + 1, |p| self.line_of(p))
    }

    /// A cell, trimmed. The input is valid UTF-8 and the reader splits at ASCII bytes, so every
    /// cell is valid UTF-8 too.
    pub(super) fn cell(&self, index: usize) -> &str {
        cell_str(&self.record, index)
    }
}

pub(super) fn cell_str(record: &csv::ByteRecord, index: usize) -> &str {
    record
        .get(index)
        .and_then(|b| std::str::from_utf8(b).ok())
        .map_or("", str::trim)
}

/// A cell, classified. Lists go to a shared buffer (`Val::List` ranges) so a row allocates
/// nothing once the buffers have grown.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Val {
    Num(f64),
    /// A range of the row's list buffer.
    List(std::ops::Range<usize>),
    /// The text of record field `i`.
    Text(usize),
}

/// Placeholders ncu (and people) write for a value that does not exist.
pub(super) fn is_absent(t: &[u8]) -> bool {
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
pub(super) fn read_cell(
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

pub(super) fn is_non_finite(t: &[u8]) -> bool {
    let t = t.strip_prefix(b"-").or_else(|| t.strip_prefix(b"+")).unwrap_or(t);
    [&b"nan"[..], b"inf", b"infinity"]
        .iter()
        .any(|w| t.eq_ignore_ascii_case(w))
}

/// Exact powers of ten for the fast path.
pub(super) const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
    1e19, 1e20, 1e21, 1e22,
];

/// A decimal number, with thousands separators only in a grouped-digits pattern.
///
/// Written by hand because it is the hot loop of the parser: `[sign] digits [, ddd]* [. digits]`
/// is read in one pass into an integer mantissa and divided by an exact power of ten, which is
/// correctly rounded (both operands are exact below 2^53), so it equals `str::parse`. Anything
/// else (exponents, long mantissas) goes through `str::parse` without the separators.
pub(super) fn parse_number(s: &[u8], scratch: &mut Vec<u8>) -> Option<f64> {
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
pub(super) fn slow_number(s: &[u8], scratch: &mut Vec<u8>) -> Option<f64> {
    if s.contains(&b',') && !grouped(s) {
        return None;
    }
    scratch.clear();
    scratch.extend(s.iter().filter(|&&b| b != b','));
    let v: f64 = std::str::from_utf8(scratch).ok()?.parse().ok()?;
    v.is_finite().then_some(v)
}

/// `[sign] d{1,3} (,ddd)+ [rest without commas]`.
pub(super) fn grouped(b: &[u8]) -> bool {
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
pub(super) fn parse_id(text: &[u8], scratch: &mut Vec<u8>) -> Option<u64> {
    let v = parse_number(text, scratch)?;
    // The cast is exact: a non-negative integer below 2^53.
    (v >= 0.0 && v.fract() == 0.0 && v < 9_007_199_254_740_992.0).then_some(v as u64)
}

/// A time value in nanoseconds printed with a 3-digit fraction (`117.344`): ncu prints base-unit
/// nanoseconds as integers (or with 2 decimals under `--print-fp`), so this is a `.` thousands
/// separator of a decimal-comma locale.
pub(super) fn dotted_nanoseconds(unit_text: &str, cell: &[u8]) -> bool {
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
pub(super) struct Units(HashMap<String, Normalised>);

impl Units {
    pub(super) fn get(&mut self, unit: &str) -> &Normalised {
        if !self.0.contains_key(unit) {
            self.0.insert(unit.to_owned(), units::normalise_or_keep(unit));
        }
        &self.0[unit]
    }
}

/// Turn a cell into a measured value in base units; `None` when absent.
pub(super) fn measure(
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
