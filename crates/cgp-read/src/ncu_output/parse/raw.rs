//! The raw page (`--page raw`): one row per launch, attributes by name, every other column a
//! metric; streamed into the sink.

use super::columns::{column, repeated_column};
use super::table::{Table, Val, cell_str, is_absent};
use super::*;

pub(super) struct MetricCol {
    /// Field index in the record.
    pub(super) index: usize,
    pub(super) name: String,
    pub(super) unit_text: String,
    /// The units row says `ns` or `nsecond` (see [`dotted_nanoseconds`]).
    pub(super) nanoseconds: bool,
    pub(super) unit: Normalised,
    /// `"name":{"value":`, written before each value.
    pub(super) json_key: Vec<u8>,
    /// `,"unit":"base"}`, written after each value.
    pub(super) json_unit: Vec<u8>,
}

/// The columns of a raw page, fixed by its header and units row.
pub(super) struct RawPage {
    pub(super) kernel_col: usize,
    /// Metric columns, sorted by name (the order of a `BTreeMap`), one per name.
    pub(super) metrics: Vec<MetricCol>,
    /// Attribute columns (field index, name), sorted by name.
    pub(super) attributes: Vec<(usize, String)>,
    /// Metric columns not wanted ([`parse_only`]), as (field index, the units row says `ns`):
    /// not read, only checked for the locale.
    pub(super) skipped: Vec<(usize, bool)>,
}

/// One raw-page launch: the reused record and the values read from it.
pub(super) struct RawRow<'a> {
    pub(super) page: &'a RawPage,
    pub(super) record: &'a csv::ByteRecord,
    pub(super) id: u64,
    /// (index into `page.metrics`, value), in `page.metrics` order; absent values left out.
    pub(super) values: &'a [(usize, Val)],
    pub(super) lists: &'a [f64],
}

impl RawRow<'_> {
    pub(super) fn field(&self, i: usize) -> &str {
        cell_str(self.record, i)
    }

    pub(super) fn attributes(&self) -> impl Iterator<Item = (&str, &str)> {
        self.page.attributes.iter().filter_map(|(i, name)| {
            let v = self.field(*i);
            (!is_absent(v.as_bytes())).then_some((name.as_str(), v))
        })
    }
}

pub(super) fn json_key(name: &str) -> Vec<u8> {
    let mut k = serde_json::to_vec(name).unwrap_or_default();
    k.extend_from_slice(b":{\"value\":");
    k
}

pub(super) fn parse_raw(
    header: &[&str],
    table: &mut Table<'_>,
    sink: &mut dyn Sink,
    wanted: Option<&BTreeSet<String>>,
) -> Result<usize, JsonError> {
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
    let page = raw_page(header, table, id_col, kernel_col, header_line, wanted)?;
    let mut values: Vec<(usize, Val)> = Vec::with_capacity(page.metrics.len());
    let mut lists: Vec<f64> = Vec::new();
    let mut scratch = Vec::new();
    let mut count = 0;
    // Launch ID -> where its row starts: a row repeated with the same ID would count twice.
    let mut seen: HashMap<u64, usize> = HashMap::new();
    table.start_fast();
    while table.next_row()?.is_some() {
        table.check_cut_off(header.len())?;
        row_shape(table, header.len(), kernel_col)?;
        let id = launch_id(table, id_col, kernel_col, &mut seen, &mut scratch)?;
        let record = &table.record;
        values.clear();
        lists.clear();
        for &(index, nanoseconds) in &page.skipped {
            let text = record[index].trim_ascii();
            if shows_locale(nanoseconds, text) {
                return Err(locale_error(table.line(), &String::from_utf8_lossy(text)).into());
            }
        }
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

/// A cell of a column that is not read shows a decimal-comma locale: what the reading of its
/// value would find (a nanosecond value with a 3-digit fraction, a comma that does not group
/// thousands, `.`-grouped digits), tested only on cells with a comma or a dot.
fn shows_locale(nanoseconds: bool, text: &[u8]) -> bool {
    let Some(first) = memchr::memchr2(b',', b'.', text) else {
        return false;
    };
    (nanoseconds && dotted_nanoseconds("ns", text))
        || ((text[first] == b',' || memchr::memchr2(b',', b'.', &text[first + 1..]).is_some())
            && shows_decimal_comma(text))
}

/// A raw page has one cell per column in every row. A longer row with non-empty cells past the
/// header (two rows run together, a stray separator) or a shorter one is damaged: which cell is
/// which is unknown.
fn row_shape(table: &Table<'_>, columns: usize, kernel_col: usize) -> Result<(), ParseError> {
    let extra = table
        .record
        .iter()
        .skip(columns)
        .filter(|c| !c.trim_ascii().is_empty())
        .count();
    if extra > 0 {
        return Err(ParseError {
            kernel: Some(table.cell(kernel_col).to_owned()),
            ..ParseError::at(
                table.line(),
                format!(
                    "the row has {extra} more non-empty cell(s) than the header's {columns} columns; the file is damaged"
                ),
            )
        });
    }
    if table.record.len() < columns {
        return Err(ParseError::at(
            table.line(),
            format!(
                "this row has {} cells but the header has {}: the file is damaged (a raw \
                 page has one cell per column in every row)",
                table.record.len(),
                columns
            ),
        ));
    }
    Ok(())
}

/// The launch `ID` of the current row; a repeated one is refused (the row would count twice).
fn launch_id(
    table: &Table<'_>,
    id_col: usize,
    kernel_col: usize,
    seen: &mut HashMap<u64, usize>,
    scratch: &mut Vec<u8>,
) -> Result<u64, ParseError> {
    let id = parse_id(table.record[id_col].trim_ascii(), scratch).ok_or_else(|| ParseError {
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
        });
    }
    Ok(id)
}

/// The columns of a raw page, from its header and its units row: metrics with their units,
/// launch attributes by name.
fn raw_page(
    header: &[&str],
    table: &Table<'_>,
    id_col: usize,
    kernel_col: usize,
    header_line: usize,
    wanted: Option<&BTreeSet<String>>,
) -> Result<RawPage, ParseError> {
    let mut by_name: BTreeMap<&str, MetricCol> = BTreeMap::new();
    let mut attributes = Vec::new();
    // Every metric column's name, for the repeat check.
    let mut names: Vec<&str> = Vec::with_capacity(header.len());
    let mut skipped = Vec::new();
    for (index, &name) in header.iter().enumerate() {
        if index == id_col || index == kernel_col || name.is_empty() {
            continue;
        }
        if is_attribute(name) {
            attributes.push((index, name.to_owned()));
        } else if wanted.is_some_and(|w| !w.contains(name)) {
            // Not read: no unit, no JSON pieces, only the position (and the repeat check).
            names.push(name);
            skipped.push((index, matches!(table.cell(index), "ns" | "nsecond")));
        } else {
            names.push(name);
            let unit_text = table.cell(index).to_owned();
            let unit = units::normalise_or_keep(&unit_text);
            let mut json_unit = b",\"unit\":".to_vec();
            json_unit.extend(serde_json::to_vec(&unit.base).unwrap_or_default());
            json_unit.push(b'}');
            by_name.insert(
                name,
                MetricCol {
                    index,
                    name: name.to_owned(),
                    nanoseconds: matches!(unit_text.as_str(), "ns" | "nsecond"),
                    unit_text,
                    unit,
                    json_key: json_key(name),
                    json_unit,
                },
            );
        }
    }
    // ncu writes the metric columns sorted, so this sort is one pass over them, cheaper than
    // hashing every name; only a header with a repeat pays for finding which one comes first.
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) {
        return Err(first_repeat(
            header,
            &names_of_metrics(header, id_col, kernel_col),
            header_line,
        ));
    }
    attributes.sort_by(|a, b| a.1.cmp(&b.1));
    attributes.dedup_by(|a, b| a.1 == b.1);
    Ok(RawPage {
        kernel_col,
        metrics: by_name.into_values().collect(),
        attributes,
        skipped,
    })
}

/// The metric columns of a header in their order: (field index, name).
fn names_of_metrics<'h>(header: &[&'h str], id_col: usize, kernel_col: usize) -> Vec<(usize, &'h str)> {
    header
        .iter()
        .enumerate()
        .filter(|&(i, name)| i != id_col && i != kernel_col && !name.is_empty() && !is_attribute(name))
        .map(|(i, name)| (i, *name))
        .collect()
}

/// The error for the first metric column (in header order) whose name an earlier one has; the
/// caller knows there is one.
fn first_repeat(header: &[&str], metrics: &[(usize, &str)], header_line: usize) -> ParseError {
    let mut seen = std::collections::HashSet::new();
    metrics
        .iter()
        .find(|(_, name)| !seen.insert(*name))
        .and_then(|(_, name)| repeated_column(header, name, header_line))
        .unwrap_or_else(|| ParseError::at(header_line, "the header names a column twice"))
}
