//! `--dump`: every buffer of one tensor, every element decoded by the
//! library (`Buffer::values`), written as it is read — nothing the size of
//! the data is held in memory, so a multi-gigabyte tensor streams to a pipe.

use std::io::{self, Write};

use hurray_reader::{Buffer, Tensor};

use crate::human::header_line;
use crate::report::dump::{not_decoded, shared_parts};
use crate::report::header::{located_buffers, Header};
use crate::shown::human_bytes;
use crate::values::{Human, Json};

/// Values per line in the human form.
const PER_LINE: u64 = 8;
/// Bytes per line in the human form of a buffer whose type is unknown.
const BYTES_PER_LINE: usize = 16;

/// Writes every buffer as text: a line per buffer (role, element type,
/// count, bytes, file range), then its values, [`PER_LINE`] to a line, each
/// line starting with the index of its first value.
///
/// # Errors
/// Whatever `out` returns.
pub fn human(t: &Tensor<'_>, out: &mut impl Write) -> io::Result<()> {
    let header = Header::of(t);
    writeln!(out, "{}", header_line(&header))?;
    if let Some(why) = t.not_viewable() {
        writeln!(out, "(data not interpreted: {why})")?;
    }
    match located_buffers(t) {
        None => writeln!(
            out,
            "(buffers not located: the layout's buffer table is not interpreted)"
        )?,
        Some([]) => writeln!(out, "(no buffers)")?,
        Some(_) => {}
    }
    for b in t.buffers() {
        match shared_parts(t, b) {
            Some(parts) => {
                writeln!(
                    out,
                    "buffer {}: {}, {} at [{}, {}): the scales, then the zero points",
                    b.index(),
                    b.role(),
                    human_bytes(b.byte_size()),
                    b.file_offset(),
                    b.file_offset().saturating_add(b.byte_size())
                )?;
                for part in &parts {
                    human_buffer(&format!("buffer {} {}", b.index(), part.role()), part, t, out)?;
                }
            }
            None => human_buffer(&format!("buffer {}: {}", b.index(), b.role()), b, t, out)?,
        }
    }
    Ok(())
}

/// One buffer (or one part of a shared one) as text: `label`, element type,
/// count, bytes and file range on a line, then its values.
fn human_buffer(label: &str, b: &Buffer<'_>, t: &Tensor<'_>, out: &mut impl Write) -> io::Result<()> {
    let dtype = b.element_type();
    let type_name = dtype.map_or_else(|| "?".to_owned(), |e| e.to_string());
    // The element count needs the element type.
    let count = dtype.map_or_else(|| "?".to_owned(), |_| b.len().to_string());
    writeln!(
        out,
        "{label}, {type_name} x {count}, {} at [{}, {})",
        human_bytes(b.byte_size()),
        b.file_offset(),
        b.file_offset().saturating_add(b.byte_size())
    )?;
    if let Some(why) = not_decoded(dtype) {
        writeln!(out, "  (not decoded: {why}; its bytes in hex)")?;
        human_hex(b.bytes(), out)?;
        return Ok(());
    }
    if b.element_start() > 0 {
        writeln!(
            out,
            "  (elements from byte {}: byte_offset {} is not a whole number of {})",
            b.element_start(),
            t.descriptor().byte_offset(),
            if dtype.is_some_and(|e| e.bit_width() == 6) {
                "3-byte groups"
            } else {
                "elements"
            }
        )?;
    }
    if b.is_empty() {
        writeln!(out, "  (empty)")?;
        return Ok(());
    }
    for (i, v) in (0u64..).zip(b.values()) {
        if i % PER_LINE == 0 {
            if i > 0 {
                writeln!(out)?;
            }
            write!(out, "  [{i}]")?;
        }
        write!(out, "  {}", Human(v, dtype))?;
    }
    writeln!(out)
}

/// The bytes of a buffer whose elements are not decoded, [`BYTES_PER_LINE`]
/// to a line, each line starting with the position of its first byte.
fn human_hex(bytes: &[u8], out: &mut impl Write) -> io::Result<()> {
    for (line, chunk) in (0u64..).zip(bytes.chunks(BYTES_PER_LINE)) {
        write!(out, "  [{}] ", line.saturating_mul(BYTES_PER_LINE as u64))?;
        for byte in chunk {
            write!(out, " {byte:02x}")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// Writes one JSON object: `name`, `dtype`, `layout`, `shape`, `nnz`, and
/// `buffers`, one object per buffer in buffer-table order with `role`,
/// `element_type`, `byte_size`, `element_start` when the elements do not
/// start at the buffer's first byte, and `values` (null when they are not
/// decoded, see [`not_decoded`], and then `bytes`, a hex string; for a
/// shared `[scales | zero_points]` buffer, `parts`: the two arrays as
/// buffer objects), one buffer per line.
///
/// # Errors
/// Whatever `out` returns.
pub fn json(t: &Tensor<'_>, out: &mut impl Write) -> io::Result<()> {
    let header = Header::of(t);
    let field = |out: &mut dyn Write, key: &str| write!(out, "  \"{key}\": ");
    writeln!(out, "{{")?;
    field(out, "name")?;
    crate::json::write_compact(&mut *out, header.name)?;
    writeln!(out, ",")?;
    field(out, "dtype")?;
    crate::json::write_compact(&mut *out, &header.dtype_name())?;
    writeln!(out, ",")?;
    field(out, "layout")?;
    crate::json::write_compact(&mut *out, &header.layout.to_string())?;
    writeln!(out, ",")?;
    field(out, "shape")?;
    let dims: Vec<String> = header.shape.iter().map(u64::to_string).collect();
    writeln!(out, "[{}],", dims.join(", "))?;
    field(out, "nnz")?;
    crate::json::write_compact(&mut *out, &header.nnz)?;
    writeln!(out, ",")?;
    field(out, "buffers")?;
    match located_buffers(t) {
        None => writeln!(out, "null")?, // not located: the layout is unknown
        Some([]) => writeln!(out, "[]")?,
        Some(buffers) => {
            writeln!(out, "[")?;
            let last = buffers.len().saturating_sub(1);
            for (k, b) in buffers.iter().enumerate() {
                write!(out, "    ")?;
                match shared_parts(t, b) {
                    Some(parts) => json_shared(b, &parts, out)?,
                    None => json_buffer(b, out)?,
                }
                writeln!(out, "{}", if k == last { "" } else { "," })?;
            }
            writeln!(out, "  ]")?;
        }
    }
    writeln!(out, "}}")
}

/// A shared `[scales | zero_points]` buffer: its role and size, `values`
/// null, and `parts`, the scales and the zero points as two buffer objects.
fn json_shared(b: &Buffer<'_>, parts: &[Buffer<'_>; 2], out: &mut impl Write) -> io::Result<()> {
    write!(out, "{{\"role\": ")?;
    crate::json::write_compact(&mut *out, &b.role().to_string())?;
    write!(
        out,
        ", \"element_type\": null, \"byte_size\": {}, \"values\": null, \"parts\": [",
        b.byte_size()
    )?;
    let [scales, zero_points] = parts;
    json_buffer(scales, out)?;
    write!(out, ", ")?;
    json_buffer(zero_points, out)?;
    write!(out, "]}}")
}

fn json_buffer(b: &Buffer<'_>, out: &mut impl Write) -> io::Result<()> {
    write!(out, "{{\"role\": ")?;
    crate::json::write_compact(&mut *out, &b.role().to_string())?;
    write!(out, ", \"element_type\": ")?;
    crate::json::write_compact(&mut *out, &b.element_type().map(|e| e.as_str()))?;
    write!(out, ", \"byte_size\": {}", b.byte_size())?;
    if b.element_start() > 0 {
        write!(out, ", \"element_start\": {}", b.element_start())?;
    }
    write!(out, ", \"values\": ")?;
    if not_decoded(b.element_type()).is_some() {
        write!(out, "null, \"bytes\": \"")?;
        for byte in b.bytes() {
            write!(out, "{byte:02x}")?;
        }
        return write!(out, "\"}}");
    }
    write!(out, "[")?;
    for (i, v) in b.values().enumerate() {
        if i > 0 {
            write!(out, ", ")?;
        }
        crate::json::write_compact(&mut *out, &Json(v, b.element_type()))?;
    }
    write!(out, "]}}")
}
