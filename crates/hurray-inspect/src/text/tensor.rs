//! One tensor as text (`--tensor NAME`): facts, index entry, descriptor
//! fields, buffers, and the verdicts.

use std::io::{self, Write};

use hurray_reader::EntryField;

use crate::report::tensor::TensorDetail;
use crate::shown::{display_name, human_bytes, shape_text, truncate};
use crate::text::parts::{count_of, hex_bytes, printable, verdict_row, VALUE_MAX};
use crate::text::table::Table;

/// Bytes of a descriptor field shown before `...`.
const FIELD_BYTES_SHOWN: usize = 16;

/// `--tensor NAME`: facts, index entry, descriptor fields, buffers, and the
/// verdicts (descriptor error, data check).
///
/// # Errors
/// Whatever `out` returns.
pub fn render(d: &TensorDetail<'_>, out: &mut impl Write) -> io::Result<()> {
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
