//! A plain-text table that fits a width: columns are shrunk (truncated or wrapped) and dropped
//! in an order the caller gives, so the most useful columns survive a narrow terminal.
//!
//! Written by hand: comfy-table and tabled fit by shrinking every column evenly; a gate's table
//! needs "drop `p` before wrapping the change", which is a short list of steps here. Widths count
//! `char`s; the names in these tables are ASCII or Latin text, not wide CJK glyphs.

/// How a column's text lines up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// What happens to a cell wider than its column.
#[derive(Debug, Clone, Copy)]
pub enum Overflow {
    /// Cut, marked with `…`.
    Truncate,
    /// Continued on the next lines, broken at spaces where possible.
    Wrap,
    /// Made to fit by a function of the text and the width (a kernel name loses its return type
    /// and namespaces, then its middle).
    Shorten(fn(&str, usize) -> String),
}

/// One column.
#[derive(Debug, Clone)]
pub struct Column {
    pub header: String,
    pub align: Align,
    pub overflow: Overflow,
}

impl Column {
    pub fn new(header: &str, align: Align, overflow: Overflow) -> Self {
        Self {
            header: header.to_owned(),
            align,
            overflow,
        }
    }
}

/// One step towards fitting, tried in order until the table fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Let column `.0` be at most `.1` characters wide.
    Shrink(usize, usize),
    /// Leave column `.0` out.
    Drop(usize),
    /// Leave columns `.0` and `.1` out together (a baseline is no use without its candidate).
    DropBoth(usize, usize),
}

/// Columns, rows of cells and the order in which to give up width.
#[derive(Debug, Clone)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<String>>,
    pub fit: Vec<Fit>,
}

/// Space between columns.
const GAP: usize = 2;

/// The layout chosen for a width: per column, its width or `None` when dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub widths: Vec<Option<usize>>,
}

impl Layout {
    /// Total width of a line.
    pub fn total(&self) -> usize {
        let shown: Vec<usize> = self.widths.iter().flatten().copied().collect();
        shown.iter().sum::<usize>() + GAP * shown.len().saturating_sub(1)
    }

    /// Indices of dropped columns.
    pub fn dropped(&self) -> Vec<usize> {
        (0..self.widths.len())
            .filter(|i| self.widths[*i].is_none())
            .collect()
    }
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

impl Table {
    /// The widest each column needs (header included).
    fn natural(&self) -> Vec<usize> {
        self.columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(i))
                    .map(|s| chars(s))
                    .chain(std::iter::once(chars(&c.header)))
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// The layout for `width` (`None`: as wide as the content). Steps apply in order until the
    /// table fits; when every step is spent it is as narrow as the steps allow.
    pub fn layout(&self, width: Option<usize>) -> Layout {
        let mut layout = Layout {
            widths: self.natural().into_iter().map(Some).collect(),
        };
        let Some(width) = width else {
            return layout;
        };
        for step in &self.fit {
            if layout.total() <= width {
                break;
            }
            match *step {
                Fit::Drop(i) => {
                    if let Some(w) = layout.widths.get_mut(i) {
                        *w = None;
                    }
                }
                Fit::DropBoth(i, j) => {
                    for k in [i, j] {
                        if let Some(w) = layout.widths.get_mut(k) {
                            *w = None;
                        }
                    }
                }
                Fit::Shrink(i, floor) => {
                    // Only as far as needed, never under the floor.
                    let excess = layout.total().saturating_sub(width);
                    if let Some(Some(w)) = layout.widths.get_mut(i) {
                        *w = (*w).saturating_sub(excess).max(floor.min(*w)).max(1);
                    }
                }
            }
        }
        // A later step (a column left out) may have freed more than was needed: give the room
        // back to the columns shrunk on the way, the last shrunk first.
        let natural = self.natural();
        for step in self.fit.iter().rev() {
            let Fit::Shrink(i, _) = *step else { continue };
            let spare = width.saturating_sub(layout.total());
            if spare == 0 {
                break;
            }
            if let (Some(Some(w)), Some(&n)) = (layout.widths.get_mut(i), natural.get(i)) {
                *w = n.min(*w + spare);
            }
        }
        layout
    }

    /// Render for `width`. `paint(row, column, text)` may add colour around a cell's visible
    /// text (row `None` is the header); padding is computed from the plain text.
    pub fn render(
        &self,
        width: Option<usize>,
        paint: &dyn Fn(Option<usize>, usize, &str) -> String,
    ) -> String {
        self.render_layout(&self.layout(width), paint)
    }

    /// Render with a layout chosen elsewhere: several tables (blocks of one listing) that share
    /// the layout of all their rows line up with each other.
    pub fn render_layout(
        &self,
        layout: &Layout,
        paint: &dyn Fn(Option<usize>, usize, &str) -> String,
    ) -> String {
        let layout = layout.clone();
        let mut out = String::new();
        let header: Vec<String> = self.columns.iter().map(|c| c.header.clone()).collect();
        self.render_row(&mut out, &layout, None, &header, paint);
        for (r, row) in self.rows.iter().enumerate() {
            self.render_row(&mut out, &layout, Some(r), row, paint);
        }
        out
    }

    fn render_row(
        &self,
        out: &mut String,
        layout: &Layout,
        row: Option<usize>,
        cells: &[String],
        paint: &dyn Fn(Option<usize>, usize, &str) -> String,
    ) {
        // Each shown cell as its lines at its width.
        let mut columns: Vec<(usize, usize, Vec<String>)> = Vec::new();
        for (i, c) in self.columns.iter().enumerate() {
            let Some(w) = layout.widths[i] else { continue };
            let text = cells.get(i).map_or("", String::as_str);
            let lines = match c.overflow {
                _ if chars(text) <= w => vec![text.to_owned()],
                Overflow::Truncate => vec![truncate(text, w)],
                Overflow::Wrap => wrap(text, w),
                Overflow::Shorten(f) => vec![truncate(&f(text, w), w)],
            };
            columns.push((i, w, lines));
        }
        let height = columns.iter().map(|c| c.2.len()).max().unwrap_or(1);
        for l in 0..height {
            let mut line = String::new();
            for (k, (i, w, lines)) in columns.iter().enumerate() {
                let text = lines.get(l).map_or("", String::as_str);
                let pad = w.saturating_sub(chars(text));
                let painted = if text.is_empty() {
                    String::new()
                } else {
                    paint(row, *i, text)
                };
                if k > 0 {
                    line.push_str(&" ".repeat(GAP));
                }
                match self.columns[*i].align {
                    Align::Left => {
                        line.push_str(&painted);
                        line.push_str(&" ".repeat(pad));
                    }
                    Align::Right => {
                        line.push_str(&" ".repeat(pad));
                        line.push_str(&painted);
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
}

/// Cut `text` to `w` characters, the last being `…`.
pub fn truncate(text: &str, w: usize) -> String {
    if chars(text) <= w {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(w.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// Break `text` into lines of at most `w` characters, at spaces where a word fits, else inside
/// the word.
pub fn wrap(text: &str, w: usize) -> Vec<String> {
    let w = w.max(1);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|x| !x.is_empty()) {
        let sep = usize::from(!line.is_empty());
        if chars(&line) + sep + chars(word) <= w {
            if sep == 1 {
                line.push(' ');
            }
            line.push_str(word);
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        let mut rest: Vec<char> = word.chars().collect();
        while rest.len() > w {
            lines.push(rest.drain(..w).collect());
        }
        line = rest.into_iter().collect();
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        Table {
            columns: vec![
                Column::new("name", Align::Left, Overflow::Truncate),
                Column::new("change", Align::Right, Overflow::Wrap),
                Column::new("p", Align::Right, Overflow::Truncate),
            ],
            rows: vec![
                vec![
                    "a_long_kernel_name".into(),
                    "+6.7% [+5.3%, +8.7%]".into(),
                    "0.001".into(),
                ],
                vec!["k".into(), "-0.42%".into(), "0.5".into()],
            ],
            fit: vec![Fit::Shrink(0, 8), Fit::Drop(2), Fit::Shrink(1, 6)],
        }
    }

    fn plain(_: Option<usize>, _: usize, s: &str) -> String {
        s.to_owned()
    }

    #[test]
    fn wide_enough_keeps_everything() {
        let t = table();
        assert_eq!(t.layout(None).total(), 18 + 2 + 20 + 2 + 5);
        assert_eq!(
            t.render(Some(80), &plain),
            "name                              change      p\n\
             a_long_kernel_name  +6.7% [+5.3%, +8.7%]  0.001\n\
             k                                 -0.42%    0.5\n"
        );
    }

    #[test]
    fn steps_apply_in_order_and_only_as_far_as_needed() {
        let t = table();
        // 47 wide; 40 needs 7 fewer: the name shrinks from 18 to 11.
        assert_eq!(t.layout(Some(40)).widths, vec![Some(11), Some(20), Some(5)]);
        // 30: the name stops at 8, then p goes.
        assert_eq!(t.layout(Some(30)).widths, vec![Some(8), Some(20), None]);
        // 20: the change wraps at 10.
        let l = t.layout(Some(20));
        assert_eq!(l.widths, vec![Some(8), Some(10), None]);
        assert_eq!(l.dropped(), vec![2]);
        assert_eq!(
            t.render(Some(20), &plain),
            "name          change\n\
             a_long_…       +6.7%\n\
             \x20            [+5.3%,\n\
             \x20             +8.7%]\n\
             k             -0.42%\n"
        );
    }

    #[test]
    fn colour_does_not_count_towards_widths() {
        let t = table();
        let red = |r: Option<usize>, c: usize, s: &str| {
            if r.is_some() && c == 2 {
                format!("\x1b[31m{s}\x1b[0m")
            } else {
                s.to_owned()
            }
        };
        let text = t.render(Some(80), &red);
        assert!(text.contains("  \x1b[31m0.001\x1b[0m\n"), "{text:?}");
        assert!(text.contains("    \x1b[31m0.5\x1b[0m\n"), "{text:?}");
    }

    #[test]
    fn wrap_breaks_at_spaces_then_inside_words() {
        assert_eq!(wrap("+6.7% [+5.3%, +8.7%]", 14), ["+6.7% [+5.3%,", "+8.7%]"]);
        assert_eq!(wrap("abcdefgh", 3), ["abc", "def", "gh"]);
        assert_eq!(wrap("", 3), [""]);
        assert_eq!(truncate("äöüäöü", 4), "äöü…");
    }
}
