//! Aligned columns.

use std::io::{self, Write};

use unicode_width::UnicodeWidthStr;

/// Columns separated by two spaces; `right` lists right-aligned columns.
/// Rows may be shorter than the header; no trailing spaces are written.
/// Widths are display columns (`unicode-width`): a combining mark takes
/// none, a wide character two.
pub struct Table {
    header: Vec<String>,
    right: Vec<usize>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str], right: &[usize]) -> Self {
        Table {
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            right: right.to_vec(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn write(&self, out: &mut impl Write) -> io::Result<()> {
        self.stream(|| self.rows.iter().cloned(), out)
    }

    /// Writes the header and the rows `rows()` yields, calling it twice:
    /// once to measure the columns, once to write. The rows are never held
    /// together (a table of a million tensors' rows once took 450 MB).
    pub fn stream<I: Iterator<Item = Vec<String>>>(
        &self,
        rows: impl Fn() -> I,
        out: &mut impl Write,
    ) -> io::Result<()> {
        let mut widths: Vec<usize> = Vec::new();
        for row in std::iter::once(self.header.clone()).chain(rows()) {
            for (c, cell) in row.iter().enumerate() {
                match widths.get_mut(c) {
                    Some(width) => *width = (*width).max(cell.width()),
                    None => widths.push(cell.width()),
                }
            }
        }
        self.line(&self.header, &widths, out)?;
        for row in rows() {
            self.line(&row, &widths, out)?;
        }
        Ok(())
    }

    /// One row, its cells padded to `widths`; nothing for an empty row.
    fn line(&self, row: &[String], widths: &[usize], out: &mut impl Write) -> io::Result<()> {
        if row.is_empty() {
            return Ok(());
        }
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let width = widths.get(c).copied().unwrap_or(0);
            let pad = " ".repeat(width.saturating_sub(cell.width()));
            line.push_str("  ");
            if self.right.contains(&c) {
                line.push_str(&pad);
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&pad);
            }
        }
        writeln!(out, "{}", line.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns line up on screen: "café" spelled with a combining accent
    /// (5 chars, 4 columns) and a wide character (1 char, 2 columns) are
    /// padded by their display width, not their char count.
    #[test]
    fn table_pads_by_display_width() {
        let mut table = Table::new(&["NAME", "N"], &[1]);
        table.row(vec!["cafe\u{301}".into(), "1".into()]);
        table.row(vec!["caf\u{e9}".into(), "2".into()]);
        table.row(vec!["\u{4e2d}".into(), "3".into()]);
        let mut out = Vec::new();
        table.write(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "  NAME  N\n  cafe\u{301}  1\n  caf\u{e9}  2\n  \u{4e2d}    3\n"
        );
    }
}
