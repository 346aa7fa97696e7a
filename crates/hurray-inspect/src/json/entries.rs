//! The object of a list of entries (`--head N`, `--column J`, `--row I`
//! with `--json`).

use std::borrow::Cow;
use std::io::{self, Write};

use hurray_reader::ElementType;
use serde::{Serialize, Serializer};

use crate::json::format::{write, Style};
use crate::json::header::JsonHeader;
use crate::report::entries::{Axis, Entries, Entry, Listed};
use crate::values::{json_real, Json};

#[derive(Serialize)]
struct JsonEntries<'a, 'data> {
    #[serde(flatten)]
    head: JsonEntriesHead<'a>,
    /// Written one by one as they are read (a column may be long).
    entries: JsonEntryList<'a, 'data>,
}

/// What precedes the entries.
#[derive(Serialize)]
struct JsonEntriesHead<'a> {
    #[serde(flatten)]
    header: JsonHeader<'a>,
    /// `column`, `row`, `storage`, `leaf` or `logical`.
    order: &'static str,
    /// Stored entries (sparse) or elements (dense) of the whole tensor.
    total: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    row: Option<u64>,
    /// `[start, end)` positions of the slice in the values buffer.
    #[serde(skip_serializing_if = "Option::is_none")]
    positions: Option<[u64; 2]>,
}

/// The entries, each read as it is written.
struct JsonEntryList<'a, 'data> {
    entries: &'a Listed<'data>,
    dtype: Option<ElementType>,
}

impl Serialize for JsonEntryList<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.entries.iter().map(|x| JsonEntry::new(x, self.dtype)))
    }
}

#[derive(Serialize)]
struct JsonEntry<'a> {
    index: Cow<'a, [u64]>,
    position: u64,
    value: Json,
    /// `--head` of a quantized tensor: the real value.
    #[serde(skip_serializing_if = "Option::is_none")]
    dequantized: Option<Json>,
}

impl<'a> JsonEntry<'a> {
    fn new(x: Cow<'a, Entry>, dtype: Option<ElementType>) -> Self {
        let (position, value, dequantized) = (x.position, x.value, x.dequantized);
        let index = match x {
            Cow::Borrowed(x) => Cow::Borrowed(x.index.as_slice()),
            Cow::Owned(x) => Cow::Owned(x.index),
        };
        JsonEntry {
            index,
            position,
            value: Json(value, dtype),
            dequantized: dequantized.map(json_real),
        }
    }
}

/// Writes `--head`, `--column` or `--row` as one JSON object. The entries
/// are written one by one as they are read (a slice may be long).
///
/// # Errors
/// Whatever `out` returns.
pub fn render(e: &Entries<'_>, out: &mut impl Write) -> io::Result<()> {
    let json = JsonEntries {
        head: JsonEntriesHead::new(e),
        entries: JsonEntryList {
            entries: &e.entries,
            dtype: e.header.dtype,
        },
    };
    write(out, &json, Style::Pretty)
}

impl<'a> JsonEntriesHead<'a> {
    fn new(e: &'a Entries<'_>) -> Self {
        let slice = |axis: Axis| e.slice.as_ref().filter(|s| s.axis == axis).map(|s| s.index);
        JsonEntriesHead {
            header: JsonHeader::new(&e.header),
            order: e.order.as_str(),
            total: e.total,
            column: slice(Axis::Column),
            row: slice(Axis::Row),
            positions: e.slice.as_ref().map(|s| [s.positions.start, s.positions.end]),
        }
    }
}

#[cfg(test)]
mod tests {
    use hurray_reader::{Layout, Value as V};

    use super::*;
    use crate::report::entries::{Order, Slice};
    use crate::report::header::Header;

    /// `render` writes the entries as it reads them; the bytes must be those
    /// serde_json's pretty printer gives the whole object: no entries, one,
    /// and entries whose value spans several lines (a complex number).
    #[test]
    fn streamed_entries_equal_the_pretty_printer() {
        #[derive(Serialize)]
        struct Whole<'a> {
            #[serde(flatten)]
            head: JsonEntriesHead<'a>,
            entries: Vec<JsonEntry<'a>>,
        }
        let header = |dtype| Header {
            name: "A",
            dtype: Some(dtype),
            layout: Layout::Csc,
            shape: vec![4, 5],
            nnz: Some(3),
            type_tag: 0,
        };
        let entry = |row, position, value| Entry {
            index: vec![row, 1],
            position,
            value,
            dequantized: None,
        };
        let cases = [
            (ElementType::Float32, vec![]),
            (ElementType::Float32, vec![entry(2, 0, V::Float(-0.5))]),
            (
                ElementType::Complex128,
                vec![
                    entry(0, 1, V::Complex { re: 1.0, im: -2.0 }),
                    entry(3, 2, V::Complex { re: f64::NAN, im: 0.0 }),
                ],
            ),
        ];
        for (dtype, entries) in cases {
            let e = Entries {
                header: header(dtype),
                order: Order::Column,
                total: 3,
                slice: Some(Slice {
                    axis: Axis::Column,
                    index: 1,
                    positions: 0..3,
                }),
                entries: Listed::Collected(entries.clone()),
            };
            let mut streamed = Vec::new();
            render(&e, &mut streamed).unwrap();
            let whole = Whole {
                head: JsonEntriesHead {
                    header: JsonHeader::new(&e.header),
                    order: "column",
                    total: 3,
                    column: Some(1),
                    row: None,
                    positions: Some([0, 3]),
                },
                entries: entries
                    .iter()
                    .map(|x| JsonEntry {
                        index: Cow::Borrowed(&x.index),
                        position: x.position,
                        value: Json(x.value, Some(dtype)),
                        dequantized: None,
                    })
                    .collect(),
            };
            let mut expected = Vec::new();
            write(&mut expected, &whole, Style::Pretty).unwrap();
            assert_eq!(
                String::from_utf8(streamed).unwrap(),
                String::from_utf8(expected).unwrap()
            );
        }
    }
}
