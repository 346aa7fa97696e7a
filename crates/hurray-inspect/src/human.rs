//! The human-readable rendering: aligned tables, sizes like `1.2 KiB`, long
//! values truncated, names and strings escaped so control bytes in a file
//! cannot reach the terminal.

use std::io::{self, Write};

use hurray_reader::{EntryField, Error, KvValue, Layout};
use unicode_width::UnicodeWidthStr;

use crate::report::entries::{Entries, Order};
use crate::report::header::{dtype_name, verdict, Header};
use crate::report::lookup::Lookup;
use crate::report::summary::{PaddingCheck, Report, TensorInfo, TensorReport};
use crate::report::tensor::TensorDetail;
use crate::shown::{display_name, human_bytes, shape_text, truncate, NAME_MAX};
use crate::values;

/// Longest KV value shown, in characters.
const VALUE_MAX: usize = 72;
/// Array elements and bytes shown before `...`.
const ELEMENTS_SHOWN: usize = 16;

/// Writes the report of `file_name` as tables.
///
/// # Errors
/// Whatever `out` returns.
pub fn render(report: &Report<'_, '_>, file_name: &str, out: &mut impl Write) -> io::Result<()> {
    let (major, minor) = report.container_version;
    let flags = if report.flags.is_empty() {
        "none".to_owned()
    } else {
        report.flags.join(" | ")
    };
    writeln!(out, "File: {file_name}")?;
    let mut facts = Table::new(&[], &[]);
    facts.row(vec!["container_version".into(), format!("{major}.{minor}")]);
    facts.row(vec!["file_flags".into(), flags]);
    facts.row(vec![
        "data_buffer_alignment".into(),
        report.data_buffer_alignment.to_string(),
    ]);
    facts.row(vec!["tensors".into(), report.tensors.len().to_string()]);
    facts.row(vec!["kv entries".into(), report.kv.len().to_string()]);
    facts.write(out)?;

    if !report.kv.is_empty() {
        writeln!(out, "\nKV metadata ({}):", report.kv.len())?;
        let mut kv = Table::new(&["KEY", "TYPE", "VALUE"], &[]);
        for (key, value) in &report.kv {
            kv.row(vec![
                truncate(&key.escape_debug().to_string(), NAME_MAX).into_owned(),
                kv_type(*value),
                truncate(&kv_value(*value), VALUE_MAX).into_owned(),
            ]);
        }
        kv.write(out)?;
    }

    writeln!(out, "\nTensors ({}):", report.tensors.len())?;
    if !report.tensors.is_empty() {
        let table = Table::new(
            &[
                "NAME",
                "DTYPE",
                "LAYOUT",
                "SHAPE",
                "NNZ",
                "BUFFERS",
                "BYTES",
                "DATA OFFSET",
            ],
            &[4, 5, 6, 7],
        );
        // One row per tensor, built twice (to measure, to write), never held.
        table.stream(|| report.tensors.iter().map(|t| tensor_row(&t)), out)?;
    }

    match &report.padding {
        Some(padding) => validation(report, padding, out),
        None => unreadable(report, out),
    }
}

fn tensor_row(t: &TensorReport<'_>) -> Vec<String> {
    let name = display_name(t.name);
    let data_offset = t.data_offset.to_string();
    let Some(info) = &t.info else {
        let unknown = || "?".to_owned();
        return vec![
            name,
            unknown(),
            unknown(),
            unknown(),
            unknown(),
            unknown(),
            unknown(),
            data_offset,
        ];
    };
    let shape = info.shape.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    // Buffers not located (an unresolved tensor, an unknown layout): what
    // its descriptor says, but no buffer figures.
    let (buffers, bytes) = match &info.buffers {
        Some(buffers) => (buffers.len().to_string(), human_bytes(info.total_bytes())),
        None => ("?".to_owned(), "?".to_owned()),
    };
    vec![
        name,
        dtype_with_scheme(info),
        info.layout.to_string(),
        truncate(&format!("[{shape}]"), NAME_MAX).into_owned(),
        info.nnz.map(|n| n.to_string()).unwrap_or_default(),
        buffers,
        bytes,
        data_offset,
    ]
}

/// A verdict's word in the text output's validation table.
fn verdict_word(verdict: Option<bool>) -> &'static str {
    match verdict {
        Some(true) => "OK",
        Some(false) => "INVALID",
        None => "SKIPPED",
    }
}

/// The DTYPE of the summary table: the element type's name, and for a
/// quantized tensor its scheme, `int8 · per_tensor_affine`.
fn dtype_with_scheme(info: &TensorInfo) -> String {
    let dtype = dtype_name(info.element_type, info.type_tag);
    match &info.quantization {
        Some(scheme) => format!("{dtype} · {scheme}"),
        None => dtype,
    }
}

/// A tensor's row of the validation table: its name, its verdict
/// ([`verdict_word`]), and the error, why the
/// data was not checked (SKIPPED), or why there is none (a composite head).
fn verdict_row(name: String, error: Option<&Error>, layout: Option<Layout>, not_viewable: Option<&str>) -> Vec<String> {
    let verdict = verdict(error.is_some(), layout, not_viewable);
    let word = verdict_word(verdict).into();
    match (error, not_viewable, verdict) {
        (Some(e), _, _) => vec![name, word, e.to_string()],
        (None, Some(why), None) => vec![name, word, format!("(data not checked: {why})")],
        (None, Some(why), _) => vec![name, word, format!("({why})")],
        (None, None, _) => vec![name, word],
    }
}

/// With `--validate`: one line per tensor, warnings, then the padding check.
fn validation(report: &Report<'_, '_>, padding: &PaddingCheck, out: &mut impl Write) -> io::Result<()> {
    let mode = if report.strict { "strict" } else { "permissive" };
    writeln!(out, "\nValidation ({mode} mode):")?;
    let padding_row = || match padding {
        PaddingCheck::Ok => vec!["(padding)".into(), "OK".into()],
        PaddingCheck::Invalid(e) => vec!["(padding)".into(), "INVALID".into(), e.to_string()],
        PaddingCheck::Skipped(why) => vec!["(padding)".into(), "SKIPPED".into(), format!("({why})")],
    };
    let tensors = &report.tensors;
    let rows = || {
        (0..tensors.len())
            .flat_map(|position| {
                // Most rows are `NAME  OK`: no need to resolve the tensor again.
                let t = match tensors.plain_ok(position) {
                    Some(name) => return vec![vec![display_name(name), "OK".into()]],
                    None => tensors.get(position),
                };
                let Some(t) = t else { return Vec::new() };
                let name = display_name(t.name);
                let info = t.info.as_ref();
                let verdict = verdict_row(
                    name.clone(),
                    t.error.as_ref(),
                    info.map(|i| i.layout),
                    info.and_then(|i| i.not_viewable),
                );
                let warnings = t.warnings.into_iter().map(|w| vec![name.clone(), "WARNING".into(), w]);
                std::iter::once(verdict).chain(warnings).collect()
            })
            .chain(std::iter::once_with(padding_row))
    };
    Table::new(&[], &[]).stream(rows, out)
}

/// Without `--validate`: the tensors that could not be resolved (descriptor or buffers).
fn unreadable(report: &Report<'_, '_>, out: &mut impl Write) -> io::Result<()> {
    let count = report.tensors.failed_count();
    if count == 0 {
        return Ok(());
    }
    writeln!(out, "\nUnreadable tensors ({count}):")?;
    let rows = || {
        report.tensors.failed().map(|t| {
            let error = t.error.as_ref().map(ToString::to_string).unwrap_or_default();
            vec![display_name(t.name), "INVALID".into(), error]
        })
    };
    Table::new(&[], &[]).stream(rows, out)
}

/// `string`, `int64`, ..., `array<int64>[3]`.
fn kv_type(value: KvValue<'_>) -> String {
    match value {
        KvValue::Array(a) => format!("array<{}>[{}]", a.element_type().as_str(), a.len()),
        other => other.kv_type().as_str().to_owned(),
    }
}

/// A compact rendering of a KV value: strings quoted and escaped, floats in
/// shortest round-trip form, bytes as hex, at most [`ELEMENTS_SHOWN`]
/// array elements or bytes.
fn kv_value(value: KvValue<'_>) -> String {
    match value {
        KvValue::String(s) => {
            // Escape only what can be shown, so a huge string costs little.
            let shown: String = s.chars().take(VALUE_MAX).collect();
            format!("\"{}\"", shown.escape_debug())
        }
        KvValue::Int64(n) => n.to_string(),
        KvValue::Uint64(n) => n.to_string(),
        KvValue::Float64(x) => format!("{x:?}"),
        KvValue::Bool(b) => b.to_string(),
        KvValue::Bytes(bytes) => {
            if bytes.is_empty() {
                return "(empty)".to_owned();
            }
            let hex: Vec<String> = bytes.iter().take(ELEMENTS_SHOWN).map(|b| format!("{b:02x}")).collect();
            let more = if bytes.len() > ELEMENTS_SHOWN {
                format!(" ... ({} bytes)", bytes.len())
            } else {
                String::new()
            };
            format!("{}{more}", hex.join(" "))
        }
        KvValue::Array(a) => {
            let mut items: Vec<String> = a.iter().take(ELEMENTS_SHOWN).map(kv_value).collect();
            if usize::try_from(a.len()).map_or(true, |n| n > ELEMENTS_SHOWN) {
                items.push(format!("... ({} elements)", a.len()));
            }
            format!("[{}]", items.join(", "))
        }
    }
}

/// `A: float32 csc [4, 5], nnz 5` — the line that heads every per-tensor output.
pub fn header_line(h: &Header<'_>) -> String {
    let dtype = h.dtype_name();
    let nnz = h.nnz.map(|n| format!(", nnz {n}")).unwrap_or_default();
    format!(
        "{}: {dtype} {} {}{nnz}",
        display_name(h.name),
        h.layout,
        shape_text(&h.shape)
    )
}

/// Bytes of a descriptor field shown before `...`.
const FIELD_BYTES_SHOWN: usize = 16;

/// `--tensor NAME`: facts, index entry, descriptor fields, buffers, and the
/// verdicts (descriptor error, data check).
///
/// # Errors
/// Whatever `out` returns.
pub fn render_detail(d: &TensorDetail<'_>, out: &mut impl Write) -> io::Result<()> {
    let name = display_name(d.entry.name());
    writeln!(out, "Tensor: {name}")?;
    let mut facts = Table::new(&[], &[]);
    match &d.header {
        Some(h) => {
            facts.row(vec!["dtype".into(), h.dtype_name()]);
            facts.row(vec!["layout".into(), h.layout.to_string()]);
            facts.row(vec!["rank".into(), h.shape.len().to_string()]);
            facts.row(vec![
                "shape".into(),
                truncate(&shape_text(&h.shape), VALUE_MAX).into_owned(),
            ]);
            if let Some(nnz) = h.nnz {
                facts.row(vec!["nnz".into(), nnz.to_string()]);
            }
            match (&d.buffers, d.resolved) {
                (_, false) => facts.row(vec!["tensor".into(), "INVALID (see below)".into()]),
                (None, true) => facts.row(vec!["data".into(), "? (the buffer table is not interpreted)".into()]),
                (Some(buffers), true) => {
                    let bytes = buffers.iter().fold(0u64, |sum, b| sum.saturating_add(b.byte_size));
                    facts.row(vec![
                        "data".into(),
                        format!(
                            "{} in {}",
                            human_bytes(bytes),
                            count_of(u64::try_from(buffers.len()).unwrap_or(u64::MAX), "buffer", "buffers")
                        ),
                    ]);
                }
            }
            if !d.members.is_empty() {
                let members: Vec<String> = d.members.iter().map(|m| display_name(m)).collect();
                facts.row(vec!["members".into(), members.join(", ")]);
            }
            if let Some(why) = d.not_viewable {
                facts.row(vec!["note".into(), format!("data not interpreted: {why}")]);
            }
        }
        None => facts.row(vec!["descriptor".into(), "INVALID (see below)".into()]),
    }
    facts.write(out)?;

    let e = &d.entry;
    writeln!(out, "\nIndex entry {} (at offset {}):", e.position(), e.offset())?;
    let mut entry = Table::new(&["OFFSET", "FIELD", "VALUE"], &[0, 2]);
    for f in EntryField::ALL {
        entry.row(vec![
            e.field_offset(f).to_string(),
            f.name().into(),
            e.field_value(f).to_string(),
        ]);
    }
    entry.write(out)?;

    writeln!(
        out,
        "\nDescriptor ({} bytes at offset {}):",
        e.descriptor_length(),
        e.descriptor_offset()
    )?;
    let mut fields = Table::new(&["OFFSET", "FIELD", "BYTES", "MEANING"], &[0]);
    for f in &d.fields {
        fields.row(vec![
            f.offset.to_string(),
            f.field.to_string(),
            hex_bytes(f.bytes, FIELD_BYTES_SHOWN),
            truncate(&printable(&f.meaning), VALUE_MAX).into_owned(),
        ]);
    }
    fields.write(out)?;
    if let Some(error) = &d.error {
        writeln!(out, "  ERROR  {error}")?;
    }

    if let Some(buffers) = &d.buffers {
        writeln!(out, "\nBuffers ({}):", buffers.len())?;
        if !buffers.is_empty() {
            let mut table = Table::new(
                &["#", "ROLE", "TYPE", "COUNT", "FILE RANGE", "BYTE_SIZE", "ALIGNMENT"],
                &[0, 3, 5, 6],
            );
            for b in buffers {
                table.row(vec![
                    b.index.to_string(),
                    b.role.to_string(),
                    b.element_type.map_or_else(|| "?".to_owned(), |t| t.to_string()),
                    b.count.map_or_else(|| "?".to_owned(), |n| n.to_string()),
                    format!("[{}, {})", b.offset, b.end()),
                    b.byte_size.to_string(),
                    b.alignment.to_string(),
                ]);
            }
            table.write(out)?;
        }
    }

    if d.validated {
        let mode = if d.strict { "strict" } else { "permissive" };
        writeln!(out, "\nValidation ({mode} mode):")?;
        let mut table = Table::new(&[], &[]);
        let layout = d.header.as_ref().map(|h| h.layout);
        table.row(verdict_row(name.clone(), d.first_error(), layout, d.not_viewable));
        for w in &d.warnings {
            table.row(vec![name.clone(), "WARNING".into(), w.clone()]);
        }
        table.write(out)?;
    }
    Ok(())
}

/// `--head`, `--column`, `--row`: the header line, what is listed, then one
/// line per entry: coordinates and value. CSC and CSR entries are grouped by
/// column or row.
///
/// # Errors
/// Whatever `out` returns.
pub fn render_entries(e: &Entries<'_>, out: &mut impl Write) -> io::Result<()> {
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

/// `--get`: `A[2, 1] = 4.0  (stored at position 1)`, or `= 0 (implicit zero)`.
///
/// # Errors
/// Whatever `out` returns.
pub fn render_lookup(l: &Lookup<'_>, out: &mut impl Write) -> io::Result<()> {
    let coords: Vec<String> = l.index.iter().map(u64::to_string).collect();
    let at = format!("{}[{}]", display_name(l.header.name), coords.join(", "));
    let dequantized = l
        .dequantized
        .map(|x| format!("; dequantized {}", values::human_real(x)))
        .unwrap_or_default();
    match (l.value, l.position) {
        (Some(v), Some(p)) => {
            let kind = if l.header.layout.is_sparse() {
                "stored"
            } else {
                "element"
            };
            writeln!(
                out,
                "{at} = {}  ({kind} at position {p}{dequantized})",
                values::human(v, l.header.dtype)
            )
        }
        _ => writeln!(out, "{at} = 0 (implicit zero{dequantized})"),
    }
}

/// `(2, 1)`; `()` for a scalar.
pub fn tuple(index: &[u64]) -> String {
    let parts: Vec<String> = index.iter().map(u64::to_string).collect();
    format!("({})", parts.join(", "))
}

/// `s` with control characters escaped (`\n`, `\u{1b}`) and everything
/// else, quotes included, as is.
fn printable(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `1 stored entry`, `3 elements`.
fn count_of(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// `48 52 52 59`, at most `max` bytes then `... (N bytes)`; `(none)` when empty.
fn hex_bytes(bytes: &[u8], max: usize) -> String {
    if bytes.is_empty() {
        return "(none)".to_owned();
    }
    let hex: Vec<String> = bytes.iter().take(max).map(|b| format!("{b:02x}")).collect();
    let more = if bytes.len() > max {
        format!(" ... ({} bytes)", bytes.len())
    } else {
        String::new()
    };
    format!("{}{more}", hex.join(" "))
}

/// Columns separated by two spaces; `right` lists right-aligned columns.
/// Rows may be shorter than the header; no trailing spaces are written.
/// Widths are display columns (`unicode-width`): a combining mark takes
/// none, a wide character two.
struct Table {
    header: Vec<String>,
    right: Vec<usize>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn new(header: &[&str], right: &[usize]) -> Self {
        Table {
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            right: right.to_vec(),
            rows: Vec::new(),
        }
    }

    fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn write(&self, out: &mut impl Write) -> io::Result<()> {
        self.stream(|| self.rows.iter().cloned(), out)
    }

    /// Writes the header and the rows `rows()` yields, calling it twice:
    /// once to measure the columns, once to write. The rows are never held
    /// together (a table of a million tensors' rows once took 450 MB).
    fn stream<I: Iterator<Item = Vec<String>>>(&self, rows: impl Fn() -> I, out: &mut impl Write) -> io::Result<()> {
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
    use hurray_reader::{BufferRole, ElementType, Error, Layout};

    use super::*;
    use crate::report::entries::{Axis, Entry, Listed, Slice};
    use crate::report::summary::{BufferInfo, Tensors};

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

    fn render_to_string(report: &Report<'_, '_>) -> String {
        let mut out = Vec::new();
        render(report, "m.hry", &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn csc_tensor(name: &str) -> TensorReport<'_> {
        TensorReport {
            name,
            data_offset: 4096,
            resolved: true,
            info: Some(TensorInfo {
                element_type: Some(ElementType::Float32),
                type_tag: 0x03,
                layout: Layout::Csc,
                shape: vec![4, 5],
                nnz: Some(5),
                buffers: Some(vec![
                    BufferInfo {
                        role: BufferRole::Values,
                        element_type: Some(ElementType::Float32),
                        byte_size: 20,
                        alignment: 64,
                        offset: 4096,
                    },
                    BufferInfo {
                        role: BufferRole::Values,
                        element_type: Some(ElementType::Float32),
                        byte_size: 40,
                        alignment: 64,
                        offset: 8192,
                    },
                    BufferInfo {
                        role: BufferRole::Values,
                        element_type: Some(ElementType::Float32),
                        byte_size: 48,
                        alignment: 64,
                        offset: 12288,
                    },
                ]),
                not_viewable: None,
                quantization: None,
            }),
            validated: false,
            error: None,
            warnings: Vec::new(),
        }
    }

    fn report<'a>(tensors: Vec<TensorReport<'a>>, kv: Vec<(&'a str, KvValue<'a>)>) -> Report<'static, 'a> {
        Report {
            container_version: (1, 0),
            flags: vec!["HAS_INDEX_CRC32C".into()],
            data_buffer_alignment: 4096,
            strict: true,
            kv,
            tensors: Tensors::List(tensors),
            padding: None,
        }
    }

    #[test]
    fn summary_golden() {
        let dense = TensorReport {
            name: "w\u{0}1",
            data_offset: 16384,
            resolved: true,
            info: Some(TensorInfo {
                element_type: Some(ElementType::Bfloat16),
                type_tag: 0x02,
                layout: Layout::RowMajor,
                shape: vec![1024, 1024],
                nnz: None,
                buffers: Some(vec![BufferInfo {
                    role: BufferRole::Values,
                    element_type: Some(ElementType::Float32),
                    byte_size: 2 << 20,
                    alignment: 64,
                    offset: 16384,
                }]),
                not_viewable: None,
                quantization: None,
            }),
            validated: false,
            error: None,
            warnings: Vec::new(),
        };
        let kv = vec![
            ("general.name", KvValue::String("tab\there")),
            ("n", KvValue::Int64(-42)),
            ("nan", KvValue::Float64(f64::NAN)),
            ("tiny", KvValue::Float64(5e-324)),
            ("blob", KvValue::Bytes(&[0, 1, 0x7f, 0x80, 0xff])),
        ];
        let expected = "\
File: m.hry
  container_version      1.0
  file_flags             HAS_INDEX_CRC32C
  data_buffer_alignment  4096
  tensors                2
  kv entries             5

KV metadata (5):
  KEY           TYPE     VALUE
  general.name  string   \"tab\\there\"
  n             int64    -42
  nan           float64  NaN
  tiny          float64  5e-324
  blob          bytes    00 01 7f 80 ff

Tensors (2):
  NAME         DTYPE     LAYOUT     SHAPE         NNZ  BUFFERS    BYTES  DATA OFFSET
  csc_example  float32   csc        [4, 5]          5        3    108 B         4096
  w\\01         bfloat16  row_major  [1024, 1024]             1  2.0 MiB        16384
";
        assert_eq!(
            render_to_string(&report(vec![csc_tensor("csc_example"), dense], kv)),
            expected
        );
    }

    #[test]
    fn validation_lines() {
        let mut bad = csc_tensor("B");
        bad.error = Some(Error::NotFound { name: "B".into() });
        bad.warnings.push("advisory".into());
        let unreadable = TensorReport {
            resolved: false,
            info: None,
            error: Some(Error::NotFound { name: "C".into() }),
            ..csc_tensor("C")
        };
        let mut r = report(vec![csc_tensor("A"), bad, unreadable], Vec::new());
        r.padding = Some(PaddingCheck::Skipped(
            "a tensor's descriptor or buffers could not be located",
        ));
        let text = render_to_string(&r);
        let tail = text.split("Validation (strict mode):\n").nth(1).unwrap();
        assert_eq!(
            tail,
            "  A          OK
  B          INVALID  no tensor named 'B' in the index
  B          WARNING  advisory
  C          INVALID  no tensor named 'C' in the index
  (padding)  SKIPPED  (a tensor's descriptor or buffers could not be located)
"
        );
        assert!(
            text.contains("\n  C     ?        ?       ?         ?        ?      ?         4096\n"),
            "{text}"
        );
    }

    #[test]
    fn unreadable_tensors_listed_without_validate() {
        let mut bad = csc_tensor("B");
        bad.info = None;
        bad.error = Some(Error::NotFound { name: "B".into() });
        let text = render_to_string(&report(vec![bad], Vec::new()));
        assert!(
            text.ends_with("\nUnreadable tensors (1):\n  B  INVALID  no tensor named 'B' in the index\n"),
            "{text}"
        );
    }

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
            text(|o| render_entries(&e, o)),
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
            text(|o| render_entries(&e, o)),
            "B: float32 csr [2, 2], nnz 3\nRow 1: 2 stored entries (positions 1..3):\n  (1, 0)  4.0\n  (1, 1)  5.0\n"
        );
    }

    #[test]
    fn lookups() {
        let mut l = Lookup {
            header: header("A\n", Layout::Csc, vec![4, 5], Some(5)),
            index: vec![3, 1],
            position: None,
            value: None,
            dequantized: None,
        };
        assert_eq!(text(|o| render_lookup(&l, o)), "A\\n[3, 1] = 0 (implicit zero)\n");
        l.position = Some(1);
        l.value = Some(hurray_reader::Value::Float(4.0));
        assert_eq!(
            text(|o| render_lookup(&l, o)),
            "A\\n[3, 1] = 4.0  (stored at position 1)\n"
        );
        // A quantized tensor's real value, float32 shown as such.
        l.dequantized = Some(f64::from(0.1f32));
        assert_eq!(
            text(|o| render_lookup(&l, o)),
            "A\\n[3, 1] = 4.0  (stored at position 1; dequantized 0.1)\n"
        );
        l.value = None;
        l.dequantized = Some(0.0);
        assert_eq!(
            text(|o| render_lookup(&l, o)),
            "A\\n[3, 1] = 0 (implicit zero; dequantized 0.0)\n"
        );
        l.value = Some(hurray_reader::Value::Float(4.0));
        l.dequantized = None;
        l.header.layout = Layout::RowMajor;
        assert_eq!(
            text(|o| render_lookup(&l, o)),
            "A\\n[3, 1] = 4.0  (element at position 1)\n"
        );
    }

    #[test]
    fn small_helpers() {
        assert_eq!(hex_bytes(b"HRRY", 16), "48 52 52 59");
        assert_eq!(hex_bytes(&[], 16), "(none)");
        assert_eq!(hex_bytes(&[0xff; 20], 2), "ff ff ... (20 bytes)");
        assert_eq!(printable("\"HRRY\"\n\u{1b}"), "\"HRRY\"\\n\\u{1b}");
        assert_eq!(tuple(&[]), "()");
        assert_eq!(tuple(&[1, 2, 3]), "(1, 2, 3)");
        assert_eq!(count_of(1, "element", "elements"), "1 element");
        assert_eq!(count_of(0, "element", "elements"), "0 elements");
        assert_eq!(
            header_line(&header("w", Layout::RowMajor, vec![], None)),
            "w: float32 row_major []"
        );
    }

    #[test]
    fn long_values_are_truncated() {
        let long = "x".repeat(1000);
        let shown = truncate(&kv_value(KvValue::String(&long)), VALUE_MAX).into_owned();
        assert_eq!(shown.chars().count(), VALUE_MAX);
        assert!(shown.starts_with("\"xxx") && shown.ends_with("..."));
        let bytes = [0xabu8; 40];
        assert_eq!(
            kv_value(KvValue::Bytes(&bytes)),
            format!("{} ... (40 bytes)", vec!["ab"; ELEMENTS_SHOWN].join(" "))
        );
        assert_eq!(truncate("Grüße", 5), "Grüße");
        assert_eq!(truncate("Grüße, 世界", 6), "Grü...");
    }
}
