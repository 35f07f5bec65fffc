//! The details page (ncu's default): one row per launch, section and metric; rows of one `ID`
//! merge into one launch.

use super::columns::{NOT_ATTRIBUTES, column};
use super::table::{Table, Units, is_absent};
use super::*;

pub(super) fn attribute_columns(header: &[&str]) -> Vec<(usize, String)> {
    header
        .iter()
        .enumerate()
        .filter(|(_, h)| !h.is_empty() && !NOT_ATTRIBUTES.contains(*h))
        .map(|(i, h)| (i, (*h).to_owned()))
        .collect()
}

pub(super) fn row_attributes(table: &Table<'_>, columns: &[(usize, String)]) -> BTreeMap<String, String> {
    columns
        .iter()
        .filter_map(|(i, name)| {
            let v = table.cell(*i);
            (!is_absent(v.as_bytes())).then(|| (name.clone(), v.to_owned()))
        })
        .collect()
}

/// A metric row of the details page or summary, before its key is known.
pub(super) struct Row {
    pub(super) section: String,
    pub(super) label: String,
    pub(super) name: String,
    /// `[minimum]`/`[maximum]` for the summary's extra values, empty otherwise.
    pub(super) suffix: &'static str,
    pub(super) m: Measured,
}

/// A launch being assembled from rows.
pub(super) struct Pending {
    pub(super) launch: Launch,
    pub(super) rows: Vec<Row>,
}

/// The key scheme (docs/parser.md): a name that occurs once in the launch keeps its bare key;
/// a repeated name gets its section, and its body item label when the section repeats it too.
/// Only counts decide, so the keys never depend on the order of rows or sections.
pub(super) fn finish(p: Pending) -> Launch {
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

pub(super) fn parse_details(header: &[&str], table: &mut Table<'_>) -> Result<Vec<Launch>, ParseError> {
    let header_line = table.line();
    let col = |name| column(header, name, "details page", header_line);
    let (id_col, kernel_col) = (col("ID")?, col("Kernel Name")?);
    let (name_col, unit_col, value_col) = (col("Metric Name")?, col("Metric Unit")?, col("Metric Value")?);
    let section_col = header.iter().position(|h| *h == "Section Name");
    let label_col = header.iter().position(|h| *h == "Body Item Label");
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
