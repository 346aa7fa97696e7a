//! `--tensor NAME`: the index entry, the descriptor field by field, the
//! buffers, and with `--validate` the verdict on the data.

use hurray_reader::{AnnotatedField, Buffer, BufferRole, ElementType, Error, HurrayFile, IndexEntry};

use crate::report::failure::{Failure, Result};
use crate::report::header::{located_buffers, Header};

/// One buffer of a resolved tensor.
#[derive(Debug, Clone, Copy)]
pub struct BufferDetail {
    pub index: u8,
    pub role: BufferRole,
    /// `None` when the layout or type is unknown.
    pub element_type: Option<ElementType>,
    /// Elements the layout says the buffer holds; `None` when its element
    /// type is unknown.
    pub count: Option<u64>,
    /// Absolute offset of the first byte.
    pub offset: u64,
    pub byte_size: u64,
    pub alignment: u64,
}

impl BufferDetail {
    fn of(b: &Buffer<'_>) -> Self {
        BufferDetail {
            index: b.index(),
            role: b.role(),
            element_type: b.element_type(),
            count: b.element_type().map(|_| b.len()),
            offset: b.file_offset(),
            byte_size: b.byte_size(),
            alignment: b.alignment(),
        }
    }

    /// One past the last byte (saturating; the library checked the range).
    pub fn end(&self) -> u64 {
        self.offset.saturating_add(self.byte_size)
    }
}

/// `--tensor NAME`: the index entry, the descriptor field by field, the
/// buffers, and with `--validate` the verdict on the data.
#[derive(Debug)]
pub struct TensorDetail<'data> {
    pub entry: IndexEntry<'data>,
    /// Every descriptor field read, in file order, up to the first problem.
    pub fields: Vec<AnnotatedField<'data>>,
    /// What the descriptor says; `None` when it is invalid (see `error`).
    pub header: Option<Header<'data>>,
    /// The tensor resolved: its buffers were located and checked (else
    /// `error` says why).
    pub resolved: bool,
    /// `None` when the buffers were not located: the tensor did not
    /// resolve, or its layout is unknown (permissive) and hides the table.
    pub buffers: Option<Vec<BufferDetail>>,
    /// Why the data is not interpreted (composite head, unknown tag, ...).
    pub not_viewable: Option<&'static str>,
    /// A composite head's direct members.
    pub members: Vec<&'data str>,
    /// The descriptor's first problem.
    pub error: Option<Error>,
    /// Strict mode (the default) or permissive.
    pub strict: bool,
    /// Whether `--validate` was given (the data check runs when the
    /// descriptor is valid).
    pub validated: bool,
    /// The data check's first problem.
    pub data_error: Option<Error>,
    /// With `--validate`: what the library accepted but reports
    /// ([`Tensor::warnings`](hurray_reader::Tensor::warnings)).
    pub warnings: Vec<String>,
}

impl TensorDetail<'_> {
    /// What makes the exit status 1.
    pub fn first_error(&self) -> Option<&Error> {
        self.error.as_ref().or(self.data_error.as_ref())
    }
}

/// Reads tensor `name`'s descriptor field by field; with `validate`, runs
/// the tensor's data checks, reporting `progress(done, total)` in bytes.
///
/// # Errors
/// [`Failure::Usage`] for an unknown name.
pub fn detail<'data>(
    file: &HurrayFile<'data>,
    name: &str,
    validate: bool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<TensorDetail<'data>> {
    let dump = file.dump_descriptor(name).map_err(|e| match e {
        Error::NotFound { .. } => Failure::Usage(e.to_string()),
        other => Failure::File(other),
    })?;
    let mut detail = TensorDetail {
        entry: dump.entry,
        fields: dump.fields,
        header: dump
            .descriptor
            .as_ref()
            .map(|d| Header::of_descriptor(dump.entry.name(), d)),
        resolved: false,
        buffers: None,
        not_viewable: None,
        members: Vec::new(),
        error: dump.error,
        strict: file.options().is_strict(),
        validated: validate,
        data_error: None,
        warnings: Vec::new(),
    };
    if let Some(t) = dump.tensor {
        detail.resolved = true;
        detail.buffers = located_buffers(&t).map(|b| b.iter().map(BufferDetail::of).collect());
        detail.not_viewable = t.not_viewable();
        detail.members = t
            .composite_members()
            .iter()
            .filter_map(|&p| file.entries().get(p).map(IndexEntry::name))
            .collect();
        if validate {
            detail.data_error = t.validate_data_with_progress(progress).err();
            detail.warnings = t.warnings();
        }
    }
    Ok(detail)
}
