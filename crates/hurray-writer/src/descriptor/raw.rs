//! The byte-level [`RawDescriptor`] (`metadata.md` § Fixed Header and the
//! sections after it): every wire field settable, and its encoder.

use crate::buffer::BufferHandle;
use crate::error::{Error, Result};
use crate::num::{len64, Enc};
use crate::sections::{CompositeMember, ExtensionType, Shard, Statistics};

use hurray_format::descriptor::flags::{
    HAS_COMPOSITE_MEMBER, HAS_EXTENSION_TYPE, HAS_QUANTIZATION, HAS_SHARD, HAS_STATISTICS,
};
/// Byte-level descriptor: every wire field settable, for building valid
/// descriptors from [`TensorDescriptor::to_raw`](crate::TensorDescriptor::to_raw) or deliberately invalid ones.
///
/// Fields left `None` are computed by [`RawDescriptor::encode`]:
/// `descriptor_length` (actual length), `flags` (from the sections present),
/// `rank` (`shape.len()`), `buffer_count` (`buffers.len()`),
/// `quantization_length` (payload length).
#[derive(Debug, Clone, PartialEq)]
pub struct RawDescriptor {
    /// Bytes 0–3; `HRRY` in a valid descriptor.
    pub magic: [u8; 4],
    /// Byte 4.
    pub version_major: u8,
    /// Byte 5.
    pub version_minor: u8,
    /// Bytes 6–9 override; `None` = the encoded length.
    pub descriptor_length: Option<u32>,
    /// Bytes 10–13 override; `None` = derived from the sections present.
    pub flags: Option<u32>,
    /// Byte 14.
    pub type_tag: u8,
    /// Byte 15.
    pub layout_tag: u8,
    /// Bytes 16–19 override; `None` = `shape.len()`.
    pub rank: Option<u32>,
    /// Shape entries, written as given.
    pub shape: Vec<u64>,
    /// `byte_offset`.
    pub byte_offset: u64,
    /// Layout-specific field bytes, written as given.
    pub layout_fields: Vec<u8>,
    /// `buffer_count` override; `None` = `buffers.len()`.
    pub buffer_count: Option<u8>,
    /// Buffer handles, written as given.
    pub buffers: Vec<BufferHandle>,
    /// Quantization payload (written after its `u32` length).
    pub quantization: Option<Vec<u8>>,
    /// `quantization_length` override.
    pub quantization_length: Option<u32>,
    /// Shard section.
    pub shard: Option<Shard>,
    /// Statistics section.
    pub statistics: Option<Statistics>,
    /// Extension type section.
    pub extension_type: Option<ExtensionType>,
    /// Composite member section.
    pub composite_member: Option<CompositeMember>,
    /// Extra bytes appended after the last section.
    pub trailing_bytes: Vec<u8>,
}

impl RawDescriptor {
    /// Descriptor magic `HRRY`.
    pub const MAGIC: [u8; 4] = hurray_format::descriptor::DESCRIPTOR_MAGIC;

    /// Flags derived from which sections are present.
    pub fn derived_flags(&self) -> u32 {
        let mut flags = 0;
        if self.quantization.is_some() {
            flags |= HAS_QUANTIZATION;
        }
        if self.shard.is_some() {
            flags |= HAS_SHARD;
        }
        if self.extension_type.is_some() {
            flags |= HAS_EXTENSION_TYPE;
        }
        if self.statistics.is_some() {
            flags |= HAS_STATISTICS;
        }
        if self.composite_member.is_some() {
            flags |= HAS_COMPOSITE_MEMBER;
        }
        flags
    }

    /// Encodes the fields in wire order, without any validation.
    ///
    /// # Errors
    /// [`Error::Overflow`] when a computed length does not fit its wire field.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let mut e = Enc::new();
        e.bytes(&self.magic);
        e.u8(self.version_major);
        e.u8(self.version_minor);
        e.u32(0); // descriptor_length, patched below
        e.u32(self.flags.unwrap_or_else(|| self.derived_flags()));
        e.u8(self.type_tag);
        e.u8(self.layout_tag);
        let rank = match self.rank {
            Some(r) => r,
            None => u32::try_from(self.shape.len()).map_err(|_| Error::overflow("rank"))?,
        };
        e.u32(rank);
        e.u64s(&self.shape);
        e.u64(self.byte_offset);
        e.bytes(&self.layout_fields);
        let count = match self.buffer_count {
            Some(c) => c,
            None => u8::try_from(self.buffers.len()).map_err(|_| Error::TooManyBuffers {
                count: len64(self.buffers.len()).unwrap_or(u64::MAX),
            })?,
        };
        e.u8(count);
        for b in &self.buffers {
            b.encode(&mut e);
        }
        if let Some(q) = &self.quantization {
            let len = match self.quantization_length {
                Some(l) => l,
                None => u32::try_from(q.len()).map_err(|_| Error::overflow("quantization_length"))?,
            };
            e.u32(len);
            e.bytes(q);
        }
        if let Some(s) = &self.shard {
            s.encode(&mut e);
        }
        if let Some(s) = &self.statistics {
            s.encode(&mut e);
        }
        if let Some(x) = &self.extension_type {
            x.encode(&mut e);
        }
        if let Some(m) = &self.composite_member {
            m.encode(&mut e);
        }
        e.bytes(&self.trailing_bytes);
        let length = match self.descriptor_length {
            Some(l) => l,
            None => u32::try_from(e.buf.len()).map_err(|_| Error::overflow("descriptor_length"))?,
        };
        if let Some(slot) = e.buf.get_mut(6..10) {
            slot.copy_from_slice(&length.to_le_bytes());
        }
        Ok(e.buf)
    }
}
