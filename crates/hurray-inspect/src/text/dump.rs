//! Every array of a tensor as text (`--dump`): a line per buffer, then its
//! values, written as they are read.

use std::io::{self, Write};

use hurray_reader::Buffer;

use crate::report::dump::{not_decoded, Dump, DumpBuffer};
use crate::shown::human_bytes;
use crate::text::parts::header_line;
use crate::values::Human;

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
pub fn render(d: &Dump<'_>, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{}", header_line(&d.header))?;
    if let Some(why) = d.not_viewable {
        writeln!(out, "(data not interpreted: {why})")?;
    }
    if !d.located {
        writeln!(
            out,
            "(buffers not located: the layout's buffer table is not interpreted)"
        )?;
    } else if d.buffers.is_empty() {
        writeln!(out, "(no buffers)")?;
    }
    for &DumpBuffer { buffer: ref b, parts } in &d.buffers {
        match parts {
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
                    human_buffer(
                        &format!("buffer {} {}", b.index(), part.role()),
                        part,
                        d.byte_offset,
                        out,
                    )?;
                }
            }
            None => human_buffer(&format!("buffer {}: {}", b.index(), b.role()), b, d.byte_offset, out)?,
        }
    }
    Ok(())
}

/// One buffer (or one part of a shared one) as text: `label`, element type,
/// count, bytes and file range on a line, then its values.
fn human_buffer(label: &str, b: &Buffer<'_>, byte_offset: u64, out: &mut impl Write) -> io::Result<()> {
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
            byte_offset,
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
