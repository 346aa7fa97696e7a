//! The container's own regions as bytes (`file-format.md`): the file
//! header, the KV section, the footer index and the trailer, built from
//! the on-disk structs of [`hurray_format::raw`].

use hurray_format::container::{CONTAINER_VERSION_MAJOR, CONTAINER_VERSION_MINOR};
use hurray_format::raw;
use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::IntoBytes;

use crate::error::{Error, Result};
use crate::num::len64;

use super::entry::IndexEntry;
use super::options::{WriterOptions, FILE_MAGIC, TRAILER_MAGIC, UNKNOWN_TENSOR_COUNT};

/// The 64-byte file header (`file-format.md` § File Header), with the
/// overrides of [`RawFileFields`](super::options::RawFileFields) applied.
pub(crate) fn header(options: &WriterOptions, file_flags: u32) -> raw::FileHeader {
    let r = &options.raw;
    let [major, minor] = r
        .container_version
        .unwrap_or([CONTAINER_VERSION_MAJOR, CONTAINER_VERSION_MINOR]);
    raw::FileHeader {
        magic: FILE_MAGIC,
        container_version_major: major,
        container_version_minor: minor,
        reserved: r.header_reserved.unwrap_or([0; 2]),
        file_flags: U32::new(file_flags),
        data_buffer_alignment: U32::new(r.header_data_buffer_alignment.unwrap_or(options.data_buffer_alignment)),
        first_descriptor_offset: U64::new(options.first_descriptor_offset),
        tensor_count_hint: U64::new(
            r.tensor_count_hint
                .or(options.tensor_count_hint)
                .unwrap_or(UNKNOWN_TENSOR_COUNT),
        ),
        reserved_header: r.header_reserved_tail.unwrap_or([0; 28]),
    }
}

/// The KV section (`file-format.md` § KV Section): `kv_count` then the
/// encoded entries.
///
/// # Errors
/// [`Error::KvSectionTooLarge`] when its length does not fit `kv_length`.
pub(crate) fn kv_section(kv_count: u32, entries: &[u8]) -> Result<(Vec<u8>, u32)> {
    let mut section = Vec::with_capacity(entries.len().saturating_add(4));
    section.extend_from_slice(&kv_count.to_le_bytes());
    section.extend_from_slice(entries);
    let length = u32::try_from(section.len()).map_err(|_| Error::KvSectionTooLarge {
        length: len64(section.len()).unwrap_or(u64::MAX),
    })?;
    Ok((section, length))
}

/// The footer index (`file-format.md` § Index Section › Index Encoding):
/// `index_entry_count`, then per entry `name_length`, `name` and the fixed
/// tail; sorted by name bytes when `sorted`.
///
/// # Errors
/// [`Error::Overflow`] for a name longer than `u16::MAX` bytes.
pub(crate) fn index(entries: &[IndexEntry], sorted: bool, entry_count: u64) -> Result<Vec<u8>> {
    let mut order: Vec<&IndexEntry> = entries.iter().collect();
    if sorted {
        order.sort_by(|a, b| a.name.cmp(&b.name));
    }
    let mut index = entry_count.to_le_bytes().to_vec();
    for entry in order {
        let name_len = u16::try_from(entry.name.len()).map_err(|_| Error::overflow("name_length"))?;
        index.extend_from_slice(U16::new(name_len).as_bytes());
        index.extend_from_slice(&entry.name);
        let tail = raw::IndexEntryTail {
            descriptor_offset: U64::new(entry.descriptor_offset),
            descriptor_length: U32::new(entry.descriptor_length),
            data_offset: U64::new(entry.data_offset),
            data_length: U64::new(entry.data_length),
            flags: U32::new(entry.flags),
        };
        index.extend_from_slice(tail.as_bytes());
    }
    Ok(index)
}

/// The 40-byte trailer (`file-format.md` § Trailer) after `index`, with the
/// overrides of [`RawFileFields`](super::options::RawFileFields) applied.
///
/// # Errors
/// [`Error::Overflow`] when the index length does not fit `u64`.
pub(crate) fn trailer(
    options: &WriterOptions,
    index_offset: u64,
    index: &[u8],
    kv_offset: u64,
    kv_length: u32,
) -> Result<raw::Trailer> {
    let r = &options.raw;
    let crc = if r.omit_index_crc { 0 } else { crc32c::crc32c(index) };
    Ok(raw::Trailer {
        index_offset: U64::new(r.trailer_index_offset.unwrap_or(index_offset)),
        index_length: U64::new(r.trailer_index_length.unwrap_or(len64(index.len())?)),
        kv_offset: U64::new(r.trailer_kv_offset.unwrap_or(kv_offset)),
        kv_length: U32::new(r.trailer_kv_length.unwrap_or(kv_length)),
        index_crc32c: U32::new(r.index_crc32c.unwrap_or(crc)),
        reserved: r.trailer_reserved.unwrap_or([0; 4]),
        trailer_magic: r.trailer_magic.unwrap_or(TRAILER_MAGIC),
    })
}
