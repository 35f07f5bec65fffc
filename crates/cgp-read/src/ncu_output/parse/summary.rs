//! The summary (`--print-summary`): one launch per distinct set of identity cells.

use super::columns::column;
use super::details::{Pending, Row, attribute_columns, row_attributes};
use super::input::locale_error;
use super::table::{Table, Units, dotted_nanoseconds, measure};
use super::*;

pub(super) fn parse_summary(header: &[&str], table: &mut Table<'_>) -> Result<Vec<Launch>, ParseError> {
    let header_line = table.line();
    let col = |name| column(header, name, "summary", header_line);
    let kernel_col = col("Kernel Name")?;
    let (name_col, unit_col) = (col("Metric Name")?, col("Metric Unit")?);
    let (min_col, max_col, avg_col) = (col("Minimum")?, col("Maximum")?, col("Average")?);
    let section_col = header.iter().position(|h| *h == "Section Name");
    let label_col = header.iter().position(|h| *h == "Body Item Label");
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
