//! The "why" of a row (docs/why.md) as the reports show it, built once from the decided row:
//! which row, its one-line reading, and the cells of the counters that changed. The console,
//! Markdown and HTML reporters render this one model, each in its own syntax and escaping; none
//! of them reads the counter diff itself.

use crate::outcome::view::RowView;

/// One row's why, ready to render.
pub(crate) struct WhyView<'a> {
    pub(crate) target: &'a str,
    pub(crate) size: &'a str,
    /// The row's metric, as the results name it (a reporter may shorten it).
    pub(crate) metric: &'a str,
    /// The one-line reading of docs/why.md.
    pub(crate) reading: &'a str,
    /// The counters that changed beyond their noise, largest relative change first.
    pub(crate) counters: Vec<CounterCells<'a>>,
}

/// The cells of one changed counter: counter, base, head, change.
pub(crate) struct CounterCells<'a> {
    pub(crate) counter: &'a str,
    pub(crate) base: String,
    pub(crate) head: String,
    pub(crate) change: String,
}

impl<'a> WhyView<'a> {
    /// The why of `r`, if it has one.
    pub(crate) fn of(r: &RowView<'a>) -> Option<Self> {
        let w = r.why?;
        Some(WhyView {
            target: &r.key.target,
            size: &r.key.size,
            metric: &r.key.metric,
            reading: &w.reading,
            counters: w
                .changed
                .iter()
                .map(|c| CounterCells {
                    counter: &c.metric,
                    base: crate::measured::why::number(c.baseline),
                    head: crate::measured::why::number(c.candidate),
                    change: crate::measured::why::change_text(c),
                })
                .collect(),
        })
    }

    /// `target[size]`, as every report names a row's size.
    pub(crate) fn subject(&self) -> String {
        crate::measured::samples::target_size(self.target, self.size)
    }
}
