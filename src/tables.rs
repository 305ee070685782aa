//! Tables for people (`claims list`, `check-sources`): columns padded by display width (a CJK
//! character or an emoji takes two terminal cells), the whole fitting [`WIDTH`] columns unless
//! `--wide`, long cells cut with "…". Cells are escaped by the caller
//! ([`cricket_announcer::text::escaped`]): text read from a store or a page never reaches the
//! terminal raw.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The width a table fits by default: a terminal of 100 columns.
pub(crate) const WIDTH: usize = 100;

/// Spaces between two columns.
const GAP: usize = 2;

/// A column: its header, whether it may be cut to fit, and its alignment.
pub(crate) struct Column {
    /// The header.
    pub header: &'static str,
    /// May be cut (with "…") to make the table fit; kept whole when false.
    pub cut: bool,
    /// The narrowest a cut leaves it.
    pub min: usize,
    /// Right-aligned (numbers).
    pub right: bool,
}

impl Column {
    /// A column kept whole, left-aligned.
    pub(crate) const fn fixed(header: &'static str) -> Column {
        Column {
            header,
            cut: false,
            min: 0,
            right: false,
        }
    }

    /// A column that may be cut down to `min` cells.
    pub(crate) const fn cut(header: &'static str, min: usize) -> Column {
        Column {
            header,
            cut: true,
            min,
            right: false,
        }
    }

    /// A right-aligned column kept whole (numbers).
    pub(crate) const fn number(header: &'static str) -> Column {
        Column {
            header,
            cut: false,
            min: 0,
            right: true,
        }
    }
}

/// The table as text, one line per row after the header, each line ending with `\n`. Unless
/// `wide`, the cuttable columns are narrowed, rightmost first, until the table fits [`WIDTH`]
/// (or each is at its minimum: the columns kept whole may then make it wider).
pub(crate) fn render(columns: &[Column], rows: &[Vec<String>], wide: bool) -> String {
    Stream::new(columns, &[], wide).page(rows)
}

/// A table printed a page of rows at a time (`claims list` over a large store): the header
/// with the first page, and every page with the column widths of the pages before it, grown
/// where its cells need more (so far as the table still fits, unless `wide`). A column's
/// width known before the first page (`claims list`: its longest match key) is given as a floor,
/// so that column lines up from the first row to the last.
pub(crate) struct Stream<'c> {
    columns: &'c [Column],
    /// Each column's width so far.
    widths: Vec<usize>,
    wide: bool,
    /// Whether the header was printed.
    started: bool,
}

impl<'c> Stream<'c> {
    /// A table of `columns`, each at least as wide as its `floor` (0 where not given).
    pub(crate) fn new(columns: &'c [Column], floor: &[usize], wide: bool) -> Stream<'c> {
        let widths = columns
            .iter()
            .enumerate()
            .map(|(i, c)| floor.get(i).copied().unwrap_or(0).max(c.header.width()))
            .collect();
        Stream {
            columns,
            widths,
            wide,
            started: false,
        }
    }

    /// The next `rows` as text (after the header, on the first call), as [`render`] prints
    /// them.
    pub(crate) fn page(&mut self, rows: &[Vec<String>]) -> String {
        let columns = self.columns;
        for (i, width) in self.widths.iter_mut().enumerate() {
            let longest = rows.iter().filter_map(|r| r.get(i)).map(|cell| cell.width()).max();
            *width = (*width).max(longest.unwrap_or(0));
        }
        let wide = self.wide;
        let widths = &mut self.widths;
        if !wide {
            let total = widths.iter().sum::<usize>() + GAP * widths.len().saturating_sub(1);
            let mut excess = total.saturating_sub(WIDTH);
            // The rightmost cuttable column first (details), the leftmost last (the key a reader
            // copies into the next command).
            for i in (0..columns.len()).rev().filter(|&i| columns[i].cut) {
                let floor = columns[i].min.max(columns[i].header.width());
                let step = widths[i].saturating_sub(floor).min(excess);
                widths[i] -= step;
                excess -= step;
            }
        }
        let mut out = String::new();
        let header: Vec<String> = columns.iter().map(|c| c.header.to_string()).collect();
        let header = (!self.started).then_some(&header);
        self.started = true;
        for row in header.into_iter().chain(rows) {
            out.push_str(&line(columns, widths, row));
        }
        out
    }
}

/// One row of a table as text, its cells padded (or cut) to `widths`, ending with `\n`.
fn line(columns: &[Column], widths: &[usize], row: &[String]) -> String {
    let mut line = String::new();
    for (i, (column, width)) in columns.iter().zip(widths).enumerate() {
        let cell = cut(row.get(i).map_or("", String::as_str), *width);
        let pad = width.saturating_sub(cell.width());
        if i > 0 {
            line.push_str(&" ".repeat(GAP));
        }
        if column.right {
            line.push_str(&" ".repeat(pad));
            line.push_str(&cell);
        } else {
            line.push_str(&cell);
            if i + 1 < columns.len() {
                line.push_str(&" ".repeat(pad));
            }
        }
    }
    let mut line = line.trim_end().to_string();
    line.push('\n');
    line
}

/// `text` cut to at most `width` display cells, ending with "…" when cut.
pub(crate) fn cut(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    if width > 0 {
        out.push('…');
    }
    out
}

/// `text` in lines of at most `width` display cells, broken at spaces (a word longer than a
/// line is cut into pieces).
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let sep = usize::from(!line.is_empty());
        if !line.is_empty() && line.width() + sep + word.width() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        for c in word.chars() {
            if line.width() + c.width().unwrap_or(0) > width {
                lines.push(std::mem::take(&mut line));
            }
            line.push(c);
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const COLUMNS: [Column; 3] = [Column::cut("KEY", 12), Column::number("N"), Column::cut("DETAIL", 10)];

    #[test]
    fn columns_are_padded_by_display_width_and_long_cells_cut_to_fit() {
        let rows = vec![
            vec!["日本-v-香港".to_string(), "3".to_string(), "ok".to_string()],
            vec!["a".repeat(70), "12".to_string(), "d".repeat(70)],
        ];
        let text = render(&COLUMNS, &rows, false);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.iter().all(|l| l.width() <= WIDTH), "{text}");
        // The number column is right-aligned under its header, whatever the key's characters.
        let n_end = |l: &str| l.find("  ok").or_else(|| l.find("  d")).unwrap();
        assert_eq!(lines[1][..n_end(lines[1])].width(), lines[2][..n_end(lines[2])].width());
        // The CJK key takes two cells per character: its row lines up with the others.
        let at = |l: &str| l[..l.find("  ").unwrap()].width();
        assert_eq!(at(lines[1]), "日本-v-香港".width());
        assert!(lines[2].contains('…'), "{text}");
        assert_eq!(lines[2].width(), WIDTH);
        let wide = render(&COLUMNS, &rows, true);
        assert!(wide.contains(&"a".repeat(70)) && wide.contains(&"d".repeat(70)));
    }

    #[test]
    fn a_long_text_wraps_at_spaces_within_the_width() {
        assert_eq!(
            wrap("could not connect to host", 12),
            ["could not", "connect to", "host"]
        );
        assert_eq!(wrap("abcdefgh", 3), ["abc", "def", "gh"]);
        assert!(wrap(&"w ".repeat(500), 98).iter().all(|l| l.width() <= 98));
    }

    #[test]
    fn a_cut_keeps_whole_characters_and_marks_the_cut() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("日本語", 4), "日…");
        assert_eq!(cut("abc", 3), "abc");
    }

    proptest! {
        /// No cell a store can hold (a 64 KiB owner, any characters) makes the table panic,
        /// and the default table fits.
        #[test]
        fn any_cells_render_without_panic_and_fit(
            key in ".{0,300}",
            n in 0u64..1_000_000,
            detail in ".{0,300}",
            long in 0usize..70_000,
        ) {
            let escape = |c: &str| cricket_announcer::text::escaped(c).into_owned();
            let row = vec![escape(&key), n.to_string(), format!("{}{}", escape(&detail), "x".repeat(long))];
            let text = render(&COLUMNS, std::slice::from_ref(&row), false);
            prop_assert!(text.lines().all(|l| l.width() <= WIDTH), "{}", text);
            let _ = render(&COLUMNS, &[row], true);
        }
    }
}
