//! A list of entries as text (`--head N`, `--column J`, `--row I`).

use std::io::{self, Write};

use crate::report::entries::{Entries, Order};
use crate::text::parts::{capitalise, count_of, header_line, tuple};
use crate::values;

/// `--head`, `--column`, `--row`: the header line, what is listed, then one
/// line per entry: coordinates and value. CSC and CSR entries are grouped by
/// column or row.
///
/// # Errors
/// Whatever `out` returns.
pub fn render(e: &Entries<'_>, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{}", header_line(&e.header))?;
    let shown = e.entries.len();
    let (one, many) = if e.order == Order::Logical {
        ("element", "elements")
    } else {
        ("stored entry", "stored entries")
    };
    match &e.slice {
        Some(slice) => {
            let count = slice.positions.end.saturating_sub(slice.positions.start);
            let kind = capitalise(slice.axis.as_str());
            if count == 0 {
                writeln!(out, "{kind} {}: no stored entries", slice.index)?;
            } else {
                writeln!(
                    out,
                    "{kind} {}: {} (positions {}..{}):",
                    slice.index,
                    count_of(count, one, many),
                    slice.positions.start,
                    slice.positions.end
                )?;
            }
        }
        None if e.total == 0 => writeln!(out, "No {many}.")?,
        None => {
            let order = match e.order {
                Order::Column => "storage order, column by column",
                Order::Row => "storage order, row by row",
                Order::Storage => "storage order",
                Order::Leaf => "storage (leaf) order",
                Order::Logical => "logical row-major order",
            };
            writeln!(out, "First {shown} of {} ({order}):", count_of(e.total, one, many))?;
        }
    }
    let width = e
        .entries
        .widest_candidates()
        .map(|index| tuple(&index).len())
        .max()
        .unwrap_or(0);
    let group_axis = match (e.order, &e.slice) {
        (Order::Column, None) => Some((1, "column")),
        (Order::Row, None) => Some((0, "row")),
        _ => None,
    };
    let mut group: Option<u64> = None;
    for entry in e.entries.iter() {
        let mut indent = "  ";
        if let Some((axis, label)) = group_axis {
            let g = entry.index.get(axis).copied().unwrap_or(0);
            if group != Some(g) {
                writeln!(out, "  {label} {g}:")?;
                group = Some(g);
            }
            indent = "    ";
        }
        let dequantized = entry
            .dequantized
            .map(|x| format!("  (dequantized {})", values::human_real(x)))
            .unwrap_or_default();
        writeln!(
            out,
            "{indent}{:<width$}  {}{dequantized}",
            tuple(&entry.index),
            values::human(entry.value, e.header.dtype)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use hurray_reader::{ElementType, Layout};

    use super::*;
    use crate::report::entries::{Axis, Entry, Listed, Slice};
    use crate::report::header::Header;

    fn header<'a>(name: &'a str, layout: Layout, shape: Vec<u64>, nnz: Option<u64>) -> Header<'a> {
        Header {
            name,
            dtype: Some(ElementType::Float32),
            layout,
            shape,
            nnz,
            type_tag: 0x03,
        }
    }

    fn entry(index: Vec<u64>, position: u64, x: f64) -> Entry {
        Entry {
            index,
            position,
            value: hurray_reader::Value::Float(x),
            dequantized: None,
        }
    }

    fn text(write: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        write(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn entries_group_by_column_and_align() {
        let e = Entries {
            header: header("A", Layout::Csc, vec![12, 5], Some(5)),
            order: Order::Column,
            entries: Listed::Collected(vec![
                entry(vec![0, 0], 0, 1.0),
                entry(vec![10, 0], 1, 0.1),
                entry(vec![2, 3], 2, -2.5),
            ]),
            total: 5,
            slice: None,
        };
        assert_eq!(
            text(|o| render(&e, o)),
            "A: float32 csc [12, 5], nnz 5\n\
             First 3 of 5 stored entries (storage order, column by column):\n\
             \x20 column 0:\n\
             \x20   (0, 0)   1.0\n\
             \x20   (10, 0)  0.1\n\
             \x20 column 3:\n\
             \x20   (2, 3)   -2.5\n"
        );
    }

    #[test]
    fn a_slice_lists_its_positions() {
        let e = Entries {
            header: header("B", Layout::Csr, vec![2, 2], Some(3)),
            order: Order::Row,
            entries: Listed::Collected(vec![entry(vec![1, 0], 1, 4.0), entry(vec![1, 1], 2, 5.0)]),
            total: 3,
            slice: Some(Slice {
                axis: Axis::Row,
                index: 1,
                positions: 1..3,
            }),
        };
        assert_eq!(
            text(|o| render(&e, o)),
            "B: float32 csr [2, 2], nnz 3\nRow 1: 2 stored entries (positions 1..3):\n  (1, 0)  4.0\n  (1, 1)  5.0\n"
        );
    }
}
