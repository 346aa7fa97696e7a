//! What the writer records per tensor: index entries, the unchecked
//! path's raw tensors and index overrides.

use crate::data::BufferData;
use crate::descriptor::TensorDescriptor;
use crate::error::{Error, Result};
use crate::num::len64;

/// A tensor written through the unchecked path: the descriptor bytes are
/// used verbatim and every index field can be overridden.
#[derive(Debug)]
pub struct RawTensor<'a> {
    /// Name bytes (need not be UTF-8, unique or non-empty).
    pub name: Vec<u8>,
    /// Descriptor bytes, written as given.
    pub descriptor: Vec<u8>,
    /// Buffer contents, written in order, each followed by padding to the
    /// data alignment, regardless of what the descriptor declares.
    pub buffers: Vec<BufferData<'a>>,
    /// Pad the descriptor to the data alignment (`true`) or only to 8 bytes
    /// (`false`); `None` = pad to the data alignment iff there are buffers.
    pub pad_after_descriptor: Option<bool>,
    /// Index `descriptor_length` override (default: `descriptor.len()`).
    pub index_descriptor_length: Option<u32>,
    /// Index `descriptor_offset` override.
    pub index_descriptor_offset: Option<u64>,
    /// Index `data_offset` override.
    pub index_data_offset: Option<u64>,
    /// Index `data_length` override.
    pub index_data_length: Option<u64>,
    /// Index entry `flags` (0 in a valid file).
    pub index_flags: u32,
}

impl<'a> RawTensor<'a> {
    /// A raw tensor with no index overrides.
    pub fn new(name: impl Into<Vec<u8>>, descriptor: Vec<u8>, buffers: Vec<BufferData<'a>>) -> Self {
        Self {
            name: name.into(),
            descriptor,
            buffers,
            pad_after_descriptor: None,
            index_descriptor_length: None,
            index_descriptor_offset: None,
            index_data_offset: None,
            index_data_length: None,
            index_flags: 0,
        }
    }

    /// A raw tensor from a typed descriptor, encoded without validation.
    ///
    /// # Errors
    /// [`Error::Overflow`] when a length does not fit its wire field.
    pub fn from_descriptor(
        name: impl Into<Vec<u8>>,
        descriptor: &TensorDescriptor,
        buffers: Vec<BufferData<'a>>,
    ) -> Result<Self> {
        Ok(Self::new(name, descriptor.encode()?, buffers))
    }
}

/// One footer index entry, as written (offsets and lengths in bytes,
/// absolute from the start of the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// Name bytes (UTF-8 for tensors written through the checked path).
    pub name: Vec<u8>,
    /// Offset of the descriptor.
    pub descriptor_offset: u64,
    /// Length of the descriptor.
    pub descriptor_length: u32,
    /// Offset of buffer 0 (for a tensor without buffers: the 8-aligned end of
    /// its descriptor).
    pub data_offset: u64,
    /// From the first byte of buffer 0 to the end of the last buffer (padding
    /// between buffers included, padding after the last excluded).
    pub data_length: u64,
    /// Entry flags (0).
    pub flags: u32,
}

/// Index field overrides of the unchecked path.
#[derive(Debug, Default)]
pub(crate) struct Overrides {
    pub(crate) descriptor_length: Option<u32>,
    pub(crate) descriptor_offset: Option<u64>,
    pub(crate) data_offset: Option<u64>,
    pub(crate) data_length: Option<u64>,
    pub(crate) flags: u32,
}

pub(crate) fn check_name_length(what: &'static str, index: u64, name: &[u8]) -> Result<u16> {
    u16::try_from(name.len()).map_err(|_| Error::NameTooLong {
        what,
        index,
        length: len64(name.len()).unwrap_or(u64::MAX),
    })
}
