//! The object of one tensor (`--tensor NAME --json`).

use std::io::{self, Write};

use hurray_reader::{EntryField, Layout};
use serde::Serialize;

use crate::json::error::JsonErrorAt;
use crate::json::format::{write, Style};
use crate::report::header::{verdict, Header};
use crate::report::tensor::TensorDetail;

#[derive(Serialize)]
struct JsonDetail<'a> {
    name: &'a str,
    /// `None` when the descriptor could not be read.
    dtype: Option<String>,
    layout: Option<String>,
    shape: Option<&'a [u64]>,
    nnz: Option<u64>,
    index_entry: JsonIndexEntry,
    descriptor: Vec<JsonField<'a>>,
    /// `None` when the buffers were not located.
    buffers: Option<Vec<JsonBufferDetail>>,
    /// Composite heads only: `null` when the head did not resolve (its
    /// members are not known).
    #[serde(skip_serializing_if = "Option::is_none")]
    members: Option<Option<&'a [&'a str]>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    not_viewable: Option<&'static str>,
    /// With `--validate` only; `null` when the data could not be checked
    /// ([`verdict`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    valid: Option<Option<bool>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_at: Option<JsonErrorAt>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    warnings: &'a [String],
}

#[derive(Serialize)]
struct JsonIndexEntry {
    position: usize,
    offset: u64,
    descriptor_offset: u64,
    descriptor_length: u64,
    data_offset: u64,
    data_length: u64,
    flags: u64,
    /// Where each of those fields is in the file.
    field_offsets: JsonEntryOffsets,
}

#[derive(Serialize)]
struct JsonEntryOffsets {
    descriptor_offset: u64,
    descriptor_length: u64,
    data_offset: u64,
    data_length: u64,
    flags: u64,
}

#[derive(Serialize)]
struct JsonField<'a> {
    field: String,
    offset: u64,
    /// Lowercase hex, two digits per byte, file order.
    bytes: String,
    meaning: &'a str,
}

#[derive(Serialize)]
struct JsonBufferDetail {
    index: u8,
    role: String,
    element_type: Option<&'static str>,
    /// `None` when the element type is unknown.
    count: Option<u64>,
    offset: u64,
    end: u64,
    byte_size: u64,
    alignment: u64,
}

/// Writes `--tensor NAME` as one JSON object.
///
/// # Errors
/// Whatever `out` returns.
pub fn render(d: &TensorDetail<'_>, out: &mut impl Write) -> io::Result<()> {
    let e = &d.entry;
    let h = d.header.as_ref();
    let json = JsonDetail {
        name: e.name(),
        dtype: h.map(Header::dtype_name),
        layout: h.map(|h| h.layout.to_string()),
        shape: h.map(|h| h.shape.as_slice()),
        nnz: h.and_then(|h| h.nnz),
        index_entry: JsonIndexEntry {
            position: e.position(),
            offset: e.offset(),
            descriptor_offset: e.descriptor_offset(),
            descriptor_length: e.descriptor_length(),
            data_offset: e.data_offset(),
            data_length: e.data_length(),
            flags: e.field_value(EntryField::Flags),
            field_offsets: JsonEntryOffsets {
                descriptor_offset: e.field_offset(EntryField::DescriptorOffset),
                descriptor_length: e.field_offset(EntryField::DescriptorLength),
                data_offset: e.field_offset(EntryField::DataOffset),
                data_length: e.field_offset(EntryField::DataLength),
                flags: e.field_offset(EntryField::Flags),
            },
        },
        descriptor: d
            .fields
            .iter()
            .map(|f| JsonField {
                field: f.field.to_string(),
                offset: f.offset,
                bytes: f.bytes.iter().map(|b| format!("{b:02x}")).collect(),
                meaning: &f.meaning,
            })
            .collect(),
        buffers: d.buffers.as_ref().map(|buffers| {
            buffers
                .iter()
                .map(|b| JsonBufferDetail {
                    index: b.index,
                    role: b.role.to_string(),
                    element_type: b.element_type.map(|t| t.as_str()),
                    count: b.count,
                    offset: b.offset,
                    end: b.end(),
                    byte_size: b.byte_size,
                    alignment: b.alignment,
                })
                .collect()
        }),
        members: d
            .header
            .as_ref()
            .is_some_and(|h| h.layout == Layout::Composite)
            .then(|| d.resolved.then_some(&d.members[..])),
        not_viewable: d.not_viewable,
        valid: d.validated.then(|| {
            let layout = d.header.as_ref().map(|h| h.layout);
            verdict(d.first_error().is_some(), layout, d.not_viewable)
        }),
        error: d.first_error().map(ToString::to_string),
        error_at: d.first_error().and_then(JsonErrorAt::new),
        warnings: &d.warnings,
    };
    write(out, &json, Style::Pretty)
}
